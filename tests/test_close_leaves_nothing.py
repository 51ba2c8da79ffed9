"""Nothing of mcp_min is left once close() returns: no thread, no child process, no descriptor.

Each case runs tests/leftovers.py in a fresh process (so nothing another test left counts) against
one of the hostile peers of tests/hostile/, over every transport, and reads what that process
still had right after its clients closed -- no waiting, no polling.  The OAuth loopback listener's
leftovers are checked here too.

Run:  python -m pytest -q tests/test_close_leaves_nothing.py
"""
import json
import os
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

PY = sys.executable
PEERS = os.path.join(HERE, "hostile")
LEFTOVERS = os.path.join(HERE, "leftovers.py")

# transport -> (peer, its configuration): every way mcp_min moves messages
TRANSPORTS = {
    "stdio": ("stdio", {}),
    "stdio-2026": ("stdio", {"era": "modern"}),
    "streamable-json": ("http", {"mode": "streamable", "get": "stream", "get_events": ["hold"]}),
    "streamable-sse": ("http", {"mode": "streamable", "answer": "sse"}),
    "streamable-2026": ("http", {"mode": "modern"}),
    "legacy-sse": ("http", {"mode": "sse"}),
}


class HttpServer(object):
    """tests/hostile/http_server.py in a process of its own; it ends when its stdin closes."""

    def __init__(self, cfg):
        self.proc = subprocess.Popen([PY, "-S", os.path.join(PEERS, "http_server.py"), json.dumps(cfg)],
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
                out[name] = json.dumps([PY, "-S", os.path.join(PEERS, "stdio_server.py"), json.dumps(cfg)])
        yield out
    finally:
        for server in started:
            server.stop()


def leftovers(workload, server, count=1):
    env = dict(os.environ, MCP_MIN_DIR=ROOT)
    proc = subprocess.run([PY, LEFTOVERS, workload, server, str(count)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, timeout=90)
    assert proc.returncode == 0, "leftovers.py %s failed:\n%s" % (workload, proc.stderr.decode()[-3000:])
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def assert_nothing_left(report):
    assert report["threads"] == [], "threads still alive after close(): %s" % report["threads"]
    if "fds" in report:  # Linux
        assert report["fds"] == [], "descriptors still open after close(): %s" % report["fds"]
        assert report["children"] == [], "child processes still there after close(): %s" % report["children"]


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
@pytest.mark.parametrize("workload,count", [("calls", 1), ("calls", 4), ("timeout", 1), ("dropped", 1)])
def test_nothing_is_left_once_close_returns(servers, transport, workload, count):
    assert_nothing_left(leftovers(workload, servers[transport], count))


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
