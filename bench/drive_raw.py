#!/usr/bin/env python3
"""The floor: a raw JSON-RPC loop with no client library and no threads.

stdio: write one request line, read one answer line, parse it -- the least a
Python client on pipes must do per call (the request is the same 2026-07-28
form mcp_min sends: ``params._meta`` with version, capabilities, clientInfo).
pipeline: requests in bursts of WINDOW lines (one write), then WINDOW reads --
no reader thread, so a burst must fit the pipe.  http_seq: ``http.client`` on
one keep-alive connection, one POST per call (and the process's CPU time per call);
http_threads: 8 threads, each on a keep-alive connection of its own.  big: the stub's ``big`` tool (a
BIG_TEXT_BYTES text result): write the request, ``readline`` the answer line,
``json.loads`` it (the floor for one large message), and this process's peak
memory growth over those calls.

close: the server's own exit time -- after one call, stdin closed and the exit waited for
with a blocking ``os.waitpid`` (no polling), per server, one server at a time.  hundred:
100 servers in one process, each connected (the stub's ``server/discover``), then one call
each, then each closed as in close: the three phases timed.

handoff and threads: the floor of mcp_min's own design -- one reader thread that
parses every line and hands each answer to the waiting caller through a lock of
its own (the least a per-request future can be), the caller writing under a
lock.  handoff calls sequentially from one thread (so the two thread switches per
call are what it adds to ``seq``); threads shares the calls among 8 threads.
"""

import itertools
import json
import os
import subprocess
import threading
from time import process_time

from _common import check, clock, emit, in_threads, reset_peak_kb, spec, vm_hwm_kb
from stub_server import BIG_PATTERN, BIG_TEXT_BYTES

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-loop", "version": "0"}}
WINDOW = 100
_dumps = json.JSONEncoder(separators=(",", ":")).encode


def request(rid, method, params):
    p = dict(params)
    p["_meta"] = META
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}


def result_text(msg, rid):
    if msg.get("id") != rid or "result" not in msg:
        raise SystemExit("bad answer %r to %r" % (msg, rid))
    return msg["result"]["content"][0]["text"]


class Pipe(object):
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.w, self.r = self.proc.stdin, self.proc.stdout
        self.rid = 0

    def rpc(self, method, params):
        self.rid += 1
        self.w.write((_dumps(request(self.rid, method, params)) + "\n").encode())
        self.w.flush()
        msg = json.loads(self.r.readline())
        if msg.get("id") != self.rid:
            raise SystemExit("bad answer %r" % msg)
        return msg["result"]

    def call(self, a, b):
        self.rid += 1
        rid = self.rid
        self.w.write((_dumps(request(rid, "tools/call", {"name": "add", "arguments": {"a": a, "b": b}}))
                      + "\n").encode())
        self.w.flush()
        return result_text(json.loads(self.r.readline()), rid)

    def close(self):
        self.w.close()
        self.proc.wait()


