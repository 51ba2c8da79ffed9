#!/usr/bin/env python3
"""tour: the calc example server plus one of everything else MCP offers, so that
every command of ``python -m mcp_min`` has something to try on a fresh clone.

On top of calc's tools (add, subtract, multiply, divide, greet) it offers:

* a resource, ``calc://constants`` (pi, e, tau as JSON);
* a resource template, ``calc://table/{n}`` (the multiplication table of n);
* a prompt, ``explain(expression, level?)``;
* completions for the template's ``n`` and the prompt's ``level``;
* ``count(to, seconds?)``, a slow tool that may run as a task: handshake era
  (2025-11-25) with ``execution.taskSupport: optional``; stateless era
  (2026-07-28) through the io.modelcontextprotocol/tasks extension.

Try it:

    python -m mcp_min resources -- python examples/tour.py
    python -m mcp_min read calc://table/7 -- python examples/tour.py
    python -m mcp_min prompt explain expression="2 + 3" -- python examples/tour.py
    python -m mcp_min complete explain level=b -- python examples/tour.py
    python -m mcp_min --task call count to=3 -- python examples/tour.py

It runs like calc (stdio, or ``--http [PORT]``), speaks both protocol eras, and
uses only the standard library.  calc.py itself stays the minimal server.
"""

import itertools
import json
import math
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calc  # noqa: E402  (this file extends calc's dispatch; see install() at the end)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASK_TTL_MS = 600000       # a finished task's result is kept ten minutes
TASK_POLL_MS = 200         # how often a client is asked to poll tasks/get
MAX_COUNT_SECONDS = 60.0   # count never runs longer than this, whatever it is asked
MAX_TABLE = 1000           # calc://table/{n} refuses larger tables

CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
RESOURCES = [{"uri": "calc://constants", "name": "constants", "title": "Mathematical constants",
              "description": "pi, e and tau as JSON.", "mimeType": "application/json"}]
TEMPLATES = [{"uriTemplate": "calc://table/{n}", "name": "table", "title": "Multiplication table",
              "description": "The multiplication table of n (1 to 10 times n).", "mimeType": "text/plain"}]
LEVELS = ["beginner", "intermediate", "expert"]
PROMPTS = [{"name": "explain", "title": "Explain a calculation",
            "description": "Ask the model to explain how to compute an expression.",
            "arguments": [{"name": "expression", "description": "what to compute, e.g. 2 + 3", "required": True},
                          {"name": "level", "description": "one of: " + ", ".join(LEVELS), "required": False}]}]
COUNT_TOOL = {
    "name": "count", "title": "Count slowly",
    "description": "Count from 1 to `to`, taking `seconds` in all; may run as a task.",
    "inputSchema": {"type": "object",
                    "properties": {"to": {"type": "integer", "description": "the last number"},
                                   "seconds": {"type": "number", "default": 2,
                                               "description": "how long the whole count takes"}},
                    "required": ["to"]},
    "execution": {"taskSupport": "optional"},
}


# ------------------------------------------------------ resources, prompts ----

def read_resource(params):
    uri = params.get("uri")
    if uri == "calc://constants":
        return {"contents": [{"uri": uri, "mimeType": "application/json", "text": json.dumps(CONSTANTS)}]}
    if isinstance(uri, str) and uri.startswith("calc://table/"):
        n = uri[len("calc://table/"):]
        if n.lstrip("-").isdigit() and abs(int(n)) <= MAX_TABLE:
            rows = ["%2d x %d = %d" % (i, int(n), i * int(n)) for i in range(1, 11)]
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "\n".join(rows)}]}
    raise calc.RpcError(-32002, "Resource not found", {"uri": uri})


def get_prompt(params):
    if params.get("name") != "explain":
        raise calc.RpcError(-32602, "Unknown prompt: %s" % (params.get("name"),))
    args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    expression = args.get("expression")
    if not isinstance(expression, str) or not expression:
        raise calc.RpcError(-32602, "explain needs the argument expression")
    level = args.get("level") or "beginner"
    text = "Explain, for %s %s, how to compute %s step by step." % (
        "an" if level[:1].lower() in "aeiou" else "a", level, expression)
    return {"description": "Explain %s" % expression,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}


