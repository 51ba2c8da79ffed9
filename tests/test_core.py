"""The pure layers of mcp_min, in memory: no process, no socket.

JSON-RPC encoding and routing, futures, SSE parsing, header rules, version choice,
tool values, argument checks, and the session (negotiation, input rounds, repeats)
over an in-memory transport whose "server" is a Python function.
"""
import copy
import json
import os
import pickle
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mcp_min  # noqa: E402
from mcp_min import McpError, RequestError  # noqa: E402

META = "io.modelcontextprotocol/"


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("params", [
    None, {}, {"a": 1}, {"name": "x", "arguments": {"s": "Zürich 東京 😀"}},
    {"_meta": {"progressToken": 7}, "x": [1, 2]}, {"nested": {"_meta": 1}}, {"s": "\u2028\u2029\n"},
])
@pytest.mark.pure
def test_stateless_encoding_equals_plain_encoding_plus_meta(params):
    era = mcp_min._Era("2026-07-28", True, {"roots": {}}, {"name": "t", "version": "1"})
    msg = mcp_min._message("tools/call", params, 5)
    line = era.encode(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # one line, whatever the text
    sent = json.loads(line)
    expected = dict(params or {})
    expected["_meta"] = dict((params or {}).get("_meta") or {}, **era._meta)
    assert sent == {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": expected}


@pytest.mark.pure
def test_handshake_era_encoding_is_plain_and_utf8():
    line = mcp_min._Era().encode(mcp_min._message("tools/call", {"s": "東京"}, 1))
    assert "東京".encode("utf-8") in line  # not \\u escapes: a third of the size
    assert json.loads(line)["params"] == {"s": "東京"}


@pytest.mark.pure
def test_lone_surrogates_still_make_valid_json():
    for era in (mcp_min._Era(), mcp_min._Era("2026-07-28", True, {}, {})):
        line = era.encode(mcp_min._message("m", {"s": "a\ud800b"}, 1))
        assert json.loads(line)["params"]["s"] == "a\ud800b"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), {"x": [1, float("nan")]}])
@pytest.mark.pure
def test_nan_and_infinity_are_refused(value):
    for era in (mcp_min._Era(), mcp_min._Era("2026-07-28", True, {}, {})):
        with pytest.raises(ValueError, match="NaN and Infinity"):
            era.encode(mcp_min._message("m", {"v": value}, 1))


@pytest.mark.pure
def test_decode_refuses_what_would_kill_a_reader():
    with pytest.raises(ValueError):
        mcp_min._decode(b"[" * 100000)
    with pytest.raises(ValueError):
        mcp_min._decode(b"\xff\xfe")
    assert mcp_min._decode(b'{"a":"\xe2\x80\xa8"}') == {"a": "\u2028"}


# ---------------------------------------------------------------------------
# Timeouts
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    (mcp_min._DEFAULT, "default"), (None, None), (float("inf"), None), (2, 2.0), (0.25, 0.25),
    (1e12, mcp_min.LONGEST_WAIT), (0, 0.0), (-1, 0.0), (-1e-9, 0.0), (float("-inf"), 0.0),
])
@pytest.mark.pure
def test_timeout_arguments(value, expected):
    # Python's conventions: 0 and less mean "no time left" (an immediate RequestTimeout, nothing sent).
    assert mcp_min._timeout_arg(value, "default") == expected


@pytest.mark.parametrize("value", [float("nan"), True, False, "5", [1]])
@pytest.mark.pure
def test_bad_timeout_arguments(value):
    with pytest.raises(ValueError, match="timeout"):
        mcp_min._timeout_arg(value)


# ---------------------------------------------------------------------------
# Routing and futures
# ---------------------------------------------------------------------------

def make_dispatcher():
    seen = {"requests": [], "notifications": []}
    d = mcp_min._Dispatcher(seen["requests"].append, lambda m, p: seen["notifications"].append((m, p)))
    return d, seen


def settle(fut, answer):
    if isinstance(answer, Exception):
        raise answer
    return answer


def withdraw(d):
    def end(fut, error):
        if d.withdraw(fut.id) is None:
            return False
        fut._put(error)
        return True
    return end


def pending(d, method="m", timeout=5.0):
    fut = mcp_min.Future(d.next_id(), method, {}, timeout, None, settle, withdraw(d))
    d.add(fut)
    return fut


