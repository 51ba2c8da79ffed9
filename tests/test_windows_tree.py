"""What close() and a bounded write leave behind, on every OS and for real on Windows (issue 18):
close() ends a server's whole process tree also when the server exits at stdin EOF and leaves a
child running (POSIX: the process group; Windows: the job object), and a write whose deadline
passed before it began is a RequestTimeout on an intact connection, never a dropped one.
Real processes and pipes only.
"""
import json
import os
import signal
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import mcp_min  # noqa: E402
from testsupport import wait_for  # noqa: E402

PY = sys.executable
CALC = [PY, os.path.join(os.path.dirname(HERE), "examples", "calc.py")]
TREE_SERVER = os.path.join(HERE, "tree_server.py")
ARGV_SERVER = os.path.join(HERE, "argv_server.py")
# What cmd.exe would act on outside double quotes, spaces, and an empty argument.
HOSTILE_ARGS = ["a&b", "x^y", "p|q", "<in", "out>", "(1)", "bang!", "two words", "", "C:\\dir with space\\", "=,;"]
GONE_WITHIN = 30.0  # seconds a killed process may take to be reaped: only bounds a failure


class _Watched(object):
    """A process that is not our child, watched until it is gone (Windows: through a handle opened
    while it runs, so its pid cannot be reused meanwhile)."""

    def __init__(self, pid):
        self.pid, self._handle = pid, None
        if os.name == "nt":
            import _winapi
            synchronize, terminate = 0x00100000, 0x0001
            self._handle = _winapi.OpenProcess(synchronize | terminate, False, pid)

    def gone(self, within):
        if os.name == "nt":
            import _winapi
            return _winapi.WaitForSingleObject(self._handle, int(within * 1000)) == _winapi.WAIT_OBJECT_0
        return wait_for(self._gone_posix, within)

    def _gone_posix(self):
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                if f.read().rpartition(")")[2].split()[0] == "Z":
                    return True  # dead, waiting for whoever adopted it to reap it
        except OSError:
            pass
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def end(self):
        """Cleanup after a failed test: no child outlives the test run."""
        try:
            if os.name == "nt":
                import _winapi
                _winapi.TerminateProcess(self._handle, 1)
                _winapi.CloseHandle(self._handle)
            else:
                os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.parametrize("pipes", ["inherit", "detached"])
def test_close_ends_the_child_of_a_server_that_exits_at_eof(tmp_path, pipes):
    pidfile = tmp_path / "pids"
    client = mcp_min.Client([PY, TREE_SERVER, str(pidfile), pipes])
    try:
        assert client.call("add", a=2, b=3) == 5  # the server is up, and so is its child
        server_pid, child_pid = map(int, pidfile.read_text(encoding="utf-8").split())
        child = _Watched(child_pid)
    except BaseException:
        client.close()
        raise
    try:
        client.close()
        ours = [t.name for t in threading.enumerate() if t.name.endswith("-%d" % server_pid)]
        assert ours == [], "close() returned with these threads still running: %s" % ours
        assert child.gone(GONE_WITHIN), "the server's child outlived close()"
    finally:
        child.end()


def _read_to_eof(fd, received):
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        received.append(chunk)


def test_pipe_writer_withdraws_a_write_it_had_not_begun():
    read_end, write_end = os.pipe()
    writer = mcp_min._PipeWriter(write_end, "test-writer-withdraw")
    thread = next(t for t in threading.enumerate() if t.name == "test-writer-withdraw")
    received = []
    reader = threading.Thread(target=_read_to_eof, args=(read_end, received), daemon=True)
    big = b"a" * (4 << 20)  # far more than a pipe holds: the thread blocks in this write
    try:
        assert writer.write(big, time.monotonic() + 0.5) is False    # begun, not finished
        assert writer.write(b"MARK", time.monotonic() + 0.2) is None  # still queued: withdrawn
        assert writer.write(b"MARK", time.monotonic() - 1) is None    # its deadline had passed
        reader.start()
        assert writer.write(b"END", time.monotonic() + 60) is True
    finally:  # whatever failed: unblock the thread before its descriptor is closed
        if reader.ident is None:
            reader.start()
        writer.close()
        thread.join(60)
        os.close(write_end)
        reader.join(60)
        os.close(read_end)
    assert b"".join(received) == big + b"END"  # the withdrawn writes never went out


def test_a_deadline_that_passes_before_the_write_keeps_the_connection():
    # (An answer may still beat such a deadline where the clock ticks coarsely, as Windows' does.)
    with mcp_min.Client(CALC) as client:
        for _ in range(20):
            try:
                assert client.call("add", a=1, b=2, timeout=1e-6) == 3
            except mcp_min.RequestTimeout:
                pass  # (a ConnectionClosed fails the test)
        assert client.call("add", a=2, b=3) == 5


def test_connecting_with_a_deadline_shorter_than_the_start_is_a_timeout():
    with pytest.raises(mcp_min.RequestTimeout):
        mcp_min.Client(CALC, timeout=0.001)


@pytest.mark.skipif(sys.platform != "win32", reason=".cmd launchers run through cmd.exe, on Windows only")
def test_a_cmd_launcher_passes_hostile_arguments_intact(tmp_path):
    folder = tmp_path / "my servers"  # a space in the launcher's own path too
    folder.mkdir()
    launcher, seen = folder / "srv.cmd", tmp_path / "argv.json"
    launcher.write_text('@"%s" "%s" "%s" %%*\r\n' % (PY, ARGV_SERVER, seen), encoding="ascii")
    with mcp_min.Client([str(launcher)] + HOSTILE_ARGS) as client:
        assert client.call("add", a=2, b=3) == 5
    assert json.loads(seen.read_text(encoding="utf-8")) == HOSTILE_ARGS


@pytest.mark.skipif(sys.platform != "win32", reason=".cmd launchers exist on Windows only")
def test_a_cmd_launcher_found_through_pathext(tmp_path):
    (tmp_path / "calc-server.cmd").write_text('@"%s" "%s" %%*\r\n' % tuple(CALC), encoding="ascii")
    with mcp_min.Client(["calc-server"], env={"PATH": str(tmp_path)}) as client:
        assert client.call("add", a=2, b=3) == 5