def complete(params):
    ref = params.get("ref") if isinstance(params.get("ref"), dict) else {}
    argument = params.get("argument") if isinstance(params.get("argument"), dict) else {}
    prefix = str(argument.get("value") or "")
    if ref.get("type") == "ref/prompt" and ref.get("name") == "explain" and argument.get("name") == "level":
        values = LEVELS
    elif ref.get("type") == "ref/resource" and ref.get("uri") == "calc://table/{n}" and argument.get("name") == "n":
        values = [str(i) for i in range(1, 13)]
    else:
        values = []
    found = [v for v in values if v.startswith(prefix)]
    return {"completion": {"values": found, "total": len(found), "hasMore": False}}


# ---------------------------------------------------------------- tasks ----

class Tasks(object):
    """The tasks of this process: count runs on its own thread, tasks/* read its state."""

    def __init__(self):
        self.lock = threading.Condition()
        self.tasks = {}
        self.ids = itertools.count(1)

    def start(self, args, modern):
        to, seconds = count_arguments(args)
        now = stamp()
        task = {"taskId": "count-%d" % next(self.ids), "status": "working", "createdAt": now,
                "lastUpdatedAt": now, "statusMessage": "starting", "modern": modern}
        with self.lock:
            self.tasks[task["taskId"]] = task
        threading.Thread(target=self.run, args=(task, to, seconds), daemon=True).start()
        return self.public(task)

    def run(self, task, to, seconds):
        for i in range(1, to + 1):
            with self.lock:
                self.lock.wait_for(lambda: task["status"] == "cancelled", seconds / to)
                if task["status"] == "cancelled":
                    return
                task.update(statusMessage="%d of %d" % (i, to), lastUpdatedAt=stamp())
        with self.lock:
            if task["status"] != "cancelled":
                task.update(status="completed", statusMessage="done", lastUpdatedAt=stamp(),
                            result=count_result(to))
            self.lock.notify_all()

    def public(self, task):
        """The task as its era shows it (2026-07-28: the result inside tasks/get)."""
        out = {k: task[k] for k in ("taskId", "status", "createdAt", "lastUpdatedAt", "statusMessage")}
        if task["modern"]:
            out.update(ttlMs=TASK_TTL_MS, pollIntervalMs=TASK_POLL_MS)
            if task["status"] == "completed":
                out["result"] = task["result"]
        else:
            out.update(ttl=TASK_TTL_MS, pollInterval=TASK_POLL_MS)
        return out

    def find(self, params):
        task = self.tasks.get(params.get("taskId"))
        if task is None:
            raise calc.RpcError(-32602, "Task not found: %s" % (params.get("taskId"),))
        return task

    def get(self, params):
        with self.lock:
            return self.public(self.find(params))

    def result(self, params):
        """2025-11-25 tasks/result: wait for the end, then the tool's result."""
        task = self.find(params)
        with self.lock:
            self.lock.wait_for(lambda: task["status"] in ("completed", "cancelled"), MAX_COUNT_SECONDS)
            if task["status"] != "completed":
                raise calc.RpcError(-32603, "task %s was %s" % (task["taskId"], task["status"]))
            return dict(task["result"], _meta={"io.modelcontextprotocol/related-task": {"taskId": task["taskId"]}})

    def cancel(self, params):
        task = self.find(params)
        with self.lock:
            if task["status"] == "working":
                task.update(status="cancelled", statusMessage="cancelled", lastUpdatedAt=stamp())
                self.lock.notify_all()
            elif not task["modern"]:
                raise calc.RpcError(-32602, "Task %s already ended" % task["taskId"])
            return {} if task["modern"] else self.public(task)

    def list(self, params):
        with self.lock:
            return {"tasks": [self.public(t) for t in self.tasks.values() if not t["modern"]]}


TASKS = Tasks()


def stamp():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def count_arguments(args):
    to, seconds = args.get("to"), args.get("seconds", 2)
    if not isinstance(to, int) or isinstance(to, bool) or not 1 <= to <= 1000:
        raise calc.RpcError(-32602, "count: to must be an integer from 1 to 1000")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0 <= seconds <= MAX_COUNT_SECONDS:
        raise calc.RpcError(-32602, "count: seconds must be a number from 0 to %g" % MAX_COUNT_SECONDS)
    return to, float(seconds)


