"""Declared capabilities: Client(capabilities=...) over what mcp_min declares, in both eras.

tests/fake_server.py, on a thread of this process over Client.over(), records every line it
receives; each message is checked against the official schema of the version in use
(tests/schema/<version>/schema.json).
"""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import fake_server  # noqa: E402
import mcp_min  # noqa: E402
from mcp_min import Client  # noqa: E402

UI = "io.modelcontextprotocol/ui"  # the MCP Apps extension
APPS = {"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}},
        "sampling": {"tools": {}, "context": {}},
        "experimental": {"com.example/flags": {"fast": True}}}


def sample(params):
    return {"role": "assistant", "model": "m", "content": {"type": "text", "text": "tools seen: %s"
                                                           % sorted(t["name"] for t in params.get("tools", []))}}


@pytest.fixture
def client_for(tmp_path):
    """client_for(cfg=None, **options) -> a Client.over() of tests/fake_server.py on a thread;
    what it receives goes to the file received() reads."""
    def make(cfg=None, **options):
        cfg = dict(cfg or {})
        cfg.setdefault("log", str(tmp_path / "received.jsonl"))
        return fake_server.client_for(cfg, **options)
    return make


def received(tmp_path):
    path = tmp_path / "received.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def schema_check(version, messages):
    """Every request we sent is a valid ClientRequest of ``version``; returns the methods."""
    import jsonschema  # a test requirement: missing means fail, never skip
    with open(os.path.join(HERE, "schema", version, "schema.json"), encoding="utf-8") as f:
        root = json.load(f)
    defs = "$defs" if "$defs" in root else "definitions"
    validator = jsonschema.validators.validator_for(root)
    seen = set()
    for msg in messages:
        if "method" in msg and "id" in msg and not str(msg["id"]).startswith("srv"):
            errors = list(validator(dict(root, **{"$ref": "#/%s/ClientRequest" % defs})).iter_errors(msg))
            assert not errors, "%s is not a valid ClientRequest (%s): %s" % (msg, version, errors[0].message)
            seen.add(msg["method"])
    return seen


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
def test_handshake_declares_ours_and_the_callers(client_for, tmp_path, version):
    with client_for(protocol_version=version, roots=["/tmp"], sampling=sample, capabilities=APPS) as c:
        c.list_tools()
    init = [m for m in received(tmp_path) if m.get("method") == "initialize"][0]
    caps = init["params"]["capabilities"]
    assert caps["sampling"] == {"tools": {}, "context": {}}
    assert caps["extensions"][UI] == {"mimeTypes": ["text/html;profile=mcp-app"]}
    assert caps["experimental"] == {"com.example/flags": {"fast": True}}
    assert caps["roots"] == {"listChanged": False}  # ours stay
    if version == "2025-11-25":
        assert caps["tasks"] == {} and caps["extensions"][mcp_min.SKILLS_EXTENSION] == {}
    assert {"initialize", "tools/list"} <= schema_check(version, received(tmp_path))


def test_stateless_requests_each_declare_them(client_for, tmp_path):
    with client_for({"discover": "modern"}, sampling=sample, capabilities=APPS) as c:
        assert c.protocol_version == "2026-07-28"
        c.list_tools()
        c.call("echo", x=1)
        c.request("tools/list", {"_meta": {"com.example/own": 1}})  # a caller's _meta cannot replace them
    requests = [m for m in received(tmp_path) if "id" in m]
    assert len(requests) == 4
    for msg in requests:
        caps = msg["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert caps["extensions"] == {UI: {"mimeTypes": ["text/html;profile=mcp-app"]},
                                      mcp_min.TASKS_EXTENSION: {}, mcp_min.SKILLS_EXTENSION: {}}
        assert caps["sampling"] == {"tools": {}, "context": {}}
        assert caps["experimental"] == {"com.example/flags": {"fast": True}}
    assert requests[-1]["params"]["_meta"]["com.example/own"] == 1
    assert {"server/discover", "tools/list", "tools/call"} <= schema_check("2026-07-28", received(tmp_path))


def test_none_withdraws_one_of_ours(client_for, tmp_path):
    with client_for({"discover": "modern"}, capabilities={"extensions": {mcp_min.TASKS_EXTENSION: None}}) as c:
        c.list_tools()
    for msg in [m for m in received(tmp_path) if "id" in m]:
        assert msg["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {
            "extensions": {mcp_min.SKILLS_EXTENSION: {}}}
    with client_for(protocol_version="2025-11-25", capabilities={"tasks": None, "extensions": None}):
        pass
    init = [m for m in received(tmp_path) if m.get("method") == "initialize"][-1]
    assert init["params"]["capabilities"] == {}


@pytest.mark.parametrize("caps, says", [
    ([1], "dict of capability objects"),
    ({"sampling": True}, "dict of capability objects"),
    ({"extensions": {"ui": {}}}, "ids like"),  # the prefix is mandatory
    ({"extensions": {"io.modelcontextprotocol/ui": []}}, "ids like"),
    ({"experimental": {"x": 1}}, "names"),
    ({"roots": {}}, "no roots= callback"),
    ({"elicitation": {"url": {}}}, "no elicitation= callback"),
    ({"experimental": {"x": {"y": float("nan")}}}, "NaN"),
])
def test_bad_capabilities_are_refused_before_anything_starts(caps, says):
    with pytest.raises(ValueError, match=says):
        Client(["/nonexistent/never-started"], capabilities=caps)


def test_url_elicitation_alone_may_declare_url_mode(client_for, tmp_path):
    with client_for(protocol_version="2025-11-25", url_elicitation=lambda p: {"action": "decline"},
                    capabilities={"elicitation": {"url": {"com.example/x": 1}}}):
        pass
    init = [m for m in received(tmp_path) if m.get("method") == "initialize"][0]
    assert init["params"]["capabilities"]["elicitation"] == {"url": {"com.example/x": 1}}


def test_sampling_with_tools_needs_sampling_tools_declared(client_for):
    ask = {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5,
        "tools": [{"name": "search", "inputSchema": {"type": "object"}}], "toolChoice": {"mode": "auto"}}}
    with client_for(protocol_version="2025-11-25", sampling=sample) as c:
        refused = c.call("ask", ask)
    assert refused["error"]["code"] == -32602 and "sampling.tools" in refused["error"]["message"]
    with client_for(protocol_version="2025-11-25", sampling=sample,
                    capabilities={"sampling": {"tools": {}}}) as c:
        answered = c.call("ask", ask)
    assert answered["result"]["content"]["text"] == "tools seen: ['search']"


def test_the_readme_example(client_for, tmp_path):
    """The README's capabilities= example, run against the fake server (2025-11-25; ``server``
    is its config, which this ``Client`` serves on a thread)."""
    with open(os.path.join(os.path.dirname(HERE), "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.index("Client(server, sampling=my_llm")
    code = readme[start:readme.index("```", start)]
    client = eval(compile(code, "README.md", "eval"), {
        "Client": lambda server, **kw: client_for(server, protocol_version="2025-11-25", **kw),
        "server": {}, "my_llm": sample})
    client.close()
    caps = [m for m in received(tmp_path) if m.get("method") == "initialize"][0]["params"]["capabilities"]
    assert caps["sampling"] == {"tools": {}, "context": {}}
    assert caps["extensions"][UI] == {"mimeTypes": ["text/html;profile=mcp-app"]}
    assert caps["experimental"] == {"com.example/feature": {}}
