"""How close() waits for a stdio server's exit (issue 30).

Where Linux gives a process descriptor (os.pidfd_open), close() waits on it, so the server's exit
wakes it at once; without one (another OS, Python 3.8, a kernel that refuses) it falls back to
Popen.wait.  Either way: a server that exits at stdin EOF is reaped; one that ignores EOF gets
SIGTERM after CLOSE_GRACE, and one that ignores SIGTERM too gets SIGKILL after another CLOSE_GRACE.

Run:  python -m pytest -q tests/test_stdio_close.py
"""
import errno
import json
import os
import signal
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MCP_MIN_DIR") or os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import mcp_min  # noqa: E402
from testsupport import NO_SITE  # noqa: E402

PY = sys.executable
FAKE_SERVER = os.path.join(HERE, "fake_server.py")
HAS_PIDFD = hasattr(os, "pidfd_open")
# From 3.15 on, Popen.wait waits on a process descriptor itself (and calls os.pidfd_open, so it is
# not patched there): mcp_min leaves the wait to it.
STDLIB_WAITS = sys.version_info >= (3, 15)


def fake(tmp_path, ignore_sigterm=False, **cfg):
    """argv of tests/fake_server.py (``ignore_sigterm``: started with SIGTERM ignored)."""
    cfg.setdefault("log", str(tmp_path / "received.jsonl"))
    if not ignore_sigterm:
        return [PY, *NO_SITE, FAKE_SERVER, json.dumps(cfg)]
    code = ("import runpy, signal, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
    return [PY, *NO_SITE, "-c", code, FAKE_SERVER, json.dumps(cfg)]


def server_of(client):
    return client._session.transport._child  # the Popen


def threads_of(pid):
    return [t for t in threading.enumerate() if t.name.endswith("-%d" % pid)]


@pytest.fixture(params=["popen-wait"] if STDLIB_WAITS else
                ["pidfd", "no-pidfd-function", "pidfd-refused"] if HAS_PIDFD else ["no-pidfd-function"])
def exits(request, monkeypatch):
    """How the wait for the server's exit is made: a process descriptor (where the platform has
    one), none (os.pidfd_open missing, as before Python 3.9 and off Linux), or one the kernel
    refuses (ENOSYS, as before Linux 5.3); from 3.15 on, Popen.wait's own.  Returns (which, the pids
    a descriptor was asked for)."""
    made = []
    if request.param == "pidfd":
        real = os.pidfd_open

        def recording(pid, *flags):
            made.append(pid)
            return real(pid, *flags)
        monkeypatch.setattr(os, "pidfd_open", recording)
    elif request.param == "pidfd-refused":
        def refused(pid, *flags):
            made.append(pid)
            raise OSError(errno.ENOSYS, "Function not implemented")
        monkeypatch.setattr(os, "pidfd_open", refused)
    elif request.param == "no-pidfd-function":
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    return request.param, made


def test_a_server_that_exits_at_eof_is_reaped_and_nothing_is_left(tmp_path, exits):
    how, made = exits
    c = mcp_min.Client(fake(tmp_path))
    assert c.call("echo", x=1) == {"x": 1}
    proc = server_of(c)
    c.close()
    assert proc.returncode == 0  # it exited on its own at stdin EOF, and close() reaped it
    assert made == ([proc.pid] if how in ("pidfd", "pidfd-refused") else [])
    assert threads_of(proc.pid) == []
    assert proc.stdout.closed and proc.stderr.closed and proc.stdin.closed


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM and SIGKILL are POSIX's")
@pytest.mark.parametrize("ignore_sigterm", [False, True], ids=["sigterm", "sigkill"])
def test_a_server_that_ignores_eof_is_still_ended_within_the_documented_times(tmp_path, exits, ignore_sigterm,
                                                                             monkeypatch):
    if exits[0] == "pidfd-refused":
        pytest.skip("the same wait as without os.pidfd_open, which the case beside this one runs")
    # the wait after SIGTERM made shorter than the 2 s default (the one before it is close()'s grace)
    monkeypatch.setattr(mcp_min, "CLOSE_GRACE", 0.5)
    # stall: the server stops reading stdin after the handshake, so it never sees EOF
    c = mcp_min.Client(fake(tmp_path, ignore_sigterm, stall=True), protocol_version="2025-11-25")
    proc = server_of(c)
    start = time.monotonic()
    c.close()
    took = time.monotonic() - start
    assert proc.returncode == (-signal.SIGKILL if ignore_sigterm else -signal.SIGTERM)
    # a bound, not a speed: CLOSE_GRACE before SIGTERM, another before SIGKILL, and slack for a loaded machine
    least = 2.0 + (mcp_min.CLOSE_GRACE if ignore_sigterm else 0)  # close()'s own grace is 2 s
    assert least - 0.1 <= took < least + 10
    assert threads_of(proc.pid) == []


def test_a_crashed_server_still_reports_its_exit_code(tmp_path, exits):
    # The reader thread's error waits for the exit the same way (at most EXIT_CODE_WAIT).
    c = mcp_min.Client(fake(tmp_path))
    with pytest.raises(mcp_min.ConnectionClosed) as info:
        c.call("crash", timeout=30)
    assert info.value.returncode == 3 and "exited with code 3" in str(info.value)
    c.close()
