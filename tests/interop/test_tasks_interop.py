"""Tasks and URL-mode elicitation against real peers.

- server-everything@2026.8.31 (2025-11-25, tasks in the core protocol): ``simulate-research-query``
  (execution.taskSupport "required", 4 stages of 1 s, pollInterval 1000 ms) over stdio and
  Streamable HTTP: through ``call()`` (with status via ``progress``, and the ambiguous variant
  whose task asks for input), through the handle (``start()``, ``status()``, ``result()``),
  cancelled, and a call whose deadline passes; ``trigger-url-elicitation`` both ways
  (elicitation/create in URL mode, and -32042 then a retry).
- FastMCP 4.1.4 + fastmcp-tasks 4.1.4 (2026-07-28, the io.modelcontextprotocol/tasks extension,
  in-memory backend; tests/interop/fastmcp_tasks_server.py) over stdio and Streamable HTTP: a
  task-required tool through ``call()``, one that needs input (answered with tasks/update), a
  tool error, a cancel, a deadline, and (HTTP) re-attaching from a second client.

The task work overlaps (threads), so the whole module takes about 25 s.
"""

import threading
import time

import pytest

import mcp_min
import peers

ANSWER = {"action": "accept", "content": {"interpretation": "snake"}}


class Statuses(object):
    def __init__(self):
        self.messages = []

    def __call__(self, done, total, message):
        self.messages.append(message)


