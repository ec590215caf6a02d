# backup-restore: the data back from a snapshot.  An erasure of personal
# data recorded after that snapshot is not in it: the restore adds it to
# the erasures to do again, which backup-list shows until
# backup-confirm-erasures clears them.  The restore does not do them: they
# need the restored application, and the operator does them.
job "db-backup-restore" {
  datacenters = ["dc1"]
  type        = "batch"

  meta {
    nops_role         = "operation"
    nops_operation_of = "db"
    nops_description  = "Restore the data from a snapshot"
    nops_confirm      = "Replace the data with this snapshot?"
    nops_input_schema = jsonencode({
      type                 = "object"
      required             = ["snapshot"]
      additionalProperties = false
      properties = {
        snapshot = { type = "string", pattern = "^[0-9]+$", title = "Snapshot" }
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
      # The input (checked against the schema by nops) as a file.
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
          s=$(sed -n 's/.*"snapshot":"\([0-9]*\)".*/\1/p' "$NOMAD_TASK_DIR/input.json")
          if [ ! -f "$d/snapshots/$s" ]; then
            echo "restore of snapshot $s failed: no such snapshot" >"$d/last-restore"
            echo "no snapshot $s" >&2
            exit 2
          fi
          cp "$d/snapshots/$s" "$d/data"
          touch "$d/erasures"
          while read -r n at ref; do
            if [ "$n" -gt "$s" ]; then echo "$ref (erased $at)" >>"$d/redo"; fi
          done <"$d/erasures"
          echo "snapshot $s restored $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$d/last-restore"
          echo "restored snapshot $s"
          EOT
        ]
      }
    }
  }
}
