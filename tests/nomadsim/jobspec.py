"""Nomad HCL2 job files to the JSON ``Job`` object of /v1/jobs/parse.

This mirrors Nomad's jobspec2 package on top of hcl2.py:

* the top level accepts ``variable``, ``variables``, ``locals`` and
  exactly one ``job`` block;
* variable values come from defaults, the ``Variables`` request field (the
  content of a vars file, parsed as "input.hcl") and ``-var`` style
  values, with Nomad's diagnostics for unset and undeclared variables;
* the job body is decoded field by field into the api.Job structure
  (api/jobs.go, api/tasks.go, api/resources.go, api/services.go,
  api/consul.go, api/scaling.go), with Nomad's special cases: ``meta`` and
  ``env`` may be attributes or blocks, constraints and affinities accept
  their shorthand operators, task ``scaling "cpu"|"mem"`` blocks, group
  scaling validation, durations as Go duration strings, free-form
  ``config``/``policy`` maps where nested blocks become lists of maps;
* the result is normalised as jobspec2 does (job ID/Name from the label,
  static ports moved to ReservedPorts, template and vault defaults);
* ``canonicalize`` applies the client-side api Canonicalize defaults.

The output is a dict holding every field of the Go struct, with null for
nil pointers, slices and maps, exactly what the agent's JSON encoder
emits.  Durations are integer nanoseconds.  Key order follows the Go
struct; the agent emits keys sorted by name, which a caller may do with
``json.dumps(..., sort_keys=True)``.
"""

import copy
import posixpath
import re

from . import hcl2
from .hcl2 import (ERROR, WARNING, ConversionError, Diagnostic, UNKNOWN,
                  go_quote)

__all__ = ["JobParseError", "parse_job", "canonicalize", "parse_duration",
           "NOMAD_PARSE_FILENAME"]

# The file name Nomad's /v1/jobs/parse handler gives the job text and the
# Variables content in its diagnostics.
NOMAD_PARSE_FILENAME = "input.hcl"

# jobspec2's "Unset variable" detail, as quoted from Nomad HEAD in
# NOMAD-API.md section 2 (the double space is in the source).
UNSET_VARIABLE_DETAIL = (
    "A used variable must be set or have a default value; see "
    "https://developer.hashicorp.com/nomad/docs/reference/hcl2/variables  "
    "for details.")

SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE


class JobParseError(Exception):
    """The job could not be parsed.

    ``message`` is the plain-text body Nomad's /v1/jobs/parse returns (its
    status is always 400), e.g. ``Failed to parse job: input.hcl:3,5-9:
    Unsupported argument; An argument named "foo" is not expected here.``
    ``diagnostics`` holds the underlying hcl2.Diagnostic objects.
    """

    def __init__(self, message, diagnostics=(), status=400):
        super().__init__(message)
        self.message = message
        self.diagnostics = list(diagnostics)
        self.status = status


# ---------------------------------------------------------------------------
# Go duration strings

_UNITS = {"ns": 1, "us": 1000, "\u00b5s": 1000, "\u03bcs": 1000,
          "ms": 1000 * 1000, "s": SECOND, "m": MINUTE, "h": HOUR}


def parse_duration(text):
    """Parse a duration like Go's time.ParseDuration ("1h30m" -> ns).

    Raises ValueError with Go's own error text, which Nomad embeds in its
    "Unsuitable duration value" diagnostic.
    """
    orig = text
    quoted = go_quote(orig)
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError("time: invalid duration " + quoted)
    total = 0
    while s:
        if not (s[0] == "." or s[0].isdigit()):
            raise ValueError("time: invalid duration " + quoted)
        i = 0
        while i < len(s) and s[i].isdigit():
            i += 1
        whole = int(s[:i]) if i else 0
        pre = i > 0
        s = s[i:]
        frac, scale, post = 0, 1, False
        if s.startswith("."):
            s = s[1:]
            i = 0
            while i < len(s) and s[i].isdigit():
                i += 1
            post = i > 0
            if post:
                frac, scale = int(s[:i]), 10 ** i
            s = s[i:]
        if not pre and not post:
            raise ValueError("time: invalid duration " + quoted)
        i = 0
        while i < len(s) and s[i] != "." and not s[i].isdigit():
            i += 1
        unit = s[:i]
        s = s[i:]
        if not unit:
            raise ValueError("time: missing unit in duration " + quoted)
        if unit not in _UNITS:
            raise ValueError("time: unknown unit %s in duration %s" %
                             (go_quote(unit), quoted))
        mult = _UNITS[unit]
        total += whole * mult + (frac * mult) // scale
        if total > 2 ** 63 - 1:
            raise ValueError("time: invalid duration " + quoted)
    return -total if neg else total


# ---------------------------------------------------------------------------
# The api structures, as data
#
# Each struct lists its fields in Go declaration order.  A field knows its
# JSON name, its HCL name and how to decode it:
#
#   attribute kinds: str bool int int8 uint8 uint16 uint32 int64 uint64
#                    dur strlist u16list strmap
#   block kinds:     block blocks blockmap strmap_block strlistmap_block
#                    freemap_block
#   label            value of the block label
#   server           never read from HCL; emitted with a fixed zero value
#
# ``ptr`` says the Go field is a pointer (so null when unset rather than
# the Go zero value).

_INT_RANGES = {
    "int": (-2 ** 63, 2 ** 63 - 1), "int64": (-2 ** 63, 2 ** 63 - 1),
    "int8": (-128, 127), "uint8": (0, 255), "uint16": (0, 65535),
    "uint32": (0, 2 ** 32 - 1), "uint64": (0, 2 ** 64 - 1),
}
_ATTR_KINDS = set(_INT_RANGES) | {"str", "bool", "dur", "strlist", "u16list",
                                  "strmap"}
_BLOCK_KINDS = {"block", "blocks", "blockmap", "strmap_block",
                "strlistmap_block", "freemap_block"}


class F:
    """One Go struct field."""

    __slots__ = ("json", "hcl", "kind", "ptr", "required", "struct",
                 "default", "omitempty")

    def __init__(self, json_name, hcl, kind, ptr=False, required=False,
                 struct=None, default=None, omitempty=False):
        self.json = json_name
        self.hcl = hcl
        self.kind = kind
        self.ptr = ptr
        self.required = required
        self.struct = struct
        self.default = default
        self.omitempty = omitempty

    def zero(self):
        """The value Go's encoder writes for an unset field."""
        if self.kind == "server":
            return copy.copy(self.default)
        if self.ptr or self.kind in _BLOCK_KINDS or self.kind in (
                "strlist", "u16list", "strmap"):
            return None
        if self.kind == "str" or self.kind == "label":
            return ""
        if self.kind == "bool":
            return False
        return 0


def a(json_name, hcl, kind, ptr=False, required=False):
    return F(json_name, hcl, kind, ptr=ptr, required=required)


def p(json_name, hcl, kind):
    """A pointer attribute: null when not set."""
    return F(json_name, hcl, kind, ptr=True)


def b(json_name, hcl, struct, kind="block", omitempty=False):
    return F(json_name, hcl, kind, struct=struct, omitempty=omitempty)


def m(json_name, hcl, kind="strmap_block"):
    return F(json_name, hcl, kind)


def srv(json_name, default=None):
    return F(json_name, None, "server", default=default)


class S:
    """A Go struct: fields in order, plus the names of its block labels."""

    def __init__(self, name, fields, label=None, label_name=""):
        self.name = name
        self.fields = fields
        self.label = label            # JSON field set from the label
        self.label_name = label_name  # gohcl label name, for messages
        self.by_hcl = {f.hcl: f for f in fields if f.hcl}
        self.attrs = sorted(f.hcl for f in fields
                            if f.hcl and f.kind in _ATTR_KINDS)
        self.blocks = sorted(f.hcl for f in fields
                             if f.hcl and f.kind in _BLOCK_KINDS)

    def label_names(self):
        return [self.label_name] if self.label else []

    def empty(self):
        return {f.json: f.zero() for f in self.fields}


CONSTRAINT = S("Constraint", [
    a("LTarget", None, "str"), a("RTarget", None, "str"),
    a("Operand", None, "str")])
AFFINITY = S("Affinity", [
    a("LTarget", None, "str"), a("RTarget", None, "str"),
    a("Operand", None, "str"), p("Weight", None, "int8")])
SPREAD_TARGET = S("SpreadTarget", [
    F("Value", None, "label"), a("Percent", "percent", "uint8")],
    label="Value")
SPREAD = S("Spread", [
    a("Attribute", "attribute", "str"), p("Weight", "weight", "int8"),
    b("SpreadTarget", "target", SPREAD_TARGET, "blocks")])
UPDATE = S("UpdateStrategy", [
    p("Stagger", "stagger", "dur"), p("MaxParallel", "max_parallel", "int"),
    p("HealthCheck", "health_check", "str"),
    p("MinHealthyTime", "min_healthy_time", "dur"),
    p("HealthyDeadline", "healthy_deadline", "dur"),
    p("ProgressDeadline", "progress_deadline", "dur"),
    p("Canary", "canary", "int"), p("AutoRevert", "auto_revert", "bool"),
    p("AutoPromote", "auto_promote", "bool")])
MULTIREGION_STRATEGY = S("MultiregionStrategy", [
    p("MaxParallel", "max_parallel", "int"),
    p("OnFailure", "on_failure", "str")])
MULTIREGION_REGION = S("MultiregionRegion", [
    F("Name", None, "label"), p("Count", "count", "int"),
    a("Datacenters", "datacenters", "strlist"),
    a("NodePool", "node_pool", "str"), m("Meta", "meta")], label="Name")
MULTIREGION = S("Multiregion", [
    b("Strategy", "strategy", MULTIREGION_STRATEGY),
    b("Regions", "region", MULTIREGION_REGION, "blocks")])
PERIODIC = S("PeriodicConfig", [
    p("Enabled", "enabled", "bool"), p("Spec", "cron", "str"),
    a("Specs", "crons", "strlist"), srv("SpecType"),
    p("ProhibitOverlap", "prohibit_overlap", "bool"),
    p("TimeZone", "time_zone", "str")])
PARAMETERIZED = S("ParameterizedJobConfig", [
    a("Payload", "payload", "str"),
    a("MetaRequired", "meta_required", "strlist"),
    a("MetaOptional", "meta_optional", "strlist")])
RESCHEDULE = S("ReschedulePolicy", [
    p("Attempts", "attempts", "int"), p("Interval", "interval", "dur"),
    p("Delay", "delay", "dur"), p("DelayFunction", "delay_function", "str"),
    p("MaxDelay", "max_delay", "dur"), p("Unlimited", "unlimited", "bool")])
MIGRATE = S("MigrateStrategy", [
    p("MaxParallel", "max_parallel", "int"),
    p("HealthCheck", "health_check", "str"),
    p("MinHealthyTime", "min_healthy_time", "dur"),
    p("HealthyDeadline", "healthy_deadline", "dur")])
UI_LINK = S("JobUILink", [a("Label", "label", "str"), a("URL", "url", "str")])
UI = S("JobUIConfig", [
    a("Description", "description", "str"),
    b("Links", "link", UI_LINK, "blocks")])
RESTART = S("RestartPolicy", [
    p("Interval", "interval", "dur"), p("Attempts", "attempts", "int"),
    p("Delay", "delay", "dur"), p("Mode", "mode", "str"),
    p("RenderTemplates", "render_templates", "bool")])