class ReaderPipe(object):
    """A pipe with one reader thread and a lock per pending call: no timeouts, no checks."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.w = self.proc.stdin
        self.ids = itertools.count(1)
        self.pending = {}  # id -> [latch, answer]
        self.write_lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self.reader.start()

    def _read(self, r):
        pending = self.pending
        for line in r:
            msg = json.loads(line)
            slot = pending.pop(msg["id"])
            slot.append(msg)
            slot[0].release()

    def rpc(self, method, params):
        rid = next(self.ids)
        latch = threading.Lock()
        latch.acquire()
        slot = self.pending[rid] = [latch]
        data = (_dumps(request(rid, method, params)) + "\n").encode()
        with self.write_lock:
            self.w.write(data)
            self.w.flush()
        latch.acquire()
        return slot[1], rid

    def call(self, a, b):
        msg, rid = self.rpc("tools/call", {"name": "add", "arguments": {"a": a, "b": b}})
        return result_text(msg, rid)

    def close(self):
        self.w.close()
        self.proc.wait()
        self.reader.join()


def stdio_threads(s):
    p = ReaderPipe(s["server"])
    p.rpc("server/discover", {})
    for i in range(s["warmup"]):
        p.call(i, 1)
    n, k = s["n"], s["threads"]
    dt = in_threads(n, k, lambda i: check(p.call(i, 1), i + 1))
    p.close()
    emit(dt, n)


def stdio_seq(s, pipe=Pipe):
    p = pipe(s["server"])
    p.rpc("server/discover", {})
    for i in range(s["warmup"]):
        p.call(i, 1)
    n = s["n"]
    t0 = clock()
    for i in range(n):
        check(p.call(i, 1), i + 1)
    dt = clock() - t0
    p.close()
    emit(dt, n)


def stdio_pipeline(s):
    p = Pipe(s["server"])
    p.rpc("server/discover", {})
    n = s["n"]
    t0 = clock()
    done = 0
    while done < n:
        k = min(WINDOW, n - done)
        first = p.rid + 1
        lines = []
        for j in range(k):
            p.rid += 1
            i = done + j
            lines.append(_dumps(request(p.rid, "tools/call", {"name": "add", "arguments": {"a": i, "b": 1}})))
        p.w.write(("\n".join(lines) + "\n").encode())
        p.w.flush()
        for j in range(k):
            check(result_text(json.loads(p.r.readline()), first + j), done + j + 1)
        done += k
    dt = clock() - t0
    p.close()
    emit(dt, n, window=WINDOW)


def check_big(text):
    check(len(text), BIG_TEXT_BYTES)
    check(text[:len(BIG_PATTERN)] + text[-len(BIG_PATTERN):], BIG_PATTERN * 2)


def stdio_big(s):
    """Sequential calls of ``big``, each value dropped before the next call; the peak is
    counted from the resident set after connecting, over one untimed call and n timed ones."""
    p = Pipe(s["server"])
    p.rpc("server/discover", {})
    check(p.call(1, 2), 3)
    base = reset_peak_kb()

    def call_big():
        p.rid += 1
        p.w.write((_dumps(request(p.rid, "tools/call", {"name": "big", "arguments": {}})) + "\n").encode())
        p.w.flush()
        return result_text(json.loads(p.r.readline()), p.rid)

    check_big(call_big())  # untimed: the stub encodes its answer once, on the first call
    n = s["n"]
    dt = 0.0
    for _ in range(n):
        t0 = clock()
        text = call_big()
        dt += clock() - t0
        check_big(text)
        text = None
    peak = vm_hwm_kb()
    p.close()
    emit(dt, n, message_bytes=BIG_TEXT_BYTES, peak_growth_kb=None if base is None else peak - base)


def _exit_time(p):
    """Close stdin and wait for the exit in one blocking waitpid: how long the server takes to go."""
    t0 = clock()
    p.w.close()
    os.waitpid(p.proc.pid, 0)
    dt = clock() - t0
    p.proc.returncode = 0  # (reaped here: Popen must not wait for it again)
    p.r.close()
    return dt


def close(s):
    spent = 0.0
    for i in range(s["n"]):
        p = Pipe(s["server"])
        p.rpc("server/discover", {})
        check(p.call(i, 1), i + 1)
        spent += _exit_time(p)
    emit(spent, s["n"])


def hundred(s):
    t0 = clock()
    pipes = [Pipe(s["server"]) for _ in range(s["n"])]
    for p in pipes:
        p.rpc("server/discover", {})
    t1 = clock()
    for i, p in enumerate(pipes):
        check(p.call(i, 1), i + 1)
    t2 = clock()
    spent = sum(_exit_time(p) for p in pipes)
    emit(None, connect_s=t1 - t0, call_s=t2 - t1, close_s=spent)


def lifecycle(s):
    t0 = clock()
    p = Pipe(s["server"])
    p.rpc("server/discover", {})
    p.rpc("tools/list", {})
    check(p.call(2, 3), 5)
    p.close()
    emit(clock() - t0)


def http_rpc(url, conn, rid, method, params, name=None):
    """One POST of a request on the keep-alive connection ``conn``: its result (JSON or SSE answer)."""
    body = _dumps(request(rid, method, params)).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    conn.request("POST", url.path, body, headers)
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 200:
        raise SystemExit("HTTP %d: %r" % (resp.status, data[:300]))
    if resp.getheader("Content-Type", "").startswith("text/event-stream"):
        for line in data.split(b"\n"):
            if line.startswith(b"data:"):
                msg = json.loads(line[5:])
                if msg.get("id") == rid:
                    break
        else:
            raise SystemExit("no answer in SSE body %r" % data[:300])
    else:
        msg = json.loads(data)
    if msg.get("id") != rid or "result" not in msg:
        raise SystemExit("bad answer %r" % msg)
    return msg["result"]


def http_connection(url):
    import http.client
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)


def http_call(url, conn, rid, a, b):
    return http_rpc(url, conn, rid, "tools/call", {"name": "add", "arguments": {"a": a, "b": b}}, "add")[
        "content"][0]["text"]


def http_seq(s):
    """Sequential POSTs on one connection: wall time, and this process's CPU time over the
    timed loop (``cpu_us``, per call: the floor of the client CPU row)."""
    from urllib.parse import urlsplit
    url = urlsplit(s["server"])
    conn = http_connection(url)
    ids = itertools.count(1)
    http_rpc(url, conn, next(ids), "server/discover", {})
    http_rpc(url, conn, next(ids), "tools/list", {})
    for i in range(s["warmup"]):
        http_call(url, conn, next(ids), i, 1)
    n = s["n"]
    c0, t0 = process_time(), clock()
    for i in range(n):
        check(http_call(url, conn, next(ids), i, 1), i + 1)
    dt, cpu = clock() - t0, process_time() - c0
    conn.close()
    emit(dt, n, cpu_us=cpu / n * 1e6)


def http_threads(s):
    """The calls shared by 8 threads, each POSTing on a keep-alive connection of its own
    (opened by its first call, as a client's pool opens one per thread)."""
    from urllib.parse import urlsplit
    url = urlsplit(s["server"])
    first = http_connection(url)
    http_rpc(url, first, 0, "server/discover", {})
    for i in range(s["warmup"]):
        http_call(url, first, i + 1, i, 1)
    first.close()
    ids = itertools.count(s["warmup"] + 1)  # (next() of a count is atomic in CPython)
    local = threading.local()
    conns = []

    def call_one(i):
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http_connection(url)
            conns.append(conn)
        check(http_call(url, conn, next(ids), i, 1), i + 1)

    n = s["n"]
    dt = in_threads(n, s["threads"], call_one)
    for conn in conns:
        conn.close()
    emit(dt, n)


MODES = {"seq": stdio_seq, "pipeline": stdio_pipeline, "lifecycle": lifecycle, "http_seq": http_seq,
         "big": stdio_big, "close": close, "hundred": hundred, "handoff": lambda s: stdio_seq(s, ReaderPipe),
         "threads": stdio_threads, "http_threads": http_threads}

if __name__ == "__main__":
    s = spec()
    if s["mode"] not in MODES:
        emit(skipped="no %s mode for the raw loop" % s["mode"])
    else:
        MODES[s["mode"]](s)
