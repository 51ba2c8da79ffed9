#!/usr/bin/env python3
"""A hostile MCP server over HTTP on 127.0.0.1, for tests/test_hostile.py.  Standard library only.

It speaks HTTP/1.1 itself, on raw sockets, so it can misbehave below the level http.server allows:
trickle bytes, reset connections, send broken chunks, close mid-upload.  It listens on port 0.

tests/test_hostile.py runs it in its own process's threads (nothing it checks is about this peer
being a process, and a process start costs about 70 ms of CPU, some 150 times a run): each peer
loads this file as a fresh module whose CONFIG is set before it runs, so every peer has its own
globals below, then calls serve(), which returns the port and a stop() that ends every connection
as the peer's process exiting would.  Run as a program (`python http_server.py CONFIG`, to try a
behaviour by hand), it prints "PORT <n>" on stdout once ready and exits when its stdin reaches EOF.

Configured by one JSON object (CONFIG, or argv[1]); every key is optional:

  mode        "streamable" (default): handshake-era Streamable HTTP (server/discover gets 400,
              initialize hands out a session id, GET/DELETE on the endpoint);
              "modern": a 2026-07-28 Streamable HTTP server (server/discover answers; no session);
              "sse": the 2024-11-05 HTTP+SSE transport (POST to the endpoint gets 405, GET opens the
              stream that names /messages?sid=<n>, one per stream, as the POST endpoint);
              "recorder": answers nothing useful (GET 405, DELETE 200, POST 404); only records.
  log         a file; one JSON line per request received (method, path, headers as sent, body) and
              per connection closed by the server ({"event": "closed", "conn": n}).
  interval    seconds between two trickled bytes (default 0.3).
  answer      "json" (default) or "sse": how plain requests are answered.
  session_id  the Mcp-Session-Id to hand out (any characters; written as UTF-8 bytes).
  results     {"<method>" or "tools/call:<tool>": result}: answered verbatim.
  notify      {"<notification method>" or "*": behaviour} for POSTed notifications:
              "202" (default), "trickle_headers", "trickle_body" (202 with an endless body), "reset".
  answers     the same behaviours, for POSTed answers to our requests (default "202").
  trickle_methods  methods (other than tools/call) whose answer trickles its headers forever.
  fail_status answer every request after initialize with this HTTP status and an HTML body.
  get         the standalone GET stream: "405" (default), "stream", "trickle_headers", "redirect".
  get_events  steps sent on the GET stream (see steps below); default ["notify", "hold"].
  resume      GET with Last-Event-ID: a list of steps (default ["answer"]), or "trickle_headers",
              or "redirect".
  delete      "200" (default), "trickle_headers", "redirect".
  redirect_to the URL that "redirect" (307) and the tool redirect_post point to.
  max_body    bodies longer than this get 413: oversize "early" (default: answer at once and close
              without reading the body) or "read" (read it all, then 413).
  listen_events  steps after the acknowledgement on a subscriptions/listen stream (modern).
  sse_get     mode "sse": "stream" (default) or "trickle_headers" for the GET that opens the stream.
  stream_events  mode "sse": steps sent on the stream right after the endpoint event.
  post_answer mode "sse": {"<method>" or "*": behaviour} for POSTs to the message endpoint:
              "202" (default) or "trickle_headers".

Steps (SSE): "notify" (tools/list_changed), "deep:<levels>" (one event nested that deep),
"huge:<MiB>" (one event of that many 1 MiB data: lines), "answer" (the pending answer),
"hold" (keep the stream open until the client goes away).

Tools (tools/call by name):
  echo, sse_echo          structuredContent = the arguments (sse_echo always answers on SSE)
  slow_echo(s)            echo after s seconds
  size(s)                 structuredContent = {"chars": len(s)}
  echo_then_close         answer (keep-alive headers), then close the connection
  never, no_headers       never answer; hold the connection until the client goes away
  trickle_headers         the status line and headers, one byte per interval, forever
  trickle_body            JSON headers with a huge Content-Length, then the body one byte per interval
  trickle_sse_line        SSE headers, then one data: line one byte per interval, never ended
  sse_comments            SSE headers, then a ":" comment line every interval, forever
  slow_body(delay)        JSON headers at once, the body after `delay` seconds
  slow_sse                SSE headers and one notification, then nothing (held)
  drop                    SSE: an event id and retry: 10, then the stream ends (answer on resume)
  drop_retry              SSE: an event id and retry: 60000, then the stream ends
  drop_after_read         read the request, close the connection without answering
  reset_after_read        read the request, reset the connection (RST)
  bad_chunk_json, bad_chunk_sse   a chunked answer whose chunk size is not hex
  bad_chunk_json_held, bad_chunk_sse_held   the same, then the connection is kept open and whatever
                          comes on it is swallowed (a request sent there would be lost)
  truncated_json          Content-Length 1000, 10 bytes, then close
  deep_sse(depth), deep_json(depth), deep_error(depth)   a message nested `depth` levels in an SSE
                          event (then the answer), as the JSON body, or as a 400 body
  huge_sse(mib)           SSE: one event of `mib` MiB, then the answer
  ask(method, params)     SSE: a request to the client, then the answer carrying the client's reply
  hold_ask(method, params) SSE: a request to the client (id "s-<n>"), then hold the stream
  ask_then_cancel(method) SSE: the request "c-1", notifications/cancelled for it, then the answer
  flood_then_ping(n, wait) SSE: n sampling requests, a ping; the answer says whether the ping's
                          answer came within `wait` seconds
  redirect_post           307 to redirect_to
Mode sse tools: echo, deep(depth), huge(mib), never, hold_ask/ask(method, params) (the request
goes out on the stream), kill_stream (the stream is reset).
"""

