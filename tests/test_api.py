"""The public API as a Python programmer meets it (issue 19 items 8-11, issue 17 item 5).

- Future speaks the concurrent.futures protocol: wait(), as_completed(), add_done_callback (on
  mcp_min-events), exception(), running(), cancelled(); done() means result() returns at once, also
  when the answer needed more round trips (they run on a thread of their own first).
- Real signatures (inspect.signature, help()), complete annotations, mypy --strict on a typed example.
- Python's timeout conventions, as a table over every method that takes a timeout: 0 and less is an
  immediate RequestTimeout with nothing sent; NaN, bools and strings are refused; Client(timeout=None).
- call_tool takes **kwargs; a callback that raises ends the call with an McpError in both eras.
"""
import concurrent.futures
import importlib.util
import inspect
import json
import logging
import os
import pickle
import pydoc
import re
import subprocess
import sys
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import calc as calc_example  # noqa: E402  (examples/calc.py; "calc" is the fixture below)
import mcp_min  # noqa: E402
from mcp_min import Client, McpError, RequestTimeout, ToolError  # noqa: E402
from inproc_server import Server, serve_in_thread  # noqa: E402
from testsupport import ECHO_PROGRAM, NO_SITE, REFUSING_PROGRAM, HttpTestServer, wait_for  # noqa: E402

CALC = [sys.executable, os.path.join(ROOT, "examples", "calc.py")]
META = "io.modelcontextprotocol/"


def calc_client(**options):
    """A Client.over() of examples/calc.py's stdio loop on a thread of this process (about 2 ms,
    where a process costs about 170: these tests are about the API, not the process)."""
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    threading.Thread(target=calc_example.serve_stdio, args=(os.fdopen(to_server, "rb"), os.fdopen(from_server, "wb")),
                     daemon=True, name="calc-server").start()
    return Client.over(to_client, from_client, **options)


@pytest.fixture(scope="module")
def calc():
    client = calc_client(timeout=20)
    yield client
    client.close()


@pytest.fixture
def wire(caplog):
    """The requests mcp_min sends, from its wire trace: a list of methods (None for answers)."""
    caplog.set_level(logging.DEBUG, logger="mcp_min")

    def sent():
        out = []
        for record in caplog.records:
            text = record.getMessage()
            if record.name == "mcp_min" and text.startswith("-> "):
                out.append(json.loads(text[3:]).get("method"))
        return out
    return sent


# ---------------------------------------------------------------------------
# Future: the concurrent.futures protocol
# ---------------------------------------------------------------------------

def test_wait_and_as_completed_take_mcp_min_futures(calc):
    futures = [calc.submit("add", a=i, b=1) for i in range(6)]
    done, not_done = concurrent.futures.wait(futures, timeout=20)
    assert (len(done), len(not_done)) == (6, 0)
    assert all(f.done() and not f.running() and not f.cancelled() for f in futures)
    more = [calc.submit("add", a=i, b=10) for i in range(6)]
    assert sorted(f.result() for f in concurrent.futures.as_completed(more, timeout=20)) == list(range(10, 16))
    first = concurrent.futures.wait([calc.submit("add", a=1, b=1)], 20, concurrent.futures.FIRST_COMPLETED)
    assert len(first.done) == 1


def test_wait_first_exception_stops_at_a_failed_tool(calc):
    bad = calc.submit("divide", a=1, b=0)
    done, _ = concurrent.futures.wait([bad], timeout=20, return_when=concurrent.futures.FIRST_EXCEPTION)
    assert done == {bad}
    assert isinstance(bad.exception(), ToolError)
    with pytest.raises(ToolError):
        bad.result()


def test_done_callbacks_run_on_the_events_thread_in_order_also_when_added_late(calc):
    seen = []
    fut = calc.submit("add", a=2, b=3)
    fut.add_done_callback(lambda f: seen.append(("first", f.result(), threading.current_thread().name)))
    fut.add_done_callback(lambda f: seen.append(("second", f.done(), threading.current_thread().name)))
    assert fut.result(20) == 5
    fut.add_done_callback(lambda f: seen.append(("late", f.exception(), threading.current_thread().name)))
    assert wait_for(lambda: len(seen) == 3, 20)
    assert seen == [("first", 5, "mcp_min-events"), ("second", True, "mcp_min-events"),
                    ("late", None, "mcp_min-events")]


