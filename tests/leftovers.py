#!/usr/bin/env python3
"""What of mcp_min is left in a process right after its clients closed: run one workload in a
fresh process, close (or drop) every client, and report at once -- no waiting, no polling.

    python leftovers.py WORKLOAD SERVER [COUNT]

SERVER is an http(s):// URL or a JSON argv list (a stdio server).  Workloads:
  calls     COUNT clients (default 1) at once, each makes a few calls and a submit(), then all close
  timeout   one client: a call to the tool `never` times out, a submitted one is still pending, close
  dropped   ``Client(SERVER).call("echo")`` as a one-liner: the client is dropped, not closed
            (then one gc.collect(), which a PyPy run needs to reap it)

Prints one JSON line: ``threads`` (names of live threads starting with "mcp_min"), and on Linux
``fds`` (descriptors open now that were not before the first client: "n -> target") and
``children`` (pids whose parent is this process).  It runs in its own process so that nothing
another test left behind is counted.
"""
import gc
import json
import os
import sys
import threading

sys.path.insert(0, os.environ.get("MCP_MIN_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mcp_min  # noqa: E402


def open_fds():
    """{descriptor: what it points to}; None where /proc/self/fd does not exist."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            out[name] = os.readlink("/proc/self/fd/" + name)
        except OSError:  # the descriptor listdir itself used, closed by now
            pass
    return out


def children():
    if not os.path.isdir("/proc"):
        return None
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return found


def calls(server, count):
    clients = [mcp_min.Client(server, timeout=10) for _ in range(count)]
    for c in clients:
        assert c.call("echo", x=1) == {"x": 1}
        assert c.submit("echo", {"x": 2}).result(10) == {"x": 2}
        assert c.call("echo", x=3) == {"x": 3}
    for c in clients:
        c.close()


def timeout(server, count):
    c = mcp_min.Client(server, timeout=10)
    try:
        c.call("never", timeout=0.3)
    except mcp_min.RequestTimeout:
        pass
    else:
        raise AssertionError("the call to `never` did not time out")
    c.submit("never")  # still pending at close()
    assert c.call("echo", x=1) == {"x": 1}
    c.close()


def dropped(server, count):
    assert mcp_min.Client(server, timeout=10).call("echo", x=1) == {"x": 1}
    gc.collect()


def main():
    workload, server = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if not server.startswith(("http://", "https://")):
        server = json.loads(server)
    before = open_fds()
    {"calls": calls, "timeout": timeout, "dropped": dropped}[workload](server, count)
    after = open_fds()
    report = {"threads": sorted(t.name for t in threading.enumerate() if t.name.startswith("mcp_min"))}
    if before is not None:
        report["fds"] = sorted("%s -> %s" % (n, t) for n, t in after.items() if before.get(n) != t)
        report["children"] = children()
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
