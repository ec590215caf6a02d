# backup-now: a snapshot of the node's data, numbered in order.  On a real
# node it would start a systemd unit and end at once, so that the 5
# minutes of a run never limit a backup.
job "db-backup-now" {
  datacenters = ["dc1"]
  type        = "batch"

  meta {
    nops_role         = "operation"
    nops_operation_of = "db"
    nops_description  = "Take a snapshot of the data now"

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
          n=$(next)
          cp "$d/data" "$d/snapshots/$n"
          date -u +%Y-%m-%dT%H:%M:%SZ >"$d/snapshots/$n.time"
          echo "snapshot $n taken"
          EOT
        ]
      }
    }
  }
}
