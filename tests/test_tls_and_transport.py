"""TLS settings (verify=, cert=, ssl_context=, SSL_CERT_FILE, the CLI's --cacert/--cert/--insecure)
and the transport choice (transport=, --transport), against purpose-built servers in this process.

The certificates are made here by the ``openssl`` command: a CA, a server certificate for
127.0.0.1 signed by it, a self-signed one, and a client certificate for mutual TLS.

Run:  python -m pytest -q tests/test_tls_and_transport.py
"""
import json
import logging
import os
import shutil
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MCP_MIN_DIR") or os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import mcp_min  # noqa: E402
from mcp_min import Client, ConnectionClosed, HttpError  # noqa: E402
from testsupport import NO_SITE, HttpTestServer, cli_argv  # noqa: E402

PY = sys.executable


class McpHandler(BaseHTTPRequestHandler):
    """A handshake-era Streamable HTTP server in a few lines: JSON answers, no GET stream.
    ``server.name`` is its serverInfo name; ``server.seen`` records (method, path)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.server.seen.append(("GET", self.path))
        self.reply(405)

    def do_DELETE(self):
        self.reply(200)

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.server.seen.append(("POST", self.path))
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            return self.reply(202)
        if method == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": self.server.name, "version": "1"}}
        elif method == "tools/call":
            result = {"content": [], "structuredContent": msg["params"]["arguments"]}
        else:
            return self.reply(200, json.dumps({"jsonrpc": "2.0", "id": mid, "error": {
                "code": -32601, "message": "no " + method}}).encode())
        self.reply(200, json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}).encode())


def serve(handler, name="tls-server", context=None):
    server = HttpTestServer(handler=handler, tls=context)
    server.name, server.seen = name, []
    return server


# -- certificates ---------------------------------------------------------------------------------

def openssl(*args, cwd):
    subprocess.run(("openssl",) + args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


# EC P-256 keys: TLS verification is checked the same way, and openssl makes one in about a
# millisecond where an RSA-2048 key takes tens to hundreds (four of them a run, at random).
NEW_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed: no certificates to test with")
    d = str(tmp_path_factory.mktemp("pki"))
    # Extensions as strict verification (Python 3.13's default VERIFY_X509_STRICT) wants them.
    with open(os.path.join(d, "ca.cnf"), "w") as f:
        f.write("[req]\ndistinguished_name=dn\nx509_extensions=ca\n[dn]\n[ca]\n"
                "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
                "subjectKeyIdentifier=hash\n")
    for name, usage in (("server", "serverAuth"), ("client", "clientAuth")):
        with open(os.path.join(d, name + ".cnf"), "w") as f:
            f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                    "extendedKeyUsage=%s\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
                    "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n" % usage)
    openssl("req", "-x509", *NEW_KEY, "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=mcp_min test CA", "-config", "ca.cnf", cwd=d)
    for name in ("server", "client"):
        openssl("req", *NEW_KEY, "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", "/CN=127.0.0.1", cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".pem", "-days", "2", "-extfile", name + ".cnf", cwd=d)
    openssl("req", "-x509", *NEW_KEY, "-nodes", "-keyout", "self.key", "-out", "self.pem", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", cwd=d)
    with open(os.path.join(d, "client-both.pem"), "w") as f:  # certificate and key in one file
        f.write(open(os.path.join(d, "client.pem")).read() + open(os.path.join(d, "client.key")).read())
    return lambda name: os.path.join(d, name)


def server_context(pki, cert="server", client_ca=None):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki(cert + ".pem"), pki(cert + ".key"))
    if client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(pki(client_ca))
    return context


@pytest.fixture
def https(pki):
    made = []

    def make(**kwargs):
        made.append(serve(McpHandler, context=server_context(pki, **kwargs)))
        return made[-1].url
    yield make
    for server in made:
        server.stop()


# -- TLS --------------------------------------------------------------------------------------------

def test_verify_with_the_servers_ca(https, pki):
    with Client(https(), verify=pki("ca.pem"), timeout=10) as c:
        assert c.call("echo", x=1) == {"x": 1}


def test_verify_with_a_ca_directory(https, pki, tmp_path):
    with Client(https(), verify=ca_directory(pki, tmp_path / "cadir"), timeout=10) as c:
        assert c.call("echo", x=2) == {"x": 2}


@pytest.mark.parametrize("cert", ["self", "server"])  # self-signed; signed by a CA the system does not know
def test_the_default_refuses_an_unknown_certificate_with_a_clear_error(https, cert):
    with pytest.raises(ConnectionClosed, match="certificate of .* is not trusted.*verify="):
        Client(https(cert=cert), timeout=10)


def test_verify_false_connects_and_warns_once(https, caplog):
    caplog.set_level(logging.WARNING, logger="mcp_min")
    with Client(https(cert="self"), verify=False, timeout=10) as c:
        assert c.call("echo", x=3) == {"x": 3}
        assert c.call("echo", x=4) == {"x": 4}
    warned = [r for r in caplog.records if "not verified" in r.getMessage()]
    assert len(warned) == 1


def test_a_ready_ssl_context_is_used_as_it_is(https, pki):
    context = ssl.create_default_context(cafile=pki("ca.pem"))
    with Client(https(), ssl_context=context, timeout=10) as c:
        assert c.call("echo", x=5) == {"x": 5}
    with pytest.raises(ValueError, match="ssl_context"):
        Client(https(), ssl_context=context, verify=False)


def ca_directory(pki, where):
    subject_hash = subprocess.run(["openssl", "x509", "-hash", "-noout", "-in", pki("ca.pem")],
                                  stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    where.mkdir()
    shutil.copy(pki("ca.pem"), str(where / (subject_hash + ".0")))
    return str(where)


@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "SSL_CERT_DIR"])
def test_ssl_cert_file_and_dir_are_honoured_by_the_default(https, pki, tmp_path, variable):
    """OpenSSL reads SSL_CERT_FILE / SSL_CERT_DIR when ssl.create_default_context() loads the default paths."""
    code = "import sys, mcp_min; c = mcp_min.Client(sys.argv[1], timeout=10); print(c.call('echo', x=6)); c.close()"
    value = pki("ca.pem") if variable == "SSL_CERT_FILE" else ca_directory(pki, tmp_path / "cadir")
    env = dict(os.environ, PYTHONPATH=ROOT, **{variable: value})
    out = subprocess.run([PY, *NO_SITE, "-c", code, https()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == b"{'x': 6}", out.stderr.decode()[-2000:]


@pytest.mark.parametrize("cert", ["pair", "one-file"])
def test_mutual_tls_with_a_client_certificate(https, pki, cert):
    given = (pki("client.pem"), pki("client.key")) if cert == "pair" else pki("client-both.pem")
    with Client(https(client_ca="ca.pem"), verify=pki("ca.pem"), cert=given, timeout=10) as c:
        assert c.call("echo", x=7) == {"x": 7}


def test_mutual_tls_without_a_client_certificate_is_a_clear_error(https, pki):
    with pytest.raises(ConnectionClosed) as info:
        Client(https(client_ca="ca.pem"), verify=pki("ca.pem"), timeout=10)
    assert "client certificate" in str(info.value) and "--cert" in str(info.value), str(info.value)


@pytest.mark.parametrize("kwargs,match", [
    ({"verify": "/nonexistent/ca.pem"}, "TLS settings"),
    ({"verify": 1}, "verify must be"),
    ({"cert": ("only-one",)}, "cert must be"),
    ({"ssl_context": "not a context"}, "ssl_context must be"),
])
def test_bad_tls_settings_are_refused_at_once(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Client("https://127.0.0.1:9/mcp", **kwargs)


def client_sockets_to(ports):
    """Open sockets of this process connected to one of ``ports`` from the client side."""
    import gc
    import socket
    gc.collect()
    found = []
    for obj in gc.get_objects():
        try:
            if isinstance(obj, socket.socket) and obj.fileno() != -1 and obj.getpeername()[1] in ports \
                    and obj.getsockname()[1] not in ports:
                found.append(obj)
        except (OSError, IndexError, TypeError):
            pass
    return found


def test_oauth_traffic_uses_the_clients_tls_settings(pki):
    """The OAuth object's own requests (metadata, token) go through the client's context: with the
    test CA given to the client only, OAuth reaches an https authorization server signed by it."""
    context = server_context(pki)
    seen = []

    class AuthServer(McpHandler):
        def do_GET(self):
            seen.append(self.path)
            base = "https://127.0.0.1:%d" % self.server.server_address[1]
            if self.path.startswith("/.well-known/oauth-authorization-server"):
                return self.reply(200, json.dumps({"issuer": base, "token_endpoint": base + "/token",
                                                   "grant_types_supported": ["client_credentials"]}).encode())
            self.reply(404)

        def do_POST(self):
            seen.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.reply(200, json.dumps({"access_token": "t0k3n-value", "token_type": "Bearer"}).encode())

    auth_server = serve(AuthServer, context=context)
    issuer = "https://127.0.0.1:%d" % auth_server.server_address[1]

    class Protected(McpHandler):
        def do_POST(self):
            if self.headers.get("Authorization") != "Bearer t0k3n-value":
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Bearer resource_metadata="%s/.well-known/'
                                 'oauth-protected-resource"' % self.base())
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            McpHandler.do_POST(self)

        def do_GET(self):
            if self.path.startswith("/.well-known/oauth-protected-resource"):
                return self.reply(200, json.dumps({"resource": self.base() + "/mcp",
                                                   "authorization_servers": [issuer]}).encode())
            self.reply(405)

        def base(self):
            return "https://127.0.0.1:%d" % self.server.server_address[1]

    mcp_server = serve(Protected, context=server_context(pki))
    try:
        url = "https://127.0.0.1:%d/mcp" % mcp_server.server_address[1]
        auth = mcp_min.OAuth(client_id="c", client_secret="s", grant_type="client_credentials", timeout=10)
        with Client(url, verify=pki("ca.pem"), auth=auth, timeout=10) as c:
            assert c.call("echo", x=8) == {"x": 8}
        assert "/token" in seen
        # Nothing is left open once close() returns: OAuth's own connections included (they are not pooled).
        ports = {auth_server.server_address[1], mcp_server.server_address[1]}
        assert client_sockets_to(ports) == []
    finally:
        for server in (auth_server, mcp_server):
            server.stop()


def test_cli_tls_options(https, pki):
    url = https()
    env = dict(os.environ, PYTHONPATH=ROOT)

    def cli(*args):
        return subprocess.run(cli_argv(*NO_SITE) + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              timeout=60)
    ok = cli("--url", url, "--cacert", pki("ca.pem"), "call", "echo", "x=1")
    assert ok.returncode == 0 and b'"x": 1' in ok.stdout, ok.stderr.decode()
    refused = cli("--url", url, "call", "echo", "x=1")
    assert refused.returncode == 4 and b"not trusted" in refused.stderr, refused.stderr.decode()
    insecure = cli("--url", url, "--insecure", "call", "echo", "x=1")
    assert insecure.returncode == 0 and b"NOT verified" in insecure.stderr, insecure.stderr.decode()
    mtls = https(client_ca="ca.pem")
    with_cert = cli("--url", mtls, "--cacert", pki("ca.pem"), "--cert", pki("client.pem"), "--key", pki("client.key"),
                    "call", "echo", "x=2")
    assert with_cert.returncode == 0 and b'"x": 2' in with_cert.stdout, with_cert.stderr.decode()
    usage = cli("--cacert", pki("ca.pem"), "ping", "--", PY, "x.py")
    assert usage.returncode == 2 and b"http(s) server" in usage.stderr


# -- transport choice -------------------------------------------------------------------------------

class SseOrStreamable(McpHandler):
    """Like a Go server: its documented URL /sse serves the legacy HTTP+SSE transport on GET, but a
    POST there starts a Streamable HTTP session of another resource (named "wrong-resource")."""

    def do_GET(self):
        if self.path != "/sse":
            return self.reply(404)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(b"event: endpoint\ndata: /messages\n\n")
        self.wfile.flush()
        self.server.stream = self
        self.server.stream_lock = threading.Lock()
        self.server.done = threading.Event()
        self.server.done.wait(30)

    def do_POST(self):
        if self.path == "/sse":
            self.server.name = "wrong-resource"
            return McpHandler.do_POST(self)
        if self.path != "/messages":
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            return self.reply(404)
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.reply(202)
        method, mid = msg.get("method"), msg.get("id")
        if mid is None or method is None:
            return
        if method == "initialize":
            answer = {"result": {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                                 "serverInfo": {"name": "legacy-sse", "version": "1"}}}
        elif method == "tools/call":
            answer = {"result": {"content": [], "structuredContent": msg["params"]["arguments"]}}
        else:
            answer = {"error": {"code": -32601, "message": "no " + method}}
        answer.update(jsonrpc="2.0", id=mid)
        with self.server.stream_lock:
            self.server.stream.wfile.write(b"data: " + json.dumps(answer).encode() + b"\n\n")
            self.server.stream.wfile.flush()


@pytest.fixture
def go_like():
    server = serve(SseOrStreamable)
    yield server.base + "/sse"
    if getattr(server, "done", None) is not None:
        server.done.set()
    server.stop()


def test_auto_cannot_reach_a_server_that_answers_posts_at_its_sse_url(go_like):
    with Client(go_like, timeout=10) as c:
        assert c.transport == "streamable-http" and c.server_info["name"] == "wrong-resource"


def test_transport_sse_says_which_transport_to_use(go_like):
    with Client(go_like, transport="sse", timeout=10) as c:
        assert c.transport == "sse" and c.server_info["name"] == "legacy-sse"
        assert c.call("echo", x=1) == {"x": 1}


def test_transport_streamable_http_never_falls_back(go_like):
    legacy_only = go_like.replace("/sse", "/other")  # POST there: 404, which "auto" takes as "try HTTP+SSE"
    with pytest.raises(HttpError, match="404"):
        Client(legacy_only, transport="streamable-http", timeout=10)


def test_transport_values_are_checked():
    with pytest.raises(ValueError, match="transport must be"):
        Client("http://127.0.0.1:9/mcp", transport="websocket")
    with pytest.raises(ValueError, match="needs an http"):
        Client([PY, "x.py"], transport="sse")
    with pytest.raises(ValueError, match="argv"):
        Client("http://127.0.0.1:9/mcp", transport="stdio")


def test_cli_transport(go_like):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run(cli_argv(*NO_SITE) + ["--url", go_like, "--transport", "sse", "--json", "info"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    assert out.returncode == 0 and b"legacy-sse" in out.stdout, out.stderr.decode()


# -- https through a proxy: a CONNECT tunnel ------------------------------------------------------

class ConnectProxy(object):
    """An HTTP proxy that only tunnels (CONNECT): records each CONNECT line and its
    Proxy-Authorization, then relays bytes both ways."""

    def __init__(self):
        import socket
        self.seen = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = "http://user:p%%40ss@127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        import socket
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            head = b""
            while b"\r\n\r\n" not in head:
                head += client.recv(1)
            lines = head.decode().split("\r\n")
            auth = [line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("proxy-authorization:")]
            self.seen.append((lines[0], auth[0] if auth else None))
            host, port = lines[0].split()[1].rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def pipe(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.close()
            except OSError:
                pass

    def close(self):
        self.sock.close()


def test_https_goes_through_the_environment_proxy_in_a_connect_tunnel(https, pki, monkeypatch):
    import base64
    url = https()
    proxy = ConnectProxy()
    try:
        for name in ("https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        with Client(url, verify=pki("ca.pem"), headers={"Authorization": "Bearer server-only"}, timeout=10) as c:
            assert c.call("echo", x=9) == {"x": 9}
        target = url.split("/")[2]
        assert proxy.seen and all(line.startswith("CONNECT %s HTTP/1." % target) for line, _ in proxy.seen), proxy.seen
        # The proxy's credentials (user:p@ss, percent-encoded in the URL) go to the proxy only.
        assert {auth for _, auth in proxy.seen} == {"Basic " + base64.b64encode(b"user:p@ss").decode()}
    finally:
        proxy.close()