DISCONNECT = S("DisconnectStrategy", [
    p("LostAfter", "lost_after", "dur"),
    p("StopOnClientAfter", "stop_on_client_after", "dur"),
    p("Replace", "replace", "bool"), p("Reconcile", "reconcile", "str")])
EPHEMERAL_DISK = S("EphemeralDisk", [
    p("Sticky", "sticky", "bool"), p("Migrate", "migrate", "bool"),
    p("SizeMB", "size", "int")])
CSI_MOUNT_OPTIONS = S("CSIMountOptions", [
    a("FSType", "fs_type", "str"), a("MountFlags", "mount_flags", "strlist")])
VOLUME_REQUEST = S("VolumeRequest", [
    F("Name", None, "label"), a("Type", "type", "str"),
    a("Source", "source", "str"), a("ReadOnly", "read_only", "bool"),
    a("Sticky", "sticky", "bool"), a("AccessMode", "access_mode", "str"),
    a("AttachmentMode", "attachment_mode", "str"),
    b("MountOptions", "mount_options", CSI_MOUNT_OPTIONS),
    a("PerAlloc", "per_alloc", "bool")], label="Name", label_name="name")
PORT = S("Port", [
    F("Label", None, "label"), a("Value", "static", "int"),
    a("To", "to", "int"), a("HostNetwork", "host_network", "str"),
    a("IgnoreCollision", "ignore_collision", "bool")], label="Label")
DNS = S("DNSConfig", [
    a("Servers", "servers", "strlist"), a("Searches", "searches", "strlist"),
    a("Options", "options", "strlist")])
CNI = S("CNIConfig", [a("Args", "args", "strmap")])
NETWORK = S("NetworkResource", [
    a("Mode", "mode", "str"), a("Device", "device", "str"),
    a("CIDR", "cidr", "str"), a("IP", "ip", "str"),
    b("DNS", "dns", DNS),
    b("ReservedPorts", "reserved_ports", PORT, "blocks"),
    b("DynamicPorts", "port", PORT, "blocks"),
    a("Hostname", "hostname", "str"), p("MBits", "mbits", "int"),
    b("CNI", "cni", CNI)])
CHECK_RESTART = S("CheckRestart", [
    a("Limit", "limit", "int"), p("Grace", "grace", "dur"),
    a("IgnoreWarnings", "ignore_warnings", "bool")])
SERVICE_CHECK = S("ServiceCheck", [
    a("Name", "name", "str"), a("Type", "type", "str"),
    a("Command", "command", "str"), a("Args", "args", "strlist"),
    a("Path", "path", "str"), a("Protocol", "protocol", "str"),
    a("PortLabel", "port", "str"), a("Expose", "expose", "bool"),
    a("AddressMode", "address_mode", "str"),
    a("Advertise", "advertise", "str"), a("Interval", "interval", "dur"),
    a("Timeout", "timeout", "dur"),
    a("InitialStatus", "initial_status", "str"), a("Notes", "notes", "str"),
    a("TLSServerName", "tls_server_name", "str"),
    a("TLSSkipVerify", "tls_skip_verify", "bool"),
    m("Header", "header", "strlistmap_block"), a("Method", "method", "str"),
    b("CheckRestart", "check_restart", CHECK_RESTART),
    a("GRPCService", "grpc_service", "str"),
    a("GRPCUseTLS", "grpc_use_tls", "bool"), a("TaskName", "task", "str"),
    a("SuccessBeforePassing", "success_before_passing", "int"),
    a("FailuresBeforeCritical", "failures_before_critical", "int"),
    a("FailuresBeforeWarning", "failures_before_warning", "int"),
    a("Body", "body", "str"), a("OnUpdate", "on_update", "str")])
WEIGHTS = S("ServiceWeights", [
    a("Passing", "passing", "int"), a("Warning", "warning", "int")])
IDENTITY = S("WorkloadIdentity", [
    a("Name", "name", "str"), a("Audience", "aud", "strlist"),
    a("ChangeMode", "change_mode", "str"),
    a("ChangeSignal", "change_signal", "str"), a("Env", "env", "bool"),
    a("File", "file", "bool"), a("Filepath", "filepath", "str"),
    a("ServiceName", "service_name", "str"), a("TTL", "ttl", "dur"),
    a("ExtraClaims", "extra_claims", "strlist")])
LOG_CONFIG = S("LogConfig", [
    p("MaxFiles", "max_files", "int"),
    p("MaxFileSizeMB", "max_file_size", "int"),
    p("Enabled", "enabled", "bool"), p("Disabled", "disabled", "bool")])
NUMA = S("NUMAResource", [
    a("Affinity", "affinity", "str"), a("Devices", "devices", "strlist")])
DEVICE = S("RequestedDevice", [
    F("Name", None, "label"), p("Count", "count", "uint64"),
    b("Constraints", "constraint", CONSTRAINT, "blocks"),
    b("Affinities", "affinity", AFFINITY, "blocks")], label="Name")
RESOURCES = S("Resources", [
    p("CPU", "cpu", "int"), p("Cores", "cores", "int"),
    p("MemoryMB", "memory", "int"), p("MemoryMaxMB", "memory_max", "int"),
    p("DiskMB", "disk", "int"), b("Networks", "network", NETWORK, "blocks"),
    b("Devices", "device", DEVICE, "blocks"), b("NUMA", "numa", NUMA),
    p("SecretsMB", "secrets", "int"), p("IOPS", "iops", "int")])
VOLUME_MOUNT = S("VolumeMount", [
    p("Volume", "volume", "str"), p("Destination", "destination", "str"),
    p("ReadOnly", "read_only", "bool"),
    p("PropagationMode", "propagation_mode", "str"),
    p("SELinuxLabel", "selinux_label", "str")])
SIDECAR_TASK = S("SidecarTask", [
    a("Name", "name", "str"), a("Driver", "driver", "str"),
    a("User", "user", "str"), m("Config", "config", "freemap_block"),
    m("Env", "env"), b("Resources", "resources", RESOURCES), m("Meta", "meta"),
    p("KillTimeout", "kill_timeout", "dur"),
    b("LogConfig", "logs", LOG_CONFIG),
    p("ShutdownDelay", "shutdown_delay", "dur"),
    a("KillSignal", "kill_signal", "str"),
    b("VolumeMounts", "volume_mount", VOLUME_MOUNT, "blocks"),
    b("Identities", "identity", IDENTITY, "blocks")])
MESH_GATEWAY = S("ConsulMeshGateway", [a("Mode", "mode", "str")])
UPSTREAM = S("ConsulUpstream", [
    a("DestinationName", "destination_name", "str"),
    a("DestinationNamespace", "destination_namespace", "str"),
    a("DestinationPeer", "destination_peer", "str"),
    a("DestinationPartition", "destination_partition", "str"),
    a("DestinationType", "destination_type", "str"),
    a("LocalBindPort", "local_bind_port", "int"),
    a("Datacenter", "datacenter", "str"),
    a("LocalBindAddress", "local_bind_address", "str"),
    a("LocalBindSocketPath", "local_bind_socket_path", "str"),
    a("LocalBindSocketMode", "local_bind_socket_mode", "str"),
    b("MeshGateway", "mesh_gateway", MESH_GATEWAY),
    m("Config", "config", "freemap_block")])
TRANSPARENT_PROXY = S("ConsulTransparentProxy", [
    a("UID", "uid", "str"), a("OutboundPort", "outbound_port", "uint16"),
    a("ExcludeInboundPorts", "exclude_inbound_ports", "strlist"),
    a("ExcludeOutboundPorts", "exclude_outbound_ports", "u16list"),
    a("ExcludeOutboundCIDRs", "exclude_outbound_cidrs", "strlist"),
    a("ExcludeUIDs", "exclude_uids", "strlist"),
    a("NoDNS", "no_dns", "bool")])
EXPOSE_PATH = S("ConsulExposePath", [
    a("Path", "path", "str"), a("Protocol", "protocol", "str"),
    a("LocalPathPort", "local_path_port", "int"),
    a("ListenerPort", "listener_port", "str")])
EXPOSE = S("ConsulExposeConfig", [
    b("Paths", "path", EXPOSE_PATH, "blocks"), srv("Path")])
PROXY = S("ConsulProxy", [
    a("LocalServiceAddress", "local_service_address", "str"),
    a("LocalServicePort", "local_service_port", "int"),
    b("Expose", "expose", EXPOSE), srv("ExposeConfig"),
    b("Upstreams", "upstreams", UPSTREAM, "blocks"),
    b("TransparentProxy", "transparent_proxy", TRANSPARENT_PROXY),
    m("Config", "config", "freemap_block")])
SIDECAR_SERVICE = S("ConsulSidecarService", [
    a("Tags", "tags", "strlist"), a("Port", "port", "str"),
    b("Proxy", "proxy", PROXY),
    a("DisableDefaultTCPCheck", "disable_default_tcp_check", "bool"),
    m("Meta", "meta")])
GATEWAY_BIND_ADDRESS = S("ConsulGatewayBindAddress", [
    F("Name", None, "label"), a("Address", "address", "str"),
    a("Port", "port", "int")], label="Name")
GATEWAY_PROXY = S("ConsulGatewayProxy", [
    p("ConnectTimeout", "connect_timeout", "dur"),
    a("EnvoyGatewayBindTaggedAddresses",
      "envoy_gateway_bind_tagged_addresses", "bool"),
    b("EnvoyGatewayBindAddresses", "envoy_gateway_bind_addresses",
      GATEWAY_BIND_ADDRESS, "blockmap"),
    a("EnvoyGatewayNoDefaultBind", "envoy_gateway_no_default_bind", "bool"),
    a("EnvoyDNSDiscoveryType", "envoy_dns_discovery_type", "str"),
    m("Config", "config", "freemap_block")])
TLS_SDS = S("ConsulGatewayTLSSDSConfig", [
    a("ClusterName", "cluster_name", "str"),
    a("CertResource", "cert_resource", "str")])
GATEWAY_TLS = S("ConsulGatewayTLSConfig", [
    a("Enabled", "enabled", "bool"),
    a("TLSMinVersion", "tls_min_version", "str"),
    a("TLSMaxVersion", "tls_max_version", "str"),
    a("CipherSuites", "cipher_suites", "strlist"), b("SDS", "sds", TLS_SDS)])
HEADER_MODIFIERS = S("ConsulHTTPHeaderModifiers", [
    m("Add", "add"), m("Set", "set"), a("Remove", "remove", "strlist")])
INGRESS_SERVICE = S("ConsulIngressService", [
    a("Name", "name", "str"), a("Hosts", "hosts", "strlist"),
    b("TLS", "tls", GATEWAY_TLS),
    b("RequestHeaders", "request_headers", HEADER_MODIFIERS),
    b("ResponseHeaders", "response_headers", HEADER_MODIFIERS),
    p("MaxConnections", "max_connections", "uint32"),
    p("MaxPendingRequests", "max_pending_requests", "uint32"),
    p("MaxConcurrentRequests", "max_concurrent_requests", "uint32")])
INGRESS_LISTENER = S("ConsulIngressListener", [
    a("Port", "port", "int"), a("Protocol", "protocol", "str"),
    b("Services", "service", INGRESS_SERVICE, "blocks")])
INGRESS = S("ConsulIngressConfigEntry", [
    b("TLS", "tls", GATEWAY_TLS),
    b("Listeners", "listener", INGRESS_LISTENER, "blocks")])
LINKED_SERVICE = S("ConsulLinkedService", [
    a("Name", "name", "str"), a("CAFile", "ca_file", "str"),
    a("CertFile", "cert_file", "str"), a("KeyFile", "key_file", "str"),
    a("SNI", "sni", "str")])
