"""The one reader of server configurations (``mcpServers`` files) and every caller of it: Group,
the CLI's ``--config`` and ``--server``, and ``servers``.

One table of entries (ENTRIES: every key and spelling; BROKEN: every wrong shape) and one of
documents (VARIANTS: mcpServers, VS Code's servers with comments, a BOM; BROKEN_FILES).  The
reader is tested in memory as a pure function; each caller gets the whole table in this process
(Group with a recording stand-in for Client, the CLI through _parse_cli and main()); a handful of
subprocess runs check the command line end to end."""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
import mcp_min  # noqa: E402
from testsupport import NO_SITE, run_cli  # noqa: E402

PY = sys.executable
CALC = os.path.join(ROOT, "examples", "calc.py")
URL = "http://127.0.0.1:9/mcp"
DISABLED = "disabled"

# (name, entry, what a caller gives Client: (server, options) or DISABLED); "<HOME>", "<CWD>" and
# "<ROOT>" stand for the user's home, the current directory and $FSROOT.
ENTRIES = [
    ("argv", {"command": PY, "args": ["-m", "srv"]}, ([PY, "-m", "srv"], {})),
    ("one-string", {"command": PY + " -m srv", "args": ["--x"]}, ([PY, "-m", "srv", "--x"], {})),
    ("one-string-no-program", {"command": "no-such program"}, (["no-such program"], {})),
    ("command-list", {"command": [PY, "-m"], "args": ["srv"]}, ([PY, "-m", "srv"], {})),
    ("args-null", {"command": PY, "args": None}, ([PY], {})),
    ("env-cwd", {"command": PY, "env": {"A": "1"}, "cwd": "/tmp"}, ([PY], {"env": {"A": "1"}, "cwd": "/tmp"})),
    ("expanded", {"command": "${env:MCP_MIN_CFG_PY}", "args": ["${FSROOT}/srv.py", "${userHome}", "${workspaceFolder}"],
                  "env": {"ROOT": "${FSROOT}", "D": "${MCP_MIN_CFG_UNSET:-dflt}"}, "cwd": "${env:FSROOT}"},
     ([PY, "<ROOT>/srv.py", "<HOME>", "<CWD>"], {"env": {"ROOT": "<ROOT>", "D": "dflt"}, "cwd": "<ROOT>"})),
    ("type-stdio", {"type": "stdio", "command": PY}, ([PY], {})),
    ("url", {"url": URL, "headers": {"Authorization": "Bearer ${env:MCP_MIN_CFG_TOKEN}"}},
     (URL, {"headers": {"Authorization": "Bearer t0k"}})),
    ("httpUrl", {"httpUrl": URL}, (URL, {})),
    ("serverUrl", {"serverUrl": URL}, (URL, {})),
    ("type-http", {"type": "http", "url": URL}, (URL, {})),
    ("type-sse", {"type": "sse", "url": URL}, (URL, {})),
    ("transport-streamable", {"transport": "streamable-http", "url": URL}, (URL, {})),
    ("unknown-keys", {"command": PY, "autoApprove": [], "timeout": 5}, ([PY], {})),
    ("enabled", {"command": PY, "disabled": False}, ([PY], {})),
    ("disabled", {"command": PY, "disabled": True}, DISABLED),
    ("disabled-incomplete", {"disabled": True}, DISABLED),  # (read no further)
]

