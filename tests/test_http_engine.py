"""The HTTP engine: the deadline thread, thread limits, connection reuse, transport choice, and
how event streams are read (their framing, on every kind of stream).

Against the hostile peer tests/hostile/http_server.py (raw sockets, every request logged with the
number of the connection it came on), scenarios that need a process of their own
(tests/hostile/scenarios.py), and for exact stream bytes the in-process HttpTestServer
(tests/testsupport.py).

Run:  python -m pytest -q tests/test_http_engine.py
"""
import json
import logging
import os
import re
import subprocess
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MCP_MIN_DIR") or os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import mcp_min  # noqa: E402
from mcp_min import Client  # noqa: E402
from inproc_server import Server  # noqa: E402
from testsupport import NO_SITE, HttpTestServer, wait_for  # noqa: E402

PY = sys.executable
PEERS = os.path.join(HERE, "hostile")


class Peer(object):
    """tests/hostile/http_server.py with a request log; stopped by the fixture."""

    def __init__(self, tmp, cfg):
        cfg = dict(cfg, log=str(tmp / ("http-%d.jsonl" % id(self))))
        self.cfg = cfg
        self.proc = subprocess.Popen([PY, *NO_SITE, os.path.join(PEERS, "http_server.py"), json.dumps(cfg)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()
        assert line.startswith("PORT "), "the HTTP peer did not start: %r" % line
        self.base = "http://127.0.0.1:%d" % int(line.split()[1])
        self.url = self.base + "/mcp"

    def requests(self, method=None):
        try:
            with open(self.cfg["log"]) as f:
                entries = [json.loads(line) for line in f if line.strip()]
        except OSError:
            return []
        return [e for e in entries if "method" in e and (method is None or e["method"] == method)]

    def stop(self):
        self.proc.kill()
        self.proc.wait(10)
        self.proc.stdin.close()
        self.proc.stdout.close()


@pytest.fixture
def peer(tmp_path):
    made = []

    def make(**cfg):
        made.append(Peer(tmp_path, cfg))
        return made[-1]
    yield make
    for p in made:
        p.stop()


# -- the deadline thread ------------------------------------------------------------------------

def test_the_deadline_thread_serves_every_open_client_and_ends_with_the_last(peer):
    srv = peer()
    first, second = Client(srv.url, timeout=10), Client(srv.url, timeout=10)
    try:
        with pytest.raises(mcp_min.RequestTimeout):
            first.call("never", timeout=0.3)
        first.close()
        names = [t.name for t in threading.enumerate()]
        assert "mcp_min-deadlines" in names, "the deadline thread ended while a client was still open"
        with pytest.raises(mcp_min.RequestTimeout):  # and it still cuts requests
            second.call("trickle_body", timeout=0.3)
    finally:
        second.close()
    assert [t.name for t in threading.enumerate() if t.name == "mcp_min-deadlines"] == []


@pytest.mark.parametrize("mode", ["streamable", "modern", "sse"])
def test_no_thread_to_start_is_one_clear_error_without_a_traceback(peer, mode):
    """Thread creation refused (a process at its limit): connecting, or a call, raises one McpError
    that says so; nothing is logged with a traceback, and nothing hangs."""
    srv = peer(mode=mode)
    env = dict(os.environ, MCP_MIN_DIR=ROOT)
    proc = subprocess.run([PY, *NO_SITE, os.path.join(PEERS, "scenarios.py"), "thread_fail", json.dumps({"url": srv.url})],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    got = out["connect"]
    assert got["result"] == "raised" and got["mcp_error"], got
    assert "thread" in got["message"], got["message"]
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-2000:]


# -- connections --------------------------------------------------------------------------------

def test_the_session_delete_reuses_a_kept_alive_connection(peer):
    srv = peer()
    with Client(srv.url, timeout=10) as c:
        assert c.call("echo", x=1) == {"x": 1}
    posts, deletes = srv.requests("POST"), srv.requests("DELETE")
    assert len(deletes) == 1, "no DELETE ended the session"
    assert deletes[0]["conn"] in {p["conn"] for p in posts}, "the DELETE opened a new connection"


# -- event streams framed as the WHATWG rules say (issue 26, item 4) -----------------------------
# Every stream (a POST's answer, the GET stream, a resumption, legacy HTTP+SSE, listen) is read as
# it comes and parsed by the one _SseParser: lines may end in CR, LF or CRLF, mixed, and a line end
# may fall between two reads.  Each stream below stays open after its events (as a server's does
# until it is done), so a client that waits for an LF that never comes ends in RequestTimeout.
# The parser's own rules, split at every byte, are tested in tests/test_core.py.

BOM = b"\xef\xbb\xbf"
STYLES = ["cr", "crlf-bom", "mixed", "split"]
HANDSHAKE_ERA = "2025-11-25"
FRAMED_TIMEOUT = 10  # seconds: the fixed client answers at once; a broken one waits this long


def framed(events, style, start=True):
    """The writes that send ``events`` (each a list of lines, without their ends) framed in
    ``style``: "cr" (every line ends in CR), "crlf-bom" (CRLF, the stream starting with a BOM),
    "mixed" (CRLF, LF and CR in turn, the last a CR), "split" (mixed, written in pieces: each
    CRLF split between two writes, the BOM too).  ``start``: these are the stream's first bytes."""
    lines = [line for event in events for line in list(event) + [b""]]
    if style == "cr":
        ends = [b"\r"] * len(lines)
    elif style == "crlf-bom":
        ends = [b"\r\n"] * len(lines)
    else:
        ends = [(b"\r\n", b"\n", b"\r")[i % 3] for i in range(len(lines) - 1)] + [b"\r"]
    data = b"".join(line + end for line, end in zip(lines, ends))
    if start and style in ("crlf-bom", "split"):
        data = BOM + data
    if style != "split":
        return [data]
    pieces = [piece for piece in re.split(b"(?<=\r)", data) if piece]  # (a CRLF's LF starts the next write)
    return [pieces[0][:2], pieces[0][2:]] + pieces[1:] if start else pieces  # (a BOM in two writes)


def message_event(msg, *more):
    """One event: ``msg`` as JSON on several data lines (so that a line end read twice breaks it)."""
    return [b"data: " + line.encode() for line in json.dumps(msg, indent=1).split("\n")] + list(more)


def echo(msg):
    args = msg["params"].get("arguments") or {}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": {
        "content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}}


def send_stream(h, writes, hold=True):
    """An SSE answer of these writes, each flushed on its own; ``hold``: kept open until the client
    hangs up (a chunked stream), else ended by closing the connection."""
    h.start_sse(chunked=hold)
    for data in writes:
        h.write_sse(data)
    if hold:
        h.wait_for_hangup()


def handshake_server(on_call=None, get=None, tls=None):
    """A handshake-era Streamable HTTP server: ``on_call(h, msg)`` answers tools/call; ``get(h)``
    the GET requests (default 405: no GET stream); ``tls``: an ssl.SSLContext for https."""
    def post(h, msg):
        method = msg.get("method")
        if method == "initialize":
            return h.reply(200, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "framed", "version": "1"}}}).encode())
        if "id" not in msg:
            return h.reply(202)
        if method == "tools/call":
            return on_call(h, msg)
        h.reply(400, b'{"error":"unknown method"}')
    return HttpTestServer(post=post, get=get, tls=tls)


