"""The command line as a person meets it: every command through a subprocess, the terminal
prompts and the shell through a real terminal (tmux), installation into a fresh venv.

Tests that need tmux skip with a reason where it is absent.  Waiting for a terminal to show
something polls for that text with a deadline (the text is the assertion, the deadline only
bounds a failure)."""
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
import mcp_min  # noqa: E402
from testsupport import ECHO_PROGRAM, NO_SITE, REFUSING_PROGRAM, cli_argv, ensure_bytecode  # noqa: E402

PY = sys.executable
MCP_MIN = os.path.join(ROOT, "mcp_min.py")
# The servers start without site (testsupport.NO_SITE says why); the README's own lines run as written.
CALC = [PY, *NO_SITE, os.path.join(ROOT, "examples", "calc.py")]
TOUR = [PY, *NO_SITE, os.path.join(ROOT, "examples", "tour.py")]
ERAS = ["auto", "2025-11-25", "2025-06-18"]  # 2026-07-28 (auto), the newest handshake era, one before tasks


def cli(*args, env=None, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL, module=False):
    """The command line run from its bytecode (testsupport.cli_argv); ``module``: run as the README
    writes it, ``python -m mcp_min`` from the repository root."""
    argv = [PY, "-m", "mcp_min"] if module else cli_argv(*NO_SITE)  # (module: as typed, site and all)
    return subprocess.run(argv + list(args), capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT if module else cwd, env=env, stdin=stdin)


