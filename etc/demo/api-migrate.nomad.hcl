# A hook: a batch, parameterized job nops dispatches before it deploys api.
# The simulator really runs raw_exec tasks.
job "api-migrate" {
  datacenters = ["dc1"]
  type        = "batch"

  meta {
    nops_role = "hook"
  }

  parameterized {
    meta_optional = ["nops_deployment", "nops_job", "nops_commit", "nops_phase"]
  }

  group "migrate" {
    task "run" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo migrating for deployment $NOMAD_META_nops_deployment"]
      }
    }
  }
}