def test_a_failing_callback_is_logged_and_the_next_still_runs(calc, caplog):
    seen = []
    fut = calc.submit("add", a=1, b=1)
    fut.add_done_callback(lambda f: 1 / 0)
    fut.add_done_callback(seen.append)
    fut.result(20)
    assert wait_for(lambda: seen == [fut], 20)
    assert any("done callback" in r.getMessage() for r in caplog.records)


def test_cancel_and_the_states_of_a_pending_future():
    d = mcp_min._Dispatcher(lambda m: None, lambda m, p: None)
    fut = _pending(d)
    assert (fut.done(), fut.running(), fut.cancelled()) == (False, True, False)
    assert "running" in repr(fut)
    assert not concurrent.futures.wait([fut], timeout=0).done
    assert fut.cancel() is True
    assert (fut.done(), fut.running(), fut.cancelled()) == (True, False, True)
    assert isinstance(fut.exception(), mcp_min.RequestCancelled)
    with pytest.raises(mcp_min.RequestCancelled):
        fut.result()
    assert fut.cancel() is False
    assert concurrent.futures.wait([fut], timeout=0).done == {fut}


def test_result_and_exception_with_a_local_timeout_leave_the_request_pending():
    d = mcp_min._Dispatcher(lambda m: None, lambda m, p: None)
    fut = _pending(d)
    for wait in (0, -1, 0.01):
        with pytest.raises(RequestTimeout, match="still waiting"):
            fut.result(wait)
        with pytest.raises(RequestTimeout, match="still waiting"):
            fut.exception(wait)
    assert d.is_pending(fut.id) and fut.running()
    d.receive({"jsonrpc": "2.0", "id": fut.id, "result": {"ok": 1}})
    assert fut.done() and fut.exception(0) is None and fut.result(0)["result"] == {"ok": 1}


def test_the_plumbing_is_private():
    public = {n for n in dir(mcp_min.Future) if not n.startswith("_")}
    # (plus what the base class, concurrent.futures.Future, gives executors: refused here)
    assert public == {"id", "method", "result", "exception", "done", "running", "cancelled", "cancel",
                      "add_done_callback", "set_result", "set_exception", "set_running_or_notify_cancel"}


def _pending(d, timeout=30.0):
    def settle(fut, answer):
        if isinstance(answer, Exception):
            raise answer
        return answer

    def withdraw(fut, error):
        if d.withdraw(fut.id) is None:
            return False
        fut._put(error)
        return True
    fut = mcp_min.Future(d.next_id(), "m", {}, timeout, None, settle, withdraw)
    d.add(fut)
    return fut


# ---------------------------------------------------------------------------
# done() after round trips: a submitted request whose answer needs more work
# ---------------------------------------------------------------------------

class MemoryTransport(mcp_min._Transport):
    """A transport whose server is ``serve(msg) -> list of messages`` called inline."""

    kind = "memory"
    name = "memory server"

    def __init__(self, serve):
        self.serve = serve
        self.sent = []

    def send(self, msg, data, deadline=None, wait_here=False, headers=None):
        self.sent.append(json.loads(data))
        for out in self.serve(json.loads(data)) or ():
            self._router.receive(out)

    def close(self, grace=mcp_min.CLOSE_GRACE):
        pass


