"""The HTTP engine: the deadline thread, thread limits, connection reuse, transport choice.

Against the hostile peer tests/hostile/http_server.py (raw sockets, every request logged with the
number of the connection it came on) and scenarios that need a process of their own
(tests/hostile/scenarios.py).

Run:  python -m pytest -q tests/test_http_engine.py
"""
import json
import os
import subprocess
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MCP_MIN_DIR") or os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import mcp_min  # noqa: E402
from mcp_min import Client  # noqa: E402

PY = sys.executable
PEERS = os.path.join(HERE, "hostile")


class Peer(object):
    """tests/hostile/http_server.py with a request log; stopped by the fixture."""

    def __init__(self, tmp, cfg):
        cfg = dict(cfg, log=str(tmp / ("http-%d.jsonl" % id(self))))
        self.cfg = cfg
        self.proc = subprocess.Popen([PY, "-S", os.path.join(PEERS, "http_server.py"), json.dumps(cfg)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()
        assert line.startswith("PORT "), "the HTTP peer did not start: %r" % line
        self.base = "http://127.0.0.1:%d" % int(line.split()[1])
        self.url = self.base + "/mcp"

    def requests(self, method=None):
        try:
            with open(self.cfg["log"]) as f:
                entries = [json.loads(line) for line in f if line.strip()]
        except OSError:
            return []
        return [e for e in entries if "method" in e and (method is None or e["method"] == method)]

    def stop(self):
        self.proc.kill()
        self.proc.wait(10)
        self.proc.stdin.close()
        self.proc.stdout.close()


@pytest.fixture
def peer(tmp_path):
    made = []

    def make(**cfg):
        made.append(Peer(tmp_path, cfg))
        return made[-1]
    yield make
    for p in made:
        p.stop()


# -- the deadline thread ------------------------------------------------------------------------

def test_the_deadline_thread_serves_every_open_client_and_ends_with_the_last(peer):
    srv = peer()
    first, second = Client(srv.url, timeout=10), Client(srv.url, timeout=10)
    try:
        with pytest.raises(mcp_min.RequestTimeout):
            first.call("never", timeout=0.3)
        first.close()
        names = [t.name for t in threading.enumerate()]
        assert "mcp_min-deadlines" in names, "the deadline thread ended while a client was still open"
        with pytest.raises(mcp_min.RequestTimeout):  # and it still cuts requests
            second.call("trickle_body", timeout=0.3)
    finally:
        second.close()
    assert [t.name for t in threading.enumerate() if t.name == "mcp_min-deadlines"] == []


@pytest.mark.parametrize("mode", ["streamable", "modern", "sse"])
def test_no_thread_to_start_is_one_clear_error_without_a_traceback(peer, mode):
    """Thread creation refused (a process at its limit): connecting, or a call, raises one McpError
    that says so; nothing is logged with a traceback, and nothing hangs."""
    srv = peer(mode=mode)
    env = dict(os.environ, MCP_MIN_DIR=ROOT)
    proc = subprocess.run([PY, "-S", os.path.join(PEERS, "scenarios.py"), "thread_fail", json.dumps({"url": srv.url})],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    got = out["connect"]
    assert got["result"] == "raised" and got["mcp_error"], got
    assert "thread" in got["message"], got["message"]
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-2000:]


# -- connections --------------------------------------------------------------------------------

def test_the_session_delete_reuses_a_kept_alive_connection(peer):
    srv = peer()
    with Client(srv.url, timeout=10) as c:
        assert c.call("echo", x=1) == {"x": 1}
    posts, deletes = srv.requests("POST"), srv.requests("DELETE")
    assert len(deletes) == 1, "no DELETE ended the session"
    assert deletes[0]["conn"] in {p["conn"] for p in posts}, "the DELETE opened a new connection"