def one_line_error(out, status, *words):
    """The CLI failed with this status and said so in one line naming every word, no traceback."""
    assert out.returncode == status, "exit %s, not %s; stderr:\n%s" % (out.returncode, status, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    first = out.stderr.strip().splitlines()[0] if out.stderr.strip() else ""
    assert first.startswith("mcp_min: "), out.stderr
    for word in words:
        assert word in out.stderr, "%r not in: %s" % (word, out.stderr)


# A handshake-era stdio server whose one tool, echo, has the input schema given on its command
# line and returns its arguments; every message received is appended to the log file.
ECHO_SERVER = r'''
import json, sys
schema, log = json.loads(sys.argv[1]), sys.argv[2]
for line in sys.stdin:
    open(log, "a").write(line)
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "echo", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Return the arguments.", "inputSchema": schema}]}
    elif method == "tools/call":
        args = msg["params"].get("arguments") or {}
        result = {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)
'''

TYPED = {"type": "object", "properties": {
    "s": {"type": "string"}, "n": {"type": "integer"}, "x": {"type": "number"}, "f": {"type": "boolean"},
    "l": {"type": "array", "items": {"type": "integer"}}, "o": {"type": "object"},
    "u": {"type": "string", "enum": ["m", "km"], "default": "m"}}, "required": ["s"]}


@pytest.fixture
def echo(tmp_path):
    """echo(schema) -> (server argv, log path)."""
    script = tmp_path / "echo_server.py"
    script.write_text(ECHO_SERVER)

    def make(schema):
        log = tmp_path / "received.jsonl"
        return [PY, *NO_SITE, str(script), json.dumps(schema), str(log)], log
    return make


def sent_calls(log):
    return [line for line in log.read_text().splitlines() if '"tools/call"' in line] if log.exists() else []


def start_http(argv):
    proc = subprocess.Popen(argv + ["--http", "0"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    line = proc.stderr.readline().decode()
    assert "listening on" in line, line
    return proc, line.split("listening on", 1)[1].strip()


@pytest.fixture(scope="module")
def tour_url():
    proc, url = start_http(TOUR)
    yield url
    proc.terminate()
    proc.wait(10)
    proc.stderr.close()


# ---------------------------------------------------------------------------
# 1. Arguments you can see
# ---------------------------------------------------------------------------

def test_tools_are_listed_as_signatures():
    out = cli("tools", "--", *CALC)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "add(a: number, b: number) -> {result: number}  - Add two numbers: a + b."


def test_signature_marks_optional_defaults_and_enums(echo):
    server, _ = echo(TYPED)
    out = cli("tools", "--", *server)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ('echo(s: string, n?: integer, x?: number, f?: boolean, l?: array[integer], '
                                  'o?: object, u?: "m"|"km" = "m")  - Return the arguments.')


def test_one_tool_in_full():
    out = cli("tool", "count", "--", *TOUR)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "count(to: integer, seconds?: number = 2)"
    assert "  to: integer (required)  - the last number" in out.stdout
    assert "  seconds: number (optional, default 2)" in out.stdout
    out = cli("tools", "divide", "--", *CALC)  # the same through tools NAME, with the output schema
    assert out.returncode == 0 and "outputSchema:" in out.stdout and '"result"' in out.stdout, out.stderr
    one_line_error(cli("tool", "nosuch", "--", *CALC), 1, "no tool 'nosuch'", "add")


def test_prompts_with_arguments_and_templates_apart():
    out = cli("prompts", "--", *TOUR)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "explain(expression, level?)  - Ask the model to explain how to compute an expression."
    out = cli("resources", "--", *TOUR)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["calc://constants  - pi, e and tau as JSON.", "resource templates:",
                                       "  calc://table/{n}  - The multiplication table of n (1 to 10 times n)."]


def test_a_prompt_missing_an_argument_points_at_the_prompts_command():
    one_line_error(cli("prompt", "explain", "--", *TOUR), 2, "explain needs expression=... (see: prompts)")


# ---------------------------------------------------------------------------
# 2. Arguments the way the tool wants them
# ---------------------------------------------------------------------------

def test_key_values_are_converted_by_the_schema(echo):
    server, _ = echo(TYPED)
    out = cli("--json", "call", "echo", "s=12345", "n=3", "x=2.5", "f=true", "l=[1,2]", 'o={"k": 1}', "--", *server)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["structuredContent"] == {"s": "12345", "n": 3, "x": 2.5, "f": True,
                                                           "l": [1, 2], "o": {"k": 1}}


def test_a_whole_json_object_or_args_option():
    for args in (['{"a": 1, "b": 2}'], ["--args", '{"a": 1, "b": 2}'], ['{"a": 1}', "b=2"]):
        out = cli("call", "add", *(args + ["--"] + CALC))
        assert (out.returncode, out.stdout) == (0, "3\n"), (args, out.stderr)


@pytest.mark.parametrize("words,named", [
    (["s=a", "z=1"], ["no argument 'z'", "s, n, x"]),
    (["s=a", "s=b"], ["s= is given twice"]),
    (['{"s": "a"}', "s=b"], ["s is given twice"]),
    (["s=a", "n=three"], ["n=three", "integer"]),
    (["s=a", "f=maybe"], ["f=maybe", "boolean"]),
    (["n=1"], ["needs s=..."]),
])
def test_bad_arguments_are_named_before_anything_is_sent(echo, words, named):
    server, log = echo(TYPED)
    one_line_error(cli("call", "echo", *(words + ["--"] + server)), 2, *named)
    assert sent_calls(log) == []


def test_without_a_schema_values_are_json_when_they_parse(echo):
    server, _ = echo({"type": "object"})
    out = cli("--json", "call", "echo", "k=12345", "t=text", "--", *server)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["structuredContent"] == {"k": 12345, "t": "text"}


# ---------------------------------------------------------------------------
# 3. Form elicitation (the terminal half is in the tmux section)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("era", ERAS)
def test_elicitation_without_a_terminal_declines_with_a_note(era):
    out = cli("--protocol-version", era, "call", "greet", "--", *CALC)
    assert (out.returncode, out.stdout) == (0, "Hello, stranger!\n"), out.stderr
    assert out.stderr == "mcp_min: the server asks for input (What is your name?); declined: no terminal to ask on\n"


# ---------------------------------------------------------------------------
# 4. Errors that say what to do, and one exit-code table
# ---------------------------------------------------------------------------

def test_a_server_that_exits_early_hints_at_the_environment():
    server = [PY, "-c", "import sys; sys.stderr.write('Error: OPENAI_API_KEY is not set\\n'); sys.exit(1)"]
    env = dict(os.environ, OPENAI_API_KEY="sk-not-a-real-key")
    out = cli("tools", "--", *server, env=env)
    one_line_error(out, 4, "exited with code 1", "--env K=V", "--inherit-env", "OPENAI_API_KEY is set here")
    assert "sk-not-a-real-key" not in out.stderr
    assert cli("--inherit-env", "tools", "--", *server, env=env).stderr.count("hint") == 0


def test_a_connect_timeout_reports_the_real_wait_and_the_servers_stderr():
    server = [PY, "-c", "import sys, time; sys.stderr.write('loading the model...\\n'); sys.stderr.flush(); "
                        "time.sleep(120)"]
    out = cli("--timeout", "1", "tools", "--", *server)
    one_line_error(out, 4, "(timeout 1 s)", "loading the model...")
    waited = float(re.search(r"within ([0-9.]+) s", out.stderr).group(1))
    assert waited >= 1.0, out.stderr  # (the probe and initialize each had their second: never "0 s")
    # the server that never answered is not given the close grace (2 s) past the deadline
    assert waited < 2.5, out.stderr


@pytest.mark.parametrize("program,why", [
    (ECHO_PROGRAM, "sends back what it reads (our initialize came back)"),  # `cat`
    (REFUSING_PROGRAM, "does not know initialize"),
])
def test_a_program_that_is_not_an_mcp_server_is_named_so(program, why):
    out = cli("tools", "--", PY, *NO_SITE, "-c", program)
    one_line_error(out, 4, "initialize failed")
    assert out.stderr.endswith("\n  hint: the program is not an MCP server: it %s\n" % why), out.stderr


@pytest.mark.parametrize("args,meant", [
    (["--url", "localhost:8000/mcp"], "--url http://localhost:8000/mcp"),
    (["--url", "example.com/mcp"], "--url https://example.com/mcp"),
    (["--", "localhost:8000/mcp"], "--url http://localhost:8000/mcp"),
    (["--", "example.com/mcp"], "--url https://example.com/mcp"),
])
def test_a_url_without_its_scheme_is_explained_not_run(args, meant):
    one_line_error(cli("tools", *args), 2, "did you mean " + meant)


def test_a_url_after_the_dashes_is_used_as_a_url(tour_url):
    out = cli("call", "add", "a=1", "b=2", "--", tour_url)
    assert (out.returncode, out.stdout) == (0, "3\n"), out.stderr


def test_a_url_missing_its_path_gets_a_hint(tour_url):
    base = tour_url[:-len("/mcp")]
    one_line_error(cli("--url", base, "tools"), 4, "404", "try %s/mcp" % base)


@pytest.mark.parametrize("extra", [["--url", "http://127.0.0.1:9/mcp"], ["--config", "servers.json"]])
def test_two_servers_at_once_are_refused(extra):
    one_line_error(cli(*(extra + ["tools", "--"] + CALC)), 2, "give the server one way")


def test_a_config_command_with_spaces_and_cwd(tmp_path):
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {
        "spaced": {"command": "%s %s" % (PY, CALC[-1])},
        "incwd": {"command": PY, "args": ["calc.py"], "cwd": os.path.join(ROOT, "examples")}}}))
    for name in ("spaced", "incwd"):
        out = cli("--config", str(config), "--server", name, "call", "add", "a=1", "b=2", cwd=str(tmp_path))
        assert (out.returncode, out.stdout) == (0, "3\n"), (name, out.stderr)


