# A job with a horizontal (group) and a vertical (task) scaling policy.
job "api" {
  datacenters = ["dc1"]

  group "api" {
    scaling {
      enabled = true
      min     = 2
      max     = 10

      policy {
        cooldown            = "1m"
        evaluation_interval = "30s"

        check "avg_cpu" {
          source = "nomad-apm"
          query  = "avg_cpu-allocated"

          strategy "target-value" {
            target = 70
          }
        }
      }
    }

    task "api" {
      driver = "docker"

      config {
        image = "example/api:1.0"
      }

      scaling "cpu" {
        enabled = true
        max     = 1000

        policy {
          evaluation_interval = "5m"
        }
      }
    }
  }
}
