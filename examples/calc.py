#!/usr/bin/env python3
"""calc: a dependency-free example MCP server for mcp_min.

It offers four arithmetic tools (add, subtract, multiply, divide) and a
``greet`` tool that asks the user for their name through elicitation.  The
tests, README and benchmarks of mcp_min use it as a known-good peer, so it
speaks both protocol eras:

* handshake era (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25):
  ``initialize`` first; ``greet`` sends an ``elicitation/create`` request to
  the client and waits for its response;
* stateless era (2026-07-28): every request carries its protocol version in
  ``params._meta``; ``greet`` answers ``input_required`` (multi round-trip).

Run it:

    python examples/calc.py                  # stdio (one JSON message per line)
    python examples/calc.py --http           # Streamable HTTP on 127.0.0.1:8000/mcp
    python examples/calc.py --http 0         # ... on a free port
    python examples/calc.py --http 9000 --host ::1

In HTTP mode the server prints one line to stderr once it is listening:
``calc: listening on http://127.0.0.1:<port>/mcp``.

Standard library only; Python 3.8+.
"""

import base64
import itertools
import json
import math
import signal
import sys
import threading

MODERN = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED = [MODERN] + list(LEGACY_VERSIONS)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

SERVER_INFO = {"name": "calc", "version": "1.0.0"}
INSTRUCTIONS = "A calculator: add, subtract, multiply, divide."
CACHE_TTL_MS = 60000
ELICIT_TIMEOUT = 300.0     # seconds a legacy greet waits for the user
KEEPALIVE_SECONDS = 15.0   # comment interval on a standalone GET stream
MAX_BODY = 1 << 20         # an example server has no business with bigger bodies

NAME_QUESTION = "What is your name?"
NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def log(text):
    """Diagnostics go to stderr; stdout belongs to the protocol in stdio mode."""
    sys.stderr.write("calc: %s\n" % text)
    sys.stderr.flush()


def dumps(msg):
    # Compact and ASCII-only, so a message can never contain a raw newline.
    return json.dumps(msg, separators=(",", ":"))


class RpcError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    def __init__(self, code, message, data=None):
        Exception.__init__(self, message)
        self.code = code
        self.message = message
        self.data = data


def error_response(msg_id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


# ---------------------------------------------------------------- tools ----

NUMBER_PAIR = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}
NUMBER_RESULT = {
    "type": "object",
    "properties": {"result": {"type": "number"}},
    "required": ["result"],
}


def _divide(a, b):
    if b == 0:
        raise ArithmeticError("division by zero")
    if isinstance(a, int) and isinstance(b, int) and a % b == 0:
        return a // b   # keep exact integer quotients integral: 6/3 -> 2
    return a / b


# name -> (title, description, function)
ARITHMETIC = {
    "add": ("Add", "Add two numbers: a + b.", lambda a, b: a + b),
    "subtract": ("Subtract", "Subtract two numbers: a - b.", lambda a, b: a - b),
    "multiply": ("Multiply", "Multiply two numbers: a * b.", lambda a, b: a * b),
    "divide": ("Divide", "Divide two numbers: a / b.", _divide),
}


def _tool_list():
    tools = []
    for name, (title, description, _) in ARITHMETIC.items():
        tools.append({"name": name, "title": title, "description": description,
                      "inputSchema": NUMBER_PAIR, "outputSchema": NUMBER_RESULT})
    tools.append({
        "name": "greet", "title": "Greet",
        "description": "Ask the user for their name and greet them.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "object",
                         "properties": {"result": {"type": "string"}},
                         "required": ["result"]},
    })
    return tools


TOOLS = _tool_list()
TOOL_NAMES = set(ARITHMETIC) | {"greet"}


def tool_result(value):
    return {"content": [{"type": "text", "text": str(value)}],
            "structuredContent": {"result": value}}


def tool_error(text):
    # Tool failures are results with isError, so the model can see them.
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _number_arg(args, key):
    if key not in args:
        raise ValueError("missing required argument '%s'" % key)
    value = args[key]
    # bool is an int subclass in Python, but true/false are not numbers in JSON.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("argument '%s' must be a number" % key)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("argument '%s' must be a finite number" % key)
    return value


