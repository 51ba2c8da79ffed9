"""mcp_min against @modelcontextprotocol/server-everything@2026.8.31 (handshake era only).

Everything the server offers, through mcp_min's public API, over stdio, Streamable
HTTP and the legacy HTTP+SSE transport.  The HTTP servers bind 127.0.0.1 only (the
loopback_only.cjs preload).  One client per transport is shared by the module; it
declares roots, sampling and elicitation, so the server registers its conditional
tools after ``notifications/initialized``.
"""

import base64
import gzip
import json
import os
import threading
import time

import pytest

import peers
import mcp_min

pytestmark = pytest.mark.skipif(bool(peers.npm_missing()), reason=peers.npm_missing() or "")

TRANSPORTS = ["stdio", "streamable-http", "sse"]
ALWAYS_TOOLS = {
    "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
    "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
    "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
    "simulate-research-query",
}
# Registered in oninitialized because the client declared roots / elicitation / sampling.
CONDITIONAL_TOOLS = {"get-roots-list", "trigger-elicitation-request", "trigger-sampling-request"}
# Need client capabilities this module's client does not declare: elicitation.url (mcp_min
# declares it with url_elicitation=, see test_tasks_interop.py) and tasks.requests.* (the
# client running tasks for the server; mcp_min only follows the server's tasks).
UNREACHABLE_TOOLS = {"trigger-url-elicitation", "trigger-sampling-request-async",
                     "trigger-elicitation-request-async"}
