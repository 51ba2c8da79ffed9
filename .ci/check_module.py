#!/usr/bin/env python3
"""Check that a module stays vendorable: standard library imports only, Python 3.8 syntax.

Usage: python .ci/check_module.py mcp_min.py [--min 3.8]
Exit 0 when clean; otherwise prints one line per finding and exits 1 (2 on bad usage).

Runs on any Python 3.8+ (CPython or PyPy). The list of standard-library modules is
sys.stdlib_module_names on 3.10+; older interpreters list their own standard library folder
instead (good enough for the modules a one-file client imports).

The syntax check is exact only with the real grammar: ast.parse(feature_version=...) on a newer
interpreter is best effort and lets some newer syntax through (seen: parenthesized context
managers and relaxed decorators on 3.9 and 3.13, PEP 701 f-strings on 3.13, `a[*b]` and
`a[x := 1]` on 3.11+). So when this interpreter is not CPython at the minimum version, the file is
also compiled by one that is, if this machine has it (pyenv's versions, then pythonX.Y on the PATH);
the last output line says which grammar was used. CI runs it under a real 3.8 either way.
tests/test_module_check.py runs this same check as a unit test, so it can never be skipped.
"""
import ast
import glob
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import sysconfig

# Standard-library names added after 3.8 (a module that needs them won't import on 3.8).
NEWER_MODULES = {"zoneinfo": "3.9", "graphlib": "3.9", "tomllib": "3.11"}
# Attribute calls that exist only on newer Pythons; a cheap guard, not a proof (use vermin for that).
NEWER_ATTRS = {
    "removeprefix": "3.9", "removesuffix": "3.9", "is_relative_to": "3.9",
    "bit_count": "3.10", "cache": "3.9 (functools.cache)", "to_thread": "3.9",
    "waitstatus_to_exitcode": "3.9", "pairwise": "3.10", "batched": "3.12",
}
BUILTIN_GENERICS = {"list", "dict", "tuple", "set", "frozenset", "type"}


def stdlib_module_names():
    """Top-level names of this interpreter's standard library."""
    names = getattr(sys, "stdlib_module_names", None)
    if names:
        return set(names)
    # Before 3.10: the modules compiled into the interpreter plus what sits in the stdlib folders
    # (site-packages / dist-packages are not valid module names, so they are never listed).
    found = set(sys.builtin_module_names)
    paths = sysconfig.get_paths()
    folders = {paths.get("stdlib"), paths.get("platstdlib")}
    folders |= {os.path.join(f, "lib-dynload") for f in set(folders) if f}  # POSIX extension modules
    folders.add(os.path.join(sys.base_prefix, "DLLs"))  # Windows extension modules (select.pyd, _ssl.pyd...)
    if hasattr(sys, "pypy_version_info"):  # PyPy keeps part of its stdlib beside the interpreter's lib
        folders |= {os.path.join(os.path.dirname(f), "lib_pypy") for f in set(folders) if f}
    # Windows' embeddable distribution keeps it in pythonXY.zip, on sys.path, and its extension
    # modules (select.pyd, _socket.pyd...) beside that zip.
    zipped = {p for p in sys.path if os.path.basename(p).lower() == "python%d%d.zip" % sys.version_info[:2]}
    folders |= {os.path.dirname(p) for p in zipped}
    for module in pkgutil.iter_modules([f for f in folders if f and os.path.isdir(f)] + sorted(zipped)):
        found.add(module.name)
    # Standard-library modules that some platforms' builds lack (Windows has no readline, termios...):
    # a folder listing there cannot show them, and 3.10+'s stdlib_module_names lists them everywhere.
    found |= {"readline", "termios", "tty", "pty", "fcntl", "grp", "pwd", "resource", "curses", "posix"}
    return found