def call_arithmetic(name, args):
    if not isinstance(args, dict):
        return tool_error("arguments must be an object")
    try:
        a, b = _number_arg(args, "a"), _number_arg(args, "b")
    except ValueError as exc:
        return tool_error(str(exc))
    try:
        value = ARITHMETIC[name][2](a, b)
    except ArithmeticError as exc:   # ZeroDivisionError and OverflowError too
        return tool_error(str(exc))
    if isinstance(value, float) and not math.isfinite(value):
        return tool_error("result is not a finite number")
    try:
        return tool_result(value)
    except ValueError:   # Python 3.11+ refuses to print ints over 4300 digits
        return tool_error("result is too large to print")


def greeting(answer):
    """Build the greet result from an ElicitResult (anything else = stranger)."""
    name = None
    if isinstance(answer, dict) and answer.get("action") == "accept":
        content = answer.get("content")
        if isinstance(content, dict) and isinstance(content.get("name"), str):
            name = content["name"].strip()
    return tool_result("Hello, %s!" % (name or "stranger"))


def supports_form_elicitation(caps):
    # {} means form only; a client that lists only "url" cannot fill forms.
    elicitation = caps.get("elicitation") if isinstance(caps, dict) else None
    if not isinstance(elicitation, dict):
        return False
    return "form" in elicitation or "url" not in elicitation


def split_call(params):
    name = params.get("name")
    if not isinstance(name, str):
        raise RpcError(-32602, "tools/call needs a string 'name'")
    if name not in TOOL_NAMES:
        raise RpcError(-32602, "Unknown tool: %s" % name)
    args = params.get("arguments")
    return name, ({} if args is None else args)


# ------------------------------------------------ handshake-era state ----

class Connection:
    """Legacy state of one stdio process or one HTTP session."""

    _server_ids = itertools.count(1)   # ids of our own requests, process-wide

    def __init__(self):
        self.version = None            # negotiated version; None = not initialized
        self.initialized = False       # saw notifications/initialized (informational)
        self.client_caps = {}
        self.closed = threading.Event()
        self._pending = {}             # our request id -> [Event, response]
        self._lock = threading.Lock()
        self._event_ids = itertools.count(1)

    def next_event_id(self):
        return str(next(self._event_ids))

    def ask(self, emit, method, params):
        """Send a request to the client and wait for its result (or raise)."""
        request_id = "srv-%d" % next(self._server_ids)
        slot = [threading.Event(), None]
        with self._lock:
            if self.closed.is_set():
                raise RuntimeError("connection closed")
            self._pending[request_id] = slot
        try:
            emit({"jsonrpc": "2.0", "id": request_id, "method": method,
                  "params": params})
            if not slot[0].wait(ELICIT_TIMEOUT):
                raise RuntimeError("no answer from the client")
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        response = slot[1]
        if response is None:
            raise RuntimeError("connection closed")
        if "error" in response:
            error = response["error"]
            raise RuntimeError(error.get("message") if isinstance(error, dict) else error)
        return response.get("result")

    def deliver(self, response):
        """Route a client's response to the request waiting for it."""
        with self._lock:
            slot = self._pending.pop(response.get("id"), None) \
                if isinstance(response.get("id"), (str, int)) else None
        if slot is None:
            log("ignoring response to unknown request id %r" % (response.get("id"),))
            return
        slot[1] = response
        slot[0].set()

    def close(self):
        """Wake every waiter: pending requests fail, GET streams end."""
        with self._lock:
            self.closed.set()
            waiting, self._pending = list(self._pending.values()), {}
        for slot in waiting:
            slot[0].set()


# ----------------------------------------------------------- dispatch ----

def modern_version(params):
    """The 2026-style version in params._meta, or None for a legacy message."""
    if isinstance(params, dict) and isinstance(params.get("_meta"), dict):
        return params["_meta"].get(META_VERSION)
    return None