TERMINATING = S("ConsulTerminatingConfigEntry", [
    b("Services", "service", LINKED_SERVICE, "blocks")])
MESH_CONFIG = S("ConsulMeshConfigEntry", [])
GATEWAY = S("ConsulGateway", [
    b("Proxy", "proxy", GATEWAY_PROXY), b("Ingress", "ingress", INGRESS),
    b("Terminating", "terminating", TERMINATING),
    b("Mesh", "mesh", MESH_CONFIG)])
CONNECT = S("ConsulConnect", [
    a("Native", "native", "bool"), b("Gateway", "gateway", GATEWAY),
    b("SidecarService", "sidecar_service", SIDECAR_SERVICE),
    b("SidecarTask", "sidecar_task", SIDECAR_TASK)])
SERVICE = S("Service", [
    a("Name", "name", "str"), a("Tags", "tags", "strlist"),
    a("CanaryTags", "canary_tags", "strlist"),
    a("EnableTagOverride", "enable_tag_override", "bool"),
    a("PortLabel", "port", "str"), a("AddressMode", "address_mode", "str"),
    a("Address", "address", "str"),
    b("Checks", "check", SERVICE_CHECK, "blocks"),
    b("CheckRestart", "check_restart", CHECK_RESTART),
    b("Connect", "connect", CONNECT), m("Meta", "meta"),
    m("CanaryMeta", "canary_meta"), m("TaggedAddresses", "tagged_addresses"),
    a("TaskName", "task", "str"), a("OnUpdate", "on_update", "str"),
    b("Identity", "identity", IDENTITY), b("Weights", "weights", WEIGHTS),
    a("Provider", "provider", "str"), a("Cluster", "cluster", "str"),
    a("Kind", "kind", "str")])
CONSUL = S("Consul", [
    a("Namespace", "namespace", "str"), a("Cluster", "cluster", "str"),
    a("Partition", "partition", "str")])
SCALING = S("ScalingPolicy", [
    p("Min", "min", "int64"), p("Max", "max", "int64"),
    m("Policy", "policy", "freemap_block"), p("Enabled", "enabled", "bool"),
    a("Type", "type", "str"), srv("ID", ""), srv("Namespace", ""),
    srv("Target"), srv("CreateIndex", 0), srv("ModifyIndex", 0)])
LIFECYCLE = S("TaskLifecycle", [
    a("Hook", "hook", "str", required=True),
    a("Sidecar", "sidecar", "bool")])
ARTIFACT = S("TaskArtifact", [
    p("GetterSource", "source", "str"), m("GetterOptions", "options"),
    m("GetterHeaders", "headers"), p("GetterMode", "mode", "str"),
    p("GetterInsecure", "insecure", "bool"),
    p("RelativeDest", "destination", "str"), a("Chown", "chown", "bool")])
VAULT = S("Vault", [
    a("Policies", "policies", "strlist"), a("Role", "role", "str"),
    p("Namespace", "namespace", "str"), a("Cluster", "cluster", "str"),
    p("Env", "env", "bool"), p("DisableFile", "disable_file", "bool"),
    p("ChangeMode", "change_mode", "str"),
    p("ChangeSignal", "change_signal", "str"),
    p("AllowTokenExpiration", "allow_token_expiration", "bool")])
WAIT = S("WaitConfig", [
    F("Min", "min", "dur", ptr=True, required=True),
    F("Max", "max", "dur", ptr=True, required=True)])
CHANGE_SCRIPT = S("ChangeScript", [
    F("Command", "command", "str", ptr=True, required=True),
    a("Args", "args", "strlist"), p("Timeout", "timeout", "dur"),
    F("FailOnError", "fail_on_error", "bool", ptr=True, required=True),
    p("RunOnFirstRender", "run_on_first_render", "bool")])
TEMPLATE = S("Template", [
    p("SourcePath", "source", "str"), p("DestPath", "destination", "str"),
    p("EmbeddedTmpl", "data", "str"), p("ChangeMode", "change_mode", "str"),
    b("ChangeScript", "change_script", CHANGE_SCRIPT),
    p("ChangeSignal", "change_signal", "str"), p("Once", "once", "bool"),
    p("Splay", "splay", "dur"), p("Perms", "perms", "str"),
    p("Uid", "uid", "int"), p("Gid", "gid", "int"),
    p("LeftDelim", "left_delimiter", "str"),
    p("RightDelim", "right_delimiter", "str"), p("Envvars", "env", "bool"),
    p("VaultGrace", "vault_grace", "dur"), b("Wait", "wait", WAIT),
    p("ErrMissingKey", "error_on_missing_key", "bool")])
DISPATCH_PAYLOAD = S("DispatchPayloadConfig", [a("File", "file", "str")])
CSI_PLUGIN = S("TaskCSIPluginConfig", [
    a("ID", "id", "str"), a("Type", "type", "str"),
    a("MountDir", "mount_dir", "str"),
    a("StagePublishBaseDir", "stage_publish_base_dir", "str"),
    a("HealthTimeout", "health_timeout", "dur")])
SECRET = S("Secret", [
    F("Name", None, "label"), a("Provider", "provider", "str"),
    a("Path", "path", "str"), m("Config", "config", "freemap_block"),
    m("Env", "env")], label="Name", label_name="name")
ACTION = S("Action", [
    F("Name", None, "label"), a("Command", "command", "str", required=True),
    a("Args", "args", "strlist")], label="Name", label_name="name")
SCHEDULE_CRON = S("TaskScheduleCron", [
    a("Start", "start", "str"), a("End", "end", "str"),
    a("Timezone", "timezone", "str")])
SCHEDULE = S("TaskSchedule", [b("Cron", "cron", SCHEDULE_CRON)])
TASK = S("Task", [
    F("Name", None, "label"), a("Driver", "driver", "str"),
    a("User", "user", "str"), b("Lifecycle", "lifecycle", LIFECYCLE),
    m("Config", "config", "freemap_block"),
    b("Constraints", "constraint", CONSTRAINT, "blocks"),
    b("Affinities", "affinity", AFFINITY, "blocks"), m("Env", "env"),
    b("Services", "service", SERVICE, "blocks"),
    b("Resources", "resources", RESOURCES),
    b("RestartPolicy", "restart", RESTART), m("Meta", "meta"),
    p("KillTimeout", "kill_timeout", "dur"),
    b("LogConfig", "logs", LOG_CONFIG),
    b("Artifacts", "artifact", ARTIFACT, "blocks"),
    b("Vault", "vault", VAULT), b("Consul", "consul", CONSUL),
    b("Templates", "template", TEMPLATE, "blocks"),
    b("DispatchPayload", "dispatch_payload", DISPATCH_PAYLOAD),
    b("VolumeMounts", "volume_mount", VOLUME_MOUNT, "blocks"),
    b("CSIPluginConfig", "csi_plugin", CSI_PLUGIN, omitempty=True),
    a("Leader", "leader", "bool"),
    a("ShutdownDelay", "shutdown_delay", "dur"),
    a("KillSignal", "kill_signal", "str"), a("Kind", "kind", "str"),
    b("ScalingPolicies", "scaling", SCALING, "blocks"),
    b("Secrets", "secret", SECRET, "blocks"), srv("Identity"),
    b("Identities", "identity", IDENTITY, "blocks"),
    b("Actions", "action", ACTION, "blocks"),
    b("Schedule", "schedule", SCHEDULE)], label="Name", label_name="name")
TASK_GROUP = S("TaskGroup", [
    F("Name", None, "label"), p("Count", "count", "int"),
    b("Constraints", "constraint", CONSTRAINT, "blocks"),
    b("Affinities", "affinity", AFFINITY, "blocks"),
    b("Tasks", "task", TASK, "blocks"),
    b("Spreads", "spread", SPREAD, "blocks"),
    b("Volumes", "volume", VOLUME_REQUEST, "blockmap"),
    b("RestartPolicy", "restart", RESTART),
    b("Disconnect", "disconnect", DISCONNECT),
    b("ReschedulePolicy", "reschedule", RESCHEDULE),
    b("EphemeralDisk", "ephemeral_disk", EPHEMERAL_DISK),
    b("Update", "update", UPDATE), b("Migrate", "migrate", MIGRATE),
    b("Networks", "network", NETWORK, "blocks"), m("Meta", "meta"),
    b("Services", "service", SERVICE, "blocks"),
    p("ShutdownDelay", "shutdown_delay", "dur"),
    p("MaxRunDuration", "max_run_duration", "dur"),
    p("StopAfterClientDisconnect", "stop_after_client_disconnect", "dur"),
    p("MaxClientDisconnect", "max_client_disconnect", "dur"),
    b("Scaling", "scaling", SCALING), b("Consul", "consul", CONSUL),
    p("PreventRescheduleOnLost", "prevent_reschedule_on_lost", "bool")],
    label="Name", label_name="name")
JOB = S("Job", [
    p("Region", "region", "str"), p("Namespace", "namespace", "str"),
    p("ID", "id", "str"), p("Name", "name", "str"), p("Type", "type", "str"),
    p("Priority", "priority", "int"), p("AllAtOnce", "all_at_once", "bool"),
    a("Datacenters", "datacenters", "strlist"),
    p("NodePool", "node_pool", "str"),
    b("Constraints", "constraint", CONSTRAINT, "blocks"),
    b("Affinities", "affinity", AFFINITY, "blocks"),
    b("TaskGroups", "group", TASK_GROUP, "blocks"),
    b("Update", "update", UPDATE),
    b("Multiregion", "multiregion", MULTIREGION),
    b("Spreads", "spread", SPREAD, "blocks"),
    b("Periodic", "periodic", PERIODIC),
    b("ParameterizedJob", "parameterized", PARAMETERIZED),
    b("Reschedule", "reschedule", RESCHEDULE),
    b("Migrate", "migrate", MIGRATE), m("Meta", "meta"), b("UI", "ui", UI),
    srv("Stop"), srv("ParentID"), srv("Dispatched", False),
    srv("DispatchIdempotencyToken"), srv("Payload"), srv("ConsulNamespace"),
    srv("VaultNamespace"), srv("NomadTokenID"), srv("Status"),
    srv("StatusDescription"), srv("Stable"), srv("Version"),
    srv("SubmitTime"), srv("CreateIndex"), srv("ModifyIndex"),
    srv("JobModifyIndex"), srv("VersionTag")])

# Constraint and affinity blocks are decoded with an hcldec spec rather
# than struct tags (jobspec2/hcl_conversions.go).  Values are the cty
# types of each attribute.
_CONSTRAINT_SPEC = {
    "attribute": "string", "value": "string", "operator": "string",
    "distinct_property": "string", "distinct_hosts": "bool",
    "regexp": "string", "version": "string", "semver": "string",
    "set_contains": "string", "set_contains_all": "string",
    "set_contains_any": "string", "is_set": "string", "is_not_set": "string",
}
_AFFINITY_SPEC = {
    "attribute": "string", "value": "string", "operator": "string",
    "weight": "number", "version": "string", "semver": "string",
    "regexp": "string", "set_contains": "string",
    "set_contains_all": "string", "set_contains_any": "string",
}


# ---------------------------------------------------------------------------
# Bodies: hclsyntax's Content/PartialContent/JustAttributes