def count_result(to):
    return {"content": [{"type": "text", "text": json.dumps({"counted": to})}], "structuredContent": {"counted": to}}


def count_now(args):
    """count without a task: the call itself takes the time."""
    to, seconds = count_arguments(args)
    time.sleep(seconds)
    return count_result(to)


# -------------------------------------------- the two eras, around calc's ----

LEGACY_CAPABILITIES = {"resources": {}, "prompts": {}, "completions": {},
                       "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
MODERN_CAPABILITIES = {"resources": {}, "prompts": {}, "completions": {}, "extensions": {TASKS_EXTENSION: {}}}
LISTS = {"resources/list": ("resources", RESOURCES), "resources/templates/list": ("resourceTemplates", TEMPLATES),
         "prompts/list": ("prompts", PROMPTS)}
REQUESTS = {"resources/read": read_resource, "prompts/get": get_prompt, "completion/complete": complete}


def handle_legacy(method, params, conn, emit):
    if conn.version is not None and method in LISTS:
        key, items = LISTS[method]
        return {key: items}
    if conn.version is not None and method in REQUESTS:
        return REQUESTS[method](params)
    if conn.version is not None and method == "tools/call" and params.get("name") == "count":
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        if isinstance(params.get("task"), dict):
            return {"task": TASKS.start(args, False)}
        return count_now(args)
    tasks = {"tasks/get": TASKS.get, "tasks/result": TASKS.result, "tasks/cancel": TASKS.cancel,
             "tasks/list": TASKS.list}
    if conn.version is not None and method in tasks:
        return tasks[method](params)
    result = CALC_LEGACY(method, params, conn, emit)
    if method == "initialize":
        added = dict(LEGACY_CAPABILITIES)
        if conn.version < "2025-11-25":  # tasks came with 2025-11-25 (ISO dates compare as strings)
            del added["tasks"]
        result["capabilities"] = dict(result["capabilities"], **added)
    elif method == "tools/list":
        result = {"tools": result["tools"] + [COUNT_TOOL]}
    return result


def handle_modern(method, params):
    caps = params["_meta"].get(calc.META_CAPS)
    mine = method in LISTS or method in REQUESTS or method in ("tasks/get", "tasks/cancel") or (
        method == "tools/call" and params.get("name") == "count")
    if not mine or params["_meta"].get(calc.META_VERSION) != calc.MODERN or not isinstance(caps, dict):
        result = CALC_MODERN(method, params)  # (which also refuses a wrong version or missing _meta)
        if method == "server/discover":
            result["capabilities"] = dict(result["capabilities"], **MODERN_CAPABILITIES)
        elif method == "tools/list":
            result["tools"] = result["tools"] + [{k: v for k, v in COUNT_TOOL.items() if k != "execution"}]
        return result
    if method in LISTS:
        key, items = LISTS[method]
        result = {key: items, "ttlMs": calc.CACHE_TTL_MS, "cacheScope": "public"}
    elif method in REQUESTS:
        result = REQUESTS[method](params)
    elif method == "tasks/get":
        result = TASKS.get(params)
    elif method == "tasks/cancel":
        result = TASKS.cancel(params)
    else:
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        if TASKS_EXTENSION in (caps.get("extensions") or {}):
            result = dict(TASKS.start(args, True), resultType="task")
        else:
            result = count_now(args)
    result.setdefault("resultType", "complete")
    result["_meta"] = {calc.META_SERVER_INFO: TOUR_INFO}
    return result


TOUR_INFO = {"name": "tour", "version": "1.0.0"}
CALC_LEGACY, CALC_MODERN = calc.handle_legacy, calc.handle_modern


def install():
    """calc dispatches through its module's handle_legacy / handle_modern: point them at ours,
    which answer what tour adds and hand everything else to calc's own."""
    calc.handle_legacy, calc.handle_modern = handle_legacy, handle_modern
    calc.SERVER_INFO.update(TOUR_INFO)
    calc.INSTRUCTIONS = "calc's tools plus a resource, a template, a prompt, completions and a slow task."


if __name__ == "__main__":
    install()
    calc.main()
