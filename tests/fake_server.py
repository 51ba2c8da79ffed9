"""A scriptable misbehaving MCP server over stdio, for the tests: a process of its own, or a
thread of the test's process.

    python fake_server.py '<JSON config>'              # a process (the script)
    client_for(cfg, **options)                          # a mcp_min Client.over() of it on a thread
    serve_in_thread(cfg) -> (reader, writer, thread)    # os.pipe() ends for Client.over(reader, writer)
    serve(cfg, reader, writer)                          # the loop over two binary streams, until EOF

A client of a thread costs about 2 ms; of a process about 170 ms (more on PyPy, far more under
Wine).  Tests about the protocol use a thread; tests about processes use the script.

Config keys (all optional):
  log             a file where every line received is appended (the tests read it back)
  discover        how server/discover is answered: "error" (-32601, the default) | "invalid-params" (-32602)
                  | "silent" | "die" (exit 1 with a stderr line) | "die-late" (stdin closed, exit 1 s later) | "result-no-versions" | "legacy-only"
                  | "modern" (a 2026-07-28 server: every request must carry its _meta)
                  | "unsupported:V1,V2" (-32022 listing V1, V2) | "header-mismatch" (-32020)
  init            how initialize is answered: "silent" | "exit" (code 4, "missing API key" on stderr)
                  | "error-supported" (-32602 listing only 2025-03-26, unless that was asked)
  version         the protocolVersion initialize answers with (default: the one asked for)
  exit_at_start   exit at once with this code; startup_stderr: a line written to stderr first
  garbage         write junk, blank and half lines before each message; crlf: end lines with CRLF
  dribble         write each message three bytes at a time
  reorder         hold tools/call until N arrived, then answer them in reverse order
  stall           stop reading stdin (but stay alive) after notifications/initialized or server/discover
  pages           tools/list pages (t0, t1, ...); loop_cursor: always answer nextCursor "same"
  ttl             ttlMs of the 2026-07-28 tools/list; listen_error: refuse subscriptions/listen
  output_schemas  {tool name: outputSchema}: tools/list also lists these tools with that outputSchema
                  (both eras; echo returns its arguments as structuredContent, text returns none)
  hostile         a string (terminal controls, say) the server puts in everything it shows (handshake
                  era): serverInfo name and instructions; a tool, a resource and a prompt named with it,
                  and its text in their descriptions; the tools hostile (asks for input with it as the
                  message, logs it, reports progress with it, returns it and a multi-line tail) and
                  hostile_error (an error with it as the message); resources/read and prompts/get of
                  anything return it

Tools (handshake era unless noted):
  echo (returns its arguments) | text {text} | big {n}: n characters | crash: exit 3 with a stderr line
  | killed: SIGKILL itself | sleep {s} | never: no answer | progress: three progress notifications
  | log: a log message and tools/list_changed | ask {method, params}: a request to the client, whose
  answer is returned | flood {n, notes}: n pings and notes log messages at once | env {keys}
  | malformed: notifications with malformed params first
  2026-07-28 ("modern"): ask_input {rounds}: input_required rounds (elicitation + roots)
  | ask_forever: input_required without end | odd_result: resultType "task"

Only as a script: what is about the process itself, which a thread cannot mean the same way
(its exit code, its stderr, its death, its environment, a process that stays alive while it
stops reading).  serve() and serve_in_thread() refuse the keys exit_at_start, startup_stderr,
stall, discover "die" and init "exit" (ValueError); on a thread the tools crash, killed and env
answer an error (-32603) instead.
"""
import json
import os
import sys
import threading
import time

# The tools that are about the process (see the docstring): on a thread they answer an error.
SCRIPT_ONLY_TOOLS = ("crash", "killed", "env")


def script_only(cfg):
    """The keys of ``cfg`` only the script honours (an empty list: a thread can serve it)."""
    found = [key for key in ("startup_stderr", "stall") if cfg.get(key)]
    if cfg.get("exit_at_start") is not None:
        found.append("exit_at_start")
    if cfg.get("discover") in ("die", "die-late"):
        found.append('discover "%s"' % cfg["discover"])
    if cfg.get("init") == "exit":
        found.append('init "exit"')
    return found