def modern_session(tools_call, **callbacks):
    """A 2026-07-28 session over memory; ``tools_call(params)`` gives a tools/call result."""
    def serve(msg):
        if "id" not in msg:
            return []
        method, params = msg["method"], msg.get("params") or {}
        if method == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
        elif method == "tools/call":
            result = tools_call(params)
        else:
            return [{"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}]
        return [{"jsonrpc": "2.0", "id": msg["id"], "result": result}]
    transports = []

    def make(events):
        transports.append(MemoryTransport(serve))
        return transports[-1]
    session = mcp_min._Session(make, **callbacks)
    session.connect()
    return session, transports[0]


def test_a_submitted_call_is_done_only_once_its_input_rounds_are_over():
    gate, asked = threading.Event(), threading.Event()

    def tools_call(params):
        if "inputResponses" not in params:
            return {"resultType": "input_required", "inputRequests": {"who": {
                "method": "elicitation/create", "params": {"message": "?", "requestedSchema": {}}}}}
        return {"content": [], "structuredContent": {"got": params["inputResponses"]["who"]["content"]}}

    def elicit(params):
        asked.set()
        assert gate.wait(20)
        return {"action": "accept", "content": {"n": 1}}

    session, transport = modern_session(tools_call, elicitation=elicit)
    fut = session.submit("tools/call", {"name": "t", "arguments": {}}, 20, finish=lambda fut, result: mcp_min._tool_value(result))
    assert asked.wait(20)
    # The raw answer is in, but result() would still make a round trip: not done.
    assert (fut.done(), fut.running()) == (False, True)
    assert not concurrent.futures.wait([fut], timeout=0).done
    assert any(t.name.startswith("mcp_min-settle-") for t in threading.enumerate())
    with pytest.raises(RequestTimeout, match="still waiting"):
        fut.result(0)
    gate.set()
    assert concurrent.futures.wait([fut], timeout=20).done == {fut}
    assert fut.result(0) == {"got": {"n": 1}}
    assert [m["method"] for m in transport.sent].count("tools/call") == 2
    session.close()


def test_the_deadline_still_wins_while_a_follow_up_runs():
    gate = threading.Event()

    def tools_call(params):
        return {"resultType": "input_required", "inputRequests": {"who": {
            "method": "elicitation/create", "params": {"message": "?", "requestedSchema": {}}}}}

    session, _ = modern_session(tools_call, elicitation=lambda p: gate.wait(20) and {"action": "cancel"})
    fut = session.submit("tools/call", {"name": "t", "arguments": {}}, 0.2, finish=lambda fut, result: mcp_min._tool_value(result))
    with pytest.raises(RequestTimeout):
        fut.result()
    assert fut.done() and isinstance(fut.exception(), RequestTimeout)
    gate.set()
    session.close()


@pytest.mark.parametrize("answer, at_once", [
    ({"id": 1, "result": {"content": []}}, True),
    ({"id": 1, "result": {"resultType": "complete", "content": []}}, True),
    ({"id": 1, "result": {"resultType": "input_required", "inputRequests": {}}}, False),
    ({"id": 1, "result": {"resultType": "task", "taskId": "t", "status": "working"}}, False),
    ({"id": 1, "result": {"task": {"taskId": "t", "status": "working"}}}, False),
    ({"id": 1, "error": {"code": -32602, "message": "bad"}}, True),
    ({"id": 1, "error": {"code": mcp_min.HEADER_MISMATCH, "message": "stale"}}, False),
    ({"id": 1, "error": {"code": mcp_min.URL_ELICITATION_REQUIRED, "message": "visit"}}, False),
    (mcp_min.ConnectionClosed("gone"), True),
    (mcp_min._SessionExpired("404", "s1"), False),
])
def test_answers_that_settle_at_once_make_no_round_trip(answer, at_once):
    # _settles_at_once must never say True for an answer that _Session._settle repeats, nor for a
    # result an add-on claims (a task it follows): asked of a tool call's Future as submit() makes it.
    sent = []

    def transport_send(*args, **kwargs):
        sent.append(args)
    session, transport = modern_session(lambda p: {"content": []})
    session.era.tool_headers = {}
    transport.send = transport_send
    fut = mcp_min.Future(1, "tools/call", {"name": "t"}, 5, None, session._settle, session._withdraw)
    assert "tools/call" in session.extensions.watching  # (the tasks add-on may claim a tool call's result)
    fut._claim = session.extensions.claim
    assert mcp_min._settles_at_once(answer, fut) is at_once
    if at_once:
        fut._put(answer)
        try:
            fut.result(0)
        except McpError:
            pass
        assert sent == []
    session.close()


# ---------------------------------------------------------------------------
# Signatures and annotations
# ---------------------------------------------------------------------------

NAME_ARGS = ["call", "call_tool", "submit", "start", "get_prompt"]


@pytest.mark.parametrize("method", NAME_ARGS)
def test_name_and_arguments_are_positional_only_and_every_keyword_is_free(method):
    sig = inspect.signature(getattr(Client, method))
    params = list(sig.parameters.values())
    assert [p.name for p in params[:3]] == ["self", "name", "arguments"]
    assert all(p.kind is p.POSITIONAL_ONLY for p in params[:3])
    assert params[2].default is None
    assert params[-1].kind is params[-1].VAR_KEYWORD
    assert not any(p.kind is p.VAR_POSITIONAL for p in params)
    assert repr(sig.parameters["timeout"].default) == "DEFAULT"
    # A tool argument may be called name, arguments or self: it goes to **kwargs.
    bound = sig.bind(object(), "tool", {"a": 1}, name=1, arguments=2, self=3)
    assert bound.arguments["kwargs"] == {"name": 1, "arguments": 2, "self": 3}


def test_help_shows_real_parameters_and_a_readable_default():
    text = pydoc.render_doc(Client.call, renderer=pydoc.plaintext)
    text = " ".join(text.split()).replace("( ", "(")  # (3.14's pydoc puts a long signature on several lines)
    assert "call(self, name" in text and "/, *, timeout" in text and "= DEFAULT" in text, text
    assert "object at 0x" not in text and "*args" not in text


MADE_BY_THE_CLIENT = ("Future", "Task", "Subscription")  # returned by Client methods, never built by users


def _public_callables():
    for name in mcp_min.__all__:
        obj = getattr(mcp_min, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr == "__init__" and name not in MADE_BY_THE_CLIENT or not attr.startswith("_") \
                        or attr in ("__enter__", "__exit__"):
                    if isinstance(member, property):
                        member = member.fget
                    if inspect.isfunction(member):
                        yield "%s.%s" % (name, attr), member


def test_every_public_callable_is_fully_annotated():
    missing = []
    for name, fn in _public_callables():
        sig = inspect.signature(fn)
        for p in list(sig.parameters.values())[1 if "." in name else 0:]:
            if p.annotation is p.empty:
                missing.append("%s(%s)" % (name, p.name))
        if sig.return_annotation is sig.empty:
            missing.append("%s -> ?" % name)
    assert missing == []
    assert len(list(_public_callables())) > 40


def test_no_typing_at_run_time():
    # (concurrent.futures itself is imported: Future's base class; not its executors, nor asyncio)
    code = ("import sys, mcp_min; print(sorted(m for m in ('typing', 'asyncio', 'concurrent.futures.thread', "
            "'concurrent.futures.process') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, stdout=subprocess.PIPE, timeout=60,
                          universal_newlines=True)
    assert done.stdout.strip() == "[]"


def _mypy(args, cwd):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (tests/requirements.txt installs it on CPython only)")
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull] + args,
                          cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
                          universal_newlines=True)


def test_mypy_strict_on_the_module_and_a_script_beside_a_copy(tmp_path):
    """As a user who copied the file meets it: mcp_min.py and the typed example (every public name)
    in one folder, `mypy --strict` with no configuration file, nothing relaxed (plus
    --warn-unreachable, which only adds checks).  One run checks both files: mypy reads the whole
    module for the script anyway."""
    for name in (os.path.join(ROOT, "mcp_min.py"), os.path.join(ROOT, "tests", "typing", "check_api.py")):
        with open(name, "rb") as src, open(str(tmp_path / os.path.basename(name)), "wb") as dst:
            dst.write(src.read())
    done = _mypy(["--strict", "--warn-unreachable", "--config-file", os.devnull, "check_api.py", "mcp_min.py"],
                 str(tmp_path))
    assert done.returncode == 0, done.stdout


PYRIGHT = os.path.join(ROOT, ".cache", "npm", "node_modules", ".bin", "pyright")


@pytest.mark.slow  # about 20 CPU-seconds: once, in the README's command, not once per interpreter
def test_pyright_on_the_module_and_strict_on_the_typed_example():
    """pyright (.ci/install-peers pins it): its standard mode on mcp_min.py, and strict mode (the
    example's `# pyright: strict`) on a script that uses every public name, by the rules of the oldest
    Python (mypy runs on every interpreter, under its own version's rules)."""
    if not os.path.exists(PYRIGHT):
        pytest.skip("pyright is not installed (bash .ci/install-peers)")
    done = subprocess.run([PYRIGHT, "--pythonversion", "3.8", "mcp_min.py",
                           os.path.join("tests", "typing", "check_api.py")], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=300, universal_newlines=True)
    assert done.returncode == 0 and re.search(r"(?m)^0 errors, ", done.stdout), done.stdout


def test_the_typed_example_runs():
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "typing", "check_api.py")], cwd=ROOT,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          timeout=120, universal_newlines=True)
    assert done.returncode == 0, done.stderr
    assert "listed True" in done.stdout and "Add two numbers: a + b." in done.stdout