import itertools
import json
import os
import queue
import socket
import socketserver
import struct
import sys
import threading
import time

if __name__ == "__main__":
    cfg = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
else:  # loaded by a test as one peer: its configuration was set before this ran
    cfg = globals().get("CONFIG", {})
MODE = cfg.get("mode", "streamable")
INTERVAL = cfg.get("interval", 0.3)
PATH = "/mcp"
REASONS = {200: "OK", 202: "Accepted", 307: "Temporary Redirect", 400: "Bad Request", 404: "Not Found",
           405: "Method Not Allowed", 413: "Payload Too Large", 500: "Internal Server Error"}

log_lock = threading.Lock()
logf = open(cfg["log"], "a") if cfg.get("log") else None
conn_ids = itertools.count(1)
session_ids = itertools.count(1)
asked = itertools.count(1)
sessions = set()
deleted = set()
replies = {}  # id of a request we sent to the client -> [Event, message]
resumable = {}  # last event id -> answer
legacy_queues = {}  # mode sse: sid -> what goes out on that client's stream
conns = set()  # the connections open now, which stop() ends
conns_lock = threading.Lock()
stopped = []  # [True] once stop() ran: a connection accepted just before is ended at once


def log(entry):
    if logf is None:
        return
    with log_lock:
        if logf.closed:  # stopped: a thread still finishing writes nothing more
            return
        logf.write(json.dumps(entry) + "\n")
        logf.flush()


class Done(Exception):
    """The connection is finished (reset, closed, or the client went away)."""


def nested(depth):
    return "[" * depth + "]" * depth


def event(obj=None, data=None, event_id=None, kind=None, retry=None):
    text = ""
    if event_id is not None:
        text += "id: %s\n" % event_id
    if kind:
        text += "event: %s\n" % kind
    if retry is not None:
        text += "retry: %d\n" % retry
    payload = data if data is not None else json.dumps(obj)
    text += "".join("data: %s\n" % part for part in payload.split("\n")) + "\n"
    return text.encode("utf-8")


