"""Nothing of mcp_min is left once close() returns: no thread, no child process, no descriptor.

Each case runs tests/leftovers.py in a fresh process (so nothing another test left counts) against
one of the hostile peers of tests/hostile/, over every transport (stdio, Client.over on pipes and on
a socket, Streamable HTTP, legacy HTTP+SSE), and reads what that process still had right after its
clients closed -- no waiting, no polling.  Also: a callback still answering the server, a submitted
call still settling, a task still followed, a Group, a write blocked on a stopped server, and the
OAuth loopback listener (alone, and through the whole login: approved, denied, timed out).

Run:  python -m pytest -q tests/test_close_leaves_nothing.py
"""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import warnings

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MCP_MIN_DIR") or os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import mcp_min  # noqa: E402
from testsupport import NO_SITE  # noqa: E402

PY = sys.executable
PEERS = os.path.join(HERE, "hostile")
LEFTOVERS = os.path.join(HERE, "leftovers.py")

# A 2026-07-28 tool whose every answer asks for input (the "settling" workload).
ASK_INPUT = {"tools/call:ask_input": {"resultType": "input_required", "inputRequests": {
    "who": {"method": "elicitation/create", "params": {"message": "who?", "requestedSchema": {
        "type": "object", "properties": {}}}}}}}

# transport -> (peer, its configuration): every way mcp_min moves messages.  "pipes" and "socket":
# Client.over() a stdio peer that leftovers.py starts on os pipes / a socketpair.
TRANSPORTS = {
    "stdio": ("stdio", {}),
    "stdio-2026": ("stdio", {"era": "modern", "results": ASK_INPUT}),
    "over-pipes": ("pipes", {}),
    "over-socket": ("socket", {}),
    "streamable-json": ("http", {"mode": "streamable", "get": "stream", "get_events": ["hold"]}),
    "streamable-sse": ("http", {"mode": "streamable", "answer": "sse"}),
    "streamable-2026": ("http", {"mode": "modern", "results": ASK_INPUT}),
    "legacy-sse": ("http", {"mode": "sse"}),
}
MODERN = ("stdio-2026", "streamable-2026")  # no server requests there: input rounds instead


