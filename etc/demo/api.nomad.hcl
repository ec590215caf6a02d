# A managed job deployed on its own (policy auto), with a pre hook.
job "api" {
  datacenters = ["dc1"]
  type        = "service"

  meta {
    nops_managed  = "true"
    nops_policy   = "auto"
    nops_pre_hook = "api-migrate"
  }

  group "api" {
    count = 1

    task "server" {
      driver = "docker"

      config {
        image = "registry.example/api:1.0"
      }
    }
  }
}
