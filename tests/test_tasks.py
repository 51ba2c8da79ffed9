"""Tasks (2025-11-25 core, 2026-07-28 extension io.modelcontextprotocol/tasks) and URL-mode
elicitation, against the purpose-built server in tests/task_server.py (stdio and HTTP).

Run with:  python -m pytest -q tests/test_tasks.py
Every message the client sends is validated against the JSON schema of its protocol version
(2026-07-28 tasks/* against the extension's sub-schema in tests/schema/, merged into the core one).
"""
import json
import os
import pickle
import subprocess
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import mcp_min  # noqa: E402
from testsupport import NO_SITE, UNDER_WINE, WINE_SLOW_START, cli_argv, wait_for  # noqa: E402
from mcp_min import (Client, McpError, RequestCancelled, RequestError, RequestTimeout, ToolError,  # noqa: E402
                     UrlElicitationRequired)

PY = sys.executable
SERVER = os.path.join(HERE, "task_server.py")
SCHEMAS = os.path.join(HERE, "schema")  # vendored official schemas (tests/schema/README.md)
EXT_SCHEMA = os.path.join(HERE, "schema", "ext-tasks-2026-07-28.json")
EXT = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
ERAS = ["2025-11-25", "2026-07-28"]




class Log(object):
    """What the server received (tests/task_server.py appends one JSON line per message)."""

    def __init__(self, path):
        self.path = path

    def entries(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def messages(self):
        return [e["msg"] if "headers" in e else e for e in self.entries()]

    def requests(self, method):
        return [m for m in self.messages() if m.get("method") == method and "id" in m]


@pytest.fixture
def server(tmp_path):
    """server(**cfg) -> (argv, Log) of a stdio task server."""
    def make(**cfg):
        cfg.setdefault("log", str(tmp_path / ("received-%d.jsonl" % len(os.listdir(str(tmp_path))))))
        return [PY, *NO_SITE, SERVER, json.dumps(cfg)], Log(cfg["log"])  # NO_SITE: see testsupport
    return make


@pytest.fixture
def http_server(tmp_path):
    """http_server(**cfg) -> (url, Log) of a task server over Streamable HTTP (stopped at teardown)."""
    procs = []

    def make(**cfg):
        cfg.setdefault("log", str(tmp_path / ("http-%d.jsonl" % len(procs))))
        proc = subprocess.Popen([PY, *NO_SITE, SERVER, json.dumps(cfg), "--http"], stderr=subprocess.PIPE,
                                stdout=subprocess.DEVNULL)
        procs.append(proc)
        line = proc.stderr.readline().decode()
        assert "listening on" in line, line
        return line.split("listening on", 1)[1].strip(), Log(cfg["log"])
    yield make
    for proc in procs:
        proc.kill()
        proc.wait(10)
        proc.stderr.close()


def client(argv, version, **kw):
    return Client(argv, protocol_version="auto" if version == "2026-07-28" else version, **kw)


class Statuses(object):
    """A progress callback that keeps the messages (task status changes arrive there)."""

    def __init__(self):
        self.messages = []

    def __call__(self, done, total, message):
        self.messages.append(message)


# ---------------------------------------------------------------------------
# Following a task: polling, outcome
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("version", ERAS)
def test_required_task_is_followed_at_the_servers_poll_interval(server, version):
    argv, log = server()
    seen = Statuses()
    with client(argv, version) as c:
        assert c.protocol_version == version
        start = time.monotonic()
        assert c.call("work", s=1.0, poll_ms=200, progress=seen) == {"slept": 1.0}
        took = time.monotonic() - start
    call = log.requests("tools/call")[0]["params"]
    if version == "2025-11-25":
        assert call["task"] == {}  # asked for, because tools/list says taskSupport "required"
        assert len(log.requests("tasks/result")) == 1
    else:
        assert "task" not in call and not log.requests("tasks/result")
    polls = len(log.requests("tasks/get"))
    # 1 s of work, a poll every 0.2 s: about 5 polls; a client ignoring the interval makes hundreds.
    assert 2 <= polls <= took / 0.2 + 2, (polls, took)
    assert seen.messages[0] == "task working: starting" and seen.messages[-1] == "task completed: done"


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("poll_ms", [0, None])
def test_polling_never_spins(server, version, poll_ms):
    """pollInterval 0 is raised to the floor; without one the wait backs off from the floor."""
    argv, log = server()
    with client(argv, version) as c:
        start = time.monotonic()
        assert c.call("work", s=0.8, poll_ms=poll_ms) == {"slept": 0.8}
        took = time.monotonic() - start
    polls = len(log.requests("tasks/get"))
    assert 1 <= polls <= took / mcp_min.TASK_POLL_FLOOR + 2, (polls, took)
    if poll_ms is None:
        assert polls <= 6  # 0.1 + 0.2 + 0.4 + 0.8 ... covers 0.8 s in a handful of polls


@pytest.mark.parametrize("version", ERAS)
def test_deadline_cancels_the_task(server, version):
    argv, log = server()
    with client(argv, version) as c:
        start = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            c.call("work", s=30, poll_ms=100, timeout=0.5)
        assert time.monotonic() - start < 5
        assert "task cancelled" in str(info.value)
        task_id = log.requests("tasks/get")[0]["params"]["taskId"]
        assert wait_for(lambda: [m for m in log.requests("tasks/cancel") if m["params"]["taskId"] == task_id])
        assert c.call("echo", x=1) == {"x": 1}  # the client stays usable
    assert not log.requests("notifications/cancelled") or version == "2025-11-25"


@pytest.mark.parametrize("version", ERAS)
def test_failed_task_raises_its_json_rpc_error(server, version):
    argv, _ = server()
    with client(argv, version) as c:
        with pytest.raises(RequestError) as info:
            c.call("work", s=0.1, outcome="fail")
    assert info.value.code == -32603 and info.value.message == "the work broke"
    assert info.value.data == {"step": 3} and info.value.method == "tools/call"


@pytest.mark.parametrize("version", ERAS)
def test_task_result_with_is_error_raises_tool_error(server, version):
    argv, _ = server()
    with client(argv, version) as c:
        with pytest.raises(ToolError, match="the tool gave up") as info:
            c.call("work", s=0.1, outcome="tool_error")
        assert info.value.result["isError"] is True
        raw = c.call_tool("work", {"s": 0.1, "outcome": "tool_error"})
        assert raw["isError"] is True and raw["content"][0]["text"] == "the tool gave up"


@pytest.mark.skipif(UNDER_WINE, reason=WINE_SLOW_START)
@pytest.mark.parametrize("version", ERAS)
def test_no_deadline_when_timeout_is_none(server, version):
    """timeout=None: the task may take longer than the client's timeout; each poll keeps its own.
    (The client's timeout also bounds starting the server: 2 s leaves room for PyPy on a loaded machine.)"""
    argv, _ = server()
    with client(argv, version, timeout=2.0) as c:
        assert c.call("work", s=2.4, poll_ms=100, timeout=None) == {"slept": 2.4}
        with pytest.raises(RequestTimeout):
            c.call("work", s=2.4, poll_ms=100)  # the client's 2 s bounds the whole task


@pytest.mark.parametrize("version", ERAS)
def test_submit_future_follows_the_task_and_cancel_cancels_it(server, version):
    argv, log = server()
    with client(argv, version) as c:
        fut = c.submit("work", s=30, poll_ms=100)
        assert wait_for(lambda: log.requests("tasks/get"))
        assert not fut.done()  # the Future stands for the whole task, not its creation
        assert fut.cancel() is True
        with pytest.raises(RequestCancelled):
            fut.result()
        assert len(log.requests("tasks/cancel")) == 1
        fut = c.submit("work", s=0.2, poll_ms=50)
        assert fut.result(10) == {"slept": 0.2}


# ---------------------------------------------------------------------------
# The handle: start(), status(), result(), cancel(), re-attach
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("version", ERAS)
def test_start_gives_a_handle(server, version):
    argv, log = server()
    with client(argv, version) as c:
        task = c.start("work", s=30, poll_ms=100)
        assert isinstance(task.id, str) and task.status()["status"] == "working"
        with pytest.raises(RequestTimeout, match="goes on"):
            task.result(timeout=0.3)  # only this wait ends; the task keeps running
        assert task.status()["status"] == "working" and not log.requests("tasks/cancel")
        assert task.cancel() is True
        with pytest.raises(RequestCancelled):
            task.result()
        assert task.cancel() is False
        done = c.start("work", s=0.2, poll_ms=50)
        assert done.result() == {"slept": 0.2}
        assert done.status()["status"] == "completed"


def test_start_asks_for_a_task_only_where_the_tool_allows_it(server):
    argv, log = server()
    with client(argv, "2025-11-25") as c:
        task = c.start("maybe", s=0.1, poll_ms=50, ttl=90)
        assert task.id is not None and task.result() == {"slept": 0.1}
        assert c.call("maybe") == {"task": False}  # optional: call() does not ask
        at_once = c.start("echo", x=2)  # forbidden: no task; the handle holds the answer
        assert at_once.id is None and at_once.result() == {"x": 2} and at_once.status() == {"status": "completed"}
    calls = log.requests("tools/call")
    assert calls[0]["params"]["task"] == {"ttl": 90000}
    assert "task" not in calls[1]["params"] and "task" not in calls[2]["params"]


@pytest.mark.parametrize("version", ERAS)
def test_reattach_by_id_from_a_second_client(http_server, version):
    url, log = http_server()
    with client(url, version) as first:
        task_id = first.start("work", s=0.5, poll_ms=50).id
    with client(url, version) as second:  # e.g. a later process
        task = second.task(task_id)
        assert task.status()["status"] in ("working", "completed")
        assert task.result() == {"slept": 0.5}
        with pytest.raises(RequestError) as info:
            second.task("no-such-task").result()
        assert info.value.code == -32602
    if version == "2026-07-28":  # every tasks/* POST names the task in Mcp-Name
        posts = [e for e in log.entries() if e["msg"].get("method", "").startswith("tasks/")]
        assert posts and all(e["headers"]["mcp-name"] == e["msg"]["params"]["taskId"] and
                             e["headers"]["mcp-method"] == e["msg"]["method"] for e in posts)


def test_task_over_http_cancel_and_deadline(http_server):
    url, log = http_server()
    with Client(url) as c:
        with pytest.raises(RequestTimeout):
            c.call("work", s=30, poll_ms=100, timeout=0.4)
        assert wait_for(lambda: log.requests("tasks/cancel"))
        task = c.start("work", s=30)
        assert task.cancel() is True and task.status()["status"] == "cancelled"


# ---------------------------------------------------------------------------
# Input while a task runs
# ---------------------------------------------------------------------------

def test_input_required_2025_goes_through_the_elicitation_callback(server):
    argv, log = server()
    asked = []

    def elicitation(params):
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    with client(argv, "2025-11-25", elicitation=elicitation) as c:
        out = c.call("ask", poll_ms=50)
    task_id = log.requests("tasks/result")[0]["params"]["taskId"]
    assert asked[0]["_meta"][RELATED] == {"taskId": task_id}
    assert out["answers"]["name"]["content"] == {"name": "Ada"}
    answer = [m for m in log.messages() if "result" in m and str(m.get("id")).startswith("srv-")][0]
    assert answer["result"]["_meta"][RELATED] == {"taskId": task_id}  # our answer is tagged too


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_input_required_2026_answered_with_tasks_update(server, http_server, transport):
    target, log = server() if transport == "stdio" else http_server()
    forms, urls = [], []

    def elicitation(params):
        forms.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    def url_elicitation(params):
        urls.append(params)
        return {"action": "accept"}

    with Client(target, elicitation=elicitation, url_elicitation=url_elicitation) as c:
        out = c.call("ask", url=True, poll_ms=50)
    assert out["answers"] == {"name": {"action": "accept", "content": {"name": "Ada"}}, "site": {"action": "accept"}}
    assert len(forms) == 1 and forms[0]["mode"] == "form"
    assert len(urls) == 1 and urls[0]["url"] == "https://example.com/sign-in?t=1"
    updates = log.requests("tasks/update")
    assert len(updates) == 1 and set(updates[0]["params"]["inputResponses"]) == {"name", "site"}


def test_input_the_client_cannot_give_fails_the_call_and_cancels(server):
    argv, log = server()
    with Client(argv) as c:  # no elicitation callback
        with pytest.raises(McpError, match="cannot give"):
            c.call("ask", poll_ms=50)
    assert wait_for(lambda: log.requests("tasks/cancel"))


def test_a_raising_callback_fails_the_task_with_an_mcp_error_not_its_own(server):
    """2026-07-28: a task's input requests are answered as a plain result's are, so a user's
    callback that raises ends Task.result() and call() with an McpError that names it."""
    argv, log = server()

    def elicitation(params):
        raise RuntimeError("boom")

    with Client(argv, elicitation=elicitation) as c:
        assert c.protocol_version == "2026-07-28"
        for attempt in (lambda: c.start("ask", poll_ms=50).result(), lambda: c.call("ask", poll_ms=50)):
            with pytest.raises(McpError, match="RuntimeError: boom"):
                attempt()
    assert not log.requests("tasks/update")  # nothing was answered
    assert wait_for(lambda: log.requests("tasks/cancel"))  # call() gives its task up, as for input it cannot give


# ---------------------------------------------------------------------------
# Pushed status
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("version", ERAS)
def test_pushed_status_ends_the_wait_early(server, version):
    """A server suggesting 10 s between polls, but pushing status: the end is seen at once."""
    argv, log = server(push=True)
    with client(argv, version) as c:
        start = time.monotonic()
        assert c.call("work", s=0.3, poll_ms=10000) == {"slept": 0.3}
        assert time.monotonic() - start < 5  # (polling alone would take 10 s)
    assert not log.requests("tasks/get")
    if version == "2026-07-28":
        listen = log.requests("subscriptions/listen")
        assert listen[0]["params"]["notifications"] == {"taskIds": [listen[0]["params"]["notifications"]["taskIds"][0]]}


def test_2026_without_push_listens_once_then_only_polls(server):
    argv, log = server()
    with Client(argv) as c:
        assert c.call("work", s=0.3, poll_ms=100) == {"slept": 0.3}
        assert c.call("work", s=0.3, poll_ms=100) == {"slept": 0.3}
    assert len(log.requests("subscriptions/listen")) == 1  # the server acknowledged no taskIds


# ---------------------------------------------------------------------------
# URL-mode elicitation (2025-11-25)
# ---------------------------------------------------------------------------

def test_url_elicitation_required_raises_without_a_callback(server):
    argv, log = server()
    notes = []
    with client(argv, "2025-11-25", on_notification=lambda m, p: notes.append((m, p))) as c:
        with pytest.raises(UrlElicitationRequired) as info:
            c.call("needs_url")
        assert wait_for(lambda: notes)
    err = info.value
    assert isinstance(err, RequestError) and err.code == -32042
    assert err.elicitations == [{"mode": "url", "elicitationId": "e-1", "url": "https://example.com/connect?s=42",
                                 "message": "Connect your account"}]
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is UrlElicitationRequired and copy.elicitations == err.elicitations
    assert (copy.code, copy.message, copy.method) == (-32042, "Please sign in first", "tools/call")
    assert notes == [("notifications/elicitation/complete", {"elicitationId": "e-1"})]
    assert len(log.requests("tools/call")) == 1


def test_url_elicitation_required_with_a_callback_retries_once(server):
    argv, log = server()
    seen = []

    def url_elicitation(params):
        seen.append(params)
        return {"action": "accept"}

    with client(argv, "2025-11-25", url_elicitation=url_elicitation) as c:
        assert c.call("needs_url") == {"calls": 2}
    assert [p["elicitationId"] for p in seen] == ["e-1"] and seen[0]["mode"] == "url"
    assert len(log.requests("tools/call")) == 2
    declined_argv, declined_log = server()
    with client(declined_argv, "2025-11-25", url_elicitation=lambda p: {"action": "decline"}) as c:
        with pytest.raises(UrlElicitationRequired):
            c.call("needs_url")  # the user said no: no retry
    assert len(declined_log.requests("tools/call")) == 1


@pytest.mark.parametrize("callbacks, declared, answer", [
    ({"url_elicitation": lambda p: {"action": "accept"}}, {"url": {}}, {"action": "accept"}),
    ({"elicitation": lambda p: {"action": "accept", "content": {}}}, {"form": {}}, -32602),
    ({"elicitation": lambda p: {"action": "decline"}, "url_elicitation": lambda p: {"action": "decline"}},
     {"form": {}, "url": {}}, {"action": "decline"}),
])
def test_url_mode_requests_go_to_url_elicitation_only(server, callbacks, declared, answer):
    argv, log = server()
    with client(argv, "2025-11-25", **callbacks) as c:
        if isinstance(answer, dict):
            assert c.call("visit") == answer
        else:
            c.call("visit")
    init = log.requests("initialize")[0]
    assert init["params"]["capabilities"]["elicitation"] == declared
    reply = [m for m in log.messages() if str(m.get("id")).startswith("srv-")][0]
    assert reply.get("result", reply.get("error", {}).get("code")) == answer


def test_url_elicitation_is_not_declared_before_2025_11_25(server):
    argv, log = server()
    with client(argv, "2025-06-18", url_elicitation=lambda p: {"action": "accept"}) as c:
        assert c.call("echo", x=1) == {"x": 1}
    caps = log.requests("initialize")[0]["params"]["capabilities"]
    assert caps == {}  # neither elicitation (url mode does not exist there) nor tasks


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------

def test_cli_shows_task_status_while_it_waits(server):
    argv, _ = server()
    out = subprocess.run(cli_argv() + ["call", "work", "s=0.3", "poll_ms=50", "--"] + argv,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"slept": 0.3}
    assert "mcp_min: task working: starting" in out.stderr and "mcp_min: task completed: done" in out.stderr


def test_cli_reattaches_to_a_task_by_id(http_server):
    url, _ = http_server()
    with Client(url) as c:
        task_id = c.start("work", s=0.3, poll_ms=50).id
    cli = cli_argv() + ["--url", url]
    out = subprocess.run(cli + ["task", task_id], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"slept": 0.3}
    out = subprocess.run(cli + ["--json", "task", task_id], capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout)["status"] == "completed"
    out = subprocess.run(cli + ["task", "no-such-task"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "Task not found" in out.stderr


def test_cli_url_elicitation_without_a_terminal_prints_and_cancels(server):
    argv, _ = server()
    out = subprocess.run(cli_argv() + ["--protocol-version", "2025-11-25", "call", "visit", "--"] + argv,
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert "https://example.com/look" in out.stderr and "Look here" in out.stderr
    assert json.loads(out.stdout) == {"action": "cancel"}


# ---------------------------------------------------------------------------
# Everything sent matches the schema of its version
# ---------------------------------------------------------------------------

def _checker(version):
    import jsonschema  # a test requirement: missing means fail, never skip
    with open(os.path.join(SCHEMAS, version, "schema.json"), encoding="utf-8") as f:
        root = json.load(f)
    if version == "2026-07-28":
        with open(EXT_SCHEMA, encoding="utf-8") as f:
            root["$defs"].update(json.load(f)["$defs"])
    cls = jsonschema.validators.validator_for(root)

    def check(msg, *names):
        for name in names:
            assert name in root["$defs"], name
            errors = list(cls(dict(root, **{"$ref": "#/$defs/" + name})).iter_errors(msg))
            assert not errors, "%s is not a valid %s (%s): %s" % (msg, name, version, errors[0].message)
    return check


def _check_all(check, version, messages):
    kinds = set()
    for msg in messages:
        method = msg.get("method")
        if method is not None and "id" in msg:
            if version == "2026-07-28" and method.startswith("tasks/"):
                check(msg, "JSONRPCRequest", "ExtTasksClientRequest")
            else:
                check(msg, "JSONRPCRequest", "ClientRequest")
            if version == "2026-07-28":
                caps = msg["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
                check(caps["extensions"][EXT], "ExtTasksCapability")
                if method == "subscriptions/listen":
                    check(msg, "ExtTasksListenRequest")
            kinds.add(method)
        elif method is not None:
            check(msg, "JSONRPCNotification", "ClientNotification")
            kinds.add(method)
        elif "result" in msg:
            check(msg, "JSONRPCResultResponse")
            check(msg["result"], "ElicitResult")
            kinds.add("result")
        else:
            check(msg, "JSONRPCErrorResponse")
            kinds.add("error")
    return kinds


def test_2025_messages_match_the_schema(server):
    check = _checker("2025-11-25")
    argv, log = server()
    with client(argv, "2025-11-25", elicitation=lambda p: {"action": "accept", "content": {"name": "Ada"}},
                url_elicitation=lambda p: {"action": "accept"}) as c:
        c.call("work", s=0.2, poll_ms=50, progress=lambda *a: None)
        c.call("ask", poll_ms=50)
        c.call("needs_url")
        c.call("visit")
        with pytest.raises(RequestTimeout):
            c.call("work", s=30, timeout=0.3)
        task = c.start("maybe", s=30, ttl=5)
        task.status()
        task.cancel()
    kinds = _check_all(check, "2025-11-25", log.messages())
    assert {"initialize", "tools/list", "tools/call", "tasks/get", "tasks/result", "tasks/cancel",
            "result"} <= kinds


def test_2026_messages_match_the_schema(server, http_server):
    check = _checker("2026-07-28")
    for target, log in (server(push=True), http_server()):
        with Client(target, elicitation=lambda p: {"action": "accept", "content": {"name": "Ada"}},
                    url_elicitation=lambda p: {"action": "accept"}) as c:
            c.call("work", s=0.2, poll_ms=50, progress=lambda *a: None)
            c.call("ask", url=True, poll_ms=50)
            with pytest.raises(RequestTimeout):
                c.call("work", s=30, timeout=0.3)
            task = c.start("work", s=30)
            task.status()
            task.cancel()
        kinds = _check_all(check, "2026-07-28", log.messages())
        assert {"server/discover", "tools/call", "tasks/get", "tasks/update", "tasks/cancel"} <= kinds


def test_a_task_follower_thread_does_not_outlive_close(server):
    argv, _ = server()
    c = Client(argv)
    fut = c.submit("work", s=30, poll_ms=20000)  # the follower sleeps 20 s between polls
    assert wait_for(lambda: any(t.name.startswith("mcp_min-task") for t in threading.enumerate()))
    start = time.monotonic()
    c.close()
    with pytest.raises(mcp_min.ConnectionClosed):
        fut.result(10)
    assert time.monotonic() - start < 8  # close ended the wait; it did not sit out the interval
    assert wait_for(lambda: not any(t.name.startswith("mcp_min-task") for t in threading.enumerate()))