@pytest.mark.parametrize("style", STYLES)
def test_framed_post_answer(style):
    with handshake_server(lambda h, msg: send_stream(h, framed([
            message_event(echo(msg), b": keep-alive", b"event: message", b"id: a1")], style))) as server:
        with Client(server.url, protocol_version=HANDSHAKE_ERA, timeout=FRAMED_TIMEOUT) as c:
            assert c.call("echo", n=1, style=style) == {"n": 1, "style": style}


@pytest.mark.parametrize("style", STYLES)
def test_framed_get_stream_notification(style):
    note = {"jsonrpc": "2.0", "method": "notifications/framed", "params": {"style": style}}
    got = []

    def get(h):
        send_stream(h, framed([message_event(note, b"id: g1")], style))

    with handshake_server(get=get) as server:
        with Client(server.url, protocol_version=HANDSHAKE_ERA, timeout=FRAMED_TIMEOUT,
                    on_notification=lambda method, params: got.append((method, params))):
            assert wait_for(lambda: got, FRAMED_TIMEOUT), "the notification on the GET stream never arrived"
    assert got == [("notifications/framed", {"style": style})]


def resuming_server(first_stream, answer_style):
    """A server whose tools/call stream is ``first_stream(msg)`` (writes), then ends; the GET that
    resumes it gets the answer framed in ``answer_style``, the stream held open.  ``server.resumed``:
    the Last-Event-ID of each resumption."""
    calls = {}

    def on_call(h, msg):
        calls["msg"] = msg
        send_stream(h, first_stream(msg), hold=False)

    def get(h):
        last = h.headers.get("Last-Event-ID")
        if last is None:
            return h.reply(405)  # no standalone GET stream: only resumptions
        server.resumed.append(last)
        send_stream(h, framed([message_event(echo(calls["msg"]))], answer_style))

    server = handshake_server(on_call, get)
    server.resumed = []
    return server


