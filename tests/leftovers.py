#!/usr/bin/env python3
"""What of mcp_min is left in a process right after its clients closed: run one workload in a
fresh process, close (or drop) every client, and report at once -- no waiting, no polling.

    python leftovers.py WORKLOAD SERVER [COUNT]

SERVER is an http(s):// URL, a JSON argv list (a stdio server), or "pipes:" / "socket:" and a
JSON argv list: ``Client.over`` a server this script starts on two pipes / one end of a
socketpair (reaped after the threads are read: it is this script's, not mcp_min's).  Workloads:
  calls     COUNT clients (default 1) at once, each makes a few calls and a submit(), then all close
  timeout   one client: a call to the tool `never` times out, a submitted one is still pending, close
  dropped   ``Client(SERVER).call("echo")`` as a one-liner: the client is dropped, not closed
            (then one gc.collect(), which a PyPy run needs to reap it)
  group     a Group of two servers at SERVER: a call, list_tools, close
  answering a server request (hold_ask: sampling) whose callback still runs when close() begins
  answering-on  the same, the callback outliving close()'s wait (released after the report's threads)
  settling  a submitted call answered input_required (2026-07-28: the tool ``ask_input``, see
            tests/test_close_leaves_nothing.py) whose elicitation callback still runs at close()
  task      SERVER is tests/task_server.py: a call that became a task, then a submitted one
            still followed (its poll interval 20 s) at close()
  stuck     ("pipes:" / "socket:") the server stops (SIGSTOP) and a call's 8 MiB write blocks
            past its deadline; then close()
  oauth-ok, oauth-denied, oauth-timeout
            SERVER is ignored: tests/test_oauth.py's OAuthWorld, set up before the descriptors
            are counted; the login goes through the loopback listener with a browser that leaves
            idle connections (a preconnect, a kept-alive one) and approves, denies, or never
            comes back (the flow's wait runs out)

Prints one JSON line: ``threads`` (names of live threads starting with "mcp_min"),
``close_seconds`` (the longest close()), ``warnings`` (what mcp_min logged), and on Linux
``fds`` (descriptors open now that were not before the first client: "n -> target") and
``children`` (pids whose parent is this process).  It runs in its own process so that nothing
another test left behind is counted.
"""
import gc
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.environ.get("MCP_MIN_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # (testsupport; not always there)
import mcp_min  # noqa: E402
from testsupport import processes  # noqa: E402


def open_fds():
    """{descriptor: what it points to}; None where /proc/self/fd does not exist.  A shared library
    is left out: the dynamic loader holds one open only while it maps it, and glibc loads
    libgcc_s.so.1 the first time a thread exits, maybe while we look (seen once in ten loaded runs:
    '3 -> .../libgcc_s.so.1').  mcp_min opens no library itself."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + name)
        except OSError:  # the descriptor listdir itself used, closed by now
            continue
        if not re.search(r"\.so(\.[0-9]+)*$", target):
            out[name] = target
    return out


def children():
    table = processes()
    return None if table is None else [pid for pid, (_, ppid, _) in table.items() if ppid == os.getpid()]


HELPERS = []  # servers this script started for Client.over: reaped once the threads are read
CLOSE_SECONDS = [0.0]  # the longest close()
AFTER = []  # what to undo once the threads are read (a stopped server, a browser's sockets)


def connect(server, **options):
    """A Client of SERVER (see the docstring); ``options`` are Client's."""
    if not isinstance(server, tuple):
        return mcp_min.Client(server, **options)
    how, argv = server
    if how == "pipes":
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        HELPERS.append(proc)
        return mcp_min.Client.over(proc.stdout, proc.stdin, **options)
    ours, theirs = socket.socketpair()
    proc = subprocess.Popen(argv, stdin=theirs, stdout=theirs)
    theirs.close()
    HELPERS.append(proc)
    return mcp_min.Client.over(ours, **options)


def close(client):
    start = time.monotonic()
    client.close()
    CLOSE_SECONDS[0] = max(CLOSE_SECONDS[0], time.monotonic() - start)


def wait_until(predicate, what, timeout=10.0):
    """Poll a condition another thread makes true (never a sleep for correctness)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.01)


def calls(server, count):
    clients = [connect(server, timeout=10) for _ in range(count)]
    for c in clients:
        assert c.call("echo", x=1) == {"x": 1}
        assert c.submit("echo", {"x": 2}).result(10) == {"x": 2}
        assert c.call("echo", x=3) == {"x": 3}
    for c in clients:
        close(c)


def timeout(server, count):
    c = connect(server, timeout=10)
    try:
        c.call("never", timeout=0.3)
    except mcp_min.RequestTimeout:
        pass
    else:
        raise AssertionError("the call to `never` did not time out")
    c.submit("never")  # still pending at close()
    assert c.call("echo", x=1) == {"x": 1}
    close(c)


def dropped(server, count):
    assert connect(server, timeout=10).call("echo", x=1) == {"x": 1}
    gc.collect()


def group(server, count):
    entry = {"url": server} if isinstance(server, str) else {"command": server[0], "args": server[1:]}
    g = mcp_min.Group({"mcpServers": {"a": entry, "b": dict(entry)}}, timeout=10)
    assert not g.errors, g.errors
    assert g.call("b__echo", {"x": 1}) == {"x": 1}
    g.list_tools()  # (in parallel, as close(); a peer without tools/list moves to g.errors)
    close(g)


def answering(server, count):
    started = threading.Event()

    def sampling(params):  # a person or a model takes its time: still answering when close() begins
        started.set()
        time.sleep(0.5)
        return {"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"}
    c = connect(server, timeout=10, sampling=sampling)
    c.submit("hold_ask", {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}})
    assert started.wait(10), "the server's request never reached the callback"
    close(c)


def answering_on(server, count):
    """A sampling callback that outlives close()'s wait (released once the threads are read)."""
    started, release = threading.Event(), threading.Event()

    def sampling(params):
        started.set()
        release.wait(60)
        return {"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"}
    c = connect(server, timeout=10, sampling=sampling)
    AFTER.append(release.set)
    c.submit("hold_ask", {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}})
    assert started.wait(10), "the server's request never reached the callback"
    close(c)
    AFTER.append(lambda: wait_until(lambda: not any(t.name == "mcp_min-answer" for t in threading.enumerate()),
                                    "the callback's thread to end once released"))


