"""HTTP session recovery (issue 17, item 1): a client talking to a server that issued a
session id never sends a request without one, and whenever the session is found gone the
next request starts exactly one new session.

The servers here are purpose-built, handshake-era Streamable HTTP servers in this process:
``SessionServer`` forgets its sessions on demand, and ``restart()`` replaces it with a fresh
one on the same port (every connection of the old one cut).  Each counts the initialize
requests it saw and the requests that came without a session id.
"""
import json
import os
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_min  # noqa: E402
from mcp_min import Client, ConnectionClosed  # noqa: E402
from testsupport import HttpTestServer, wait_for  # noqa: E402

VERSION = "2025-11-25"
GONE_BODIES = {404: b"", 400: b'{"jsonrpc":"2.0","error":{"code":-32000,'
                              b'"message":"Bad Request: No valid session ID provided"},"id":null}'}


class SessionServer(object):
    """A handshake-era Streamable HTTP server with sessions.

    ``gone_status``: what a request with an unknown session id gets -- 404 as the spec
    says, or 400 naming the session, as server-everything answers.  ``forget()`` forgets
    every session.  Hooks, each a count of times it still applies:
    ``forget_on_call`` (the next tools/call requests find their session forgotten),
    ``forget_on_initialized`` (the session is forgotten as notifications/initialized
    arrives), ``hold_calls`` (that many tools/call requests are held until all arrived,
    then the session is forgotten and all of them answered), ``drop_answer`` (a tools/call
    answered as SSE whose stream ends before the answer, the session forgotten before
    the resumption GET).  ``get_stream``: offer the standalone GET stream.

    Issue 26: ``forget_on_note`` (the session is forgotten as another notification
    arrives), ``ping_on_call`` (a tools/call is answered as SSE: first a ping request to
    us, then the session is forgotten, then the answer: our answer to the ping finds the
    session gone); ``logging``: declare the logging capability (then the handshake sends
    logging/setLevel).  ``notes`` and ``answers`` record the notifications and our
    answers (session id, method / id) that arrived in a live session."""

    def __init__(self, port=0, gone_status=404, sse=False, get_stream=False, logging=False):
        self.gone_status, self.sse, self.get_stream, self.logging = gone_status, sse, get_stream, logging
        self.lock = threading.Lock()
        self.sessions = set()
        self.issued = 0
        self.initializes = 0
        self.initialized = 0
        self.missing = []  # (method, headers) of requests that came without a session id
        self.gone = []  # (verb, method) answered "session gone"
        self.calls = []  # (session id, arguments) of tools/call requests answered
        self.forget_on_call = 0
        self.forget_on_initialized = 0
        self.hold_calls = 0
        self.drop_answer = 0
        self.forget_on_note = 0
        self.ping_on_call = 0
        self.notes = []  # (session id, method) of notifications accepted
        self.answers = []  # (session id, id) of our answers to the server's requests accepted
        self._held = None
        self.streams = []  # open GET streams (handlers)
        self.stream_opened = threading.Event()
        self.stream_gone = threading.Event()  # a GET was answered "session gone"
        self.httpd = HttpTestServer(post=self.post, get=self.get, delete=self.delete, port=port)
        self.port, self.url = self.httpd.port, self.httpd.url

    # -- control ---------------------------------------------------------------------
    def forget(self):
        with self.lock:
            self.sessions.clear()
            streams, self.streams = self.streams, []
        for h in streams:  # a server that forgets a session ends its streams
            h.cut()

    def stop(self):
        """Stop listening and cut every connection (a server process that died)."""
        self.httpd.stop()

    def restart(self):
        """The same server started again on the same port: no session survives."""
        self.stop()
        return SessionServer(self.port, self.gone_status, self.sse, self.get_stream, self.logging)

    def method_log(self):
        return list(self.calls)

    # -- serving ---------------------------------------------------------------------
    def _known(self, h, method, verb="POST"):
        """True when the request's session is alive; else answers it (and returns False)."""
        sid = h.headers.get("Mcp-Session-Id")
        if sid is None:
            with self.lock:
                self.missing.append((method, dict(h.headers)))
            h.reply(400, b'{"error":"missing Mcp-Session-Id"}')
            return False
        with self.lock:
            known = sid in self.sessions
            if not known:
                self.gone.append((verb, method))
        if not known:
            if verb == "GET":
                self.stream_gone.set()
            h.reply(self.gone_status, GONE_BODIES[self.gone_status])
        return known

    def delete(self, h):
        with self.lock:
            self.sessions.discard(h.headers.get("Mcp-Session-Id"))
        h.reply(200)

    def post(self, h, msg):
        method = msg.get("method")
        if method == "server/discover":
            return h.reply(400, b'{"error":"unknown method"}')  # a handshake-era server
        if method == "initialize":
            with self.lock:
                self.initializes += 1
                self.issued += 1
                sid = "s%d-%d" % (self.port, self.issued)
                self.sessions.add(sid)
            capabilities = dict({"tools": {}}, **({"logging": {}} if self.logging else {}))
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": capabilities,
                "serverInfo": {"name": "sessions", "version": "1"}}}
            return h.reply(200, json.dumps(answer).encode(), [("Mcp-Session-Id", sid)])
        if method == "notifications/initialized":
            with self.lock:
                self.initialized += 1
                if self.forget_on_initialized:
                    self.forget_on_initialized -= 1
                    self.sessions.discard(h.headers.get("Mcp-Session-Id"))
        if method is not None and method.startswith("notifications/") and method != "notifications/initialized":
            with self.lock:
                if self.forget_on_note and h.headers.get("Mcp-Session-Id") in self.sessions:
                    self.forget_on_note -= 1
                    self.sessions.discard(h.headers.get("Mcp-Session-Id"))
        if method == "tools/call":
            with self.lock:
                if self.forget_on_call:
                    self.forget_on_call -= 1
                    self.sessions.discard(h.headers.get("Mcp-Session-Id"))
                hold = self.hold_calls > 0
                if hold:
                    if self._held is None:
                        self._held = threading.Barrier(self.hold_calls, action=self.forget, timeout=30)
                    barrier = self._held
            if hold:
                barrier.wait()  # all of them arrived; the last one in forgot the session
                with self.lock:
                    self.hold_calls, self._held = 0, None
        if not self._known(h, method):
            return
        if method is None:  # our answer to a request of ours
            with self.lock:
                self.answers.append((h.headers.get("Mcp-Session-Id"), msg.get("id")))
            return h.reply(202)
        if "id" not in msg:
            with self.lock:
                self.notes.append((h.headers.get("Mcp-Session-Id"), method))
            return h.reply(202)
        result = {}
        if method == "tools/call":
            args = msg["params"].get("arguments") or {}
            result = {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}
            with self.lock:
                self.calls.append((h.headers.get("Mcp-Session-Id"), args))
                drop = self.drop_answer > 0
                if drop:
                    self.drop_answer -= 1
            if drop:  # the stream ends before the answer; the resumption finds the session gone
                h.start_sse()
                h.event("", event_id="e1")
                self.forget()
                return
            with self.lock:
                ping = self.ping_on_call > 0
                if ping:
                    self.ping_on_call -= 1
            if ping:  # a request to us on the answer's stream; the session is gone before our answer
                h.start_sse()
                h.event({"jsonrpc": "2.0", "id": "ping-%s" % msg["id"], "method": "ping"})
                self.forget()
                h.event({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                return
        answer = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        if not self.sse:
            return h.reply(200, json.dumps(answer).encode())
        h.start_sse()
        h.event(answer, event_id="a-%s" % msg["id"])

    def get(self, h):
        if h.headers.get("Last-Event-ID") and not self._known(h, None, "GET"):
            return  # a resumption: only ever of an answer whose session was forgotten (drop_answer)
        if not self.get_stream:
            return h.reply(405)
        if self.get_stream == "refuse":  # a server with no GET route
            return h.reply(404)
        if not self._known(h, None, "GET"):
            return
        h.start_sse()
        with self.lock:
            self.streams.append(h)
        self.stream_opened.set()
        h.wait_for_hangup()  # until the client or forget() ends it


@pytest.fixture
def servers():
    made = []

    def make(**kw):
        made.append(SessionServer(**kw))
        return made[-1]
    yield make
    for s in made:
        s.stop()


def client(server, **kw):
    return Client(server.url, protocol_version=VERSION, **kw)


def healthy(server, sessions):
    """Nothing went out without a session id, and each session had one handshake."""
    assert server.missing == []
    assert server.initializes == server.initialized == sessions


GONE = [404, 400]


@pytest.mark.parametrize("gone", GONE)
def test_a_forgotten_session_is_renewed_once_and_the_call_repeated(servers, gone):
    server = servers(gone_status=gone)
    with client(server) as c:
        assert c.call("echo", n=1) == {"n": 1}
        server.forget()
        assert c.call("echo", n=2) == {"n": 2}
        assert c.call("echo", n=3) == {"n": 3}
    healthy(server, 2)
    assert [s for s, _ in server.calls] == ["s%d-1" % server.port] + ["s%d-2" % server.port] * 2


@pytest.mark.parametrize("gone", GONE)
@pytest.mark.parametrize("sse", [False, True])
def test_gone_twice_in_a_row_then_the_next_call_starts_a_new_session(servers, gone, sse):
    # The regression: the repeat also met "session gone", and every later call went out
    # without a session id (HTTP 400 forever).
    server = servers(gone_status=gone, sse=sse)
    with client(server) as c:
        server.forget_on_call = 2
        with pytest.raises(ConnectionClosed):
            c.call("echo", n=1)
        assert server.initializes == 2  # the repeat's new session, found gone too
        assert c.call("echo", n=2) == {"n": 2}
        assert c.call("echo", n=3) == {"n": 3}
    healthy(server, 3)


@pytest.mark.parametrize("gone", GONE)
def test_gone_right_after_reinitializing(servers, gone):
    server = servers(gone_status=gone)
    with client(server) as c:
        server.forget()
        server.forget_on_initialized = 1  # the new session is gone before the repeat
        with pytest.raises(ConnectionClosed):
            c.call("echo", n=1)
        assert c.call("echo", n=2) == {"n": 2}
        assert c.call("echo", n=3) == {"n": 3}
    assert server.missing == []
    assert server.initializes == 3  # the first, the one forgotten at once, the one that held


# -- issue 26: a 404 on any message, the handshake's and our answers included -----------------

def public(error):
    """``error``, after checking that its class is one of mcp_min's API: a private class
    (_SessionExpired) must never reach the user."""
    assert type(error).__name__ in mcp_min.__all__, type(error)
    return error


@pytest.mark.parametrize("gone", GONE)
def test_gone_on_a_notification_starts_a_new_session_and_sends_it_again(servers, gone):
    server = servers(gone_status=gone)
    with client(server) as c:
        server.forget()
        c.notify("notifications/roots/list_changed")  # found gone, then sent again in a new session
        assert server.notes[-1] == ("s%d-2" % server.port, "notifications/roots/list_changed")
        assert c.call("echo", n=1) == {"n": 1}
    healthy(server, 2)
    assert server.gone == [("POST", "notifications/roots/list_changed")]  # the call itself met no 404


def test_gone_on_a_notification_and_again_in_the_new_session(servers):
    server = servers()
    with client(server) as c:
        server.forget()
        server.forget_on_note = 1  # the new session is gone too when the notification comes again
        with pytest.raises(ConnectionClosed, match="no longer knows our session .again") as info:
            c.notify("notifications/roots/list_changed")
        public(info.value)
        assert server.gone == [("POST", "notifications/roots/list_changed")] * 2  # sent once more, no more
        assert c.call("echo", n=1) == {"n": 1}  # the next message starts another session
    healthy(server, 3)


@pytest.mark.parametrize("gone", GONE)
def test_a_server_forgetting_the_session_at_once_on_initialized(servers, gone):
    # Client() raised _SessionExpired: a server that forgets the session as
    # notifications/initialized arrives gets one new session, and that notification again.
    server = servers(gone_status=gone)
    server.forget_on_initialized = 1
    with client(server) as c:
        assert c.call("echo", n=1) == {"n": 1}
    healthy(server, 2)
    assert server.gone == [("POST", "notifications/initialized")]
    assert [s for s, _ in server.calls] == ["s%d-2" % server.port]


def test_a_server_forgetting_every_session_on_initialized(servers):
    server = servers()
    server.forget_on_initialized = 2  # the new session too: once more, no more
    with pytest.raises(ConnectionClosed, match="no longer knows our session .again") as info:
        client(server)
    public(info.value)
    assert server.initializes == server.initialized == 2
    assert server.gone == [("POST", "notifications/initialized")] * 2


@pytest.mark.parametrize("gone", GONE)
def test_gone_on_our_answer_to_a_server_request(servers, gone):
    server = servers(gone_status=gone)
    with client(server) as c:
        server.ping_on_call = 1  # our answer to its ping finds the session gone
        assert c.call("echo", n=1) == {"n": 1}
        assert wait_for(lambda: server.answers)  # the answer, sent again in a new session
        [(session, rid)] = server.answers
        assert session == "s%d-2" % server.port and rid.startswith("ping-")
        assert c.call("echo", n=2) == {"n": 2}
    healthy(server, 2)
    assert server.gone == [("POST", None)]


def test_a_new_session_whose_handshake_sets_the_log_level(servers):
    # The renewal's own logging/setLevel waited for the renewal: a deadlock (the lock is
    # not reentrant).  On a thread, so that a regression fails instead of hanging.
    server = servers(logging=True)
    with client(server, log_level="info") as c:
        server.forget()
        outcome = []
        worker = threading.Thread(target=lambda: outcome.append(c.call("echo", n=1)), daemon=True)
        worker.start()
        worker.join(30)
        assert outcome == [{"n": 1}]
    healthy(server, 2)


def test_a_request_gone_again_in_the_new_session_raises_a_public_error(servers):
    server = servers()
    with client(server) as c:
        server.forget_on_call = 2  # the call, and its repeat in the new session
        with pytest.raises(ConnectionClosed, match="no longer knows our session .again") as info:
            c.call("echo", n=1)
        public(info.value)
        server.forget()
        server.forget_on_initialized = 1  # a new session gone in its own handshake
        with pytest.raises(ConnectionClosed, match="again") as info:
            c.call("echo", n=2)
        public(info.value)
        assert c.call("echo", n=3) == {"n": 3}
    assert server.missing == []
    assert server.initializes == server.initialized == 4


@pytest.mark.parametrize("gone", GONE)
def test_gone_on_the_get_stream_renews_before_the_next_request(servers, gone):
    server = servers(gone_status=gone, get_stream=True)
    with client(server) as c:
        assert server.stream_opened.wait(10)
        server.stream_opened.clear()
        server.forget()  # ends the stream; its reconnect finds the session gone
        assert server.stream_gone.wait(10)
        # (white-box: the listener has taken the answer in before we call)
        assert wait_for(lambda: c._session.transport.session_gone)
        assert c.call("echo", n=1) == {"n": 1}
        assert server.stream_opened.wait(10)  # the new session has its GET stream
    healthy(server, 2)
    assert [verb for verb, _ in server.gone] == ["GET"]  # the call itself met no "session gone"


def test_a_first_get_refused_is_no_verdict_on_the_session(servers):
    # A 404 on a session's first GET says nothing about the session (a server with no GET
    # route would otherwise be renewed on every request).
    server = servers(get_stream="refuse")
    with client(server) as c:
        assert c.call("echo", n=1) == {"n": 1}
        assert c.call("echo", n=2) == {"n": 2}
    healthy(server, 1)


def test_gone_on_a_resumption_get(servers):
    server = servers(sse=True)
    with client(server) as c:
        server.drop_answer = 1
        assert c.call("echo", n=1) == {"n": 1}
    healthy(server, 2)
    assert [verb for verb, _ in server.gone] == ["GET"]


@pytest.mark.parametrize("gone", GONE)
@pytest.mark.parametrize("sse", [False, True])
def test_eight_threads_meeting_the_404_at_once_start_one_session(servers, gone, sse):
    server = servers(gone_status=gone, sse=sse)
    threads = 8
    with client(server) as c:
        server.hold_calls = threads
        results, errors = [], []

        def call(n):
            try:
                results.append(c.call("echo", n=n))
            except Exception as e:  # reported below
                errors.append(e)
        workers = [threading.Thread(target=call, args=(n,)) for n in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        assert errors == []
        assert sorted(r["n"] for r in results) == list(range(threads))
    healthy(server, 2)
    assert len(server.gone) == threads


def test_submitted_calls_meeting_the_404(servers):
    server = servers()
    with client(server) as c:
        server.hold_calls = 4
        futures = [c.submit("echo", n=n) for n in range(4)]
        assert [f.result() for f in futures] == [{"n": n} for n in range(4)]
    healthy(server, 2)


@pytest.mark.parametrize("gone", GONE)
def test_a_server_restarted_on_the_same_port(servers, gone):
    first = servers(gone_status=gone)
    with client(first) as c:
        assert c.call("echo", n=1) == {"n": 1}
        second = first.restart()
        try:
            assert c.call("echo", n=2) == {"n": 2}
            assert c.call("echo", n=3) == {"n": 3}
        finally:
            second.stop()
    healthy(second, 1)
    assert second.gone == [("POST", "tools/call")]


def test_a_server_restarted_with_the_get_stream_open(servers):
    first = servers(get_stream=True)
    with client(first) as c:
        assert first.stream_opened.wait(10)
        second = first.restart()
        try:
            assert c.call("echo", n=1) == {"n": 1}  # (the stream's reconnect may find out first)
            assert c.call("echo", n=2) == {"n": 2}
            assert second.stream_opened.wait(10)
        finally:
            second.stop()
    healthy(second, 1)


def test_a_restarted_server_that_is_down_at_first(servers):
    # The server is not back yet: the call fails, and the next one (server back) renews.
    first = servers()
    with client(first, timeout=5) as c:
        assert c.call("echo", n=1) == {"n": 1}
        first.stop()
        with pytest.raises(mcp_min.McpError):
            c.call("echo", n=2)
        second = SessionServer(first.port)
        try:
            assert c.call("echo", n=3) == {"n": 3}
        finally:
            second.stop()
    healthy(second, 1)
