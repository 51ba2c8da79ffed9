"""Processes without standard streams (issue 26 §10): pythonw.exe on Windows, services and embedders
run with sys.stdin, sys.stdout and sys.stderr None, and, started so, with descriptors 0-2 closed.

tests/no_streams.py is such a program: a call to examples/calc.py, a server's exit error with its
stderr tail, log lines (the program's and those of mcp_min's threads), main() with argument lists,
and what is left after close().  Here it runs with descriptors 0-2 closed (POSIX: sh closes them
before exec) or, on Windows, as pythonw.exe started the way Explorer starts it, with no standard
handles (DETACHED_PROCESS); .ci/test-windows runs the same program under Wine's pythonw.exe.
Then the mixed cases: one stream None while the others are there (main()'s words never move to
the other stream), and descriptors closed after start behind the sys.stdout that still names them
(no pipe of a server takes their numbers).
"""
import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import mcp_min  # noqa: E402
import no_streams  # noqa: E402
from testsupport import NO_SITE  # noqa: E402

PY = sys.executable
NO_STREAMS = os.path.join(HERE, "no_streams.py")
CALC = [PY, *NO_SITE, no_streams.CALC]
FAILING = [PY, *NO_SITE, "-c", no_streams.FAILING]
PYTHONW = os.path.join(os.path.dirname(PY), "pythonw.exe")
pytestmark = pytest.mark.xdist_group("test_no_streams")  # (one test process runs the program, once)


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    """What tests/no_streams.py found, run without standard streams (once per test process)."""
    out = str(tmp_path_factory.mktemp("no_streams") / "findings.json")
    if os.name == "posix":
        argv = ["sh", "-c", 'exec "$@" <&- >&- 2>&-', "sh", PY, *NO_SITE, NO_STREAMS, out, *NO_SITE]
        subprocess.run(argv, timeout=60, check=True)
    else:
        if not os.path.exists(PYTHONW):
            pytest.skip("no pythonw.exe beside %s" % PY)
        assert no_streams.start_pythonw(out, 120) == 0
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def test_the_program_really_had_no_streams(findings):
    assert findings["streams"] == findings["streams_after"] == [True, True, True]
    if os.name == "posix":
        assert findings["descriptors_at_start"] == [False, False, False]


def test_a_call_works(findings):
    for i in range(len(findings["pythons"])):  # (Windows: pythonw.exe, then the console python.exe)
        assert findings["call_%d" % i] == 5, findings["pythons"][i]


def test_a_server_that_exits_gives_its_code_and_stderr_tail(findings):
    error = findings["exit_error"]
    assert error["error"] == "ConnectionClosed" and error["returncode"] == 3, error
    assert error["stderr"] == ["no-streams: the database is gone"]
    # (" before answering initialize" when our reader saw the exit first; not when writing met the closed pipe)
    assert "exited with code 3" in error["message"]
    assert "no-streams: the database is gone" in error["message"]


def test_log_lines_go_nowhere_quietly(findings):
    # a warning from mcp_min's reader thread (a line that is not JSON), the program's own warning and
    # traceback, through logging.basicConfig()'s handler on the stderr that is None
    assert findings["noisy_call_and_logging"] == 2
    assert findings["thread_errors"] == []


@pytest.mark.parametrize("name,status", [("call", mcp_min.EXIT_OK), ("trace", mcp_min.EXIT_OK),
                                         ("shell", mcp_min.EXIT_OK),
                                         ("exits", mcp_min.EXIT_UNREACHABLE), ("usage", mcp_min.EXIT_USAGE)])
def test_the_cli_returns_its_status_never_an_exception(findings, name, status):
    assert findings["cli_" + name] == status


def test_close_leaves_no_thread(findings):
    assert findings["threads_after_close"] == []


def test_a_servers_pipes_take_no_standard_descriptor(findings):
    # the server gets its own 0, 1 and 2 (it answered, and its stderr arrived); our ends stay above 2
    # (Windows: the C runtime keeps 0-2 for pythonw.exe's absent streams itself)
    assert min(findings["pipe_descriptors"]) > 2, findings["pipe_descriptors"]
    if os.name == "posix":
        assert findings["descriptors_with_a_client"] == [False, False, False]


