"""The deadline wins (issue 17, item 3): a request whose deadline passed raises
RequestTimeout, even when the server answers (with an error, or at all) after it -- as
servers do when cutting or cancelling the request makes them answer at once ("context
canceled").  The rule (mcp_min._in_time): what is routed after the deadline settles the
request as RequestTimeout; what was routed before it wins, however late the caller looks;
the loss of the whole connection stays ConnectionClosed.

Each transport gets a server that answers exactly when told to, or exactly when its
request is cut, so the order "deadline, then answer" is made, not hoped for.
"""
import json
import os
import queue
import sys
import textwrap
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import mcp_min  # noqa: E402
from mcp_min import Client, RequestTimeout, ToolError  # noqa: E402
from testsupport import HttpTestHandler, HttpTestServer, wait_for  # noqa: E402

DEADLINE = 0.5  # seconds; nothing here depends on how long it is, only on it passing

# The two answers a server gives when its request is cut short.
ANSWERS = {
    "error": {"error": {"code": -32603, "message": "context canceled"}},
    "tool-error": {"result": {"isError": True, "content": [{"type": "text", "text": "context canceled"}]}},
}

STDIO_SERVER = textwrap.dedent('''
    import json, sys
    held = {}
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "late", "version": "1"}}
        elif method == "tools/call" and msg["params"]["name"] == "wait":
            held[msg["params"]["arguments"]["key"]] = msg["id"]  # answered on test/answer-now
            continue
        elif method == "test/answer-now":
            answer = json.loads(msg["params"]["answer"])
            answer.update(jsonrpc="2.0", id=held.pop(msg["params"]["key"]))
            sys.stdout.write(json.dumps(answer) + "\\n")
            sys.stdout.flush()
            continue
        elif "id" in msg and method == "server/discover":
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                         "error": {"code": -32601, "message": "no"}}) + "\\n")
            sys.stdout.flush()
            continue
        elif "id" in msg:
            result = {}
        else:
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
        sys.stdout.flush()
''')


def past_deadline(fut):
    """Wait until the request's deadline has passed (a condition on the clock, not a sleep)."""
    assert wait_for(lambda: time.monotonic() >= fut._deadline, DEADLINE + 10)


def raises_timeout(fut):
    assert wait_for(fut.done)
    with pytest.raises(RequestTimeout):
        fut.result()


# ---------------------------------------------------------------------------
# The rule, in memory
# ---------------------------------------------------------------------------

def _future(dispatcher, timeout=30.0):
    fut = mcp_min.Future(dispatcher.next_id(), "tools/call", {}, timeout, None,
                         lambda f, answer: mcp_min._result_of(f.method, answer), lambda f, e: False)
    dispatcher.add(fut)
    return fut


def test_an_answer_routed_after_the_deadline_is_a_timeout():
    d = mcp_min._Dispatcher(lambda m: None, lambda m, p: None)
    for answer in ANSWERS.values():
        fut = _future(d)
        fut._deadline = time.monotonic() - 1  # (white-box: the deadline has passed)
        d.receive(dict(answer, jsonrpc="2.0", id=fut.id))
        with pytest.raises(RequestTimeout):
            fut.result()
    fut = _future(d)
    fut._deadline = time.monotonic() - 1
    d.receive({"jsonrpc": "2.0", "id": fut.id, "result": {"ok": True}})  # a result too
    with pytest.raises(RequestTimeout):
        fut.result()


def test_a_failure_after_the_deadline_is_a_timeout_but_a_lost_connection_stays_one():
    d = mcp_min._Dispatcher(lambda m: None, lambda m, p: None)
    failed, closed = _future(d), _future(d)
    failed._deadline = closed._deadline = time.monotonic() - 1
    d.fail(failed.id, mcp_min.HttpError("http://x/", 500, "cut"))
    with pytest.raises(RequestTimeout):
        failed.result()
    d.closed(mcp_min.ConnectionClosed("server exited with code 3"))
    with pytest.raises(mcp_min.ConnectionClosed, match="exited with code 3"):
        closed.result()  # what every later call raises too, with its reason


