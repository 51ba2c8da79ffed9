"""Group: every server of an mcpServers configuration at once (real processes: examples/calc.py,
tests/fake_server.py, a command that does not exist; HTTP servers in this process).  A Group
starts its servers from their entries, so tests about processes keep commands; tests about the
group itself (names, separators, bad entries) use examples/calc.py over HTTP on a thread."""
import json
import os
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))
import calc as calc_example  # noqa: E402  (examples/calc.py)
from inproc_server import Server, serve_http  # noqa: E402
from mcp_min import Group, McpError, ToolError  # noqa: E402
from testsupport import NO_SITE, wait_for  # noqa: E402

CALC = {"command": sys.executable, "args": [*NO_SITE, os.path.join(ROOT, "examples", "calc.py")]}
FAKE = os.path.join(HERE, "fake_server.py")


BEFORE = set()  # the threads alive when the test started (earlier tests' lingering ones are not this one's)


@pytest.fixture(autouse=True)
def _threads_before():
    BEFORE.clear()
    BEFORE.update(threading.enumerate())


def ours():
    """mcp_min's threads started by this test and still alive (mcp_min-deadlines is one per
    process and outlives clients by design: DEADLINE_THREAD_IDLE)."""
    return [t.name for t in threading.enumerate() if t not in BEFORE and t.name.startswith("mcp_min-")
            and t.name != "mcp_min-deadlines"]


@pytest.fixture
def calc_http():
    """An entry for examples/calc.py over Streamable HTTP on a thread of this process: {"url": ...}."""
    httpd = calc_example.CalcHTTPServer(("127.0.0.1", 0), calc_example.Handler)
    # (poll_interval: shutdown() waits up to one; the default 0.5 s would be most of the test)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True, name="calc-http").start()
    yield {"url": "http://127.0.0.1:%d/mcp" % httpd.server_address[1]}
    httpd.shutdown()
    httpd.close_all_sessions()
    httpd.server_close()


def test_a_group_lists_and_calls_namespaced_tools_and_reports_the_failing_one(tmp_path):
    server = Server()
    url, stop = serve_http(server)
    config = {"mcpServers": {
        "calc": CALC,
        "calc__v2": dict(CALC, env={"CALC_FLAVOUR": "2"}),  # a name holding the separator
        "web": {"url": url, "headers": {"X-Team": "blue"}},
        "broken": {"command": os.path.join(str(tmp_path), "no-such-server")},
        "exits": {"command": sys.executable, "args": [FAKE, json.dumps({"exit_at_start": 3,
                                                                         "startup_stderr": "no API key"})]},
        "off": dict(CALC, disabled=True),
    }}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    try:
        with Group(str(path), timeout=20) as group:
            assert sorted(group.clients) == ["calc", "calc__v2", "web"]
            assert sorted(group.errors) == ["broken", "exits"]
            assert "no API key" in str(group.errors["exits"])
            names = [t["name"] for t in group.list_tools()]
            assert {"calc__add", "calc__v2__add", "web__add", "web__whoami"} <= set(names)
            assert group.call("calc__add", a=2, b=3) == 5
            assert group.call("calc__v2__multiply", {"a": 6, "b": 7}) == 42  # the longest name wins
            assert group.call("web__add", a=1, b=1) == 2
            with pytest.raises(ToolError):
                group.call("calc__divide", a=1, b=0)
            with pytest.raises(McpError, match="no connected server 'broken'"):
                group.call("broken__anything")
            with pytest.raises(McpError, match="names no server"):
                group.call("nobody__add")
            assert repr(group) == "<mcp_min.Group 3 connected, 2 failed>"
    finally:
        stop()
    assert [h.get("X-Team") for h, m in server.received if m.get("method") == "tools/list"] == ["blue"]
    assert wait_for(lambda: not ours())


def test_a_custom_separator_and_a_plain_dict(calc_http):
    with Group({"a": calc_http, "b": calc_http}, separator=".") as group:
        assert sorted(t["name"] for t in group.list_tools() if t["name"].endswith(".add")) == ["a.add", "b.add"]
        assert group.call("b.subtract", a=5, b=3) == 2
        assert group.client("a").call("add", a=1, b=1) == 2
    assert wait_for(lambda: not ours())


@pytest.mark.parametrize("config, says", [
    ("/nonexistent/mcp.json", "cannot read"),
    ([1], "mcpServers object"),
    ({"mcpServers": [1]}, "mcpServers must be an object"),
])
def test_bad_configs(config, says):
    with pytest.raises(ValueError, match=says):
        Group(config)


def test_bad_entries_are_that_servers_errors(calc_http):
    with Group({"x": {"args": []}, "y": 5, "calc": calc_http}, separator="/") as group:
        assert list(group.clients) == ["calc"]
        assert "neither a command nor a url" in str(group.errors["x"])
        assert isinstance(group.errors["y"], ValueError)
    with pytest.raises(ValueError, match="separator"):
        Group({}, separator="")


def test_the_readme_example(monkeypatch):
    """The README's Group example, run as written ("python" is this interpreter; what its
    comments show is kept in names and checked)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.index("from mcp_min import Group")
    code = readme[start:readme.index("```", start)].replace('"command": "python"', '"command": %r' % sys.executable)
    for shown, kept in (("group.errors ", "errors = group.errors "), ("group.list_tools() ", "tools = group.list_tools() "),
                        ("group.call(", "value = group.call(")):
        assert "    " + shown in code
        code = code.replace("    " + shown, "    " + kept)
    monkeypatch.chdir(ROOT)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert list(namespace["errors"]) == ["broken"]
    assert "cannot start server 'no-such-server'" in str(namespace["errors"]["broken"])
    assert "calc__add" in [t["name"] for t in namespace["tools"]]
    assert namespace["value"] == 5