@pytest.mark.pure
def test_dispatcher_routes_answers_requests_notifications_and_batches():
    d, seen = make_dispatcher()
    a, b = pending(d), pending(d)
    d.receive([{"jsonrpc": "2.0", "id": b.id, "result": {"n": 2}},
               {"jsonrpc": "2.0", "id": "s1", "method": "ping"},
               {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}])
    assert b.done() and not a.done()
    assert b.result() == {"jsonrpc": "2.0", "id": b.id, "result": {"n": 2}}
    assert seen["requests"] == [{"jsonrpc": "2.0", "id": "s1", "method": "ping"}]
    assert seen["notifications"] == [("notifications/progress", {"progress": 1})]


@pytest.mark.parametrize("msg", [
    5, "x", None, {"jsonrpc": "2.0", "id": 99, "result": {}}, {"id": True, "result": {}},
    {"id": 1.0, "result": {}}, {"method": 5}, {"id": [1], "method": "ping"}, {"method": "n", "params": [1]},
])
@pytest.mark.pure
def test_dispatcher_ignores_what_it_cannot_route(msg):
    d, seen = make_dispatcher()
    fut = pending(d)
    d.receive(msg)
    assert not fut.done() and not seen["requests"]
    assert seen["notifications"] in ([], [("n", {})])


def test_closed_fails_pending_and_later_requests():
    d, _ = make_dispatcher()
    fut = pending(d, "tools/call")
    d.closed(mcp_min.ConnectionClosed("server 'x' exited with code 3", 3, ["boom"], "; last stderr lines: boom"))
    with pytest.raises(mcp_min.ConnectionClosed, match="exited with code 3 before answering tools/call") as info:
        fut.result()
    assert info.value.returncode == 3 and info.value.stderr == ["boom"]
    with pytest.raises(mcp_min.ConnectionClosed):
        pending(d)


def test_future_deadline_withdraws_and_a_second_result_does_not_block():
    d, _ = make_dispatcher()
    fut = pending(d, timeout=0.05)
    with pytest.raises(mcp_min.RequestTimeout):
        fut.result()
    assert not d.is_pending(fut.id)
    with pytest.raises(mcp_min.RequestTimeout):
        fut.result()  # settled once; the same outcome again


def test_deadlines_that_run_out_as_the_wait_starts_always_end_it():
    # CPython 3.8 - 3.12's timed SimpleQueue.get() can block forever when its timeout runs out
    # between its two lock attempts: a Future built on it hung once in a few thousand such
    # waits (it hung CI).  Thousands of waits at the edge of their deadline must all end.
    # (On Windows a timed wait lasts at least a clock tick, up to 15.6 ms: fewer rounds there.)
    rounds = 3000 if os.name == "posix" else 300
    d, _ = make_dispatcher()
    outcomes = []

    def edge_waits():
        for i in range(rounds):
            for timeout in (0.0, 1e-6, 1e-5):
                fut = pending(d, timeout=timeout)
                try:
                    fut.result()
                except mcp_min.RequestTimeout:
                    outcomes.append("deadline")
                late = pending(d)
                try:
                    late.result(timeout)
                except mcp_min.RequestTimeout:
                    outcomes.append("local")
                d.withdraw(late.id)

    worker = threading.Thread(target=edge_waits, daemon=True)
    worker.start()
    worker.join(60)  # bounds a failure only: the loop takes well under a second when correct
    assert not worker.is_alive(), "a wait outlived its deadline after %d waits" % len(outcomes)
    assert outcomes.count("deadline") == outcomes.count("local") == 3 * rounds


def test_future_result_from_many_threads_settles_once():
    d, _ = make_dispatcher()
    settled = []
    fut = mcp_min.Future(d.next_id(), "m", {}, 5.0, None, lambda f, a: settled.append(a) or len(settled),
                         withdraw(d))
    d.add(fut)
    out = []
    threads = [threading.Thread(target=lambda: out.append(fut.result())) for _ in range(8)]
    for t in threads:
        t.start()
    d.receive({"jsonrpc": "2.0", "id": fut.id, "result": {}})
    for t in threads:
        t.join(5)
    assert out == [1] * 8 and len(settled) == 1


def test_local_wait_does_not_cancel():
    d, _ = make_dispatcher()
    fut = pending(d)
    with pytest.raises(mcp_min.RequestTimeout, match="still waiting"):
        fut.result(0)
    assert d.is_pending(fut.id)
    d.receive({"jsonrpc": "2.0", "id": fut.id, "result": {"ok": 1}})
    assert fut.result()["result"] == {"ok": 1}


