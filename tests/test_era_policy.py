"""The era probe is never fooled by an outage (issue 17, item 4): what ``server/discover``
meets is an era verdict only when it is what an older server does with an unknown method
(see "Era policy" in mcp_min's docstring).  Authorization failures, and over HTTP
connection failures and 5xx answers, are raised as they are, with no ``initialize`` after.
"""
import json
import logging
import os
import socket
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import mcp_min  # noqa: E402
from mcp_min import AuthError, AuthRequired, Client, ConnectionClosed, HttpError, OAuth  # noqa: E402
from test_oauth import OAuthWorld  # noqa: E402
from testsupport import HttpTestServer  # noqa: E402

FAKE = os.path.join(HERE, "fake_server.py")


class ProbeServer(object):
    """A handshake-era Streamable HTTP server whose answer to server/discover is ``discover``:
    an HTTP status (answered with ``body``, a short non-JSON one by default, and ``content_type``),
    or "reset" (the connection is reset).  A ``body`` containing ID is given the request's id."""

    def __init__(self, discover, body=b'{"error":"try again later"}', content_type="application/json"):
        self.discover, self.body, self.content_type = discover, body, content_type
        self.methods = []
        self.httpd = HttpTestServer(post=self.post)  # GET: 405, DELETE: 200
        self.url = self.httpd.url

    def post(self, h, msg):
        method = msg.get("method")
        self.methods.append(method)
        if method == "server/discover":
            if self.discover == "reset":
                return h.reset()
            return h.reply(self.discover, self.body.replace(b"ID", json.dumps(msg["id"]).encode()),
                           content_type=self.content_type)
        if "id" not in msg:
            return h.reply(202)
        result = {}
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {},
                      "serverInfo": {"name": "probe", "version": "1"}}
        h.reply(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode(),
                [("Mcp-Session-Id", "s1")] if method == "initialize" else ())

    def close(self):
        self.httpd.stop()


@pytest.fixture
def probe_server():
    made = []

    def make(discover, **answer):
        made.append(ProbeServer(discover, **answer))
        return made[-1]
    yield make
    for s in made:
        s.close()


def test_auth_error_during_discover_runs_the_login_once():
    # The review's reproduction: a 401 on discover, an authorize= that raises AuthError;
    # authorize ran twice (the user was sent to log in again for initialize).
    world = OAuthWorld()
    calls = []

    def authorize(url):
        calls.append(url)
        raise AuthError("the user closed the login page")
    try:
        with pytest.raises(AuthError):
            Client(world.url, auth=OAuth(authorize=authorize))
        assert len(calls) == 1
        assert len([p for _, p, _ in world.log if p == "/.well-known/oauth-protected-resource/mcp"]) == 1
    finally:
        world.close()


def test_auth_required_during_discover_is_raised_without_initialize(probe_server):
    server = probe_server(401)
    with pytest.raises(AuthRequired):
        Client(server.url)
    assert server.methods == ["server/discover"]


def test_forbidden_during_discover_is_no_era_verdict(probe_server):
    server = probe_server(403)
    with pytest.raises(HttpError) as info:
        Client(server.url)
    assert info.value.status == 403 and server.methods == ["server/discover"]


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_during_discover_is_no_era_verdict(probe_server, status):
    server = probe_server(status)
    with pytest.raises(HttpError) as info:
        Client(server.url)
    assert info.value.status == status and "try again later" in info.value.body
    assert server.methods == ["server/discover"]


@pytest.mark.parametrize("status", [400, 404, 405])
def test_4xx_during_discover_is_a_handshake_era_server(probe_server, status):
    server = probe_server(status)
    with Client(server.url) as c:
        assert c.protocol_version == "2025-11-25"
    assert server.methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


# A server that spoke JSON-RPC is no outage, whatever the status: @cyanheads/git-mcp-server 2.15.3
# answers an unknown method with 500 and an error whose id is null.
JSONRPC_ERROR = b'{"jsonrpc":"2.0","error":{"code":-32603,"message":"Error in httpTransport: "},"id":null}'


@pytest.mark.parametrize("status, body", [
    (500, JSONRPC_ERROR),                                                         # git-mcp-server
    (500, b'{"jsonrpc":"2.0","id":ID,"error":{"code":-32601,"message":"Method not found"}}'),
    (503, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"not initialized"}}'),
    (400, JSONRPC_ERROR),
    (404, b'{"jsonrpc":"2.0","id":ID,"error":{"code":-32601,"message":"Method not found"}}'),
])
def test_a_jsonrpc_error_in_any_status_is_a_handshake_era_server(probe_server, status, body):
    server = probe_server(status, body=body)
    with Client(server.url) as c:
        assert c.protocol_version == "2025-11-25"
    assert server.methods[:2] == ["server/discover", "initialize"]


