"""The skills extension (SEP-2640, io.modelcontextprotocol/skills): list_skills, read_skill and
its verification, the SKILL.md frontmatter parser (private: mcp_min._parse_frontmatter), the CLI.

Against tests/skills_server.py, a stdio server driven by a JSON config that logs every message
it receives.  Run with:  python -m pytest -q tests/test_skills.py
Messages are checked against the vendored official schemas, tests/schema/<version>/schema.json.
"""

import base64
import copy
import hashlib
import json
import os
import pickle
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import mcp_min  # noqa: E402
from mcp_min import Client, McpError, RequestError, SkillVerificationError  # noqa: E402
from testsupport import NO_SITE, cli_argv  # noqa: E402

SERVER = os.path.join(HERE, "skills_server.py")
EXT = "io.modelcontextprotocol/skills"


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def make_entry(uri, frontmatter, files):
    """The entry a correct server lists for ``files`` (URI -> bytes, in listing order)."""
    return {"uri": uri, "frontmatter": frontmatter,
            "resources": [{"uri": u, "digest": digest(b), "size": len(b)} for u, b in files.items()]}


# A small catalog.  pdf-tools lists a supporting file before its SKILL.md and has a binary file.
PDF = "skill://pdf-tools/SKILL.md"
FORMS = "skill://pdf-tools/references/FORMS.md"
LOGO = "skill://pdf-tools/assets/logo.bin"
PDF_MD = (u"---\nname: pdf-tools\ndescription: Split, merge and fill PDF files (r\u00e9sum\u00e9s too)\n"
          u"metadata:\n  version: \"1.2\"\n  tags: [pdf, forms]\n---\n\n# PDF tools\n\n"
          u"Fill forms as references/FORMS.md explains.\n").encode("utf-8")
PDF_FM = {"name": "pdf-tools", "description": u"Split, merge and fill PDF files (r\u00e9sum\u00e9s too)",
          "metadata": {"version": "1.2", "tags": ["pdf", "forms"]}}
FORMS_MD = b"# Forms\n\nOne field per line.\n"
LOGO_BIN = bytes(range(256))
PDF_FILES = {FORMS: FORMS_MD, PDF: PDF_MD, LOGO: LOGO_BIN}

GIT = "skill://git-flow/SKILL.md"
GIT_MD = (b"---\n# team conventions\nname: git-flow\ndescription: >\n  Branch, commit and release\n"
          b"  the way this team does.\nlicense: 'Apache-2.0'\nallowed-tools:\n- Bash\n- Read\n---\n"
          b"Use short branches.\n")
GIT_FM = {"name": "git-flow", "description": "Branch, commit and release the way this team does.\n",
          "license": "Apache-2.0", "allowed-tools": ["Bash", "Read"]}

REFUNDS = "skill://acme/billing/refunds/SKILL.md"
REFUNDS_MD = b"---\nname: refunds\ndescription: \"Refund per policy\"\nmax: 3\n---\nCheck the receipt.\n"
REFUNDS_FM = {"name": "refunds", "description": "Refund per policy", "max": 3}

CATALOG = [(PDF, PDF_FM, PDF_FILES), (GIT, GIT_FM, {GIT: GIT_MD}), (REFUNDS, REFUNDS_FM, {REFUNDS: REFUNDS_MD})]


def catalog_entries():
    return [make_entry(uri, fm, files) for uri, fm, files in CATALOG]


def catalog_files():
    files = {}
    for _, _, group in CATALOG:
        files.update(group)
    return files


@pytest.fixture
def server(tmp_path):
    """server(skills=None, files=None, **cfg) -> the argv of a skills server logging to tmp_path."""
    made = []

    def make(skills=None, files=None, **cfg):
        served = {}
        for uri, data in (catalog_files() if files is None else files).items():
            try:  # bytes are served as text when they are UTF-8, else as a blob; a dict as given
                served[uri] = data if isinstance(data, dict) else data.decode("utf-8")
            except UnicodeDecodeError:
                served[uri] = {"blob": base64.b64encode(data).decode("ascii")}
        cfg.update(skills=catalog_entries() if skills is None else skills, files=served,
                   log=str(tmp_path / "received.jsonl"))
        path = tmp_path / ("server-%d.json" % len(made))
        path.write_text(json.dumps(cfg))
        made.append(path)
        return [sys.executable, *NO_SITE, SERVER, str(path)]  # NO_SITE: see testsupport
    return make