class _View:
    """A body plus the names earlier partial decodes already consumed.

    ``wrapped`` marks bodies under the job block: Nomad wraps those with
    hclutil.BlocksAsAttrs, so reading them as plain attributes turns
    nested blocks into lists of objects.
    """

    __slots__ = ("body", "hidden_attrs", "hidden_blocks", "wrapped")

    def __init__(self, body, hidden_attrs=(), hidden_blocks=(),
                 wrapped=True):
        self.body = body
        self.hidden_attrs = frozenset(hidden_attrs)
        self.hidden_blocks = frozenset(hidden_blocks)
        self.wrapped = wrapped

    def hide(self, attrs=(), blocks=()):
        return _View(self.body, self.hidden_attrs | set(attrs),
                     self.hidden_blocks | set(blocks), self.wrapped)


class _Deferred:
    """A free-form map whose values Nomad evaluates after decoding."""

    __slots__ = ("attrs",)

    def __init__(self, attrs):
        self.attrs = attrs


class _Decoder:
    """Decodes the job body into api structures, collecting diagnostics."""

    def __init__(self, src, ctx, diags):
        self.src = src
        self.ctx = ctx
        self.diags = diags
        self.ev = hcl2.Evaluator(src, diags)

    def rng(self, r):
        return self.src.range(r[0], r[1])

    def error(self, summary, detail, subject=None, context=None,
              severity=ERROR):
        self.diags.append(Diagnostic(
            summary, detail, self.rng(subject) if subject else None,
            self.rng(context) if context else None, severity))

    # -- content

    def content(self, view, attr_schema, block_schema, partial=False):
        """Select attributes and blocks by schema, like Body.Content.

        attr_schema maps names to "required"; block_schema maps block
        types to their label names.  Returns (attrs, blocks, remain).
        """
        body = view.body
        attrs = {}
        for name in attr_schema:
            attr = body.attrs.get(name)
            if attr is None or name in view.hidden_attrs:
                if attr_schema[name]:
                    self.diags.append(Diagnostic(
                        "Missing required argument",
                        "The argument %s is required, but no definition "
                        "was found." % go_quote(name),
                        body.missing_item_range()))
                continue
            attrs[name] = attr
        blocks = []
        for blk in body.blocks:
            if blk.type in view.hidden_blocks:
                continue
            labels = block_schema.get(blk.type)
            if labels is None:
                continue
            if len(blk.labels) > len(labels):
                if not labels:
                    self.error("Extraneous label for %s" % blk.type,
                               "No labels are expected for %s blocks." %
                               blk.type, blk.label_rngs[0],
                               (blk.type_rng[0], blk.open_rng[1]))
                else:
                    self.error("Extraneous label for %s" % blk.type,
                               "Only %d labels (%s) are expected for %s "
                               "blocks." % (len(labels), ", ".join(labels),
                                            blk.type),
                               blk.label_rngs[len(labels)],
                               (blk.type_rng[0], blk.open_rng[1]))
                continue
            if len(blk.labels) < len(labels):
                self.error("Missing %s for %s" % (labels[len(blk.labels)],
                                                  blk.type),
                           "All %s blocks must have %d labels (%s)." %
                           (blk.type, len(labels), ", ".join(labels)),
                           blk.open_rng, (blk.type_rng[0], blk.open_rng[1]))
                continue
            blocks.append(blk)
        remain = view.hide(attr_schema, block_schema)
        if not partial:
            self._unexpected(view, attrs, attr_schema, block_schema)
        return attrs, blocks, remain

    def _unexpected(self, view, attrs, attr_schema, block_schema):
        body = view.body
        for name, attr in body.attrs.items():
            if name in view.hidden_attrs or name in attr_schema:
                continue
            cands = [n for n in attr_schema if n not in attrs]
            hint = hcl2.name_suggestion(name, cands)
            if hint:
                hint = " Did you mean %s?" % go_quote(hint)
            elif name in block_schema:
                hint = (" Did you mean to define a block of type %s?" %
                        go_quote(name))
            self.error("Unsupported argument",
                       "An argument named %s is not expected here.%s" %
                       (go_quote(name), hint), attr.name_rng)
        for blk in body.blocks:
            if blk.type in view.hidden_blocks or blk.type in block_schema:
                continue
            hint = hcl2.name_suggestion(blk.type, list(block_schema))
            if hint:
                hint = " Did you mean %s?" % go_quote(hint)
            elif blk.type in attr_schema:
                hint = (" Did you mean to define argument %s? If so, use the "
                        "equals sign to assign it a value." %
                        go_quote(blk.type))
            self.error("Unsupported block type",
                       "Blocks of type %s are not expected here.%s" %
                       (go_quote(blk.type), hint), blk.type_rng)

    def just_attributes(self, view):
        """All attributes of a body as (name, expr, name_rng) triples.

        Under the job block, nested blocks become attributes too: a list
        with one object per block, labels nesting as {label = [obj]}, and
        an object-valued attribute is wrapped in a one-element list, as
        hclutil.BlocksAsAttrs does for driver configs.
        """
        body = view.body
        out = {}
        for name, attr in body.attrs.items():
            if name in view.hidden_attrs:
                continue
            expr = _wrap_object(attr.expr) if view.wrapped else attr.expr
            out[name] = (name, expr, attr.name_rng)
        if not view.wrapped:
            if body.blocks:
                blk = body.blocks[0]
                self.error("Unexpected %s block" % go_quote(blk.type),
                           "Blocks are not allowed here.", blk.type_rng)
            return list(out.values())
        for btype, group in _group_blocks(body.blocks):
            if btype in view.hidden_blocks:
                continue
            out[btype] = (btype, _blocks_to_expr(group), group[0].type_rng)
        return list(out.values())

    # -- values

    def eval(self, expr):
        return self.ev.eval(expr, self.ctx)

    def unsuitable(self, expr, message):
        self.error("Unsuitable value type", "Unsuitable value: " + message,
                   expr.start_rng(), expr.rng)

    def decode_expr(self, expr, field):
        """Evaluate an attribute into a Go field, as gohcl does."""
        kind = field.kind
        if kind == "dur":
            return self.decode_duration(expr, field)
        v = self.eval(expr)
        try:
            v = _convert_kind(v, kind)
        except ConversionError as exc:
            self.unsuitable(expr, str(exc))
            return field.zero()
        if hcl2.has_unknown(v):
            self.unsuitable(expr, "value must be known")
            return field.zero()
        if v is None:
            if field.ptr or kind in ("strlist", "u16list", "strmap"):
                return None
            self.unsuitable(expr, "null value is not allowed")
            return field.zero()
        if kind in _INT_RANGES:
            lo, hi = _INT_RANGES[kind]
            if not float(v).is_integer() or not lo <= v <= hi:
                self.unsuitable(expr, "value must be a whole number, between "
                                "%d and %d" % (lo, hi))
                return field.zero()
            return int(v)
        if kind == "u16list":
            out = []
            for x in v:
                if x is None or not float(x).is_integer() or \
                        not 0 <= x <= 65535:
                    self.unsuitable(expr, "value must be a whole number, "
                                    "between 0 and 65535")
                    return None
                out.append(int(x))
            return out
        if kind == "strlist" and any(x is None for x in v):
            self.unsuitable(expr, "null value is not allowed")
            return None
        return v

    def decode_duration(self, expr, field):
        """Nomad's registered decoder for time.Duration fields."""
        v = self.eval(expr)
        if v is UNKNOWN:
            self.unsuitable(expr, "value must be known")
            return field.zero()
        if isinstance(v, str):
            try:
                return parse_duration(v)
            except ValueError as exc:
                self.error("Unsuitable value type",
                           "Unsuitable duration value: %s" % exc,
                           expr.start_rng(), expr.rng)
                return field.zero()
        if not hcl2.is_number(v):
            self.error("Unsuitable value type",
                       "Unsuitable value: expected a string but found %s" %
                       hcl2.type_name(v), expr.start_rng(), expr.rng)
            return field.zero()
        lo, hi = _INT_RANGES["int64"]
        if not float(v).is_integer() or not lo <= v <= hi:
            self.unsuitable(expr, "value must be a whole number, between %d "
                            "and %d" % (lo, hi))
            return field.zero()
        return int(v)

    def decode_string_map(self, triples, elem="str"):
        """Attributes into map[string]string (or []string values)."""
        out = {}
        for name, expr, _ in triples:
            v = self.eval(expr)
            try:
                v = _convert_kind(v, "strlist" if elem == "strlist" else "str")
            except ConversionError as exc:
                self.unsuitable(expr, str(exc))
                v = None
            else:
                if hcl2.has_unknown(v):
                    self.unsuitable(expr, "value must be known")
                    v = None
                elif v is None and elem == "str":
                    self.unsuitable(expr, "null value is not allowed")
            out[name] = "" if v is None and elem == "str" else v
        return out

    # -- structs

    def decode_struct(self, view, spec, labels=(), label_rngs=()):
        """Decode a body into a fresh struct dict (gohcl DecodeBody)."""
        custom = _CUSTOM.get(spec.name)
        if custom is not None:
            return custom(self, view, spec, labels)
        out = spec.empty()
        self.fill_struct(view, spec, out)
        if spec.label and labels:
            out[spec.label] = labels[0]
        return out

    def fill_struct(self, view, spec, out):
        attr_schema = {n: spec.by_hcl[n].required for n in spec.attrs}
        block_schema = {n: spec.by_hcl[n].struct.label_names()
                        if spec.by_hcl[n].struct else []
                        for n in spec.blocks}
        attrs, blocks, _ = self.content(view, attr_schema, block_schema)
        for name in sorted(attrs, key=lambda n: attrs[n].rng[0]):
            field = spec.by_hcl[name]
            out[field.json] = self.decode_expr(attrs[name].expr, field)
        by_type = {}
        for blk in blocks:
            by_type.setdefault(blk.type, []).append(blk)
        for btype, group in by_type.items():
            field = spec.by_hcl[btype]
            self.decode_block_field(field, group, out)

    def decode_block_field(self, field, group, out):
        kind = field.kind
        if kind in ("block", "strmap_block", "strlistmap_block",
                    "freemap_block") and len(group) > 1:
            self.error("Duplicate %s block" % field.hcl,
                       "Only one %s block is allowed. Another was defined at "
                       "%s." % (field.hcl, self.rng(group[0].def_rng)),
                       group[1].def_rng)
            return
        if kind == "block":
            blk = group[0]
            out[field.json] = self.decode_struct(_View(blk.body), field.struct,
                                                 blk.labels)
        elif kind == "blocks":
            out[field.json] = [self.decode_struct(_View(blk.body),
                                                  field.struct, blk.labels)
                               for blk in group]
        elif kind == "blockmap":
            result = {}
            for blk in group:
                item = self.decode_struct(_View(blk.body), field.struct,
                                          blk.labels)
                result[blk.labels[0] if blk.labels else ""] = item
            out[field.json] = result
        elif kind == "strmap_block":
            out[field.json] = self.decode_string_map(
                self.just_attributes(_View(group[0].body)))
        elif kind == "strlistmap_block":
            out[field.json] = self.decode_string_map(
                self.just_attributes(_View(group[0].body)), "strlist")
        elif kind == "freemap_block":
            out[field.json] = _Deferred(
                self.just_attributes(_View(group[0].body)))

    # -- Nomad special cases

    def decode_as_attribute(self, view, name):
        """jobspec2's decodeAsAttribute: ``meta = {...}`` as a map.

        Returns (map or None, remaining view).  When the attribute is
        absent the body is returned untouched so the block form applies.
        """
        attr = view.body.attrs.get(name)
        if attr is None or name in view.hidden_attrs:
            return None, view
        remain = view.hide(attrs=[name])
        for blk in view.body.blocks:
            if blk.type == name and name not in view.hidden_blocks:
                self.error("Duplicate %s block" % name,
                           "%s may not be defined more than once. Another "
                           "definition is defined at %s." %
                           (name, self.rng(attr.rng)), blk.def_rng)
                return None, remain
        v = self.eval(attr.expr)
        try:
            v = hcl2.convert(v, ("map", hcl2.STRING))
        except ConversionError as exc:
            self.unsuitable(attr.expr, str(exc))
            return {}, remain
        if hcl2.has_unknown(v):
            self.unsuitable(attr.expr, "value must be known")
            return {}, remain
        if v is None:
            return None, remain
        return v, remain


