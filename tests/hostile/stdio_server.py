#!/usr/bin/env python3
"""A hostile MCP server over stdio, for tests/test_hostile.py.  Standard library only.

Configured by one JSON object in argv[1]; every key is optional:

  era         "legacy" (default): server/discover answers -32601, then the initialize
              handshake; "modern": a 2026-07-28 stateless server (server/discover answers,
              every result carries resultType).
  log         a file; every line received on stdin is appended to it verbatim (bytes), so
              tests can see exactly what went over the wire.
  pidfile     a file to write this process's pid into (tests check it is still alive).
  stderr      a line written to stderr at start.
  exit_at_start  exit at once with this code (after the stderr line).
  init        a dict merged into the initialize result (serverInfo, capabilities, ...).
  discover    a dict merged into the server/discover result (modern era).
  results     {"<method>" or "tools/call:<tool>": result}: answered verbatim (wrong types welcome;
              no resultType is added).
  errors      {"<method>" or "tools/call:<tool>": error object}: answered as a JSON-RPC error.
  utf8        write answers as raw UTF-8 (ensure_ascii=False), so U+2028/U+2029 arrive unescaped.

Tools (tools/call by name; arguments in parentheses):

  echo(**args)              structuredContent = the arguments, one text block with them as JSON
  slow_echo(s, **args)      sleep s seconds, then echo
  size(s)                   structuredContent = {"chars": len(s)}
  text(text)                one text block
  fail(text)                isError with one text block
  ask(method, params)       send that request to the client, answer with the client's reply
  hold_ask(method, params)  send that request to the client; never answer the call
  flood_then_ping(n, wait)  send n sampling/createMessage requests, then a ping; answer
                            {"ping_answered": bool, "seconds": t} once the ping's answer came,
                            or after `wait` seconds
  ask_then_cancel(method)   send the request "c-1", then notifications/cancelled for it; answer
                            {"sent": true} at once
  stderr_flood(n)           write n bytes of stderr (lines of 100 bytes), then answer "flooded"
  deep(depth, shape)        write one line nested `depth` levels (shape "array": [[[...]]];
                            "notification": a notifications/message whose data is nested), then
                            answer "survived"
  never()                   no answer, ever

Other methods: ping, tools/list, prompts/list, prompts/get (echoes its params in the text),
resources/list, resources/templates/list, resources/read, completion/complete,
logging/setLevel, resources/subscribe/unsubscribe.  stdin EOF ends the process.
"""

import json
import os
import sys
import threading
import time

cfg = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
out = sys.stdout.buffer
write_lock = threading.Lock()
waiting = {}  # id of a request we sent -> [Event, reply]
modern = cfg.get("era") == "modern"
logf = open(cfg["log"], "ab") if cfg.get("log") else None

if cfg.get("pidfile"):
    with open(cfg["pidfile"], "w") as f:
        f.write(str(os.getpid()))
if cfg.get("stderr"):
    sys.stderr.write(cfg["stderr"] + "\n")
    sys.stderr.flush()
if cfg.get("exit_at_start") is not None:
    os._exit(cfg["exit_at_start"])


def write_raw(data):
    with write_lock:
        try:
            out.write(data)
            out.flush()
        except (OSError, ValueError):
            os._exit(0)


def write(obj):
    write_raw(json.dumps(obj, ensure_ascii=not cfg.get("utf8")).encode("utf-8", "surrogatepass") + b"\n")


def complete(result):
    if modern and isinstance(result, dict):
        result = dict(result)
        result.setdefault("resultType", "complete")
    return result


def answer(mid, result=None, error=None, verbatim=False):
    msg = {"jsonrpc": "2.0", "id": mid}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result if verbatim else complete(result)
    write(msg)


def ask(rid, method, params=None, wait=30.0):
    ev = threading.Event()
    waiting[rid] = [ev, None]
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    write(msg)
    if wait:
        ev.wait(wait)
    return waiting[rid][1]


asked = [0]