# (name, entry, words the error names besides the file and the entry, whether `servers` -- which
# shows values as written, expanding nothing -- reports it too)
BROKEN = [
    ("bad-entry-number", 5, ["object"], True),
    ("bad-entry-string", "python server.py", ["object"], True),
    ("bad-entry-null", None, ["object"], True),
    ("bad-command-null-args-5", {"command": None, "args": 5}, ["command"], True),
    ("bad-command-number", {"command": 5}, ["command"], True),
    ("bad-command-empty", {"command": ""}, ["command"], True),
    ("bad-command-list-empty", {"command": []}, ["command"], True),
    ("bad-command-list-number", {"command": [PY, 1]}, ["command[1]"], True),
    ("bad-no-command", {"args": ["x"]}, ["command"], True),
    ("bad-args-number", {"command": PY, "args": 5}, ["args"], True),
    ("bad-args-items", {"command": PY, "args": [1, None]}, ["args[0]"], True),
    ("bad-env-list", {"command": PY, "env": ["A=1"]}, ["env"], True),
    ("bad-env-value", {"command": PY, "env": {"DEBUG": 1}}, ["env.DEBUG"], True),
    ("bad-cwd", {"command": PY, "cwd": 3}, ["cwd"], True),
    ("bad-url-number", {"url": 5}, ["url"], True),
    ("bad-url-scheme", {"url": "localhost:3000/mcp"}, ["url", "http"], True),
    ("bad-type-http-no-url", {"type": "http", "command": PY}, ["url"], True),
    ("bad-type-number", {"type": 5, "command": PY}, ["type"], True),
    ("bad-headers-list", {"url": URL, "headers": ["a"]}, ["headers"], True),
    ("bad-header-value", {"url": URL, "headers": {"X": 1}}, ["headers.X"], True),
    ("bad-disabled-string", {"command": PY, "disabled": "yes"}, ["disabled"], True),
    ("bad-unset-variable", {"command": PY, "args": ["${MCP_MIN_CFG_UNSET}"]}, ["MCP_MIN_CFG_UNSET", "not set"], False),
]
ASKS = {"command": PY, "env": {"KEY": "${input:key}"}}  # VS Code's ${input:ID}: only the CLI asks, on a terminal

TABLE = dict([(n, e) for n, e, _ in ENTRIES] + [(n, e) for n, e, _, _ in BROKEN] + [("asks-input", ASKS)])


def _jsonc(table):
    text = json.dumps({"inputs": [{"id": "key", "type": "promptString"}], "servers": table}, indent=1)
    return ("// VS Code's file: comments and trailing commas\n" + text[:-1] + ",\n /* end */ }").encode("utf-8")


# (name, the file's bytes, where discovery finds it in the project)
VARIANTS = [
    ("mcpServers", json.dumps({"mcpServers": TABLE}).encode("utf-8"), ".mcp.json"),
    ("vscode-servers", _jsonc(TABLE), os.path.join(".vscode", "mcp.json")),
    ("bom", b"\xef\xbb\xbf" + json.dumps({"mcpServers": TABLE}, ensure_ascii=False).encode("utf-8"), ".mcp.json"),
]

# (name, the file's bytes, words the error names besides the file)
BROKEN_FILES = [
    ("not-json", b'{"mcpServers": {"x": }', ["not JSON"]),
    ("empty", b"", ["empty"]),
    ("bom-only", b"\xef\xbb\xbf  \n", ["empty"]),
    ("not-utf8", b'{"mcpServers": {"\xff": {}}}', ["cannot read"]),
    ("top-level-list", b'[{"command": "x"}]', ["top level", "object"]),
    ("top-level-string", b'"mcpServers"', ["top level"]),
    ("table-list", b'{"mcpServers": [{"command": "x"}]}', ["mcpServers", "object"]),
    ("servers-number", b'{"servers": 5}', ["servers", "object"]),
]


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A home and a project directory (the current one), the environment the tables assume."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    for name in ("HOME", "USERPROFILE"):
        monkeypatch.setenv(name, str(home))
    for name in ("XDG_CONFIG_HOME", "APPDATA", "MCP_MIN_CFG_UNSET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FSROOT", "/srv/fsroot")
    monkeypatch.setenv("MCP_MIN_CFG_PY", PY)
    monkeypatch.setenv("MCP_MIN_CFG_TOKEN", "t0k")
    monkeypatch.setattr(mcp_min, "_on_terminal", lambda: False)  # (${input:} is refused, never asked)
    monkeypatch.chdir(project)
    return home, project


def expected(value):
    """A table's expectation with <HOME>, <CWD> and <ROOT> filled in."""
    if isinstance(value, str):
        return value.replace("<HOME>", os.path.expanduser("~")).replace("<CWD>", os.getcwd()).replace(
            "<ROOT>", "/srv/fsroot")
    if isinstance(value, (list, tuple)):
        return type(value)(expected(v) for v in value)
    if isinstance(value, dict):
        return {k: expected(v) for k, v in value.items()}
    return value


