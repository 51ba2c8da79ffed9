"""A stdio MCP server whose tools are what a model meets at its worst, for tests/test_model_tools.py
and the end-to-end tests with the provider SDKs (not a test module itself).

    python tests/model_server.py              # a process
    client_for(**options)                     # a mcp_min Client.over() of it on a thread

It speaks the handshake era only (server/discover is an unknown method).  Tools:
  echo {text, times?, tag?}: the arguments it got, as structuredContent (a strict-mode null left in
      would show here) | picture: a text and a 1x1 PNG | fail: isError "it broke"
  | meet: "met" when a second meet call comes while it waits (10 s), else "alone"
  | links: a resource link, an embedded text resource, a blob and an audio clip | slow {s}: sleeps
  | nested {point: {x, y, label?}, shape: anyOf, where: $ref}: its arguments back
  | hostile names: "weather.today" beside "weather_today", two 70-character names sharing a prefix,
  "with space", "météo" (each answers with its own name).
"""
import json
import os
import sys
import threading
import time

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
LONG = "a_tool_with_a_name_long_enough_that_two_of_them_share_the_first_64_chars_"
OBJ = {"type": "object"}
TOOLS = [
    {"name": "echo", "description": "Echo the text back.", "inputSchema": dict(OBJ, properties={
        "text": {"type": "string", "description": "what to echo"},
        "times": {"type": "integer", "minimum": 1, "default": 1},
        "tag": {"type": "string", "enum": ["a", "b"]}}, required=["text"])},
    {"name": "picture", "description": "A tiny picture.", "inputSchema": OBJ},
    {"name": "fail", "description": "Always fails.", "inputSchema": dict(OBJ, properties={})},
    {"name": "links", "description": "Links and resources.", "inputSchema": OBJ},
    {"name": "meet", "description": "Waits for a second call of meet.", "inputSchema": OBJ},
    {"name": "slow", "description": "Sleeps s seconds.", "inputSchema": dict(OBJ, properties={
        "s": {"type": "number"}}, required=["s"])},
    {"name": "nested", "description": "Nested arguments.", "inputSchema": {
        "type": "object", "$defs": {"place": {"type": "object", "properties": {
            "city": {"type": "string"}, "zip": {"type": "string", "maxLength": 10}}, "required": ["city"]}},
        "properties": {
            "point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"},
                                                        "label": {"type": "string"}}, "required": ["x", "y"]},
            "shape": {"anyOf": [{"type": "string", "enum": ["circle", "square"]},
                                {"type": "object", "properties": {"sides": {"type": "integer"}},
                                 "required": ["sides"]}]},
            "where": {"$ref": "#/$defs/place"}},
        "required": ["point"]}},
] + [{"name": name, "description": "Says its name.", "inputSchema": OBJ}
     for name in ("weather.today", "weather_today", LONG + "one", LONG + "two", "with space", "météo")]


MEETING = threading.Barrier(2, timeout=10)


def call(name, args):
    if name == "echo":
        return {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}
    if name == "picture":
        return {"content": [{"type": "text", "text": "a red dot"},
                            {"type": "image", "data": PNG, "mimeType": "image/png"}]}
    if name == "fail":
        return {"content": [{"type": "text", "text": "it broke"}], "isError": True}
    if name == "links":
        return {"content": [
            {"type": "resource_link", "uri": "file:///notes.txt", "name": "notes", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello from a"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "application/x"}},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]}
    if name == "meet":  # answers "met" only when another meet call runs at the same time
        try:
            MEETING.wait()
            return {"content": [{"type": "text", "text": "met"}]}
        except threading.BrokenBarrierError:
            MEETING.reset()
            return {"content": [{"type": "text", "text": "alone"}]}
    if name == "slow":
        time.sleep(args.get("s", 0))
        return {"content": [{"type": "text", "text": "slept"}]}
    if name == "nested":
        return {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}
    return {"content": [{"type": "text", "text": name}]}


def answer(msg):
    method, mid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if mid is None:
        return None
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                  "serverInfo": {"name": "model-server", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        if params.get("name") not in [t["name"] for t in TOOLS]:
            return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "no such tool"}}
        result = call(params["name"], params.get("arguments") or {})
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def serve(reader, writer):
    """The stdio loop over two binary streams until EOF; calls run on threads of their own
    (so a slow one does not hold the others up, as a real server's would not)."""
    lock = threading.Lock()

    def reply(msg):
        out = answer(msg)
        if out is not None:
            with lock:
                if writer.closed:  # the client left before this slow call ended: nowhere to answer
                    return
                try:
                    writer.write((json.dumps(out) + "\n").encode("utf-8"))
                    writer.flush()
                except OSError:  # (its read end closed already)
                    return
    for line in iter(reader.readline, b""):
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("method") == "tools/call":
            threading.Thread(target=reply, args=(msg,), daemon=True).start()
        else:
            reply(msg)
    with lock:
        writer.close()


def client_for(**options):
    """A mcp_min Client.over() of serve() on a daemon thread, over two pipes."""
    from mcp_min import Client
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    threading.Thread(target=serve, args=(os.fdopen(to_server, "rb"), os.fdopen(from_server, "wb")),
                     daemon=True, name="model_server").start()
    return Client.over(to_client, from_client, **options)


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
