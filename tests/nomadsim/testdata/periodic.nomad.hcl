# A periodic batch job.
job "cleanup" {
  type        = "batch"
  datacenters = ["dc1"]

  periodic {
    cron             = "0 3 * * *"
    prohibit_overlap = true
    time_zone        = "Europe/Berlin"
  }

  group "cleanup" {
    task "cleanup" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "find /tmp -mtime +7 -delete"]
      }

      logs {
        max_files     = 3
        max_file_size = 5
      }
    }
  }
}
