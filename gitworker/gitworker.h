#ifndef NOPS_GITWORKER_H
#define NOPS_GITWORKER_H

#include "log.h"

__dead void	 gitworker_main(int debug, int verbose);

#endif