def _convert_kind(v, kind):
    if kind == "str":
        return hcl2.to_string(v)
    if kind == "bool":
        return hcl2.to_bool(v)
    if kind in _INT_RANGES or kind == "dur":
        return hcl2.to_number(v)
    if kind == "strlist":
        return hcl2.convert(v, ("list", hcl2.STRING))
    if kind == "u16list":
        return hcl2.convert(v, ("list", hcl2.NUMBER_T))
    if kind == "strmap":
        return hcl2.convert(v, ("map", hcl2.STRING))
    return v


def _wrap_object(expr):
    if isinstance(expr, hcl2.ObjectCons):
        return hcl2.TupleCons([expr], expr.rng)
    return expr


def _group_blocks(blocks):
    groups = {}
    for blk in blocks:
        groups.setdefault(blk.type, []).append(blk)
    return list(groups.items())


def _key(name, rng):
    return hcl2.ObjKey(hcl2.Traversal(name, rng, [], rng), False)


def _blocks_to_expr(blocks):
    items = [_block_to_expr(blk) for blk in blocks]
    return hcl2.TupleCons(items, (blocks[0].open_rng[0],
                                  blocks[-1].close_rng[1]))


def _block_to_expr(blk):
    body = blk.body
    items = [(_key(attr.name, attr.name_rng), _wrap_object(attr.expr))
             for attr in body.attrs.values()]
    for btype, group in _group_blocks(body.blocks):
        items.append((_key(btype, group[0].type_rng), _blocks_to_expr(group)))
    rng = (blk.open_rng[0], blk.close_rng[1])
    v = hcl2.ObjectCons(items, rng)
    for label, lrng in zip(reversed(blk.labels), reversed(blk.label_rngs)):
        v = hcl2.ObjectCons([(_key(label, lrng),
                              hcl2.TupleCons([v], rng))], rng)
    return v


# -- custom block decoders (jobspec2/hcl_conversions.go)


def _decode_constraint(dec, view, spec, labels, affinity=False):
    """Constraints accept shorthands like ``distinct_hosts = true``."""
    out = spec.empty()
    typespec = _AFFINITY_SPEC if affinity else _CONSTRAINT_SPEC
    mark = len(dec.diags)
    attrs, _, _ = dec.content(view, {n: False for n in typespec}, {})
    values = {}
    for name in sorted(attrs, key=lambda n: attrs[n].rng[0]):
        attr = attrs[name]
        v = dec.eval(attr.expr)
        try:
            v = hcl2.convert(v, (typespec[name],))
        except ConversionError as exc:
            dec.error("Incorrect attribute value type",
                      "Inappropriate value for attribute %s: %s." %
                      (go_quote(name), exc), attr.expr.rng,
                      (attr.name_rng[0], attr.expr.rng[1]))
            continue
        values[name] = v
    if len(dec.diags) > mark:
        return out

    def text(name):
        v = values.get(name)
        return "" if v is None or v is UNKNOWN else v

    out["LTarget"] = text("attribute")
    out["RTarget"] = text("value")
    out["Operand"] = text("operator")
    if affinity:
        w = values.get("weight")
        if w is not None and w is not UNKNOWN:
            w = int(w)  # truncates like big.Float.Int64
            out["Weight"] = ((w + 128) % 256) - 128  # Go's int8(w)
        shorthands = ("version", "semver", "regexp", "set_contains_any",
                      "set_contains_all", "set_contains")
    else:
        shorthands = ("version", "semver", "regexp", "set_contains")
    for op in shorthands:
        if text(op):
            out["Operand"] = op
            out["RTarget"] = text(op)
    if not affinity:
        if values.get("distinct_hosts") is True:
            out["Operand"] = "distinct_hosts"
        if text("distinct_property"):
            out["Operand"] = "distinct_property"
            out["LTarget"] = text("distinct_property")
    if out["Operand"] == "":
        out["Operand"] = "="
    return out


def _decode_affinity(dec, view, spec, labels):
    return _decode_constraint(dec, view, spec, labels, affinity=True)


def _decode_task_group(dec, view, spec, labels):
    """Groups: ``meta`` as attribute, group-level vault, scaling checks."""
    tg = spec.empty()
    if labels:
        tg["Name"] = labels[0]
    mark = len(dec.diags)
    meta, view = dec.decode_as_attribute(view, "meta")
    del dec.diags[mark:]  # jobspec2 overwrites these diagnostics
    _, vault_blocks, tg_view = dec.content(view, {}, {"vault": []},
                                           partial=True)
    if len(dec.diags) > mark:
        return tg
    group_vault = None
    for blk in vault_blocks:
        group_vault = dec.decode_struct(_View(blk.body), VAULT)
    # jobspec2 also drops the vault diagnostics: its group decoder
    # assigns the struct decoder's diagnostics over the earlier ones.
    del dec.diags[mark:]
    dec.fill_struct(tg_view, spec, tg)
    if meta is not None:
        tg["Meta"] = meta
    if group_vault is not None:
        for task in tg["Tasks"] or ():
            if task["Vault"] is None:
                task["Vault"] = group_vault
    scaling = tg["Scaling"]
    if scaling is not None:
        if scaling["Type"] == "":
            scaling["Type"] = "horizontal"
        _validate_group_scaling(dec, scaling, tg_view)
    return tg


def _validate_group_scaling(dec, policy, view):
    if policy["Max"] is not None and policy["Type"] == "horizontal":
        return
    blocks = [blk for blk in view.body.blocks if blk.type == "scaling"]
    if not blocks:
        return
    attrs, _, _ = dec.content(_View(blocks[0].body),
                              {"max": True, "type": False}, {}, partial=True)
    if policy["Type"] != "horizontal" and "type" in attrs:
        dec.error("Invalid group scaling type",
                  "task group scaling policy had invalid type: %s" %
                  go_quote(policy["Type"]), attrs["type"].expr.rng)


def _decode_task(dec, view, spec, labels):
    """Tasks: ``env``/``meta`` as attributes, ``scaling "cpu"|"mem"``."""
    task = spec.empty()
    if labels:
        task["Name"] = labels[0]
    env, view = dec.decode_as_attribute(view, "env")
    meta, view = dec.decode_as_attribute(view, "meta")
    _, scaling_blocks, remain = dec.content(view, {}, {"scaling": ["name"]},
                                            partial=True)
    policies = _decode_task_scaling(dec, scaling_blocks)
    dec.fill_struct(remain, spec, task)
    if policies:
        task["ScalingPolicies"] = policies
    if env is not None:
        task["Env"] = env
    if meta is not None:
        task["Meta"] = meta
    return task


def _decode_task_scaling(dec, blocks):
    policies = []
    seen = {}
    for blk in blocks:
        label = blk.labels[0].lower()
        if label == "cpu":
            want = "vertical_cpu"
        elif label == "mem":
            want = "vertical_mem"
        else:
            dec.error("Invalid scaling policy name",
                      'scaling policy name must be "cpu" or "mem"',
                      blk.label_rngs[0])
            continue
        if label in seen:
            dec.error('Duplicate scaling %s block' % go_quote(label),
                      "Only one scaling %s block is allowed. Another was "
                      "defined at %s." % (label,
                                          dec.rng(seen[label].def_rng)),
                      blk.def_rng)
            continue
        seen[label] = blk
        policy = dec.decode_struct(_View(blk.body), SCALING)
        if policy["Type"] == "":
            policy["Type"] = want
        elif policy["Type"] != want:
            # Nomad prints the two types the other way round; kept as is.
            dec.error("Invalid scaling policy type",
                      "Invalid policy type, expected %s but found %s" %
                      (go_quote(policy["Type"]), go_quote(want)),
                      blk.def_rng)
            continue
        policies.append(policy)
    return policies


_CUSTOM = {
    "Constraint": _decode_constraint,
    "Affinity": _decode_affinity,
    "TaskGroup": _decode_task_group,
    "Task": _decode_task,
}


# ---------------------------------------------------------------------------
# Variables and locals (jobspec2/types.variables.go, types.config.go)


class _Variable:
    __slots__ = ("name", "type", "values", "def_rng", "validations",
                 "description")

    def __init__(self, name, def_rng):
        self.name = name
        self.type = None
        self.values = []      # (from, value, expr or None)
        self.def_rng = def_rng
        self.validations = []
        self.description = ""


_IDENT_RE = re.compile(r"[^\W\d][\w\-]*\Z")


