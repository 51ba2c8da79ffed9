#!/usr/bin/env python3
"""Where mcp_min's time goes on the stdio hot path: cProfile of sequential calls.

    python bench/profile_stdio.py [CALLS]               # default 2000, sequential calls
    python bench/profile_stdio.py --pipeline [CALLS]    # submit all, then collect
    BENCH_MCP_MIN_DIR=/tmp/base python bench/profile_stdio.py   # profile /tmp/base/mcp_min.py

Profiles both threads that work per call -- the caller (``Client.call``) and the
transport's reader thread -- against bench/stub_server.py, and prints for each
the CPU time per call and the top functions by own time.  The reader thread is
profiled by wrapping ``_StdioTransport._read_loop`` here, at run time; mcp_min
itself is not modified.
"""

import cProfile
import os
import pstats
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("BENCH_MCP_MIN_DIR") or os.path.dirname(BENCH))
import mcp_min  # noqa: E402

PIPELINE = "--pipeline" in sys.argv
_args = [a for a in sys.argv[1:] if a != "--pipeline"]
N = int(_args[0]) if _args else 2000
STUB = [sys.executable, os.path.join(BENCH, "stub_server.py")]
reader_prof = cProfile.Profile()
reader_cpu = [0.0]
_orig_read_loop = mcp_min._StdioTransport._read_loop


def _profiled_read_loop(self, *args):
    t0 = time.thread_time()
    reader_prof.enable()
    try:
        return _orig_read_loop(self, *args)
    finally:
        reader_prof.disable()
        reader_cpu[0] = time.thread_time() - t0


def python_calls(prof):
    """Calls of functions written in Python (mcp_min's and the standard library's), not builtins."""
    return sum(nc for (fn, line, name), (cc, nc, tt, ct, _) in pstats.Stats(prof).stats.items() if fn != "~")


def top(prof, title, calls, limit=14):
    st = pstats.Stats(prof)
    rows = sorted(st.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:limit]
    print("\n%s -- top functions by own time (µs per call of the workload)" % title)
    print("  %8s %8s %9s  %s" % ("own µs", "cum µs", "ncalls", "function"))
    for (fn, line, name), (cc, nc, tt, ct, _) in rows:
        where = "%s:%d" % (os.path.basename(fn), line) if line else fn
        print("  %8.1f %8.1f %9d  %s %s" % (tt / calls * 1e6, ct / calls * 1e6, nc, name, where))


def workload(c):
    if PIPELINE:
        for f in [c.submit("add", a=i, b=1) for i in range(N)]:
            f.result()
    else:
        for i in range(N):
            c.call("add", a=i, b=1)


def main():
    # Unprofiled timing first, for reference.
    c = mcp_min.Client(STUB)
    for i in range(100):
        c.call("add", a=i, b=1)
    t0 = time.perf_counter()
    workload(c)
    plain = (time.perf_counter() - t0) / N * 1e6
    c.close()

    mcp_min._StdioTransport._read_loop = _profiled_read_loop
    c = mcp_min.Client(STUB)
    for i in range(100):
        c.call("add", a=i, b=1)
    main_prof = cProfile.Profile()
    w0, m0 = time.perf_counter(), time.thread_time()
    main_prof.enable()
    workload(c)
    main_prof.disable()
    wall = (time.perf_counter() - w0) / N * 1e6
    main_cpu = (time.thread_time() - m0) / N * 1e6
    c.close()
    print("mcp_min %s (%s), %d %s stdio calls to bench/stub_server.py" % (
        mcp_min.__version__, mcp_min.__file__, N, "pipelined (submit all, then collect)" if PIPELINE else "sequential"))
    print("  without profiler: %.0f µs/call wall" % plain)
    print("  with profiler:    %.0f µs/call wall, caller thread CPU %.0f µs/call, reader thread CPU "
          "(whole connection, incl. warm-up) %.0f µs/call" % (wall, main_cpu, reader_cpu[0] / (N + 100) * 1e6))
    print("  Python-level calls per call: caller thread %.1f, reader thread %.1f" % (
        python_calls(main_prof) / N, python_calls(reader_prof) / (N + 100)))
    top(main_prof, "caller thread (Client.call)", N)
    top(reader_prof, "reader thread (_read_loop, whole connection)", N + 100)


if __name__ == "__main__":
    main()