def test_an_answer_routed_in_time_wins_even_when_looked_at_late():
    d = mcp_min._Dispatcher(lambda m: None, lambda m, p: None)
    fut = _future(d)
    d.receive({"jsonrpc": "2.0", "id": fut.id, "result": {"ok": True}})
    fut._deadline = time.monotonic() - 1  # the caller comes after the deadline
    assert fut.result() == {"ok": True}


# ---------------------------------------------------------------------------
# stdio: the server answers when told, after the deadline
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(ANSWERS))
def test_stdio_an_answer_after_the_deadline_is_a_timeout(tmp_path, kind):
    script = tmp_path / "late_server.py"
    script.write_text(STDIO_SERVER)
    with Client([sys.executable, str(script)]) as c:
        fut = c.submit("wait", key="k", timeout=DEADLINE)
        past_deadline(fut)
        c.notify("test/answer-now", {"key": "k", "answer": json.dumps(ANSWERS[kind])})
        raises_timeout(fut)
        # and an answer in time still wins
        fut = c.submit("wait", key="k2", timeout=30)
        c.notify("test/answer-now", {"key": "k2", "answer": json.dumps(ANSWERS[kind])})
        assert wait_for(fut.done)
        with pytest.raises(ToolError if kind == "tool-error" else mcp_min.RequestError):
            fut.result()


# ---------------------------------------------------------------------------
# HTTP: the server answers the moment its request is cut (as a Go server did), or when told
# ---------------------------------------------------------------------------

class LateServer(object):
    """An HTTP server whose tools/call "wait" is answered with ``ANSWERS[kind]`` after the
    request's connection is cut: over Streamable HTTP (``mode`` "json" or "sse", the
    answer of the POST) on the GET stream, over legacy HTTP+SSE (``mode`` "legacy") on
    the SSE stream.  ``mode`` "legacy-told": the POST is accepted at once and the answer
    comes on the SSE stream when test/answer-now arrives.  ``handler``: another request
    handler (UnreadHandler: a server that never reads a large body)."""

    def __init__(self, mode, kind, handler=HttpTestHandler):
        self.mode, self.kind = mode, kind
        self.stream = queue.Queue()  # messages for the GET / SSE stream
        self.held = {}
        self.cut = threading.Event()
        self.httpd = HttpTestServer(post=self.post, get=self.get, handler=handler)
        self.httpd.release = threading.Event()  # (UnreadHandler: the test is over)
        self.url = self.httpd.base + ("/sse" if mode.startswith("legacy") else "/mcp")

    def get(self, h):
        h.start_sse()
        if self.mode.startswith("legacy"):
            h.wfile.write(b"event: endpoint\ndata: /messages\n\n")
            h.wfile.flush()
        while True:
            msg = self.stream.get()
            if msg is None:
                return
            h.event(msg)

    def answer(self, rid):
        return dict(ANSWERS[self.kind], jsonrpc="2.0", id=rid)

    def post(self, h, msg):
        legacy = self.mode.startswith("legacy")
        method = msg.get("method")
        if not legacy and h.path != "/mcp" or legacy and h.path == "/sse":
            return h.reply(405)
        if method == "server/discover" and not legacy:
            return h.reply(400, b'{"error":"unknown method"}')
        if method == "tools/call" and msg["params"]["name"] == "wait":
            if self.mode == "legacy-told":
                self.held[msg["params"]["arguments"]["key"]] = msg["id"]
                return h.reply(202)
            if self.mode == "sse":
                h.start_sse()
            h.wait_for_hangup()  # until the client cuts the request
            self.cut.set()
            self.stream.put(self.answer(msg["id"]))  # the answer, at once
            h.close_connection = True
            return
        if method == "test/answer-now":
            self.stream.put(self.answer(self.held.pop(msg["params"]["key"])))
            return h.reply(202)
        if "id" not in msg:
            return h.reply(202)
        result = {}
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "late", "version": "1"}}
        answer = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        if legacy:
            self.stream.put(answer)
            return h.reply(202)
        h.reply(200, json.dumps(answer).encode(), [("Mcp-Session-Id", "s1")] if method == "initialize" else ())

    def close(self):
        self.stream.put(None)
        self.httpd.release.set()
        self.httpd.stop()