def test_the_readme_lists_every_client_option():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    table = readme.split("| option | meaning |", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"`(\w+)=", table))
    options = {p.name for p in inspect.signature(Client.__init__).parameters.values() if p.kind is p.KEYWORD_ONLY}
    assert options - listed == set() and listed - options == set()


# ---------------------------------------------------------------------------
# Timeouts: Python's conventions, every method that takes one
# ---------------------------------------------------------------------------

def _task(client):
    return client.task("no-such-task")


PER_METHOD = {
    "call": lambda c, t: c.call("add", a=1, b=2, timeout=t),
    "call_tool": lambda c, t: c.call_tool("add", a=1, b=2, timeout=t),
    "submit": lambda c, t: c.submit("add", a=1, b=2, timeout=t).result(),
    "start": lambda c, t: c.start("add", a=1, b=2, timeout=t),
    "request": lambda c, t: c.request("tools/list", timeout=t),
    "submit_request": lambda c, t: c.submit_request("tools/list", timeout=t).result(),
    "read_resource": lambda c, t: c.read_resource("calc://x", timeout=t),
    "get_prompt": lambda c, t: c.get_prompt("p", timeout=t),
    "ping": lambda c, t: c.ping(timeout=t),
    "read_skill": lambda c, t: c.read_skill("s", timeout=t),
    "list_tools": lambda c, t: c.list_tools(refresh=True, timeout=t),
    "list_resources": lambda c, t: c.list_resources(refresh=True, timeout=t),
    "list_resource_templates": lambda c, t: c.list_resource_templates(refresh=True, timeout=t),
    "list_prompts": lambda c, t: c.list_prompts(refresh=True, timeout=t),
    "complete": lambda c, t: c.complete("p", ("x", "1"), timeout=t),
    "discover": lambda c, t: c.discover(refresh=True, timeout=t),
    "Task.status": lambda c, t: _task(c).status(timeout=t),
    "Task.result": lambda c, t: _task(c).result(timeout=t),
}
NO_TIME_LEFT = [0, 0.0, -1, -1e-9, float("-inf")]