def tool(mid, name, args):
    key = "tools/call:" + name
    if key in cfg.get("errors", {}):
        return answer(mid, error=cfg["errors"][key])
    if key in cfg.get("results", {}):
        return answer(mid, cfg["results"][key], verbatim=True)
    if name == "echo":
        return answer(mid, {"content": [{"type": "text", "text": json.dumps(args, ensure_ascii=False)}],
                            "structuredContent": args})
    if name == "slow_echo":
        time.sleep(args.get("s", 0.2))
        return answer(mid, {"content": [], "structuredContent": args})
    if name == "size":
        return answer(mid, {"content": [], "structuredContent": {"chars": len(args.get("s", ""))}})
    if name == "text":
        return answer(mid, {"content": [{"type": "text", "text": args.get("text", "")}]})
    if name == "fail":
        return answer(mid, {"content": [{"type": "text", "text": args.get("text", "failed")}], "isError": True})
    if name in ("ask", "hold_ask"):
        asked[0] += 1
        rid = "s-%d" % asked[0]
        reply = ask(rid, args.get("method", "sampling/createMessage"), args.get("params", {}),
                    wait=30.0 if name == "ask" else 0)
        if name == "ask":
            return answer(mid, {"content": [], "structuredContent": {"reply": reply}})
        return
    if name == "flood_then_ping":
        for i in range(args.get("n", 12)):
            ask("f-%d" % i, "sampling/createMessage", {"messages": [], "maxTokens": 1}, wait=0)
        start = time.monotonic()
        ev = threading.Event()
        waiting["ping-1"] = [ev, None]
        write({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
        answered = ev.wait(args.get("wait", 3.0))
        return answer(mid, {"content": [], "structuredContent": {
            "ping_answered": answered, "seconds": time.monotonic() - start}})
    if name == "ask_then_cancel":
        ask("c-1", args.get("method", "sampling/createMessage"), args.get("params", {}), wait=0)
        write({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": "c-1", "reason": "changed my mind"}})
        return answer(mid, {"content": [], "structuredContent": {"sent": True}})
    if name == "stderr_flood":
        n = args.get("n", 1 << 20)
        line = b"e" * 99 + b"\n"
        for _ in range(n // 100):
            sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
        return answer(mid, {"content": [{"type": "text", "text": "flooded"}]})
    if name == "deep":
        depth = args.get("depth", 100000)
        nested = "[" * depth + "]" * depth
        if args.get("shape") == "notification":
            nested = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%s}}' % nested
        write_raw(nested.encode() + b"\n")
        return answer(mid, {"content": [{"type": "text", "text": "survived"}]})
    if name == "never":
        return
    return answer(mid, error={"code": -32602, "message": "unknown tool %s" % name})


def serve(mid, method, params):
    if method in cfg.get("errors", {}):
        return answer(mid, error=cfg["errors"][method])
    if method in cfg.get("results", {}):
        return answer(mid, cfg["results"][method], verbatim=True)
    if method == "server/discover":
        if not modern:
            return answer(mid, error={"code": -32601, "message": "Method not found"})
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {
            "tools": {}, "prompts": {}, "resources": {}, "completions": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile-stdio", "version": "1"}}}
        result.update(cfg.get("discover", {}))
        return answer(mid, result)
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion"),
                  "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "logging": {}, "completions": {}},
                  "serverInfo": {"name": "hostile-stdio", "version": "1"}}
        result.update(cfg.get("init", {}))
        return answer(mid, result, verbatim=True)
    if method == "ping":
        return answer(mid, {})
    if method == "tools/list":
        return answer(mid, {"tools": [{"name": "echo", "description": "echo", "inputSchema": {"type": "object"}}]})
    if method == "prompts/list":
        return answer(mid, {"prompts": [{"name": "p", "description": "a prompt"}]})
    if method == "prompts/get":
        return answer(mid, {"messages": [{"role": "user", "content": {"type": "text", "text": json.dumps(params)}}]})
    if method == "resources/list":
        return answer(mid, {"resources": [{"uri": "mem://a", "name": "a"}]})
    if method == "resources/templates/list":
        return answer(mid, {"resourceTemplates": []})
    if method == "resources/read":
        return answer(mid, {"contents": [{"uri": params.get("uri"), "text": "content of %s" % params.get("uri")}]})
    if method == "completion/complete":
        return answer(mid, {"completion": {"values": ["a", "b"]}})
    if method in ("logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        return answer(mid, {})
    if method == "tools/call":
        args = params.get("arguments")
        threading.Thread(target=tool, args=(mid, params.get("name"), args if isinstance(args, dict) else {}),
                         daemon=True).start()
        return
    return answer(mid, error={"code": -32601, "message": "Method not found: %s" % method})


def main():
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            break
        if logf:
            logf.write(line if line.endswith(b"\n") else line + b"\n")
            logf.flush()
        try:
            msg = json.loads(line.decode("utf-8"))
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        method, mid = msg.get("method"), msg.get("id")
        if method is None:
            slot = waiting.get(mid) if isinstance(mid, str) else None
            if slot is not None:
                slot[1] = msg
                slot[0].set()
            continue
        if mid is None:
            continue  # a notification
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            serve(mid, method, params)
        except Exception as e:  # a bad request must not end the server
            answer(mid, error={"code": -32603, "message": repr(e)})
    os._exit(0)


main()