@pytest.fixture
def late_server():
    made = []

    def make(mode, kind, handler=HttpTestHandler):
        made.append(LateServer(mode, kind, handler))
        return made[-1]
    yield make
    for s in made:
        s.close()


@pytest.mark.parametrize("kind", sorted(ANSWERS))
@pytest.mark.parametrize("mode", ["json", "sse", "legacy"])
def test_http_an_answer_when_the_request_is_cut_is_a_timeout(late_server, mode, kind):
    server = late_server(mode, kind)
    with Client(server.url, protocol_version="2025-11-25" if mode != "legacy" else "2024-11-05") as c:
        assert c.transport == ("sse" if mode == "legacy" else "streamable-http")
        fut = c.submit("wait", key="k", timeout=DEADLINE)
        assert server.cut.wait(DEADLINE + 10)  # cut at the deadline; the answer follows at once
        raises_timeout(fut)
        with pytest.raises(RequestTimeout):  # and the same for a caller waiting all along
            c.call("wait", key="k2", timeout=DEADLINE)


@pytest.mark.parametrize("kind", sorted(ANSWERS))
def test_legacy_sse_an_answer_after_the_deadline_is_a_timeout(late_server, kind):
    server = late_server("legacy-told", kind)
    with Client(server.url, protocol_version="2024-11-05") as c:
        fut = c.submit("wait", key="k", timeout=DEADLINE)
        past_deadline(fut)
        c.notify("test/answer-now", {"key": "k"})
        raises_timeout(fut)


# ---------------------------------------------------------------------------
# On the way out (issue 26): the deadline passes while the message is still being written.
# The caller gets RequestTimeout, not the broken pipe of the connection the deadline cut.
# ---------------------------------------------------------------------------

BIG = "x" * (16 << 20)  # far more than the socket's or the pipe's buffers hold
TIMEOUTS = [DEADLINE, 1e-9]  # (1e-9: the deadline passes at once, a cut racing the first write)
HTTP_MODES = {"json": "2025-11-25", "legacy": "2024-11-05"}  # Streamable HTTP, legacy HTTP+SSE


class UnreadHandler(HttpTestHandler):
    """A server that never reads a large body: it holds such a request, unread, until the
    test is over (``server.release``)."""

    def do_POST(self):
        if int(self.headers.get("Content-Length") or 0) > 1 << 20:
            self.server.release.wait()
            self.close_connection = True
            return
        HttpTestHandler.do_POST(self)


def unread_client(late_server, mode, **options):
    server = late_server(mode, "error", UnreadHandler)
    return Client(server.url, protocol_version=HTTP_MODES[mode], **options)


@pytest.mark.parametrize("timeout", TIMEOUTS)
@pytest.mark.parametrize("mode", sorted(HTTP_MODES))
def test_http_the_deadline_while_writing_a_request_is_a_timeout(late_server, mode, timeout):
    with unread_client(late_server, mode) as c:
        with pytest.raises(RequestTimeout):
            c.call("echo", blob=BIG, timeout=timeout)  # sent on this thread
        fut = c.submit("echo", blob=BIG, timeout=timeout)  # sent on a thread of its own
        with pytest.raises(RequestTimeout):
            fut.result()
        assert c.request("ping") == {}  # one request's timeout: the client goes on


@pytest.mark.parametrize("mode", sorted(HTTP_MODES))
def test_http_the_deadline_while_writing_a_notification_is_a_timeout(late_server, mode):
    with unread_client(late_server, mode, timeout=2.0) as c:  # (the client's timeout bounds a notification)
        with pytest.raises(RequestTimeout):
            c.notify("notifications/message", {"level": "info", "data": BIG})
        assert c.request("ping") == {}