@pytest.mark.parametrize("style", STYLES)
def test_framed_resumption_after_a_dropped_stream(style):
    with resuming_server(lambda msg: framed([[b"id: p1", b"data:"]], style), style) as server:
        with Client(server.url, protocol_version=HANDSHAKE_ERA, timeout=FRAMED_TIMEOUT) as c:
            assert c.call("echo", n=2) == {"n": 2}
    assert server.resumed == ["p1"]


def test_a_resumption_asks_again_for_the_event_the_drop_cut_off():
    """WHATWG: an event's id counts once the event is complete.  The stream ends inside event p2,
    so the resumption asks for what follows p1 (p2 again); nothing of the cut event is kept."""
    with resuming_server(lambda msg: [b"id: p1\ndata:\n\nid: p2\ndata: {\"jsonrpc\": "], "crlf-bom") as server:
        with Client(server.url, protocol_version=HANDSHAKE_ERA, timeout=FRAMED_TIMEOUT) as c:
            assert c.call("echo", n=3) == {"n": 3}
    assert server.resumed == ["p1"]


@pytest.mark.parametrize("style", STYLES)
def test_framed_legacy_http_sse(style):
    """The 2024-11-05 transport: the endpoint event and every answer on the one GET stream."""
    lock, streams = threading.Lock(), []

    def get(h):
        with lock:
            streams.append(h)
        send_stream(h, framed([[b"event: endpoint", b"data: /messages?session=1"]], style))

    def post(h, msg):
        h.reply(202)
        if "id" not in msg:
            return
        if msg["method"] == "initialize":
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy", "version": "1"}}}
        else:
            answer = echo(msg) if msg["method"] == "tools/call" else {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
        with lock:
            try:
                for data in framed([[b"event: message"] + message_event(answer)], style, start=False):
                    streams[0].write_sse(data)
            except (OSError, ValueError):
                pass  # the client had its answer and hung up before our last flush (the stream is closed)

    with HttpTestServer(post=post, get=get) as server:
        with Client(server.url, transport="sse", protocol_version="2024-11-05", timeout=FRAMED_TIMEOUT) as c:
            assert c.call("echo", n=4) == {"n": 4}


@pytest.mark.parametrize("style", STYLES)
def test_framed_listen_stream(style):
    """2026-07-28: a subscriptions/listen answer is a stream that stays open."""
    inner, got = Server(), []

    def post(h, msg):
        out = inner.handle(msg, dict(h.headers))
        if msg.get("method") != "subscriptions/listen":
            answers = [m for m in out if "id" in m]
            return h.reply(200, json.dumps(answers[0]).encode()) if answers else h.reply(202)
        change = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                  "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": msg["id"]}}}
        send_stream(h, framed([message_event(m) for m in out + [change]], style))

    with HttpTestServer(post=post) as server:
        with Client(server.url, timeout=FRAMED_TIMEOUT) as c:
            sub = c.listen(callback=lambda method, params: got.append(method))
            assert wait_for(lambda: got, FRAMED_TIMEOUT), "the listen stream's notification never arrived"
            assert sub.acknowledged is not None
            sub.close()
    assert got == ["notifications/tools/list_changed"]


