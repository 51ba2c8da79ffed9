"""A purpose-built MCP server with task-backed tools, for tests/test_tasks.py.

Usage: python task_server.py CONFIG_JSON            (stdio)
       python task_server.py CONFIG_JSON --http     (Streamable HTTP on 127.0.0.1, port 0;
                                                     prints "listening on URL" to stderr)

It speaks both eras: 2025-11-25 after ``initialize`` (tasks in the core protocol) and
2026-07-28 statelessly (``server/discover``; the io.modelcontextprotocol/tasks extension).
Every message it receives is appended to ``cfg["log"]`` as one JSON line (over HTTP as
``{"headers": {...}, "msg": ...}``), so tests can check and schema-validate what the client sent.

Config keys: ``log`` (path), ``push`` (send task status notifications: 2025 notifications/tasks/status;
2026 notifications/tasks on a subscriptions/listen stream that names the task; stdio only),
``ext`` (2026: advertise the tasks extension in server/discover, default true), ``modern``
(answer server/discover, default true; false makes a handshake-era-only server), ``output_schema``
(tools/list gives ``work`` and ``maybe`` this outputSchema).

Behaviours:
- tools/list (2025): ``work``, ``ask`` need a task (execution.taskSupport required),
  ``maybe`` allows one (optional), ``echo``, ``needs_url`` and ``visit`` run at once.
- ``work {s, poll_ms, outcome, message, every}``: a task that works for ``s`` seconds (with
  the status message "step N" every ``every`` seconds, if given) and then
  completes (``outcome`` "ok": structuredContent ``{"slept": s}``), fails with a JSON-RPC
  error (``"fail"``: -32603 "the work broke"), or completes with isError (``"tool_error"``;
  in 2025-11-25 that is status failed, as the spec says).  ``poll_ms`` is the suggested poll
  interval (omitted when null; default 200).  ``maybe`` is the same tool.
- ``ask``: a task that needs input.  2025-11-25: when the client calls tasks/result, the
  server sends elicitation/create tagged with io.modelcontextprotocol/related-task (stdio
  only) and completes with the answer.  2026-07-28: tasks/get shows ``inputRequests``
  (a form elicitation ``name``, plus a URL-mode one ``site`` when ``url`` is true); after
  tasks/update answered them all, the task completes with structuredContent
  ``{"answers": {...}}``.
- ``needs_url``: the first call of a process fails with -32042 listing one URL elicitation
  (id ``e-1``), followed by notifications/elicitation/complete for it; later calls succeed
  with structuredContent ``{"calls": n}``.
- ``visit`` (2025, stdio): sends elicitation/create in URL mode and returns the answer.
- tasks/get of an unknown id: -32602.  tasks/cancel: 2025 answers the cancelled task
  (-32602 when it had ended); 2026 answers an empty ack.  2026 tasks/* over HTTP must
  carry ``Mcp-Name: <taskId>`` (else 400, -32020).
- 2026 tools/call of a task tool without the extension declared: -32021.
"""

import datetime
import itertools
import json
import os
import sys
import threading
import time

CFG = json.loads(sys.argv[1])
HTTP = "--http" in sys.argv
MODERN = "2026-07-28"
EXT = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
SUB = "io.modelcontextprotocol/subscriptionId"

lock = threading.Condition()
log_lock = threading.Lock()
out_lock = threading.Lock()
tasks = {}  # id -> dict
ids = itertools.count(1)
listens = {}  # task id -> listen request id (stdio push, 2026)
waiting = {}  # our request id -> [Event, answer]
url_calls = [0]


