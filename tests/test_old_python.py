"""Python 3.6 and 3.7 get one line naming 3.8, never a SyntaxError from deep inside mcp_min.py.

(Issue 11 item 24: the version check at the top of mcp_min.py, and no 3.8-only syntax anywhere
in it -- the positional-only parameters are written the pre-3.8 way, with *args.)

Three layers, none of which skips:
- everywhere: the file contains nothing that Python 3.6 cannot compile (an AST scan run by the
  current interpreter, plus ast's 3.6 grammar switch where the interpreter has a reliable one);
- everywhere: the version check itself, in a child interpreter whose sys.version_info claims 3.7
  (import -> ImportError with the message; run as a script -> exactly one stderr line, status 2);
- where the machine has real 3.6 / 3.7 interpreters (this project's CI machine does: pyenv), the
  real thing. MCP_MIN_REQUIRE_OLD_PYTHONS=1 (set by .ci/test-interpreters) turns "none found"
  into a failure, so CI cannot silently fall back to the simulation.
"""
import ast
import glob
import io
import os
import re
import shutil
import subprocess
import sys
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(ROOT, "mcp_min.py")
MESSAGE = "mcp_min needs Python 3.8 or newer; this is Python %d.%d"


def _candidates(minor):
    """Where Python 3.<minor> may be installed: pyenv (pyenv-win on Windows), GitHub's tool cache,
    the PATH; on Windows also python.org's installer folders and the py launcher."""
    name = "3.%d" % minor
    pyenv = os.environ.get("PYENV_ROOT") or os.path.join(os.path.expanduser("~"), ".pyenv")
    toolcache = os.environ.get("RUNNER_TOOL_CACHE", "")
    if os.name == "nt":
        patterns = [os.path.join(pyenv, "pyenv-win", "versions", name + ".*", "python.exe"),
                    os.path.join(toolcache, "Python", name + ".*", "x64", "python.exe"),
                    os.path.join(os.environ.get("LOCALAPPDATA", ""), "Programs", "Python", "Python3%d" % minor,
                                 "python.exe"),
                    os.path.join(os.environ.get("ProgramFiles", ""), "Python3%d" % minor, "python.exe")]
    else:
        patterns = [os.path.join(pyenv, "versions", name + ".*", "bin", "python" + name),
                    os.path.join(toolcache, "Python", name + ".*", "x64", "bin", "python" + name)]
    found = [exe for pattern in patterns for exe in sorted(glob.glob(pattern))]
    exe = shutil.which("python" + name)
    if exe and os.sep + "shims" + os.sep not in exe:  # pyenv shims refuse unselected versions
        found.append(exe)
    launcher = shutil.which("py") if os.name == "nt" else None
    if launcher:  # the py launcher knows every registered install
        try:
            out = subprocess.run([launcher, "-" + name, "-c", "import sys; print(sys.executable)"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 universal_newlines=True, timeout=60).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            out = ""
        if out:
            found.append(out)
    return found


def _old_pythons():
    """{(3, 6): path, (3, 7): path} for the real interpreters this machine has."""
    found = {}
    for minor in (6, 7):
        for exe in _candidates(minor):
            try:
                out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"],
                                     stdout=subprocess.PIPE, timeout=60).stdout
            except (OSError, subprocess.SubprocessError):
                continue
            if out.strip() == ("(3, %d)" % minor).encode():
                found[(3, minor)] = exe
                break
    return found


def _run(argv):
    return subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)


def _newer_syntax(source):
    """What Python 3.6 cannot compile, as 'line: what' strings (the constructs this file could use)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) \
                and getattr(node.args, "posonlyargs", None):
            found.append("%d: positional-only parameters (/)" % node.lineno)
        if type(node).__name__ == "NamedExpr":
            found.append("%d: assignment expression (:=)" % node.lineno)
        if isinstance(node, ast.ImportFrom) and node.module == "__future__" \
                and any(a.name == "annotations" for a in node.names):
            found.append("%d: from __future__ import annotations (3.7)" % node.lineno)
    lines = source.splitlines(True)
    start = None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        # An f-string is one STRING token before Python 3.12, FSTRING_START ... FSTRING_END after.
        if tok.type == getattr(tokenize, "FSTRING_START", None):
            start = tok.start
            continue
        if tok.type == getattr(tokenize, "FSTRING_END", None) and start is not None:
            text = "".join(lines[start[0] - 1:tok.end[0]])[start[1]:]
            text = text[:len(text) - (len(lines[tok.end[0] - 1]) - tok.end[1])]
            start = None
        elif tok.type == tokenize.STRING and re.match(r"(?i)[rb]*f", tok.string):
            text = tok.string
        else:
            continue
        if re.search(r"\{[^{}]*[^=!<>]=\s*(![rsa])?(:[^{}]*)?\}", text):
            found.append("%d: f-string self-documenting '=' (3.8)" % tok.start[0])
    return found


def test_mcp_min_compiles_on_python_3_6():
    with open(MODULE, encoding="utf-8") as f:
        source = f.read()
    assert _newer_syntax(source) == []
    if sys.version_info >= (3, 10):  # before 3.10, feature_version lets `/` and `:=` through
        ast.parse(source, feature_version=(3, 6))


def test_the_scan_sees_what_3_6_cannot_compile():
    samples = ["def f(a, /):\n    pass\n", "if (n := 1):\n    pass\n", "x = f'{n=}'\n",
               "from __future__ import annotations\n"]
    for sample in samples:
        assert _newer_syntax(sample), sample
    assert _newer_syntax("x = f'{a == b}' + f'{a!r:>{w}}'\ndef g(a, *, b=1):\n    pass\n") == []


def test_version_check_message_simulated_on_this_interpreter():
    # The check at the top of mcp_min.py, reached by a child that claims to be 3.7.
    fake = "import sys; sys.version_info = (3, 7, 9, 'final', 0); "
    done = _run([sys.executable, "-c", fake + "import mcp_min"])
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "ImportError: " + MESSAGE % (3, 7), done.stderr
    done = _run([sys.executable, "-c", fake + "import runpy; runpy.run_path(%r, run_name='__main__')" % MODULE])
    assert (done.returncode, done.stdout, done.stderr) == (2, "", MESSAGE % (3, 7) + "\n")


def test_real_python_3_6_and_3_7_get_one_line():
    pythons = _old_pythons()
    if os.environ.get("MCP_MIN_REQUIRE_OLD_PYTHONS"):
        assert sorted(pythons) == [(3, 6), (3, 7)], "CI here must have pyenv's 3.6 and 3.7"
    for version, exe in sorted(pythons.items()):
        done = _run([exe, "-c", "import mcp_min"])
        assert done.returncode == 1 and "SyntaxError" not in done.stderr, done.stderr
        assert done.stderr.strip().splitlines()[-1] == "ImportError: " + MESSAGE % version
        done = _run([exe, MODULE, "call", "add", "a=1", "--", "python", "examples/calc.py"])
        assert (done.returncode, done.stdout, done.stderr) == (2, "", MESSAGE % version + "\n")
