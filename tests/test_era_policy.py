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
    an HTTP status (answered with a short body), or "reset" (the connection is reset)."""

    def __init__(self, discover):
        self.discover = discover
        self.methods = []
        self.httpd = HttpTestServer(post=self.post)  # GET: 405, DELETE: 200
        self.url = self.httpd.url

    def post(self, h, msg):
        method = msg.get("method")
        self.methods.append(method)
        if method == "server/discover":
            if self.discover == "reset":
                return h.reset()
            return h.reply(self.discover, b'{"error":"try again later"}')
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

    def make(discover):
        made.append(ProbeServer(discover))
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
    verdict = mcp_min._era_verdict
    url = "http://127.0.0.1:1/mcp"
    assert verdict(mcp_min.RequestTimeout("silent"), True) and verdict(mcp_min.RequestTimeout("silent"), False)
    assert verdict(ConnectionClosed("died"), False) and not verdict(ConnectionClosed("refused"), True)
    assert verdict(HttpError(url, 404), True) and verdict(HttpError(url, 405), True)
    assert not verdict(HttpError(url, 403), True) and not verdict(HttpError(url, 500), True)
    assert not verdict(AuthError("no"), True) and not verdict(AuthRequired(url, 401, "", {}), True)
