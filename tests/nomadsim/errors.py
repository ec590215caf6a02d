"""The error a handler raises to answer with an HTTP status and a plain
text body (Nomad's HTTPCodedError and RPC-coded errors, NOMAD-API.md
§1.5)."""


class CodedError(Exception):
    """An error Nomad returns with this HTTP status and plain-text body."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
        self.msg = msg
