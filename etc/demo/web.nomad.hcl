# A managed service job for the demo: nops deploys it when it drifts.
job "web" {
  datacenters = ["dc1"]
  type        = "service"

  meta {
    nops_managed = "true"
    nops_policy  = "approval"
  }

  group "web" {
    count = 2

    update {
      max_parallel     = 1
      min_healthy_time = "5s"
      healthy_deadline = "1m"
    }

    task "server" {
      driver = "docker"

      config {
        image = "nginx:1.27"
      }

      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
