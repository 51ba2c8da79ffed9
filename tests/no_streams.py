"""A program without standard streams that uses mcp_min, as pythonw.exe, services and embedders run
one: sys.stdin, sys.stdout and sys.stderr are None (and, started so, descriptors 0-2 are closed).

    python no_streams.py OUTFILE [PYTHON_OPTION...]     # the findings, as JSON, to OUTFILE
    python no_streams.py --check OUTFILE                # each broken promise on a line; exit 1 if any
    python.exe no_streams.py --pythonw OUTFILE          # Windows: pythonw.exe runs it, then --check

It runs each case of tests/test_no_streams.py and of .ci/test-windows's pythonw row: a call to
examples/calc.py, a server's exit error with its stderr tail, log lines (the program's, and a warning
from mcp_min's reader thread), the command line's main() with argument lists (shell included), where
our ends of a server's pipes are, and what is left after close().  The servers are started with this
interpreter (on Windows also the console python.exe beside pythonw.exe) and PYTHON_OPTION... (-S, say).
The run itself prints nothing: there is nowhere to print to.
"""
import json
import logging
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CALC = os.path.join(ROOT, "examples", "calc.py")
# A server that says why it stops, on stderr, then exits 3 before answering anything.
FAILING = "import sys; sys.stderr.write('no-streams: the database is gone\\n'); sys.exit(3)"
# A server that writes a line that is not JSON (mcp_min's reader thread logs a warning), then is calc.
NOISY = ("import runpy, sys; sys.stdout.write('not json\\n'); sys.stdout.flush(); sys.argv = [%r]; "
         "runpy.run_path(sys.argv[0], run_name='__main__')" % CALC)


def _descriptors():
    """Which of descriptors 0, 1 and 2 are open (POSIX; None elsewhere)."""
    if os.name != "posix":
        return None
    out = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            out.append(True)
        except OSError:
            out.append(False)
    return out


def _attempt(findings, key, run):
    try:
        findings[key] = run()
    except BaseException as e:  # (SystemExit too: whatever escapes is the finding)
        findings[key] = {"raised": "%s: %s" % (type(e).__name__, e)}


def run(out_path, python_options):
    findings = {"streams": [sys.stdin is None, sys.stdout is None, sys.stderr is None],
                "descriptors_at_start": _descriptors(), "thread_errors": []}
    threading.excepthook = lambda args: findings["thread_errors"].append(
        "%s: %s: %s" % (args.thread.name if args.thread else "?", args.exc_type.__name__, args.exc_value))
    sys.path.insert(0, ROOT)
    import mcp_min

    pythons = [sys.executable]
    console = os.path.join(os.path.dirname(sys.executable), "python.exe")
    if os.name == "nt" and os.path.basename(sys.executable).lower() == "pythonw.exe" and os.path.exists(console):
        pythons.append(console)
    findings["pythons"] = [os.path.basename(p) for p in pythons]
    logging.basicConfig(level=logging.DEBUG)  # a handler on the root logger, on the stderr that is None

    def call(python):
        with mcp_min.Client([python] + python_options + [CALC], timeout=30) as client:
            findings.setdefault("descriptors_with_a_client", _descriptors())
            proc = client._session.transport._proc  # (a look inside: where our ends of its pipes are)
            findings.setdefault("pipe_descriptors", [proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()])
            return client.call("add", {"a": 2, "b": 3})

    for i, python in enumerate(pythons):
        _attempt(findings, "call_%d" % i, lambda: call(python))

    def exit_error():
        try:
            mcp_min.Client([pythons[0]] + python_options + ["-c", FAILING], timeout=30).close()
        except mcp_min.ConnectionClosed as e:
            return {"error": type(e).__name__, "returncode": e.returncode, "stderr": e.stderr, "message": str(e)}
        return "no error"
    _attempt(findings, "exit_error", exit_error)

    def noisy():
        with mcp_min.Client([pythons[0]] + python_options + ["-c", NOISY], timeout=30) as client:
            value = client.call("add", {"a": 1, "b": 1})
        logging.getLogger("mcp_min").warning("a warning from the program itself")
        try:
            raise ValueError("logged with its traceback")
        except ValueError:
            logging.getLogger("mcp_min").exception("an error from the program itself")
        return value
    _attempt(findings, "noisy_call_and_logging", noisy)

    server = ["--"] + [pythons[0]] + python_options
    cli = {"call": ["call", "add", "a=2", "b=3"] + server + [CALC],
           "trace": ["--trace", "call", "add", "a=2", "b=3"] + server + [CALC],
           "exits": ["call", "add", "a=2", "b=3"] + server + ["-c", FAILING],
           "shell": ["shell"] + server + [CALC],
           "usage": ["no-such-command"]}
    for name, argv in sorted(cli.items()):
        _attempt(findings, "cli_" + name, lambda: mcp_min.main(argv))
        logging.getLogger().handlers[:] = []  # (each main() installs its own, as a fresh process would have)
        logging.getLogger("mcp_min").handlers[:] = []
        logging.getLogger("mcp_min").propagate = True

    findings["threads_after_close"] = sorted(t.name for t in threading.enumerate()
                                             if t is not threading.main_thread())
    findings["streams_after"] = [sys.stdin is None, sys.stdout is None, sys.stderr is None]
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(findings, f, indent=1, sort_keys=True)


