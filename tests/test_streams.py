"""Client.over(): the stdio framing over byte streams the test already has, no subprocess.

Servers live in this process: examples/calc.py's stdio loop on a thread, and
tests/inproc_server.py.  After close() no thread of mcp_min's is left and the client's
descriptors are closed.
"""
import json
import os
import socket
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
import calc  # noqa: E402
from inproc_server import Server, serve_in_thread  # noqa: E402
from mcp_min import Client, ConnectionClosed, RequestTimeout  # noqa: E402
from testsupport import wait_for  # noqa: E402

POSIX = os.name == "posix"


BEFORE = set()  # the threads alive when the test started (earlier tests' lingering ones are not this one's)


@pytest.fixture(autouse=True)
def _threads_before():
    BEFORE.clear()
    BEFORE.update(threading.enumerate())


def ours():
    """mcp_min's threads started by this test and still alive (mcp_min-deadlines is one per
    process and outlives clients by design: DEADLINE_THREAD_IDLE)."""
    return [t.name for t in threading.enumerate() if t not in BEFORE and t.name.startswith("mcp_min-")
            and t.name != "mcp_min-deadlines"]


def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def calc_over_pipes():
    """examples/calc.py's stdio loop on a thread; returns the client's ends and the thread."""
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    thread = threading.Thread(target=calc.serve_stdio, args=(os.fdopen(to_server, "rb"), os.fdopen(from_server, "wb")),
                              daemon=True)
    thread.start()
    return to_client, from_client, thread


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_calc_in_this_process_over_pipes(version):
    reader, writer, thread = calc_over_pipes()
    with Client.over(reader, writer, protocol_version=version) as c:
        assert c.transport == "streams"
        assert c.protocol_version == ("2026-07-28" if version == "auto" else version)
        assert c.call("add", a=2, b=3) == 5
        assert [f.result() for f in [c.submit("multiply", a=i, b=2) for i in range(20)]] == [i * 2 for i in range(20)]
    thread.join(5)
    assert not thread.is_alive()  # the server saw EOF and ended
    assert wait_for(lambda: not ours())
    assert not is_open(reader) and not is_open(writer)


def test_elicitation_rounds_work_over_streams():
    reader, writer, thread = calc_over_pipes()
    with Client.over(reader, writer, elicitation=lambda p: {"action": "accept", "content": {"name": "Ada"}}) as c:
        assert "Ada" in str(c.call("greet"))


@pytest.mark.skipif(not POSIX, reason="on Windows a socket is not a file descriptor")
def test_a_socket_pair_and_close_from_our_side():
    ours_end, theirs = socket.socketpair()
    server = Server()
    thread = threading.Thread(target=server.serve, args=(theirs.makefile("rb"), theirs.makefile("wb")), daemon=True)
    thread.start()
    c = Client.over(ours_end, log_level="info")
    assert c.call("add", a=1, b=41) == 42
    c.close()
    assert ours_end.fileno() == -1  # closed
    assert wait_for(lambda: not ours())
    thread.join(5)
    assert not thread.is_alive()


@pytest.mark.skipif(not POSIX, reason="on Windows a socket is not a file descriptor")
def test_a_tcp_server_that_ignores_eof_is_still_left_cleanly():
    """A peer that never ends its output: the socket is shut down, so nothing waits for it."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve():
        conn, _ = listener.accept()
        accepted.append(conn)
        f = conn.makefile("rb")
        server = Server()
        out = conn.makefile("wb")
        for line in iter(f.readline, b""):
            for answer in server.handle(json.loads(line)):
                out.write(json.dumps(answer).encode() + b"\n")
                out.flush()
        # EOF seen, and this peer keeps its socket open anyway
    threading.Thread(target=serve, daemon=True).start()
    c = Client.over(socket.create_connection(listener.getsockname()))
    assert c.call("add", a=2, b=2) == 4
    c.close()
    assert wait_for(lambda: not ours())
    listener.close()
    for conn in accepted:
        conn.close()


def test_the_server_ending_fails_pending_calls_and_later_ones():
    reader, writer, thread = serve_in_thread(Server())
    c = Client.over(reader, writer)
    fut = c.submit("sleep", s=3)
    c._session.transport._close_stream(c._session.transport._streams[0])  # our writer: the server ends
    with pytest.raises(ConnectionClosed, match="ended its output|before answering"):
        fut.result(timeout=10)
    with pytest.raises(ConnectionClosed):
        c.call("add", a=1, b=1)
    c.close()
    assert wait_for(lambda: not ours())


@pytest.mark.skipif(not POSIX, reason="on Windows a socket is not a file descriptor")
def test_a_server_that_stops_reading_cannot_hold_a_call_past_its_deadline():
    ours_end, theirs = socket.socketpair()

    def serve_then_stall():  # answers server/discover, then never reads again
        f = theirs.makefile("rb")
        msg = json.loads(f.readline())
        theirs.sendall(json.dumps(Server().handle(msg)[0]).encode() + b"\n")
    threading.Thread(target=serve_then_stall, daemon=True).start()
    c = Client.over(ours_end)
    with pytest.raises((RequestTimeout, ConnectionClosed)):
        c.call("add", a="x" * (32 << 20), b="", timeout=1)  # more than any socket buffer holds
    c.close()
    assert wait_for(lambda: not ours())
    theirs.close()


@pytest.mark.parametrize("args, says", [
    (("not a stream",), "file descriptor"),
    ((object(),), "file descriptor"),
    ((-1,), "no usable file descriptor"),
])
def test_what_is_not_a_stream_is_refused(args, says):
    with pytest.raises(ValueError, match=says):
        Client.over(*args)


def test_streams_cannot_be_reopened_after_a_probe_ended_them():
    """A handshake-era server that quits on server/discover: over a subprocess mcp_min would
    start it again; streams cannot be, and the error says so."""
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()

    def quit_on_first_line():
        with os.fdopen(to_server, "rb") as r, os.fdopen(from_server, "wb"):
            r.readline()
    threading.Thread(target=quit_on_first_line, daemon=True).start()
    with pytest.raises(ConnectionClosed, match="cannot be reopened"):
        Client.over(to_client, from_client)
    assert wait_for(lambda: not ours())
    assert not is_open(to_client) and not is_open(from_client)


def test_readme_example_runs():
    """The README's pytest example, as written there."""
    with open(os.path.join(os.path.dirname(HERE), "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.index("# test_calc_in_process.py")
    code = readme[start:readme.index("```", start)]
    namespace = {}
    cwd = os.getcwd()
    os.chdir(os.path.dirname(HERE))
    try:
        exec(compile(code, "README.md", "exec"), namespace)
        namespace["test_add"]()
    finally:
        os.chdir(cwd)
    assert wait_for(lambda: not ours())
