"""Tests for mcp_min: behaviour through the public API.

Tests about the protocol talk to servers on a thread of this process over Client.over()
(tests/fake_server.py's client_for(), examples/calc.py's stdio loop): about 2 ms a client
where a process costs about 170.  Tests about processes (starting, exit codes and stderr,
close and kill, the environment, leaks, the CLI) start real ones.

Run with:  python -m pytest -q
"""
import gc
import json
import logging
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples"))
import calc as calc_example  # noqa: E402  (examples/calc.py; "calc" is the fixture below)
import fake_server  # noqa: E402
import mcp_min  # noqa: E402
from testsupport import NO_SITE, UNDER_WINE, WINE_SLOW_START, cli_argv, connect_patiently, processes, wait_for  # noqa: E402
from mcp_min import (Client, ConnectionClosed, McpError, RequestError, RequestTimeout, ToolError)

HERE = os.path.dirname(os.path.abspath(__file__))
CALC = [sys.executable, *NO_SITE, os.path.join(HERE, "examples", "calc.py")]  # NO_SITE: see testsupport
PY = sys.executable

FAKE_SERVER = os.path.join(HERE, "tests", "fake_server.py")  # its behaviours are listed in its docstring




@pytest.fixture
def fake(tmp_path):
    """fake(**cfg) -> argv of tests/fake_server.py, for tests about the server's process (the
    others use client_for below); cfg["log"] is set to a file in tmp_path."""
    def make(**cfg):
        cfg.setdefault("log", str(tmp_path / "received.jsonl"))
        return [PY, *NO_SITE, FAKE_SERVER, json.dumps(cfg)]
    return make


@pytest.fixture
def client_for(tmp_path):
    """client_for(cfg=None, **options) -> a Client.over() of tests/fake_server.py on a thread of
    this process (options are Client's); cfg["log"] is fake's file, so received() reads it the same."""
    def make(cfg=None, **options):
        cfg = dict(cfg or {})
        cfg.setdefault("log", str(tmp_path / "received.jsonl"))
        return fake_server.client_for(cfg, **options)
    return make


def calc_client(**options):
    """A Client.over() of examples/calc.py's stdio loop on a thread of this process."""
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    threading.Thread(target=calc_example.serve_stdio, args=(os.fdopen(to_server, "rb"), os.fdopen(from_server, "wb")),
                     daemon=True, name="calc-server").start()
    return Client.over(to_client, from_client, **options)


def received(tmp_path):
    path = tmp_path / "received.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]




# ---------------------------------------------------------------------------
# The calculator, in both eras
# ---------------------------------------------------------------------------

@pytest.fixture(params=["auto", "2025-11-25"], scope="module")
def calc(request):
    with Client(CALC, protocol_version=request.param) as client:
        yield client


def test_calc_arithmetic(calc):
    assert calc.call("add", a=2, b=3) == 5
    assert isinstance(calc.call("add", a=2, b=3), int)
    assert calc.call("subtract", {"a": 2}, b=5) == -3
    assert calc.call("multiply", a=1.5, b=4) == 6.0
    assert calc.call("divide", a=6, b=3) == 2
    assert calc.call("divide", a=1, b=4) == 0.25


def test_calc_divide_by_zero_is_tool_error(calc):
    with pytest.raises(ToolError) as info:
        calc.call("divide", a=1, b=0)
    assert "division by zero" in str(info.value)
    assert info.value.result["isError"] is True
    raw = calc.call_tool("divide", {"a": 1, "b": 0})
    assert raw["isError"] is True and raw["content"][0]["type"] == "text"


def test_calc_unknown_tool_is_request_error(calc):
    with pytest.raises(RequestError) as info:
        calc.call("nope")
    assert info.value.code == -32602


def test_calc_metadata(calc):
    assert calc.server_info["name"] == "calc"
    assert "tools" in calc.server_capabilities
    assert "calculator" in calc.instructions.lower()
    assert calc.transport == "stdio"
    names = [t["name"] for t in calc.list_tools()]
    assert names[:4] == ["add", "subtract", "multiply", "divide"]


def test_auto_mode_picks_2026_and_pin_uses_handshake():
    with calc_client() as modern:
        assert modern.protocol_version == "2026-07-28"
    with calc_client(protocol_version="2025-06-18") as legacy:
        assert legacy.protocol_version == "2025-06-18"
        assert legacy.call("add", a=1, b=1) == 2


def test_one_liner_script_exits_promptly():
    code = "import mcp_min; print(mcp_min.Client(%r).call('add', a=1, b=2))" % (CALC,)
    start = time.monotonic()
    out = subprocess.run([PY, "-c", code], cwd=HERE, capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == b"3"
    assert time.monotonic() - start < 20


# ---------------------------------------------------------------------------
# Handshake and version negotiation
# ---------------------------------------------------------------------------

def test_handshake_messages_in_order(client_for, tmp_path):
    with client_for(protocol_version="2025-11-25") as c:
        assert c.protocol_version == "2025-11-25"
        assert c.server_info == {"name": "fake", "version": "9"}
        assert c.instructions == "be nice"
        c.ping()
    msgs = received(tmp_path)
    assert [m.get("method") for m in msgs[:3]] == ["initialize", "notifications/initialized", "ping"]
    init = msgs[0]["params"]
    assert init["protocolVersion"] == "2025-11-25"
    assert init["clientInfo"]["name"] == "mcp_min"
    assert init["capabilities"] == {"tasks": {}, "extensions": {"io.modelcontextprotocol/skills": {}}}


def test_server_answering_older_supported_version_is_accepted(client_for):
    with client_for({"version": "2024-11-05"}) as c:
        assert c.protocol_version == "2024-11-05"


def test_server_answering_unknown_version_is_refused(client_for):
    with pytest.raises(McpError) as info:
        client_for({"version": "1999-01-01"})
    assert "1999-01-01" in str(info.value)


def test_unsupported_version_error_retries_with_a_listed_version(client_for):
    with client_for({"init": "error-supported"}) as c:
        assert c.protocol_version == "2025-03-26"


def test_capabilities_declared_only_for_given_callbacks(client_for, tmp_path):
    with client_for(roots=["/tmp"], sampling=lambda p: {}, elicitation=lambda p: {"action": "decline"}):
        pass
    init = [m for m in received(tmp_path) if m.get("method") == "initialize"][0]
    assert set(init["params"]["capabilities"]) == {"roots", "sampling", "elicitation", "tasks", "extensions"}


@pytest.mark.parametrize("mode", ["error", "invalid-params", "silent", pytest.param("die", marks=pytest.mark.skipif(
    UNDER_WINE, reason=WINE_SLOW_START)), "result-no-versions"])
def test_probe_falls_back_to_handshake(fake, client_for, tmp_path, mode):
    # "die" is the process exiting (then the client starts a fresh one): a process; the rest on a thread.
    with (Client(fake(discover=mode), probe_timeout=0.5) if mode == "die"
          else client_for({"discover": mode}, probe_timeout=0.5)) as c:
        assert c.protocol_version == "2025-11-25"
        assert c.call("echo", x=1) == {"x": 1}


def test_a_timeout_below_the_probe_timeout_still_leaves_time_for_the_handshake(client_for):
    # The probe takes at most half the connect timeout: a server that ignores server/discover
    # is still reached when the whole timeout is shorter than probe_timeout.
    with client_for({"discover": "silent"}, timeout=4.0, probe_timeout=30.0) as c:
        assert c.protocol_version == "2025-11-25"
        assert c.call("echo", x=1) == {"x": 1}


# ---------------------------------------------------------------------------
# A server that fails: cannot start, dies, crashes, stops reading
# ---------------------------------------------------------------------------

def test_command_not_found_names_the_command():
    with pytest.raises(ConnectionClosed) as info:
        Client(["/nonexistent/mcp-server", "--flag"])
    assert str(info.value).startswith("cannot start server '/nonexistent/mcp-server --flag': ")
    reason = str(info.value).partition("': ")[2]
    assert reason.strip(), "no reason given"  # the OS's own words
    if os.name == "posix":
        assert "No such file" in reason


def test_server_dies_at_start(fake):
    with pytest.raises(ConnectionClosed) as info:
        Client(fake(exit_at_start=7, startup_stderr="config file missing"))
    assert info.value.returncode == 7
    assert "code 7" in str(info.value) and "config file missing" in str(info.value)


@pytest.mark.skipif(UNDER_WINE, reason="under Wine 8.0 a child of a server started with CREATE_NO_WINDOW keeps "
                    "the server's stdout open (it ends when the child does; without the flag at once), so the "
                    "server's exit is seen only then; the real-Windows workflow runs this test")
def test_server_dies_while_a_child_of_it_holds_stderr_open(tmp_path):
    # Its stderr never reaches EOF: the error must still come, with the exit code and the last
    # line, long before the deadline (the stderr reader is waited for a bounded time only).
    pidfile = tmp_path / "child.pid"
    code = ("import subprocess, sys; c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
            "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL); open(%r, 'w').write(str(c.pid)); "
            "sys.stderr.write('fatal: no config\\n'); sys.stderr.flush(); sys.exit(3)" % str(pidfile))
    try:
        with pytest.raises(ConnectionClosed) as info:
            Client([PY, "-c", code], timeout=30)
        assert info.value.returncode == 3 and "fatal: no config" in str(info.value), str(info.value)
    finally:
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text()), signal.SIGTERM)
            except (OSError, SystemError):  # (gone already; 3.8 on Windows raises SystemError then)
                pass