def grammar_interpreter(minimum):
    """A CPython of exactly the minimum version: this one, or one found on this machine, or None."""
    if sys.implementation.name == "cpython" and sys.version_info[:2] == tuple(minimum):
        return sys.executable
    name = "%d.%d" % tuple(minimum)
    pyenv = os.environ.get("PYENV_ROOT") or os.path.join(os.path.expanduser("~"), ".pyenv")
    found = sorted(glob.glob(os.path.join(pyenv, "versions", name + ".*", "bin", "python" + name)),
                   key=lambda p: [int(x) for x in re.findall(r"\d+", p.split(os.sep)[-3])], reverse=True)
    exe = shutil.which("python" + name)
    if exe and os.sep + "shims" + os.sep not in exe:  # a pyenv shim refuses a version not selected
        found.append(exe)
    for exe in found:
        try:
            done = subprocess.run([exe, "-c", "import sys, platform; print(platform.python_implementation(), "
                                   "*sys.version_info[:2])"], stdout=subprocess.PIPE, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and done.stdout.split() == [b"CPython", str(minimum[0]).encode(),
                                                             str(minimum[1]).encode()]:
            return exe
    return None


# Compiles the file given in argv[1]; prints "LINE MESSAGE" for a syntax error.
_COMPILE = ("import sys\nsource = open(sys.argv[1], 'rb').read()\ntry:\n    compile(source, sys.argv[1], 'exec')\n"
            "except SyntaxError as e:\n    print(e.lineno, e.msg)\n    sys.exit(1)\n")


def check_grammar(path, minimum):
    """(findings, how): the file compiled with the real grammar of the minimum version if possible."""
    exe = grammar_interpreter(minimum)
    if exe is None:
        return [], "ast feature_version only, best effort: no CPython %d.%d on this machine" % tuple(minimum)
    if exe == sys.executable:
        return [], "Python %d.%d's own grammar" % tuple(minimum)  # ast.parse in check() was exact
    done = subprocess.run([exe, "-c", _COMPILE, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=120)
    how = "compiled by %s" % exe
    if done.returncode == 0:
        return [], how
    line, _, msg = done.stdout.decode("utf-8", "replace").strip().partition(" ")
    return ["%s:%s: syntax newer than Python %d.%d: %s" % (path, line, minimum[0], minimum[1], msg)], how


def optional_imports(tree):
    """Imports in a ``try`` whose ``except ImportError`` imports a replacement: {import node:
    the top-level names its handlers import}.  Such an import is an accelerator the module can
    do without (CPython's C ``_queue`` beside ``queue``, absent on PyPy); the module depends only
    on the replacement, so the replacement is what must be standard library."""
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        fallbacks = set()
        for handler in node.handlers:
            caught = handler.type
            names = [n.id for n in ast.walk(caught) if isinstance(n, ast.Name)] if caught is not None else []
            if not set(names) & {"ImportError", "ModuleNotFoundError"}:
                continue
            for sub in ast.walk(handler):
                if isinstance(sub, ast.Import):
                    fallbacks |= {a.name.split(".")[0] for a in sub.names}
                elif isinstance(sub, ast.ImportFrom) and sub.level == 0 and sub.module:
                    fallbacks.add(sub.module.split(".")[0])
        if fallbacks:
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        found[sub] = fallbacks
    return found


def check(path, minimum=(3, 8)):
    """Findings (one string each) for the module at path; an empty list when it is clean."""
    return check_with_note(path, minimum)[0]


def check_with_note(path, minimum=(3, 8)):
    """(findings, how the grammar was checked)."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=path, feature_version=minimum)
    except SyntaxError as e:
        return ["%s:%s: syntax newer than Python %d.%d: %s" % (path, e.lineno, minimum[0], minimum[1], e.msg)], \
            "ast feature_version"
    findings, how = check_grammar(path, minimum)
    if findings:
        return findings, how
    stdlib = stdlib_module_names()
    optional = optional_imports(tree)
    findings = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top == "__future__":
                continue
            if top not in stdlib and not (node in optional and optional[node] <= stdlib):
                findings.append("%s:%d: imports %r, which is not in the standard library" % (path, node.lineno, name))
            if top in NEWER_MODULES and minimum < (3, 9):
                findings.append("%s:%d: %r needs Python %s" % (path, node.lineno, top, NEWER_MODULES[top]))
        if isinstance(node, ast.Attribute) and node.attr in NEWER_ATTRS:
            findings.append("%s:%d: .%s needs Python %s" % (path, node.lineno, node.attr, NEWER_ATTRS[node.attr]))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id in BUILTIN_GENERICS:
            findings.append("%s:%d: %s[...] outside a string annotation needs Python 3.9 "
                            "(fine only under `from __future__ import annotations` in annotations)"
                            % (path, node.lineno, node.value.id))
    if "from __future__ import annotations" in source:
        # subscripted builtins inside annotations are fine then; drop those findings
        ann_lines = set()
        for node in ast.walk(tree):
            ann = getattr(node, "annotation", None) or getattr(node, "returns", None)
            if ann is not None:
                for sub in ast.walk(ann):
                    ann_lines.add(getattr(sub, "lineno", -1))
        findings = [f for f in findings if not ("[...] outside" in f and int(f[len(path) + 1:].split(":")[0]) in ann_lines)]
    return findings, how


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    path = argv[0]
    minimum = (3, 8)
    if "--min" in argv:
        major, minor = argv[argv.index("--min") + 1].split(".")
        minimum = (int(major), int(minor))
    findings, how = check_with_note(path, minimum)
    for f in findings:
        print(f)
    if not findings:
        print("%s: standard library only, Python %d.%d syntax: ok" % (path, minimum[0], minimum[1]))
    print("(grammar: %s)" % how)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