# -- credentials on redirects -------------------------------------------------------------------
# Everything the auth plug-in gives a request is a credential for that URL, and so is every header
# of headers=, whatever it is called: a GET redirect (the only ones followed) that leaves the origin
# (scheme, host, port) drops them, with the names that look secret; one that stays keeps them all.
# The paths that follow redirects: the Streamable HTTP GET stream, the legacy HTTP+SSE stream (and
# OAuth's metadata GETs, which carry no plug-in or caller headers).

PLUGIN = {"X-Signature": "sig-f00d1", "X-Goog-Iap-Jwt-Assertion": "jwt-f00d2", "X-Custom": "custom-f00d3"}
OWN = {"X-Tenant": "tenant-f00d4", "Authorization": "Bearer own-f00d5"}  # headers=
SECRETS = list(PLUGIN.values()) + list(OWN.values())


class Signer(object):
    """An auth plug-in whose headers have names nothing marks as secret."""

    def headers(self, method, url):
        return dict(PLUGIN)


def recorder(seen):
    """A GET handler that keeps the request's headers (lower-cased names) and offers no stream."""
    def get(h):
        seen.append({k.lower(): v for k, v in h.headers.items()})
        h.reply(405)
    return get


def redirecting(status, location, tls=None):
    """A handshake-era server whose GET of /mcp (its GET stream; the stream itself for the legacy
    transport, which then fails to connect) is answered ``status`` to ``location(server)``; its GETs
    of other paths are recorded in ``server.seen``."""
    seen = []

    def get(h):
        if h.path.startswith("/mcp"):
            return h.reply(status, headers=[("Location", location(server))])
        recorder(seen)(h)
    server = handshake_server(get=get, tls=tls)
    server.seen = seen
    return server


def connect(url, legacy, **options):
    """A client of ``url`` with the plug-in and OWN as headers=; legacy: its connect fails (the
    redirected stream ends at a 405), after the redirect was followed, and None is returned."""
    options = dict(options, auth=Signer(), headers=OWN, timeout=10)
    if legacy:
        with pytest.raises(mcp_min.McpError):
            Client(url, transport="sse", protocol_version="2024-11-05", **options)
        return None
    return Client(url, protocol_version=HANDSHAKE_ERA, **options)


def assert_dropped(headers):
    assert "accept" in headers, "not the redirected GET: %r" % headers  # (what is no credential goes on)
    leaked = sorted(set(h.lower() for h in list(PLUGIN) + list(OWN) + ["Mcp-Session-Id"]) & set(headers))
    assert leaked == [], "credentials followed a redirect to another origin: %s" % leaked


# destination -> Location, given the redirecting server
ELSEWHERE = {
    "other port": lambda server, other: other.base + "/elsewhere",
    "other host name": lambda server, other: "http://localhost:%d/elsewhere" % server.port,
}


@pytest.mark.parametrize("legacy", [False, True], ids=["get-stream", "legacy-sse"])
@pytest.mark.parametrize("destination", sorted(ELSEWHERE))
@pytest.mark.parametrize("status", [302, 307, 308])
def test_a_redirect_to_another_origin_drops_every_credential_whatever_its_name(status, destination, legacy):
    seen_elsewhere = []
    with HttpTestServer(get=recorder(seen_elsewhere)) as other:
        with redirecting(status, lambda server: ELSEWHERE[destination](server, other)) as server:
            c = connect(server.url, legacy)
            try:
                seen = seen_elsewhere if destination == "other port" else server.seen
                assert wait_for(lambda: seen), "the redirect was not followed"
            finally:
                if c is not None:
                    c.close()
    (headers,) = seen
    assert_dropped(headers)