def start_pythonw(out_path, timeout):
    """Windows: run this program with the pythonw.exe beside sys.executable, started as Explorer
    starts it, with no standard handles (DETACHED_PROCESS: no console, and none inherited), so that
    its sys.stdin, sys.stdout and sys.stderr are None.  Returns its exit status."""
    import subprocess
    pythonw = os.path.join(os.path.dirname(sys.executable), "pythonw.exe")
    return subprocess.run([pythonw, os.path.abspath(__file__), out_path], timeout=timeout, close_fds=True,
                          creationflags=subprocess.DETACHED_PROCESS).returncode


def problems(findings):
    """Each finding that breaks a promise, in words (none: all kept)."""
    found = []

    def want(key, expected):
        if findings.get(key) != expected:
            found.append("%s: %r, wanted %r" % (key, findings.get(key), expected))

    want("streams", [True, True, True])
    want("streams_after", [True, True, True])
    for i in range(len(findings.get("pythons") or [None])):
        want("call_%d" % i, 5)
    error = findings.get("exit_error")
    if not (isinstance(error, dict) and error.get("returncode") == 3
            and "no-streams: the database is gone" in error.get("stderr", [])
            and "exited with code 3" in error.get("message", "")):
        found.append("exit_error: %r, wanted ConnectionClosed, code 3, with the stderr line" % (error,))
    want("noisy_call_and_logging", 2)
    for name, status in (("call", 0), ("trace", 0), ("exits", 4), ("shell", 0), ("usage", 2)):
        want("cli_" + name, status)
    want("thread_errors", [])
    want("threads_after_close", [])
    if not all(fd > 2 for fd in findings.get("pipe_descriptors") or [0]):
        found.append("pipe_descriptors: %r, wanted all above 2" % (findings.get("pipe_descriptors"),))
    if findings.get("descriptors_with_a_client") is not None:
        want("descriptors_with_a_client", findings.get("descriptors_at_start"))
    return found


def report(out_path):
    """Print each broken promise in the findings at ``out_path``, or "ok"; returns 1 if any, else 0."""
    try:
        with open(out_path, encoding="utf-8") as f:
            broken = problems(json.load(f))
    except (OSError, ValueError) as e:
        broken = ["no findings (%s): the program did not finish" % e]
    print("\n".join(broken) or "ok")
    return 1 if broken else 0


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        sys.exit(report(sys.argv[2]))
    if sys.argv[1] == "--pythonw":
        if os.path.exists(sys.argv[2]):
            os.remove(sys.argv[2])  # (an earlier run's findings are not this run's)
        status = start_pythonw(sys.argv[2], 300)
        if status:
            print("pythonw.exe exited with status %d" % status)
        sys.exit(report(sys.argv[2]) or int(status != 0))
    run(sys.argv[1], sys.argv[2:])
