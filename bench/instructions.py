#!/usr/bin/env python3
"""Instructions per HTTP (or stdio) call, counted: a figure a busy machine does not move.

    python bench/instructions.py                        # raw http.client loop and mcp_min
    python bench/instructions.py --baseline /tmp/base   # also /tmp/base/mcp_min.py
    python bench/instructions.py --calls 600
    python bench/instructions.py --stdio                # over a pipe: raw loop, reader-thread floor, mcp_min

CPU time per call is what bench.py reports, but on a shared machine it moves by more than the
differences it is meant to show (the raw loop's own CPU per call varied 144-308 µs between rounds
minutes apart).  This counts instead the user-space instructions each client executes per
sequential ``add`` call over Streamable HTTP to ``examples/calc.py --http 0``, with valgrind's
callgrind: each driver (``drive_raw.py`` / ``drive_mcp_min.py``, mode http_seq) runs twice, with
50 and with 50 + CALLS timed calls (after the same warm-up), and the difference of the two totals
÷ CALLS is the count per call -- start-up, imports and warm-up cancel out (each driver runs once
first, outside valgrind, so that no run compiles mcp_min.py: its bytecode is cached).  ``PYTHONHASHSEED=0``
keeps dict and set layouts the same from run to run; repeats then agree within about 1 %.
With ``--stdio`` the calls go to bench/stub_server.py over a pipe (mode seq), and the raw
loop's reader-thread pipe (drive_raw.py's handoff mode, the floor of one reader thread and a
latch per call) is counted too; the last column is then the excess over that floor.
Needs valgrind; the kernel's share (system calls) is not counted.
"""

import argparse
import json
import os
import re
import subprocess
import sys

from bench import BENCH, CHILD_ENV, ROOT, STUB, start_calc, stop


def driver_spec(mode, server, n, warmup):
    return json.dumps({"mode": mode, "server": server, "n": n, "warmup": warmup, "threads": 8})


def total(driver, mode, server, n, env):
    """User-space instructions of one driver run of ``n`` timed calls."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          os.path.join(BENCH, driver), driver_spec(mode, server, n, 100)],
                         capture_output=True, text=True, cwd=ROOT, env=env)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or not found:
        raise SystemExit("%s failed: %s" % (driver, (out.stderr.strip().splitlines() or ["?"])[-1]))
    return int(found.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=300, help="the calls counted (default 300)")
    ap.add_argument("--baseline", metavar="DIR", help="also DIR/mcp_min.py, as \"mcp_min (base)\"")
    ap.add_argument("--stdio", action="store_true", help="calls over a pipe to bench/stub_server.py instead")
    args = ap.parse_args()
    env = dict(CHILD_ENV, PYTHONHASHSEED="0")
    mode = "seq" if args.stdio else "http_seq"
    runs = [("raw loop", "drive_raw.py", mode, env)]
    if args.stdio:
        runs.append(("reader-thread floor", "drive_raw.py", "handoff", env))
    runs.append(("mcp_min", "drive_mcp_min.py", mode, env))
    if args.baseline:
        runs.append(("mcp_min (base)", "drive_mcp_min.py", mode,
                     dict(env, BENCH_MCP_MIN_DIR=os.path.abspath(args.baseline))))
    proc, server = (None, STUB) if args.stdio else start_calc()
    try:
        for _, driver, m, e in runs:  # once untimed, outside valgrind: compiles and caches the bytecode
            subprocess.run([sys.executable, os.path.join(BENCH, driver), driver_spec(m, server, 1, 1)],
                           capture_output=True, cwd=ROOT, env=e, check=True)
        counts = {name: (total(driver, m, server, 50 + args.calls, e) - total(driver, m, server, 50, e))
                  / float(args.calls) for name, driver, m, e in runs}
    finally:
        stop(proc)
    under = "reader-thread floor" if args.stdio else "raw loop"
    floor = counts[under]
    print("| client | instructions per %s call | above the %s |\n|---|---|---|"
          % ("stdio" if args.stdio else "HTTP", under))
    for name, _, _, _ in runs:
        over = counts[name] - floor
        print("| %s | %.1fk | %s |" % (name, counts[name] / 1e3, "—" if name in ("raw loop", under) else
                                       "+%.1fk (%+.1f %%)" % (over / 1e3, over / floor * 100)))


if __name__ == "__main__":
    main()