def in_thread(fn, *args, **kwargs):
    """Run ``fn`` on a thread; returns a getter for its result (or raised error)."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as e:  # handed back to the test
            box["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()

    def get():
        t.join(60)
        assert not t.is_alive()
        if "error" in box:
            raise box["error"]
        return box["value"]
    return get


# ---------------------------------------------------------------------------
# server-everything, 2025-11-25
# ---------------------------------------------------------------------------

@pytest.fixture(params=["stdio", "streamable-http"])
def everything(request):
    missing = peers.npm_missing()
    if missing:
        pytest.skip(missing)
    if request.param == "stdio":
        target = peers.everything_stdio_argv()
    else:
        target = request.getfixturevalue("everything_http_url")
    asked, urls = [], []

    def elicitation(params):
        asked.append(params)
        return ANSWER

    def url_elicitation(params):
        urls.append(params)
        return {"action": "accept"}

    with mcp_min.Client(target, timeout=20, elicitation=elicitation, url_elicitation=url_elicitation) as c:
        c.asked, c.urls = asked, urls
        yield c


def test_everything_research_query_as_a_task(everything):
    c = everything
    assert c.protocol_version == "2025-11-25"
    assert c.server_capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
    seen = Statuses()
    start = time.monotonic()
    # call(): the one-liner, with task status through progress
    plain = in_thread(c.call, "simulate-research-query", topic="owls", progress=seen)
    # call() on a task that needs input: the elicitation arrives through tasks/result, tagged
    ambiguous = in_thread(c.call, "simulate-research-query", topic="python", ambiguous=True)
    # a deadline: the task is cancelled when the call's timeout passes
    late = in_thread(c.call, "simulate-research-query", topic="slow", timeout=1.0)
    # the handle
    task = c.start("simulate-research-query", topic="bees")
    state = task.status()
    assert state["status"] == "working" and state["pollInterval"] == 1000 and state["taskId"] == task.id
    doomed = c.start("simulate-research-query", topic="wasps")
    assert doomed.cancel() is True
    assert doomed.status()["status"] == "cancelled"
    with pytest.raises(mcp_min.RequestCancelled):
        doomed.result()
    assert doomed.cancel() is False  # ended already: the server answers -32602

    assert plain().startswith("# Research Report: owls")
    assert "# Research Report: python (snake)" in ambiguous()
    with pytest.raises(mcp_min.RequestTimeout, match="task cancelled"):
        late()
    assert task.result().startswith("# Research Report: bees")
    assert task.status()["status"] == "completed"
    assert time.monotonic() - start < 15  # four 4-second tasks, followed at once
    assert seen.messages[0].startswith("task working") and seen.messages[-1].startswith("task completed")
    assert "task working: Analyzing content..." in seen.messages
    related = c.asked[0]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
    assert isinstance(related, str) and c.asked[0]["requestedSchema"]["properties"]["interpretation"]


def test_everything_url_elicitation_both_ways(everything):
    c = everything
    names = {t["name"] for t in c.list_tools(refresh=True)}
    assert "trigger-url-elicitation" in names  # registered because we declared elicitation.url
    url = "https://example.com/connect?from=mcp_min"
    got = c.call("trigger-url-elicitation", url=url, elicitationId="req-path")
    assert c.urls[-1]["url"] == url and c.urls[-1]["mode"] == "url" and c.urls[-1]["elicitationId"] == "req-path"
    assert got  # the tool reports the user's action
    before = len(c.urls)
    c.call("trigger-url-elicitation", url=url, elicitationId="err-path", errorPath=True)
    # -32042 listed the URL (callback once), the retry went the request path (callback again)
    assert len(c.urls) == before + 2 and c.urls[before + 1]["url"] == url
    assert c.urls[before]["url"].startswith("https://")  # the server's own prerequisite link


def test_everything_url_elicitation_required_without_a_callback():
    missing = peers.npm_missing()
    if missing:
        pytest.skip(missing)
    urls = []
    with mcp_min.Client(peers.everything_stdio_argv(), timeout=20,
                        url_elicitation=lambda p: urls.append(p) or {"action": "decline"}) as c:
        with pytest.raises(mcp_min.UrlElicitationRequired) as info:
            c.call("trigger-url-elicitation", url="https://example.com/x", errorPath=True)
    assert info.value.code == -32042 and info.value.elicitations[0]["mode"] == "url"
    assert urls[0]["url"] == info.value.elicitations[0]["url"]
    assert len(urls) == 1  # the user declined: no retry


# ---------------------------------------------------------------------------
# FastMCP + fastmcp-tasks, 2026-07-28
# ---------------------------------------------------------------------------

@pytest.fixture(params=["stdio", "streamable-http"])
def fastmcp_target(request):
    missing = peers.fastmcp_tasks_missing()
    if missing:
        pytest.skip(missing)
    if request.param == "stdio":
        return peers.fastmcp_tasks_stdio_argv()
    return request.getfixturevalue("fastmcp_tasks_http_url")


def test_fastmcp_tasks_extension(fastmcp_target):
    asked = []

    def elicitation(params):
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    # probe_timeout: the FastMCP stack takes seconds to import before it answers server/discover
    with mcp_min.Client(fastmcp_target, timeout=20, probe_timeout=30, elicitation=elicitation) as c:
        assert c.protocol_version == "2026-07-28"
        assert "io.modelcontextprotocol/tasks" in c.server_capabilities["extensions"]
        seen = Statuses()
        assert c.call("brew", minutes=4, progress=seen) == "brewed for 4 minutes"
        assert seen.messages[0] == "task working" and seen.messages[-1] == "task completed"
        assert c.call("greet") == "Hello, Ada!"  # input_required -> tasks/update -> completed
        assert asked[0]["message"] == "What is your name?"
        with pytest.raises(mcp_min.ToolError, match="this tool always fails"):
            c.call("broken")
        task = c.start("nap", s=30)
        assert task.status()["status"] == "working"
        assert task.cancel() is True
        assert peers.wait_for(lambda: task.status()["status"] == "cancelled", 10)
        with pytest.raises(mcp_min.RequestCancelled):
            task.result()
        start = time.monotonic()
        with pytest.raises(mcp_min.RequestTimeout, match="task cancelled"):
            c.call("nap", s=30, timeout=1.0)
        assert time.monotonic() - start < 10
        if c.transport == "streamable-http":  # the server keeps tasks across connections
            task_id = c.start("brew", minutes=2).id
            with mcp_min.Client(fastmcp_target, timeout=20) as later:
                assert later.task(task_id).result() == "brewed for 2 minutes"
