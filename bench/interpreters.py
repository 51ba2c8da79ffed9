#!/usr/bin/env python3
"""mcp_min over Streamable HTTP under every interpreter on this machine: time per call and peak RSS.

    python bench/interpreters.py                     # every interpreter found, 300 calls each
    python bench/interpreters.py -n 1000 --python 3.8 --python 3.11 --python pypy3
    python bench/interpreters.py --module /path/to/other/mcp_min.py     # e.g. before/after a change

One server, `examples/calc.py --http 0`, runs under this (the default) interpreter on a free
127.0.0.1 port for the whole run, so only the client side changes. Each interpreter runs a child
process that imports mcp_min, connects, makes --warmup untimed calls, then N sequential `add`
calls, each timed on its own and checked; it reports:

  - µs/call: the median of the N calls (p90 beside it);
  - peak RSS: VmHWM of the child at the end (Linux; ru_maxrss elsewhere), i.e. the most memory the
    process ever held, interpreter included (a bare interpreter's own VmHWM is shown beside it);
  - alloc/call (CPython only): the peak of Python allocations traced by tracemalloc during one
    extra call, which shows the size of any buffer a call allocates (e.g. 64 MiB when
    http.client's read(amt) preallocates bytearray(amt), as on 3.8 and 3.9).

Interpreters: --python NAME_OR_PATH (repeatable; 3.8 finds pyenv's 3.8.x, then python3.8 on the
PATH; pypy3 finds pypy3), default: 3.8 - 3.13 and pypy3, whichever exist. Standard library only.
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALC = os.path.join(ROOT, "examples", "calc.py")
DEFAULT_PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "pypy3"]

# Runs in the child under the interpreter being measured (so: Python 3.8 syntax, stdlib only).
CHILD = r'''
import json, os, sys, time
module_dir, url, n, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, module_dir)

def peak_rss_kb():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak   # bytes on macOS, KiB elsewhere

bare_kb = peak_rss_kb()
import mcp_min
clock = time.perf_counter
with mcp_min.Client(url, timeout=60) as c:
    for i in range(warmup):
        assert c.call("add", a=i, b=1) == i + 1
    times = []
    for i in range(n):
        t0 = clock()
        value = c.call("add", a=i, b=2)
        times.append(clock() - t0)
        assert value == i + 2, value
    rss_kb = peak_rss_kb()
    alloc = None
    if sys.implementation.name == "cpython":
        import tracemalloc
        tracemalloc.start()  # the peak is counted from here
        base = tracemalloc.get_traced_memory()[0]
        assert c.call("add", a=1, b=1) == 2
        alloc = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    protocol = c.protocol_version
print(json.dumps({"times": times, "rss_kb": rss_kb, "bare_kb": bare_kb, "alloc": alloc,
                  "protocol": protocol, "module": os.path.abspath(mcp_min.__file__)}))
'''


def find_python(name):
    """A runnable interpreter for a name like '3.8' or 'pypy3', or a path; None if absent."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return name if os.path.exists(name) else None
    candidates = []
    if re.match(r"^3\.\d+$", name):
        pyenv = os.environ.get("PYENV_ROOT") or os.path.join(os.path.expanduser("~"), ".pyenv")
        found = glob.glob(os.path.join(pyenv, "versions", name + ".*", "bin", "python" + name))
        found.sort(key=lambda p: [int(x) for x in re.findall(r"\d+", os.path.basename(os.path.dirname(os.path.dirname(p))))])
        candidates += found[::-1]
        name = "python" + name
    exe = shutil.which(name)
    if exe and os.sep + "shims" + os.sep not in exe:   # pyenv shims refuse unselected versions
        candidates.append(exe)
    for exe in candidates:
        try:
            subprocess.run([exe, "-c", "pass"], check=True, timeout=60,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return exe
        except (OSError, subprocess.SubprocessError):
            continue
    return None


def describe(exe):
    code = ("import platform, sys; v = platform.python_version(); "
            "print(('PyPy %d.%d.%d (Python ' % sys.pypy_version_info[:3] + v + ')') "
            "if hasattr(sys, 'pypy_version_info') else 'CPython ' + v)")
    return subprocess.run([exe, "-c", code], stdout=subprocess.PIPE, check=True,
                          universal_newlines=True, timeout=60).stdout.strip()


def start_calc():
    """examples/calc.py --http 0 under this interpreter; returns (process, url)."""
    proc = subprocess.Popen([sys.executable, CALC, "--http", "0"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            return proc, m.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("examples/calc.py --http 0 did not report its address")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=300, help="timed calls per interpreter (default 300)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed calls first (default 20)")
    ap.add_argument("--python", action="append", help="an interpreter (name or path); repeatable")
    ap.add_argument("--module", default=os.path.join(ROOT, "mcp_min.py"), help="the mcp_min.py to measure")
    ap.add_argument("--json", help="also write every sample to this file")
    args = ap.parse_args(argv)
    module_dir = os.path.dirname(os.path.abspath(args.module))
    if os.path.basename(args.module) != "mcp_min.py":
        raise SystemExit("--module must name a file called mcp_min.py")

    server, url = start_calc()
    rows, samples = [], {}
    try:
        for name in args.python or DEFAULT_PYTHONS:
            exe = find_python(name)
            if exe is None:
                rows.append((name, "not found", "", "", "", "", ""))
                continue
            version = describe(exe)
            t0 = time.monotonic()
            done = subprocess.run([exe, "-c", CHILD, module_dir, url, str(args.n), str(args.warmup)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                  timeout=1800)
            wall = time.monotonic() - t0
            if done.returncode != 0:
                tail = (done.stderr.strip().splitlines() or ["?"])[-1]
                rows.append((name, version, "FAILED: " + tail[:80], "", "", "", ""))
                continue
            out = json.loads(done.stdout.strip().splitlines()[-1])
            samples[name] = dict(out, version=version, exe=exe, wall_s=wall)
            times = sorted(out["times"])
            median = statistics.median(times) * 1e6
            p90 = times[int(len(times) * 0.9) - 1] * 1e6
            rows.append((name, version, "%.0f" % median, "%.0f" % p90, "%.1f" % (out["rss_kb"] / 1024.0),
                         "%.1f" % (out["bare_kb"] / 1024.0),
                         "-" if out["alloc"] is None else ("%.1f MiB" % (out["alloc"] / 1048576.0) if out["alloc"] >= 1048576
                                                     else "%.0f KiB" % (out["alloc"] / 1024.0))))
    finally:
        server.kill()
        server.wait()

    first = next(iter(samples.values()), None)
    print("mcp_min %s over Streamable HTTP to examples/calc.py --http (server: %s), %d calls after %d warm-up%s"
          % (args.module, describe(sys.executable), args.n, args.warmup,
             ", protocol %s" % first["protocol"] if first else ""))
    header = ("interpreter", "version", "µs/call (median)", "p90 µs", "peak RSS MiB", "bare interp. MiB",
              "alloc/call (tracemalloc)")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header, tuple("-" * w for w in widths)] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(samples, f, indent=1)
    return 0 if all(r[2] and not r[2].startswith("FAILED") for r in rows if r[1] != "not found") else 1


if __name__ == "__main__":
    sys.exit(main())