def test_the_readers_end_reaches_pending_calls_even_if_building_its_error_fails(fake, monkeypatch):
    # (on PyPy a join raced with close()'s join of the same thread and raised RuntimeError in the
    # reader, so pending calls waited for their deadlines: the reader now waits on an Event, and
    # whatever goes wrong while it builds the error, the pending calls learn the end at once)
    def broken(self, deadline=None):
        raise RuntimeError("cannot release un-acquired lock")
    c = Client(fake())
    monkeypatch.setattr(mcp_min._StdioTransport, "_closed_error", broken)
    start = time.monotonic()
    with pytest.raises(ConnectionClosed, match="ended its output"):
        c.call("crash", timeout=30)
    assert time.monotonic() - start < 10
    c.close()


def test_server_exits_during_initialize(fake):
    with pytest.raises(ConnectionClosed) as info:
        Client(fake(init="exit"), protocol_version="2025-11-25")
    assert "code 4" in str(info.value) and "missing API key" in str(info.value)
    assert "initialize" in str(info.value)


def test_server_never_answers_initialize(client_for):
    start = time.monotonic()
    with pytest.raises(RequestTimeout):
        client_for({"init": "silent"}, timeout=1.0, protocol_version="2025-11-25")
    assert time.monotonic() - start < 10


def test_crash_mid_request(fake):
    c = Client(fake())
    start = time.monotonic()
    with pytest.raises(ConnectionClosed) as info:
        c.call("crash", timeout=20)
    assert time.monotonic() - start < 5
    assert info.value.returncode == 3
    assert "the tool crashed" in str(info.value) and "tools/call" in str(info.value)
    with pytest.raises(ConnectionClosed):  # terminal: later calls fail at once
        c.call("echo")
    c.close()


@pytest.mark.skipif(os.name != "posix", reason="a death by signal (returncode -9, SIGKILL) exists on POSIX only")
def test_server_killed_by_a_signal(fake):
    with Client(fake()) as c:
        with pytest.raises(ConnectionClosed) as info:
            c.call("killed")
    assert info.value.returncode == -9 and "killed by SIGKILL" in str(info.value)


def test_server_that_stops_reading_stdin(fake):
    c = Client(fake(stall=True), protocol_version="2025-11-25")
    start = time.monotonic()
    # The deadline passed mid-write: a timeout to the caller (issue 26), and the connection is dropped.
    with pytest.raises(RequestTimeout, match="stopped reading its stdin"):
        c.call("echo", blob="x" * (4 << 20), timeout=1.0)  # far more than a pipe holds
    assert time.monotonic() - start < 10
    with pytest.raises(ConnectionClosed, match="stopped reading its stdin"):
        c.call("echo")
    c.close()


@pytest.mark.skipif(UNDER_WINE, reason=WINE_SLOW_START)
def test_stdio_stalled_server_cannot_block_listen_or_close(fake):
    c = Client(fake(discover="modern", stall=True), timeout=1.0)
    sub = c.listen(resource_uris=["file:///%s" % ("x" * 1000)] * 5000)  # more than a pipe holds
    assert sub.ended.wait(10) and isinstance(sub.error, McpError)
    start = time.monotonic()
    c.close()
    assert time.monotonic() - start < 10


# ---------------------------------------------------------------------------
# What the server writes: junk, dribbles, large and malformed messages, floods
# ---------------------------------------------------------------------------

def test_garbage_blank_and_crlf_lines_are_skipped(client_for):
    with client_for({"garbage": True, "crlf": True}) as c:
        assert c.call("echo", a=1) == {"a": 1}
        assert c.call("text", text="a\u2028b\u2029c") == "a\u2028b\u2029c"


def test_bytes_dribbled_a_few_at_a_time(client_for):
    with client_for({"dribble": True}) as c:
        assert c.call("echo", word="slow") == {"word": "slow"}


def test_20_mb_message(client_for):
    with client_for() as c:
        assert len(c.call("big", n=20 * 1024 * 1024)) == 20 * 1024 * 1024
        assert c.call("echo", after=True) == {"after": True}


def test_malformed_notifications_are_ignored(client_for):
    with client_for() as c:
        assert c.call("malformed", progress=lambda *a: None) == "survived"
        assert c.call("echo", ok=1) == {"ok": 1}


def test_request_and_notification_floods_stay_bounded(fake):
    peak, before = [0], threading.active_count()

    def watch(level, logger, data):  # runs while the flood is being answered
        peak[0] = max(peak[0], threading.active_count() - before)

    with Client(fake(), on_log=watch) as c:
        assert c.call("flood", n=2000, notes=2000) == {"answered": 2000}
        assert c.call("echo", after=1) == {"after": 1}  # still usable
    # reader, stderr, events and overflow workers, plus at most MAX_ANSWER_THREADS answering
    assert 0 < peak[0] <= mcp_min.MAX_ANSWER_THREADS + 4


# ---------------------------------------------------------------------------
# Requests: concurrency, timeouts, cancellation, close, progress
# ---------------------------------------------------------------------------

def test_out_of_order_replies_to_16_threads(client_for):
    with client_for({"reorder": 16}) as c:
        results = {}

        def worker(i):
            results[i] = c.call("echo", i=i)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert results == {i: {"i": i} for i in range(16)}