@pytest.mark.parametrize("timeout", NO_TIME_LEFT, ids=["0", "0.0", "-1", "-1e-9", "-inf"])
@pytest.mark.parametrize("method", sorted(PER_METHOD))
def test_no_time_left_is_an_immediate_request_timeout_with_nothing_sent(calc, wire, method, timeout):
    calc.ping()  # settles the list cache and any first-call work before we count
    before = len(wire())
    with pytest.raises(RequestTimeout):
        PER_METHOD[method](calc, timeout)
    assert wire()[before:] == []
    assert calc.call("add", a=2, b=2) == 4  # the client is fine


@pytest.mark.parametrize("timeout", [float("nan"), True, False, "1", [1]], ids=["nan", "True", "False", "str", "list"])
@pytest.mark.parametrize("method", sorted(PER_METHOD))
def test_nan_bools_and_non_numbers_are_refused(calc, wire, method, timeout):
    before = len(wire())
    with pytest.raises(ValueError, match="timeout"):
        PER_METHOD[method](calc, timeout)
    assert wire()[before:] == []


@pytest.mark.parametrize("method", sorted(PER_METHOD))
def test_future_result_with_no_time_left_looks_without_waiting(calc, method):
    fut = calc.submit("add", a=1, b=2)
    assert fut.result(20) == 3
    for t in NO_TIME_LEFT:
        assert fut.result(t) == 3 and fut.exception(t) is None