# ---------------------------------------------------------------------------
# Server-sent events (WHATWG rules)
# ---------------------------------------------------------------------------

def sse(*lines):
    parser, events = mcp_min._SseParser(), []
    for line in lines:
        events.extend(parser.feed(line))
    return parser, events


@pytest.mark.pure
def test_sse_events_fields_and_line_ends():
    parser, events = sse(b"data: a\n", b"data:b\r\n", b"\n", b": comment\n", b"event: endpoint\n",
                         b"data: /x\n", b"id: 7\n", b"retry: 1500\n", b"\r\n", b"id: only\n", b"\n",
                         b"data: c\rdata: d\r\r")
    assert events == [("message", "a\nb"), ("endpoint", "/x"), ("message", "c\nd")]
    assert parser.last_id == "only" and parser.retry_ms == 1500


@pytest.mark.pure
def test_sse_ignores_bad_fields():
    parser, events = sse(b"retry: soon\n", b"id: a\0b\n", b"unknown: x\n", b"data\n", b"\n")
    assert parser.retry_ms is None and parser.last_id is None
    assert events == [("message", "")] or events == []


@pytest.mark.pure
def test_sse_oversized_event_is_dropped_not_buffered(monkeypatch):
    monkeypatch.setattr(mcp_min, "MAX_MESSAGE_BYTES", 100)
    parser, events = sse(*([b"data: " + b"x" * 30 + b"\n"] * 10 + [b"\n", b"data: ok\n", b"\n"]))
    assert events == [("message", "ok")]
    assert parser._size == 0 and parser._data is None


# Framing (issue 26, item 4): the parser is fed a stream's bytes as they arrive, so a line may
# end in CR, LF or CRLF, and a line end (a CRLF too) may fall between two pieces.

SSE_STREAM = (b"\xef\xbb\xbf: a comment after the BOM\r\n"
              b"retry: 1500\r"
              b"id: 1\n"
              b"event: endpoint\r\n"  # (a CRLF read as two line ends would end the event here)
              b"data: /x\r"
              b"\r"
              b"data\n"  # a field without a colon: an empty data line
              b"data:  one space stripped\r\n"
              b"data:no space\n"
              b"id: 2\r\n"
              b"\n"
              b"event: no data, never dispatched\r"
              b"id: 3\r"
              b"\r\n"
              b"id: a\0b\n"  # an id with NUL is ignored
              b"retry: 12x\rretry: -5\rretry: \xd9\xa1\rretry:\r"  # retry: ASCII digits only
              b"data: \xc3\xa9\r\n"
              b"\r"
              b"id: 4\ndata: never ended\n")  # no blank line: not dispatched, its id not taken
SSE_EXPECTED = ([("endpoint", "/x"), ("message", "\n one space stripped\nno space"), ("message", "\u00e9")], "3", 1500)


def sse_pieces(pieces):
    parser, events = sse(*pieces)
    return events, parser.last_id, parser.retry_ms


@pytest.mark.pure
def test_sse_line_ends_of_every_kind_wherever_the_pieces_split():
    assert sse_pieces([SSE_STREAM]) == SSE_EXPECTED
    for i in range(1, len(SSE_STREAM)):
        assert sse_pieces([SSE_STREAM[:i], SSE_STREAM[i:]]) == SSE_EXPECTED, "split at %d" % i
    assert sse_pieces([SSE_STREAM[i:i + 1] for i in range(len(SSE_STREAM))]) == SSE_EXPECTED


