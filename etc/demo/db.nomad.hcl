# A managed job with operations: the backups of its node, modelled on the
# backup set of seed 003.  Each operation is a job of its own next to this
# one (db-backup-*.nomad.hcl); the dashboard draws their forms from their
# input schemas, and `nopsctl action db db.backup-now` runs one.
job "db" {
  datacenters = ["dc1"]
  type        = "service"

  meta {
    nops_managed    = "true"
    nops_policy     = "auto"
    nops_operations = "db-backup-now, db-backup-list, db-backup-restore, db-backup-record-erasure, db-backup-confirm-erasures"
  }

  group "db" {
    count = 1

    task "server" {
      driver = "docker"

      config {
        image = "registry.example/db:1.0"
      }
    }
  }
}