LEGACY_PER_METHOD = {  # the handshake era's own requests (2026-07-28 has none of them)
    "subscribe": lambda c, t: c.subscribe("calc://x", timeout=t),
    "unsubscribe": lambda c, t: c.unsubscribe("calc://x", timeout=t),
    "set_logging_level": lambda c, t: c.set_logging_level("info", timeout=t),
}


@pytest.fixture(scope="module")
def calc_legacy():
    client = calc_client(timeout=20, protocol_version="2025-11-25")
    yield client
    client.close()


@pytest.mark.parametrize("method", sorted(LEGACY_PER_METHOD))
def test_the_handshake_eras_requests_follow_the_same_conventions(calc_legacy, wire, method):
    for timeout in NO_TIME_LEFT:
        before = len(wire())
        with pytest.raises(RequestTimeout):
            LEGACY_PER_METHOD[method](calc_legacy, timeout)
        assert wire()[before:] == []
    for timeout in [float("nan"), True, "1"]:
        with pytest.raises(ValueError, match="timeout"):
            LEGACY_PER_METHOD[method](calc_legacy, timeout)
        assert wire()[before:] == []
    assert calc_legacy.call("add", a=2, b=2) == 4


class _Silent(Server):
    """The in-process server, except that it never answers the methods in ``silent``."""

    silent = frozenset()

    def handle(self, msg, headers=None, emit=None):
        if msg.get("method") not in self.silent:
            return Server.handle(self, msg, headers, emit)
        self.received.append((dict(headers or {}), msg))
        return []


@pytest.mark.parametrize("era, method, ask", [
    ("2026-07-28", "completion/complete", lambda c, t: c.complete("p", ("x", "1"), timeout=t)),
    ("2026-07-28", "server/discover", lambda c, t: c.discover(refresh=True, timeout=t)),
    ("2025-11-25", "resources/subscribe", lambda c, t: c.subscribe("file:///x", timeout=t)),
    ("2025-11-25", "resources/unsubscribe", lambda c, t: c.unsubscribe("file:///x", timeout=t)),
    ("2025-11-25", "logging/setLevel", lambda c, t: c.set_logging_level("info", timeout=t)),
], ids=["complete", "discover", "subscribe", "unsubscribe", "set_logging_level"])
def test_a_short_timeout_bounds_a_request_the_server_never_answers(era, method, ask):
    server = _Silent()
    reader, writer, _ = serve_in_thread(server)
    with Client.over(reader, writer, protocol_version=era, timeout=20) as client:
        server.silent = frozenset([method])  # (after connecting: server/discover is the probe too)
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="within 0.3 s"):
            ask(client, 0.3)
        assert 0.3 <= time.monotonic() - started < 10  # (not the client's 20 s)
        assert [m.get("method") for _, m in server.received].count(method) >= 1  # it was sent
        assert client.call("add", a=1, b=2) == 3  # the client is fine


def test_client_timeout_none_means_no_deadline_on_requests():
    with calc_client(timeout=None) as client:
        assert client.call("add", a=1, b=2) == 3
        fut = client.submit("add", a=1, b=2)
        assert fut._deadline is None and fut.result() == 3
        assert client._session.timeout == mcp_min.DEFAULT_TIMEOUT  # connecting and closing keep a bound
        with pytest.raises(RequestTimeout):
            client.call("add", a=1, b=2, timeout=0)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), True, "5"])