def settling(server, count):
    started = threading.Event()

    def elicitation(params):  # runs on the thread that settles the submitted call
        started.set()
        time.sleep(0.5)
        return {"action": "decline"}
    c = connect(server, timeout=10, elicitation=elicitation)
    c.submit("ask_input")
    assert started.wait(10), "the input request never reached the callback"
    close(c)


def task(server, count):
    c = connect(server, timeout=10)
    assert c.call("work", s=0.05, poll_ms=20) == {"slept": 0.05}
    c.submit("work", {"s": 30, "poll_ms": 20000})
    wait_until(lambda: any(t.name.startswith("mcp_min-task") for t in threading.enumerate()), "the follower")
    close(c)


def stuck(server, count):
    c = connect(server, timeout=10)
    assert c.call("echo", x=1) == {"x": 1}
    peer = HELPERS[-1]
    os.kill(peer.pid, signal.SIGSTOP)
    AFTER.append(lambda: (os.kill(peer.pid, signal.SIGCONT), peer.kill()))
    try:
        c.call("echo", x="x" * (8 << 20), timeout=1)  # far more than a pipe or socket buffer holds
    except mcp_min.RequestTimeout:
        pass
    else:
        raise AssertionError("a write to a stopped server did not time out")
    close(c)


# -- the OAuth loopback listener, through the whole flow ----------------------------------

def oauth_world(server):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_oauth import OAuthWorld
    mcp_min.LOGIN_TIMEOUT_FACTOR = 1  # the browser step of oauth-timeout waits OAuth(timeout=) only
    return OAuthWorld()


def oauth(world, outcome):
    import http.client
    import urllib.parse
    import webbrowser
    browser = []  # the browser's own sockets: closed once the threads are read

    def open_browser(url):
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        port = urllib.parse.urlsplit(query["redirect_uri"]).port
        browser.append(socket.create_connection(("127.0.0.1", port), timeout=10))  # a preconnect, never used
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=10)  # HTTP/1.1, kept alive
        browser.append(kept)
        kept.request("GET", "/favicon.ico", headers={"Connection": "keep-alive"})
        kept.getresponse().read()
        if outcome != "timeout":  # (the redirect, on a connection of its own as browsers do)
            back = world.user()(url) if outcome == "ok" else "%s?error=access_denied&state=%s" % (
                query["redirect_uri"], urllib.parse.quote(query["state"]))
            second = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            browser.append(second)
            second.request("GET", back[back.index("/callback"):], headers={"Connection": "keep-alive"})
            second.getresponse().read()
        return True
    webbrowser.open = open_browser
    AFTER.append(lambda: [s.close() for s in browser])
    # The world's own server closes its side of each connection after its answer (HTTP/1.0), on
    # its threads: waited for, so that only mcp_min's descriptors are counted.
    AFTER.append(lambda: wait_until(lambda: not world.server._connections, "the test server's connections"))
    try:
        c = mcp_min.Client(world.url, timeout=10, auth=mcp_min.OAuth(timeout=1.0 if outcome == "timeout" else 10))
    except mcp_min.AuthError:
        assert outcome != "ok", "the login failed"
        return
    assert outcome == "ok", "a login the user %s succeeded" % ("denied" if outcome == "denied" else "left")
    assert c.call("whoami") == ""
    close(c)


WORKLOADS = {"calls": calls, "timeout": timeout, "dropped": dropped, "group": group, "answering": answering,
             "answering-on": answering_on, "settling": settling, "task": task, "stuck": stuck,
             "oauth-ok": lambda world, count: oauth(world, "ok"),
             "oauth-denied": lambda world, count: oauth(world, "denied"),
             "oauth-timeout": lambda world, count: oauth(world, "timeout")}
SETUP = {"oauth-ok": oauth_world, "oauth-denied": oauth_world, "oauth-timeout": oauth_world}


def main():
    workload, server = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if server.startswith(("pipes:", "socket:")):
        how, argv = server.split(":", 1)
        server = (how, json.loads(argv))
    elif not server.startswith(("http://", "https://")) and workload not in SETUP:
        server = json.loads(server)
    if workload in SETUP:
        server = SETUP[workload](server)
    warnings = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())
    logging.getLogger("mcp_min").addHandler(handler)
    before = open_fds()
    WORKLOADS[workload](server, count)
    report = {"threads": sorted(t.name for t in threading.enumerate() if t.name.startswith("mcp_min")),
              "close_seconds": round(CLOSE_SECONDS[0], 3), "warnings": warnings}
    for undo in AFTER:
        undo()
    for proc in HELPERS:  # Client.over's servers end at the EOF close() gave them
        proc.wait(10)
    after = open_fds()
    if before is not None:
        report["fds"] = sorted("%s -> %s" % (n, t) for n, t in after.items() if before.get(n) != t)
        report["children"] = children()
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
