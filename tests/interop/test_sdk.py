"""mcp_min against the official Python SDK (mcp 2.3.0), over stdio and Streamable HTTP.

The SDK server (sdk_server.py) speaks 2026-07-28 and the handshake era.  Every test
runs four ways: {stdio, http} x {auto -> 2026-07-28, pinned 2025-11-25 -> handshake}.
"""

import threading
import time

import pytest

import peers
import mcp_min

pytestmark = pytest.mark.skipif(bool(peers.venv_missing()), reason=peers.venv_missing() or "")

MODES = [("stdio", "auto"), ("stdio", "2025-11-25"), ("http", "auto"), ("http", "2025-11-25")]
EXPECTED_VERSION = {"auto": "2026-07-28", "2025-11-25": "2025-11-25"}


def _elicit(params):
    _elicit.seen.append(params)
    return {"action": "accept", "content": {"name": "Ada"}}


_elicit.seen = []


@pytest.fixture(scope="module", params=MODES, ids=["-".join(m) for m in MODES])
def client(request):
    transport, version = request.param
    if transport == "stdio":
        target = peers.sdk_stdio_argv()
    else:
        target = request.getfixturevalue("sdk_http_url")
    with mcp_min.Client(target, protocol_version=version, timeout=20, elicitation=_elicit) as c:
        c.mode = request.param
        yield c


def test_negotiates_the_expected_version(client):
    transport, version = client.mode
    assert client.protocol_version == EXPECTED_VERSION[version]
    assert client.transport == ("stdio" if transport == "stdio" else "streamable-http")
    assert client.server_info["name"] == "mcp-min-interop-sdk-server"
    assert client.server_info["version"] == "1.0.0"
    assert client.instructions == "Interop peer for mcp_min tests."
    assert set(client.server_capabilities) >= {"tools", "resources", "prompts"}


def test_list_and_call_tools(client):
    tools = {t["name"]: t for t in client.list_tools(refresh=True)}
    assert set(tools) == {"add", "echo", "slow_count", "ask_name"}
    assert tools["add"]["inputSchema"]["required"] == ["a", "b"]
    assert client.call("add", a=2, b=3) == 5  # structuredContent {"result": 5}, unwrapped
    raw = client.call_tool("add", {"a": 20, "b": 22})
    assert raw["structuredContent"] == {"result": 42}
    assert raw["content"] == [{"type": "text", "text": "42"}]
    assert client.call("echo", {"text": "h\u00e9llo \u2603"}) == "h\u00e9llo \u2603"


def test_tool_errors(client):
    with pytest.raises(mcp_min.ToolError) as info:
        client.call("add", a="not a number", b=1)
    assert info.value.result["isError"] is True
    with pytest.raises(mcp_min.ToolError, match="nope"):
        client.call("nope")


def test_progress_notifications(client):
    seen = []
    assert client.call("slow_count", steps=3, delay=0.01, progress=lambda *a: seen.append(a)) == "counted to 3"
    # Progress callbacks run on mcp_min's event thread; give the last one a moment.
    assert peers.wait_for(lambda: len(seen) == 3, 2.0)
    assert seen == [(1, 3, "step 1/3"), (2, 3, "step 2/3"), (3, 3, "step 3/3")]


def test_elicitation(client):
    # 2025-11-25: the server sends elicitation/create mid-call (on the POST's stream over
    # HTTP); 2026-07-28: the call answers input_required and mcp_min retries it.
    del _elicit.seen[:]
    assert client.call("ask_name") == "Hello, Ada!"
    assert len(_elicit.seen) == 1
    assert _elicit.seen[0]["message"] == "What is your name?"
    assert _elicit.seen[0]["requestedSchema"]["properties"]["name"]["type"] == "string"


def test_resources_and_templates(client):
    resources = client.list_resources()
    assert [r["uri"] for r in resources] == ["interop://greeting"]
    templates = client.list_resource_templates()
    assert [t["uriTemplate"] for t in templates] == ["interop://square/{n}"]
    greeting = client.read_resource("interop://greeting")["contents"]
    assert greeting == [{"uri": "interop://greeting", "mimeType": "text/plain", "text": "hello from sdk_server"}]
    assert client.read_resource("interop://square/12")["contents"][0]["text"] == "144"
    with pytest.raises(mcp_min.ResourceNotFound):
        client.read_resource("interop://missing")


def test_prompts(client):
    prompts = client.list_prompts()
    assert [p["name"] for p in prompts] == ["greet"]
    assert prompts[0]["arguments"][0]["name"] == "name"
    result = client.get_prompt("greet", {"name": "Bob"})
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Please greet Bob warmly."}}]
    with pytest.raises(mcp_min.RequestError):
        client.get_prompt("no-such-prompt")


def test_ping(client):
    client.ping()


def test_cancel_then_keep_going(client):
    future = client.submit("slow_count", steps=100, delay=0.05)
    time.sleep(0.2)
    assert future.cancel() is True
    with pytest.raises(mcp_min.RequestCancelled):
        future.result()
    assert client.call("add", a=1, b=1) == 2


def test_request_timeout_keeps_client_usable(client):
    with pytest.raises(mcp_min.RequestTimeout):
        client.call("slow_count", steps=50, delay=0.05, timeout=0.3)
    assert client.call("echo", text="still here") == "still here"


def test_concurrent_calls(client):
    results = {}

    def work(i):
        results[i] = client.call("add", a=i, b=i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert results == {i: 2 * i for i in range(8)}


def test_listen(client):
    # 2026-07-28: one subscriptions/listen request the server acknowledges;
    # handshake era: a local subscription to the notifications the server sends anyway.
    sub = client.listen(callback=lambda method, params: None)
    try:
        if client.protocol_version == "2026-07-28":
            assert peers.wait_for(lambda: sub.acknowledged is not None, 5.0)
            assert sub.acknowledged == {"toolsListChanged": True, "promptsListChanged": True,
                                        "resourcesListChanged": True}
        assert not sub.ended.is_set()
    finally:
        sub.close()
    assert sub.ended.is_set()
    assert client.call("add", a=3, b=4) == 7


def test_progress_delivered_before_call_returns():
    with mcp_min.Client(peers.sdk_stdio_argv(), timeout=20) as client:
        seen = []

        def slow_callback(*args):
            time.sleep(0.2)  # a UI update, say
            seen.append(args)

        client.call("slow_count", steps=3, delay=0.01, progress=slow_callback)
        assert len(seen) == 3


@pytest.mark.parametrize("version", ["2025-11-25", "auto"])
def test_http_server_restart(tmp_path, version):
    # 2025-11-25: the restarted server answers 404 to the old session id, and mcp_min
    # initializes again and repeats the call.  2026-07-28 has no session to lose.
    port = peers.free_port()
    argv = [peers.VENV_PYTHON, peers.SDK_SERVER, "http", str(port)]
    peer = peers.Peer(argv, log_path=str(tmp_path / "first.log"))
    try:
        peer.wait_listening(port)
        with mcp_min.Client("http://127.0.0.1:%d/mcp" % port, protocol_version=version, timeout=20) as c:
            assert c.call("add", a=1, b=2) == 3
            peer.stop()
            peer = peers.Peer(argv, log_path=str(tmp_path / "second.log"))
            peer.wait_listening(port)
            assert c.call("add", a=2, b=2) == 4
            assert c.protocol_version == EXPECTED_VERSION[version]
    finally:
        peer.stop()