def test_client_timeout_must_leave_time_to_connect(timeout):
    with pytest.raises(ValueError, match="timeout must be a (positive )?number of seconds"):
        Client(CALC, timeout=timeout)


# ---------------------------------------------------------------------------
# call_tool and callbacks
# ---------------------------------------------------------------------------

def test_call_tool_takes_keywords_like_call(calc):
    raw = calc.call_tool("add", {"a": 1}, b=2)
    assert raw["structuredContent"] == {"result": 3} and not raw.get("isError")
    assert calc.call_tool("divide", a=1, b=0)["isError"] is True


@pytest.mark.parametrize("era", ["auto", "2025-11-25"])
def test_a_raising_callback_ends_the_call_with_an_mcp_error_in_both_eras(era):
    def elicitation(params):
        raise RuntimeError("boom")

    with calc_client(protocol_version=era, elicitation=elicitation, timeout=20) as client:
        assert client.protocol_version == ("2026-07-28" if era == "auto" else era)
        for attempt in (lambda: client.call("greet"), lambda: client.submit("greet").result(20)):
            with pytest.raises(McpError, match="RuntimeError: boom"):
                attempt()
        assert client.call("add", a=1, b=1) == 2


# ---------------------------------------------------------------------------
# A failure to connect says what to do, from Python as from the CLI (issue 27 §3): the hint is
# the last line of the exception's message and its ``hint``; each survives pickling.
# ---------------------------------------------------------------------------

def connect_error(expected, *args, **options):
    with pytest.raises(expected) as caught:
        Client(*args, **options)
    error = caught.value
    twin = pickle.loads(pickle.dumps(error))
    assert (str(twin), twin.hint, getattr(twin, "stderr", None), getattr(twin, "method", None)) == (
        str(error), error.hint, getattr(error, "stderr", None), getattr(error, "method", None))
    return error


def test_a_server_that_exits_for_want_of_a_variable_names_it_and_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-real-key")
    server = [sys.executable, *NO_SITE, "-c",
              "import sys; sys.stderr.write('Error: OPENAI_API_KEY is not set\\n'); sys.exit(1)"]
    error = connect_error(mcp_min.ConnectionClosed, server, timeout=20)
    assert error.returncode == 1 and error.stderr == ["Error: OPENAI_API_KEY is not set"]
    assert "OPENAI_API_KEY is set here but was not passed" in error.hint
    assert "env={'K': 'V'}" in error.hint and "inherit_env=True" in error.hint
    assert str(error).endswith("\n  hint: " + error.hint) and "sk-not-a-real-key" not in str(error)
    # passed, the variable is no longer named (and with the whole environment, no hint at all)
    error = connect_error(mcp_min.ConnectionClosed, server, env={"OPENAI_API_KEY": "x"}, timeout=20)
    assert "OPENAI_API_KEY" not in error.hint
    assert connect_error(mcp_min.ConnectionClosed, server, inherit_env=True, timeout=20).hint is None


def test_a_url_without_its_scheme_is_met_with_the_url_meant():
    error = connect_error(mcp_min.ConnectionClosed, "localhost:8765/mcp", timeout=20)
    assert str(error).startswith("cannot start server 'localhost:8765/mcp'")
    assert error.hint == "a URL needs its scheme: did you mean http://localhost:8765/mcp?"


def test_a_404_from_a_url_without_a_path_suggests_mcp():
    with HttpTestServer(post=lambda request, msg: request.reply(404),
                        get=lambda request: request.reply(404)) as server:
        error = connect_error(mcp_min.HttpError, server.base, timeout=20)
        assert error.status == 404
        assert str(error).endswith("\n  hint: MCP endpoints usually live at a path: try %s/mcp" % server.base)
        assert connect_error(mcp_min.HttpError, server.url, timeout=20).hint is None  # (it has a path)