def handle_message(msg, conn, emit):
    """Process one decoded message; return the response to send, or None.

    ``conn`` is the legacy Connection (unused by stateless requests) and
    ``emit`` sends a server->client message on the current request's channel.
    """
    if not isinstance(msg, dict):
        log("ignoring non-object message: %.200r" % (msg,))
        return None
    method = msg.get("method")
    if method is None:
        if "id" in msg and ("result" in msg or "error" in msg):
            conn.deliver(msg)
        else:
            log("ignoring malformed message: %.200s" % dumps(msg))
        return None
    params = msg.get("params")
    if "id" not in msg:
        # Notifications never get answers; only "initialized" means something.
        if method == "notifications/initialized" and modern_version(params) is None:
            conn.initialized = True
        return None
    msg_id = msg["id"]
    try:
        if not isinstance(method, str):
            raise RpcError(-32600, "method must be a string")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RpcError(-32602, "params must be an object")
        if modern_version(params) is not None:
            result = handle_modern(method, params)
        else:
            result = handle_legacy(method, params, conn, emit)
    except RpcError as exc:
        return error_response(msg_id, exc.code, exc.message, exc.data)
    except Exception:   # a bug here must not kill the server
        import traceback   # (only here: a stdio start does not import it)
        log("internal error:\n" + traceback.format_exc())
        return error_response(msg_id, -32603, "internal error")
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def handle_legacy(method, params, conn, emit):
    if method == "initialize":
        requested = params.get("protocolVersion")
        conn.version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
        caps = params.get("capabilities")
        conn.client_caps = caps if isinstance(caps, dict) else {}
        return {"protocolVersion": conn.version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO, "instructions": INSTRUCTIONS}
    if method == "ping":
        return {}
    if method == "server/discover":
        # What a purely legacy server says; dual-era clients then fall back.
        raise RpcError(-32601, "Method not found: server/discover")
    if conn.version is None:
        raise RpcError(-32600, "not initialized")
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name, args = split_call(params)
        if name == "greet":
            return greet_legacy(conn, emit)
        return call_arithmetic(name, args)
    raise RpcError(-32601, "Method not found: %s" % method)


def greet_legacy(conn, emit):
    if not supports_form_elicitation(conn.client_caps):
        return tool_error("elicitation is not supported by the client")
    params = {"message": NAME_QUESTION, "requestedSchema": NAME_SCHEMA}
    if conn.version >= "2025-11-25":   # ISO dates compare as strings
        params["mode"] = "form"        # 'mode' only exists from 2025-11-25 on
    try:
        answer = conn.ask(emit, "elicitation/create", params)
    except Exception as exc:
        return tool_error("elicitation failed: %s" % exc)
    return greeting(answer)


def handle_modern(method, params):
    meta = params["_meta"]
    version = meta[META_VERSION]
    if version != MODERN:
        raise RpcError(-32022, "Unsupported protocol version: %s" % (version,),
                       {"supported": SUPPORTED, "requested": version})
    caps = meta.get(META_CAPS)
    if not isinstance(caps, dict):
        raise RpcError(-32602, "params._meta must carry %s" % META_CAPS)
    if method == "server/discover":
        result = {"supportedVersions": SUPPORTED, "capabilities": {"tools": {}},
                  "instructions": INSTRUCTIONS,
                  "ttlMs": CACHE_TTL_MS, "cacheScope": "public"}
    elif method == "tools/list":
        cursor = params.get("cursor")
        if cursor is not None:   # there is only one page, so no cursor is valid
            raise RpcError(-32602, "invalid cursor")
        result = {"tools": TOOLS, "ttlMs": CACHE_TTL_MS, "cacheScope": "public"}
    elif method == "tools/call":
        name, args = split_call(params)
        if name == "greet":
            result = greet_modern(params, caps)
        else:
            result = call_arithmetic(name, args)
    else:
        # initialize, ping, logging/setLevel ... do not exist in this era.
        raise RpcError(-32601, "Method not found: %s" % method)
    result.setdefault("resultType", "complete")
    result["_meta"] = {META_SERVER_INFO: SERVER_INFO}
    return result


def _request_state():
    # Opaque to the client; we only need to recognise our own marker.
    return base64.b64encode(b'{"tool":"greet","step":1}').decode("ascii")


def greet_modern(params, caps):
    if not supports_form_elicitation(caps):
        raise RpcError(-32021, "greet needs the elicitation capability",
                       {"requiredCapabilities": {"elicitation": {}}})
    responses = params.get("inputResponses")
    if not isinstance(responses, dict) or "name" not in responses:
        # Stateless: ask, and let the client retry with the answer attached.
        return {"resultType": "input_required",
                "inputRequests": {"name": {
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": NAME_QUESTION,
                               "requestedSchema": NAME_SCHEMA}}},
                "requestState": _request_state()}
    if params.get("requestState") != _request_state():
        raise RpcError(-32602, "missing or invalid requestState")
    return greeting(responses["name"])


# -------------------------------------------------------------- stdio ----