def check(outcome, path):
    """[mismatch] of a caller's outcome per name -- (server, options), DISABLED, or the error
    (an exception) -- against the tables; every error names the file (``path``) and the entry."""
    wrong = []
    for entry_name, _, want in ENTRIES:
        got = outcome(entry_name)
        if isinstance(got, Exception) or expected(want) != got:
            wrong.append("%s: %r, not %r" % (entry_name, got, expected(want)))
    for entry_name, _, words, _ in BROKEN:
        got = outcome(entry_name)
        if not isinstance(got, ValueError) or not all(w in str(got) for w in [path, entry_name] + words):
            wrong.append("%s: %r does not name %s" % (entry_name, got, [path, entry_name] + words))
    return wrong


class Recorder(object):
    """Client's stand-in: what Group gives it."""

    def __init__(self, server, **options):
        self.server, self.options = server, options

    def close(self):
        pass


# -- the reader, in memory

@pytest.mark.parametrize("name, entry, want", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_an_entry_becomes_a_server_and_its_options(place, name, entry, want):
    server, options = mcp_min._server_entry(entry, "F: mcpServers." + name)
    assert (DISABLED if server is None else (server, options)) == expected(want)


@pytest.mark.parametrize("name, entry, words, as_written", BROKEN, ids=[e[0] for e in BROKEN])
def test_a_broken_entry_is_a_usage_error_naming_it(place, name, entry, words, as_written):
    with pytest.raises(mcp_min._UsageError) as caught:
        mcp_min._server_entry(entry, "F: mcpServers." + name)
    assert isinstance(caught.value, ValueError)  # (what Group's API raises)
    for word in ["F: mcpServers." + name] + words:
        assert word in str(caught.value)
    if not as_written:  # what `servers` shows: values as written, nothing expanded
        assert mcp_min._server_entry(entry, "F", lambda text, where: text)[0] == [PY] + entry.get("args", [])


def test_input_variables_are_asked_only_through_the_callers_question(place):
    with pytest.raises(mcp_min._UsageError, match=r"env\.KEY uses \$\{input:key\}"):
        mcp_min._server_entry(ASKS, "F: x")
    asked = []
    server, options = mcp_min._server_entry(ASKS, "F: x", lambda text, where: mcp_min._expand(
        text, where, lambda input_id, at: asked.append((input_id, at)) or "typed"))
    assert (server, options, asked) == ([PY], {"env": {"KEY": "typed"}}, [("key", "F: x.env.KEY")])


@pytest.mark.parametrize("name, raw, where", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_every_document_variant_reads_as_the_same_table(tmp_path, name, raw, where):
    path = tmp_path / "mcp.json"
    path.write_bytes(raw)
    table = mcp_min._server_table(mcp_min._read_servers_file(str(path)), str(path))
    assert {n: e for n, (_, e) in table.items()} == TABLE
    assert table["url"][0] == ("servers.url" if name == "vscode-servers" else "mcpServers.url")


@pytest.mark.parametrize("name, raw, words", BROKEN_FILES, ids=[f[0] for f in BROKEN_FILES])
def test_a_broken_file_is_a_usage_error_naming_it(tmp_path, name, raw, words):
    path = tmp_path / ("%s.json" % name)
    path.write_bytes(raw)
    with pytest.raises(mcp_min._UsageError) as caught:
        mcp_min._server_table(mcp_min._read_servers_file(str(path)), str(path))
    for word in [str(path)] + words:
        assert word in str(caught.value)


def test_tables_bare_and_per_project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    entry = {"command": PY}
    assert mcp_min._server_table({"x": entry}, "F", bare=True) == {"x": ("x", entry)}
    assert mcp_min._server_table({"theme": "dark"}, "settings.json") == {}  # a host's file without servers
    doc = {"mcpServers": {"a": entry}, "projects": {os.getcwd(): {"mcpServers": {"a": 1, "b": entry}}}}
    assert mcp_min._server_table(doc, os.path.join("h", ".claude.json")) == {
        "a": ("mcpServers.a", entry), "b": ("projects.%s.mcpServers.b" % os.getcwd(), entry)}


# -- every caller, the whole table each (in this process: no server is started)

def group_outcome(monkeypatch, config):
    monkeypatch.setattr(mcp_min, "Client", Recorder)
    with mcp_min.Group(config) as group:
        pass
    assert not set(group.clients) & set(group.errors)

    def outcome(name):
        if name in group.clients:
            return group.clients[name].server, group.clients[name].options
        return group.errors.get(name, DISABLED)
    return outcome


def cli_outcome(*before):
    def outcome(name):
        try:
            _, server, _ = mcp_min._parse_cli(list(before) + ["--server", name, "ping"])
        except mcp_min._UsageError as e:
            return DISABLED if "disabled" in str(e) and "must be" not in str(e) else e
        return server["server"], {k: server[k] for k in ("env", "headers", "cwd") if server[k] not in ({}, None)}
    return outcome


@pytest.mark.parametrize("caller", ["Group", "--config", "--server"])
@pytest.mark.parametrize("variant", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_every_caller_reads_every_entry_alike(place, monkeypatch, caller, variant):
    home, project = place
    name, raw, where = variant
    path = str(project / where) if caller == "--server" else str(home / "servers.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(raw)
    if caller == "Group":
        outcome = group_outcome(monkeypatch, path)
        asks_words = ["${input:key}", "command line"]
    else:
        outcome = cli_outcome(*(["--config", path] if caller == "--config" else []))
        asks_words = ["${input:key}", "terminal"]  # (no terminal here)
    assert check(outcome, path) == []
    error = outcome("asks-input")
    assert isinstance(error, ValueError) and all(w in str(error) for w in [path] + asks_words), error


def test_group_takes_a_dict_in_every_spelling(place, monkeypatch):
    for config in ({"mcpServers": TABLE}, {"servers": TABLE}, TABLE):
        assert check(group_outcome(monkeypatch, config), "the server configuration") == []


def test_a_bare_table_is_a_config_file_but_no_hosts_file(place, monkeypatch):
    home, project = place
    path = home / "bare.json"
    path.write_text(json.dumps({"calc": {"command": PY}}))
    assert cli_outcome("--config", str(path))("calc") == ([PY], {})
    assert group_outcome(monkeypatch, str(path))("calc") == ([PY], {})
    (project / ".mcp.json").write_text(json.dumps({"calc": {"command": PY}}))
    assert "no server 'calc'" in str(cli_outcome()("calc"))


@pytest.mark.parametrize("listing", ["discovered", "--config"])
@pytest.mark.parametrize("variant", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_servers_lists_every_entry_and_reports_the_broken_ones(place, capsys, listing, variant):
    home, project = place
    name, raw, where = variant
    path = str(project / where) if listing == "discovered" else str(home / "servers.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(raw)
    argv = (["--config", path] if listing == "--config" else []) + ["servers"]
    assert mcp_min.main(argv + ["--json"]) == 2
    out, err = capsys.readouterr()
    rows = {row["name"]: row for row in json.loads(out)}
    assert set(rows) == set(TABLE)
    for entry_name, _, want in ENTRIES:
        assert rows[entry_name]["disabled"] is (want == DISABLED) and "error" not in rows[entry_name], entry_name
    for entry_name, _, _, reported in BROKEN:
        assert ("error" in rows[entry_name]) is reported, entry_name
        named = "%s: %s.%s" % (path, "servers" if name == "vscode-servers" else "mcpServers", entry_name)
        assert (named + " " in err or named + "." in err) is reported, (entry_name, err)
    assert "error" not in rows["asks-input"]  # (shown as written: nothing is asked)
    assert mcp_min.main(argv) == 2
    out, err = capsys.readouterr()
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert set(lines) == set(TABLE) - set(n for n, _, _, reported in BROKEN if reported)
    assert "(disabled)" in lines["disabled"] and "(disabled)" not in lines["enabled"]
    assert URL in lines["serverUrl"] and "${env:MCP_MIN_CFG_PY} ${FSROOT}/srv.py" in lines["expanded"]
    assert len(err.splitlines()) == sum(reported for _, _, _, reported in BROKEN), err
    assert all(line.startswith("mcp_min: error: ") for line in err.splitlines())


@pytest.mark.parametrize("name, raw, words", BROKEN_FILES, ids=[f[0] for f in BROKEN_FILES])
def test_a_broken_file_for_every_caller(place, monkeypatch, capsys, name, raw, words):
    """Group and --config refuse it; discovery reports it and still serves the other files."""
    home, project = place
    broken = project / ".cursor" / "mcp.json"
    broken.parent.mkdir()
    broken.write_bytes(raw)
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"good": {"command": PY}}}))
    for call in (lambda: mcp_min.Group(str(broken)), lambda: mcp_min._parse_cli(["--config", str(broken), "ping"])):
        with pytest.raises(ValueError) as caught:
            call()
        assert all(w in str(caught.value) for w in [str(broken)] + words), caught.value
    assert cli_outcome()("good") == ([PY], {})
    missing = cli_outcome()("missing")
    assert "no server 'missing'" in str(missing) and str(broken) in str(missing)
    assert mcp_min.main(["servers"]) == 2
    out, err = capsys.readouterr()
    assert [line.split()[0] for line in out.splitlines()] == ["good"]
    assert err.count("\n") == 1 and str(broken) in err and all(w in err for w in words), err


# -- the command line end to end (a handful of processes)

@pytest.fixture
def hosts(tmp_path):
    """A home and project: .mcp.json holds a good server (a one-string command with variables),
    a disabled one and a broken one; ~/.cursor/mcp.json is not JSON."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_text("{not json")
    project.mkdir()
    (project / ".mcp.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"mcpServers": {
        "good": {"command": "${env:CALC_PY} ${FSROOT}/calc.py"},  # (one string: split, after expansion)
        "off": {"command": PY, "args": [CALC], "disabled": True},
        "bad": {"command": None, "args": 5}}}).encode("utf-8"))
    env = dict(os.environ, HOME=str(home), USERPROFILE=str(home), CALC_PY=PY, FSROOT=os.path.dirname(CALC))
    env.pop("XDG_CONFIG_HOME", None)
    return env, home, project


def cli(hosts, *args):
    env, _, project = hosts
    return run_cli(*args, python_options=NO_SITE, env=env, cwd=str(project), universal_newlines=True, timeout=120)


def test_cli_servers_lists_the_good_reports_the_broken(hosts):
    out = cli(hosts, "servers")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["good", "off"]
    assert "${env:CALC_PY} ${FSROOT}/calc.py" in lines[0] and "(disabled)" in lines[1]
    project_file, cursor_file = str(hosts[2] / ".mcp.json"), str(hosts[1] / ".cursor" / "mcp.json")
    assert "%s: mcpServers.bad has neither a command nor a url" % project_file in out.stderr
    assert "cannot read %s" % cursor_file in out.stderr
    assert len(out.stderr.splitlines()) == 2


def test_cli_server_uses_the_good_and_refuses_the_disabled_and_the_broken(hosts):
    out = cli(hosts, "--server", "good", "call", "add", "a=1", "b=2")
    assert (out.returncode, out.stdout) == (0, "3\n"), out.stderr
    project_file = str(hosts[2] / ".mcp.json")
    for name, says in (("off", "mcpServers.off is disabled"), ("bad", "mcpServers.bad has neither")):
        out = cli(hosts, "--server", name, "tools")
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert out.stderr.startswith("mcp_min: error: %s: %s" % (project_file, says)), out.stderr


def test_cli_config_file_servers_lists_that_file(hosts):
    _, home, _ = hosts
    path = home / "team.json"
    path.write_text(json.dumps({"servers": {"calc": {"type": "http", "serverUrl": URL}}}))
    out = cli(hosts, "--config", str(path), "servers")
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout.split() == ["calc", URL, "(--config:", str(path) + ")"]