class FakeServer(object):
    """One client's server: writes go to ``out`` (a binary stream).  ``in_process``: a thread of
    the test's process, whose writes after the client left are dropped and whose tool threads
    are daemons (the script's writes fail loudly and its tool threads hold the process, as ever)."""

    def __init__(self, cfg, out, in_process=False):
        self.cfg = cfg
        self.out = out
        self.in_process = in_process
        self.lock = threading.Lock()
        self.waiting = {}      # id of our request to the client -> Event, answer
        self.held = []         # requests held back for out-of-order answers
        self.flooded = set()   # answered ids of the ping flood
        self.listing = 0       # 2026-07-28 tools/list answers so far (v1, v2, ...)

    def read_loop(self, reader, logf):
        cfg = self.cfg
        for line in reader:
            if logf:
                logf.write(line.decode()); logf.flush()
            if not line.strip():
                continue
            self.handle(json.loads(line))
            if cfg.get("stall") and (b"notifications/initialized" in line or b"server/discover" in line):
                time.sleep(60)  # stop reading stdin, alive

    def write(self, obj):
        cfg = self.cfg
        out = self.out
        data = json.dumps(obj).encode() + (b"\r\n" if cfg.get("crlf") else b"\n")
        with self.lock:
            try:
                if cfg.get("garbage"):
                    out.write(b"this is not json\n\n   \n{\"half\": \n")
                if cfg.get("dribble"):
                    for i in range(0, len(data), 3):
                        out.write(data[i:i + 3]); out.flush(); time.sleep(0.0005)
                else:
                    out.write(data)
                out.flush()
            except (OSError, ValueError):
                if not self.in_process:
                    raise
                # On a thread: the client closed (a late answer after close()); nothing to tell.

    def close(self):
        """Close the output between two writes (the client then sees the end of it)."""
        with self.lock:
            self.out.close()

    def answer(self, mid, result=None, error=None):
        msg = {"jsonrpc": "2.0", "id": mid}
        if error is not None:
            msg["error"] = error
        else:
            msg["result"] = result
        self.write(msg)

    def ask(self, method, params=None):
        rid = "srv-%d" % len(self.waiting)
        ev = threading.Event()
        self.waiting[rid] = [ev, None]
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.write(msg)
        ev.wait(10)
        return self.waiting[rid][1]

    def tool(self, mid, name, args, meta):
        answer, write = self.answer, self.write
        if self.in_process and name in SCRIPT_ONLY_TOOLS:
            return answer(mid, error={"code": -32603, "message": "tool %r needs fake_server.py as a process" % name})
        if name == "echo":
            return answer(mid, {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args})
        if name == "text":
            return answer(mid, {"content": [{"type": "text", "text": args["text"]}]})
        if name == "big":
            return answer(mid, {"content": [{"type": "text", "text": "x" * args["n"]}]})
        if name == "crash":
            sys.stderr.write("fatal: the tool crashed\n"); sys.stderr.flush()
            os._exit(3)
        if name == "malformed":
            for params in ({"progressToken": [1], "progress": 1}, {"_meta": [1]}, {"requestId": {}}):
                write({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
                write({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
            write({"jsonrpc": "2.0", "method": 5})
            return answer(mid, {"content": [{"type": "text", "text": "survived"}]})
        if name == "killed":
            os.kill(os.getpid(), 9)
        if name == "sleep":
            time.sleep(args["s"])
            return answer(mid, {"content": [{"type": "text", "text": "slept"}]})
        if name == "never":
            return
        if name == "progress":
            for i in range(1, 4):
                write({"jsonrpc": "2.0", "method": "notifications/progress",
                       "params": {"progressToken": meta.get("progressToken"), "progress": i, "total": 3,
                                  "message": "step %d" % i}})
            return answer(mid, {"content": [{"type": "text", "text": "done"}]})
        if name == "log":
            write({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "warning", "logger": "fake", "data": "careful"}})
            write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return answer(mid, {"content": [{"type": "text", "text": "logged"}]})
        if name == "ask":
            reply = self.ask(args["method"], args.get("params"))
            return answer(mid, {"content": [{"type": "text", "text": json.dumps(reply)}], "structuredContent": reply})
        if name == "flood":
            for i in range(args["n"]):
                write({"jsonrpc": "2.0", "id": "flood-%d" % i, "method": "ping"})
            for i in range(args.get("notes", 0)):
                write({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": i}})
            deadline = time.time() + 20
            while len(self.flooded) < args["n"] and time.time() < deadline:
                time.sleep(0.01)
            return answer(mid, {"content": [], "structuredContent": {"answered": len(self.flooded)}})
        if name == "env":
            return answer(mid, {"content": [], "structuredContent": {k: os.environ.get(k) for k in args["keys"]}})
        if name == "hostile" and "hostile" in self.cfg:
            bad = self.cfg["hostile"]
            self.ask("elicitation/create", {"mode": "form", "message": bad, "requestedSchema": {
                "type": "object", "properties": {"x": {"type": "string"}}}})
            write({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "warning", "logger": bad, "data": bad}})
            if meta.get("progressToken") is not None:
                write({"jsonrpc": "2.0", "method": "notifications/progress",
                       "params": {"progressToken": meta["progressToken"], "progress": 1, "message": bad}})
            return answer(mid, {"content": [{"type": "text", "text": self.hostile_text()}]})
        if name == "hostile_error" and "hostile" in self.cfg:
            return answer(mid, error={"code": -32000, "message": self.cfg["hostile"]})
        return answer(mid, error={"code": -32602, "message": "unknown tool " + name})

    def hostile_listing(self, kind):
        """What tools/list, resources/list and prompts/list add with cfg["hostile"]."""
        bad = self.cfg.get("hostile")
        if bad is None:
            return []
        if kind == "tools":
            return [{"name": "hostile", "description": bad, "inputSchema": {"type": "object", "properties": {
                "k" + bad: {"type": "string", "description": bad, "default": bad}}}},
                {"name": "hostile_error", "inputSchema": {"type": "object"}},
                {"name": "t" + bad, "title": bad, "inputSchema": {"type": "object"}}]
        if kind == "resources":
            return [{"uri": "hostile://" + bad, "name": bad, "description": bad}]
        return [{"name": "p" + bad, "description": bad, "arguments": [{"name": "a" + bad}]},
                {"name": "hostile", "description": bad}]

    def hostile_text(self):
        """cfg["hostile"], then lines whose tab, newline and CRLF a terminal shows as they are."""
        return self.cfg["hostile"] + "\nline 2\n\tindented\r\nline 4"

    def with_output_schemas(self):
        return [{"name": name, "inputSchema": {"type": "object"}, "outputSchema": schema}
                for name, schema in (self.cfg.get("output_schemas") or {}).items()]

    def serve_modern(self, mid, method, params):
        cfg, answer, write = self.cfg, self.answer, self.write
        if version_of(params) != "2026-07-28":
            return answer(mid, error={"code": -32022, "message": "unsupported",
                                      "data": {"supported": ["2026-07-28"], "requested": version_of(params)}})
        if method == "tools/list":
            self.listing += 1
            return answer(mid, modern({"tools": [{"name": "v%d" % self.listing, "inputSchema": {"type": "object"}}]
                                       + self.with_output_schemas(), "ttlMs": cfg.get("ttl", 0),
                                       "cacheScope": "private"}))
        if method == "resources/read":
            return answer(mid, error={"code": -32602, "message": "Resource not found", "data": {"uri": params["uri"]}})
        if method == "subscriptions/listen" and cfg.get("listen_error"):
            return answer(mid, error={"code": -32601, "message": "no subscriptions here"})
        if method == "subscriptions/listen":
            sub = {"io.modelcontextprotocol/subscriptionId": mid}
            wanted = params.get("notifications") or {}
            write({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                   "params": {"notifications": wanted, "_meta": sub}})
            write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": sub}})
            return
        if method == "tools/call":
            name, args = params["name"], params.get("arguments") or {}
            responses, state = params.get("inputResponses"), params.get("requestState")
            if name == "ask_input":
                rounds = int(state.split("-")[1]) if state else 0
                if rounds < args.get("rounds", 1):
                    asks = {"who": {"method": "elicitation/create", "params": {
                        "mode": "form", "message": "who?", "requestedSchema": {
                            "type": "object", "properties": {"name": {"type": "string"}}}}},
                            "where": {"method": "roots/list"}}
                    return answer(mid, {"resultType": "input_required", "inputRequests": asks,
                                        "requestState": "st-%d" % (rounds + 1)})
                return answer(mid, modern({"content": [], "structuredContent": {
                    "responses": responses, "state": state}}))
            if name == "ask_forever":
                return answer(mid, {"resultType": "input_required", "requestState": "again"})
            if name == "odd_result":
                return answer(mid, {"resultType": "task", "taskId": "t1"})
            if name == "text":
                return answer(mid, modern({"content": [{"type": "text", "text": args.get("text", "")}]}))
            return answer(mid, modern({"content": [{"type": "text", "text": json.dumps(args)}],
                                       "structuredContent": args}))
        return answer(mid, error={"code": -32601, "message": "Method not found: " + method})

    def handle(self, msg):
        cfg, answer = self.cfg, self.answer
        method, mid = msg.get("method"), msg.get("id")
        params = msg.get("params") or {}
        if method not in (None, "server/discover") and version_of(params) and cfg.get("discover") == "modern":
            if mid is not None:
                self.serve_modern(mid, method, params)
            return
        if method is None:
            if str(mid).startswith("flood-"):
                self.flooded.add(mid)
            if mid in self.waiting:
                self.waiting[mid][1] = msg
                self.waiting[mid][0].set()
            return
        if method == "server/discover":
            mode = cfg.get("discover", "error")
            if mode == "silent":
                return
            if mode in ("die", "die-late"):
                sys.stderr.write("unknown method, bye\n"); sys.stderr.flush()
                if mode == "die-late":  # stops reading at once and exits a second later: the client's
                    os.close(0)         # next write meets the closed pipe before its reader sees the exit
                    time.sleep(1.0)
                os._exit(1)
            if mode == "invalid-params":
                return answer(mid, error={"code": -32602, "message": "not initialized"})
            if mode == "result-no-versions":
                return answer(mid, {})
            if mode == "modern":
                return answer(mid, modern({"supportedVersions": ["2026-07-28", "2025-11-25"],
                                           "capabilities": {"tools": {"listChanged": True}},
                                           "instructions": "stateless", "ttlMs": 1000, "cacheScope": "public",
                                           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-fake",
                                                                                            "version": "2"}}}))
            if mode == "legacy-only":
                return answer(mid, {"supportedVersions": ["2025-06-18"], "capabilities": {}})
            if mode.startswith("unsupported:"):
                return answer(mid, error={"code": -32022, "message": "Unsupported protocol version",
                                          "data": {"supported": mode.split(":", 1)[1].split(","),
                                                   "requested": version_of(params)}})
            if mode == "header-mismatch":
                return answer(mid, error={"code": -32020, "message": "header mismatch"})
            return answer(mid, error={"code": -32601, "message": "Method not found"})
        if method == "initialize":
            mode = cfg.get("init")
            if mode == "silent":
                return
            if mode == "exit":
                sys.stderr.write("cannot initialize: missing API key\n"); sys.stderr.flush()
                sys.exit(4)
            requested = params.get("protocolVersion")
            if mode == "error-supported" and requested != "2025-03-26":
                return answer(mid, error={"code": -32602, "message": "Unsupported protocol version",
                                          "data": {"supported": ["2025-03-26"], "requested": requested}})
            result = {"protocolVersion": cfg.get("version", requested),
                      "capabilities": {"tools": {"listChanged": True}, "logging": {}},
                      "serverInfo": {"name": "fake", "version": "9"}, "instructions": "be nice"}
            if "hostile" in cfg:
                result["capabilities"].update(resources={}, prompts={})
                result["serverInfo"]["name"], result["instructions"] = "fake" + cfg["hostile"], cfg["hostile"]
            return answer(mid, result)
        if mid is None:
            return
        if method == "ping":
            return answer(mid, {})
        if method == "tools/list":
            cursor = params.get("cursor")
            page = int(cursor) if cursor and cursor.isdigit() else 0
            pages = cfg.get("pages", 1)
            result = {"tools": [{"name": "t%d" % page, "inputSchema": {"type": "object"}}]
                      + (self.with_output_schemas() if page == 0 else []) + self.hostile_listing("tools")}
            if cfg.get("loop_cursor"):
                result["nextCursor"] = "same"
            elif page + 1 < pages:
                result["nextCursor"] = str(page + 1)
            return answer(mid, result)
        if method == "tools/call":
            if cfg.get("reorder"):
                self.held.append(msg)
                if len(self.held) == cfg["reorder"]:
                    for m in reversed(self.held):
                        self.tool(m["id"], m["params"]["name"], m["params"].get("arguments") or {}, {})
                return
            args = dict(params.get("arguments") or {})
            # The script's tool threads hold the process until they are done, as they always did; on
            # a thread of the tests they must not hold the test run (a "never" or a "sleep" left over).
            threading.Thread(target=self.tool, args=(mid, params["name"], args, params.get("_meta") or {}),
                             daemon=self.in_process, name="fake_server-tool").start()
            return
        if method in ("resources/subscribe", "resources/unsubscribe"):
            return answer(mid, {})
        if "hostile" in cfg and method in ("resources/list", "resources/templates/list", "prompts/list"):
            return answer(mid, {"resources/list": {"resources": self.hostile_listing("resources")},
                                "resources/templates/list": {"resourceTemplates": []},
                                "prompts/list": {"prompts": self.hostile_listing("prompts")}}[method])
        if "hostile" in cfg and method == "resources/read":
            return answer(mid, {"contents": [{"uri": params.get("uri"), "text": self.hostile_text()}]})
        if "hostile" in cfg and method == "prompts/get":
            return answer(mid, {"messages": [{"role": "user", "content": {"type": "text",
                                                                          "text": self.hostile_text()}}]})
        return answer(mid, error={"code": -32601, "message": "Method not found: " + method})


def version_of(params):
    return (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")


def modern(result):
    result.setdefault("resultType", "complete")
    return result


def open_log(cfg):
    return open(cfg["log"], "a", encoding="utf-8") if cfg.get("log") else None  # (not the ANSI code page)


def refuse_script_only(cfg):
    refused = script_only(cfg)
    if refused:
        raise ValueError("fake_server.py on a thread cannot honour %s: only the script can (a process)"
                         % ", ".join(refused))


def serve(cfg, reader, writer):
    """Serve one client on this thread over two binary streams, until EOF on ``reader``; then
    close ``writer`` and ``reader`` (the client sees the end of the output, as of a process)."""
    refuse_script_only(cfg)
    server = FakeServer(cfg, writer, in_process=True)
    logf = open_log(cfg)
    try:
        server.read_loop(reader, logf)
    finally:
        if logf:
            logf.close()
        server.close()
        reader.close()


def serve_in_thread(cfg):
    """serve(cfg) on a daemon thread, over two pipes; returns the client's (reader fd, writer fd)
    and the thread.  The thread ends once the client closes its writer."""
    refuse_script_only(cfg)  # here, in the caller's thread, not as a traceback of the server's
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    thread = threading.Thread(target=serve, args=(cfg, os.fdopen(to_server, "rb"), os.fdopen(from_server, "wb")),
                              daemon=True, name="fake_server")
    thread.start()
    return to_client, from_client, thread


def client_for(cfg, **options):
    """A mcp_min Client.over() of serve(cfg) on a thread (``options`` are Client's).  Its close()
    returns once the server has read to EOF and ended (Client.over() waits for the end of the
    server's output), so what cfg["log"] records is complete then, as with the script's exit."""
    from mcp_min import Client
    reader, writer, _ = serve_in_thread(cfg)
    return Client.over(reader, writer, **options)


def main(argv):
    cfg = json.loads(argv[1])
    logf = open_log(cfg)
    if cfg.get("startup_stderr"):
        sys.stderr.write(cfg["startup_stderr"] + "\n"); sys.stderr.flush()
    if cfg.get("exit_at_start") is not None:
        sys.exit(cfg["exit_at_start"])
    FakeServer(cfg, sys.stdout.buffer).read_loop(sys.stdin.buffer, logf)


if __name__ == "__main__":
    main(sys.argv)