def serve_stdio(reader=None, writer=None):
    """Serve one client over stdin/stdout, or over the binary streams ``reader`` and
    ``writer`` (a server on a thread of the client's own process: see mcp_min's
    Client.over); ``writer`` is closed at EOF, so the client sees the end too."""
    if writer is None:
        out = sys.stdout.buffer
        sys.stdout = sys.stderr   # a stray print() must never corrupt the protocol
    else:
        out = writer
    write_lock = threading.Lock()
    conn = Connection()
    workers = []

    def send(msg):
        data = dumps(msg).encode("ascii") + b"\n"
        with write_lock:   # replies come from the reader and worker threads
            try:
                out.write(data)
                out.flush()
            except (OSError, ValueError):
                pass   # the client went away; EOF on stdin will follow

    def process(item):
        reply = handle_message(item, conn, send)
        if reply is not None:
            send(reply)

    def dispatch(item):
        # greet may wait for the client's elicitation answer, which arrives on
        # this very stdin, so it runs in a thread while the reader carries on.
        params = item.get("params") if isinstance(item, dict) else None
        if (isinstance(item, dict) and item.get("method") == "tools/call"
                and isinstance(params, dict) and params.get("name") == "greet"):
            worker = threading.Thread(target=process, args=(item,), daemon=True)
            worker.start()
            workers.append(worker)
        else:
            process(item)

    stdin = sys.stdin.buffer if reader is None else reader
    try:
        while True:
            line = stdin.readline()   # binary readline splits on b"\n" only
            if not line:
                break
            line = line.rstrip(b"\n").rstrip(b"\r")
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError as exc:
                log("ignoring unparsable line (%s): %.200r" % (exc, line))
                continue
            # A JSON array is a 2025-03-26 batch: handle each element alone.
            for item in (msg if isinstance(msg, list) else [msg]):
                dispatch(item)
            workers[:] = [w for w in workers if w.is_alive()]
    except KeyboardInterrupt:
        pass
    conn.close()   # releases any greet still waiting for an answer
    for worker in workers:
        worker.join(5.0)
    if writer is not None:
        writer.close()


# --------------------------------------------------------------- HTTP ----

def wants_stream(params):
    """Answer a tools/call as an SSE stream when it may need one: greet asks the
    client a question mid-call, and a progress token asks for progress.  Plain
    calls get one JSON body on a kept-alive connection, which is much faster."""
    params = params if isinstance(params, dict) else {}
    return params.get("name") == "greet" or "progressToken" in (params.get("_meta") or {})


def decode_header_value(value):
    """Undo the =?base64?...?= wrapping used for Mcp-Name / Mcp-Param-*."""
    if value is None:
        return None
    if value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11:
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except ValueError:   # binascii.Error and UnicodeDecodeError
            return None
    return value


# HTTP status for a JSON-RPC error answered on a 2026-07-28 request.
MODERN_ERROR_STATUS = {-32601: 404, -32603: 500, -32020: 400, -32021: 400,
                       -32022: 400, -32602: 400, -32600: 400, -32700: 400}