@pytest.mark.parametrize("mode", sorted(HTTP_MODES))
def test_http_the_deadline_while_writing_our_answer_is_a_timeout(late_server, mode):
    with unread_client(late_server, mode) as c:
        # (white-box: what _Session._send_answer sends an answer to a server request with)
        answer = {"jsonrpc": "2.0", "id": "from-the-server", "result": {"blob": BIG}}
        with pytest.raises(RequestTimeout):
            c._session.transport.send(answer, mcp_min._encode_line(answer), time.monotonic() + DEADLINE)
        assert c.request("ping") == {}


# stdio and Client.over(): a server that answers the handshake, then stops reading (alive).
STALL_SERVER = textwrap.dedent('''
    import json, sys, threading

    def serve(rfile, wfile, release):
        for line in rfile:
            msg = json.loads(line)
            if msg.get("method") == "notifications/initialized":
                release.wait()  # reads nothing more until then
                return
            if msg.get("method") == "initialize":
                answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "stall", "version": "1"}}}
                wfile.write((json.dumps(answer) + "\\n").encode())
                wfile.flush()

    if __name__ == "__main__":
        serve(sys.stdin.buffer, sys.stdout.buffer, threading.Event())
''')


@pytest.mark.parametrize("timeout", TIMEOUTS)
def test_stdio_the_deadline_while_writing_is_a_timeout(tmp_path, timeout):
    script = tmp_path / "stall_server.py"
    script.write_text(STALL_SERVER)
    with Client([sys.executable, str(script)], protocol_version="2025-11-25") as c:
        with pytest.raises(RequestTimeout, match="stopped reading its stdin"):
            c.call("echo", blob=BIG, timeout=timeout)
        # Part of the message went out: the connection is dropped, and stays so.
        with pytest.raises(mcp_min.ConnectionClosed, match="stopped reading its stdin"):
            c.call("echo", n=1)


@pytest.fixture
def stalled_streams():
    """make() -> (reader, writer) descriptors for Client.over() of STALL_SERVER on a thread;
    make.release.set() lets it read again (and end)."""
    namespace = {}
    exec(STALL_SERVER, namespace)
    release, threads = threading.Event(), []

    def make():
        to_server, from_client = os.pipe()
        to_client, from_server = os.pipe()
        rfile, wfile = os.fdopen(to_server, "rb"), os.fdopen(from_server, "wb")

        def run():
            try:
                namespace["serve"](rfile, wfile, release)
            finally:
                rfile.close()  # (a write still blocked on the pipe ends)
                wfile.close()
        threads.append(threading.Thread(target=run, daemon=True, name="stall-server"))
        threads[-1].start()
        return to_client, from_client
    make.release = release
    yield make
    release.set()
    for thread in threads:
        thread.join(10)


@pytest.mark.parametrize("timeout", TIMEOUTS)
def test_over_the_deadline_while_writing_is_a_timeout(stalled_streams, timeout):
    c = Client.over(*stalled_streams(), protocol_version="2025-11-25")
    try:
        if timeout < DEADLINE:  # the writer thread had not begun: nothing went out, the stream is intact
            with pytest.raises(RequestTimeout):
                c.call("echo", blob=BIG, timeout=timeout)
            return
        with pytest.raises(RequestTimeout, match="stopped reading its stdin"):
            c.call("echo", blob=BIG, timeout=timeout)
        # Part of the message went out: the connection is dropped, and stays so.
        with pytest.raises(mcp_min.ConnectionClosed, match="stopped reading its stdin"):
            c.call("echo", n=1)
    finally:
        stalled_streams.release.set()  # (the write still blocked ends: close() need not wait for it)
        c.close()


def test_over_the_deadline_while_writing_a_notification_is_a_timeout(stalled_streams):
    c = Client.over(*stalled_streams(), protocol_version="2025-11-25", timeout=1.0)
    try:
        with pytest.raises(RequestTimeout, match="stopped reading its stdin"):
            c.notify("notifications/message", {"level": "info", "data": BIG})
    finally:
        stalled_streams.release.set()
        c.close()
