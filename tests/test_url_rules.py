"""The one set of URL rules the HTTP engine and OAuth share: origin, loopback host, "https or
loopback http", credential header names and OAuth secret parameters.  Pure, in memory.

Run:  python -m pytest -q tests/test_url_rules.py
"""
import logging
import os
import socket
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MCP_MIN_DIR") or os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import mcp_min  # noqa: E402


def _inet_aton_takes(text):
    try:
        socket.inet_aton(text)
        return True
    except OSError:
        return False


SHORTHAND = _inet_aton_takes("127.1")  # glibc, BSD, macOS: yes; Windows (inet_pton): no

LOOPBACK = [
    ("localhost", True),
    ("127.0.0.1", True),
    ("127.255.255.254", True),
    ("127.1", SHORTHAND),  # what the socket layer connects to 127.0.0.1, where it parses it so
    ("0x7f.0.0.1", SHORTHAND),
    ("2130706433", SHORTHAND),
    ("::1", True),
    ("0:0:0:0:0:0:0:1", True),
    ("::ffff:127.0.0.1", True),
    ("foo.localhost", False),  # resolved by the system resolver, which may ask DNS
    ("localhost.example.com", False),
    ("127.0.0.1.example.com", False),
    ("128.0.0.1", False),
    ("10.0.0.1", False),
    ("0.0.0.0", False),
    ("::", False),
    ("::2", False),
    ("example.com", False),
    ("dead.beef", False),
    ("", False),
]


@pytest.mark.parametrize("host,loopback", LOOPBACK)
@pytest.mark.pure
def test_loopback_hosts(host, loopback):
    assert mcp_min._is_loopback(host) is loopback


SECURE = [
    ("https://example.com/mcp", True),
    ("HTTPS://EXAMPLE.COM/mcp", True),
    ("http://localhost:8000/mcp", True),
    ("http://127.0.0.1/mcp", True),
    ("http://127.1/", SHORTHAND),
    ("http://[::1]:9000/", True),
    ("http://foo.localhost/", False),
    ("http://example.com/mcp", False),
    ("http://localhost.evil.example/", False),
    ("http://user:pw@example.com/", False),
    ("https://", False),  # no host
    ("http://127.0.0.1:notaport/", False),  # malformed
    ("ftp://127.0.0.1/", False),
    ("file:///etc/passwd", False),
    ("javascript:alert(1)", False),
]


@pytest.mark.parametrize("url,secure", SECURE)
@pytest.mark.pure
def test_https_or_loopback_http_is_one_rule_for_the_engine_and_oauth(url, secure):
    assert mcp_min._secure_url(url) is secure
    # The engine's check and OAuth's check say the same, each with its own error type.
    for check, error in ((mcp_min._check_secure, mcp_min.McpError), (mcp_min._check_url, mcp_min.AuthError)):
        if secure:
            check(url, "fetch")
        else:
            with pytest.raises(error, match="refusing to fetch"):
                check(url, "fetch")


ORIGINS = [
    ("https://Example.COM/a?b#c", "https://example.com"),
    ("https://example.com:443/", "https://example.com"),
    ("https://example.com:8443/", "https://example.com:8443"),
    ("http://example.com:80/x", "http://example.com"),
    ("http://example.com:443/", "http://example.com:443"),
    ("http://user:secret@example.com/", "http://example.com"),
    ("http://[::1]:8000/mcp", "http://[::1]:8000"),
    ("http://example.com:notaport/", ""),
    ("not a url", ""),
]


@pytest.mark.parametrize("url,origin", ORIGINS)
@pytest.mark.pure
def test_origins(url, origin):
    assert mcp_min._origin(url) == origin


@pytest.mark.parametrize("a,b,same", [
    ("https://a.example/x", "https://a.example:443/y", True),
    ("https://a.example/", "http://a.example/", False),
    ("https://a.example/", "https://b.example/", False),
    ("https://a.example/", "https://a.example:8443/", False),
    ("http://h:bad/", "http://h:alsobad/", True),  # both malformed: neither matches a real origin
])
@pytest.mark.pure
def test_same_origin(a, b, same):
    assert (mcp_min._origin(a) == mcp_min._origin(b)) is same


CREDENTIAL_HEADERS = [
    ("Authorization", True), ("authorization", True), ("Proxy-Authorization", True), ("Cookie", True),
    ("DPoP", True), ("Mcp-Session-Id", True), ("X-Api-Key", True), ("Api-Key", True),
    ("X-Auth-Token", True), ("X-Client-Secret", True), ("X-Password", True),
    ("Accept", False), ("Content-Type", False), ("User-Agent", False), ("MCP-Protocol-Version", False),
    ("Mcp-Method", False), ("Mcp-Name", False), ("Last-Event-ID", False), ("Keep-Alive", False),
]


@pytest.mark.parametrize("name,secret", CREDENTIAL_HEADERS)
@pytest.mark.pure
def test_credential_headers(name, secret):
    assert mcp_min._is_credential_header(name) is secret
    assert (mcp_min._redact({name: "v"})[name] == "<redacted>") is secret


def test_oauth_secret_parameters_are_redacted_in_the_trace(caplog):
    """Every OAuth parameter that is a secret shows as <redacted> in the wire trace."""
    oauth = mcp_min.OAuth(client_id="c", client_secret="s3cret-value", timeout=1)
    params = {k: "value-of-" + k for k in mcp_min._SECRET_PARAMS}
    params["grant_type"] = "authorization_code"
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    with pytest.raises(mcp_min.AuthError):  # nothing listens there
        oauth._post_form("http://127.0.0.1:9/token", params, {}, "token request")
    trace = "\n".join(r.getMessage() for r in caplog.records)
    assert "grant_type=authorization_code" in trace
    for name in mcp_min._SECRET_PARAMS:
        assert "value-of-" + name not in trace