# -- one stream missing, the others there --------------------------------------------------------

def test_without_stdout_the_cli_still_says_its_errors_on_stderr(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO("help\ntools\n"))
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", err)
    assert mcp_min.main(["call", "add", "a=2", "b=3", "--", *CALC]) == mcp_min.EXIT_OK
    assert err.getvalue() == ""
    assert mcp_min.main(["call", "add", "a=2", "b=3", "--", *FAILING]) == mcp_min.EXIT_UNREACHABLE
    assert "no-streams: the database is gone" in err.getvalue()
    assert mcp_min.main(["shell", "--", *CALC]) == mcp_min.EXIT_OK  # (help is cmd's own output: to nowhere too)
    assert "no-streams: the database is gone" in err.getvalue() and "error" not in err.getvalue()


def test_without_stderr_nothing_meant_for_it_reaches_stdout(monkeypatch, tmp_path):
    out = io.StringIO()
    config = tmp_path / "servers.json"
    config.write_text('{"mcpServers": {}}')
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", None)
    assert mcp_min.main(["servers", "--config", str(config)]) == mcp_min.EXIT_OK  # "no servers in ..."
    assert mcp_min.main(["call", "add", "a=2", "b=3", "--", *FAILING]) == mcp_min.EXIT_UNREACHABLE
    assert mcp_min.main(["no-such-command"]) == mcp_min.EXIT_USAGE
    assert out.getvalue() == ""
    assert mcp_min.main(["call", "add", "a=2", "b=3", "--", *CALC]) == mcp_min.EXIT_OK
    assert out.getvalue() == "5\n"


# A program whose descriptors 0-2 are closed after it started: sys.stdout still names descriptor 1.
CLOSED_LATER = textwrap.dedent('''
    import json, os, sys
    sys.path.insert(0, %r)
    import mcp_min
    calc, failing, out = json.loads(sys.argv[1])
    found = {}
    for fd in (0, 1, 2):
        os.close(fd)
    with mcp_min.Client(calc, timeout=30) as client:
        try:  # what print() to that stdout, or C code writing "to stdout", would do
            os.write(1, b"not for the server\\n")
            found["fd 1"] = "written"
        except OSError as e:
            found["fd 1"] = e.strerror
        found["call"] = client.call("add", {"a": 2, "b": 3})
    for name, argv in (("call", ["call", "add", "a=2", "b=3", "--"] + calc),
                       ("exits", ["call", "add", "a=2", "b=3", "--"] + failing), ("usage", ["no-such-command"])):
        try:
            found["cli_" + name] = mcp_min.main(argv)
        except BaseException as e:
            found["cli_" + name] = "%%s: %%s" %% (type(e).__name__, e)
    with open(out, "w") as f:
        json.dump(found, f)
''' % ROOT)


@pytest.mark.skipif(os.name != "posix", reason="descriptor numbers: POSIX")
def test_descriptors_closed_after_start_are_not_taken_by_a_servers_pipes(tmp_path):
    out = str(tmp_path / "found.json")
    done = subprocess.run([PY, *NO_SITE, "-c", CLOSED_LATER, json.dumps([CALC, FAILING, out])], timeout=60,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # 120: the interpreter's own flush of the closed stdout at exit failed, on Python 3.14+ (the same
    # for `os.close(1); print(5)` there); main()'s own statuses are in the findings
    assert done.returncode in (0, 120)
    with open(out, encoding="utf-8") as f:
        found = json.load(f)
    assert found["fd 1"] == "Bad file descriptor" and found["call"] == 5
    # the CLI's result cannot be written (status 1, as `echo 5 >&-`), not written into a server's stdin
    assert (found["cli_call"], found["cli_exits"], found["cli_usage"]) == (
        mcp_min.EXIT_OTHER, mcp_min.EXIT_UNREACHABLE, mcp_min.EXIT_USAGE)
