"""The nomadsim command: parse the arguments, start, serve until SIGTERM.

usage: nomadsim --port PORT [--bind ADDR] [--acl] [--state DIR] [--speed F]
"""

import argparse
import sys

from .server import make_sim, serve


def main():
    ap = argparse.ArgumentParser(prog="nomadsim",
                                 description="Simulate Nomad's HTTP API.")
    ap.add_argument("--port", type=int, required=True,
                    help="TCP port; 0 picks a free one")
    ap.add_argument("--bind", default="127.0.0.1", help="address to listen on")
    ap.add_argument("--acl", action="store_true", help="enforce ACL tokens")
    ap.add_argument("--acl-bootstrap-token", metavar="SECRET",
                    help="SecretID of the management token created with --acl")
    ap.add_argument("--state", metavar="DIR",
                    help="keep state (and task directories) in DIR across restarts")
    ap.add_argument("--speed", type=float, default=1.0,
                    help="virtual clock speed; 0 = manual (advance via /_sim/clock)")
    ap.add_argument("--start-time", type=int, metavar="NS",
                    help="virtual clock start, Unix nanoseconds")
    ap.add_argument("--nodes", type=int, default=3, help="simulated client nodes")
    ap.add_argument("--heartbeat", type=float, default=30.0,
                    help="event stream heartbeat interval, real seconds")
    ap.add_argument("--no-exec", action="store_true",
                    help="simulate raw_exec/exec tasks instead of running them")
    a = ap.parse_args()
    sim = make_sim(port=a.port, bind=a.bind, acl_enabled=a.acl,
                          state_dir=a.state, speed=a.speed, start_ns=a.start_time,
                          nodes=a.nodes, heartbeat=a.heartbeat,
                          exec_tasks=not a.no_exec,
                          bootstrap_token=a.acl_bootstrap_token)
    host, port = sim.httpd.server_address[:2]
    print("nomadsim listening on http://%s:%d" % (host, port), flush=True)
    serve(sim)
    return 0



if __name__ == "__main__":
    sys.exit(main())