def test_timeout_cancels_and_client_stays_usable(client_for, tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    with client_for() as c:
        with pytest.raises(RequestTimeout) as info:
            c.call("sleep", s=1.5, timeout=0.2)
        assert isinstance(info.value, TimeoutError)
        assert c.call("echo", ok=1) == {"ok": 1}
        # The late answer to the cancelled call arrives and is ignored.
        assert wait_for(lambda: any(m.get("method") == "notifications/cancelled" for m in received(tmp_path)))
        slept_id = [m for m in received(tmp_path) if m.get("method") == "tools/call"][0]["id"]
        late = "ignored an answer to unknown request id %r" % slept_id
        assert wait_for(lambda: any(r.getMessage() == late for r in caplog.records))  # it came (about 1.3 s on)
        assert c.call("echo", still=1) == {"still": 1}  # what is asserted: nothing broke
    cancel = [m for m in received(tmp_path) if m.get("method") == "notifications/cancelled"][0]
    call_id = [m for m in received(tmp_path) if m.get("method") == "tools/call"][0]["id"]
    assert cancel["params"]["requestId"] == call_id


def test_submit_pipelines_requests(client_for):
    with client_for() as c:
        futures = [c.submit("echo", i=i) for i in range(200)]
        assert [f.result() for f in futures] == [{"i": i} for i in range(200)]
        assert all(f.done() for f in futures)
        slow = c.submit("never")
        assert slow.cancel() is True
        with pytest.raises(mcp_min.RequestCancelled):
            slow.result()


def test_close_fails_pending_calls_at_once(fake):
    c = Client(fake())
    fut = c.submit("never", timeout=60)
    closer = threading.Thread(target=c.close)
    closer.start()
    with pytest.raises(ConnectionClosed):
        fut.result()
    closer.join(10)
    c.close()  # idempotent
    with pytest.raises(ConnectionClosed):
        c.call("echo")


def test_close_ends_a_pending_call_with_progress_at_once(fake):
    c = Client(fake())
    c.call("progress", progress=lambda *a: None)  # the callback worker is running
    fut = c.submit("never", progress=lambda *a: None, timeout=30)
    c.close()
    start = time.monotonic()
    with pytest.raises(ConnectionClosed):
        fut.result()
    assert time.monotonic() - start < 5


def test_progress_log_and_notifications(client_for):
    logs, notes, progress = [], [], []
    with client_for(on_log=lambda *a: logs.append(a),
                    on_notification=lambda m, p: notes.append(m)) as c:
        assert c.call("progress", progress=lambda *a: progress.append(a)) == "done"
        assert c.call("log") == "logged"
        assert wait_for(lambda: logs and notes)
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert logs == [("warning", "fake", "careful")]
    assert notes == ["notifications/tools/list_changed"]


def test_progress_callbacks_have_run_when_call_returns(client_for):
    # Found against the official SDK server: callbacks are queued off the reader thread,
    # and a slow one must still have run for every notification sent before the answer.
    seen = []

    def slow(*args):
        time.sleep(0.05)
        seen.append(args)

    with client_for() as c:
        assert c.call("progress", progress=slow) == "done"
        assert len(seen) == 3


def test_progress_token_only_with_a_callback(client_for, tmp_path):
    with client_for() as c:
        c.call("echo")
        c.call("echo", progress=lambda *a: None)
    calls = [m for m in received(tmp_path) if m.get("method") == "tools/call"]
    assert "_meta" not in calls[0]["params"]
    assert calls[1]["params"]["_meta"]["progressToken"] == calls[1]["id"]


def test_tool_and_prompt_arguments_called_name(client_for, tmp_path):
    # Found against server-everything: its tools and prompts take an argument called "name".
    with client_for() as c:
        assert c.call("echo", name="x.gz", timeout_s=1) == {"name": "x.gz", "timeout_s": 1}
        assert c.submit("echo", name="y").result() == {"name": "y"}
        with pytest.raises(RequestError):
            c.get_prompt("greeting", name="Alice")
    prompt = [m for m in received(tmp_path) if m.get("method") == "prompts/get"][0]
    assert prompt["params"] == {"name": "greeting", "arguments": {"name": "Alice"}}


def test_pagination_follows_cursors(client_for):
    with client_for({"pages": 3}) as c:
        assert [t["name"] for t in c.list_tools()] == ["t0", "t1", "t2"]
    with client_for({"loop_cursor": True}) as c:
        with pytest.raises(McpError, match="repeated the cursor"):
            c.list_tools()


def test_wire_trace_logs_every_message(client_for, caplog):
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    with client_for() as c:
        c.call("echo", x=1)
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_min"]
    assert any(l.startswith("-> ") and '"method":"initialize"' in l for l in lines)
    assert any(l.startswith("<- ") and '"protocolVersion"' in l for l in lines)
    assert any(l.startswith("-> ") and '"method":"notifications/initialized"' in l for l in lines)
    assert any(l.startswith("<- ") and '{"x":1}' in l for l in lines)


# ---------------------------------------------------------------------------
# Server requests: roots, sampling, elicitation, errors
# ---------------------------------------------------------------------------

def test_server_requests_in_the_middle_of_a_call(client_for, tmp_path):
    seen = []

    def sampling(params):
        seen.append(("sampling", params))
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}

    def elicitation(params):
        seen.append(("elicitation", params))
        return {"action": "accept", "content": {"name": "Ada"}}

    folder = str(tmp_path)  # a path becomes a file URI (on Windows with its drive letter)
    with client_for(roots=[folder, "file:///srv/data"], sampling=sampling, elicitation=elicitation) as c:
        assert c.call("ask", method="ping") == {"jsonrpc": "2.0", "id": "srv-0", "result": {}}
        roots = c.call("ask", method="roots/list")["result"]["roots"]
        assert [r["uri"] for r in roots] == [pathlib.Path(folder).resolve().as_uri(), "file:///srv/data"]
        sampled = c.call("ask", method="sampling/createMessage", params={"messages": [], "maxTokens": 5})
        assert sampled["result"]["model"] == "m"
        elicited = c.call("ask", method="elicitation/create", params={"message": "name?", "requestedSchema": {
            "type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 3}}}})
        assert elicited["result"] == {"action": "accept", "content": {"name": "Ada", "age": 3}}
        unknown = c.call("ask", method="something/else")
        assert unknown["error"]["code"] == -32601
    assert [kind for kind, _ in seen] == ["sampling", "elicitation"]


def test_undeclared_and_failing_callbacks_answer_errors(client_for):
    def broken(params):
        raise RuntimeError("user said no")

    with client_for(sampling=broken) as c:
        failed = c.call("ask", method="sampling/createMessage", params={"messages": [], "maxTokens": 1})
        assert failed["error"]["code"] == -32603 and "user said no" in failed["error"]["message"]
        undeclared = c.call("ask", method="elicitation/create", params={"message": "x"})
        assert undeclared["error"]["code"] == -32601


# ---------------------------------------------------------------------------
# The server process: environment, nothing left behind
# ---------------------------------------------------------------------------

def test_environment_is_safe_by_default(fake, monkeypatch):
    monkeypatch.setenv("MCP_MIN_SECRET", "hunter2")
    keys = ["MCP_MIN_SECRET", "PATH", "EXTRA"]
    with Client(fake(), env={"EXTRA": "yes"}) as c:
        env = c.call("env", keys=keys)
        assert env["MCP_MIN_SECRET"] is None and env["PATH"] and env["EXTRA"] == "yes"
    with Client(fake(), inherit_env=True) as c:
        assert c.call("env", keys=keys)["MCP_MIN_SECRET"] == "hunter2"


def _children():
    """(pid, state) of this process's children, from /proc."""
    return [(pid, state) for pid, (state, ppid, _) in processes().items() if ppid == os.getpid()]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd") or UNDER_WINE,
                    reason="needs /proc to see this process's descriptors and children (under Wine, /proc is Linux's)")
def test_60_open_close_cycles_leak_nothing(fake):
    argv = fake(discover="result-no-versions")
    Client(argv).close()  # warm up lazily created module state
    gc.collect()
    fds, threads, children = len(os.listdir("/proc/self/fd")), threading.active_count(), set(_children())
    for i in range(60):
        c = Client(argv)
        assert c.call("echo", i=i) == {"i": i}
        if i % 2:
            c.close()
        else:
            del c  # dropped without close(): garbage collection reaps the server
            gc.collect()
    assert wait_for(lambda: threading.active_count() <= threads)
    assert wait_for(lambda: set(_children()) <= children)  # no process left, zombie or not
    assert len(os.listdir("/proc/self/fd")) <= fds


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def cli(*args, timeout=60, script=False):
    """The command line in a subprocess: from cached bytecode (testsupport.cli_argv), or as the
    script the README shows (``script=True``, which compiles the module at every start)."""
    argv = [PY, os.path.join(HERE, "mcp_min.py")] if script else cli_argv()
    return subprocess.run(argv + list(args), capture_output=True, text=True, timeout=timeout, cwd=HERE)


def test_cli_call_prints_the_value():
    # the README's first command, as written (from the repository root, "python" this interpreter)
    out = subprocess.run([PY, "-m", "mcp_min", "call", "add", "a=2", "b=3", "--", PY, "examples/calc.py"],
                         capture_output=True, text=True, timeout=60, cwd=HERE)
    assert (out.returncode, out.stdout) == (0, "5\n"), out.stderr
    # the script form, from another directory; each names itself so in its usage
    out = subprocess.run([PY, os.path.join(HERE, "mcp_min.py"), "call", "add", "a=2", "b=3", "--", PY, CALC[-1]],
                         capture_output=True, text=True, timeout=60, cwd=os.path.dirname(CALC[-1]))
    assert (out.returncode, out.stdout) == (0, "5\n"), out.stderr
    assert cli("--help", script=True).stdout.startswith("usage: python mcp_min.py [options] COMMAND")
    out = subprocess.run([PY, "-m", "mcp_min", "--help"], capture_output=True, text=True, timeout=60, cwd=HERE)
    assert out.stdout.startswith("usage: python -m mcp_min [options] COMMAND"), out.stdout[:200]


def test_cli_exit_codes(fake):
    assert cli("call", "divide", "a=1", "b=0", "--", *CALC).returncode == 5  # the tool reported an error
    assert cli("frobnicate", "--", *CALC).returncode == 2
    assert cli("call", "add", "a2", "--", *CALC).returncode == 2
    missing = cli("tools", "--", "/nonexistent/server")
    assert missing.returncode == 4 and "/nonexistent/server" in missing.stderr


def test_cli_progress_and_json(fake):
    out = cli("call", "progress", "--", *fake())
    assert out.returncode == 0 and out.stdout == "done\n"
    assert "progress: 1/3 step 1" in out.stderr
    out = cli("--json", "call", "add", "a=2", "b=3", "--", *CALC)
    assert json.loads(out.stdout)["structuredContent"] == {"result": 5}


def test_cli_tools_info_trace_and_config(tmp_path):
    out = cli("tools", "--", *CALC)
    assert out.stdout.splitlines()[0].startswith("add")
    out = cli("--trace", "info", "--", *CALC)
    assert "server: calc" in out.stdout and "-> {" in out.stderr and "<- {" in out.stderr
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"calc": {"command": CALC[0], "args": CALC[1:]}}}))
    out = cli("--config", str(config), "--server", "calc", "call", "multiply", "a=6", "b=7")
    assert out.stdout == "42\n", out.stderr
    out = cli("raw", "tools/list", "{}", "--", *CALC)
    assert "add" in [t["name"] for t in json.loads(out.stdout)["tools"]]