class HttpServer(object):
    """tests/hostile/http_server.py in a process of its own; it ends when its stdin closes."""

    def __init__(self, cfg):
        self.proc = subprocess.Popen([PY, *NO_SITE, os.path.join(PEERS, "http_server.py"), json.dumps(cfg)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()
        assert line.startswith("PORT "), "the HTTP peer did not start: %r" % line
        self.url = "http://127.0.0.1:%d/mcp" % int(line.split()[1])

    def stop(self):
        self.proc.kill()
        self.proc.wait(10)
        self.proc.stdin.close()
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def servers():
    """transport -> server (URL or JSON argv), one HTTP peer per HTTP transport for the module."""
    started, out = [], {}
    try:
        for name, (kind, cfg) in TRANSPORTS.items():
            if kind == "http":
                started.append(HttpServer(cfg))
                out[name] = started[-1].url
            else:
                argv = json.dumps([PY, *NO_SITE, os.path.join(PEERS, "stdio_server.py"), json.dumps(cfg)])
                out[name] = argv if kind == "stdio" else kind + ":" + argv
        yield out
    finally:
        for server in started:
            server.stop()


def leftovers(workload, server, count=1):
    if os.name == "nt" and server.startswith("socket:"):
        pytest.skip("Client.over() takes pipe ends on Windows, not sockets")
    env = dict(os.environ, MCP_MIN_DIR=ROOT)
    site = [] if workload.startswith("oauth") else NO_SITE  # (the OAuth world is test_oauth's, which imports pytest)
    proc = subprocess.run([PY] + site + [LEFTOVERS, workload, server, str(count)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, timeout=90)
    assert proc.returncode == 0, "leftovers.py %s failed:\n%s" % (workload, proc.stderr.decode()[-3000:])
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def assert_nothing_left(report):
    assert report["threads"] == [], "threads still alive after close(): %s" % report["threads"]
    if "fds" in report:  # Linux
        assert report["fds"] == [], "descriptors still open after close(): %s" % report["fds"]
        assert report["children"] == [], "child processes still there after close(): %s" % report["children"]
    # close()'s bound: the server's grace and a few CLOSE_GRACE steps, never the client's timeout
    assert report["close_seconds"] < 3 * mcp_min.CLOSE_GRACE, "close() took %.1f s" % report["close_seconds"]


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
@pytest.mark.parametrize("workload,count", [("calls", 1), ("calls", 4), ("timeout", 1), ("dropped", 1)])
def test_nothing_is_left_once_close_returns(servers, transport, workload, count):
    assert_nothing_left(leftovers(workload, servers[transport], count))


@pytest.mark.parametrize("transport", sorted(t for t in TRANSPORTS if t not in MODERN))
def test_a_callback_still_answering_the_server_is_waited_for(servers, transport):
    """A sampling callback (on an mcp_min-answer thread) that runs on when close() begins."""
    assert_nothing_left(leftovers("answering", servers[transport]))


@pytest.mark.parametrize("transport", ["stdio", "streamable-sse"])
def test_a_callback_that_outlives_the_wait_is_left_and_named(servers, transport):
    """close() stays bounded: a callback still running after CLOSE_GRACE keeps its thread (nothing
    else), and the log names it."""
    report = leftovers("answering-on", servers[transport])
    assert report["threads"] == ["mcp_min-answer"], report["threads"]
    assert report["close_seconds"] < 3 * mcp_min.CLOSE_GRACE, "close() took %.1f s" % report["close_seconds"]
    assert any("mcp_min-answer" in w and "callback" in w for w in report["warnings"]), report["warnings"]


@pytest.mark.parametrize("transport", MODERN)
def test_a_submitted_call_still_settling_is_waited_for(servers, transport):
    """Input rounds of a submitted call (on its mcp_min-settle-<id> thread) still running at close()."""
    assert_nothing_left(leftovers("settling", servers[transport]))


@pytest.mark.parametrize("transport", sorted(t for t, (kind, _) in TRANSPORTS.items() if kind in ("stdio", "http")))
def test_a_group_leaves_nothing(servers, transport):
    assert_nothing_left(leftovers("group", servers[transport]))


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="stops the server with SIGSTOP")
def test_a_write_blocked_on_a_stopped_server_over_a_socket_leaves_nothing(servers):
    """close() shuts the socket down, which ends the blocked write: its writer thread ends too."""
    assert_nothing_left(leftovers("stuck", servers["over-socket"]))


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="stops the server with SIGSTOP")
def test_a_write_blocked_on_a_stopped_server_over_pipes_keeps_closes_bound(servers):
    """Over pipes nothing can end a write blocked on a server that stopped reading (closing a
    descriptor another thread still writes to could hit the next file to get its number): close()
    still returns within its bound and leaves that writer and its descriptor, nothing else of its
    own (the reader, also stuck on the stopped server, and its descriptor the same way)."""
    report = leftovers("stuck", servers["over-pipes"])
    assert report["close_seconds"] < 3 * mcp_min.CLOSE_GRACE, "close() took %.1f s" % report["close_seconds"]
    assert set(report["threads"]) <= {"mcp_min-writer-streams", "mcp_min-reader-streams"}, report["threads"]
    assert any("still stuck" in w for w in report["warnings"]), report["warnings"]


# -- tasks ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def task_servers():
    """"stdio" and "http": tests/task_server.py (the HTTP one in a process of its own)."""
    proc = subprocess.Popen([PY, *NO_SITE, os.path.join(HERE, "task_server.py"), "{}", "--http"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL)
    try:
        line = proc.stderr.readline().decode()
        assert "listening on" in line, line
        yield {"stdio": json.dumps([PY, *NO_SITE, os.path.join(HERE, "task_server.py"), "{}"]),
               "http": line.split("listening on", 1)[1].strip()}
    finally:
        proc.kill()
        proc.wait(10)
        proc.stderr.close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_task_still_followed_leaves_nothing(task_servers, transport):
    assert_nothing_left(leftovers("task", task_servers[transport]))


# -- the OAuth loopback listener --------------------------------------------------------------

def _listener_threads():
    return [t for t in threading.enumerate() if t.name.startswith("mcp_min-oauth")]


def test_the_loopback_listener_closes_idle_connections_it_never_served():
    """Connections that send nothing (a browser's preconnects) end with the listener: once close()
    returns their sockets are closed (no ResourceWarning later) and no thread of it is left."""
    listener = mcp_min._LoopbackListener()
    idle = [socket.create_connection(("127.0.0.1", listener.port), timeout=5) for _ in range(3)]
    try:
        # A request on another connection is answered, so the listener has accepted the idle ones.
        served = socket.create_connection(("127.0.0.1", listener.port), timeout=5)
        served.sendall(b"GET /other HTTP/1.0\r\n\r\n")
        assert served.recv(100).startswith(b"HTTP/1.0 404"), "the listener did not answer"
        served.close()
        import gc
        gc.collect()  # what earlier tests left (PyPy collects late) is not the listener's
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            listener.close()
            assert _listener_threads() == [], "listener threads left: %s" % _listener_threads()
            gc.collect()
        leaked = [w for w in caught if issubclass(w.category, ResourceWarning)]
        assert leaked == [], "sockets left for the collector to close: %s" % [str(w.message) for w in leaked]
        for sock in idle:
            assert sock.recv(100) == b"", "an idle connection was not closed"
    finally:
        for sock in idle:
            sock.close()


@pytest.mark.parametrize("outcome", ["ok", "denied", "timeout"])
def test_the_login_leaves_nothing_of_the_loopback_listener(outcome):
    """The whole authorization-code flow through the loopback listener, with a browser that
    keeps a preconnect and a kept-alive connection open: approved, denied (an error redirect),
    or never back (the flow's wait runs out).  Once the client is closed (or its connect
    failed), nothing of the listener is left: no thread, no descriptor."""
    assert_nothing_left(leftovers("oauth-" + outcome, "-"))
