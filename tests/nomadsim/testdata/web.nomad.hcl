# A service job with a canary update, as nops deploys it.
variable "image" {
  type        = string
  description = "Container image to run"
}

variable "count" {
  type    = number
  default = 2
}

variable "datacenters" {
  type    = list(string)
  default = ["dc1"]
}

locals {
  port_name = "http"
  labels    = { app = "web", tier = "frontend" }
}

job "web" {
  namespace   = "apps"
  datacenters = var.datacenters
  type        = "service"
  priority    = 60

  meta {
    git_sha = "def456"
    owner   = "team-web"
  }

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  constraint {
    distinct_hosts = true
  }

  affinity {
    attribute = "${node.datacenter}"
    value     = "dc1"
    weight    = 70
  }

  spread {
    attribute = "${node.datacenter}"
    weight    = 100

    target "dc1" {
      percent = 60
    }

    target "dc2" {
      percent = 40
    }
  }

  update {
    max_parallel      = 1
    canary            = 1
    min_healthy_time  = "10s"
    healthy_deadline  = "5m"
    progress_deadline = "10m"
    auto_revert       = true
    auto_promote      = false
  }

  group "web" {
    count = var.count

    network {
      mode = "bridge"

      port "http" {
        to = 8080
      }

      port "metrics" {
        static = 9100
      }
    }

    service {
      name = "web"
      port = local.port_name
      tags = ["urlprefix-/", "v${var.count}"]

      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
      }
    }

    restart {
      attempts = 3
      delay    = "15s"
      interval = "1m30s"
      mode     = "delay"
    }

    ephemeral_disk {
      size = 500
    }

    task "app" {
      driver = "docker"

      config {
        image  = var.image
        ports  = [local.port_name]
        args   = ["-listen", ":${NOMAD_PORT_http}"]
        labels = local.labels

        logging {
          type = "journald"
          config {
            tag = "web"
          }
        }

        mount {
          type   = "bind"
          source = "local/web.conf"
          target = "/etc/web.conf"
        }

        mount {
          type   = "tmpfs"
          target = "/tmp"
        }
      }

      env {
        PORT      = "8080"
        LOG_LEVEL = "info"
        NODE      = "${node.unique.id}"
      }

      template {
        data          = <<-EOT
          listen = ":{{ env "NOMAD_PORT_http" }}"
          greeting = "hello from ${NOMAD_ALLOC_ID}"
        EOT
        destination   = "local/web.conf"
        change_mode   = "signal"
        change_signal = "SIGHUP"
      }

      resources {
        cpu    = 200
        memory = 128
      }

      kill_timeout = "30s"
    }
  }
}