# ---------------------------------------------------------------------------
# Streamable HTTP and legacy HTTP+SSE
# ---------------------------------------------------------------------------

from testsupport import HttpTestHandler, HttpTestServer  # noqa: E402


def start_calc_http():
    proc = subprocess.Popen(CALC + ["--http", "0"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    line = proc.stderr.readline().decode()
    assert "listening on" in line, line
    return proc, line.split("listening on", 1)[1].strip()


@pytest.fixture(scope="module")
def calc_url():
    proc, url = start_calc_http()
    yield url
    proc.terminate()
    proc.wait(10)
    proc.stderr.close()


class FakeHttpHandler(HttpTestHandler):
    """FakeHttp's streams are chunked when its cfg says so."""

    def start_sse(self, headers=(), chunked=None):
        HttpTestHandler.start_sse(self, headers, bool(self.server.fake.cfg.get("chunked")))


class FakeHttp(object):
    """A handshake-era Streamable HTTP server (or, with legacy_sse=True, an HTTP+SSE one)
    in this process, on 127.0.0.1 port 0, that records every request.

    cfg: sse (answer requests as SSE), expire_after (forget the session after N tool calls),
    expire_always, auth (require 'Bearer good'), ping_first (a ping request inside the SSE
    answer), drop (end the POST stream after a primed event id; the answer comes on resume),
    get_stream (offer the GET stream and push a notification on it), status (answer every
    POST with this HTTP status and a body)."""

    def __init__(self, **cfg):
        self.cfg = cfg
        self.log = []
        self.sessions = []
        self.calls = 0
        self.answers = {}
        self.lock = threading.Lock()
        self.sse_queue = None
        self.parked = {}
        self.stopped = threading.Event()  # set by close(): what a request holds open ends then
        self.server = HttpTestServer(post=self._on_post, get=self._on_get, delete=self._on_delete,
                                     handler=FakeHttpHandler)
        self.server.fake = self
        self.url = self.server.url

    def _logged(self, h, msg=None):
        self.log.append((h.command, h.path, {k.lower(): v for k, v in h.headers.items()}, msg))
        return h

    def _on_post(self, h, msg):
        self.post(self._logged(h, msg), msg)

    def _on_get(self, h):
        self.get(self._logged(h))

    def _on_delete(self, h):
        self._logged(h).reply(200)

    def hold(self):
        """Keep a request unanswered, or a stream open and quiet, until the test ends (close()),
        as a server that is busy or has nothing to say: never a guess at how long the client needs."""
        self.stopped.wait(60)

    def close(self):
        self.stopped.set()
        self.server.stop()

    def requests(self, kind=None):
        return [entry for entry in self.log if kind is None or entry[0] == kind]

    def result_for(self, msg):
        name = msg["params"]["name"]
        args = msg["params"].get("arguments") or {}
        if name == "big":
            return {"content": [{"type": "text", "text": "y" * args["n"]}]}
        return {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}

    def post(self, h, msg):
        cfg = self.cfg
        if cfg.get("auth") and h.headers.get("Authorization") != "Bearer good":
            return h.reply(401, b'{"error":"invalid_token"}', headers=[(
                "WWW-Authenticate", 'Bearer error="invalid_token", resource_metadata="%s", scope="read write"'
                % self.url.replace("/mcp", "/.well-known/oauth-protected-resource"))])
        if cfg.get("status"):
            return h.reply(cfg["status"], b"<html>upstream exploded</html>", content_type="text/html")
        if h.path != "/mcp" or cfg.get("legacy_sse"):
            return h.reply(405 if cfg.get("legacy_sse") else 404, b"")
        method = msg.get("method")
        if method == "server/discover":
            return h.reply(400, b"")  # what handshake-era SDK servers answer without a session
        if method == "initialize":
            sid = "session-%d" % (len(self.sessions) + 1)
            self.sessions.append(sid)
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-http", "version": "1"}}}
            return h.reply(200, json.dumps(answer).encode(), headers=[("Mcp-Session-Id", sid)])
        sid = h.headers.get("Mcp-Session-Id")
        if sid not in self.sessions[-1:]:
            return h.reply(404, b"")
        if method is None:  # our answer to a server request
            self.answers[msg["id"]] = msg
            parked = self.parked.pop(msg["id"], None)
            if parked:
                parked.set()
            return h.reply(202)
        if "id" not in msg:
            return h.reply(202)
        if method == "tools/call":
            with self.lock:
                self.calls += 1
                expire = cfg.get("expire_always") or self.calls == cfg.get("expire_after")
            if expire:
                self.sessions.append("forgotten")
                return h.reply(404, b"")
            result = {"jsonrpc": "2.0", "id": msg["id"], "result": self.result_for(msg)}
            if msg["params"]["name"] == "slow":
                time.sleep(msg["params"]["arguments"]["s"])
            if not cfg.get("sse"):
                return h.reply(200, json.dumps(result).encode())
            h.start_sse()
            if cfg.get("ping_first"):
                ev = threading.Event()
                self.parked["p-%s" % msg["id"]] = ev
                h.event({"jsonrpc": "2.0", "id": "p-%s" % msg["id"], "method": "ping"})
                ev.wait(10)
            if cfg.get("drop"):
                h.event("", event_id="ev-%s-1" % msg["id"])
                self.answers["resume-ev-%s-1" % msg["id"]] = result
                h.wfile.write(b"retry: 10\n\n")
                return
            h.event({"jsonrpc": "2.0", "method": "notifications/message",
                     "params": {"level": "info", "data": "working"}})
            if msg["params"]["name"] == "stall":
                time.sleep(msg["params"]["arguments"]["s"])
            h.event(result, event_id="ev-%s-2" % msg["id"])
            if h.chunked:
                h.end_sse()
            return
        return h.reply(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}).encode())

    def get(self, h):
        cfg = self.cfg
        if cfg.get("legacy_sse"):
            if h.path != "/mcp":
                return h.reply(404, b"")
            return self.legacy_stream(h)
        last = h.headers.get("Last-Event-ID")
        if last:
            result = self.answers.pop("resume-" + last, None)
            h.start_sse()
            if result is not None:
                h.event(result, event_id=last + "-r")
            return
        if cfg.get("redirect_get") and h.headers.get("Host", "").startswith("127.0.0.1"):
            return h.reply(307, b"", headers=[("Location", self.url.replace("127.0.0.1", "localhost"))])
        if not cfg.get("get_stream"):
            return h.reply(405, b"")
        h.start_sse()
        h.event({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, event_id="g1")
        self.hold()  # the stream stays open: its end would make the client open it again

    def legacy_stream(self, h):
        import queue
        self.sse_queue = queue.Queue()
        h.start_sse()
        h.event(self.cfg.get("endpoint", "/messages?session=abc"), kind="endpoint")
        while True:
            msg = self.sse_queue.get()
            if msg is None:
                return
            h.event(msg, kind="message")


class LegacySse(FakeHttp):
    def post(self, h, msg):
        if h.path == "/mcp":
            return h.reply(405, b"")
        assert h.path == "/messages?session=abc"
        h.reply(202)
        method = msg.get("method")
        if method == "initialize":
            self.sse_queue.put({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                "serverInfo": {"name": "old-sse", "version": "0.1"}}})
        elif method == "tools/call":
            self.sse_queue.put({"jsonrpc": "2.0", "id": msg["id"], "result": self.result_for(msg)})
        elif method == "tools/list":
            self.sse_queue.put({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}})

    def close(self):
        if self.sse_queue is not None:
            self.sse_queue.put(None)
        FakeHttp.close(self)


@pytest.fixture
def http_fake():
    made = []

    def make(cls=FakeHttp, **cfg):
        made.append(cls(legacy_sse=cls is LegacySse, **cfg))
        return made[-1]
    yield make
    for f in made:
        f.close()


@pytest.mark.parametrize("version", ["auto", "2025-11-25", "2025-03-26"])
def test_http_calc(calc_url, version):
    with Client(calc_url, protocol_version=version) as c:
        assert c.transport == "streamable-http"
        assert c.protocol_version == ("2026-07-28" if version == "auto" else version)
        assert c.call("add", a=2, b=3) == 5
        with pytest.raises(ToolError):
            c.call("divide", a=1, b=0)
        assert "multiply" in [t["name"] for t in c.list_tools()]


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_http_calc_elicitation(calc_url, version):
    asked = []

    def elicitation(params):
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "Ada"}}

    with Client(calc_url, protocol_version=version, elicitation=elicitation) as c:
        assert c.call("greet") == "Hello, Ada!"
    assert asked == ["What is your name?"]