@pytest.mark.parametrize("status, body, content_type", [
    (200, b"", "application/json"),                     # an empty answer to a request
    (202, b"", "application/json"),                     # taken for a notification
    (200, b"<html>hello</html>", "text/html"),          # a web page where the server should be
    (200, b"not json", "application/json"),
])
def test_a_2xx_that_is_no_mcp_answer_is_a_handshake_era_server(probe_server, status, body, content_type):
    server = probe_server(status, body=body, content_type=content_type)
    with Client(server.url, timeout=10) as c:
        assert c.protocol_version == "2025-11-25"
    assert server.methods[:2] == ["server/discover", "initialize"]


@pytest.mark.parametrize("status, body, content_type", [
    (502, b"<html><body>502 Bad Gateway</body></html>", "text/html"),   # a proxy's page
    (503, b"", "application/json"),                                      # an empty outage
    (500, b'{"detail":"Internal Server Error"}', "application/json"),   # JSON, not JSON-RPC
    (500, b'{"jsonrpc":"2.0","id":null,"error":"a string"}', "application/json"),
])
def test_a_5xx_without_a_jsonrpc_error_is_an_outage(probe_server, status, body, content_type):
    server = probe_server(status, body=body, content_type=content_type)
    with pytest.raises(HttpError) as info:
        Client(server.url)
    assert info.value.status == status and server.methods == ["server/discover"]


def test_connection_reset_during_discover_is_no_era_verdict(probe_server):
    server = probe_server("reset")
    with pytest.raises(ConnectionClosed):
        Client(server.url)
    assert server.methods == ["server/discover"]


def test_connection_refused_is_no_era_verdict(caplog):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    with pytest.raises(ConnectionClosed) as info:
        Client("http://127.0.0.1:%d/mcp" % port, timeout=5)
    assert "refused" in str(info.value)
    sent = [r.getMessage() for r in caplog.records if r.getMessage().startswith("->")]
    assert any("server/discover" in m for m in sent)
    assert not any("initialize" in m for m in sent)  # the outage was not taken for an old server


def test_stdio_server_dying_on_discover_is_restarted_and_initialized(tmp_path):
    log = tmp_path / "lines.log"
    cfg = {"discover": "die", "log": str(log)}
    with Client([sys.executable, FAKE, json.dumps(cfg)]) as c:
        assert c.protocol_version in mcp_min.LEGACY_VERSIONS
        assert c.call("echo", n=1) == {"n": 1}
    methods = [json.loads(line).get("method") for line in log.read_text().splitlines() if line.strip()]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


def test_era_verdict_table():
    """Every row of _era_verdict's table (the module docstring's "Era policy")."""
    verdict = mcp_min._era_verdict
    url = "http://127.0.0.1:1/mcp"

    def rpc(code, data=None):
        return mcp_min.RequestError(code, "m", data)
    rows = [
        (rpc(-32022, {"supported": ["2025-11-25"]}), True, "versions"),
        (rpc(-32022), True, "2026"), (rpc(-32020), False, "2026"), (rpc(-32021), True, "2026"),
        (rpc(-32601), False, "handshake"), (rpc(-32602), True, "handshake"), (rpc(-32603), True, "handshake"),
        (HttpError(url, 401), True, None), (HttpError(url, 403), True, None),
        (AuthError("no"), True, None), (AuthRequired(url, 401, "", {}), True, None),
        (HttpError(url, 500, "<html>"), True, None), (HttpError(url, 502, ""), True, None),
        (HttpError(url, 500, JSONRPC_ERROR.decode()), True, "handshake"),
        (HttpError(url, 400), True, "handshake"), (HttpError(url, 404), True, "handshake"),
        (HttpError(url, 405), True, "handshake"), (HttpError(url, 200, "", "not JSON"), True, "handshake"),
        (mcp_min.RequestTimeout("silent"), True, "handshake"), (mcp_min.RequestTimeout("silent"), False, "handshake"),
        (ConnectionClosed("died"), False, "handshake"), (ConnectionClosed("refused"), True, None),
        (mcp_min.McpError("malformed"), True, "handshake"),
    ]
    assert [(e, verdict(e, over_http)) for e, over_http, _ in rows] == [(e, v) for e, _, v in rows]