@pytest.mark.pure
def test_sse_bom_only_at_the_start_of_each_stream():
    parser, events = sse(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n")  # a second BOM belongs to the field name
    assert events == []
    parser.end_stream()  # a reconnect: its stream may start with a BOM of its own
    assert parser.feed(b"\xef\xbb") + parser.feed(b"\xbfdata: b\r\r") == [("message", "b")]


@pytest.mark.pure
def test_sse_what_an_ended_stream_left_unfinished_is_discarded():
    parser, events = sse(b"id: 1\ndata: a\n\nid: 2\ndata: b\r\ndata: unfini")
    parser.end_stream()
    assert events == [("message", "a")] and parser.last_id == "1"  # a resumption asks for event 2 again
    assert parser.feed(b"shed\n\ndata: c\n\n") == [("message", "c")]  # not "b\nc", nor "unfinished"
    assert parser.last_id == "1"
    assert parser.feed(b"id:\n\n") == [] and parser.last_id is None  # an empty id: no Last-Event-ID


@pytest.mark.pure
def test_sse_retry_of_thousands_of_digits():
    parser, _ = sse(b"retry: " + b"9" * 5000 + b"\n")  # (int() refuses 4300 digits on 3.11+)
    assert parser.retry_ms / 1000.0 > mcp_min.SSE_RETRY_CAP
    parser, _ = sse(b"retry: " + b"0" * 5000 + b"25\r")
    assert parser.retry_ms == 25


@pytest.mark.pure
def test_sse_cr_framing_stays_bounded(monkeypatch):
    monkeypatch.setattr(mcp_min, "MAX_MESSAGE_BYTES", 100)
    parser = mcp_min._SseParser()
    for _ in range(1000):  # a line that never ends is dropped as it grows
        assert parser.feed(b"x" * 30) == []
        assert len(parser._lines._pending) <= 100
    for _ in range(100):  # a stream of lone CRs: blank lines, nothing kept
        assert parser.feed(b"\r" * 1000) == []
        assert len(parser._lines._pending) == 0 and parser._data is None
    assert parser.feed(b"data: ok\r\r") == [("message", "ok")]  # and the stream goes on
    for _ in range(10):  # an event of many CR-ended data lines: dropped at the limit
        assert parser.feed(b"data: " + b"y" * 30 + b"\r") == []
        assert sum(len(part) for part in parser._data or ()) <= 100
    assert parser.feed(b"\rdata: ok\r\r") == [("message", "ok")]


@pytest.mark.pure
def test_sse_an_oversized_line_inside_one_piece_is_dropped_with_its_event(monkeypatch):
    """Any field's line, not only data: the one line framing (_LineSplitter) bounds it as stdio's."""
    monkeypatch.setattr(mcp_min, "MAX_MESSAGE_BYTES", 100)
    parser = mcp_min._SseParser()
    assert parser.feed(b"event: " + b"e" * 100 + b"\rdata: lost\r\rdata: ok\r\r") == [("message", "ok")]


@pytest.mark.pure
def test_sse_many_short_data_lines_are_kept_in_few_pieces():
    """The limit counts an event's bytes; kept as one object each, 2-byte lines would cost some
    40 times that."""
    parser = mcp_min._SseParser()
    for _ in range(100):
        assert parser.feed(b"data: ab\r" * 1000) == []
    assert len(parser._data) <= 5
    assert parser.feed(b"\r") == [("message", "\n".join(["ab"] * 100000))]


# ---------------------------------------------------------------------------
# Stdio line framing (_LineSplitter, fed bytes as a pipe gives them)
# ---------------------------------------------------------------------------

def split(chunks, limit=100):
    drops = []
    splitter = mcp_min._LineSplitter(limit, lambda: drops.append(1))
    lines = []
    for chunk in chunks:
        lines.extend(splitter.feed(chunk))
    return lines, splitter.finish(), len(drops)


@pytest.mark.pure
def test_lines_split_across_chunks_come_out_whole():
    lines, rest, drops = split([b'{"a":', b'1}\n{"b"', b":2}\n{", b'"c":3}\n'])
    assert lines == [b'{"a":1}', b'{"b":2}', b'{"c":3}'] and rest == b"" and drops == 0


@pytest.mark.pure
def test_one_byte_at_a_time():
    data = b'{"a":1}\r\n\n{"b":2}\n'
    lines, rest, drops = split([data[i:i + 1] for i in range(len(data))])
    assert lines == [b'{"a":1}\r', b"", b'{"b":2}'] and rest == b"" and drops == 0


@pytest.mark.pure
def test_crlf_and_empty_lines_are_returned_as_they_are():
    lines, _, _ = split([b'{"a":1}\r\n\r\n\n{"b":2}\r\n'])
    assert lines == [b'{"a":1}\r', b"\r", b"", b'{"b":2}\r']


@pytest.mark.pure
def test_an_oversized_line_is_dropped_and_the_next_one_arrives():
    big = b"x" * 250
    lines, rest, drops = split([big[:90], big[90:180], big[180:] + b"\n" + b'{"ok":1}\n'])
    assert [line for line in lines if line] == [b'{"ok":1}'] and drops == 1


@pytest.mark.pure
def test_an_oversized_line_inside_one_chunk_is_dropped():
    lines, _, drops = split([b"y" * 101 + b'\n{"ok":1}\n'])
    assert [line for line in lines if line] == [b'{"ok":1}'] and drops == 1


@pytest.mark.pure
def test_an_oversized_line_is_not_buffered_while_it_grows():
    drops = []
    splitter = mcp_min._LineSplitter(100, lambda: drops.append(1))
    for _ in range(1000):
        assert splitter.feed(b"z" * 64) == []
    assert len(splitter._pending) == 0 and drops == [1]
    assert splitter.feed(b'z\n{"ok":1}\n') == [b'{"ok":1}']


@pytest.mark.parametrize("size, kept", [(100, True), (101, False)])
@pytest.mark.pure
def test_a_line_split_exactly_at_the_limit(size, kept):
    line = b"k" * size
    lines, _, drops = split([line[:50], line[50:], b"\n", b'{"next":1}\n'])
    assert [x for x in lines if x] == ([line] if kept else []) + [b'{"next":1}']
    assert drops == (0 if kept else 1)


@pytest.mark.pure
def test_the_last_line_without_a_line_end_is_kept_at_eof():
    lines, rest, drops = split([b'{"a":1}\n{"b":', b"2}"])
    assert lines == [b'{"a":1}'] and rest == b'{"b":2}' and drops == 0
    _, rest, drops = split([b"w" * 150])
    assert rest == b"" and drops == 1


# ---------------------------------------------------------------------------
# Headers, versions, tool values, commands
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, header", [
    ("eu-west", "eu-west"), (True, "true"), (42, "42"), ("Zürich", "=?base64?WsO8cmljaA==?="),
    (" padded", "=?base64?IHBhZGRlZA==?="), ("a\nb", "=?base64?YQpi?="), ("=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?="),
])
@pytest.mark.pure
def test_header_value_encoding(value, header):
    assert mcp_min._header_value(value) == header