STATIC_DOCS = ["architecture", "extension", "features", "how-it-works", "instructions", "startup", "structure"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HELLO_DATA_URI = "data:text/plain;base64," + base64.b64encode(b"hello, interop").decode()


class Recorder(object):
    """What the server sends on its own: notifications, log messages, server requests."""

    def __init__(self):
        self.lock = threading.Lock()
        self.notifications = []
        self.logs = []
        self.samplings = []
        self.elicitations = []

    def on_notification(self, method, params):
        with self.lock:
            self.notifications.append((method, params))

    def on_log(self, level, logger, data):
        with self.lock:
            self.logs.append((level, logger, data))

    def sampling(self, params):
        with self.lock:
            self.samplings.append(params)
        return {"role": "assistant", "model": "interop-fake-model", "stopReason": "endTurn",
                "content": {"type": "text", "text": "sampled by mcp_min"}}

    def elicitation(self, params):
        with self.lock:
            self.elicitations.append(params)
        return {"action": "accept", "content": {"name": "Ada Lovelace", "check": True,
                                                 "email": "ada@example.com", "integer": 7}}

    def methods(self):
        with self.lock:
            return [m for m, _ in self.notifications]


@pytest.fixture(scope="module", params=TRANSPORTS)
def client(request, tmp_path_factory):
    rec = Recorder()
    if request.param == "stdio":
        target = peers.everything_stdio_argv()
    elif request.param == "streamable-http":
        target = request.getfixturevalue("everything_http_url")
    else:
        target = request.getfixturevalue("everything_sse_url")
    root = tmp_path_factory.mktemp("root-%s" % request.param)
    c = mcp_min.Client(target, timeout=20, roots=[str(root)], sampling=rec.sampling,
                       elicitation=rec.elicitation, on_notification=rec.on_notification, on_log=rec.on_log)
    c.rec, c.root, c.kind = rec, root, request.param
    try:
        yield c
    finally:
        c.close()


def _texts(result):
    return [part["text"] for part in result["content"] if part["type"] == "text"]


def test_handshake(client):
    assert client.transport == client.kind
    assert client.protocol_version == "2025-11-25"  # auto mode falls back after server/discover fails
    assert client.server_info["name"] == "mcp-servers/everything"
    assert client.server_info["title"] == "Everything Reference Server"
    caps = client.server_capabilities
    assert caps["tools"] == {"listChanged": True}
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    assert "logging" in caps and "completions" in caps and "prompts" in caps
    assert client.instructions


def test_tools_registered_after_initialized(client):
    names = {t["name"] for t in client.list_tools(refresh=True)}
    assert names >= ALWAYS_TOOLS | CONDITIONAL_TOOLS
    assert not names & UNREACHABLE_TOOLS


def test_tools_list_changed_announced(client):
    # Over Streamable HTTP this needs the GET stream open before notifications/initialized
    # (regression test without the peer: test_mcp_min.py::test_http_get_stream_open_before_initialized).
    assert peers.wait_for(lambda: "notifications/tools/list_changed" in client.rec.methods(), 2.0)


def test_tool_annotations_and_schemas(client):
    tools = {t["name"]: t for t in client.list_tools()}
    assert tools["echo"]["annotations"] == {"readOnlyHint": True, "destructiveHint": False,
                                            "idempotentHint": True, "openWorldHint": False}
    assert tools["gzip-file-as-resource"]["annotations"]["openWorldHint"] is True
    assert tools["get-sum"]["inputSchema"]["required"] == ["a", "b"]
    assert tools["simulate-research-query"]["execution"] == {"taskSupport": "required"}
    assert "outputSchema" in tools["get-structured-content"]


def test_echo_and_sum(client):
    assert client.call("echo", message="h\u00e9llo") == "Echo: h\u00e9llo"
    assert client.call("get-sum", a=1.5, b=2) == "The sum of 1.5 and 2 is 3.5."


def test_structured_content_matches_output_schema(client):
    schema = {t["name"]: t for t in client.list_tools()}["get-structured-content"]["outputSchema"]
    raw = client.call_tool("get-structured-content", {"location": "Chicago"})
    structured = raw["structuredContent"]
    assert set(schema["required"]) <= set(structured)
    for key, prop in schema["properties"].items():
        expected = {"number": (int, float), "string": str, "integer": int}[prop["type"]]
        assert isinstance(structured[key], expected)
    assert json.loads(raw["content"][0]["text"]) == structured  # the text block mirrors it
    assert client.call("get-structured-content", location="Chicago") == structured


def test_annotated_messages(client):
    error = client.call_tool("get-annotated-message", {"messageType": "error"})
    assert error["content"][0]["annotations"] == {"audience": ["user", "assistant"], "priority": 1}
    debug = client.call_tool("get-annotated-message", {"messageType": "debug"})
    assert debug["content"][0]["annotations"]["audience"] == ["assistant"]
    success = client.call_tool("get-annotated-message", {"messageType": "success", "includeImage": True})
    kinds = [part["type"] for part in success["content"]]
    assert kinds == ["text", "image"]
    assert success["content"][1]["annotations"]["audience"] == ["user"]
    assert base64.b64decode(success["content"][1]["data"]).startswith(PNG_MAGIC)


def test_image_content(client):
    content = client.call("get-tiny-image")  # several blocks: call() gives the content list
    image = [part for part in content if part["type"] == "image"][0]
    assert image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(PNG_MAGIC)


def test_resource_links_can_be_read(client):
    result = client.call_tool("get-resource-links", {"count": 2})
    links = [part for part in result["content"] if part["type"] == "resource_link"]
    assert len(links) == 2
    for link in links:
        contents = client.read_resource(link["uri"])["contents"]
        assert contents[0]["uri"] == link["uri"]
        assert "text" in contents[0] or "blob" in contents[0]


@pytest.mark.parametrize("kind, field", [("Text", "text"), ("Blob", "blob")])
def test_embedded_resources(client, kind, field):
    result = client.call_tool("get-resource-reference", {"resourceType": kind, "resourceId": 4})
    embedded = [part["resource"] for part in result["content"] if part["type"] == "resource"]
    assert len(embedded) == 1
    assert embedded[0]["uri"] == "demo://resource/dynamic/%s/4" % kind.lower()
    value = embedded[0][field]
    text = base64.b64decode(value).decode() if field == "blob" else value
    assert text.startswith("Resource 4:")


def test_gzip_resource_and_resource_link(client):
    # Always pass `data`: the tool's default would fetch from the internet.
    embedded = client.call_tool("gzip-file-as-resource", {"name": "%s.gz" % client.kind, "data": HELLO_DATA_URI,
                                                          "outputType": "resource"})
    blob = embedded["content"][0]["resource"]["blob"]
    assert gzip.decompress(base64.b64decode(blob)) == b"hello, interop"
    link = client.call_tool("gzip-file-as-resource", {"name": "%s-link.gz" % client.kind, "data": HELLO_DATA_URI,
                                                      "outputType": "resourceLink"})["content"][0]
    assert link["type"] == "resource_link" and link["mimeType"] == "application/gzip"
    read = client.read_resource(link["uri"])["contents"][0]
    assert gzip.decompress(base64.b64decode(read["blob"])) == b"hello, interop"
    # The new session resource is announced.
    assert peers.wait_for(lambda: "notifications/resources/list_changed" in client.rec.methods(), 2.0)
    assert link["uri"] in [r["uri"] for r in client.list_resources(refresh=True)]


def test_roots(client):
    text = _texts(client.call_tool("get-roots-list"))[0]
    assert "1 total" in text
    assert client.root.as_uri() in text
    # The server asked roots/list on its own after initialized, and logged the answer.
    assert peers.wait_for(lambda: any("Roots updated: 1 root" in str(d) for _, _, d in client.rec.logs), 2.0)


def test_sampling(client):
    del client.rec.samplings[:]
    text = "\n".join(_texts(client.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 7})))
    assert "sampled by mcp_min" in text and "interop-fake-model" in text
    assert len(client.rec.samplings) == 1
    params = client.rec.samplings[0]
    assert params["maxTokens"] == 7
    assert params["messages"][0]["content"]["text"].endswith("say hi")


