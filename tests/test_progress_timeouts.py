"""Timeouts that follow progress: call(..., timeout=T, reset_on_progress=True, max_total=M).

The in-process server (tests/inproc_server.py) sends a progress notification every ``gap``
seconds; the margins (a gap of 0.4 s against a window of 1.5 s) are wide, so load cannot
decide an outcome."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from inproc_server import Server, serve_in_thread  # noqa: E402
from mcp_min import Client, RequestTimeout  # noqa: E402

STEPS = {"steps": 6, "gap": 0.4}  # 2.4 s of work, never silent for more than 0.4 s


@pytest.fixture(params=["auto", "2025-11-25"])
def client(request):
    reader, writer, _ = serve_in_thread(Server())
    with Client.over(reader, writer, protocol_version=request.param) as c:
        yield c


def test_progress_keeps_a_call_alive_past_its_timeout(client):
    seen = []
    assert client.call("progress", STEPS, timeout=1.5, reset_on_progress=True,
                       progress=lambda p, t, m: seen.append(p)) == "done"
    assert seen == [1, 2, 3, 4, 5, 6]  # the caller's callback still gets every one
    # without a callback of its own, the call still asks for progress (a progressToken)
    assert client.call("progress", STEPS, timeout=1.5, reset_on_progress=True) == "done"
    assert client.submit("progress", STEPS, timeout=1.5, reset_on_progress=True).result() == "done"


def test_without_reset_the_timeout_is_the_whole_call(client):
    with pytest.raises(RequestTimeout, match="within 1.5 s"):
        client.call("progress", STEPS, timeout=1.5)


def test_max_total_still_bounds_it(client):
    with pytest.raises(RequestTimeout):
        client.call("progress", STEPS, timeout=1.5, reset_on_progress=True, max_total=1.6)
    assert client.call("add", a=1, b=2) == 3  # the client is fine afterwards


def test_silence_ends_it(client):
    with pytest.raises(RequestTimeout):
        client.call("sleep", s=3, timeout=0.5, reset_on_progress=True)


def test_raw_requests_too(client):
    result = client.request("tools/call", {"name": "progress", "arguments": STEPS}, timeout=1.5,
                            reset_on_progress=True)
    assert result["structuredContent"] == {"result": "done"}


def test_bad_combinations(client):
    with pytest.raises(ValueError, match="reset_on_progress"):
        client.call("add", a=1, b=2, max_total=5)
    with pytest.raises(ValueError, match="max_total"):
        client.call("add", a=1, b=2, reset_on_progress=True, max_total=-1)


# -- tasks: a status change counts as progress (tests/task_server.py) -------------------

TASK_SERVER = os.path.join(HERE, "task_server.py")


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_a_task_whose_status_keeps_changing_outlives_the_timeout(tmp_path, version):
    import json
    argv = [sys.executable, TASK_SERVER, json.dumps({"log": str(tmp_path / "log.jsonl")})]
    work = {"s": 2.4, "every": 0.4, "poll_ms": 100}
    with Client(argv, protocol_version="auto" if version == "2026-07-28" else version) as c:
        assert c.call("work", work, timeout=1.5, reset_on_progress=True) == {"slept": 2.4}
        with pytest.raises(RequestTimeout, match="task cancelled"):
            c.call("work", work, timeout=1.5)  # without reset: the whole task within 1.5 s
        with pytest.raises(RequestTimeout, match="task cancelled"):  # a silent task still ends
            c.call("work", {"s": 4, "poll_ms": 100}, timeout=1.0, reset_on_progress=True)
        with pytest.raises(RequestTimeout):
            c.call("work", work, timeout=1.5, reset_on_progress=True, max_total=1.8)
        fut = c.submit("work", work, timeout=1.5, reset_on_progress=True)  # followed on a thread of its own
        assert fut.result() == {"slept": 2.4}


def test_over_http_the_stream_stays_open_while_progress_comes():
    """Streamable HTTP: the transport's own deadline is the total, so the connection is not
    cut at the first timeout; a silent call is still cut (its stream closed) at its timeout."""
    from inproc_server import serve_http
    server = Server(sse=True)
    url, stop = serve_http(server)
    try:
        for version in ("auto", "2025-11-25"):
            with Client(url, protocol_version=version) as c:
                assert c.call("progress", STEPS, timeout=1.5, reset_on_progress=True) == "done"
                with pytest.raises(RequestTimeout):
                    c.call("progress", STEPS, timeout=1.5)
                with pytest.raises(RequestTimeout):
                    c.call("sleep", s=3, timeout=0.5, reset_on_progress=True)
                assert c.call("add", a=1, b=2) == 3
    finally:
        stop()
