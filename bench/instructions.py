#!/usr/bin/env python3
"""Instructions per HTTP call, counted: a figure a busy machine does not move.

    python bench/instructions.py                        # raw http.client loop and mcp_min
    python bench/instructions.py --baseline /tmp/base   # also /tmp/base/mcp_min.py
    python bench/instructions.py --calls 600

CPU time per call is what bench.py reports, but on a shared machine it moves by more than the
differences it is meant to show (the raw loop's own CPU per call varied 144-308 µs between rounds
minutes apart).  This counts instead the user-space instructions each client executes per
sequential ``add`` call over Streamable HTTP to ``examples/calc.py --http 0``, with valgrind's
callgrind: each driver (``drive_raw.py`` / ``drive_mcp_min.py``, mode http_seq) runs twice, with
50 and with 50 + CALLS timed calls (after the same warm-up), and the difference of the two totals
÷ CALLS is the count per call -- start-up, imports and warm-up cancel out (each driver runs once
first, outside valgrind, so that no run compiles mcp_min.py: its bytecode is cached).  ``PYTHONHASHSEED=0``
keeps dict and set layouts the same from run to run; repeats then agree within about 1 %.
Needs valgrind; the kernel's share (system calls) is not counted.
"""

import argparse
import os
import re
import subprocess
import sys

from bench import BENCH, CHILD_ENV, ROOT, start_calc, stop


def total(driver, url, n, env):
    """User-space instructions of one driver run of ``n`` timed calls."""
    spec = '{"mode": "http_seq", "server": "%s", "n": %d, "warmup": 100, "threads": 8}' % (url, n)
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          os.path.join(BENCH, driver), spec], capture_output=True, text=True, cwd=ROOT, env=env)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or not found:
        raise SystemExit("%s failed: %s" % (driver, (out.stderr.strip().splitlines() or ["?"])[-1]))
    return int(found.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=300, help="the calls counted (default 300)")
    ap.add_argument("--baseline", metavar="DIR", help="also DIR/mcp_min.py, as \"mcp_min (base)\"")
    args = ap.parse_args()
    env = dict(CHILD_ENV, PYTHONHASHSEED="0")
    runs = [("raw loop", "drive_raw.py", env), ("mcp_min", "drive_mcp_min.py", env)]
    if args.baseline:
        runs.append(("mcp_min (base)", "drive_mcp_min.py", dict(env, BENCH_MCP_MIN_DIR=os.path.abspath(args.baseline))))
    proc, url = start_calc()
    try:
        for _, driver, e in runs:  # once untimed, outside valgrind: compiles and caches the bytecode
            subprocess.run([sys.executable, os.path.join(BENCH, driver), '{"mode": "http_seq", "server": "%s", '
                            '"n": 1, "warmup": 1, "threads": 1}' % url], capture_output=True, cwd=ROOT, env=e, check=True)
        counts = {name: (total(driver, url, 50 + args.calls, e) - total(driver, url, 50, e)) / float(args.calls)
                  for name, driver, e in runs}
    finally:
        stop(proc)
    raw = counts["raw loop"]
    print("| client | instructions per HTTP call | above the raw loop |\n|---|---|---|")
    for name, _, _ in runs:
        over = counts[name] - raw
        print("| %s | %.1fk | %s |" % (name, counts[name] / 1e3, "—" if name == "raw loop" else
                                       "+%.1fk (%+.1f %%)" % (over / 1e3, over / raw * 100)))


if __name__ == "__main__":
    main()