@pytest.mark.parametrize("sse", [False, True])
def test_http_json_and_sse_answers(http_fake, sse):
    server = http_fake(sse=sse)
    logs = []
    with Client(server.url, on_log=lambda *a: logs.append(a)) as c:
        assert c.protocol_version == "2025-11-25"
        assert c.server_info["name"] == "fake-http"
        assert c.call("echo", x=[1, 2]) == {"x": [1, 2]}
    posts = server.requests("POST")
    # discover probe, then initialize without a session, then everything with it
    assert [p[3].get("method") for p in posts[:3]] == ["server/discover", "initialize", "notifications/initialized"]
    assert "mcp-session-id" not in posts[1][2]
    for _, _, headers, _ in posts[2:]:
        assert headers["mcp-session-id"] == "session-1"
        assert headers["mcp-protocol-version"] == "2025-11-25"
        assert headers["accept"] == "application/json, text/event-stream"
        assert headers["content-type"] == "application/json"
    deletes = server.requests("DELETE")
    assert len(deletes) == 1 and deletes[0][2]["mcp-session-id"] == "session-1"
    if sse:
        assert wait_for(lambda: logs == [("info", None, "working")])


def test_http_get_stream_open_before_initialized(http_fake):
    # Found against server-everything: it announces tools/list_changed while handling
    # notifications/initialized, on the GET stream, which must already be open.
    server = http_fake(get_stream=True)
    with Client(server.url):
        pass
    order = [(kind, msg.get("method") if msg else None) for kind, _, _, msg in server.log]
    get = order.index(("GET", None))
    assert get < order.index(("POST", "notifications/initialized"))


def test_http_server_request_inside_sse_answer(http_fake):
    server = http_fake(sse=True, ping_first=True)
    with Client(server.url) as c:
        assert c.call("echo", n=1) == {"n": 1}
    answer = [v for k, v in server.answers.items() if str(k).startswith("p-")]
    assert answer and answer[0]["result"] == {}


def test_http_session_expiry_reinitializes_once(http_fake):
    server = http_fake(expire_after=2)
    with Client(server.url) as c:
        assert c.call("echo", n=1) == {"n": 1}
        assert c.call("echo", n=2) == {"n": 2}  # 404: re-initialize and retry
    assert [p[3].get("method") for p in server.requests("POST")].count("initialize") == 2
    server = http_fake(expire_always=True)
    with Client(server.url) as c:
        with pytest.raises(ConnectionClosed):
            c.call("echo", n=1)


def test_http_dropped_stream_resumes_with_last_event_id(http_fake):
    server = http_fake(sse=True, drop=True)
    with Client(server.url) as c:
        assert c.call("echo", r=1) == {"r": 1}
    gets = [g for g in server.requests("GET") if "last-event-id" in g[2]]
    assert gets and gets[0][2]["last-event-id"].startswith("ev-")


def test_http_standalone_get_stream_delivers_notifications(http_fake):
    server = http_fake(get_stream=True)
    notes = []
    with Client(server.url, on_notification=lambda m, p: notes.append(m)):
        assert wait_for(lambda: notes)
    assert notes[0] == "notifications/tools/list_changed"


def test_http_legacy_sse_fallback(http_fake):
    server = http_fake(LegacySse)
    with Client(server.url) as c:
        assert c.transport == "sse"
        assert c.protocol_version == "2024-11-05"
        assert c.call("echo", old=True) == {"old": True}
        assert c.list_tools() == []


def test_http_401_carries_the_challenge(http_fake):
    server = http_fake(auth=True)
    with pytest.raises(mcp_min.AuthRequired) as info:
        Client(server.url)
    err = info.value
    assert err.status == 401 and err.scope == "read write"
    assert err.resource_metadata.endswith("/.well-known/oauth-protected-resource")
    with Client(server.url, headers={"Authorization": "Bearer good"}) as c:
        assert c.call("echo", ok=1) == {"ok": 1}
    assert all(r[2].get("authorization") == "Bearer good" for r in server.log[2:])


def test_http_trace_redacts_credentials(http_fake, caplog):
    server = http_fake()
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    with Client(server.url, headers={"Authorization": "Bearer s3cret"}) as c:
        c.call("echo")
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "s3cret" not in text and "<redacted>" in text


def test_http_connection_refused_names_the_url():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    url = "http://127.0.0.1:%d/mcp" % port
    with pytest.raises(ConnectionClosed) as info:
        Client(url, timeout=5)
    assert url in str(info.value)


def test_http_wrong_path(calc_url):
    url = calc_url.replace("/mcp", "/nope")
    with pytest.raises(mcp_min.HttpError) as info:
        Client(url, timeout=10)
    assert info.value.status == 404 and "/nope" in str(info.value)


def test_http_5xx_names_status_and_body(http_fake):
    server = http_fake(status=502)
    with pytest.raises(mcp_min.HttpError) as info:
        Client(server.url, protocol_version="2025-11-25")
    assert info.value.status == 502 and "upstream exploded" in str(info.value)


def test_http_5_mb_sse_event(http_fake):
    server = http_fake(sse=True)
    with Client(server.url) as c:
        assert len(c.call("big", n=5 * 1024 * 1024)) == 5 * 1024 * 1024


def test_http_8_threads_at_once(calc_url):
    with Client(calc_url, protocol_version="2025-11-25") as c:
        results = {}

        def worker(i):
            results[i] = [c.call("multiply", a=i, b=k) for k in range(10)]

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert results == {i: [i * k for k in range(10)] for i in range(8)}


def test_http_timeout_sends_cancel(http_fake):
    server = http_fake()
    with Client(server.url) as c:
        with pytest.raises(RequestTimeout):
            c.call("slow", s=1.0, timeout=0.3)
        assert wait_for(lambda: any(p[3].get("method") == "notifications/cancelled" for p in server.requests("POST")))
        assert c.call("echo", after=1) == {"after": 1}


def test_http_cut_short_streams_are_not_pooled(http_fake):
    server = http_fake(sse=True, chunked=True)
    logs = []
    with Client(server.url, on_log=lambda *a: logs.append(a)) as c:
        for i in range(1, 3):
            fut = c.submit("stall", s=1.0)
            assert wait_for(lambda: len(logs) == i)  # the stream is open
            assert fut.cancel() is True
        assert c.call("echo", after=1) == {"after": 1}


def test_http_listen_that_gets_no_answer_ends_with_the_error(http_fake):
    server = http_fake(ModernHttp, listen_silent=True)
    with Client(server.url, timeout=1.0) as c:
        sub = c.listen()
        assert sub.ended.wait(10)
        assert isinstance(sub.error, RequestTimeout)


def test_legacy_sse_endpoint_on_another_origin_is_refused(http_fake):
    server = http_fake(LegacySse, endpoint="http://localhost:9/steal")
    with pytest.raises(ConnectionClosed, match="endpoint"):
        Client(server.url, headers={"Authorization": "Bearer secret"}, timeout=5)


def test_redirect_to_another_origin_drops_credentials(http_fake):
    server = http_fake(redirect_get=True, get_stream=True)
    with Client(server.url, headers={"Authorization": "Bearer secret"}):
        assert wait_for(lambda: any(g[2].get("host", "").startswith("localhost") for g in server.requests("GET")))
    redirected = [g for g in server.requests("GET") if g[2].get("host", "").startswith("localhost")]
    assert redirected and "authorization" not in redirected[0][2]


class ForwardProxy(object):
    """A plain HTTP forward proxy on 127.0.0.1 port 0 that records the request lines it gets
    (absolute URIs) and relays each request to its target."""

    def __init__(self):
        import urllib.error
        import urllib.request
        self.lines = []
        proxy = self
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))

        class Handler(HttpTestHandler):
            def relay(self):
                proxy.lines.append((self.command, self.path))
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection",
                                                                                   "proxy-connection")}
                try:
                    resp = direct.open(urllib.request.Request(self.path, body, headers, method=self.command),
                                       timeout=10)
                except urllib.error.HTTPError as e:
                    resp = e
                data = resp.read()
                self.send_response(resp.status if hasattr(resp, "status") else resp.code)
                for k, v in resp.headers.items():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_DELETE = relay

            def do_GET(self):  # no stream through this proxy: it relays whole answers only
                proxy.lines.append((self.command, self.path))
                self.send_response(405)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = HttpTestServer(handler=Handler)
        self.url = self.server.base

    def close(self):
        self.server.stop()


def test_http_goes_through_the_environment_proxy(calc_url, monkeypatch):
    """HTTP(S)_PROXY / NO_PROXY are urllib's own: requests reach the server through the proxy
    (absolute URIs on the request line), unless NO_PROXY exempts the host."""
    proxy = ForwardProxy()
    try:
        for name in ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        with Client(calc_url, protocol_version="2025-11-25") as c:
            assert c.call("add", a=2, b=3) == 5
        assert ("POST", calc_url) in proxy.lines and all(path.startswith("http://") for _, path in proxy.lines)
        seen = len(proxy.lines)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        with Client(calc_url, protocol_version="2025-11-25") as c:
            assert c.call("add", a=1, b=1) == 2
        assert len(proxy.lines) == seen  # exempted: straight to the server
    finally:
        proxy.close()


