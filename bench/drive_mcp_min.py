#!/usr/bin/env python3
"""Bench driver for mcp_min (imported from the repository root)."""

import os
import sys
import threading
import time

from _common import check, clock, emit, spec

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mcp_min  # noqa: E402

cpu_clock = time.process_time


def connected(s):
    c = mcp_min.Client(s["server"], timeout=60)
    for i in range(s["warmup"]):
        check(c.call("add", a=i, b=1), i + 1)
    return c


def seq(s):
    c = connected(s)
    n = s["n"]
    call = c.call
    t0 = clock()
    for i in range(n):
        check(call("add", a=i, b=1), i + 1)
    dt = clock() - t0
    c.close()
    emit(dt, n, protocol=c.protocol_version)


def threads(s):
    c = connected(s)
    n, k = s["n"], s["threads"]
    errors = []

    def work(lo, hi):
        try:
            for i in range(lo, hi):
                check(c.call("add", a=i, b=1), i + 1)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    bounds = [n * j // k for j in range(k + 1)]
    ts = [threading.Thread(target=work, args=(bounds[j], bounds[j + 1])) for j in range(k)]
    t0 = clock()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dt = clock() - t0
    c.close()
    if errors:
        raise SystemExit(errors[0])
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


MODES = {"seq": seq, "schema": schema, "threads": threads, "pipeline": pipeline, "lifecycle": lifecycle, "http_seq": seq}

if __name__ == "__main__":
    s = spec()
    MODES[s["mode"]](s)