class _JobConfig:
    """The whole file: variables, locals and the job block."""

    def __init__(self, src, body, var_files, var_values, strict):
        self.src = src
        self.body = body
        self.var_files = var_files          # [(Body, Source)]
        self.var_values = var_values or {}
        self.strict = strict
        self.diags = []
        self.variables = {}                 # name -> _Variable, in order
        self.local_exprs = []               # (name, expr)
        self.locals = {}
        self.job = None
        self.job_id = None
        self.top_tasks = []
        self.top_vault = None
        self.ev = hcl2.Evaluator(src, self.diags)

    def error(self, summary, detail, subject=None, context=None,
              severity=ERROR, src=None):
        src = src or self.src
        self.diags.append(Diagnostic(
            summary, detail, src.range(*subject) if subject else None,
            src.range(*context) if context else None, severity))

    # -- the top level

    def decode(self):
        dec = _Decoder(self.src, None, self.diags)
        _, blocks, _ = dec.content(
            _View(self.body, wrapped=False), {},
            {"variables": [], "variable": ["name"], "locals": [],
             "job": ["name"]})
        if self.diags:
            return
        for blk in blocks:
            if blk.type == "variable":
                self.decode_variable_block(blk)
            elif blk.type == "variables":
                dec = _Decoder(self.src, None, self.diags)
                for name, expr, name_rng in dec.just_attributes(
                        _View(blk.body, wrapped=False)):
                    attr = blk.body.attrs[name]
                    self.decode_variable_attr(name, expr, name_rng, attr.rng)
        for blk in blocks:
            if blk.type == "locals":
                if not self.collect_locals(blk):
                    break
        self.collect_values()
        self.check_values()
        self.evaluate_locals()
        self.decode_job(blocks)

    def decode_variable_attr(self, name, expr, name_rng, rng):
        if name in self.variables:
            self.error("Duplicate variable",
                       "Duplicate %s variable definition found." % name,
                       name_rng)
            return
        mark = len(self.diags)
        v = self.ev.eval(expr, None)
        if len(self.diags) > mark:
            return
        var = _Variable(name, None)
        var.def_rng = rng
        var.type = hcl2.implied_type(v)
        var.values.append(("default", v, expr))
        self.variables[name] = var

    def decode_variable_block(self, blk):
        name = blk.labels[0]
        if name in self.variables:
            self.error("Duplicate variable",
                       "Duplicate %s variable definition found." % name,
                       context=blk.def_rng)
            return
        dec = _Decoder(self.src, None, self.diags)
        attrs, vblocks, _ = dec.content(
            _View(blk.body, wrapped=False),
            {"description": False, "default": False, "type": False},
            {"validation": []})
        if not _IDENT_RE.match(name):
            self.error("Invalid variable name",
                       "A name must start with a letter or underscore and "
                       "may contain only letters, digits, underscores, and "
                       "dashes.", blk.label_rngs[0])
        var = _Variable(name, blk.def_rng)
        if "description" in attrs:
            d = dec.decode_expr(attrs["description"].expr,
                                F("Description", None, "str"))
            var.description = d
        if "type" in attrs:
            t, tdiags = hcl2.type_expr(attrs["type"].expr, self.src)
            self.diags.extend(tdiags)
            if t is None:
                return
            var.type = t
        if "default" in attrs:
            expr = attrs["default"].expr
            mark = len(self.diags)
            v = self.ev.eval(expr, None)
            if len(self.diags) > mark:
                return
            if var.type is not None:
                try:
                    v = hcl2.convert(v, var.type)
                except ConversionError as exc:
                    self.error("Invalid default value for variable",
                               "This default value is not compatible with "
                               "the variable's type constraint: %s." % exc,
                               expr.rng)
                    v = UNKNOWN
            var.values.append(("default", v, expr))
            if var.type is None:
                var.type = hcl2.implied_type(v)
        for vb in vblocks:
            var.validations.append(self.decode_validation(name, vb))
        self.variables[name] = var

    def decode_validation(self, name, blk):
        dec = _Decoder(self.src, None, self.diags)
        attrs, _, _ = dec.content(_View(blk.body, wrapped=False),
                                  {"condition": True, "error_message": True},
                                  {})
        cond = attrs.get("condition")
        message = ""
        if cond is not None:
            refs = _references(cond.expr)
            good = 0
            for trav in refs:
                first = trav.steps[0] if trav.steps else None
                if trav.root == "var" and first and first[0] == "attr" and \
                        first[1] == name:
                    good += 1
                    continue
                self.error("Invalid reference in variable validation",
                           "The condition for variable %s can only refer to "
                           "the variable itself, using var.%s." %
                           (go_quote(name), name), trav.rng)
            if good < 1:
                self.error("Invalid variable validation condition",
                           "The condition for variable %s must refer to "
                           "var.%s in order to test incoming values." %
                           (go_quote(name), name), cond.expr.rng)
        if "error_message" in attrs:
            expr = attrs["error_message"].expr
            message = dec.decode_expr(expr, F("ErrorMessage", None, "str"))
            if message == "":
                self.error("Invalid validation error message",
                           "An empty string is not a valid nor useful error "
                           "message.", expr.rng)
            elif not _looks_like_sentences(message):
                self.error("Invalid validation error message",
                           "Validation error message must be at least one "
                           "full sentence starting with an uppercase letter "
                           "( if the alphabet permits it ) and ending with a "
                           "period or question mark.", expr.rng)
        return (cond.expr if cond else None, message, blk.def_rng)

    def collect_locals(self, blk):
        dec = _Decoder(self.src, None, self.diags)
        for name, expr, name_rng in dec.just_attributes(
                _View(blk.body, wrapped=False)):
            if any(n == name for n, _ in self.local_exprs):
                self.error("Duplicate value in locals",
                           "Duplicate %s definition found." % name, name_rng,
                           blk.def_rng)
                return False
            self.local_exprs.append((name, expr))
        return True

    def collect_values(self):
        """Values from the vars file content and from -var flags."""
        severity = ERROR if self.strict else WARNING
        for body, src in self.var_files:
            bad = False
            for blk in body.blocks:
                if blk.type == "variable" and len(blk.labels) == 1:
                    name = blk.labels[0]
                    self.error(
                        "Variable declaration in a .var file",
                        "A .var file is used to assign values to variables "
                        "that have already been declared in job files, not "
                        "to declare new variables. To declare variable %s, "
                        "place this block in one of your job files\n\nTo set "
                        "a value for this variable in %s, use the definition "
                        "syntax instead:\n    %s = <value>" %
                        (go_quote(name), src.filename, name),
                        blk.type_rng, src=src)
                    bad = True
            if bad:
                return
            dec = _Decoder(src, None, self.diags)
            for name, expr, _ in dec.just_attributes(
                    _View(body, wrapped=False)):
                attr = body.attrs[name]
                var = self.variables.get(name)
                if var is None:
                    self.error("Undefined variable",
                               "A %s variable was set but was not found in "
                               "known variables. To declare variable %s, "
                               "place this block in your job files" %
                               (go_quote(name), go_quote(name)),
                               context=attr.rng, severity=severity, src=src)
                    continue
                v = hcl2.Evaluator(src, self.diags).eval(expr, None)
                if var.type is not None:
                    try:
                        v = hcl2.convert(v, var.type)
                    except ConversionError as exc:
                        self.error("Invalid value for variable",
                                   "The value for %s is not compatible with "
                                   "the variable's type constraint: %s." %
                                   (name, exc), expr.rng, src=src)
                        v = UNKNOWN
                var.values.append(("varfile", v, None))
        for name, raw in self.var_values.items():
            var = self.variables.get(name)
            if var is None:
                self.error("Undefined -var variable",
                           "A %s variable was passed in the command line but "
                           "was not found in known variables. To declare "
                           "variable %s, place this block in your job file" %
                           (go_quote(name), go_quote(name)),
                           severity=severity)
                continue
            ok, v = self.arg_value(name, raw, var)
            if ok:
                var.values.append(("cmd", v, None))

    def arg_value(self, name, raw, var):
        """A -var value: plain text for simple types, HCL otherwise.

        Returns (ok, value); ok is false when the text did not parse.
        """
        if not isinstance(raw, str):
            v = raw
            src = None
        elif var.type is None or var.type[0] in ("string", "number"):
            v = raw
            src = None
        else:
            fname = "<value for var.%s from arguments>" % name
            try:
                expr, src = hcl2.parse_expression(raw, fname)
            except hcl2.HCLError as exc:
                self.diags.extend(exc.diags)
                return False, None
            v = hcl2.Evaluator(src, self.diags).eval(expr, None)
        if var.type is not None:
            try:
                v = hcl2.convert(v, var.type)
            except ConversionError as exc:
                # A plain-text value has no source; Go prints the zero
                # hcl.Range of its literal expression as ":0,0-0".
                subject = src.range(0, len(src.text)) if src else \
                    hcl2.Range("", hcl2.Pos(0, 0, 0), hcl2.Pos(0, 0, 0))
                self.diags.append(Diagnostic(
                    "Invalid argument value for -var variable",
                    "The received arg value for %s is not compatible with "
                    "the variable's type constraint: %s." % (name, exc),
                    subject))
                v = UNKNOWN
        return True, v

    def check_values(self):
        for var in self.variables.values():
            if not var.values:
                self.diags.append(Diagnostic(
                    "Unset variable %s" % go_quote(var.name),
                    UNSET_VARIABLE_DETAIL))
                continue
            self.validate(var, var.values[-1])

    def validate(self, var, assignment):
        origin, value, expr = assignment
        for cond, message, decl_rng in var.validations:
            if cond is None:
                self.error("Invalid variable validation specification",
                           "validation requires a condition.", decl_rng)
                continue
            ctx = hcl2.EvalContext({"var": {var.name: value}},
                                   hcl2.FUNCTIONS)
            mark = len(self.diags)
            result = self.ev.eval(cond, ctx)
            if len(self.diags) > mark or result is UNKNOWN:
                continue
            if result is None:
                self.error("Invalid variable validation result",
                           "Validation condition expression must return "
                           "either true or false, not null.", cond.rng)
                continue
            try:
                result = hcl2.to_bool(result)
            except ConversionError as exc:
                self.error("Invalid variable validation result",
                           "Invalid validation condition result value: %s."
                           % exc, cond.rng)
                continue
            if not result:
                subject = expr.rng if expr is not None else decl_rng
                self.error("Invalid value for %s variable" % origin,
                           "%s\n\nThis was checked by the validation rule at "
                           "%s." % (message, self.src.range(*decl_rng)),
                           subject)

    def var_object(self):
        out = {}
        for name, var in self.variables.items():
            out[name] = var.values[-1][1] if var.values else UNKNOWN
        return out

    def eval_context(self):
        return hcl2.EvalContext({"var": self.var_object(),
                                 "local": dict(self.locals)},
                                hcl2.FUNCTIONS, passthrough=True)

    def evaluate_locals(self):
        """Locals may refer to each other; retry until they settle."""
        pending = list(self.local_exprs)
        retries = 0
        previous = 0
        while pending:
            name, expr = pending[0]
            probe = []
            value = hcl2.Evaluator(self.src, probe).eval(
                expr, self.eval_context())
            if hcl2.has_errors(probe):
                if len(pending) == 1:
                    self.diags.extend(probe)
                    return
                if previous == len(pending):
                    if retries == 100:
                        self.diags.extend(probe)
                        return
                    retries += 1
                previous = len(pending)
                pending.append(pending[0])
            else:
                retries = 0
                self.diags.extend(probe)
                self.locals[name] = value
            pending.pop(0)

    # -- the job block

    def decode_job(self, blocks):
        ctx = self.eval_context()
        dec = _Decoder(self.src, ctx, self.diags)
        found = None
        for blk in blocks:
            if blk.type != "job":
                continue
            if found is not None:
                self.error("Duplicate job block",
                           'Only one block of type "job" is allowed. '
                           "Previous definition was at %s." %
                           self.src.range(*found.def_rng), blk.def_rng)
                continue
            found = blk
            self.job_id = blk.labels[0]
            view = _View(blk.body)
            meta, view = dec.decode_as_attribute(view, "meta")
            _, extra, remain = dec.content(view, {},
                                           {"vault": [], "task": ["name"]},
                                           partial=True)
            for eb in extra:
                if eb.type == "vault":
                    if self.top_vault is not None:
                        self.error("Duplicate vault block",
                                   'Only one block of type "vault" is '
                                   "allowed. Previous definition was at %s." %
                                   self.src.range(*self.top_vault[1]),
                                   eb.def_rng)
                        continue
                    self.top_vault = (dec.decode_struct(_View(eb.body),
                                                        VAULT), eb.def_rng)
                else:
                    self.top_tasks.append(dec.decode_struct(
                        _View(eb.body), TASK, eb.labels))
            job = JOB.empty()
            dec.fill_struct(remain, JOB, job)
            if meta is not None:
                job["Meta"] = meta
            self.job = job
        if found is None:
            self.diags.append(Diagnostic("Missing job block",
                                         "A job block is required"))


def _references(expr):
    """Every variable reference inside an expression (for validations)."""
    out = []

    def walk(node):
        if isinstance(node, hcl2.Traversal):
            out.append(node)
            return
        if isinstance(node, hcl2.Expr):
            for slot in _all_slots(type(node)):
                walk(getattr(node, slot, None))
        elif isinstance(node, (list, tuple)):
            for x in node:
                walk(x)

    walk(expr)
    return out


def _all_slots(cls):
    slots = []
    for klass in cls.__mro__:
        slots.extend(getattr(klass, "__slots__", ()))
    return [s for s in slots if s != "rng"]


def _looks_like_sentences(s):
    first, last = s[0], s[-1]
    if first.isalpha() and not first.isupper():
        return False
    return last in ".?!"


# ---------------------------------------------------------------------------
# Free-form maps (jobspec2/parse_map.go)