def test_legacy_sse_stream_survives_a_quiet_server(http_fake):
    server = http_fake(LegacySse)
    with connect_patiently(lambda: Client(server.url, timeout=0.5, transport="sse")) as c:
        time.sleep(1.0)  # the scenario itself: longer than the read timeout, with nothing sent
        assert c.call("echo", awake=True) == {"awake": True}


def test_cli_over_http_with_headers(calc_url, http_fake):
    out = cli("--url", calc_url, "call", "add", "a=1", "b=2")
    assert out.returncode == 0 and out.stdout == "3\n", out.stderr
    server = http_fake(auth=True)
    out = cli("--url", server.url, "--header", "Authorization: Bearer good", "call", "echo", "k=v")
    assert out.returncode == 0 and json.loads(out.stdout) == {"k": "v"}, out.stderr
    out = cli("--url", server.url, "tools")
    assert out.returncode == 3 and "401" in out.stderr and "resource metadata" in out.stderr


def test_tls_failure_names_the_url(http_fake):
    server = http_fake()
    url = server.url.replace("http://", "https://")
    with pytest.raises(ConnectionClosed) as info:
        Client(url, timeout=5)
    assert url.rsplit("/", 1)[0] in str(info.value) and "SSL" in str(info.value).upper()


# ---------------------------------------------------------------------------
# 2026-07-28: negotiation, stateless _meta, input_required rounds, listen, caching
# ---------------------------------------------------------------------------

META = "io.modelcontextprotocol/"


@pytest.mark.skipif(UNDER_WINE, reason=WINE_SLOW_START)
@pytest.mark.parametrize("mode, version", [
    ("modern", "2026-07-28"),                      # DiscoverResult lists 2026-07-28
    ("unsupported:2026-07-28", "2026-07-28"),      # -32022 naming a version we speak: stay stateless
    ("unsupported:2025-06-18", "2025-06-18"),      # -32022 naming only a handshake version
    ("legacy-only", "2025-06-18"),                 # DiscoverResult with only handshake versions
    ("header-mismatch", "2026-07-28"),             # another 2026 error: a 2026 server
    ("error", "2025-11-25"),                       # -32601 from a handshake-era server
    ("invalid-params", "2025-11-25"),              # -32602 from a handshake-era server
    ("result-no-versions", "2025-11-25"),          # a result that is no DiscoverResult
    ("silent", "2025-11-25"),                      # no answer within the probe timeout
    ("die", "2025-11-25"),                         # the server exits: start a fresh one, shake hands
])
def test_negotiation_table_stdio(fake, client_for, tmp_path, mode, version):
    # "die" is the process exiting (then the client starts a fresh one): a process; the rest on a thread.
    with (Client(fake(discover=mode), probe_timeout=0.5) if mode == "die"
          else client_for({"discover": mode}, probe_timeout=0.5)) as c:
        assert c.protocol_version == version
    methods = [m.get("method") for m in received(tmp_path)]
    assert methods[0] == "server/discover"
    assert ("initialize" in methods) == (version != "2026-07-28")


def test_a_server_slower_than_the_probe_that_chokes_on_it_is_started_again(fake, tmp_path):
    """The probe's wait ends before the server has started; it then reads server/discover, exits,
    and initialize goes to a fresh process that is not probed (seen under PyPy on a loaded machine)."""
    with Client(fake(discover="die"), probe_timeout=0.001) as c:
        assert c.protocol_version == "2025-11-25"
        assert c.call("echo", x=1) == {"x": 1}
    methods = [m.get("method") for m in received(tmp_path)]
    # (where the probe's wait ends before its line is even written -- seen under Wine -- the first
    # server gets initialize first, answers it, and no second one is started)
    assert methods[:2] == ["server/discover", "initialize"] or methods.count("server/discover") == 0


def test_a_server_that_stops_reading_after_the_probe_is_started_again_whoever_sees_it_first(fake, tmp_path):
    """The probe's wait ends; the server has closed its stdin on server/discover and exits a second
    later: writing initialize meets the closed pipe before the reader sees the exit (a race that a
    loaded machine showed in the test above).  The same restart, not a ConnectionClosed."""
    with Client(fake(discover="die-late"), probe_timeout=0.3) as c:
        assert c.protocol_version == "2025-11-25"
        assert c.call("echo", x=1) == {"x": 1}
    assert [m.get("method") for m in received(tmp_path)].count("initialize") == 1


def test_a_server_that_dies_at_initialize_is_started_at_most_twice(fake, tmp_path):
    with pytest.raises(ConnectionClosed, match="missing API key"):
        Client(fake(discover="die", init="exit"), probe_timeout=0.001)
    assert 1 <= [m.get("method") for m in received(tmp_path)].count("initialize") <= 2
def test_modern_requests_carry_meta_and_no_handshake(client_for, tmp_path):
    with client_for({"discover": "modern"}, roots=["/tmp"]) as c:
        assert c.protocol_version == "2026-07-28"
        assert c.server_info == {"name": "modern-fake", "version": "2"}
        assert c.instructions == "stateless"
        assert c.call("echo", x=1) == {"x": 1}
    msgs = received(tmp_path)
    assert "initialize" not in [m.get("method") for m in msgs]
    for m in msgs:
        if "id" in m:
            meta = m["params"]["_meta"]
            assert meta[META + "protocolVersion"] == "2026-07-28"
            assert meta[META + "clientInfo"]["name"] == "mcp_min"
            assert meta[META + "clientCapabilities"] == {"roots": {}, "extensions": {
                "io.modelcontextprotocol/tasks": {}, "io.modelcontextprotocol/skills": {}}}


def test_modern_input_required_rounds(client_for, tmp_path):
    asked = []

    def elicitation(params):
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "Ada"}}

    with client_for({"discover": "modern"}, elicitation=elicitation, roots=["/srv"]) as c:
        value = c.call("ask_input", rounds=2)
    assert asked == ["who?", "who?"]
    assert value["state"] == "st-2"
    assert value["responses"]["who"] == {"action": "accept", "content": {"name": "Ada"}}
    srv = pathlib.Path("/srv").resolve().as_uri()  # file:///srv; on Windows with the drive's letter
    assert value["responses"]["where"] == {"roots": [{"uri": srv, "name": "srv"}]}
    calls = [m for m in received(tmp_path) if m.get("method") == "tools/call"]
    assert len({m["id"] for m in calls}) == 3  # every retry has a new id
    assert "requestState" not in calls[0]["params"] and "inputResponses" not in calls[0]["params"]
    assert [m["params"].get("requestState") for m in calls[1:]] == ["st-1", "st-2"]
    assert all(m["params"]["arguments"] == {"rounds": 2} for m in calls)


def test_modern_input_rounds_are_capped(client_for):
    with client_for({"discover": "modern"}) as c:
        with pytest.raises(McpError, match="8 rounds"):
            c.call("ask_forever")
        with pytest.raises(McpError, match="cannot give"):
            c.call("ask_input")  # asks for elicitation, but no callback was given
        with pytest.raises(McpError, match="resultType 'task'"):
            c.call("odd_result")


def test_modern_resource_not_found_and_removed_methods(client_for):
    with client_for({"discover": "modern"}) as c:
        with pytest.raises(mcp_min.ResourceNotFound) as info:
            c.read_resource("file:///missing")
        assert info.value.code == -32602
        with pytest.raises(McpError, match="logLevel"):
            c.set_logging_level("debug")
        with pytest.raises(McpError, match="listen"):
            c.subscribe("file:///x")


def test_modern_list_cache_honours_ttl_and_refresh(client_for):
    with client_for({"discover": "modern", "ttl": 60000}) as c:
        assert [t["name"] for t in c.list_tools()] == ["v1"]
        assert [t["name"] for t in c.list_tools()] == ["v1"]  # fresh: served from the cache
        assert [t["name"] for t in c.list_tools(refresh=True)] == ["v2"]
    with client_for({"discover": "modern", "ttl": 0}) as c:
        assert [t["name"] for t in c.list_tools()] == ["v1"]
        assert [t["name"] for t in c.list_tools()] == ["v2"]  # ttlMs 0: stale at once


