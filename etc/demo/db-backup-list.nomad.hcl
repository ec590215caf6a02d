# backup-list: the snapshots, the last restore's result, and the erasures
# of personal data to do again after a restore.
job "db-backup-list" {
  datacenters = ["dc1"]
  type        = "batch"

  meta {
    nops_role         = "operation"
    nops_operation_of = "db"
    nops_description  = "List the snapshots, the last restore and the erasures to do again"

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
          echo "snapshots:"
          for t in "$d"/snapshots/*.time; do
            [ -f "$t" ] || { echo "  none"; break; }
            n=$(basename "$t" .time)
            echo "  $n  taken $(cat "$t")"
          done
          echo "last restore: $(cat "$d/last-restore" 2>/dev/null || echo none)"
          echo "erasures to do again:"
          if [ -s "$d/redo" ]; then sed 's/^/  /' "$d/redo"; else echo "  none"; fi
          EOT
        ]
      }
    }
  }
}