def _resolve_deferred(node, ev, ctx):
    """Evaluate stored config/policy expressions into plain values."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, _Deferred):
                node[k] = _deferred_value(v, ev, ctx)
            else:
                _resolve_deferred(v, ev, ctx)
    elif isinstance(node, list):
        for x in node:
            _resolve_deferred(x, ev, ctx)


def _deferred_value(deferred, ev, ctx):
    out = {}
    for name, expr, _ in deferred.attrs:
        v = ev.eval(expr, ctx)
        if hcl2.has_unknown(v):
            ev.diags.append(Diagnostic(
                "unsuitable value type",
                "Unsuitable value: value is not known",
                ev.src.range(*expr.start_rng()), ev.src.range(*expr.rng)))
            v = None
        out[name] = _plain(v)
    return out


def _plain(v):
    if isinstance(v, float):
        return hcl2._norm_number(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


# ---------------------------------------------------------------------------
# jobspec2's normalizeJob (parse_job.go)


def _normalize(jc):
    job = jc.job
    if job["Name"] is None:
        job["Name"] = jc.job_id
    if job["ID"] is None:
        job["ID"] = jc.job_id
    periodic = job["Periodic"]
    if periodic is not None and (periodic["Spec"] is not None or
                                 periodic["Specs"] is not None):
        periodic["SpecType"] = "cron"
    top_vault = jc.top_vault[0] if jc.top_vault else None
    _normalize_vault(top_vault)
    if jc.top_tasks:
        alone = []
        for task in jc.top_tasks:
            tg = TASK_GROUP.empty()
            tg["Name"] = task["Name"]
            tg["Tasks"] = [task]
            alone.append(tg)
        job["TaskGroups"] = alone + (job["TaskGroups"] or [])
    for tg in job["TaskGroups"] or ():
        _normalize_ports(tg["Networks"])
        for task in tg["Tasks"] or ():
            if task["CSIPluginConfig"] is None:
                del task["CSIPluginConfig"]  # json:",omitempty"
            if task["Resources"] is not None:
                _normalize_ports(task["Resources"]["Networks"])
            _normalize_templates(task["Templates"])
            _normalize_vault(task["Vault"])
            if task["Vault"] is None and top_vault is not None:
                task["Vault"] = copy.deepcopy(top_vault)


def _normalize_vault(v):
    if v is None:
        return
    if v["Env"] is None:
        v["Env"] = True
    if v["ChangeMode"] is None:
        v["ChangeMode"] = "restart"


def _normalize_ports(networks):
    """Ports with a ``static`` value are reserved, the rest dynamic."""
    for net in networks or ():
        if not net["DynamicPorts"]:
            continue
        dynamic = [port for port in net["DynamicPorts"] if port["Value"] <= 0]
        reserved = [port for port in net["DynamicPorts"] if port["Value"] > 0]
        net["DynamicPorts"] = dynamic or None
        net["ReservedPorts"] = reserved or None


def _normalize_templates(templates):
    for t in templates or ():
        if t["ChangeMode"] is None:
            t["ChangeMode"] = "restart"
        if t["Perms"] is None:
            t["Perms"] = "0644"
        if t["Splay"] is None:
            t["Splay"] = 5 * SECOND
        if t["ErrMissingKey"] is None:
            t["ErrMissingKey"] = False
        cs = t["ChangeScript"]
        if cs is not None:
            if cs["Args"] is None:
                cs["Args"] = []
            if cs["Timeout"] is None:
                cs["Timeout"] = 5 * SECOND
            if cs["FailOnError"] is None:
                cs["FailOnError"] = False


# ---------------------------------------------------------------------------
# Entry point


def _fail(diags, joined):
    """Build the /v1/jobs/parse error text from diagnostics."""
    if joined:
        text = "\n".join(d.error() for d in diags)
    else:
        text = hcl2.diagnostics_error(diags)
    return JobParseError("Failed to parse job: " + text, diags)


def parse_job(src, filename="job.nomad.hcl", variables=None, var_values=None,
              canonicalize=False, strict=False):
    """Parse an HCL2 job file into the api.Job dict /v1/jobs/parse returns.

    ``filename`` names the file in diagnostics; Nomad's HTTP handler
    always uses "input.hcl" (NOMAD_PARSE_FILENAME).  ``variables`` is the
    content of a vars file (the request's ``Variables`` field, also
    reported as "input.hcl"), ``var_values`` maps names to ``-var`` style
    values (strings are read the way the CLI reads them).  ``strict``
    turns values for undeclared variables into errors, as
    ``nomad job run -hcl2-strict`` does; the HTTP API is not strict, so
    they are ignored there.  ``canonicalize=True`` applies the api
    Canonicalize defaults, like the request's ``Canonicalize`` flag.

    Raises JobParseError carrying Nomad's error text.
    """
    if src == "":
        raise JobParseError("Job spec is empty")
    if src.lstrip(" ").startswith("{"):
        raise JobParseError("Failed to parse job: this simulator does not "
                            "support the HCL JSON syntax")
    try:
        return _parse_job(src, filename, variables, var_values, canonicalize,
                          strict)
    except RecursionError:
        # Go's growable stacks have no such limit; this is ours.
        raise JobParseError("Failed to parse job: %s: expressions are "
                            "nested too deeply for the simulator" %
                            filename) from None


def _parse_job(src, filename, variables, var_values, canonicalize, strict):
    try:
        body, source = hcl2.parse(src, filename)
    except hcl2.HCLError as exc:
        raise _fail(exc.diags, False) from None
    var_files = []
    if variables:
        try:
            var_files.append(hcl2.parse(variables, NOMAD_PARSE_FILENAME))
        except hcl2.HCLError as exc:
            raise JobParseError("Failed to parse job: unable to parse var "
                                "content: " +
                                hcl2.diagnostics_error(exc.diags),
                                exc.diags) from None
    jc = _JobConfig(source, body, var_files, var_values, strict)
    jc.decode()
    if hcl2.has_errors(jc.diags):
        raise _fail(jc.diags, True)
    late = []
    ev = hcl2.Evaluator(source, late)
    ctx = jc.eval_context()
    _resolve_deferred(jc.job, ev, ctx)
    for task in jc.top_tasks:
        _resolve_deferred(task, ev, ctx)
    if jc.top_vault:
        _resolve_deferred(jc.top_vault[0], ev, ctx)
    if hcl2.has_errors(late):
        raise _fail(late, False)
    _normalize(jc)
    job = jc.job
    if canonicalize:
        _canonicalize_job(job)
    return job


# ---------------------------------------------------------------------------
# api Canonicalize


def canonicalize(job):
    """Apply api.Job.Canonicalize to a JSON job (e.g. from a register).

    The input is read the way Go's encoding/json reads it into api.Job:
    keys match case-insensitively, unknown keys are dropped and missing
    ones become nil.  Returns a new dict with every field present.
    """
    shaped = _shape(job, JOB)
    _canonicalize_job(shaped)
    return shaped


def _shape(value, spec):
    if not isinstance(value, dict):
        return None if value is None else value
    lower = {}
    for k in value:
        lower.setdefault(k.lower(), k)
    out = {}
    for f in spec.fields:
        key = f.json if f.json in value else lower.get(f.json.lower())
        if key is None:
            if not f.omitempty:
                out[f.json] = f.zero()
            continue
        v = copy.deepcopy(value[key])
        if f.kind == "block" and f.struct is not None:
            v = _shape(v, f.struct)
        elif f.kind == "blocks" and f.struct is not None and \
                isinstance(v, list):
            v = [_shape(x, f.struct) for x in v]
        elif f.kind == "blockmap" and isinstance(v, dict):
            v = {k: _shape(x, f.struct) for k, x in v.items()}
        if f.omitempty and v is None:
            continue
        out[f.json] = v
    return out


def _default_update():
    return {"Stagger": 30 * SECOND, "MaxParallel": 1, "HealthCheck": "checks",
            "MinHealthyTime": 10 * SECOND, "HealthyDeadline": 5 * MINUTE,
            "ProgressDeadline": 10 * MINUTE, "Canary": 0, "AutoRevert": False,
            "AutoPromote": False}


def _fill(d, defaults):
    for k, v in defaults.items():
        if d.get(k) is None:
            d[k] = copy.deepcopy(v)


def _update_empty(u):
    if u is None:
        return True
    for k in ("Stagger", "MaxParallel", "MinHealthyTime", "HealthyDeadline",
              "ProgressDeadline", "Canary"):
        if u.get(k):
            return False
    if u.get("HealthCheck"):
        return False
    return not (u.get("AutoRevert") or u.get("AutoPromote"))


def _merge_set(base, other):
    """Copy every non-nil field of other over base (the api Merge methods)."""
    for k, v in other.items():
        if v is not None:
            base[k] = copy.deepcopy(v)
    return base


def _canonicalize_job(j):
    if j.get("ID") is None:
        j["ID"] = ""
    if j.get("Name") is None:
        j["Name"] = j["ID"]
    _fill(j, {"ParentID": "", "Namespace": "default", "Priority": 50,
              "Stop": False, "Region": "global", "NodePool": "",
              "Type": "service", "AllAtOnce": False, "ConsulNamespace": "",
              "VaultNamespace": "", "NomadTokenID": "", "Status": "",
              "StatusDescription": "", "Stable": False, "Version": 0,
              "CreateIndex": 0, "ModifyIndex": 0, "JobModifyIndex": 0})
    if j.get("Periodic") is not None:
        per = j["Periodic"]
        _fill(per, {"Enabled": True, "Spec": "", "SpecType": "cron",
                    "ProhibitOverlap": False})
        if not per.get("TimeZone"):
            per["TimeZone"] = "UTC"
    if j.get("Update") is not None:
        _fill(j["Update"], _default_update())
    elif j["Type"] == "service":
        j["Update"] = _default_update()
    mr = j.get("Multiregion")
    if mr is not None:
        if mr.get("Strategy") is None:
            mr["Strategy"] = {"MaxParallel": 0, "OnFailure": ""}
        else:
            _fill(mr["Strategy"], {"MaxParallel": 0, "OnFailure": ""})
        if mr.get("Regions") is None:
            mr["Regions"] = []
        for region in mr["Regions"]:
            _fill(region, {"Count": 1, "Datacenters": [], "Meta": {}})
    for tg in j.get("TaskGroups") or ():
        _canonicalize_group(tg, j)
    for spread in j.get("Spreads") or ():
        _fill(spread, {"Weight": 50})
    for aff in j.get("Affinities") or ():
        _fill(aff, {"Weight": 50})


def _default_reschedule(job_type):
    if job_type == "service":
        return {"Attempts": 0, "Interval": 0, "Delay": 30 * SECOND,
                "DelayFunction": "exponential", "MaxDelay": HOUR,
                "Unlimited": True}
    if job_type == "batch":
        return {"Attempts": 1, "Interval": 24 * HOUR, "Delay": 5 * SECOND,
                "DelayFunction": "constant", "MaxDelay": 0,
                "Unlimited": False}
    return {"Attempts": 0, "Interval": 0, "Delay": 0, "DelayFunction": "",
            "MaxDelay": 0, "Unlimited": False}


def _default_restart(job_type):
    if job_type in ("service", "system"):
        return {"Interval": 30 * MINUTE, "Attempts": 2, "Delay": 15 * SECOND,
                "Mode": "fail", "RenderTemplates": False}
    return {"Interval": 24 * HOUR, "Attempts": 3, "Delay": 15 * SECOND,
            "Mode": "fail", "RenderTemplates": False}


def _canonicalize_group(g, job):
    job_type = job["Type"]
    if g.get("Name") is None:
        g["Name"] = ""
    if g.get("Count") is None:
        scaling = g.get("Scaling")
        if scaling is not None and scaling.get("Min") is not None:
            g["Count"] = int(scaling["Min"])
        else:
            g["Count"] = 1
    if g.get("Scaling") is not None:
        _fill(g["Scaling"], {"Enabled": True, "Min": g["Count"]})
        if not g["Scaling"].get("Type"):
            g["Scaling"]["Type"] = "horizontal"
    if g.get("EphemeralDisk") is None:
        g["EphemeralDisk"] = {"Sticky": False, "Migrate": False, "SizeMB": 300}
    else:
        _fill(g["EphemeralDisk"], {"Sticky": False, "Migrate": False,
                                   "SizeMB": 300})
    if g.get("Consul") is not None:
        _canonicalize_consul(g["Consul"], job.get("ConsulNamespace"))
    ju, gu = job.get("Update"), g.get("Update")
    if ju is not None and gu is not None:
        g["Update"] = _merge_set(copy.deepcopy(ju), gu)
    elif ju is not None and not _update_empty(ju):
        g["Update"] = copy.deepcopy(ju)
    if g.get("Update") is not None:
        _fill(g["Update"], _default_update())
    jr, gr = job.get("Reschedule"), g.get("ReschedulePolicy")
    if jr is not None and gr is not None:
        g["ReschedulePolicy"] = _merge_set(copy.deepcopy(jr), gr)
    elif jr is not None:
        g["ReschedulePolicy"] = copy.deepcopy(jr)
    if g.get("ReschedulePolicy") is None and \
            job_type not in ("sysbatch", "system"):
        g["ReschedulePolicy"] = _default_reschedule(job_type)
    if g.get("ReschedulePolicy") is not None:
        _fill(g["ReschedulePolicy"], _default_reschedule(job_type))
    jm, gm = job.get("Migrate"), g.get("Migrate")
    if jm is not None and gm is not None:
        g["Migrate"] = _merge_set(copy.deepcopy(jm), gm)
    elif jm is not None:
        g["Migrate"] = copy.deepcopy(jm)
    if g.get("Migrate") is None and job_type == "service":
        g["Migrate"] = {"MaxParallel": None, "HealthCheck": None,
                        "MinHealthyTime": None, "HealthyDeadline": None}
    if g.get("Migrate") is not None:
        _fill(g["Migrate"], {"MaxParallel": 1, "HealthCheck": "checks",
                             "MinHealthyTime": 10 * SECOND,
                             "HealthyDeadline": 5 * MINUTE})
    restart = _default_restart(job_type)
    if g.get("RestartPolicy") is not None:
        _merge_set(restart, g["RestartPolicy"])
    g["RestartPolicy"] = restart
    for task in g.get("Tasks") or ():
        _canonicalize_task(task, g, job)
    for spread in g.get("Spreads") or ():
        _fill(spread, {"Weight": 50})
    for aff in g.get("Affinities") or ():
        _fill(aff, {"Weight": 50})
    for svc in g.get("Services") or ():
        _canonicalize_service(svc, None, g, job)
    if g.get("Disconnect") is not None:
        _fill(g["Disconnect"], {"Replace": True, "Reconcile": "best_score"})


def _canonicalize_consul(c, namespace):
    if not c.get("Namespace") and namespace is not None:
        c["Namespace"] = namespace
    if not c.get("Cluster"):
        c["Cluster"] = "default"


def _canonicalize_resources(r):
    if r.get("Cores") is None:
        r["Cores"] = 0
        if r.get("CPU") is None:
            r["CPU"] = 100
    if r.get("CPU") is None:
        r["CPU"] = 0
    if r.get("MemoryMB") is None:
        r["MemoryMB"] = 300
    for dev in r.get("Devices") or ():
        _fill(dev, {"Count": 1})
        for aff in dev.get("Affinities") or ():
            _fill(aff, {"Weight": 50})
    numa = r.get("NUMA")
    if numa is not None and not numa.get("Affinity"):
        numa["Affinity"] = "none"


def _default_log_config():
    return {"MaxFiles": 10, "MaxFileSizeMB": 10, "Enabled": None,
            "Disabled": False}


def _go_path_base(path):
    """Go's path.Base: last element, trailing slashes ignored."""
    if path == "":
        return "."
    path = path.rstrip("/")
    if path == "":
        return "/"
    return path.rsplit("/", 1)[-1]