def test_modern_listen_delivers_and_closes(client_for, tmp_path):
    got = []
    with client_for({"discover": "modern", "ttl": 60000}) as c:
        assert [t["name"] for t in c.list_tools()] == ["v1"]
        sub = c.listen(prompts=False, resource_uris=["file:///a"], callback=lambda m, p: got.append(m))
        assert wait_for(lambda: got)
        assert got == ["notifications/tools/list_changed"]
        assert sub.acknowledged == {"toolsListChanged": True, "promptsListChanged": False,
                                    "resourcesListChanged": True, "resourceSubscriptions": ["file:///a"]}
        assert [t["name"] for t in c.list_tools()] == ["v2"]  # the change notice dropped the cache
        sub.close()
        assert sub.ended.is_set()
    msgs = received(tmp_path)
    listen = [m for m in msgs if m.get("method") == "subscriptions/listen"][0]
    cancels = [m for m in msgs if m.get("method") == "notifications/cancelled"]
    assert cancels and cancels[0]["params"]["requestId"] == listen["id"]


def test_legacy_listen_subscribes_and_filters(client_for, tmp_path):
    got = []
    with client_for() as c:
        c.listen(tools=True, callback=lambda m, p: got.append(m), resource_uris=["file:///a"])
        c.call("log")
        assert wait_for(lambda: got)
    assert got == ["notifications/tools/list_changed"]
    assert [m["params"]["uri"] for m in received(tmp_path) if m.get("method") == "resources/subscribe"] == [
        "file:///a"]


def test_calc_greet_in_both_eras_over_stdio():
    answers = []

    def elicitation(params):
        answers.append(params["requestedSchema"]["required"])
        return {"action": "accept", "content": {"name": "Grace"}}

    for version in ("auto", "2025-11-25"):
        with calc_client(protocol_version=version, elicitation=elicitation) as c:
            assert c.call("greet") == "Hello, Grace!"
    assert answers == [["name"], ["name"]]
    with calc_client() as c:  # no elicitation callback: the server says what it needs
        with pytest.raises(RequestError) as info:
            c.call("greet")
        assert info.value.code == -32021


@pytest.mark.parametrize("value, header", [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),
    ("line\nbreak", "=?base64?bGluZQpicmVhaw==?="),
    ("tab\tinside", "tab\tinside"), ("del\x7f", "=?base64?ZGVsfw==?="), ("", ""),
    (True, "true"), (False, "false"), (42, "42"),
])
def test_header_value_encoding(value, header):
    assert mcp_min._header_value(value) == header


class ModernHttp(FakeHttp):
    """A 2026-07-28 Streamable HTTP server (or, per cfg discover, a handshake-era one that
    answers the probe in a given way).  Records each request's Mcp-* headers."""

    TOOLS = [
        {"name": "route", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}}},
            "n": {"type": "number"}}}},
        {"name": "bad_type", "inputSchema": {"type": "object", "properties": {
            "x": {"type": "number", "x-mcp-header": "X"}}}},
        {"name": "bad_path", "inputSchema": {"type": "object", "properties": {
            "xs": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}}},
        {"name": "bad_name", "inputSchema": {"type": "object", "properties": {
            "x": {"type": "string", "x-mcp-header": "Bad Name"}}}},
    ]

    def post(self, h, msg):
        mode = self.cfg.get("discover", "modern")
        method = msg.get("method")
        modern = h.headers.get("MCP-Protocol-Version") == "2026-07-28"
        if mode != "modern":
            if method == "server/discover":
                if mode == "400-empty":
                    return h.reply(400, b"")
                if mode == "400-32602":
                    return h.reply(400, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                        "code": -32602, "message": "Bad Request: No valid session ID"}}).encode())
                if mode == "200-error":
                    return h.reply(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                        "code": -32601, "message": "Method not found"}}).encode())
                if mode == "silent":
                    self.hold()  # no answer while the client waits (it gives up after probe_timeout)
                    return h.reply(400, b"")
                if mode == "400-32022":
                    return h.reply(400, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                        "code": -32022, "message": "Unsupported protocol version",
                        "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}}).encode())
            return FakeHttp.post(self, h, msg)
        if not modern or h.headers.get("Mcp-Method") != method:
            return h.reply(400, json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "error": {
                "code": -32020, "message": "header mismatch"}}).encode())
        if method == "subscriptions/listen" and self.cfg.get("listen_silent"):
            self.hold()  # no answer while the client waits (past its timeout)
            return
        if method == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "ttlMs": 0,
                      "cacheScope": "public", "_meta": {META + "serverInfo": {"name": "modern-http", "version": "3"}}}
        elif method == "tools/list":
            result = {"tools": self.TOOLS, "ttlMs": 0, "cacheScope": "public"}
        elif method == "tools/call" and msg["params"]["name"] == "slow" and not self.cfg.get("sse"):
            # Work for a while, watching whether the client hangs up (a 2026-07-28 cancel).
            import select
            import socket
            deadline = time.monotonic() + msg["params"]["arguments"]["s"]
            while time.monotonic() < deadline:
                if select.select([h.connection], [], [], 0.02)[0] and \
                        h.connection.recv(1, socket.MSG_PEEK) == b"":
                    self.answers["slow_aborted"] = True
                    return
            result = {"content": [], "structuredContent": {}}
        elif method == "tools/call":
            wanted = "region" in msg["params"].get("arguments", {}) and msg["params"]["name"] == "route"
            if self.cfg.get("check_params", True) and wanted and "Mcp-Param-Region" not in h.headers:
                return h.reply(400, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                    "code": -32020, "message": "missing Mcp-Param-Region"}}).encode())
            if self.cfg.get("mismatch_once") and not self.answers.get("mismatched"):
                self.answers["mismatched"] = True
                return h.reply(400, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                    "code": -32020, "message": "Mcp-Param-Region does not match"}}).encode())
            if msg["params"]["name"] == "slow":
                time.sleep(msg["params"]["arguments"]["s"])
            mcp_headers = {k.lower(): v for k, v in h.headers.items() if k.lower().startswith("mcp-")}
            result = {"content": [], "structuredContent": mcp_headers}
        else:
            return h.reply(404, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32601, "message": "Method not found"}}).encode())
        result["resultType"] = "complete"
        answer = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        if self.cfg.get("sse"):
            h.start_sse()
            h.event(answer.decode())
            return
        return h.reply(200, answer)

    def get(self, h):
        if self.cfg.get("discover", "modern") == "modern":
            return h.reply(405, b"")
        return FakeHttp.get(self, h)


@pytest.mark.parametrize("mode, version", [
    ("modern", "2026-07-28"),
    ("400-32022", "2025-11-25"),
    ("400-empty", "2025-11-25"),
    ("400-32602", "2025-11-25"),
    ("200-error", "2025-11-25"),
    ("silent", "2025-11-25"),
])
def test_negotiation_table_http(http_fake, mode, version):
    server = http_fake(ModernHttp, discover=mode)
    with Client(server.url, probe_timeout=0.5) as c:
        assert c.protocol_version == version
        assert c.transport == "streamable-http"
    posts = server.requests("POST")
    probe = posts[0]
    assert probe[3]["method"] == "server/discover"
    assert probe[2]["mcp-protocol-version"] == "2026-07-28" and probe[2]["mcp-method"] == "server/discover"
    if version != "2026-07-28":
        init = [p for p in posts if p[3].get("method") == "initialize"][0]
        assert "mcp-protocol-version" not in init[2]


def test_modern_http_headers_and_x_mcp_header(http_fake, caplog):
    server = http_fake(ModernHttp)
    with Client(server.url) as c:
        assert c.server_info["name"] == "modern-http"
        with caplog.at_level(logging.WARNING, logger="mcp_min"):
            names = [t["name"] for t in c.list_tools()]
        assert names == ["route"]  # tools with invalid markings are hidden, with a warning
        assert sum("hiding tool" in r.getMessage() for r in caplog.records) == 3
        seen = c.call("route", region="eu-west", opts={"dry": True}, n=1)
        assert seen["mcp-method"] == "tools/call" and seen["mcp-name"] == "route"
        assert seen["mcp-param-region"] == "eu-west" and seen["mcp-param-dry-run"] == "true"
        seen = c.call("route", region="Zürich")
        assert seen["mcp-param-region"] == "=?base64?WsO8cmljaA==?=" and "mcp-param-dry-run" not in seen
    assert not server.requests("GET") and not server.requests("DELETE")  # stateless: no stream, no session
    assert all("mcp-session-id" not in p[2] for p in server.requests("POST"))


def test_modern_http_timeout_closes_the_stream(http_fake):
    server = http_fake(ModernHttp, sse=True)
    with Client(server.url) as c:
        with pytest.raises(RequestTimeout):
            c.call("slow", s=1.0, timeout=0.3)
        assert c.call("route", region="x")["mcp-param-region"] == "x"
    assert not [p for p in server.requests("POST") if p[3].get("method") == "notifications/cancelled"]


