# backup-confirm-erasures: the erasures to do again are done; clear them.
job "db-backup-confirm-erasures" {
  datacenters = ["dc1"]
  type        = "batch"

  meta {
    nops_role         = "operation"
    nops_operation_of = "db"
    nops_description  = "The erasures to do again are done: clear the list"
    nops_confirm      = "Were the erasures listed by backup-list done again?"
    # The node's backup directory (the demo's stands in for a volume).
    backup_dir = "/var/tmp/nops-demo/db"
  }

  parameterized {
    payload       = "forbidden"
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
      config {
        command = "/bin/sh"
        args    = ["-c", <<-EOT
          set -eu
          d=$NOMAD_META_backup_dir
          mkdir -p "$d/snapshots"
          [ -f "$d/data" ] || echo "the application's data" >"$d/data"
          next() { n=$(cat "$d/seq" 2>/dev/null || echo 0); echo $((n + 1)) >"$d/seq"; cat "$d/seq"; }
          rm -f "$d/redo"
          echo "erasures to do again: cleared"
          EOT
        ]
      }
    }
  }
}