def now():
    return datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record(entry):
    if CFG.get("log"):
        with log_lock, open(CFG["log"], "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def write(msg):  # stdio only
    with out_lock:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def rpc_error(code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return err


class Fail(Exception):
    def __init__(self, code, message, data=None, status=200):
        Exception.__init__(self, message)
        self.error, self.status = rpc_error(code, message, data), status


def is_modern(params):
    return ((params or {}).get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion") == MODERN


def declared_ext(params):
    caps = ((params or {}).get("_meta") or {}).get("io.modelcontextprotocol/clientCapabilities") or {}
    return EXT in (caps.get("extensions") or {})


# -- tasks -----------------------------------------------------------------------

def public(task):
    """The task's fields as the era shows them."""
    out = {"taskId": task["id"], "status": task["status"], "createdAt": task["created"],
           "lastUpdatedAt": task["updated"]}
    if task.get("message"):
        out["statusMessage"] = task["message"]
    if task["modern"]:
        out["ttlMs"] = 60000
        if task["poll_ms"] is not None:
            out["pollIntervalMs"] = task["poll_ms"]
        if task["status"] == "completed":
            out["result"] = task["result"]
        elif task["status"] == "failed":
            out["error"] = task["error"]
        elif task["status"] == "input_required":
            out["inputRequests"] = {k: v for k, v in task["asks"].items() if k not in task["answers"]}
    else:
        out["ttl"] = 60000
        if task["poll_ms"] is not None:
            out["pollInterval"] = task["poll_ms"]
    return out


def set_status(task, status, message=None, **fields):
    with lock:
        if task["status"] in ("completed", "failed", "cancelled"):
            return
        task.update(status=status, message=message, updated=now(), **fields)
        lock.notify_all()
    if CFG.get("push") and not HTTP:
        if not task["modern"]:
            write({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": public(task)})
        elif task["id"] in listens:
            params = dict(public(task), _meta={SUB: listens[task["id"]]})
            write({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params})


def run_work(task, args):
    deadline = time.monotonic() + float(args.get("s", 0.5))
    every, step = args.get("every"), 0  # a status message "step N" every ``every`` seconds
    with lock:
        while time.monotonic() < deadline and task["status"] != "cancelled":
            lock.wait(min(deadline - time.monotonic(), every) if every else deadline - time.monotonic())
            if every and time.monotonic() < deadline and task["status"] == "working":
                step += 1
                set_status(task, "working", "step %d" % step)
    outcome = args.get("outcome", "ok")
    if outcome == "fail":
        set_status(task, "failed", "the work broke", error=rpc_error(-32603, "the work broke", {"step": 3}))
    elif outcome == "tool_error":
        result = {"content": [{"type": "text", "text": "the tool gave up"}], "isError": True}
        set_status(task, "completed" if task["modern"] else "failed", "gave up", result=result)
    else:
        slept = args.get("s", 0.5)
        result = {"content": [{"type": "text", "text": json.dumps({"slept": slept})}],
                  "structuredContent": {"slept": slept}}
        set_status(task, "completed", "done", result=result)


def run_ask(task, args):
    if task["modern"]:
        asks = {"name": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Your name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}
        if args.get("url"):
            asks["site"] = {"method": "elicitation/create", "params": {
                "mode": "url", "message": "Sign in, please", "url": "https://example.com/sign-in?t=1"}}
        task["asks"] = asks
        set_status(task, "input_required", "waiting for you")
        with lock:
            while task["status"] == "input_required" and set(task["answers"]) != set(asks):
                lock.wait()
        answers = dict(task["answers"])
    else:
        set_status(task, "input_required", "waiting for you")
        with lock:  # the elicitation goes out on the tasks/result call (see tasks_result)
            while task["status"] == "input_required" and "name" not in task["answers"]:
                lock.wait()
        answers = dict(task["answers"])
    set_status(task, "working", "thanks")
    result = {"content": [{"type": "text", "text": json.dumps(answers)}],
              "structuredContent": {"answers": answers}}
    set_status(task, "completed", "done", result=result)


def make_task(name, args, modern):
    poll = args.get("poll_ms", 200)
    task = {"id": "task-%d-%s" % (next(ids), "m" if modern else "l"), "status": "working", "created": now(),
            "updated": now(), "message": args.get("message", "starting"), "modern": modern, "poll_ms": poll,
            "answers": {}, "asks": {}, "name": name, "elicited": False}
    tasks[task["id"]] = task
    target = run_ask if name == "ask" else run_work
    threading.Thread(target=target, args=(task, args), daemon=True).start()
    return task


def find(params):
    task = tasks.get(params.get("taskId"))
    if task is None:
        raise Fail(-32602, "Task not found: %s" % params.get("taskId"))
    return task


def tasks_result(task):
    """2025-11-25: block until the task ends; serve its input on the way (stdio)."""
    with lock:
        while task["status"] == "working":
            lock.wait()
    if task["status"] == "input_required" and task["name"] == "ask" and not HTTP and not task["elicited"]:
        task["elicited"] = True
        answer = ask_client("elicitation/create", {
            "mode": "form", "message": "Your name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}},
            "_meta": {RELATED: {"taskId": task["id"]}}})
        task["elicit_answer"] = answer
        with lock:
            task["answers"]["name"] = answer.get("result")
            lock.notify_all()
    with lock:
        while task["status"] not in ("completed", "failed", "cancelled"):
            lock.wait()
    if task["status"] == "failed" and task.get("error"):
        raise Fail(task["error"]["code"], task["error"]["message"], task["error"].get("data"))
    if task["status"] == "cancelled":
        raise Fail(-32603, "the task was cancelled")
    return dict(task["result"], _meta={RELATED: {"taskId": task["id"]}})


def ask_client(method, params):
    rid = "srv-%d" % next(ids)
    slot = waiting[rid] = [threading.Event(), None]
    write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    slot[0].wait(30)
    return slot[1] or {}


# -- requests ----------------------------------------------------------------------

TOOLS = [
    {"name": "work", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
    {"name": "ask", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
    {"name": "maybe", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
    {"name": "echo", "inputSchema": {"type": "object"}},
    {"name": "needs_url", "inputSchema": {"type": "object"}},
    {"name": "visit", "inputSchema": {"type": "object"}},
]


def handle(method, params, rid):
    """The result of a request, or raises Fail.  ``rid`` names a listen stream (stdio)."""
    modern = is_modern(params)
    if method == "server/discover":
        if not CFG.get("modern", True):
            raise Fail(-32601, "Method not found")
        caps = {"tools": {}}
        if CFG.get("ext", True):
            caps["extensions"] = {EXT: {}}
        return {"supportedVersions": [MODERN, "2025-11-25"], "capabilities": caps,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "task-server", "version": "1"}}}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion"), "serverInfo": {"name": "task-server", "version": "1"},
                "capabilities": {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}}
    if method == "ping":
        return {}
    if method == "tools/list":
        tools = [dict(t) if not modern else {k: v for k, v in t.items() if k != "execution"} for t in TOOLS]
        for t in tools:
            if CFG.get("output_schema") and t["name"] in ("work", "maybe"):
                t["outputSchema"] = CFG["output_schema"]
        return {"tools": tools}
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "echo":
            return {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}
        if name == "needs_url":
            url_calls[0] += 1
            if url_calls[0] == 1:
                if not HTTP:
                    threading.Timer(0.05, write, ({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                                                   "params": {"elicitationId": "e-1"}},)).start()
                raise Fail(-32042, "Please sign in first", {"elicitations": [{
                    "mode": "url", "elicitationId": "e-1", "url": "https://example.com/connect?s=42",
                    "message": "Connect your account"}]})
            return {"content": [], "structuredContent": {"calls": url_calls[0]}}
        if name == "visit":
            answer = ask_client("elicitation/create", {"mode": "url", "message": "Look here",
                                                       "url": "https://example.com/look", "elicitationId": "v-1"})
            return {"content": [], "structuredContent": answer.get("result") or answer}
        if name in ("work", "ask", "maybe"):
            if modern:
                if not declared_ext(params):
                    raise Fail(-32021, "Missing required client capability",
                               {"requiredCapabilities": {"extensions": {EXT: {}}}})
                return dict(public(make_task(name, args, True)), resultType="task")
            if "task" not in params:
                if name == "maybe":
                    return {"content": [{"type": "text", "text": "ran at once"}], "structuredContent": {"task": False}}
                raise Fail(-32601, "tool %s needs task augmentation" % name)
            return {"task": public(make_task(name, args, False))}
        raise Fail(-32602, "unknown tool %s" % name)
    if method == "tasks/get":
        return public(find(params))
    if method == "tasks/result" and not modern:
        return tasks_result(find(params))
    if method == "tasks/update" and modern:
        task = find(params)
        with lock:
            for key, value in (params.get("inputResponses") or {}).items():
                if key in task["asks"]:
                    task["answers"][key] = value
            lock.notify_all()
        return {}
    if method == "tasks/cancel":
        task = find(params)
        with lock:
            ended = task["status"] in ("completed", "failed", "cancelled")
        if ended and not modern:
            raise Fail(-32602, "Task %s already ended" % task["id"])
        if not ended:
            set_status(task, "cancelled", "cancelled on request")
        return {} if modern else public(task)
    if method == "subscriptions/listen" and modern and not HTTP:
        wanted = (params.get("notifications") or {}).get("taskIds") or []
        granted = [t for t in wanted if t in tasks] if CFG.get("push") else []
        for t in granted:
            listens[t] = rid
        write({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"notifications": {"taskIds": granted} if granted else {}, "_meta": {SUB: rid}}})
        return None  # stays open
    raise Fail(-32601, "Method not found: %s" % method)


def answer(rid, method, params):
    """The response message for a request (None for an open listen)."""
    try:
        result = handle(method, params, rid)
        if result is None:
            return None
        if is_modern(params):
            result.setdefault("resultType", "complete")
        return {"jsonrpc": "2.0", "id": rid, "result": result}
    except Fail as e:
        return {"jsonrpc": "2.0", "id": rid, "error": e.error}


# -- stdio ---------------------------------------------------------------------------

def serve_stdio():
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        record(msg)
        method, rid = msg.get("method"), msg.get("id")
        if method is None:
            slot = waiting.get(rid)
            if slot is not None:
                slot[1] = msg
                slot[0].set()
            continue
        if rid is None:
            if method == "notifications/cancelled":
                rid_gone = (msg.get("params") or {}).get("requestId")
                for t, listen_id in list(listens.items()):
                    if listen_id == rid_gone:
                        listens.pop(t, None)
            continue

        def run(rid=rid, method=method, params=msg.get("params") or {}):
            reply = answer(rid, method, params)
            if reply is not None:
                write(reply)
        threading.Thread(target=run, daemon=True).start()


# -- HTTP ---------------------------------------------------------------------------

def serve_http():
    # The tests directory: not always sys.path[0] (the Windows embeddable Python's ._pth file
    # leaves a script's directory out).
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from testsupport import HttpTestServer

    def post(request, msg):
        headers = {k.lower(): v for k, v in request.headers.items()}
        record({"headers": headers, "msg": msg})
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method is None or rid is None:
            return request.reply(202)
        if is_modern(params):
            name = params.get("taskId") if method.startswith("tasks/") else None
            if headers.get("mcp-method") != method or (name is not None and headers.get("mcp-name") != name):
                body = {"jsonrpc": "2.0", "id": rid, "error": rpc_error(-32020, "header mismatch")}
                return request.reply(400, json.dumps(body).encode())
        reply = answer(rid, method, params)
        extra = [("Mcp-Session-Id", "s-1")] if method == "initialize" else []
        status = 404 if "error" in reply and reply["error"]["code"] == -32601 and is_modern(params) else 200
        request.reply(status, json.dumps(reply).encode(), extra)

    server = HttpTestServer(post=post)  # GET: 405 (no stream); DELETE: 200
    sys.stderr.write("listening on %s\n" % server.url)
    sys.stderr.flush()
    server.thread.join()  # serves until the process is ended


if __name__ == "__main__":
    serve_http() if HTTP else serve_stdio()