def _http_classes():
    """Define the HTTP server and its handler (CalcHTTPServer, Handler) on first use.  http.server
    and what it imports (http.client, email, urllib.parse) cost about 30 ms of CPU at start, a third
    of what a stdio start took with them: a stdio server never needs them, so only --http (or a
    test that serves calc over HTTP in its own process) pays for them."""
    global CalcHTTPServer, Handler, urlsplit
    if "Handler" in globals():
        return
    import secrets
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import urlsplit

    class CalcHTTPServer(ThreadingHTTPServer):
        daemon_threads = True      # open SSE streams must not keep the process alive
        block_on_close = False

        def __init__(self, address, handler):
            ThreadingHTTPServer.__init__(self, address, handler)
            self.sessions = {}
            self.sessions_lock = threading.Lock()

        def close_all_sessions(self):
            with self.sessions_lock:
                conns, self.sessions = list(self.sessions.values()), {}
            for conn in conns:
                conn.close()


    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"   # keep-alive for JSON answers
        disable_nagle_algorithm = True  # headers and body go out in two writes
        server_version = "calc/1.0"

        def log_message(self, format, *args):
            pass   # quiet: per-request access logs would drown the test output

        # ---- small response helpers ----

        def send_json(self, status, body=None, headers=None):
            data = b"" if body is None else dumps(body).encode("ascii")
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def send_rpc_error(self, status, msg_id, code, message, data=None):
            self.send_json(status, error_response(msg_id, code, message, data))

        def start_sse(self):
            # No Content-Length: the stream ends when we close the connection.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True

        def sse_write(self, text):
            self.wfile.write(text.encode("utf-8"))
            self.wfile.flush()

        def sse_message(self, msg, event_id=None):
            head = "id: %s\n" % event_id if event_id is not None else ""
            self.sse_write("%sevent: message\ndata: %s\n\n" % (head, dumps(msg)))

        # ---- checks shared by all methods ----

        def check_path_and_origin(self):
            if urlsplit(self.path).path != "/mcp":
                self.send_json(404)
                return False
            origin = self.headers.get("Origin")
            # Browsers send Origin; refuse foreign pages (DNS rebinding defence).
            if origin and urlsplit(origin).hostname not in ("localhost", "127.0.0.1", "::1"):
                self.send_json(403)
                return False
            return True

        def session(self):
            """(session id header, Connection or None)."""
            sid = self.headers.get("Mcp-Session-Id")
            if not sid:
                return None, None
            with self.server.sessions_lock:
                return sid, self.server.sessions.get(sid)

        def read_body(self):
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY:
                self.close_connection = True   # cannot resynchronise the stream
                self.send_json(413 if length > MAX_BODY else 400)
                return None
            return self.rfile.read(length)

        # ---- POST ----

        def do_POST(self):
            body = self.read_body()   # read first so keep-alive stays in sync
            if body is None or not self.check_path_and_origin():
                return
            if "application/json" not in self.headers.get("Content-Type", "").lower():
                return self.send_json(415)
            accept = self.headers.get("Accept", "").lower()
            if "application/json" not in accept or "text/event-stream" not in accept:
                return self.send_json(406)
            try:
                msg = json.loads(body)
            except ValueError:
                return self.send_rpc_error(400, None, -32700, "parse error")
            if not isinstance(msg, dict):
                return self.send_rpc_error(400, None, -32600,
                                           "expected one JSON-RPC object (no batches over HTTP)")
            header_version = self.headers.get("MCP-Protocol-Version")
            if modern_version(msg.get("params")) is not None or (
                    header_version == MODERN and msg.get("method") != "initialize"):
                self.post_modern(msg, header_version)
            else:
                self.post_legacy(msg, header_version)

        def post_modern(self, msg, header_version):
            method, params = msg.get("method"), msg.get("params")
            if not isinstance(method, str):
                return self.send_rpc_error(400, msg.get("id"), -32600,
                                           "only requests and notifications are accepted")
            if "id" not in msg:
                return self.send_json(202)   # nothing to do for notifications
            msg_id = msg["id"]
            problem = self.header_problem(method, params, header_version)
            if problem:
                return self.send_rpc_error(400, msg_id, -32020, problem)
            reply = handle_message(msg, None, None)
            if "error" in reply:
                self.send_json(MODERN_ERROR_STATUS.get(reply["error"]["code"], 200), reply)
            elif method == "tools/call" and wants_stream(params):
                self.start_sse()
                try:
                    self.sse_message(reply)
                except OSError as exc:
                    log("SSE stream closed early: %s" % exc)
            else:
                self.send_json(200, reply)

        def header_problem(self, method, params, header_version):
            """Why the 2026 headers disagree with the body, or None if they agree."""
            body_version = modern_version(params)
            if header_version is None:
                return "missing MCP-Protocol-Version header"
            if header_version != body_version:
                return "MCP-Protocol-Version header %r does not match _meta %r" % (
                    header_version, body_version)
            if decode_header_value(self.headers.get("Mcp-Method")) != method:
                return "Mcp-Method header does not match the body method"
            name_key = {"tools/call": "name", "prompts/get": "name",
                        "resources/read": "uri"}.get(method)
            if name_key and decode_header_value(self.headers.get("Mcp-Name")) != \
                    params.get(name_key):
                return "Mcp-Name header does not match params.%s" % name_key
            return None

        def post_legacy(self, msg, header_version):
            method = msg.get("method")
            msg_id = msg.get("id")
            if method == "initialize" and "id" in msg:
                return self.initialize_session(msg)
            sid, conn = self.session()
            if sid is None:
                return self.send_rpc_error(400, msg_id, -32600, "missing Mcp-Session-Id header")
            if conn is None:
                return self.send_rpc_error(404, msg_id, -32600, "unknown or expired session")
            if header_version is not None and header_version != conn.version:
                return self.send_rpc_error(
                    400, msg_id, -32600, "MCP-Protocol-Version %r does not match the "
                    "negotiated version %r" % (header_version, conn.version))
            if "id" not in msg or method is None:
                handle_message(msg, conn, None)   # notification or client response
                return self.send_json(202)
            if method == "tools/call" and wants_stream(msg.get("params")):
                return self.stream_call(msg, conn)
            self.send_json(200, handle_message(msg, conn, None))

        def initialize_session(self, msg):
            conn = Connection()
            reply = handle_message(msg, conn, None)
            if "error" in reply:
                return self.send_json(200, reply)
            sid = secrets.token_hex(16)
            with self.server.sessions_lock:
                self.server.sessions[sid] = conn
            self.send_json(200, reply, {"Mcp-Session-Id": sid})

        def stream_call(self, msg, conn):
            """Answer a legacy tools/call on an SSE stream (greet elicits on it)."""
            self.start_sse()
            try:
                if conn.version >= "2025-11-25":
                    # Priming event (id, empty data) as 2025-11-25 recommends.
                    self.sse_write("id: %s\ndata:\n\n" % conn.next_event_id())
                emit = lambda m: self.sse_message(m, conn.next_event_id())
                self.sse_message(handle_message(msg, conn, emit), conn.next_event_id())
            except OSError as exc:
                log("SSE stream closed early: %s" % exc)

        # ---- GET / DELETE ----

        def do_GET(self):
            if not self.check_path_and_origin():
                return
            sid, conn = self.session()
            if sid is None:
                return self.send_json(405, headers={"Allow": "POST"})
            if conn is None:
                return self.send_json(404)
            if "text/event-stream" not in self.headers.get("Accept", "").lower():
                return self.send_json(406)
            self.start_sse()
            try:
                # We never push anything unprompted; just keep the stream warm
                # until the client leaves, the session ends or the server stops.
                while not conn.closed.wait(KEEPALIVE_SECONDS):
                    self.sse_write(": keepalive\n\n")
            except OSError:
                pass

        def do_DELETE(self):
            if not self.check_path_and_origin():
                return
            sid = self.headers.get("Mcp-Session-Id")
            if not sid:
                return self.send_json(405, headers={"Allow": "POST"})
            with self.server.sessions_lock:
                conn = self.server.sessions.pop(sid, None)
            if conn is None:
                return self.send_json(404)
            conn.close()
            self.send_json(200)


