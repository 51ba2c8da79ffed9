#!/usr/bin/env python3
"""A deliberately trivial MCP stdio server for benchmarking *clients*.

Standard library only.  It answers in microseconds so that what a benchmark
measures is the client's own cost, not the server's:

* both protocol eras: ``initialize`` (+ ``notifications/initialized``) for
  handshake-era clients, and the stateless 2026-07-28 form -- ``server/discover``
  plus the per-request ``params._meta`` (``io.modelcontextprotocol/protocolVersion``
  and ``clientCapabilities`` are required; a modern request without them gets
  -32602, an unknown modern version -32022 with ``data.supported``);
* ``tools/list`` (one page: ``add``, ``echo``, ``point`` / ``point_plain``, which return
  the same ``structuredContent`` -- only ``point`` declares an ``outputSchema`` -- and ``big``,
  whose result is one text block of BIG_TEXT_BYTES ASCII characters), ``tools/call``, ``ping``.
  The answer to ``big`` is encoded once and only its id is spliced in per call, so the
  server spends a copy, not a JSON encoding, on each.

Input is read in large chunks with ``os.read`` and every complete line in a
chunk is answered, then all answers of that chunk go out in one ``os.write``:
one syscall pair per burst, so pipelined clients are not throttled by the
server either.

    python bench/stub_server.py            # speaks on stdin/stdout until EOF
"""

import json
import os
import sys

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
META = "io.modelcontextprotocol/"
SERVER_INFO = {"name": "bench-stub", "version": "1.0.0"}

TOOLS = [
    {"name": "add", "description": "Add two integers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                     "required": ["a", "b"]}},
    {"name": "echo", "description": "Echo the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
]
# A typical structured result: a few typed fields, one nested object, a short list.
POINT_INPUT = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
POINT_OUTPUT = {
    "type": "object", "required": ["x", "y", "label", "tags", "meta"], "additionalProperties": False,
    "properties": {
        "x": {"type": "integer"}, "y": {"type": "number", "minimum": 0},
        "label": {"type": "string", "maxLength": 64, "pattern": "^[a-z]+-[0-9]+$"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["even", "odd", "small"]}, "uniqueItems": True},
        "meta": {"type": "object", "properties": {"source": {"const": "stub"}, "ok": {"type": "boolean"}}},
    },
}
TOOLS += [
    {"name": "point", "description": "A structured result, with an outputSchema.", "inputSchema": POINT_INPUT,
     "outputSchema": POINT_OUTPUT},
    {"name": "point_plain", "description": "The same result, without one.", "inputSchema": POINT_INPUT},
]
# The large-result workload: one text block of this many ASCII characters (a 10 MiB message).
BIG_TEXT_BYTES = 10 * 1024 * 1024
BIG_PATTERN = "0123456789abcdef"  # the text is this, repeated (BIG_TEXT_BYTES is a multiple of its length)
TOOLS.append({"name": "big", "description": "A %d-byte text result." % BIG_TEXT_BYTES,
              "inputSchema": {"type": "object", "properties": {}}})
_big_results = {}  # modern? -> the encoded result of ``big``

_dumps = json.JSONEncoder(separators=(",", ":")).encode
_loads = json.loads


class Fault(Exception):
    def __init__(self, code, message, data=None):
        Exception.__init__(self, message)
        self.code, self.message, self.data = code, message, data


def _modern(params):
    """The request's 2026-07-28 _meta version, or None for a handshake-era request."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or META + "protocolVersion" not in meta:
        return None
    version = meta[META + "protocolVersion"]
    if version != MODERN:
        raise Fault(-32022, "unsupported protocol version", {"supported": [MODERN] + list(LEGACY),
                                                             "requested": version})
    if not isinstance(meta.get(META + "clientCapabilities"), dict):
        raise Fault(-32602, "missing _meta io.modelcontextprotocol/clientCapabilities")
    return version


def _tool(params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "add":
        text = str(args.get("a", 0) + args.get("b", 0))
    elif name == "echo":
        text = str(args.get("text", ""))
    elif name in ("point", "point_plain"):
        a, b = args.get("a", 0), args.get("b", 0)
        point = {"x": a, "y": abs(b) / 2.0, "label": "p-%d" % a, "tags": ["even" if a % 2 == 0 else "odd", "small"],
                 "meta": {"source": "stub", "ok": True}}
        return {"content": [{"type": "text", "text": _dumps(point)}], "structuredContent": point, "isError": False}
    elif name == "big":
        return {"content": None, "isError": False, "big": True}  # (encoded in handle_line, once)
    else:
        raise Fault(-32602, "unknown tool %r" % (name,))
    return {"content": [{"type": "text", "text": text}], "isError": False}


def answer(msg, state):
    """The result dict for one request (raises Fault for an error answer)."""
    method = msg.get("method")
    params = msg.get("params")
    if params is None:
        params = {}
    modern = _modern(params)
    if method == "tools/call":
        result = _tool(params)
    elif method == "tools/list":
        result = {"tools": TOOLS}
        if modern:
            result["ttlMs"] = 0
            result["cacheScope"] = "public"
    elif method == "server/discover":
        if not modern:  # server/discover exists only in the stateless era
            raise Fault(-32602, "server/discover needs io.modelcontextprotocol/protocolVersion in _meta")
        result = {"supportedVersions": [MODERN] + list(LEGACY), "capabilities": {"tools": {}},
                  "ttlMs": 0, "cacheScope": "public"}
    elif method == "initialize" and not modern:
        wanted = params.get("protocolVersion")
        state["version"] = wanted if wanted in LEGACY else LEGACY[0]
        return {"protocolVersion": state["version"], "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}
    elif method == "ping" and not modern:
        return {}
    else:
        raise Fault(-32601, "method not found: %s" % method)
    if modern:
        result["resultType"] = "complete"
        result["_meta"] = {META + "serverInfo": SERVER_INFO}
    return result


def handle_line(line, state):
    try:
        msg = _loads(line)
    except ValueError:
        return _dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
    if type(msg) is not dict or "method" not in msg:
        return None  # a response (we never ask) or junk: nothing to say
    if "id" not in msg:
        return None  # notifications (initialized, cancelled) need no answer
    try:
        result = answer(msg, state)
        if result.get("big"):
            modern = "resultType" in result
            if modern not in _big_results:
                del result["big"]
                result["content"] = [{"type": "text", "text": BIG_PATTERN * (BIG_TEXT_BYTES // len(BIG_PATTERN))}]
                _big_results[modern] = _dumps(result)
            return '{"jsonrpc":"2.0","id":%s,"result":%s}' % (_dumps(msg["id"]), _big_results[modern])
        return _dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result})
    except Fault as e:
        err = {"code": e.code, "message": e.message}
        if e.data is not None:
            err["data"] = e.data
        return _dumps({"jsonrpc": "2.0", "id": msg["id"], "error": err})


def main():
    state = {"version": None}
    rfd, wfd = sys.stdin.fileno(), sys.stdout.fileno()
    pending = b""
    while True:
        chunk = os.read(rfd, 1 << 20)
        if not chunk:
            return 0
        pending += chunk
        if b"\n" not in chunk:
            continue
        lines = pending.split(b"\n")
        pending = lines.pop()
        out = []
        for line in lines:
            if line.strip():
                text = handle_line(line, state)
                if text is not None:
                    out.append(text)
        if out:
            data = ("\n".join(out) + "\n").encode("ascii")
            view = memoryview(data)
            while view:
                view = view[os.write(wfd, view):]


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