def test_form_elicitation_with_defaults(client):
    del client.rec.elicitations[:]
    text = "\n".join(_texts(client.call_tool("trigger-elicitation-request")))
    assert len(client.rec.elicitations) == 1
    schema = client.rec.elicitations[0]["requestedSchema"]
    assert schema["properties"]["firstLine"]["default"] == "It was a dark and stormy night."
    assert "User provided the requested information" in text
    raw = json.loads(text.split("Raw result:", 1)[1])
    assert raw["action"] == "accept"
    assert raw["content"]["name"] == "Ada Lovelace" and raw["content"]["integer"] == 7
    # Fields the user left out come from the schema defaults (SEP-1034), filled by mcp_min.
    assert raw["content"]["firstLine"] == "It was a dark and stormy night."


def test_long_running_operation_progress(client):
    seen = []
    result = client.call("trigger-long-running-operation", duration=0.3, steps=3,
                         progress=lambda *args: seen.append(args))
    assert "Long running operation completed" in result
    assert peers.wait_for(lambda: len(seen) == 3, 2.0)
    assert [s[:2] for s in seen] == [(1, 3), (2, 3), (3, 3)]


def test_cancel_long_running_operation(client):
    future = client.submit("trigger-long-running-operation", duration=10, steps=10)
    time.sleep(0.3)
    assert future.cancel() is True
    with pytest.raises(mcp_min.RequestCancelled):
        future.result()
    assert client.call("echo", message="after cancel") == "Echo: after cancel"


def test_task_required_tool_refused_without_a_task(client):
    # call(), start() and the task handle on this tool: test_tasks_interop.py.  A raw
    # tools/call without params.task is refused, as the tool's taskSupport "required" says.
    raw = client.request("tools/call", {"name": "simulate-research-query", "arguments": {"topic": "owls"}})
    assert raw["isError"] is True and "task augmentation" in _texts(raw)[0]


def test_resources(client):
    uris = [r["uri"] for r in client.list_resources(refresh=True)]
    assert uris[:7] == ["demo://resource/static/document/%s.md" % d for d in STATIC_DOCS]
    doc = client.read_resource(uris[2])["contents"][0]
    assert doc["uri"] == uris[2] and doc["text"]
    templates = {t["uriTemplate"]: t for t in client.list_resource_templates()}
    assert set(templates) == {"demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}"}
    text = client.read_resource("demo://resource/dynamic/text/3")["contents"][0]
    assert text["text"].startswith("Resource 3:")
    blob = client.read_resource("demo://resource/dynamic/blob/3")["contents"][0]
    assert base64.b64decode(blob["blob"]).startswith(b"Resource 3:")
    with pytest.raises(mcp_min.ResourceNotFound):
        client.read_resource("demo://resource/nowhere/1")


def test_subscribe_and_updates(client):
    uri = "demo://resource/dynamic/text/1"
    updates = []
    sub = client.listen(resource_uris=[uri], callback=lambda method, params: updates.append((method, params)))
    try:
        client.call("toggle-subscriber-updates")
        try:
            assert peers.wait_for(lambda: ("notifications/resources/updated", {"uri": uri}) in updates, 3.0)
        finally:
            client.call("toggle-subscriber-updates")
    finally:
        sub.close()  # sends resources/unsubscribe
    assert sub.ended.is_set()


