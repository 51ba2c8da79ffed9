"""2026-07-28 caching: ttlMs on lists, resources/read and server/discover; cacheScope "private"
results never served under other credentials; input rounds never cached.  Servers:
tests/inproc_server.py over Client.over() and over Streamable HTTP."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from inproc_server import Server, serve_http, serve_in_thread  # noqa: E402
from mcp_min import Client, McpError  # noqa: E402


def sent(server, method):
    return [(h, m) for h, m in server.received if m.get("method") == method]


def connect(server, **options):
    reader, writer, _ = serve_in_thread(server)
    return Client.over(reader, writer, **options)


def test_resources_read_is_kept_for_its_ttl_and_refresh_bypasses():
    server = Server(ttl=60000, scope="public")
    with connect(server) as c:
        first = c.read_resource("file:///a")
        assert first["contents"][0]["text"] == "read 1"
        first["contents"] = "changed by the caller"  # a copy: the cache is not changed through it
        assert c.read_resource("file:///a")["contents"][0]["text"] == "read 1"
        assert c.read_resource("file:///b")["contents"][0]["text"] == "read 2"  # its own key
        assert c.read_resource("file:///a", refresh=True)["contents"][0]["text"] == "read 3"
        assert c.read_resource("file:///a")["contents"][0]["text"] == "read 3"
    assert len(sent(server, "resources/read")) == 3


def test_no_ttl_no_cache():
    server = Server(ttl=0)
    with connect(server) as c:
        assert [c.read_resource("file:///a")["contents"][0]["text"] for _ in range(2)] == ["read 1", "read 2"]
        c.list_tools()
        c.list_tools()
    assert len(sent(server, "tools/list")) == 2


def test_discover_is_the_one_from_connecting_while_fresh():
    server = Server(ttl=60000, scope="public")
    with connect(server) as c:
        assert c.discover()["supportedVersions"][0] == "2026-07-28"
        assert len(sent(server, "server/discover")) == 1  # the probe's answer served it
        c.discover(refresh=True)
        assert len(sent(server, "server/discover")) == 2
    with connect(Server(), protocol_version="2025-11-25") as c:
        with pytest.raises(McpError, match="does not exist in protocol 2025-11-25"):
            c.discover()


def test_what_input_rounds_made_is_never_cached():
    server = Server(ttl=60000, scope="public")
    names = iter(["Ada", "Grace"])
    with connect(server, elicitation=lambda p: {"action": "accept", "content": {"name": next(names)}}) as c:
        assert c.read_resource("ask:who")["contents"][0]["text"] == "Ada"
        assert c.read_resource("ask:who")["contents"][0]["text"] == "Grace"  # asked again
    assert len(sent(server, "resources/read")) == 4


class Token(object):
    """An auth plug-in whose token the test changes."""

    def __init__(self, token):
        self.token = token

    def headers(self, method, url):
        return {"Authorization": "Bearer " + self.token}


@pytest.mark.parametrize("scope", ["private", "public"])
def test_a_private_result_is_not_served_under_a_new_token(scope):
    server = Server(ttl=60000, scope=scope)
    url, stop = serve_http(server)
    auth = Token("first")
    try:
        with Client(url, auth=auth) as c:
            c.list_tools()
            c.read_resource("file:///a")
            c.list_tools()
            assert c.read_resource("file:///a")["contents"][0]["text"] == "read 1"
            assert len(sent(server, "tools/list")) == 1
            auth.token = "second"  # (a refresh, a step-up...): the next request carries it
            assert c.call("whoami") == "Bearer second"
            c.list_tools()
            again = c.read_resource("file:///a")["contents"][0]["text"]
    finally:
        stop()
    lists = sent(server, "tools/list")
    if scope == "private":
        assert len(lists) == 2 and lists[1][0]["Authorization"] == "Bearer second"
        assert again == "read 2"
    else:  # public: shared across authorization contexts
        assert len(lists) == 1 and again == "read 1"


def test_a_change_notification_drops_what_it_names():
    """resources/updated drops that resource's cached reads (and those of what it is under);
    tools/list_changed drops the tool list.  Both arrive before the answer that follows them."""
    server = Server(ttl=60000, scope="public")
    with connect(server) as c:
        assert c.read_resource("file:///a")["contents"][0]["text"] == "read 1"
        assert c.read_resource("file:///b")["contents"][0]["text"] == "read 2"
        c.list_tools()
        sub = c.listen(resource_uris=["file:///a"])
        assert c.call("touch", uri="file:///a/inner") == "touched"
        assert c.read_resource("file:///a")["contents"][0]["text"] == "read 3"  # dropped: refetched
        assert c.read_resource("file:///b")["contents"][0]["text"] == "read 2"  # untouched: cached
        c.list_tools()
        sub.close()
    assert len(sent(server, "tools/list")) == 2
