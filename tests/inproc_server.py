"""A small MCP server that lives in the test's own process (not a test module itself).

    server = Server(ttl=60000, scope="private")   # caching hints of its cacheable results
    server.handle(msg, headers=None)  -> the messages to send back (a list)
    server.serve(reader, writer)      -> the stdio framing over two binary streams, until EOF
    serve_in_thread(server)           -> (client_reader, client_writer, thread): os.pipe() ends
    serve_http(server)                -> (url, stop): the same over Streamable HTTP (JSON answers;
                                         SSE streams with Server(sse=True))

It speaks 2026-07-28 (every request must carry the version in _meta) and, for a request
without it, the handshake era.  ``server.received`` keeps every (headers, message) it got.

Tools: add {a, b} | whoami: the Authorization header it saw | log: a log message first
| progress {steps, gap}: ``steps`` progress notifications, ``gap`` seconds apart, then "done"
| sleep {s} | touch {uri}: notifications/resources/updated for ``uri`` and tools/list_changed on
every open subscriptions/listen stream (stdio only), then "touched".  resources/read: "text" counts the reads; a URI starting "ask:" first answers
input_required (one elicitation), then the elicited name.
"""
import json
import threading
import time

from testsupport import HttpTestHandler, HttpTestServer

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


class Server(object):
    def __init__(self, ttl=60000, scope="private", legacy_logging=True, sse=False):
        self.sse = sse
        self.ttl, self.scope = ttl, scope
        self.legacy_logging = legacy_logging
        self.received = []
        self.reads = 0
        self.lock = threading.Lock()
        self.write = None  # set by serve(): notifications before an answer go out through it
        self.listens = []  # ids of the subscriptions/listen streams open

    def cacheable(self, result):
        return dict(result, resultType="complete", ttlMs=self.ttl, cacheScope=self.scope)

    def handle(self, msg, headers=None, emit=None):
        with self.lock:
            self.received.append((dict(headers or {}), msg))
        method, mid = msg.get("method"), msg.get("id")
        params = msg.get("params") or {}
        modern = (params.get("_meta") or {}).get(VERSION_KEY) == MODERN
        if mid is None or method is None:
            return []
        out = []

        def answer(result):
            if modern:
                result = dict(result)
                result.setdefault("resultType", "complete")
            return out + [{"jsonrpc": "2.0", "id": mid, "result": result}]

        if method == "server/discover":
            if not modern:
                return [{"jsonrpc": "2.0", "id": mid, "error": {"code": -32022, "message": "unsupported",
                                                                 "data": {"supported": [MODERN], "requested": None}}}]
            return answer(self.cacheable({"supportedVersions": [MODERN, "2025-11-25"],
                                          "capabilities": {"tools": {}, "resources": {}, "logging": {}},
                                          "_meta": {"io.modelcontextprotocol/serverInfo": {
                                              "name": "inproc", "version": "1"}}}))
        if method == "initialize":
            return answer({"protocolVersion": params.get("protocolVersion"),
                           "capabilities": dict({"tools": {}}, **({"logging": {}} if self.legacy_logging else {})),
                           "serverInfo": {"name": "inproc", "version": "1"}})
        if method in ("logging/setLevel", "ping"):
            return answer({})
        if method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("add", "whoami", "log", "progress")]
            return answer(self.cacheable({"tools": tools}) if modern else {"tools": tools})
        if method == "subscriptions/listen":
            self.listens.append(mid)
            return [{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
                "notifications": params.get("notifications") or {},
                "_meta": {"io.modelcontextprotocol/subscriptionId": mid}}}]  # the stream stays open
        if method == "resources/read":
            uri = params.get("uri", "")
            if uri.startswith("ask:") and "inputResponses" not in params:
                return answer({"resultType": "input_required", "inputRequests": {"who": {
                    "method": "elicitation/create", "params": {"mode": "form", "message": "who?", "requestedSchema": {
                        "type": "object", "properties": {"name": {"type": "string"}}}}}}})
            with self.lock:
                self.reads += 1
                text = "read %d" % self.reads
            if uri.startswith("ask:"):
                text = params["inputResponses"]["who"]["content"]["name"]
            return answer(self.cacheable({"contents": [{"uri": uri, "text": text}]}))
        if method == "tools/call":
            name, args = params.get("name"), params.get("arguments") or {}
            meta = params.get("_meta") or {}
            if name == "add":
                value = args["a"] + args["b"]
            elif name == "whoami":
                value = {k.lower(): v for k, v in (headers or {}).items()}.get("authorization")
            elif name == "log":
                out.append({"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": "info", "data": "hello"}})
                value = "logged"
            elif name == "progress":
                for i in range(args.get("steps", 3)):
                    time.sleep(args.get("gap", 0))
                    (emit or self.emit)({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": meta.get("progressToken"), "progress": i + 1}})
                value = "done"
            elif name == "touch":
                for listen in self.listens:
                    sub = {"io.modelcontextprotocol/subscriptionId": listen}
                    out.append({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                "params": {"uri": args["uri"], "_meta": sub}})
                    out.append({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                                "params": {"_meta": sub}})
                value = "touched"
            elif name == "sleep":
                time.sleep(args["s"])
                value = "slept"
            else:
                return [{"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool"}}]
            return answer({"content": [{"type": "text", "text": json.dumps(value)}],
                           "structuredContent": {"result": value}})
        return [{"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no " + method}}]

    def emit(self, msg):
        if self.write is not None:
            self.write(msg)

    def serve(self, reader, writer):
        """One message per line in, each answer on a line out; returns at EOF (then closes ``writer``)."""
        lock = threading.Lock()

        def write(msg):
            with lock:
                try:
                    writer.write(json.dumps(msg).encode() + b"\n")
                    writer.flush()
                except (OSError, ValueError):
                    pass  # the client went away (a late answer)
        self.write = write
        try:
            for line in iter(reader.readline, b""):
                if line.strip():
                    msg = json.loads(line)
                    threading.Thread(target=lambda m: [write(a) for a in self.handle(m)], args=(msg,),
                                     daemon=True).start()
        finally:
            writer.close()
            reader.close()


def serve_in_thread(server):
    """The server on a thread, over two pipes; returns the client's (reader fd, writer fd) and the thread."""
    import os
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    thread = threading.Thread(target=server.serve, args=(os.fdopen(to_server, "rb"), os.fdopen(from_server, "wb")),
                              daemon=True, name="inproc-server")
    thread.start()
    return to_client, from_client, thread


class _Http10Handler(HttpTestHandler):
    protocol_version = "HTTP/1.0"  # a connection per request: what the tests using serve_http were written against


def serve_http(server):
    """The server over Streamable HTTP on 127.0.0.1 (JSON answers; SSE streams with
    Server(sse=True)); returns (url, stop)."""
    def post(request, msg):
        if server.sse and "id" in msg:
            request.start_sse()
            try:
                for m in server.handle(msg, dict(request.headers), request.event):
                    request.event(m)
            except OSError:
                pass  # the client closed the stream (a cancellation)
            return
        answers = [a for a in server.handle(msg, dict(request.headers)) if "id" in a]
        if answers:
            request.reply(200, json.dumps(answers[0]).encode())
        else:
            request.reply(202)

    def not_allowed(request):
        request.reply(405)
    httpd = HttpTestServer(post=post, get=not_allowed, delete=not_allowed, handler=_Http10Handler)
    return httpd.url, httpd.stop