@pytest.mark.parametrize("code,stderr,shown", [
    ("import sys, time; sys.stderr.write('loading the model...\\n'); sys.stderr.flush(); time.sleep(60)",
     ["loading the model..."], "; last stderr lines:\n  loading the model..."),
    ("import sys; sys.stdin.read()", [], " (no stderr output)"),  # (not an MCP server: reads, never answers)
])
def test_a_connect_timeout_says_the_whole_wait_and_the_servers_stderr(code, stderr, shown):
    error = connect_error(RequestTimeout, [sys.executable, *NO_SITE, "-c", code], timeout=1)
    waited = float(re.search(r"within ([0-9.]+) s of starting it \(timeout 1 s\)", str(error)).group(1))
    assert 1.0 <= waited < 2.5, str(error)  # (not the 0.5 s left to initialize after the probe)
    assert error.stderr == stderr and str(error).endswith(shown), str(error)
    assert error.method in ("server/discover", "initialize")  # (what marks it: never its words)


@pytest.mark.parametrize("era", ["auto", "2025-11-25"])
def test_a_method_the_server_does_not_offer_says_what_it_offers(era):
    with calc_client(protocol_version=era, timeout=20) as client:  # (calc declares tools only)
        for attempt, wanted in [(client.list_resources, "resources"), (client.list_prompts, "prompts"),
                                (lambda: client.read_resource("calc://x"), "resources"),
                                (lambda: client.request("resources/templates/list"), "resources"),
                                (lambda: client.complete("p", ("a", "1")), "completions")]:
            with pytest.raises(mcp_min.RequestError) as caught:
                attempt()
            error = caught.value
            assert error.code == mcp_min.METHOD_NOT_FOUND
            assert error.hint == "the server does not offer %s; it offers: %s" % (
                wanted, ", ".join(sorted(k for k in client.server_capabilities if k != "experimental")))
            assert str(error).endswith("\n  hint: " + error.hint)
            twin = pickle.loads(pickle.dumps(error))
            assert (str(twin), twin.hint, twin.code, twin.method) == (str(error), error.hint, error.code, error.method)
        # a method it has no capability for, or one of a capability it declared: no guess
        for method in ("no/such", "tools/nosuch"):
            with pytest.raises(mcp_min.RequestError) as caught:
                client.request(method)
            assert caught.value.code == mcp_min.METHOD_NOT_FOUND and caught.value.hint is None
            assert "\n" not in str(caught.value)


def test_a_connect_timeout_is_told_by_its_mark_not_by_its_words():
    class Stdio(object):
        kind, name, stderr_tail = "stdio", "server 'x'", ["booting"]

    def hint(error):
        return str(mcp_min._connect_hint(error, Stdio(), ["x"], False, None, 6.0, 6.01))

    assert hint(mcp_min._no_answer("initialize", 2.99)).startswith("no answer from server 'x' within 6.0 s of starting")
    # the same words without the mark (no request's wait ended), and a later request's timeout: as they were
    assert hint(RequestTimeout("no answer to initialize within 2.99 s")) == "no answer to initialize within 2.99 s"
    assert hint(mcp_min._no_answer("logging/setLevel", 1.0)) == "no answer to logging/setLevel within 1 s"


@pytest.mark.parametrize("program,why", [
    (ECHO_PROGRAM, "sends back what it reads (our initialize came back)"),  # `cat`
    (REFUSING_PROGRAM, "does not know initialize"),
])
def test_a_program_that_is_not_an_mcp_server_is_named_so(program, why):
    error = connect_error(mcp_min.RequestError, [sys.executable, *NO_SITE, "-c", program], timeout=20)
    assert error.method == "initialize" and error.code == mcp_min.METHOD_NOT_FOUND
    assert error.hint == "the program is not an MCP server: it " + why


def test_a_prompt_missing_an_argument_is_the_servers_refusal_of_prompts_get():
    # (the command line names what is missing before sending: tests/test_cli.py)
    with Client([sys.executable, *NO_SITE, os.path.join(ROOT, "examples", "tour.py")], timeout=20) as client:
        with pytest.raises(mcp_min.RequestError) as caught:
            client.get_prompt("explain")
    assert caught.value.method == "prompts/get" and caught.value.code == mcp_min.INVALID_PARAMS
    assert "explain" in str(caught.value) and "tool" not in str(caught.value) and caught.value.hint is None