def __getattr__(name):
    """calc.CalcHTTPServer and calc.Handler, defined when first asked for (PEP 562)."""
    if name in ("CalcHTTPServer", "Handler"):
        _http_classes()
        return globals()[name]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def serve_http(host, port):
    import socket
    _http_classes()
    server_class = CalcHTTPServer
    if ":" in host:   # an IPv6 literal such as ::1
        server_class = type("CalcHTTPServer6", (CalcHTTPServer,),
                            {"address_family": socket.AF_INET6})
    try:
        server = server_class((host, port), Handler)
    except OSError as exc:
        log("cannot listen on %s:%s: %s" % (host, port, exc))
        return 1
    shown_host = "[%s]" % host if ":" in host else host
    try:
        # Inside the try: a signal right after this line must still exit cleanly.
        log("listening on http://%s:%d/mcp" % (shown_host, server.server_address[1]))
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close_all_sessions()   # ends GET streams and waiting greets
        server.server_close()
    return 0


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt   # unwind the same way as Ctrl-C: clean exit, status 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    port, host = None, "127.0.0.1"
    if argv:   # (argparse only then: a plain stdio start, the common one, skips its imports)
        import argparse
        parser = argparse.ArgumentParser(
            description="Example calculator MCP server (stdio by default).")
        parser.add_argument("--http", nargs="?", type=int, const=8000, default=None,
                            metavar="PORT",
                            help="serve Streamable HTTP on PORT (default 8000; 0 = any free port)")
        parser.add_argument("--host", default=host,
                            help="address to bind in HTTP mode (default 127.0.0.1)")
        options = parser.parse_args(argv)
        port, host = options.http, options.host
    signal.signal(signal.SIGTERM, _on_sigterm)
    if port is None:
        serve_stdio()
        return 0
    return serve_http(host, port)


if __name__ == "__main__":
    sys.exit(main())
