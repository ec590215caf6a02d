"""python3 -m nomadsim (from tests/): the simulator's command."""

import sys

from .cli import main

sys.exit(main())
