#!/usr/bin/env python3
"""Bench driver for mcp_min (imported from the repository root, or from the directory in
$BENCH_MCP_MIN_DIR: bench.py --baseline DIR sets it for its "mcp_min (base)" column).

big: ``call("big")`` (a BIG_TEXT_BYTES text result, its whole text returned) and this
process's peak memory growth over those calls.  first_value: the HTTP requests sent
from ``Client(url)`` to the value of a first ``call("add", a=1, b=2)``, counted by
wrapping ``http.client.HTTPConnection.request`` in this process (the class every
HTTP request of mcp_min goes through; mcp_min itself is not touched).  close: ``close()``
after one call, per server, one server at a time (drive_raw.py's close: the server's own exit
time).  hundred: 100 clients in one process: ``Client(...)`` each, one call each, ``close()``
each, the three phases timed.
"""

import os
import sys
import time

from _common import check, clock, emit, in_threads, reset_peak_kb, spec, vm_hwm_kb
from stub_server import BIG_PATTERN, BIG_TEXT_BYTES

sys.path.insert(0, os.environ.get("BENCH_MCP_MIN_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mcp_min  # noqa: E402

cpu_clock = time.process_time


def connected(s):
    c = mcp_min.Client(s["server"], timeout=60)
    for i in range(s["warmup"]):
        check(c.call("add", a=i, b=1), i + 1)
    return c


def seq(s):
    """Sequential calls: wall time, and this process's CPU time per call (``cpu_us``: all its
    threads, the caller's and any of mcp_min's; the HTTP client-CPU row subtracts the raw loop's)."""
    c = connected(s)
    n = s["n"]
    call = c.call
    c0, t0 = cpu_clock(), clock()
    for i in range(n):
        check(call("add", a=i, b=1), i + 1)
    dt, cpu = clock() - t0, cpu_clock() - c0
    c.close()
    emit(dt, n, protocol=c.protocol_version, cpu_us=cpu / n * 1e6)


def threads(s):
    c = connected(s)
    n, k = s["n"], s["threads"]
    dt = in_threads(n, k, lambda i: check(c.call("add", a=i, b=1), i + 1))
    c.close()
    emit(dt, n)


def pipeline(s):
    c = connected(s)
    n = s["n"]
    submit = c.submit
    t0 = clock()
    futures = [submit("add", a=i, b=1) for i in range(n)]
    for i, f in enumerate(futures):
        check(f.result(), i + 1)
    dt = clock() - t0
    c.close()
    emit(dt, n)


def close(s):
    spent = 0.0
    for i in range(s["n"]):
        c = mcp_min.Client(s["server"], timeout=60)
        check(c.call("add", a=i, b=1), i + 1)
        t0 = clock()
        c.close()
        spent += clock() - t0
    emit(spent, s["n"])


def hundred(s):
    t0 = clock()
    clients = [mcp_min.Client(s["server"], timeout=60) for _ in range(s["n"])]
    t1 = clock()
    for i, c in enumerate(clients):
        check(c.call("add", a=i, b=1), i + 1)
    t2 = clock()
    for c in clients:
        c.close()
    emit(None, connect_s=t1 - t0, call_s=t2 - t1, close_s=clock() - t2)


def lifecycle(s):
    t0 = clock()
    c = mcp_min.Client(s["server"], timeout=60)
    c.list_tools()
    check(c.call("add", a=2, b=3), 5)
    c.close()
    emit(clock() - t0)


def schema(s):
    """Calls of a tool whose outputSchema is checked and of one without, alternating, each timed
    on its own (so both see the same machine); the same structured result comes back.  Wall
    time, and this process's CPU time (all its threads), which a busy machine disturbs less."""
    c = connected(s)
    c.list_tools()  # outputs are checked against the schemas of a tools/list already read
    n, call = s["n"], c.call
    for i in range(s["warmup"]):
        call("point", a=i, b=1)
        call("point_plain", a=i, b=1)
    spent = {"point": 0.0, "point_plain": 0.0}
    cpu = {"point": 0.0, "point_plain": 0.0}
    for i in range(n):
        for name in ("point", "point_plain") if i % 2 else ("point_plain", "point"):
            c0, t0 = cpu_clock(), clock()
            value = call(name, a=i, b=3)
            spent[name] += clock() - t0
            cpu[name] += cpu_clock() - c0
            check(value["x"], i)
    c.close()
    emit(spent["point"], n, plain_us=spent["point_plain"] / n * 1e6, cpu_us=cpu["point"] / n * 1e6,
         plain_cpu_us=cpu["point_plain"] / n * 1e6)


def check_big(text):
    check(len(text), BIG_TEXT_BYTES)
    check(text[:len(BIG_PATTERN)] + text[-len(BIG_PATTERN):], BIG_PATTERN * 2)


def big(s):
    """Sequential calls of ``big``, each value dropped before the next call; the peak is
    counted from the resident set after connecting, over one untimed call and n timed ones
    (the same as drive_raw.py's)."""
    c = mcp_min.Client(s["server"], timeout=60)
    check(c.call("add", a=1, b=2), 3)
    base = reset_peak_kb()
    call = c.call
    check_big(call("big"))  # untimed: the stub encodes its answer once, on the first call
    n = s["n"]
    dt = 0.0
    for _ in range(n):
        t0 = clock()
        text = call("big")
        dt += clock() - t0
        check_big(text)
        text = None
    peak = vm_hwm_kb()
    c.close()
    emit(dt, n, message_bytes=BIG_TEXT_BYTES, peak_growth_kb=None if base is None else peak - base)


def _rpc_method(body):
    """The JSON-RPC method of a request body (\"answer\" for a response, \"?\" for no JSON)."""
    import json
    try:
        msg = json.loads(bytes(body))
    except (TypeError, ValueError):
        return "?"
    msgs = msg if isinstance(msg, list) else [msg]
    return "+".join(m.get("method") or "answer" if isinstance(m, dict) else "?" for m in msgs)


def first_value(s):
    import http.client
    sent = []
    real = http.client.HTTPConnection.request

    def counting(self, method, url, body=None, headers={}, **kw):
        sent.append([method, _rpc_method(body) if body is not None else "-"])
        return real(self, method, url, body, headers, **kw)

    http.client.HTTPConnection.request = counting  # (HTTPSConnection inherits it)
    try:
        t0 = clock()
        c = mcp_min.Client(s["server"], timeout=60)
        check(c.call("add", a=1, b=2), 3)
        dt = clock() - t0
        requests = list(sent)
    finally:
        http.client.HTTPConnection.request = real
    c.close()
    emit(dt, posts=sum(1 for method, _ in requests if method == "POST"), requests=requests)


MODES = {"seq": seq, "schema": schema, "threads": threads, "pipeline": pipeline, "lifecycle": lifecycle, "http_seq": seq,
         "http_threads": threads, "big": big, "close": close, "hundred": hundred, "first_value": first_value}

if __name__ == "__main__":
    s = spec()
    MODES[s["mode"]](s)