def complete(result):
    if MODE == "modern" and isinstance(result, dict):
        result = dict(result)
        result.setdefault("resultType", "complete")
    return result


def rpc_answer(mid, result):
    return {"jsonrpc": "2.0", "id": mid, "result": complete(result)}


def echo_result(args):
    return {"content": [{"type": "text", "text": json.dumps(args, ensure_ascii=False)}], "structuredContent": args}


class Request(object):
    def __init__(self, method, target, headers):
        self.method, self.target, self.headers = method, target, headers
        self.path = target.split("?", 1)[0]

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v.strip(" \t")
        return None


class Conn(object):
    def __init__(self, sock):
        self.sock = sock
        self.rfile = sock.makefile("rb")
        self.id = next(conn_ids)
        with conns_lock:
            conns.add(self)
            if stopped:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    # -- reading ---------------------------------------------------------------
    def read_request(self):
        line = self.rfile.readline(65537)
        while line in (b"\r\n", b"\n"):
            line = self.rfile.readline(65537)
        if not line:
            return None
        parts = line.decode("latin-1").rstrip("\r\n").split(" ")
        headers = []
        while True:
            h = self.rfile.readline(65537)
            if h in (b"\r\n", b"\n", b""):
                break
            text = h.decode("latin-1")
            text = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
            name, _, value = text.partition(":")
            headers.append([name, value[1:] if value.startswith(" ") else value])
        return Request(parts[0], parts[1] if len(parts) > 1 else "/", headers)

    def wait_gone(self, limit=600):
        """Hold until the client closes its side (or `limit` seconds)."""
        try:
            self.sock.settimeout(limit)
            while self.sock.recv(65536):
                pass
        except OSError:
            pass
        raise Done()

    # -- writing ---------------------------------------------------------------
    def write(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            raise Done()

    def send(self, status, body=b"", ctype="application/json", headers=(), close=False):
        head = "HTTP/1.1 %d %s\r\n" % (status, REASONS.get(status, "Whatever"))
        if body or status not in (202, 204):
            head += "Content-Type: %s\r\n" % ctype
        head += "Content-Length: %d\r\n" % len(body)
        if close:
            head += "Connection: close\r\n"
        data = head.encode("latin-1")
        for k, v in headers:
            data += k.encode("latin-1") + b": " + v.encode("utf-8", "surrogateescape") + b"\r\n"
        self.write(data + b"\r\n" + body)

    def json(self, msg, headers=()):
        self.send(200, json.dumps(msg).encode("utf-8"), headers=headers)

    def sse_start(self, headers=()):
        data = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n"
        for k, v in headers:
            data += ("%s: %s\r\n" % (k, v)).encode("latin-1")
        self.write(data + b"\r\n")

    def trickle(self, prefix=b"", unit=b"a", limit=600):
        self.write(prefix)
        end = time.monotonic() + limit
        while time.monotonic() < end:
            self.write(unit)
            time.sleep(INTERVAL)
        raise Done()

    def reset(self):
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.release()
        except OSError:
            pass
        raise Done()

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.release()
        # Logged once it is closed, not before: a test that waits for this entry, then checks what
        # the client does with the closed connection, must not race the close itself.
        log({"event": "closed", "conn": self.id})
        raise Done()

    def release(self):
        """Close the descriptor now.  socket.close() alone leaves it open while self.rfile (a
        makefile) refers to it: CPython frees the file when the handler returns, PyPy only at its
        next collection, and until then the kernel keeps accepting the client's upload."""
        with conns_lock:
            conns.discard(self)
        self.rfile.close()
        self.sock.close()

    def huge(self, mib):
        line = b"data: " + b"x" * (1024 * 1024 - 7) + b"\n"
        for _ in range(mib):
            self.write(line)
        self.write(b"\n")

    def steps(self, steps, answer=None, answer_id=None, notify_params=None):
        for step in steps:
            kind, _, arg = step.partition(":")
            if kind == "notify":
                note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                if notify_params:
                    note["params"] = notify_params
                self.write(event(note))
            elif kind == "deep":
                self.write(event(data=nested(int(arg))))
            elif kind == "huge":
                self.huge(int(arg))
            elif kind == "answer" and answer is not None:
                self.write(event(answer, event_id=answer_id))
            elif kind == "hold":
                self.wait_gone()


# -- behaviours shared by the modes ------------------------------------------------

def trickled(conn, what):
    if what == "trickle_headers":
        conn.trickle(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    if what == "trickle_body":
        conn.trickle(b"HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
    if what == "reset":
        conn.reset()


def ask_client(conn, method, params, rid=None):
    rid = rid or "s-%d" % next(asked)
    slot = replies.setdefault(rid, [threading.Event(), None])
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    conn.write(event(msg))
    return rid, slot


def tool(conn, req, mid, name, args):
    key = "tools/call:%s" % name
    if key in cfg.get("results", {}):
        return conn.json({"jsonrpc": "2.0", "id": mid, "result": cfg["results"][key]})
    answer = rpc_answer(mid, echo_result(args))
    if name in ("echo", "sse_echo"):
        if name == "sse_echo" or cfg.get("answer") == "sse":
            conn.sse_start()
            conn.write(event({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "info", "data": "working"}}))
            conn.write(event(answer))
            conn.close()
        return conn.json(answer)
    if name == "slow_echo":
        time.sleep(args.get("s", 0.2))
        return conn.json(answer)
    if name == "size":
        return conn.json(rpc_answer(mid, {"content": [], "structuredContent": {"chars": len(args.get("s", ""))}}))
    if name == "echo_then_close":
        conn.json(answer)
        conn.close()
    if name in ("never", "no_headers"):
        conn.wait_gone()
    if name in ("trickle_headers",):
        trickled(conn, name)
    if name == "trickle_body":
        conn.trickle(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
    if name == "trickle_sse_line":
        conn.sse_start()
        conn.trickle(b"data: ")
    if name == "sse_comments":
        conn.sse_start()
        conn.trickle(b"", b":\n")
    if name == "slow_body":
        body = json.dumps(answer).encode()
        conn.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
        time.sleep(args.get("delay", 3))
        conn.write(body)
        return
    if name == "slow_sse":
        conn.sse_start()
        conn.write(event({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "hi"}}))
        conn.wait_gone()
    if name in ("drop", "drop_retry"):
        eid = "ev-%s" % mid
        resumable[eid] = answer
        conn.sse_start()
        conn.write(event(data="", event_id=eid, retry=10 if name == "drop" else 60000))
        conn.close()
    if name == "drop_after_read":
        conn.close()
    if name == "reset_after_read":
        conn.reset()
    if name in ("bad_chunk_json", "bad_chunk_json_held"):
        conn.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"zz\r\n{}\r\n0\r\n\r\n")
        conn.wait_gone() if name.endswith("_held") else conn.close()
    if name in ("bad_chunk_sse", "bad_chunk_sse_held"):
        conn.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"5\r\n: hi\n\r\nzz\r\nxx\r\n")
        conn.wait_gone() if name.endswith("_held") else conn.close()
    if name == "truncated_json":
        conn.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":")
        conn.close()
    if name == "deep_sse":
        conn.sse_start()
        conn.write(event(data=nested(args.get("depth", 100000))))
        conn.write(event(answer))
        conn.close()
    if name == "deep_json":
        return conn.send(200, nested(args.get("depth", 100000)).encode())
    if name == "deep_error":
        return conn.send(400, nested(args.get("depth", 100000)).encode())
    if name == "huge_sse":
        conn.sse_start()
        conn.huge(args.get("mib", 100))
        conn.write(event(answer))
        conn.close()
    if name in ("ask", "hold_ask"):
        conn.sse_start()
        rid, slot = ask_client(conn, args.get("method", "sampling/createMessage"), args.get("params", {}))
        if name == "hold_ask":
            conn.wait_gone()
        slot[0].wait(10)
        conn.write(event(rpc_answer(mid, {"content": [], "structuredContent": {"reply": slot[1]}})))
        conn.close()
    if name == "ask_then_cancel":
        conn.sse_start()
        ask_client(conn, args.get("method", "sampling/createMessage"), args.get("params", {}), "c-1")
        conn.write(event({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": "c-1", "reason": "changed my mind"}}))
        conn.write(event(rpc_answer(mid, {"content": [], "structuredContent": {"sent": True}})))
        conn.close()
    if name == "flood_then_ping":
        conn.sse_start()
        for i in range(args.get("n", 12)):
            ask_client(conn, "sampling/createMessage", {"messages": [], "maxTokens": 1}, "f-%d" % i)
        start = time.monotonic()
        _, slot = ask_client(conn, "ping", None, "ping-1")
        answered = slot[0].wait(args.get("wait", 3.0))
        conn.write(event(rpc_answer(mid, {"content": [], "structuredContent": {
            "ping_answered": answered, "seconds": time.monotonic() - start}})))
        conn.close()
    if name == "redirect_post":
        return conn.send(307, b"", headers=[("Location", cfg["redirect_to"])])
    conn.json({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool %s" % name}})


def generic(conn, req, msg):
    """Answer a request other than tools/call (both Streamable HTTP eras)."""
    method, mid = msg.get("method"), msg.get("id")
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    if method in cfg.get("results", {}):
        return conn.json({"jsonrpc": "2.0", "id": mid, "result": cfg["results"][method]})
    if method == "tools/call":
        args = params.get("arguments")
        return tool(conn, req, mid, params.get("name"), args if isinstance(args, dict) else {})
    simple = {
        "ping": {},
        "tools/list": {"tools": [{"name": "echo", "description": "echo", "inputSchema": {"type": "object"}}]},
        "prompts/list": {"prompts": [{"name": "p"}]},
        "prompts/get": {"messages": [{"role": "user", "content": {"type": "text", "text": json.dumps(params)}}]},
        "resources/list": {"resources": []},
        "resources/templates/list": {"resourceTemplates": []},
        "resources/read": {"contents": [{"uri": params.get("uri"), "text": "x"}]},
        "completion/complete": {"completion": {"values": []}},
    }
    if method in cfg.get("trickle_methods", []):
        trickled(conn, "trickle_headers")
    if method in simple:
        return conn.json(rpc_answer(mid, simple[method]))
    if method == "subscriptions/listen":
        conn.sse_start()
        sub = {"io.modelcontextprotocol/subscriptionId": mid}
        conn.write(event({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                          "params": {"notifications": params.get("notifications"), "_meta": sub}}))
        conn.steps(cfg.get("listen_events", ["notify", "hold"]), notify_params={"_meta": sub})
        conn.wait_gone()
    return conn.json({"jsonrpc": "2.0", "id": mid,
                      "error": {"code": -32601, "message": "Method not found: %s" % method}})


def client_answer(conn, msg):
    slot = replies.setdefault(msg.get("id"), [threading.Event(), None]) if isinstance(msg.get("id"), str) else None
    if slot is not None:
        slot[1] = msg
        slot[0].set()


def streamable_post(conn, req, msg):
    if req.path != PATH:
        return conn.send(404)
    if not isinstance(msg, dict):
        return conn.send(400, b'{"error":"not an object"}')
    method, mid = msg.get("method"), msg.get("id")
    if method is None:
        client_answer(conn, msg)
        trickled(conn, cfg.get("answers", "202"))
        return conn.send(202)
    if MODE == "modern":
        if method == "server/discover":
            return conn.json(rpc_answer(mid, {
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile-http", "version": "1"}}}))
    else:
        if method == "server/discover":
            return conn.send(400)
        if method == "initialize":
            sid = cfg.get("session_id", "sess-%d" % next(session_ids))
            sessions.add(sid)
            return conn.json({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                "serverInfo": {"name": "hostile-http", "version": "1"}}}, headers=[("Mcp-Session-Id", sid)])
        sid = req.header("Mcp-Session-Id")
        if sid in deleted or (sessions and sid not in sessions and "session_id" not in cfg):
            return conn.send(404)
    if mid is None:
        behaviour = cfg.get("notify", {})
        trickled(conn, behaviour.get(method, behaviour.get("*", "202")))
        return conn.send(202)
    if cfg.get("fail_status"):
        return conn.send(cfg["fail_status"], b"<html>upstream exploded</html>", "text/html")
    return generic(conn, req, msg)


def streamable_get(conn, req):
    if MODE == "modern":
        return conn.send(405)
    last = req.header("Last-Event-ID")
    if last is not None:
        how = cfg.get("resume", ["answer"])
        if how == "trickle_headers":
            trickled(conn, how)
        if how == "redirect":
            return conn.send(307, headers=[("Location", cfg["redirect_to"])])
        conn.sse_start()
        conn.steps(how, answer=resumable.pop(last, None), answer_id=last + "-r")
        conn.close()
    how = cfg.get("get", "405")
    if how == "405":
        return conn.send(405)
    if how == "trickle_headers":
        trickled(conn, how)
    if how == "redirect":
        return conn.send(307, headers=[("Location", cfg["redirect_to"])])
    conn.sse_start()
    conn.steps(cfg.get("get_events", ["notify", "hold"]))
    conn.wait_gone()


def streamable_delete(conn, req):
    how = cfg.get("delete", "200")
    if how == "trickle_headers":
        trickled(conn, how)
    if how == "redirect":
        return conn.send(307, headers=[("Location", cfg["redirect_to"])])
    deleted.add(req.header("Mcp-Session-Id"))
    return conn.send(405 if MODE == "modern" else 200)


# -- mode sse (2024-11-05) --------------------------------------------------------------

def legacy_get(conn, req):
    if req.path != PATH:
        return conn.send(404)
    if cfg.get("sse_get") == "trickle_headers":
        trickled(conn, "trickle_headers")
    sid = str(next(session_ids))  # one stream per client, so clients at once do not mix
    stream = legacy_queues[sid] = queue.Queue()
    conn.sse_start()
    conn.write(event(data="/messages?sid=%s" % sid, kind="endpoint"))
    conn.steps(cfg.get("stream_events", []))
    while True:
        item = stream.get()
        if item == ("reset",):
            conn.reset()
        if isinstance(item, tuple):  # ("steps", [...], answer)
            conn.steps(item[1], answer=item[2])
        else:
            conn.write(event(item))


def legacy_post(conn, req, msg):
    if req.path == PATH:
        return conn.send(405)
    if not isinstance(msg, dict):
        return conn.send(400)
    legacy_queue = legacy_queues.get(req.target.partition("?sid=")[2])
    if legacy_queue is None:
        return conn.send(404)
    method, mid = msg.get("method"), msg.get("id")
    behaviour = cfg.get("post_answer", {})
    trickled(conn, behaviour.get(method, behaviour.get("*", "202")))
    conn.send(202)
    if method is None:
        return client_answer(conn, msg)
    if mid is None:
        return
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    if method == "initialize":
        return legacy_queue.put({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile-sse", "version": "1"}}})
    if method != "tools/call":
        return legacy_queue.put({"jsonrpc": "2.0", "id": mid, "result": {}} if method == "ping" else
                                {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}})
    name = params.get("name")
    args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    answer = rpc_answer(mid, echo_result(args))
    if name == "echo":
        return legacy_queue.put(answer)
    if name == "deep":
        return legacy_queue.put(("steps", ["deep:%d" % args.get("depth", 100000), "answer"], answer))
    if name == "huge":
        return legacy_queue.put(("steps", ["huge:%d" % args.get("mib", 100), "answer"], answer))
    if name == "never":
        return
    if name == "kill_stream":
        return legacy_queue.put(("reset",))
    if name in ("hold_ask", "ask"):
        rid = "s-%d" % next(asked)
        slot = replies.setdefault(rid, [threading.Event(), None])
        legacy_queue.put({"jsonrpc": "2.0", "id": rid, "method": args.get("method", "sampling/createMessage"),
                          "params": args.get("params", {})})
        if name == "ask":  # answer the call once the client's reply came (or after 10 s)
            def later():
                slot[0].wait(10)
                legacy_queue.put(rpc_answer(mid, {"content": [], "structuredContent": {"reply": slot[1]}}))
            threading.Thread(target=later, daemon=True).start()
        return
    legacy_queue.put({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool"}})


# -- the connection loop ----------------------------------------------------------------

def summary(body):
    try:
        msg = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None, {"invalid": True}
    if not isinstance(msg, dict):
        return msg, {"not_object": True}
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    info = {"id": msg.get("id"), "method": msg.get("method"), "name": params.get("name"),
            "is_response": "method" not in msg}
    if len(body) < 65536:
        info["msg"] = msg
    return msg, info


def handle(conn):
    req = conn.read_request()
    if req is None:
        raise Done()
    entry = {"conn": conn.id, "method": req.method, "path": req.target, "headers": req.headers, "t": time.time()}
    length = int(req.header("Content-Length") or 0)
    max_body = cfg.get("max_body")
    if max_body is not None and length > max_body:
        entry["oversize"] = length
        log(entry)
        if cfg.get("oversize", "early") == "early":
            conn.send(413, b'{"error":"payload too large"}', close=True)
            conn.close()
        conn.rfile.read(length)
        conn.send(413, b'{"error":"payload too large"}')
        return
    body = conn.rfile.read(length) if length else b""
    msg, info = summary(body) if body else (None, {})
    entry.update(body_len=len(body), body=body[:65536].decode("latin-1"), rpc=info)
    log(entry)
    if MODE == "recorder":
        return conn.send({"GET": 405, "DELETE": 200}.get(req.method, 404))
    if req.method == "POST":
        if MODE == "sse":
            return legacy_post(conn, req, msg)
        if msg is None and body:
            return conn.send(400, b'{"error":"not JSON"}')
        return streamable_post(conn, req, msg)
    if req.method == "GET":
        return legacy_get(conn, req) if MODE == "sse" else streamable_get(conn, req)
    if req.method == "DELETE":
        return streamable_delete(conn, req)
    return conn.send(405)


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        conn = Conn(self.request)
        try:
            while True:
                handle(conn)
        except (Done, OSError, ValueError):
            pass
        finally:
            conn.release()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def handle_error(self, request, client_address):
        pass


POLL = 0.05  # seconds between serve_forever()'s checks for stop(): what stop() waits at most for it


def serve():
    """Listen on 127.0.0.1, port 0, in daemon threads of this process: returns (port, stop)."""
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(POLL,), name="hostile-http", daemon=True).start()

    def stop():
        """End the peer as its process exiting would: no more connections, every open one closed
        (a blocked read or write in its thread fails, and the thread ends), nothing more logged."""
        server.shutdown()
        server.server_close()
        with conns_lock:
            stopped.append(True)
            open_now = list(conns)
        for conn in open_now:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for slot in list(replies.values()):  # a thread waiting for the client's reply
            slot[0].set()
        for stream in list(legacy_queues.values()):  # a legacy stream's thread waiting for more
            stream.put(("reset",))
        if logf is not None:
            with log_lock:
                logf.close()

    return server.server_address[1], stop


def main():
    port, _ = serve()
    sys.stdout.write("PORT %d\n" % port)
    sys.stdout.flush()
    sys.stdin.buffer.read()  # until whoever started us closes our stdin (or goes away)
    os._exit(0)


if __name__ == "__main__":
    main()
