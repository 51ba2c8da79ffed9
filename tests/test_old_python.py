"""Python 3.6 and 3.7 cannot compile mcp_min.py; the line their SyntaxError shows says why.

mcp_min's methods have real signatures (``call(self, name, arguments=None, /, *, timeout=...)``:
positional-only parameters, Python 3.8 syntax), so an interpreter older than 3.8 stops while
compiling, before any code of the file runs, with a plain SyntaxError.  The file makes that
error readable: its first line of 3.8-only syntax carries "mcp_min needs Python 3.8 or newer",
and a SyntaxError prints the line it stopped at.  (Until 0.2.0 the file parsed on 3.6 and a version
check printed one line; issue 19 item 9 traded that for signatures that help() and IDEs show.)

Layers, none of which skips:
- everywhere: the file contains no syntax newer than 3.8 (the module check does that) and its
  first 3.8-only construct is on the line with the message (an AST scan);
- where the machine has real 3.6 / 3.7 interpreters (this project's CI machine does: pyenv), the
  real thing: import and run as a script both fail with a SyntaxError whose shown line says
  mcp_min needs 3.8. MCP_MIN_REQUIRE_OLD_PYTHONS=1 (set by .ci/test-interpreters) turns "none
  found" into a failure, so CI cannot silently skip it.
"""
import ast
import glob
import io
import os
import re
import shutil
import subprocess
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(ROOT, "mcp_min.py")
MESSAGE = "mcp_min needs Python 3.8 or newer"


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


def _first_3_8_line(source):
    """The line number of the first construct Python 3.6/3.7 cannot parse (None: there is none).
    (3.6 reports a parse error before it looks at ``from __future__ import annotations``.)"""
    found = [int(f.split(":")[0]) for f in _newer_syntax(source) if "__future__" not in f]
    return min(found) if found else None


def test_the_first_line_older_pythons_stop_at_says_why():
    with open(MODULE, encoding="utf-8") as f:
        source = f.read()
    line = _first_3_8_line(source)
    assert line is not None, "mcp_min.py has no 3.8 syntax: then 3.6/3.7 would import it"
    assert MESSAGE in source.splitlines()[line - 1], source.splitlines()[line - 1]
    assert "from __future__ import annotations" in source.split('"""', 2)[2][:200]  # 3.7+ syntax, right after


def test_the_scan_sees_what_3_6_cannot_compile():
    samples = ["def f(a, /):\n    pass\n", "if (n := 1):\n    pass\n", "x = f'{n=}'\n",
               "from __future__ import annotations\n"]
    for sample in samples:
        assert _newer_syntax(sample), sample
    assert _newer_syntax("x = f'{a == b}' + f'{a!r:>{w}}'\ndef g(a, *, b=1):\n    pass\n") == []
    assert _first_3_8_line("x = 1\ndef f(a, /):\n    pass\ndef g(b, /):\n    pass\n") == 2


def test_real_python_3_6_and_3_7_show_the_line_that_says_why():
    pythons = _old_pythons()
    if os.environ.get("MCP_MIN_REQUIRE_OLD_PYTHONS"):
        assert sorted(pythons) == [(3, 6), (3, 7)], "CI here must have pyenv's 3.6 and 3.7"
    for version, exe in sorted(pythons.items()):
        for argv in ([exe, "-c", "import mcp_min"], [exe, MODULE, "call", "add", "a=1", "--", "python", "examples/calc.py"]):
            done = _run(argv)
            lines = done.stderr.strip().splitlines()
            assert done.returncode == 1 and done.stdout == "", (version, done)
            assert lines[-1].startswith("SyntaxError"), (version, done.stderr)
            assert any(MESSAGE in line for line in lines[-4:]), (version, done.stderr)
