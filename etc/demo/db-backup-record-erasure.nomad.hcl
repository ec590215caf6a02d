# backup-record-erasure: the time and the reference of an erasure of
# personal data, and no other data of the person.
job "db-backup-record-erasure" {
  datacenters = ["dc1"]
  type        = "batch"

  meta {
    nops_role         = "operation"
    nops_operation_of = "db"
    nops_description  = "Record an erasure of personal data (its reference only)"
    nops_input_schema = jsonencode({
      type                 = "object"
      required             = ["reference"]
      additionalProperties = false
      properties = {
        reference = { type = "string", pattern = "^[A-Za-z0-9._-]{1,64}$", title = "Reference" }
      }
    })
    # The node's backup directory (the demo's stands in for a volume).
    backup_dir = "/var/tmp/nops-demo/db"
  }

  parameterized {
    payload       = "required"
    meta_optional = ["nops_run"]
  }

  group "backup" {
    # One try: a failure is the run's result.
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "run" {
      driver = "raw_exec"
      dispatch_payload {
        file = "input.json"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", <<-EOT
          set -eu
          d=$NOMAD_META_backup_dir
          mkdir -p "$d/snapshots"
          [ -f "$d/data" ] || echo "the application's data" >"$d/data"
          next() { n=$(cat "$d/seq" 2>/dev/null || echo 0); echo $((n + 1)) >"$d/seq"; cat "$d/seq"; }
          r=$(sed -n 's/.*"reference":"\([A-Za-z0-9._-]*\)".*/\1/p' "$NOMAD_TASK_DIR/input.json")
          n=$(next)
          echo "$n $(date -u +%Y-%m-%dT%H:%M:%SZ) $r" >>"$d/erasures"
          echo "erasure $r recorded"
          EOT
        ]
      }
    }
  }
}