@pytest.mark.parametrize("legacy", [False, True], ids=["get-stream", "legacy-sse"])
@pytest.mark.parametrize("location", ["/elsewhere", "absolute"])
@pytest.mark.parametrize("status", [302, 307, 308])
def test_a_redirect_within_the_origin_keeps_them(status, location, legacy):
    where = (lambda server: server.base + "/elsewhere") if location == "absolute" else (lambda server: location)
    with redirecting(status, where) as server:
        c = connect(server.url, legacy)
        try:
            assert wait_for(lambda: server.seen), "the redirect was not followed"
        finally:
            if c is not None:
                c.close()
    (headers,) = server.seen
    for name, value in list(PLUGIN.items()) + list(OWN.items()):
        assert headers.get(name.lower()) == value, "%s was dropped on a same-origin redirect" % name


def test_a_redirect_from_https_to_http_drops_them(tmp_path):
    import shutil
    import ssl
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed: no certificate to serve https with")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out",
                    "cert.pem", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   cwd=str(tmp_path), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))
    seen = []
    with HttpTestServer(get=recorder(seen)) as plain:
        with redirecting(307, lambda server: plain.base + "/elsewhere", tls=context) as server:
            assert server.url.startswith("https://")
            with connect(server.url, False, verify=str(tmp_path / "cert.pem")):
                assert wait_for(lambda: seen), "the redirect was not followed"
    (headers,) = seen
    assert_dropped(headers)


def test_the_wire_trace_never_shows_plug_in_or_caller_header_values(caplog):
    """The trace (logger "mcp_min" at DEBUG, the CLI's --trace) names every header it sends but
    shows the plug-in's and the caller's as <redacted>, on every request and every hop."""
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    with redirecting(307, lambda server: "/elsewhere") as server:
        with connect(server.url, False):
            assert wait_for(lambda: server.seen), "the redirect was not followed"
    trace = "\n".join(r.getMessage() for r in caplog.records)
    assert "X-Signature" in trace and "X-Tenant" in trace, "no header trace to check"
    shown = [value for value in SECRETS if value in trace]
    assert shown == [], "the trace shows credentials: %s" % shown


# -- the per-request work kept small (issue 30): each shortcut still gives the same answer --------

@pytest.mark.parametrize("poller", [True, False], ids=["poll", "select"])
def test_an_idle_connection_the_server_closed_is_found_dropped(poller):
    """dropped() (checked before every reuse of a pooled connection): a connection the server
    closed while it was idle is never reused; a quiet open one is.  Both ways of looking: the
    poll object made once per socket, and select() where there is none."""
    import socket
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        conn = mcp_min._conn_class(False)("127.0.0.1:%d" % listener.getsockname()[1], timeout=5)
        conn.connect()
        if not poller:
            conn.poller = None
        elif conn.poller is None:
            pytest.skip("no select.poll on this platform")
        served, _ = listener.accept()
        assert not conn.dropped(), "an open, quiet connection was given up"
        served.close()
        assert wait_for(conn.dropped), "a connection the server closed would be reused"
        conn.close()
        assert conn.dropped(), "a closed connection would be reused"
    finally:
        listener.close()


def test_request_headers_follow_the_version_and_let_the_callers_own_win():
    """The headers every request carries are made once (and again when the version is set):
    the caller's own headers still override ours, the version header follows configure(),
    and an Accept other than a POST's is still the one asked for."""
    t = mcp_min._StreamableHttpTransport("http://127.0.0.1:1/mcp", {"User-Agent": "mine/1", "X-Tenant": "t"})
    try:
        msg = mcp_min._message("tools/call", {"name": "add", "arguments": {}}, 1)
        before = t._post_headers(msg)
        assert "MCP-Protocol-Version" not in before and "Mcp-Method" not in before
        t.configure("2026-07-28", True)
        after = t._post_headers(msg)
        assert after["MCP-Protocol-Version"] == "2026-07-28" and after["User-Agent"] == "mine/1"
        assert after["X-Tenant"] == "t" and after["Mcp-Method"] == "tools/call" and after["Mcp-Name"] == "add"
        assert after["Accept"] == "application/json, text/event-stream"
        after["X-Changed"] = "by one request"  # (each request's headers are its own)
        assert "X-Changed" not in t._post_headers(msg)
        assert t._base_headers("text/event-stream")["Accept"] == "text/event-stream"
    finally:
        t.close()