@pytest.mark.parametrize("command,offers", [(["resources"], "resources"), (["prompts"], "prompts"),
                                            (["read", "calc://x"], "resources"),
                                            (["complete", "p", "a=1"], "completions")])
def test_what_the_server_does_not_offer_is_said_in_words(command, offers):
    out = cli(*(command + ["--"] + CALC))
    one_line_error(out, 1, "(code -32601)")
    # the exception's own hint, as a Python caller reads it (tests/test_api.py)
    assert out.stderr.endswith("\n  hint: the server does not offer %s; it offers: tools\n" % offers), out.stderr


def test_a_closed_stdout_ends_quietly_like_unix_tools():
    proc = subprocess.Popen(cli_argv() + ["tools", "--"] + CALC, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, cwd=ROOT)
    proc.stdout.close()  # the reader is gone before anything is written: `| head -0`
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(60) == 141 and stderr == "", stderr


class _Refusing(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="x"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class _WebPage(_Refusing):
    def do_POST(self):
        body = b"<!doctype html><html><body>Welcome to our site</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d/mcp" % server.server_address[1]


@pytest.mark.parametrize("handler", [_WebPage, type("_NotImplemented", (_Refusing,), {"do_POST": lambda self: (
    self.send_error(501))})], ids=["html-page", "501"])
def test_a_web_page_or_5xx_at_connect_is_unreachable(handler):
    server, url = serve(handler)
    try:
        out = cli("--url", url, "tools")
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 4 and "Traceback" not in out.stderr, out.stderr


@pytest.fixture
def refusing_url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d/mcp" % server.server_address[1]
    server.shutdown()
    server.server_close()


def test_every_exit_status_of_the_table(refusing_url):
    assert cli("call", "add", "a=1", "b=2", "--", *CALC).returncode == 0
    assert cli("resources", "--", *CALC).returncode == 1                       # other: refused by the server
    assert cli("call", "add", "a=1", "--", *CALC).returncode == 2              # usage
    assert cli("--url", refusing_url, "tools").returncode == 3                 # authorization
    assert cli("tools", "--", "/nonexistent/server").returncode == 4           # unreachable
    assert cli("call", "divide", "a=1", "b=0", "--", *CALC).returncode == 5    # the tool reported an error
    assert cli("--json", "call", "divide", "a=1", "b=0", "--", *CALC).returncode == 5
    usage = cli("--help").stdout
    for line in ("0 ok", "1 other error", "2 usage", "3 authorization", "4 no server reachable",
                 "5 the tool reported an error"):
        assert line in usage


# ---------------------------------------------------------------------------
# 5. Servers from the files people already have
# ---------------------------------------------------------------------------

@pytest.fixture
def homes(tmp_path):
    """A fake HOME and project directory holding the config files of several hosts."""
    home, project = tmp_path / "home", tmp_path / "project"
    for path, doc in [
        (home / ".claude.json", {"mcpServers": {"code-calc": {"command": PY, "args": [CALC[-1]]}},
                                 "projects": {str(project): {"mcpServers": {"proj-calc": {
                                     "command": PY, "args": [CALC[-1]]}}}}}),
        (home / ".config" / "Claude" / "claude_desktop_config.json",
         {"mcpServers": {"desk-calc": {"command": PY, "args": [CALC[-1]]}}}),
        (home / ".cursor" / "mcp.json", {"mcpServers": {"cursor-http": {"url": "http://127.0.0.1:9/mcp"}}}),
        (home / ".gemini" / "settings.json", {"mcpServers": {"gem-http": {"httpUrl": "http://127.0.0.1:9/mcp"}}}),
        (project / ".mcp.json", {"mcpServers": {"code-calc": {"command": PY, "args": ["examples/calc.py"],
                                                              "cwd": ROOT}}}),
    ]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text(
        '// VS Code allows comments\n' + json.dumps({
            "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": True}],
            "servers": {"vs-calc": {"type": "stdio", "command": "${env:CALC_PYTHON}", "args": [CALC[-1]],
                                    "env": {"KEY": "${input:key}"}},
                        "vs-plain": {"type": "stdio", "command": "${env:CALC_PYTHON}", "args": [CALC[-1]]}}}))
    env = dict(os.environ, HOME=str(home), CALC_PYTHON=PY)
    env.pop("XDG_CONFIG_HOME", None)
    return env, str(project)


