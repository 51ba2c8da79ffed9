"""The repository checks itself: mcp_min.py stays vendorable, the vendored test data is intact.

- mcp_min.py imports only the standard library and parses with the Python 3.8 grammar
  (.ci/check_module.py, run here as a unit test so that no runner can skip it; under a real
  3.8 interpreter the grammar check is exact, elsewhere it is ast's feature_version);
- the checker itself still catches what it is meant to catch;
- the vendored JSON schemas are byte-for-byte what tests/schema/README.md says they are.
"""
import hashlib
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKER = os.path.join(ROOT, ".ci", "check_module.py")
SCHEMA_DIR = os.path.join(ROOT, "tests", "schema")
VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


def _load_checker():
    spec = importlib.util.spec_from_file_location("check_module", CHECKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_module = _load_checker()


def test_mcp_min_is_standard_library_only_with_python38_syntax():
    assert check_module.check(os.path.join(ROOT, "mcp_min.py"), (3, 8)) == []


def test_checker_runs_as_a_script():
    done = subprocess.run([sys.executable, CHECKER, os.path.join(ROOT, "mcp_min.py")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 0, out
    assert "standard library only, Python 3.8 syntax: ok" in out
    assert "(grammar: " in out


@pytest.mark.parametrize("source", [
    "try:\n    from _queue import SimpleQueue\nexcept ImportError:\n    from queue import SimpleQueue\n",
    "try:\n    import ujson as json\nexcept (ImportError, AttributeError):\n    import json\n",
])
def test_checker_accepts_an_accelerator_with_a_standard_library_fallback(tmp_path, source):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert check_module.check(str(path), (3, 8)) == []


@pytest.mark.parametrize("source, expected", [
    ("import requests\n", "not in the standard library"),
    ("try:\n    import ujson as json\nexcept ImportError:\n    import simplejson as json\n",
     "not in the standard library"),  # an optional import whose replacement is no better
    ("try:\n    import numpy\nexcept ValueError:\n    import json\n", "not in the standard library"),
    ("from yaml import safe_load\n", "not in the standard library"),
    ("import zoneinfo\n", "needs Python 3.9"),
    ("x = 'ab'.removeprefix('a')\n", ".removeprefix needs Python 3.9"),
    ("x: list[int] = []\n", "list[...] outside a string annotation"),
    ("match x:\n    case 1:\n        pass\n", "syntax newer than Python 3.8"),
    ("type X = int\n", "syntax newer than Python 3.8"),
])
def test_checker_reports_what_3_8_cannot_run(tmp_path, source, expected):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    findings = check_module.check(str(path), (3, 8))
    assert any(expected in f for f in findings), findings


# Newer syntax that ast.parse(feature_version=(3, 8)) lets through on some interpreters.
@pytest.mark.parametrize("source", [
    "with (open('a') as f, open('b') as g):\n    pass\n",   # 3.9+ on 3.9 and 3.13
    "@x[0].y\ndef f():\n    pass\n",                       # PEP 614 (3.9)
    "a[b := 1]\n",                                           # 3.10
    "a[*b]\n",                                               # PEP 646 (3.11)
    'f"{d["k"]}"\n',                                         # PEP 701 (3.12)
])
def test_checker_uses_a_real_38_grammar_when_there_is_one(tmp_path, source):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    findings, how = check_module.check_with_note(str(path), (3, 8))
    if check_module.grammar_interpreter((3, 8)) is None:
        # Only the best-effort check is possible here, and the checker says so.
        assert how.startswith("ast feature_version"), how
    else:
        assert any("syntax newer than Python 3.8" in f for f in findings), (findings, how)


def test_checker_accepts_3_8_syntax_and_future_annotations(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from __future__ import annotations\nimport json, os.path, ssl\n"
                    "def f(a, /, b, *, c) -> list[int]:\n    if (n := len(b)) > 1:\n"
                    "        return [n]\n    return [a]\n", encoding="utf-8")
    assert check_module.check(str(path), (3, 8)) == []


def test_standard_library_list_on_this_interpreter():
    names = check_module.stdlib_module_names()
    assert {"json", "socket", "ssl", "subprocess", "threading", "urllib", "select", "hashlib", "signal"} <= names
    assert not {"pytest", "jsonschema", "_pytest"} & names


def _readme_hashes():
    with open(os.path.join(SCHEMA_DIR, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return dict(re.findall(r"^\| `([0-9-]+)/schema\.json` \| `[0-9a-f]{40}` \| `([0-9a-f]{64})` \|$", text, re.M))


def test_readme_lists_every_vendored_schema():
    assert sorted(_readme_hashes()) == VERSIONS
    on_disk = sorted(d for d in os.listdir(SCHEMA_DIR) if os.path.isdir(os.path.join(SCHEMA_DIR, d)))
    assert on_disk == VERSIONS
    assert os.path.isfile(os.path.join(SCHEMA_DIR, "LICENSE"))


@pytest.mark.parametrize("version", VERSIONS)
def test_vendored_schema_is_the_upstream_file(version):
    with open(os.path.join(SCHEMA_DIR, version, "schema.json"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    assert digest == _readme_hashes()[version]