def received(tmp_path):
    path = tmp_path / "received.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def methods(tmp_path, name=None):
    msgs = [m for m in received(tmp_path) if "method" in m]
    return [m for m in msgs if m["method"] == name] if name else [m["method"] for m in msgs]


def reads(tmp_path):
    return [m["params"]["uri"] for m in methods(tmp_path, "resources/read")]


# ---------------------------------------------------------------------------
# What the client sends matches the official JSON schema (where the schema has a type for it)
# ---------------------------------------------------------------------------

def _schema_root(version):
    import jsonschema  # a test requirement: missing means fail, never skip
    with open(os.path.join(HERE, "schema", version, "schema.json"), encoding="utf-8") as f:
        return jsonschema, json.load(f)


def check_against_schema(version, messages):
    """Validate every message the client sent; returns the methods seen."""
    jsonschema, root = _schema_root(version)
    defs_key = "$defs" if "$defs" in root else "definitions"
    validator = jsonschema.validators.validator_for(root)

    def check(instance, name):
        schema = dict(root, **{"$ref": "#/%s/%s" % (defs_key, name)})
        errors = list(validator(schema).iter_errors(instance))
        assert not errors, "%s is not a valid %s (%s): %s" % (instance, name, version, errors[0].message)

    seen = set()
    for msg in messages:
        method = msg.get("method")
        if method is None:
            continue
        seen.add(method)
        if "id" not in msg:
            check(msg, "JSONRPCNotification")
            check(msg, "ClientNotification")
            continue
        check(msg, "JSONRPCRequest")
        if method == "skills/list":  # ListSkillsRequest extends PaginatedRequest
            check(msg, "PaginatedRequest")
        elif method == "skills/get":  # params: {uri} plus the request _meta, like resources/read's
            check(msg["params"], "ReadResourceRequestParams")
        else:
            check(msg, "ClientRequest")
        if version >= "2026-07-28":
            caps = msg["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
            assert caps["extensions"][EXT] == {}
    return seen


# ---------------------------------------------------------------------------
# Listing
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_list_skills_follows_every_page_and_reads_nothing(server, tmp_path, era):
    versions = ["2026-07-28", "2025-11-25"] if era == "2026-07-28" else ["2025-11-25"]
    with Client(server(versions=versions), protocol_version=era) as c:
        assert c.protocol_version == era
        assert c.list_skills() == catalog_entries()
    lists = methods(tmp_path, "skills/list")
    assert [(m.get("params") or {}).get("cursor") for m in lists] == [None, "1", "2"]  # page size 1
    assert reads(tmp_path) == []  # neither connecting nor listing fetches a file
    seen = check_against_schema(era, received(tmp_path))
    assert "skills/list" in seen


def test_the_extension_is_declared_in_both_eras(server, tmp_path):
    with Client(server(versions=["2025-11-25"])):
        pass
    init = methods(tmp_path, "initialize")[0]
    assert init["params"]["capabilities"]["extensions"][EXT] == {}
    (tmp_path / "received.jsonl").unlink()
    with Client(server()) as c:
        c.ping()
    sent = [m for m in received(tmp_path) if "id" in m]
    assert sent and all(m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"][EXT]
                        == {} for m in sent)


def test_nothing_is_read_on_connect_list_or_lookup_errors(server, tmp_path):
    with Client(server()) as c:
        c.list_skills()
        c.list_skills(refresh=True)
        with pytest.raises(McpError):
            c.read_skill("no-such-skill")
    assert methods(tmp_path).count("skills/list") == 9
    assert reads(tmp_path) == []


def test_a_server_without_the_extension_is_not_asked(server, tmp_path):
    with Client(server(declare=False)) as c:
        with pytest.raises(McpError) as info:
            c.list_skills()
        assert EXT in str(info.value)
        with pytest.raises(McpError):
            c.read_skill(PDF)
        with pytest.raises(McpError):
            c.read_skill("pdf-tools")
    assert not [m for m in methods(tmp_path) if m.startswith("skills/")]
    assert reads(tmp_path) == []


# ---------------------------------------------------------------------------
# Reading, verified
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_read_skill_returns_verified_files(server, tmp_path, era):
    versions = ["2026-07-28", "2025-11-25"] if era == "2026-07-28" else ["2025-11-25"]
    with Client(server(versions=versions), protocol_version=era) as c:
        skill = c.read_skill("pdf-tools")
    assert skill["uri"] == PDF and skill["name"] == "pdf-tools"
    assert skill["frontmatter"] == PDF_FM
    assert skill["text"] == PDF_MD.decode("utf-8")
    assert skill["body"] == "\n# PDF tools\n\nFill forms as references/FORMS.md explains.\n"
    assert skill["files"] == {PDF: PDF_MD, FORMS: FORMS_MD, LOGO: LOGO_BIN}
    assert list(skill["files"]) == [PDF, FORMS, LOGO]  # SKILL.md first, then the listing's order
    assert skill["entry"] == catalog_entries()[0]
    assert reads(tmp_path) == [PDF, FORMS, LOGO]
    assert {"skills/list", "resources/read"} <= check_against_schema(era, received(tmp_path))


def test_read_skill_by_uri_asks_skills_get(server, tmp_path):
    with Client(server()) as c:
        skill = c.read_skill(REFUNDS)
    assert skill["name"] == "refunds" and skill["frontmatter"] == REFUNDS_FM
    assert skill["files"] == {REFUNDS: REFUNDS_MD}
    assert methods(tmp_path, "skills/get")[0]["params"]["uri"] == REFUNDS
    assert "skills/list" not in methods(tmp_path)
    assert "skills/get" in check_against_schema("2026-07-28", received(tmp_path))


def test_read_skill_by_entry_and_by_path(server, tmp_path):
    with Client(server()) as c:
        git = c.read_skill(c.list_skills()[1])
        refunds = c.read_skill("acme/billing/refunds")  # the skill path also names it
    assert git["frontmatter"] == GIT_FM and git["body"] == "Use short branches.\n"
    assert refunds["uri"] == REFUNDS
    assert reads(tmp_path) == [GIT, REFUNDS]


def test_read_skill_without_files_reads_only_skill_md(server, tmp_path):
    with Client(server()) as c:
        skill = c.read_skill("pdf-tools", files=False)
    assert skill["files"] == {PDF: PDF_MD}
    assert reads(tmp_path) == [PDF]


def test_unknown_and_ambiguous_names(server, tmp_path):
    twin = "skill://other/refunds/SKILL.md"
    twin_md = REFUNDS_MD.replace(b"per policy", b"elsewhere")
    twin_fm = dict(REFUNDS_FM, description="Refund elsewhere")
    entries = catalog_entries() + [make_entry(twin, twin_fm, {twin: twin_md})]
    files = dict(catalog_files(), **{twin: twin_md})
    with Client(server(skills=entries, files=files)) as c:
        with pytest.raises(McpError) as info:
            c.read_skill("refunds")
        assert REFUNDS in str(info.value) and twin in str(info.value)
        with pytest.raises(McpError) as info:
            c.read_skill("nope")
        assert "nope" in str(info.value)
        with pytest.raises(RequestError) as info:
            c.read_skill("skill://nope/SKILL.md")
        assert info.value.code == -32602
        assert c.read_skill("other/refunds")["frontmatter"] == twin_fm
    assert reads(tmp_path) == [twin]


# ---------------------------------------------------------------------------
# Verification failures: each refused, naming the file, with nothing returned
# ---------------------------------------------------------------------------

def read_refused(server, tmp_path, files, skill="pdf-tools", entries=None):
    with Client(server(skills=entries, files=files)) as c:
        with pytest.raises(SkillVerificationError) as info:
            c.read_skill(skill)
    return info.value, reads(tmp_path)


def test_digest_mismatch_of_a_supporting_file(server, tmp_path):
    tampered = FORMS_MD.replace(b"One", b"Two")  # same size
    err, read = read_refused(server, tmp_path, dict(catalog_files(), **{FORMS: tampered}))
    assert err.problem == "digest" and err.uri == FORMS and err.skill == PDF
    assert err.expected == digest(FORMS_MD) and err.actual == digest(tampered)
    assert FORMS in str(err) and "digest" in str(err)
    assert read == [PDF, FORMS]  # stopped at the first bad file: logo.bin is never fetched


def test_digest_mismatch_of_skill_md_stops_before_other_files(server, tmp_path):
    tampered = PDF_MD.replace(b"Fill forms", b"Send forms")
    assert len(tampered) == len(PDF_MD)
    err, read = read_refused(server, tmp_path, dict(catalog_files(), **{PDF: tampered}))
    assert (err.problem, err.uri) == ("digest", PDF)
    assert read == [PDF]


def test_size_mismatch(server, tmp_path):
    err, read = read_refused(server, tmp_path, dict(catalog_files(), **{PDF: PDF_MD + b"more bytes\n"}))
    assert (err.problem, err.uri) == ("size", PDF)
    assert (err.expected, err.actual) == (len(PDF_MD), len(PDF_MD) + 11)
    assert PDF in str(err) and str(len(PDF_MD)) in str(err)
    assert read == [PDF]


def test_size_mismatch_of_a_binary_file(server, tmp_path):
    err, read = read_refused(server, tmp_path, dict(catalog_files(), **{LOGO: LOGO_BIN[:-1]}))
    assert (err.problem, err.uri, err.expected, err.actual) == ("size", LOGO, 256, 255)
    assert read == [PDF, FORMS, LOGO]


@pytest.mark.parametrize("change, differ", [
    (lambda md: md.replace(b"Split, merge", b"Leak, merge"), ["description"]),
    (lambda md: md.replace(b'version: "1.2"', b"version: 1.2"), ["metadata"]),  # a number, not a string
    (lambda md: md.replace(b"---\n\n#", b"license: MIT\n---\n\n#"), ["license"]),  # a field the entry lacks
    (lambda md: md.replace(b"name: pdf-tools\n", b""), ["name"]),
])
def test_frontmatter_mismatch(server, tmp_path, change, differ):
    tampered = change(PDF_MD)
    assert tampered != PDF_MD
    files = dict(PDF_FILES, **{PDF: tampered})
    entries = [make_entry(PDF, PDF_FM, files)]  # size and digest agree: only the frontmatter differs
    err, read = read_refused(server, tmp_path, files, entries=entries)
    assert (err.problem, err.uri) == ("frontmatter", PDF)
    assert sorted(set(err.expected) | set(err.actual)) == differ
    for field in differ:
        assert field in str(err)
    assert read == [PDF]


def test_unparsable_frontmatter_is_a_verification_failure(server, tmp_path):
    broken = b"---\nname: pdf-tools\ndescription: [unclosed\n---\nbody\n"
    files = {PDF: broken}
    err, read = read_refused(server, tmp_path, files, entries=[make_entry(PDF, PDF_FM, files)])
    assert (err.problem, err.uri) == ("frontmatter", PDF)
    assert str(err).startswith(PDF + ": ") and "line 3: " in str(err) and "flow list" in str(err)
    assert isinstance(err.__cause__, ValueError) and read == [PDF]


def test_skill_md_that_is_not_utf8_is_a_verification_failure(server, tmp_path):
    files = {PDF: PDF_MD.replace("r\u00e9sum\u00e9".encode("utf-8"), "r\u00e9sum\u00e9".encode("latin-1"))}
    entry = make_entry(PDF, PDF_FM, files)
    err, read = read_refused(server, tmp_path, files, entries=[entry])  # served as a blob
    assert (err.problem, err.uri) == ("frontmatter", PDF) and "utf-8" in str(err)


def test_missing_file(server, tmp_path):
    files = dict(catalog_files())
    del files[LOGO]
    err, read = read_refused(server, tmp_path, files)
    assert (err.problem, err.uri) == ("missing", LOGO)
    assert LOGO in str(err) and isinstance(err.__cause__, RequestError)
    assert read == [PDF, FORMS, LOGO]


def test_content_for_another_uri_is_refused(server, tmp_path):
    misnamed = {"uri": FORMS + ".bak", "text": FORMS_MD.decode()}
    err, read = read_refused(server, tmp_path, dict(catalog_files(), **{FORMS: misnamed}))
    assert (err.problem, err.uri) == ("content", FORMS)
    assert read == [PDF, FORMS]


def bad_entries():
    good = catalog_entries()[0]

    def edit(fn):
        entry = copy.deepcopy(good)
        fn(entry)
        return entry

    def first(entry):
        return entry["resources"][0]
    yield "dynamic", edit(lambda e: e.update(resources="dynamic"))
    yield "entry", edit(lambda e: e.pop("resources"))
    yield "entry", edit(lambda e: first(e).update(digest="sha256:" + "A" * 64))
    yield "entry", edit(lambda e: first(e).update(digest="md5:00"))
    yield "entry", edit(lambda e: first(e).update(size=-1))
    yield "entry", edit(lambda e: first(e).update(size=True))
    yield "entry", edit(lambda e: first(e).update(uri="skill://elsewhere/FORMS.md"))
    yield "entry", edit(lambda e: first(e).update(uri="skill://pdf-tools/../secrets/FORMS.md"))
    yield "entry", edit(lambda e: e["resources"].append(dict(e["resources"][0])))
    yield "entry", edit(lambda e: e.update(resources=[r for r in e["resources"] if r["uri"] != PDF]))
    yield "entry", edit(lambda e: e["frontmatter"].update(name="other-name"))
    yield "entry", edit(lambda e: e.update(frontmatter="name: pdf-tools"))
    yield "entry", edit(lambda e: e.update(uri="skill://pdf-tools/README.md"))
    yield "entry", ["not", "an entry"]
    yield "limit", edit(lambda e: e.update(resources=e["resources"] + [
        {"uri": "skill://pdf-tools/f%d" % i, "digest": digest(b""), "size": 0} for i in range(510)]))
    yield "limit", edit(lambda e: first(e).update(size=mcp_min.SKILL_MAX_BYTES))


def test_invalid_entries_are_refused_before_anything_is_read(server, tmp_path):
    with Client(server()) as c:
        for problem, entry in bad_entries():
            with pytest.raises((SkillVerificationError, ValueError)) as info:
                c.read_skill(entry)
            if isinstance(entry, dict):
                assert info.value.problem == problem, (entry, info.value)
                assert info.value.skill == entry["uri"] or not isinstance(entry.get("uri"), str)
    assert reads(tmp_path) == []


@pytest.mark.pure
def test_errors_pickle_and_copy_with_their_attributes():
    err = SkillVerificationError(PDF, FORMS, "frontmatter", "frontmatter differs", {"a": 1}, {"a": 2})
    for clone in (pickle.loads(pickle.dumps(err)), copy.copy(err), copy.deepcopy(err)):
        assert type(clone) is SkillVerificationError and isinstance(clone, McpError)
        assert (clone.skill, clone.uri, clone.problem, clone.detail, clone.expected, clone.actual) == (
            PDF, FORMS, "frontmatter", "frontmatter differs", {"a": 1}, {"a": 2})
        assert str(clone) == str(err)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def run_cli(*args):
    return subprocess.run(cli_argv(*NO_SITE) + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          encoding="utf-8", timeout=60, env=dict(os.environ, PYTHONIOENCODING="utf-8"))


def test_cli_skills_and_skill(server, tmp_path):
    argv = server()
    out = run_cli("skills", "--", *argv)
    assert out.returncode == 0, out.stderr
    first = u"pdf-tools  - Split, merge and fill PDF files (r\u00e9sum\u00e9s too)  (%s)" % PDF
    assert out.stdout.splitlines()[0] == first
    assert len(out.stdout.splitlines()) == 3
    out = run_cli("skill", "git-flow", "--", *argv)
    assert (out.returncode, out.stdout) == (0, GIT_MD.decode())
    out = run_cli("--json", "skill", "pdf-tools", "--", *argv)
    data = json.loads(out.stdout)
    assert data["frontmatter"] == PDF_FM and data["files"][FORMS] == {"size": len(FORMS_MD), "text": FORMS_MD.decode()}
    assert data["files"][LOGO] == {"size": 256, "blob": base64.b64encode(LOGO_BIN).decode()}
    out = run_cli("--json", "skills", "--", *argv)
    assert json.loads(out.stdout) == catalog_entries()


def test_cli_refuses_a_tampered_skill(server, tmp_path):
    argv = server(files=dict(catalog_files(), **{GIT: GIT_MD.replace(b"short", b"SHORT")}))
    out = run_cli("skill", "git-flow", "--", *argv)
    assert out.returncode == 1 and out.stdout == ""
    assert GIT in out.stderr and "digest mismatch" in out.stderr
    out = run_cli("skill", "--", *argv)
    assert out.returncode == 2


# ---------------------------------------------------------------------------
# The frontmatter parser (in memory).  The YAML it reads is what skills use; the expected values
# are what a YAML 1.2 parser (core schema) gives, checked against one while writing them.
# ---------------------------------------------------------------------------

def fm(yaml_text):
    return mcp_min._parse_frontmatter("---\n" + yaml_text + "---\nbody\n")[0]


LONG = ("Turn meeting notes into action items. Use it when someone pastes notes, asks what was decided, "
        "or wants owners and due dates; not for writing minutes from scratch.")

PARSES = [
    # the shapes skill frontmatter takes: plain, double-quoted with escapes, block scalars, lists, maps
    ("name: notes-to-actions\ndescription: %s\nlicense: See LICENSE.txt in this folder\n" % LONG,
     {"name": "notes-to-actions", "description": LONG, "license": "See LICENSE.txt in this folder"}),
    (u'description: "Say \\"ship it\\" \u2014 or \'hold\' \u2014 then C:\\\\path\\\\x, 50% done"\n',
     {"description": u"Say \"ship it\" \u2014 or 'hold' \u2014 then C:\\path\\x, 50% done"}),
    ("description: |-\n  First line.\n  SECOND line: with a colon, `code` and (parens).\n\n  After a gap.\n",
     {"description": "First line.\nSECOND line: with a colon, `code` and (parens).\n\nAfter a gap."}),
    ("metadata:\n  author: docs-team\n  version: \"1.0\"\nallowed-tools: Bash(git:*) Read\n"
     "compatibility: needs git and network access\n",
     {"metadata": {"author": "docs-team", "version": "1.0"}, "allowed-tools": "Bash(git:*) Read",
      "compatibility": "needs git and network access"}),
    # scalars, YAML 1.2 core schema (yes, dates and 1_000 stay text; 007 is 7)
    ("a: text\nb: 12\nc: -3\nd: 2.5\ne: 1e3\nf: true\ng: False\nh: null\ni: ~\nj:\n",
     {"a": "text", "b": 12, "c": -3, "d": 2.5, "e": 1000.0, "f": True, "g": False, "h": None, "i": None,
      "j": None}),
    ("a: 0x1A\nb: 0o17\nc: +7\nd: .5\ne: yes\nf: 2024-05-01\ng: 1_000\nh: 12:30\ni: 007\nj: -.inf\nk: 1.\n",
     {"a": 26, "b": 15, "c": 7, "d": 0.5, "e": "yes", "f": "2024-05-01", "g": "1_000", "h": "12:30", "i": 7,
      "j": float("-inf"), "k": 1.0}),
    ("url: https://example.com/a#b\nhash: C#\ntext: a - b, [c] {d}\nq: what?\nk: -x\nc: a:b\n",
     {"url": "https://example.com/a#b", "hash": "C#", "text": "a - b, [c] {d}", "q": "what?", "k": "-x",
      "c": "a:b"}),
    # quoting
    ("s: 'it''s # not a comment'\nd: \"tab\\there\\n\\u00e9\\\\\\/\"\ne: \"\\ud83d\\ude00\"\nn: \"\"\no: ''\n",
     {"s": "it's # not a comment", "d": u"tab\there\n\u00e9\\/", "e": u"\U0001F600", "n": "", "o": ""}),
    ("'quoted key': 1\n\"other: key\": 2\n", {"quoted key": 1, "other: key": 2}),
    ("k: 'keep  '\nj: \"x\ty\"  # a comment\n", {"k": "keep  ", "j": "x\ty"}),
    # comments and blank lines
    ("# leading comment\na: first  # trailing comment\n\n  # indented comment\nb: 1 # c\n",
     {"a": "first", "b": 1}),
    ("a: x\n\t\nb: y\n", {"a": "x", "b": "y"}),  # a tab on a blank line is not indentation
    # lists and maps
    ("tags:\n  - a\n  - 'b'\n  -\n    - nested\nsame:\n- x\n- y\n",
     {"tags": ["a", "b", ["nested"]], "same": ["x", "y"]}),
    ("meta:\n  owner:\n    team: docs\n    size: 3\n  list:\n    - k: 1\n      v: 2\n    - k: 3\n",
     {"meta": {"owner": {"team": "docs", "size": 3}, "list": [{"k": 1, "v": 2}, {"k": 3}]}}),
    ("l:\n- - x\n  - y\n- k: v\n  w: |\n    t\n", {"l": [["x", "y"], {"k": "v", "w": "t\n"}]}),
    ("a:\n  on the next line\nb:\n  [x, y]\n", {"a": "on the next line", "b": ["x", "y"]}),
    ("flow: [a, 'b c', \"d, e\", 1, true, null, ~, it's]\nempty: []\nmap: {}\ntrail: [x, ]\n",
     {"flow": ["a", "b c", "d, e", 1, True, None, None, "it's"], "empty": [], "map": {}, "trail": ["x"]}),
    # block scalars and chomping
    ("lit: |\n  line 1\n    indented\n\n  line 3\nnext: x\n", {"lit": "line 1\n  indented\n\nline 3\n", "next": "x"}),
    ("fold: >\n  one\n  two\n\n  three\n    kept\n  four\n", {"fold": "one two\nthree\n  kept\nfour\n"}),
    ("strip: |-\n  a\n\nkeep: |+\n  b\n\nend: 1\n", {"strip": "a", "keep": "b\n\n", "end": 1}),
    ("d: >-\n  Folded\n  and stripped\n\n\n  para\n", {"d": "Folded and stripped\n\npara"}),
    ("k: |  # a comment\n  text\n # a less indented comment ends it\nz: 2\n", {"k": "text\n", "z": 2}),
    ("x: >\n\n  lead\n  more\n", {"x": "\nlead more\n"}),
    ("x: |+\n  a\n\n\n", {"x": "a\n\n\n"}),
    ("empty: |\nafter: 1\n", {"empty": "", "after": 1}),
    ("", {}),
]


@pytest.mark.parametrize("text, expected", PARSES, ids=[str(i) for i in range(len(PARSES))])
@pytest.mark.pure
def test_frontmatter_subset(text, expected):
    value = fm(text)
    assert value == expected
    assert json.dumps(value, sort_keys=True) == json.dumps(expected, sort_keys=True)  # types too: 1 is not 1.0


@pytest.mark.pure
def test_frontmatter_split_body_bom_and_crlf():
    value, body = mcp_min._parse_frontmatter(u"\ufeff---\r\nname: a\r\ndescription: |\r\n  x\r\n---\r\n# Body\r\n")
    assert value == {"name": "a", "description": "x\n"} and body == "# Body\r\n"
    assert mcp_min._parse_frontmatter("---\nname: a\n---")[1] == ""
    assert mcp_min._parse_frontmatter("---\n---\n\n# Body\n") == ({}, "\n# Body\n")


# What the parser does not read: each refused with the line of the file (the frontmatter starts on
# line 2) and why.  The first group is valid YAML outside the subset, the rest is not YAML at all.
REFUSED = [
    ("a: &anchor 1\n", 2, "anchors, aliases and tags are not supported"),
    ("a: !!str 1\n", 2, "anchors, aliases and tags are not supported"),
    ("&a key: 1\n", 2, "anchors, aliases and tags are not supported"),
    ("a: {b: 1}\n", 2, "flow maps are not supported"),
    ("a: [x, [y]]\n", 2, "nested flow collections are not supported"),
    ("a: [x, {k: v}]\n", 2, "nested flow collections are not supported"),
    ("a: [b: 1]\n", 2, "':' followed by a space"),
    ("a: [x,\n  y]\n", 2, "ends with ']' on its line"),
    ("a: [x, # comment\n  y]\n", 2, "ends with ']' on its line"),
    ("a: first\n  second\n", 3, "a value on several lines needs | or >"),
    ("a:\n  first\n  second\n", 4, "a value on several lines needs | or >"),
    ("a: \"two\n  lines\"\n", 2, "unterminated quoted string (it must end on its line)"),
    ("a: 'two\n  lines'\n", 2, "unterminated quoted string"),
    ("a: \"\\x41\"\n", 2, "unsupported escape \\x"),
    ("a: \"\\U0001F600\"\n", 2, "unsupported escape \\U"),
    ("a: \"\\e\"\n", 2, "unsupported escape \\e"),
    ("a: |2\n    two more\n  base\n", 2, "no indentation digit"),
    ("? complex\n: key\n", 2, "complex keys"),
    ("a:\n  ? b\n", 3, "complex keys"),
    ("a: [x, ]\nb: " + "9" * 101 + "\n", 3, "a number longer than 100 characters"),
    ("x: 1\n: 2\n", 3, "a mapping key cannot be empty"),
    # not YAML
    ("a: 1\nb: 2\na: 3\n", 4, "duplicate key 'a'"),
    ("a:\n\t- x\n", 3, "tab in indentation"),
    ("a: 1\nb: *alias\n", 3, "anchors, aliases and tags are not supported"),
    ("a: b: c\n", 2, "':' followed by a space"),
    ("a: 1\n  b: 2\n", 3, "unexpected indentation"),
    ("a:\n  b: 1\n c: 2\n", 4, "unexpected indentation"),
    ("a: 1\n- b\n", 3, "expected 'key: value'"),
    ("a: - b\n", 2, "a plain value cannot start with '-'"),
    ("a: @x\n", 2, "a plain value cannot start with '@'"),
    ("a: [x]y\n", 2, "unexpected text after the value"),
    ("a: \"x\" y\n", 2, "unexpected text after the value"),
    ("a: [x,,y]\n", 2, "an empty item in a flow list"),
    ("a: [x\n", 2, "ends with ']' on its line"),
    ("a: \"\\q\"\n", 2, "unsupported escape \\q"),
    ("a: \"\\u12\"\n", 2, "unsupported escape \\u"),
    ("a: |\n  text\n less\n", 4, "indented less than its first line"),
    ("a: |\n  text\n\tmore\n", 4, "indented less than its first line (or with a tab)"),
    ("a: |x\n  text\n", 2, "block scalar header"),
]


@pytest.mark.parametrize("text, line, reason", REFUSED, ids=[str(i) for i in range(len(REFUSED))])
@pytest.mark.pure
def test_what_the_parser_does_not_read_is_refused_with_its_line(text, line, reason):
    with pytest.raises(ValueError) as info:
        fm(text)
    assert str(info.value).startswith("line %d: " % line), str(info.value)
    assert reason in str(info.value)


@pytest.mark.parametrize("markdown, line, reason", [
    ("no frontmatter\n", 1, "must begin with YAML frontmatter between two '---' lines"),
    ("---\nname: a\n", 1, "between two '---' lines"),
    ("--- \nname: a\n--\n", 1, "between two '---' lines"),
    ("---\n- a\n- b\n---\n", 2, "the frontmatter must be a map of fields, not a list"),
    ("---\njust text\n---\n", 2, "the frontmatter must be a map of fields, not a str"),
    ("---\n  a: 1\nb: 2\n---\n", 3, "unexpected text after the frontmatter's fields"),
])
@pytest.mark.pure
def test_frontmatter_must_be_a_delimited_map(markdown, line, reason):
    with pytest.raises(ValueError) as info:
        mcp_min._parse_frontmatter(markdown)
    assert str(info.value).startswith("line %d: " % line) and reason in str(info.value), str(info.value)


HOSTILE = [
    ("deep flow", "a: " + "[" * 30000 + "\n", "nested flow collections are not supported"),
    ("deep block maps", "".join(" " * i + "k:\n" for i in range(200)), "nested deeper than 16 levels"),
    ("deep dashes", "a:\n" + "- " * 30000 + "x\n", "nested deeper than 16 levels"),
    ("too long", "a: b\n" * 20000, "longer than 65536 characters"),
    ("huge number", "a: " + "7" * 60000 + "\n", "a number longer than"),
    ("unterminated quote", "a: \"" + "x\\\\" * 20000 + "\n", "unterminated"),
    ("spaces in a flow list", "a: [x" + " " * 60000 + "[]\n", "ends with ']' on its line"),
    ("a blank run in a plain value", "a: b" + " \t" * 30000 + "c: d\n", "':' followed by a space"),
]


@pytest.mark.parametrize("name, text, reason", HOSTILE, ids=[h[0] for h in HOSTILE])
@pytest.mark.pure
def test_hostile_frontmatter_is_refused_quickly(name, text, reason):
    start = time.monotonic()
    with pytest.raises(ValueError) as info:
        fm(text)
    assert reason in str(info.value)
    assert time.monotonic() - start < 5  # a generous bound: linear time, bounded recursion


@pytest.mark.pure
def test_nesting_up_to_the_limit_parses():
    depth = mcp_min.FRONTMATTER_MAX_DEPTH  # the top-level map is the first level
    value = fm("".join("  " * i + "k:\n" for i in range(depth - 1)) + "  " * (depth - 1) + "- x\n")
    for _ in range(depth - 1):
        value = value["k"]
    assert value == ["x"]


@pytest.mark.pure
def test_large_valid_frontmatter_parses_in_linear_time():
    text = "".join("key%d: [%d, 'v', \"w\"]\n" % (i, i) for i in range(2500))
    assert len(text) < mcp_min.FRONTMATTER_MAX_CHARS
    start = time.monotonic()
    value = fm(text)
    assert len(value) == 2500 and value["key2499"] == [2499, "v", "w"]
    assert time.monotonic() - start < 5