def _canonicalize_task(t, g, job):
    if t.get("Resources") is None:
        t["Resources"] = RESOURCES.empty()
    _canonicalize_resources(t["Resources"])
    if t.get("KillTimeout") is None:
        t["KillTimeout"] = 5 * SECOND
    if t.get("LogConfig") is None:
        t["LogConfig"] = _default_log_config()
    else:
        _fill(t["LogConfig"], {"MaxFiles": 10, "MaxFileSizeMB": 10,
                               "Disabled": False})
    for art in t.get("Artifacts") or ():
        _fill(art, {"GetterMode": "any", "GetterInsecure": False,
                    "GetterSource": ""})
        if not art.get("GetterOptions"):
            art["GetterOptions"] = None
        if not art.get("GetterHeaders"):
            art["GetterHeaders"] = None
        if art.get("RelativeDest") is None:
            if art["GetterMode"] == "file":
                art["RelativeDest"] = posixpath.join(
                    "local", _go_path_base(art["GetterSource"]))
            else:
                art["RelativeDest"] = "local/"
    vault = t.get("Vault")
    if vault is not None:
        _fill(vault, {"Env": True, "DisableFile": False, "Namespace": "",
                      "ChangeMode": "restart", "ChangeSignal": "SIGHUP",
                      "AllowTokenExpiration": False})
        if not vault.get("Cluster"):
            vault["Cluster"] = "default"
    if t.get("Consul") is not None:
        _canonicalize_consul(t["Consul"], None)
    for tmpl in t.get("Templates") or ():
        _canonicalize_template(tmpl)
    for secret in t.get("Secrets") or ():
        if not secret.get("Config"):
            secret["Config"] = None
        if not secret.get("Env"):
            secret["Env"] = None
    for svc in t.get("Services") or ():
        _canonicalize_service(svc, t, g, job)
    for aff in t.get("Affinities") or ():
        _fill(aff, {"Weight": 50})
    for vm in t.get("VolumeMounts") or ():
        _fill(vm, {"PropagationMode": "private", "ReadOnly": False,
                   "SELinuxLabel": ""})
    csi = t.get("CSIPluginConfig")
    if csi is not None:
        if not csi.get("MountDir"):
            csi["MountDir"] = "/csi"
        if not csi.get("StagePublishBaseDir"):
            csi["StagePublishBaseDir"] = "/local/csi"
        if not csi.get("HealthTimeout"):
            csi["HealthTimeout"] = 30 * SECOND
    if t.get("RestartPolicy") is None:
        t["RestartPolicy"] = copy.deepcopy(g["RestartPolicy"])
    else:
        t["RestartPolicy"] = _merge_set(copy.deepcopy(g["RestartPolicy"]),
                                        t["RestartPolicy"])


def _canonicalize_template(tmpl):
    _fill(tmpl, {"SourcePath": "", "DestPath": "", "EmbeddedTmpl": "",
                 "ChangeMode": "restart"})
    if tmpl.get("ChangeSignal") is None:
        tmpl["ChangeSignal"] = "SIGHUP" if tmpl["ChangeMode"] == "signal" \
            else ""
    else:
        tmpl["ChangeSignal"] = tmpl["ChangeSignal"].upper()
    cs = tmpl.get("ChangeScript")
    if cs is not None:
        _fill(cs, {"Command": "", "Args": [], "Timeout": 5 * SECOND,
                   "FailOnError": False})
    _fill(tmpl, {"Once": False, "Splay": 5 * SECOND, "Perms": "0644",
                 "LeftDelim": "{{", "RightDelim": "}}", "Envvars": False,
                 "ErrMissingKey": False, "VaultGrace": 0})


def _merge_check_restart(service_level, check_level):
    if service_level is None:
        return copy.deepcopy(check_level)
    merged = copy.deepcopy(service_level)
    if check_level is None:
        return merged
    if (check_level.get("Limit") or 0) > 0:
        merged["Limit"] = check_level["Limit"]
    if check_level.get("Grace") is not None:
        merged["Grace"] = check_level["Grace"]
    if check_level.get("IgnoreWarnings"):
        merged["IgnoreWarnings"] = True
    return merged


def _canonicalize_service(s, task, g, job):
    if not s.get("Name"):
        if task is not None:
            s["Name"] = "%s-%s-%s" % (job["Name"], g["Name"], task["Name"])
        else:
            s["Name"] = "%s-%s" % (job["Name"], g["Name"])
    if not s.get("AddressMode"):
        s["AddressMode"] = "auto"
    if not s.get("OnUpdate"):
        s["OnUpdate"] = "require_healthy"
    if not s.get("Provider"):
        s["Provider"] = "consul"
    if not s.get("Cluster"):
        s["Cluster"] = "default"
    for key in ("Meta", "CanaryMeta", "TaggedAddresses"):
        if not s.get(key):
            s[key] = None
    _canonicalize_connect(s.get("Connect"))
    weights = s.get("Weights")
    if weights is not None:
        if (weights.get("Passing") or 0) <= 0:
            weights["Passing"] = 1
        if (weights.get("Warning") or 0) <= 0:
            weights["Warning"] = 1
    for check in s.get("Checks") or ():
        cr = _merge_check_restart(s.get("CheckRestart"),
                                  check.get("CheckRestart"))
        if cr is not None and cr.get("Grace") is None:
            cr["Grace"] = SECOND
        check["CheckRestart"] = cr
        for key in ("SuccessBeforePassing", "FailuresBeforeCritical",
                    "FailuresBeforeWarning"):
            if (check.get(key) or 0) < 0:
                check[key] = 0
        if not check.get("OnUpdate"):
            check["OnUpdate"] = s["OnUpdate"]


def _canonicalize_connect(cc):
    """Best effort: the Consul Connect defaults Nomad's api applies."""
    if cc is None:
        return
    css = cc.get("SidecarService")
    if css is not None:
        if not css.get("Tags"):
            css["Tags"] = None
        proxy = css.get("Proxy")
        if proxy is not None:
            if not proxy.get("Upstreams"):
                proxy["Upstreams"] = None
            for up in proxy.get("Upstreams") or ():
                if not up.get("Config"):
                    up["Config"] = None
            if not proxy.get("Config"):
                proxy["Config"] = None
    st = cc.get("SidecarTask")
    if st is not None:
        for key in ("Config", "Env", "Meta"):
            if not st.get(key):
                st[key] = None
        if st.get("Resources") is None:
            st["Resources"] = RESOURCES.empty()
        _canonicalize_resources(st["Resources"])
        if st.get("LogConfig") is None:
            st["LogConfig"] = _default_log_config()
        else:
            _fill(st["LogConfig"], {"MaxFiles": 10, "MaxFileSizeMB": 10,
                                    "Disabled": False})
        _fill(st, {"KillTimeout": 5 * SECOND, "ShutdownDelay": 0})
    gw = cc.get("Gateway")
    if gw is not None and gw.get("Proxy") is not None:
        gp = gw["Proxy"]
        _fill(gp, {"ConnectTimeout": 5 * SECOND})
        if not gp.get("EnvoyGatewayBindAddresses"):
            gp["EnvoyGatewayBindAddresses"] = None
        if not gp.get("Config"):
            gp["Config"] = None
