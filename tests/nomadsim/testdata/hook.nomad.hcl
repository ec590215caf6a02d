# A parameterized batch job nops dispatches as a deploy hook.
job "db-migrate" {
  type        = "batch"
  datacenters = ["dc1"]

  meta {
    nops_role = "hook"
  }

  parameterized {
    payload       = "optional"
    meta_required = ["git_sha"]
    meta_optional = ["dry_run"]
  }

  group "migrate" {
    reschedule {
      attempts  = 0
      unlimited = false
    }

    restart {
      attempts = 0
      mode     = "fail"
    }

    task "migrate" {
      driver = "exec"

      config {
        command = "/usr/local/bin/migrate"
        args    = ["--sha", "${NOMAD_META_git_sha}", "--payload", "local/payload.json"]
      }

      dispatch_payload {
        file = "payload.json"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
