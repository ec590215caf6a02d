"""nomadsim: a simulator of HashiCorp Nomad's HTTP API for nops' tests,
demo and benchmarks (README.md).  Run it with `tests/nomadsim/nomadsim` or
`python3 -m nomadsim` from tests/.

Layers, each importing only those below it (test_imports checks that no
module imports itself back through others):

    cli -> server -> admin, api -> api_jobs, api_cluster, events, logs
    -> jobs -> scheduler -> lifecycle -> deployments -> reconcile
    -> evals, lookup, structs, runner -> state, gojson, jobspec -> hcl2
"""