def test_subscribe_unsubscribe_direct(client):
    client.subscribe("demo://resource/dynamic/text/2")
    client.unsubscribe("demo://resource/dynamic/text/2")


def test_prompts(client):
    prompts = {p["name"]: p for p in client.list_prompts()}
    assert set(prompts) == {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}
    assert [(a["name"], a["required"]) for a in prompts["args-prompt"]["arguments"]] == [("city", True),
                                                                                        ("state", False)]
    simple = client.get_prompt("simple-prompt")
    assert simple["messages"][0]["content"]["text"] == "This is a simple prompt without arguments."
    args = client.get_prompt("args-prompt", {"city": "Paris", "state": "TX"})
    assert args["messages"][0]["content"]["text"] == "What's weather in Paris, TX?"
    with_resource = client.get_prompt("resource-prompt", resourceType="Text", resourceId=2)
    embedded = with_resource["messages"][1]["content"]
    assert embedded["type"] == "resource"
    assert embedded["resource"]["uri"] == "demo://resource/dynamic/text/2"
    completable = client.get_prompt("completable-prompt", {"department": "Engineering", "name": "Alice"})
    assert "Alice" in completable["messages"][0]["content"]["text"]


def test_completions(client):
    assert client.complete("completable-prompt", ("department", "Eng")) == ["Engineering"]
    assert client.complete("completable-prompt", ("name", "A"), {"department": "Engineering"}) == ["Alice"]
    assert client.complete("demo://resource/dynamic/text/{resourceId}", ("resourceId", "1")) == ["1"]


def test_logging(client):
    client.set_logging_level("debug")
    before = len(client.rec.logs)
    client.call("toggle-simulated-logging")
    try:
        # The first message is sent right away; later ones every 5 s.
        assert peers.wait_for(lambda: any("level" in str(d).lower() and "message" in str(d).lower()
                                          for _, _, d in client.rec.logs[before:]), 3.0)
    finally:
        client.call("toggle-simulated-logging")
    level, _, data = [entry for entry in client.rec.logs[before:] if "message" in str(entry[2])][0]
    assert level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def test_ping(client):
    client.ping()


def test_env_is_filtered_over_stdio():
    # mcp_min passes only PATH, HOME, locale and friends, plus env=..., to a stdio server.
    os.environ["MCP_MIN_INTEROP_SECRET"] = "must-not-leak"
    try:
        with mcp_min.Client(peers.everything_stdio_argv(), timeout=20, env={"MCP_MIN_EXTRA": "yes"}) as c:
            env = json.loads(c.call("get-env"))
    finally:
        del os.environ["MCP_MIN_INTEROP_SECRET"]
    assert env["MCP_MIN_EXTRA"] == "yes"
    assert "PATH" in env
    assert "MCP_MIN_INTEROP_SECRET" not in env


def test_tool_argument_called_name_as_keyword(client):
    link = client.call("gzip-file-as-resource", name="kw.gz", data=HELLO_DATA_URI, outputType="resourceLink")
    assert link[0]["name"] == "kw.gz"


def test_prompt_argument_called_name_as_keyword(client):
    result = client.get_prompt("completable-prompt", department="Engineering", name="Alice")
    assert "Alice" in result["messages"][0]["content"]["text"]


def test_streamable_http_server_restarted_mid_session(tmp_path):
    # Issue 17: after server-everything restarted on the same port, every call failed with
    # HTTP 400 (it answers "No valid session ID provided" for the session it no longer knows).
    reason = peers.npm_missing()
    if reason:
        pytest.skip(reason)
    peer, url = peers.start_everything("streamableHttp", str(tmp_path / "first.log"))
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    second = None
    try:
        with mcp_min.Client(url, timeout=20) as c:
            assert c.protocol_version != "2026-07-28"
            assert c.call("echo", message="before") == "Echo: before"
            peer.stop()
            second, _ = peers.start_everything("streamableHttp", str(tmp_path / "second.log"), port)
            assert c.call("echo", message="after") == "Echo: after"
            assert c.call("echo", message="again") == "Echo: again"
        with open(str(tmp_path / "second.log"), "rb") as f:
            log = f.read().decode("utf-8", "replace")
        assert log.count("Session initialized with ID") == 1  # one new session, however it was found out
    finally:
        peer.stop()
        if second is not None:
            second.stop()