@pytest.mark.parametrize("schema, found", [
    ({"properties": {"r": {"type": "string", "x-mcp-header": "Region"}}}, [(("r",), "Region")]),
    ({"properties": {"o": {"type": "object", "properties": {"d": {"type": "boolean", "x-mcp-header": "D"}}}}},
     [(("o", "d"), "D")]),
    ({"properties": {"n": {"type": "number", "x-mcp-header": "N"}}}, "of type"),
    ({"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}},
     "used twice"),
    ({"properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}}, "not a valid header name"),
    ({"properties": {"xs": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}, "not reachable"),
    ({"properties": 5}, []),
])
@pytest.mark.pure
def test_x_mcp_header_markings(schema, found):
    tool = {"name": "t", "inputSchema": dict(schema, type="object")}
    if isinstance(found, str):
        with pytest.raises(ValueError, match=found):
            mcp_min._param_headers(tool)
    else:
        assert mcp_min._param_headers(tool) == found


@pytest.mark.pure
def test_param_headers_follow_the_table():
    era = mcp_min._Era("2026-07-28", True, {}, {})
    era.tool_headers = {"route": [(("region",), "Region"), (("o", "dry"), "Dry")]}
    assert era.param_headers({"name": "route", "arguments": {"region": "eu", "o": {"dry": False}}}) == {
        "Mcp-Param-Region": "eu", "Mcp-Param-Dry": "false"}
    assert era.param_headers({"name": "route", "arguments": {"o": 5}}) == {}
    assert era.param_headers({"name": "other"}) is None


@pytest.mark.parametrize("supported, chosen", [
    (["2026-07-28", "2025-11-25"], "2026-07-28"), (["2025-06-18", "2024-11-05"], "2025-06-18"),
    (["1999-01-01", "2024-11-05"], "2024-11-05"), ([5, None, "2025-03-26"], "2025-03-26"),
])
@pytest.mark.pure
def test_version_choice(supported, chosen):
    assert mcp_min._choose_version(supported) == chosen


@pytest.mark.pure
def test_no_version_in_common():
    with pytest.raises(McpError, match="no protocol version in common"):
        mcp_min._choose_version(["1999-01-01"])


@pytest.mark.parametrize("result, value", [
    ({"content": [], "structuredContent": {"result": 5}}, 5),
    ({"content": [], "structuredContent": {"a": 1, "b": 2}}, {"a": 1, "b": 2}),
    ({"content": [], "structuredContent": [1, 2]}, [1, 2]),
    ({"content": [{"type": "text", "text": "hi"}]}, "hi"),
    ({"content": [{"type": "image", "data": "x"}]}, [{"type": "image", "data": "x"}]),
    ({}, []),
])
@pytest.mark.pure
def test_tool_values(result, value):
    assert mcp_min._tool_value(result) == value


@pytest.mark.parametrize("result", [{"content": 5}, {"content": "text"}, {"content": {"a": 1}}])
@pytest.mark.pure
def test_malformed_tool_results_are_mcp_errors(result):
    with pytest.raises(McpError, match="content"):
        mcp_min._tool_value(result)


@pytest.mark.pure
def test_tool_error_carries_the_text_and_result():
    result = {"isError": True, "content": [{"type": "text", "text": "bad"}, {"type": "text", "text": 5}, 7]}
    with pytest.raises(mcp_min.ToolError, match="bad\n5") as info:
        mcp_min._tool_value(result)
    assert info.value.result is result


@pytest.mark.parametrize("headers, problem", [
    ({"Authorization": "Bearer tok\n"}, None), ({"Bad Name": "x"}, "not a valid"), ({"X": "a\r\nb"}, "line break"),
    ({"X": 5}, "must be a string"),
])
@pytest.mark.pure
def test_caller_headers_are_checked_and_never_echo_values(headers, problem):
    if problem is None:
        assert mcp_min._clean_headers(headers) == {"Authorization": "Bearer tok"}
        return
    with pytest.raises(ValueError, match=problem) as info:
        mcp_min._clean_headers(headers)
    assert "a\r\nb" not in str(info.value)


@pytest.mark.parametrize("sid, ok", [("abc-123", True), ("a b", False), ("", False), ("é", False), ("x\n", False)])
@pytest.mark.pure
def test_session_ids_must_be_visible_ascii(sid, ok):
    assert mcp_min._valid_session_id(sid) is ok


@pytest.mark.pure
def test_every_exception_pickles_and_copies_with_its_attributes():
    samples = [
        mcp_min.McpError("m"), RequestError(-32602, "bad", {"x": 1}, "tools/call"),
        mcp_min.ResourceNotFound(-32002, "gone", None, "resources/read"), mcp_min.ToolError("t", {"isError": True}),
        mcp_min.ConnectionClosed("dead", 3, ["a"], "; tail"), mcp_min.RequestTimeout("late"),
        mcp_min._no_answer("tools/call", 1.0),
        mcp_min.RequestCancelled("no"), mcp_min.HttpError("http://x", 502, "body", "for m"),
        mcp_min.AuthRequired("http://x", 401, "", {"scope": "a b", "resource_metadata": "http://m"}),
        mcp_min.AuthError("oauth", "invalid_grant", "expired"),
        RequestError(-32601, "Method not found", None, "resources/list"),
    ]
    mcp_min._hinted(samples[-1], "the server does not offer resources; it offers: tools")  # (a hint, pickled too)
    for error in samples:
        for twin in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
            assert type(twin) is type(error) and str(twin) == str(error)
            assert vars(twin) == vars(error)
    assert isinstance(samples[5], TimeoutError)
    assert pickle.loads(pickle.dumps(samples[6])).method == "tools/call"
    assert pickle.loads(pickle.dumps(samples[-1])).hint == "the server does not offer resources; it offers: tools"


@pytest.mark.parametrize("method,capabilities,hint", [
    ("resources/list", {"tools": {}}, "the server does not offer resources; it offers: tools"),
    ("resources/templates/list", {"tools": {}, "experimental": {}, "logging": {}},
     "the server does not offer resources; it offers: logging, tools"),
    ("completion/complete", {}, "the server does not offer completions; it offers: nothing beyond the basics"),
    ("prompts/get", {"tools": {}, "prompts": {}}, None),  # declared: -32601 has another cause
    ("ping", {"tools": {}}, None),  # no capability to name
    ("no/such", {}, None),
    (None, {}, None),
])
def test_not_offered_names_the_missing_capability(method, capabilities, hint):
    assert mcp_min._not_offered(method, capabilities) == hint


# ---------------------------------------------------------------------------
# The session over an in-memory transport
# ---------------------------------------------------------------------------

class MemoryTransport(mcp_min._Transport):
    """A transport whose server is ``serve(msg) -> list of messages`` called inline."""

    kind = "memory"
    name = "memory server"

    def __init__(self, serve):
        self.serve = serve
        self.sent = []
        self.era = []

    def configure(self, version, modern):
        self.era.append((version, modern))

    def send(self, msg, data, deadline=None, wait_here=False, headers=None):
        self.sent.append(json.loads(data))
        for out in self.serve(json.loads(data)) or ():
            self._router.receive(out)

    def close(self, grace=mcp_min.CLOSE_GRACE):
        pass


def session_with(serve, **kwargs):
    transports = []

    def make(events):
        transports.append(MemoryTransport(serve))
        return transports[-1]

    session = mcp_min._Session(make, **kwargs)
    session.connect()
    return session, transports


def modern_server(tools_call=None):
    def serve(msg):
        method, params = msg.get("method"), msg.get("params") or {}
        if "id" not in msg:
            return []
        if params.get("_meta", {}).get(META + "protocolVersion") != "2026-07-28":
            return [{"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32022, "message": "version"}}]
        if method == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}
        elif method == "tools/call":
            result = tools_call(params)
        else:
            return [{"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}]
        return [{"jsonrpc": "2.0", "id": msg["id"], "result": result}]
    return serve


def legacy_server(msg):
    if msg.get("method") == "server/discover":
        return [{"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}]
    if msg.get("method") == "initialize":
        return [{"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "old"}}}]
    if msg.get("method") == "tools/call":
        return [{"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [], "structuredContent": {"ok": 1}}}]
    return []


@pytest.mark.pure
def test_negotiation_modern_in_memory():
    session, (transport,) = session_with(modern_server())
    assert session.protocol_version == "2026-07-28" and session.modern
    assert transport.era[-1] == ("2026-07-28", True)
    assert [m["method"] for m in transport.sent] == ["server/discover"]


@pytest.mark.pure
def test_negotiation_falls_back_to_the_handshake_in_memory():
    session, (transport,) = session_with(legacy_server)
    assert session.protocol_version == "2025-06-18" and not session.modern
    assert [m.get("method") for m in transport.sent] == ["server/discover", "initialize", "notifications/initialized"]
    assert transport.era[-1] == ("2025-06-18", False)
    assert "_meta" not in transport.sent[1]["params"]


@pytest.mark.pure
def test_input_rounds_in_memory_echo_state_and_use_new_ids():
    def tools_call(params):
        if "inputResponses" not in params:
            return {"resultType": "input_required", "requestState": "s1",
                    "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "?",
                                                                                         "requestedSchema": {}}}}}
        return {"resultType": "complete", "content": [], "structuredContent": {
            "got": params["inputResponses"], "state": params.get("requestState")}}

    session, (transport,) = session_with(modern_server(tools_call),
                                         elicitation=lambda p: {"action": "accept", "content": {"n": 1}})
    value = session.request("tools/call", {"name": "t", "arguments": {}},
                            finish=lambda fut, result: mcp_min._tool_value(result))  # finish(future, result)
    assert value == {"got": {"who": {"action": "accept", "content": {"n": 1}}}, "state": "s1"}
    calls = [m for m in transport.sent if m["method"] == "tools/call"]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]


@pytest.mark.parametrize("answer, problem", [
    ({"resultType": "input_required", "inputRequests": [1]}, "inputRequests"),
    ({"resultType": "mystery"}, "resultType 'mystery'"),
    ({"resultType": "input_required", "inputRequests": {"k": {"method": "sampling/createMessage"}}}, "cannot give"),
])
@pytest.mark.pure
def test_malformed_rounds_are_mcp_errors(answer, problem):
    session, _ = session_with(modern_server(lambda params: answer))
    with pytest.raises(McpError, match=problem):
        session.request("tools/call", {"name": "t"})


@pytest.mark.pure
def test_array_params_are_refused_not_corrupted():
    session, (transport,) = session_with(modern_server())
    before = len(transport.sent)
    with pytest.raises(ValueError, match="params must be a dict"):
        session.submit("x", [1, 2])
    assert len(transport.sent) == before and not session.dispatcher._pending


def test_a_failing_send_settles_the_future():
    class Broken(MemoryTransport):
        def send(self, msg, data, deadline=None, wait_here=False, headers=None):
            if msg.get("method") == "tools/call":
                raise RuntimeError("bug in a transport")
            MemoryTransport.send(self, msg, data, deadline, wait_here, headers)

    session = mcp_min._Session(lambda events: Broken(legacy_server))
    session.connect()
    fut = session.submit("tools/call", {"name": "t"})
    with pytest.raises(mcp_min.ConnectionClosed, match="bug in a transport"):
        fut.result()
    assert not session.dispatcher._pending


@pytest.mark.parametrize("result", [{"tools": 5}, {"tools": [], "nextCursor": [1]}, {"tools": [], "ttlMs": 10 ** 400}])
@pytest.mark.pure
def test_malformed_lists(result):
    def serve(msg):
        if msg.get("method") == "tools/list":
            return [{"jsonrpc": "2.0", "id": msg["id"], "result": dict(result, resultType="complete")}]
        return modern_server()(msg)

    session, _ = session_with(serve)
    if "ttlMs" in result:
        assert session.list_all("tools/list", "tools") == []  # a huge TTL is just "long"
    else:
        with pytest.raises(McpError):
            session.list_all("tools/list", "tools")




def test_subscription_map_and_list_cache_are_safe_across_threads(monkeypatch):
    """The reader ends a listen (its answer came) while a user thread closes it; the reader drops
    a cached list while a user thread fills it.  These once raced (a check-then-pop without a lock)."""
    failures = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))

    class Sub(object):
        def __init__(self):
            self.ended = []

        def _end(self, error):
            self.ended.append(error)

    d, _ = make_dispatcher()
    cache = mcp_min._Cache()
    subs = []
    for i in range(300):
        sub = Sub()
        subs.append(sub)
        fut = mcp_min.Future(d.next_id(), "subscriptions/listen", {}, None, None, settle, withdraw(d))
        d.add(fut, sub)
        threads = [threading.Thread(target=d.receive, args=({"jsonrpc": "2.0", "id": fut.id, "result": {}},)),
                   threading.Thread(target=d.unsubscribe, args=(sub,)),
                   threading.Thread(target=cache.put, args=(("tools/list", None), [i], 60000, "private", None)),
                   threading.Thread(target=cache.drop, args=("tools/list",)),
                   threading.Thread(target=cache.get, args=(("tools/list", None), None))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert fut.done()
    assert failures == []
    assert all(len(s.ended) <= 1 for s in subs) and d.subscriptions() == []


# ---------------------------------------------------------------------------
# What an HTTP error shows of its body: one line; a web page by its title
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("body,shown", [
    ('<!DOCTYPE HTML>\n<html lang="en">\n<head>\n<title>Error\n response</title>\n</head>\n<body><h1>501</h1>\n</body>'
     '</html>\n', ': an HTML page titled "Error response"'),
    ("<html><body>Bad <b>gateway</b></body></html>", ': an HTML page: "Bad gateway"'),
    ("<html><head><style>p {}</style></head><body></body></html>", ": an HTML page"),
    ('{"error":\n  "missing Mcp-Session-Id"}\n', ': {"error": "missing Mcp-Session-Id"}'),
    ("x" * 400, ": " + "x" * 300 + "... (100 more characters)"),
    ("", ""),
])
@pytest.mark.pure
def test_an_http_error_shows_one_line_of_its_body(body, shown):
    error = mcp_min.HttpError("http://127.0.0.1:9/mcp", 501, body, "for initialize")
    assert str(error) == "HTTP 501 for initialize from http://127.0.0.1:9/mcp" + shown
    assert "\n" not in str(error) and error.body == body  # (the whole body stays on the exception)


def test_results_are_claimed_and_checked_only_by_addons_that_define_those_hooks(monkeypatch):
    # (every tools/call result passes through claim and check: add-ons that watch the method
    # without defining a hook are not asked, and a method nobody claims gets no claim at all)
    asked = []

    class Claims(mcp_min._Extension):
        watches = ("tools/call",)

        def claim(self, fut, result):
            asked.append(("claim", fut.method))
            return None

    class Checks(mcp_min._Extension):
        watches = ("tools/call", "prompts/get")

        def check(self, method, params, result):
            asked.append(("check", method))

    class OnlyWatches(mcp_min._Extension):
        watches = ("tools/call", "resources/read")

    monkeypatch.setattr(mcp_min, "_EXTENSIONS", [Claims, Checks, OnlyWatches])
    exts = mcp_min._Extensions(None)
    assert set(exts.watching) == {"tools/call", "prompts/get", "resources/read"}
    assert set(exts.claiming) == {"tools/call"}
    assert [type(e) for e in exts.claiming["tools/call"]] == [Claims]

    class Fut(object):
        method = "tools/call"
    assert exts.claim(Fut(), {}) is None
    exts.check("tools/call", None, {})
    exts.check("prompts/get", None, {})
    exts.check("resources/read", None, {})
    assert asked == [("claim", "tools/call"), ("check", "tools/call"), ("check", "prompts/get")]