@pytest.mark.parametrize("version", ["auto", "2025-06-18"])
def test_calc_dual_era_over_http(calc_url, version):
    def elicitation(params):
        return {"action": "decline"}

    with Client(calc_url, protocol_version=version, elicitation=elicitation) as c:
        assert c.call("greet") == "Hello, stranger!"
        assert c.call("subtract", a=10, b=4) == 6


def _old_python():
    import glob
    import shutil
    this = [sys.executable] if sys.version_info[:2] == (3, 8) and sys.implementation.name == "cpython" else []
    for candidate in this + sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8"))) + sorted(
            glob.glob(os.path.expanduser("~/.pyenv/pyenv-win/versions/3.8*/python.exe"))) + [shutil.which("python3.8")]:
        if candidate and subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


OLD_PYTHON = _old_python()


@pytest.mark.skipif(OLD_PYTHON is None, reason="no Python 3.8 interpreter on this machine")
def test_runs_on_python_3_8(calc_url):
    """The module's promise: the oldest supported Python runs it, stdio and HTTP, both eras."""
    out = subprocess.run([OLD_PYTHON, os.path.join(HERE, "examples", "quickstart.py")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "3" and "6 * 7 = 42" in out.stdout
    code = "import mcp_min; c = mcp_min.Client(%r, protocol_version=%r); print(c.call('add', a=2, b=2)); c.close()"
    for version in ("auto", "2025-11-25"):
        out = subprocess.run([OLD_PYTHON, "-c", code % (calc_url, version)], capture_output=True, text=True,
                             timeout=60, cwd=HERE)
        assert out.stdout == "4\n", out.stderr


def test_modern_http_header_mismatch_refetches_tools_once(http_fake):
    server = http_fake(ModernHttp, mismatch_once=True)
    with Client(server.url) as c:
        c.list_tools()
        assert c.call("route", region="x")["mcp-param-region"] == "x"
    methods = [p[3].get("method") for p in server.requests("POST")]
    assert methods.count("tools/list") == 2 and methods.count("tools/call") == 2


def test_modern_http_first_call_costs_two_posts_and_headers_are_learnt_when_asked(http_fake):
    """No tools/list before a fresh client's first call; a server that needs an Mcp-Param-*
    header refuses with -32020, and the call is repeated once with the list read."""
    server = http_fake(ModernHttp)  # (which checks Mcp-Param-Region, as a server must)
    with Client(server.url) as c:
        assert c.call("route", n=1)["mcp-name"] == "route"  # (no marked argument given: no header needed)
        assert [p[3].get("method") for p in server.requests("POST")] == ["server/discover", "tools/call"]
        assert c.call("route", region="x")["mcp-param-region"] == "x"
        assert [p[3].get("method") for p in server.requests("POST")][2:] == ["tools/call", "tools/list", "tools/call"]
        assert c.call("route", region="y")["mcp-param-region"] == "y"  # known now: one POST
    assert [p[3].get("method") for p in server.requests("POST")][5:] == ["tools/call"]


def test_result_from_two_threads_runs_input_rounds_once(client_for):
    asked = []

    def elicitation(params):
        asked.append(1)
        time.sleep(0.1)
        return {"action": "accept", "content": {"name": "Ada"}}

    with client_for({"discover": "modern"}, elicitation=elicitation, roots=["/srv"]) as c:
        fut = c.submit("ask_input", rounds=1)
        values = []
        threads = [threading.Thread(target=lambda: values.append(fut.result())) for _ in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(20)
    assert len(values) == 2 and values[0] == values[1] and asked == [1]


def test_rejected_listen_reports_its_error(client_for):
    with client_for({"discover": "modern", "listen_error": True}) as c:
        sub = c.listen()
        assert sub.ended.wait(10)
        assert isinstance(sub.error, RequestError) and sub.error.code == -32601


def test_modern_http_cancel_before_the_answer_starts(http_fake):
    server = http_fake(ModernHttp)  # answers JSON, after the tool's work: nothing arrives until then
    with Client(server.url) as c:
        fut = c.submit("slow", s=2.0)
        assert wait_for(lambda: any(p[3].get("params", {}).get("name") == "slow" for p in server.requests("POST")))
        start = time.monotonic()
        assert fut.cancel() is True
        with pytest.raises(mcp_min.RequestCancelled):
            fut.result()
        assert wait_for(lambda: server.answers.get("slow_aborted"), 1.5)  # the server saw the hang-up
        assert time.monotonic() - start < 1.9  # before its work would have ended
        assert c.call("route", region="y")["mcp-param-region"] == "y"


# ---------------------------------------------------------------------------
# What we send matches the official JSON schema of the negotiated version
# ---------------------------------------------------------------------------

# Vendored copies of the official schemas (provenance, hashes and licence: tests/schema/README.md).
SCHEMAS = os.path.join(HERE, "tests", "schema")


def _schema_checker(version):
    import jsonschema  # a test requirement (tests/requirements.txt): missing means fail, never skip
    with open(os.path.join(SCHEMAS, version, "schema.json"), encoding="utf-8") as f:
        root = json.load(f)
    defs = "$defs" if "$defs" in root else "definitions"
    cls = jsonschema.validators.validator_for(root)

    def check(msg, *names):
        for name in names:
            if name not in root[defs]:
                continue
            schema = dict(root, **{"$ref": "#/%s/%s" % (defs, name)})
            errors = list(cls(schema).iter_errors(msg))
            assert not errors, "%s is not a valid %s (%s): %s" % (msg, name, version, errors[0].message)
    return check


def _check_sent(check, messages):
    kinds = set()
    for msg in messages:
        if "method" in msg and "id" in msg:
            check(msg, "JSONRPCRequest", "ClientRequest")
            kinds.add(msg["method"])
        elif "method" in msg:
            check(msg, "JSONRPCNotification", "ClientNotification")
            kinds.add(msg["method"])
        elif "result" in msg:
            check(msg, "JSONRPCResultResponse" if "2025-11-25" <= check.version else "JSONRPCResponse")
            check(msg["result"], "ClientResult")
            kinds.add("result")
        else:
            check(msg, "JSONRPCError", "JSONRPCErrorResponse")
            kinds.add("error")
    return kinds


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_handshake_messages_match_the_schema(client_for, tmp_path, version):
    check = _schema_checker(version)
    check.version = version
    callbacks = {"roots": ["/tmp"], "sampling": lambda p: {"role": "assistant", "model": "m",
                                                          "content": {"type": "text", "text": "hi"}}}
    if version >= "2025-06-18":
        callbacks["elicitation"] = lambda p: {"action": "accept", "content": {"name": "Ada"}}
    with client_for(protocol_version=version, **callbacks) as c:
        c.call("echo", x=1, progress=lambda *a: None)
        c.list_tools()
        c.ping()
        c.subscribe("file:///a")
        c.call("ask", method="ping")
        c.call("ask", method="roots/list")
        c.call("ask", method="sampling/createMessage", params={"messages": [], "maxTokens": 1})
        if "elicitation" in callbacks:
            c.call("ask", method="elicitation/create", params={"message": "name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}}})
        c.call("ask", method="nope/nope")
        with pytest.raises(RequestTimeout):
            c.call("sleep", s=0.5, timeout=0.05)
        # The timeout above sends notifications/cancelled only if the request went out before its
        # deadline (on a loaded machine it may not): a cancel after the server has the request does.
        slow = c.submit("sleep", {"s": 5})
        assert wait_for(lambda: any((m.get("params") or {}).get("arguments") == {"s": 5} for m in received(tmp_path)))
        assert slow.cancel()
        for call in (lambda: c.set_logging_level("info"), lambda: c.read_resource("file:///a"),
                     lambda: c.get_prompt("p", {"x": "1"}), lambda: c.complete("p", ("x", "1")),
                     lambda: c.list_resources(), lambda: c.list_resource_templates(), lambda: c.list_prompts()):
            with pytest.raises(RequestError):
                call()
    kinds = _check_sent(check, received(tmp_path))
    assert {"initialize", "notifications/initialized", "tools/call", "notifications/cancelled", "result",
            "error", "resources/read", "completion/complete"} <= kinds


def test_stateless_messages_match_the_schema(client_for, tmp_path):
    check = _schema_checker("2026-07-28")
    check.version = "2026-07-28"
    with client_for({"discover": "modern"}, roots=["/srv"],
                    elicitation=lambda p: {"action": "accept", "content": {"name": "Ada"}}) as c:
        c.call("echo", x=1, progress=lambda *a: None)
        c.call("ask_input", rounds=1)
        c.list_tools()
        with pytest.raises(mcp_min.ResourceNotFound):
            c.read_resource("file:///missing")
        c.listen(resource_uris=["file:///a"]).close()
    kinds = _check_sent(check, received(tmp_path))
    assert {"server/discover", "tools/call", "tools/list", "resources/read", "subscriptions/listen",
            "notifications/cancelled"} <= kinds