def test_servers_lists_what_was_found_and_where(homes):
    env, project = homes
    out = cli("servers", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    found = {}
    for line in lines:
        found.setdefault(line.split()[0], line)  # the first of a name is the one --server NAME uses
    assert set(found) == {"code-calc", "proj-calc", "desk-calc", "cursor-http", "gem-http", "vs-calc", "vs-plain"}
    assert len(lines) == 8  # code-calc twice: the project's .mcp.json, then ~/.claude.json
    assert "Claude Code (project)" in found["code-calc"] and "(VS Code (project)" in found["vs-calc"]
    assert "claude_desktop_config.json" in found["desk-calc"] and "http://127.0.0.1:9/mcp" in found["gem-http"]


@pytest.mark.parametrize("name", ["code-calc", "proj-calc", "desk-calc", "vs-plain"])
def test_server_by_name_without_config(homes, name):
    env, project = homes
    out = cli("--server", name, "call", "add", "a=1", "b=2", env=env, cwd=project)
    assert (out.returncode, out.stdout) == (0, "3\n"), out.stderr


def test_server_by_name_honours_url_and_refuses_what_it_cannot_ask(homes):
    env, project = homes
    one_line_error(cli("--server", "gem-http", "tools", env=env, cwd=project), 4, "127.0.0.1:9")
    one_line_error(cli("--server", "vs-calc", "tools", env=env, cwd=project), 2, "${input:key}", "terminal")
    one_line_error(cli("--server", "nope", "tools", env=env, cwd=project), 2, "no server 'nope'", "vs-calc")


def test_claude_desktop_config_per_platform():
    files = {p: dict((label, path) for label, path, _ in mcp_min._config_files("/h", "/p", p, {"APPDATA": "C:/A"}))
             for p in ("darwin", "win32", "linux")}
    assert files["darwin"]["Claude Desktop"] == "/h/Library/Application Support/Claude/claude_desktop_config.json"
    assert files["win32"]["Claude Desktop"].replace("\\", "/") == "C:/A/Claude/claude_desktop_config.json"
    assert files["linux"]["Claude Desktop"] == "/h/.config/Claude/claude_desktop_config.json"


# ---------------------------------------------------------------------------
# 7. Every command out of the box (examples/tour.py), in both eras
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("era", ERAS)
def test_every_command_runs_on_the_bundled_examples(era):
    runs = [(["resources"], "calc://constants"), (["read", "calc://table/7"], " 7 x 7 = 49"),
            (["read", "calc://constants"], '"pi": 3.14159'), (["prompts"], "explain(expression, level?)"),
            (["prompt", "explain", "expression=2 + 3"], "user: Explain, for a beginner, how to compute 2 + 3"),
            (["complete", "explain", "level=e"], "expert"), (["complete", "calc://table/{n}", "n=1"], "12"),
            (["--task", "call", "count", "to=2", "seconds=0"], '"counted": 2'), (["info"], "server: tour")]
    for args, shown in runs:  # in the default era as the README writes them: python -m mcp_min ...
        out = cli(*(["--protocol-version", era] + args + ["--"] + TOUR), module=era == "auto")
        assert out.returncode == 0 and shown in out.stdout, (args, out.stdout, out.stderr)


def test_options_may_come_between_the_command_and_its_words():
    # the README's spelling `call --task NAME ...` and options after the tool's name
    for args, shown in [(["call", "--task", "count", "to=2", "seconds=0"], '"counted": 2'),
                        (["call", "count", "--task", "to=2", "seconds=0"], '"counted": 2'),
                        (["call", "--json", "add", "a=1", "b=2"], '"structuredContent"')]:
        out = cli(*(args + ["--"] + TOUR))
        assert out.returncode == 0 and shown in out.stdout, (args, out.stdout, out.stderr)


def test_a_task_over_stdio_reports_its_status_in_whole_lines_and_no_follow_hint():
    # (a task ends with the stdio server this command started: "follow it with" would send the user nowhere)
    out = cli("call", "--task", "count", "to=3", "seconds=0", "--", *TOUR)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert lines and all(line.startswith("mcp_min: ") for line in lines), out.stderr
    assert "follow it with" not in out.stderr and "task completed" in out.stderr, out.stderr
    assert re.match(r"mcp_min: task \S+$", lines[0]), out.stderr  # the task is named before its status


def test_task_status_that_comes_before_the_task_is_named_waits_for_that_line(capsys):
    lines = mcp_min._TaskLines()
    lines.progress(0, None, "task working")  # (on mcp_min-events, before start() returned)
    assert capsys.readouterr().err == ""
    lines.named("mcp_min: task t1")
    lines.progress(0, None, "task completed")
    assert capsys.readouterr().err.splitlines() == ["mcp_min: task t1", "mcp_min: task working",
                                                    "mcp_min: task completed"]
    unnamed = mcp_min._TaskLines()  # a server that answered at once: no task to name
    unnamed.progress(1, 2, None)
    unnamed.named(None)
    assert capsys.readouterr().err.splitlines() == ["progress: 1/2"]


def test_a_task_followed_from_another_process(tour_url):
    out = cli("--url", tour_url, "--task", "call", "count", "to=2", "seconds=0")
    assert out.returncode == 0, out.stderr
    task_id = re.search(r"follow it with: task (\S+)\)", out.stderr).group(1)
    out = cli("--url", tour_url, "task", task_id)
    assert out.returncode == 0 and json.loads(out.stdout) == {"counted": 2}, out.stderr


# ---------------------------------------------------------------------------
# Restricted Pythons (issue 17, item 7) and the library user's import
# ---------------------------------------------------------------------------

REFUSE_MODULE = r'''
import os, runpy, sys
missing = sys.argv[1]
class Refuse(object):
    def find_spec(self, name, path=None, target=None):
        if name == missing:
            raise ModuleNotFoundError("No module named %r" % name, name=name)
sys.meta_path.insert(0, Refuse())
sys.modules.pop(missing, None)
sys.argv = [sys.argv[2]] + sys.argv[3:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_module("mcp_min", run_name="__main__", alter_sys=True)  # from its bytecode (testsupport.cli_argv)
'''


@pytest.mark.parametrize("missing", ["subprocess", "select", "signal"])
def test_a_python_without_a_module_gets_one_line(missing):
    ensure_bytecode(MCP_MIN)  # (REFUSE_MODULE loads it)
    out = subprocess.run([PY, "-c", REFUSE_MODULE, missing, MCP_MIN, "tools", "--"] + CALC, capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    one_line_error(out, 1, "this Python has no %r module" % missing)
    assert len(out.stderr.strip().splitlines()) == 1 and "internal error" not in out.stderr


def test_the_cli_is_not_imported_by_a_library_user():
    out = subprocess.run([PY, "-c", "import sys, mcp_min; print(sorted(m for m in ('argparse', 'cmd', 'readline', "
                                    "'shlex', 'getpass', 'webbrowser') if m in sys.modules))"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stderr


def test_a_python_without_an_http_module_gets_one_line_over_http():
    # (issue 26, item 11) was: exit 4, "HTTP exchange ... failed" and a logged traceback
    ensure_bytecode(MCP_MIN)
    out = subprocess.run([PY, "-c", REFUSE_MODULE, "http.client", MCP_MIN, "--url", "http://127.0.0.1:9/mcp", "tools"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    one_line_error(out, 1, "this Python has no 'http.client' module, which HTTP")
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


# ---------------------------------------------------------------------------
# Server text never drives the terminal (issue 26, item 8): listings, errors and logs show its
# control characters as escapes; content asked for does on a terminal and is exact when piped.
# ---------------------------------------------------------------------------

FAKE = os.path.join(HERE, "fake_server.py")
# ESC sequences (clear the screen, an OSC 52 clipboard write, an OSC 8 hidden link), BEL, a bare CR,
# an 8-bit CSI (U+009B) and NEL, the bidi controls, backspace, DEL, NUL
HOSTILE = ("<\x1b[2J\x1b]52;c;aGk=\x07\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\|\rX|\x9b31m|\x85|\u202e|\u202a|"
           "\u202b|\u202c|\u202d|\u2066|\u2067|\u2068|\u2069|\u200e|\u200f|\u061c|\x08|\x7f|\x00>")
HOSTILE_SHOWN = (r"<\x1b[2J\x1b]52;c;aGk=\x07\x1b]8;;http://evil/\x1b\click\x1b]8;;\x1b\|\rX|\x9b31m|\x85|\u202e|"
                 r"\u202a|\u202b|\u202c|\u202d|\u2066|\u2067|\u2068|\u2069|\u200e|\u200f|\u061c|\x08|\x7f|\x00>")
HOSTILE_TEXT = HOSTILE + "\nline 2\n\tindented\r\nline 4"  # (fake_server's hostile_text)
HOSTILE_TEXT_SHOWN = HOSTILE_SHOWN + "\nline 2\n\tindented\r\nline 4"  # tab, newline, CRLF as they are
# what must never reach a terminal raw (a CR only as part of CRLF)
RAW_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")
HOSTILE_COMMANDS = ("info\ntools\ntool hostile\nresources\nread hostile://r\nprompts\nprompt hostile\ncall hostile\n"
                    "call hostile_error\nraw tools/list\n")


def raw_controls(text):
    return sorted(set(RAW_CONTROL.findall(text)))


def hostile_shell(stdout=subprocess.PIPE):
    """`shell` on fake_server with cfg hostile, running HOSTILE_COMMANDS; ``stdout``: a pty's end.
    (stdin is a pipe: no prompts; TERM=dumb: readline writes no set-up sequence of its own)"""
    return subprocess.Popen(cli_argv(*NO_SITE) + ["shell", "--", PY, *NO_SITE, FAKE, json.dumps({"hostile": HOSTILE})],
                            stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE, cwd=ROOT,
                            env=dict(os.environ, PYTHONIOENCODING="utf-8", TERM="dumb"))


def check_hostile_stderr(err):
    """Errors, logs, progress and the elicitation note: made visible whatever stdout is."""
    assert not raw_controls(err), raw_controls(err)
    for line in ("mcp_min: [%s] %s" % (HOSTILE_SHOWN, HOSTILE_SHOWN), "progress: 1 " + HOSTILE_SHOWN,
                 "error: tools/call failed: %s (code -32000)" % HOSTILE_SHOWN,
                 "mcp_min: the server asks for input (%s" % HOSTILE_SHOWN.split(r"\r")[0]):
        assert line in err.splitlines() or line in err, "%r not in:\n%s" % (line, err)


def check_hostile_listings(out):
    for line in ("server: fake%s 9" % HOSTILE_SHOWN, "instructions: " + HOSTILE_SHOWN, "t%s()" % HOSTILE_SHOWN,
                 "hostile://%s  - <" % HOSTILE_SHOWN, "p%s(a%s?)  - <" % (HOSTILE_SHOWN, HOSTILE_SHOWN),
                 "  k%s: string (optional, default " % HOSTILE_SHOWN):
        assert line in out, "%r not in:\n%s" % (line, out)


@pytest.mark.skipif(os.name == "nt", reason="no pseudo-terminals on Windows")
def test_server_text_on_a_terminal_is_shown_not_obeyed():
    import pty
    import tty
    try:
        master, slave = pty.openpty()
    except OSError as e:  # (a chroot without /dev/pts: .ci/sid-chroot's)
        pytest.skip("no pseudo-terminal here: %s" % e)
    tty.setraw(slave)  # no output processing: what arrives is byte for byte what the CLI wrote
    try:
        proc = hostile_shell(stdout=slave)
    finally:
        os.close(slave)
    chunks = []

    def read():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed its end
                return
            if not data:
                return
            chunks.append(data)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        _, err = proc.communicate(HOSTILE_COMMANDS.encode(), timeout=120)
        reader.join(60)
    finally:
        os.close(master)
    assert proc.returncode == 0, err.decode()
    out, err = b"".join(chunks).decode("utf-8"), err.decode("utf-8")
    assert not raw_controls(out), raw_controls(out)
    check_hostile_listings(out)
    assert out.count(HOSTILE_TEXT_SHOWN) == 3, out  # call, read, prompt: made visible on a terminal
    assert "user: " + HOSTILE_TEXT_SHOWN in out
    assert r'"description": "<\u001b[2J' in out and r"|\u009b31m|\u0085|\u202e|" in out  # raw: JSON
    check_hostile_stderr(err)


def test_server_text_piped_is_exact_where_asked_for_and_json_escapes_every_control():
    proc = hostile_shell()
    out, err = proc.communicate(HOSTILE_COMMANDS.encode(), timeout=120)
    assert proc.returncode == 0, err.decode()
    out, err = out.decode("utf-8"), err.decode("utf-8")
    assert out.count(HOSTILE_TEXT) == 3, out  # call, read, prompt: exact when piped
    assert "user: " + HOSTILE_TEXT in out
    listings = out.replace(HOSTILE_TEXT, "")
    assert not raw_controls(listings), raw_controls(listings)  # listings: made visible, piped too
    check_hostile_listings(listings)
    raw = out[out.index("\n{\n") + 1:]  # (raw tools/list, the last command: JSON as --json prints it)
    assert not raw_controls(raw), raw_controls(raw)
    assert r"|\u009b31m|\u0085|\u202e|\u202a|" in raw and "\\r" in raw
    tools = {t["name"]: t for t in json.loads(raw)["tools"]}
    assert tools["hostile"]["description"] == HOSTILE and "t" + HOSTILE in tools
    check_hostile_stderr(err)


def test_a_server_error_that_ends_the_cli_is_made_visible():
    out = cli("call", "hostile_error", "--", PY, *NO_SITE, FAKE, json.dumps({"hostile": HOSTILE}),
              env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    one_line_error(out, 1, "mcp_min: tools/call failed: %s (code -32000)" % HOSTILE_SHOWN)
    assert not raw_controls(out.stderr), raw_controls(out.stderr)


def test_the_shell_neither_greets_nor_completes_with_terminal_controls():
    # (in process: the banner and readline's matches are written on the terminal as they are)
    class FakeClient(object):
        server_info = {"name": "fake" + HOSTILE}

        def list_tools(self):
            return [{"name": "add", "inputSchema": {"type": "object", "properties": {"a": {}, "a\x1b[2J": {}}}},
                    {"name": "a\x1b]52;c;aGk=\x07"}, {"name": "a\u202eb"}]
    shell = mcp_min._shell_class()(FakeClient(), None)
    assert shell.intro == "connected to fake%s; type help, or quit (Ctrl-D)" % HOSTILE_SHOWN
    assert shell.complete_tools("a", "tools a", 6, 7) == ["add"]
    assert shell.complete_call("", "call add ", 9, 9) == ["a="]


@pytest.mark.parametrize("text, lines, shown", [
    ("a\x1b[31mb\x07", False, r"a\x1b[31mb\x07"),
    ("tab\there\nnext\r\nlast\rover", False, r"tab\there\nnext\r\nlast\rover"),
    ("tab\there\nnext\r\nlast\rover", True, "tab\there\nnext\r\nlast\\rover"),
    ("end\r", True, r"end\r"),
    ("\x9b2J \x85 \x7f \u202e \u2066 \u200f \u061c", True, r"\x9b2J \x85 \x7f \u202e \u2066 \u200f \u061c"),
    ("caf\u00e9 \u4e2d \U0001f600 C:\\dir", False, "caf\u00e9 \u4e2d \U0001f600 C:\\dir"),  # the rest as it is
])
def test_visible_writes_terminal_controls_as_python_escapes(text, lines, shown):
    assert mcp_min._visible(text, lines) == shown


def test_json_for_the_terminal_escapes_c1_and_bidi_and_stays_the_same_json():
    value = {"k\u202e": ["\x1b[2J", "\x9b", "\x85", "\u2066x\u2069", "\x7f", "\t\n", "caf\u00e9"]}
    text = mcp_min._dumps_for_humans_indented(value)
    assert json.loads(text) == value
    assert not raw_controls(text.replace("\n", "")), raw_controls(text)
    assert r'"k\u202e"' in text and r'"\u009b"' in text and "caf\u00e9" in text


# ---------------------------------------------------------------------------
# On a real terminal (tmux): form elicitation and the shell
# ---------------------------------------------------------------------------

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")


class Terminal(object):
    """A command running in a detached tmux session of its own (its own server socket)."""

    def __init__(self, command, tmp_path):
        self.socket = str(tmp_path / "tmux.sock")
        self.status = tmp_path / "status"
        shell = "cd %s && %s; echo $? > %s; sleep 60" % (shlex_quote(ROOT), command, shlex_quote(str(self.status)))
        self.tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "60", shell)

    def tmux(self, *args):
        return subprocess.run(["tmux", "-S", self.socket] + list(args), capture_output=True, text=True, timeout=30)

    def screen(self):
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "t").stdout

    def wait_for(self, text, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.screen():
                return self.screen()
            time.sleep(0.05)
        raise AssertionError("%r never showed; the screen:\n%s" % (text, self.screen()))

    def type(self, *keys):
        self.tmux("send-keys", "-t", "t", *keys)

    def exit_status(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.status.exists():
            time.sleep(0.05)
        return int(self.status.read_text())

    def close(self):
        self.tmux("kill-server")


def shlex_quote(text):
    import shlex
    return shlex.quote(text)


@pytest.fixture
def terminal(tmp_path):
    made = []

    def start(*argv):
        made.append(Terminal(" ".join(shlex_quote(a) for a in argv), tmp_path))
        return made[-1]
    yield start
    for t in made:
        t.close()


@needs_tmux
@pytest.mark.parametrize("era", ERAS)
def test_greet_asks_on_a_terminal(terminal, era):
    term = terminal(*cli_argv() + ["--protocol-version", era, "call", "greet", "--"] + CALC)
    term.wait_for("name (string, required): ")
    term.type("Ada", "Enter")
    term.wait_for("[a]ccept / [d]ecline / [c]ancel: ")
    term.type("a", "Enter")
    assert "Hello, Ada!" in term.wait_for("Hello, Ada!")
    assert term.exit_status() == 0


@needs_tmux
def test_a_declined_form_sends_nothing(terminal):
    term = terminal(*cli_argv() + ["call", "greet", "--"] + CALC)
    term.wait_for("name (string, required): ")
    term.type("Ada", "Enter")
    term.wait_for("[a]ccept / [d]ecline / [c]ancel: ")
    term.type("d", "Enter")
    assert "Hello, stranger!" in term.wait_for("Hello, stranger!")


@needs_tmux
def test_the_shell(terminal):
    term = terminal(PY, MCP_MIN, "shell", "--", *TOUR)  # the script form (the README shows both; see testsupport.cli_argv)
    term.wait_for("mcp> ")
    term.type("tools", "Enter")
    term.wait_for("count(to: integer")
    term.type("call ad", "Tab")  # completes the tool name...
    term.wait_for("mcp> call add")
    term.type("a", "Tab")        # ...and the argument key
    term.wait_for("call add a=")
    term.type("2 b=3", "Enter")
    term.wait_for("\n5\n")
    for line, shown in [("read calc://constants", '"pi": 3.14159'),
                        ("prompt explain expression=1+1", "user: Explain, for a beginner, how to compute 1+1"),
                        ("call add a=x", "error: a=x: expected number"), ("trace on", "trace on"),
                        ("ping", '"method":"'), ("trace off", "trace off"), ("history", "   3  read calc://constants")]:
        term.type(line, "Enter")
        term.wait_for(shown)
    term.type("C-d")
    assert term.exit_status() == 0


def test_one_table_makes_the_shells_commands_their_help_and_the_usage():
    shell = mcp_min._shell_class()(type("FakeClient", (), {"server_info": {}})(), None)
    in_shell = [name for name in mcp_min._COMMANDS if name not in ("servers", "shell")]
    assert [name for name in in_shell if not callable(getattr(shell, "do_" + name, None))] == []
    assert shell.completenames("to", "to", 0, 2) == ["tool", "tools"]  # (tab completion of a command)
    usage = cli("--help").stdout
    for name, row in mcp_min._COMMANDS.items():
        assert "  %s %s" % (name, row[3]) in usage or "  %s  " % name in usage, name
        assert " ".join(row[4].split()[:3]) in usage, name  # (its text, wherever the line wraps)
        if name in in_shell:
            assert getattr(shell, "do_" + name).__doc__.startswith(("%s %s: " % (name, row[3])).replace(" :", ":"))
    out = subprocess.run(cli_argv() + ["shell", "--"] + CALC, input="help\nhelp call\nhelp servers\n",
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    listed = out.stdout.split("=\n", 1)[1].split("\n\n")[0].split()
    assert sorted(listed) == sorted(in_shell + ["EOF", "exit", "help", "history", "quit", "trace"])
    assert out.stdout.endswith("\n" + mcp_min._command_help("call", True) + "\n*** No help on servers\n")
    assert "\nschema (a whole JSON object" in out.stdout  # (wrapped, unindented: cmd dedents help from 3.13 on)


def test_the_shell_reads_commands_from_a_pipe_and_ends_at_eof():
    out = subprocess.run(
        cli_argv() + ["shell", "--"] + TOUR, input="call add a=1 b=2\nnosuch\nprompt explain\nquit\n",
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "3\n"  # no prompts or banner when not on a terminal
    assert out.stderr == ("error: no command 'nosuch' here (help lists them)\n"
                          "error: explain needs expression=... (see: prompts)\n")  # (as the command says it)


# ---------------------------------------------------------------------------
# 12. Installable: pip install into a fresh venv, then the console script
# ---------------------------------------------------------------------------

def _pip_version():
    """This interpreter's pip version as a tuple, (0,) without one."""
    try:
        import pip
    except ImportError:
        return (0,)
    return tuple(int(part) for part in re.findall(r"\d+", pip.__version__)[:2])


@pytest.mark.slow
def test_pip_install_gives_the_module_and_the_console_script(tmp_path):
    venv = tmp_path / "venv"
    # This interpreter's pip installs into the venv when it can (pip 22.3+: --python), as
    # .ci/test-interpreters does: a venv's own pip (ensurepip) costs 4-5 CPU-seconds to make.
    host_pip = _pip_version() >= (22, 3)
    subprocess.run([PY, "-m", "venv"] + (["--without-pip"] if host_pip else []) + [str(venv)], check=True,
                   timeout=300, capture_output=True)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    source = tmp_path / "source"  # a copy: setuptools writes build/ and *.egg-info beside the sources
    source.mkdir()
    (source / ".ci").mkdir()
    for name in ("pyproject.toml", "mcp_min.py", "README.md", "LICENSE", os.path.join(".ci", "typed_wheel.py")):
        shutil.copy(os.path.join(ROOT, name), str(source / name))
    pip = subprocess.run(([PY, "-m", "pip", "--python", str(bindir / "python")] if host_pip
                          else [str(bindir / "python"), "-m", "pip"]) + ["install", "-q", str(source)],
                         capture_output=True, text=True, timeout=300)
    if pip.returncode != 0 and re.search(r"(?i)network|connection|resolve|no matching distribution|offline",
                                         pip.stderr):
        pytest.skip("pip cannot fetch the build backend (offline?): %s" % pip.stderr.strip().splitlines()[-1])
    assert pip.returncode == 0, pip.stderr
    out = subprocess.run([str(bindir / "mcp_min"), "call", "add", "a=2", "b=3", "--"] + CALC, capture_output=True,
                         text=True, timeout=120, cwd=str(tmp_path))
    assert (out.returncode, out.stdout) == (0, "5\n"), out.stderr
    out = subprocess.run([str(bindir / "mcp_min"), "--help"], capture_output=True, text=True, timeout=60)
    assert out.stdout.startswith("usage: mcp_min [options] COMMAND"), out.stdout[:200]  # its own name, not python
    out = subprocess.run([str(bindir / "python"), "-m", "mcp_min", "--version"], capture_output=True, text=True,
                         timeout=60, cwd=str(tmp_path))
    assert out.stdout.strip() == "mcp_min " + mcp_min.__version__, out.stderr
    # The installed form carries its types (the wheel's mcp_min-stubs): mypy --strict, no flags.
    if importlib.util.find_spec("mypy") is not None:
        user = tmp_path / "user.py"
        user.write_text("import mcp_min\n\ndef total(client: mcp_min.Client) -> int:\n"
                        "    value: int = client.call('add', a=1, b=2)\n    return value\n")
        out = subprocess.run([PY, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                              str(bindir / "python"), str(user)], capture_output=True, text=True, timeout=300,
                             cwd=str(tmp_path))
        assert out.returncode == 0, out.stdout + out.stderr


# ---------------------------------------------------------------------------
# The pure parts, in memory
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("text,schema,value", [
    ("12345", {"type": "string"}, "12345"), ("3", {"type": "integer"}, 3), ("3.0", {"type": "integer"}, 3),
    ("2.5", {"type": "number"}, 2.5), ("false", {"type": "boolean"}, False), ("yes", {"type": "boolean"}, True),
    ("[1]", {"type": "array"}, [1]), ("null", {"type": ["integer", "null"]}, None),
    ("7", {"type": ["integer", "string"]}, 7), ("x", {"type": ["integer", "string"]}, "x"),
    ("12", {}, 12), ("hi", {}, "hi"),
])
def test_typed_value(text, schema, value):
    assert mcp_min._typed_value(text, schema, "k") == value


@pytest.mark.parametrize("text,schema", [("2.5", {"type": "integer"}), ("x", {"type": "number"}),
                                         ("NaN", {"type": "number"}), ("[1]", {"type": "object"}),
                                         ("true", {"type": "integer"})])
def test_typed_value_refused(text, schema):
    with pytest.raises(mcp_min._UsageError):
        mcp_min._typed_value(text, schema, "k")


def test_schema_arguments_open_and_closed():
    closed = {"type": "object", "properties": {"a": {"type": "integer"}}}
    with pytest.raises(mcp_min._UsageError, match="no argument 'b'"):
        mcp_min._schema_arguments(["a=1", "b=2"], None, closed, "t")
    for extra, b in ((True, 2), ({"type": "string"}, "2")):
        assert mcp_min._schema_arguments(["a=1", "b=2"], None, dict(closed, additionalProperties=extra), "t") == {
            "a": 1, "b": b}


def test_config_values_expand(monkeypatch):
    monkeypatch.setenv("MCP_MIN_T", "v")
    monkeypatch.delenv("MCP_MIN_UNSET", raising=False)
    assert mcp_min._expand("${env:MCP_MIN_T}/${MCP_MIN_T}/${MCP_MIN_UNSET:-d}", "k", []) == "v/v/d"
    with pytest.raises(mcp_min._UsageError, match="MCP_MIN_UNSET is not set"):
        mcp_min._expand("${MCP_MIN_UNSET}", "k", [])
