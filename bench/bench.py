#!/usr/bin/env python3
"""Benchmark mcp_min against the official MCP clients and a raw-loop floor.

    python bench/bench.py            # full run (about 7 minutes on 2 cores)
    python bench/bench.py --quick    # smoke test: small counts, 2 rounds
    python bench/bench.py --baseline /tmp/base   # also /tmp/base/mcp_min.py, in the same rounds

Installs nothing.  Each client runs in its own child process, with its own
interpreter (a small driver script per client, next to this file), against the
same servers, in the same run.  Rounds are interleaved (every round runs every
workload for every client, the client order rotating from round to round) and
each figure is the median over the rounds.

Clients:
  raw      the floor: a bare JSON-RPC loop (write a line, read a line; no thread)
  mcp_min  ../mcp_min.py, with this interpreter
  mcp_min (base)  with --baseline DIR: DIR/mcp_min.py (e.g. a git worktree of an earlier commit),
           same driver and interpreter; the mcp_min column then shows its ratio to it too
  mcp      the official SDK client (mcp 2.3.0), with --mcp-python
           (default: $BENCH_MCP_PYTHON, else .cache/venv/bin/python)
  fastmcp  the FastMCP client (fastmcp 4.2.3), with --fastmcp-python
           (default: $BENCH_FASTMCP_PYTHON, else bench/.venv-fastmcp/bin/python)
A client whose interpreter is missing or cannot import it is skipped, with a note.
See bench/README.md for the one-line installs.
"""

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

from stub_server import BIG_TEXT_BYTES

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
STUB = [sys.executable, os.path.join(BENCH, "stub_server.py")]
# Children get bytecode caching back (PYTHONDONTWRITEBYTECODE would make every run of
# mcp_min.py and the drivers recompile from source, which no installed package pays).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
HEAVY_MODULES = ("urllib", "urllib.request", "http.client", "ssl", "email", "asyncio", "queue", "select")

# client -> (driver script, module imported for the import-time figure, distribution name)
CLIENTS = {
    "raw": ("drive_raw.py", None, None),
    "mcp_min": ("drive_mcp_min.py", "mcp_min", None),
    "mcp_min_base": ("drive_mcp_min.py", "mcp_min", None),  # --baseline DIR: mcp_min.py imported from DIR
    "mcp": ("drive_mcp.py", "mcp", "mcp"),
    "fastmcp": ("drive_fastmcp.py", "fastmcp", "fastmcp"),
}
# Workloads the official clients are not driven for: the 10 MiB result (raw and mcp_min) and the
# HTTP request count before a first value (mcp_min only: the raw loop sends what it is written to).
ONLY = {"handoff": ("raw",), "close": ("raw", "mcp_min", "mcp_min_base"), "hundred": ("raw", "mcp_min", "mcp_min_base"),
        "big": ("raw", "mcp_min", "mcp_min_base"), "first_value": ("mcp_min", "mcp_min_base"),
        "schema": ("mcp_min", "mcp_min_base"), "http_threads": ("raw", "mcp_min", "mcp_min_base")}
BIG_MIB = BIG_TEXT_BYTES / 1048576.0
IMPORT_STMT = {"mcp_min": "import mcp_min", "mcp_min_base": "import mcp_min", "mcp": "from mcp import Client",
               "fastmcp": "from fastmcp import Client"}
LABELS = {"raw": "raw loop", "mcp_min_base": "mcp_min (base)"}  # table heads; other clients by name
NO_BASE_RATIO = ("schema_cost", "schema_cpu_cost", "posts", "http_cpu_over")  # differences and counts: no "× base"


def log(text):
    sys.stderr.write("bench: %s\n" % text)
    sys.stderr.flush()


# ---------------------------------------------------------------- discovery
def find_python(flag, env_name, default):
    for candidate in (flag, os.environ.get(env_name), default):
        if candidate:
            path = candidate if os.path.isabs(candidate) else os.path.join(ROOT, candidate)
            if os.path.exists(path) or flag:
                return path
    return None


def probe(python, module, dist):
    """(version, None) when ``python`` can import ``module``; (None, why) otherwise."""
    if python is None or not os.path.exists(python):
        return None, "interpreter %s not found" % (python or "(none)")
    code = ("import importlib.metadata as m, %s; print(m.version(%r))" % (module, dist))
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "cannot run %s: %s" % (python, e)
    if out.returncode != 0:
        return None, "%s cannot import %s (%s)" % (python, module, (out.stderr.strip().splitlines() or ["?"])[-1])
    return out.stdout.strip(), None


def git_describe(where=ROOT):
    """The short commit of the git checkout ``where`` (and whether its mcp_min.py is modified); None
    when it is not one."""
    try:
        head = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--", "mcp_min.py"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + (" + uncommitted mcp_min.py changes" if dirty else "")


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "platform": platform.platform(), "date": time.strftime("%Y-%m-%d %H:%M %Z")}


# ---------------------------------------------------------------- servers
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_calc():
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "examples", "calc.py"), "--http", "0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=CHILD_ENV)
    line = proc.stderr.readline()
    if "listening on " not in line:
        proc.kill()
        raise RuntimeError("calc.py --http did not start: %r" % line)
    # Keep draining stderr so the server never blocks on a full pipe.
    import threading
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    return proc, line.split("listening on ", 1)[1].strip()


def start_sdk(python):
    port = free_port()
    proc = subprocess.Popen([python, os.path.join(ROOT, "tests", "interop", "sdk_server.py"), "http", str(port)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=ROOT, env=CHILD_ENV)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("sdk_server.py exited with %s" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, "http://127.0.0.1:%d/mcp" % port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("sdk_server.py did not listen on port %d within 30 s" % port)


def stop(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------- running
def run_driver(python, client, spec, timeout, env=CHILD_ENV):
    argv = [python, os.path.join(BENCH, CLIENTS[client][0]), json.dumps(spec)]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % timeout}
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        tail = (out.stderr.strip().splitlines() or ["exit code %d" % out.returncode])[-1]
        return {"error": tail[:300]}
    return json.loads(lines[-1])


def time_process(python, code, reps=1, cwd=ROOT):
    """Best-of-``reps`` wall time of ``python -c code`` (a fresh interpreter each time, in ``cwd``,
    which is first on its sys.path: ``import mcp_min`` finds cwd/mcp_min.py)."""
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run([python, "-c", code], check=True, cwd=cwd, stdout=subprocess.DEVNULL, env=CHILD_ENV)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def heavy_modules(python):
    """Which of HEAVY_MODULES ``import mcp_min`` adds to what a bare interpreter already has."""
    code = ("import sys; before = set(sys.modules); import mcp_min; "
            "print(' '.join(m for m in %r if m in sys.modules and m not in before))" % (HEAVY_MODULES,))
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60, env=CHILD_ENV)
    return out.stdout.split()


# ---------------------------------------------------------------- figures
# key -> (label, unit, field, lower_is_better)
FIGURES = [
    ("seq", "stdio sequential call", "µs/call", "per_call_us", True),
    ("handoff", "... the raw loop through one reader thread (the floor of mcp_min's design)", "µs/call",
     "per_call_us", True),
    ("threads", "stdio, 8 threads (tasks) sharing the calls", "calls/s", "calls_per_s", False),
    ("pipeline", "stdio pipelined from one thread", "calls/s", "calls_per_s", False),
    ("import", "import time above a bare interpreter", "ms", "import_ms", True),
    ("lifecycle", "spawn+connect+list+call+close", "ms", "lifecycle_ms", True),
    ("rss", "peak RSS of the stdio sequential run", "MiB", "rss_mib", True),
    ("schema_plain", "stdio call, structured result, no outputSchema", "µs/call", "plain_us", True),
    ("schema", "stdio call, the same result checked against an outputSchema", "µs/call", "per_call_us", True),
    ("schema_cost", "the outputSchema check's cost (the two rows above, paired per round)", "µs/call", "", True),
    ("schema_cpu_cost", "... in the client process's CPU time per call", "µs/call", "", True),
    ("http_calc", "Streamable HTTP call, examples/calc.py", "µs/call", "per_call_us", True),
    ("http_cpu", "... the client process's CPU time per call (all its threads)", "µs/call", "cpu_us", True),
    ("http_cpu_over", "... above the raw loop's in the same round (median of per-round differences)", "µs/call",
     "", True),
    ("http_threads", "Streamable HTTP, 8 threads sharing the calls, examples/calc.py", "calls/s", "calls_per_s",
     False),
    ("http_sdk", "Streamable HTTP call, SDK MCPServer", "µs/call", "per_call_us", True),
    ("big", "stdio call returning a %g MiB text result" % BIG_MIB, "ms/call", "per_call_us", True),
    ("big_mem", "... peak memory growth of the client process over those calls", "× message",
     "peak_growth_kb", True),
    ("posts", "HTTP POSTs from Client(url) to a first call's value, examples/calc.py", "POSTs", "posts", True),
]
# Issue 30's close rows (raw: the server's own exit, stdin closed and a blocking waitpid; drive_raw.py)
CLOSE_SERVERS = 20  # servers closed one at a time per round, for the close() row
HUNDRED = 100  # stdio servers in one process, for the three "100 servers" rows
FIGURES += [
    ("close", "stdio close() after one call (raw: the server's own exit after stdin EOF)", "ms", "", True),
    ("hundred_connect", "%d stdio servers in one process: connect each" % HUNDRED, "ms", "", True),
    ("hundred_call", "... then one call each", "ms", "", True),
    ("hundred_close", "... then close each", "ms", "", True),
]


def close_workloads(server):
    """The workloads of the close rows: (key, driver mode, server, count)."""
    return [("close", "close", server, CLOSE_SERVERS), ("hundred", "hundred", server, HUNDRED)]


def add_close_result(add, client, key, res):
    """Samples of the close rows from a driver's answer; False for another workload's."""
    if key == "close":
        add(client, key, res["per_call_us"] / 1e3)
    elif key == "hundred":
        for phase in ("connect", "call", "close"):
            add(client, "hundred_" + phase, res[phase + "_s"] * 1e3)
    else:
        return False
    return True


def floor_targets(medians, samples):
    """Issue 30's targets, against the design's floor (the raw reader-thread rows) and the server's
    own exit: medians of per-round ratios, with their spread (lowest-highest round)."""
    lines = []

    def spread(a, b):
        xs, ys = samples.get(a) or [], samples.get(b) or []
        rs = sorted(x / y for x, y in zip(xs, ys) if x and y)
        return (statistics.median(rs), rs[0], rs[-1]) if rs and len(xs) == len(ys) else None

    for a, b, label, goal, higher in (
            (("mcp_min", "seq"), ("raw", "handoff"), "sequential stdio call / the reader-thread floor", 1.10, False),
            (("mcp_min", "threads"), ("raw", "threads"), "8 threads / the reader-thread floor (8 threads)", 0.90, True),
            (("mcp_min", "pipeline"), ("raw", "pipeline"), "pipelined (submit) / the raw burst", 0.95, True),
            (("mcp_min", "close"), ("raw", "close"), "close() / the server's own exit time", 1.2, False)):
        r = spread(a, b)
        if r is None:
            continue
        ok = r[0] >= goal if higher else r[0] <= goal
        base = spread(("mcp_min_base",) + a[1:], b)
        lines.append("- [%s] %s %s %.2f×: %.2f× (rounds %.2f-%.2f)%s" % (
            "x" if ok else " ", label, "≥" if higher else "≤", goal, r[0], r[1], r[2],
            "; base %.2f× (rounds %.2f-%.2f)" % base if base else ""))
    close = medians.get(("mcp_min", "hundred_close"))
    if close is not None:
        lines.append("- [%s] %d stdio servers in one process, close each ≤ 600 ms: %.0f ms (connect %.0f ms, "
                     "one call each %.0f ms)%s" % (
                         "x" if close <= 600 else " ", HUNDRED, close, medians[("mcp_min", "hundred_connect")],
                         medians[("mcp_min", "hundred_call")],
                         "; base %.0f ms" % medians[("mcp_min_base", "hundred_close")]
                         if ("mcp_min_base", "hundred_close") in medians else ""))
    return "\n".join(lines)


def fmt(value, unit):
    if value is None:
        return "—"
    if unit == "calls/s":
        return "{:,.0f}".format(value)
    if unit in ("MiB", "ms/call"):
        return "%.1f" % value
    if unit == "× message":
        return "%.2f" % value
    if unit == "POSTs":
        return "%g" % value
    if unit == "ms":
        return "%.1f" % value if value < 100 else "%.0f" % value
    return "%.0f" % value


def ratio(value, ref):
    if value is None or ref is None or value <= 0 or ref <= 0:  # (a noisy import time can be negative)
        return None
    return value / ref


def table(medians, clients, extra_notes, sequences=None):
    heads = ["figure"] + [LABELS.get(c, c) for c in clients]
    rows = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for key, label, unit, _, _ in FIGURES:
        if not any(medians.get((c, key)) is not None for c in clients):
            continue
        raw_ref = medians.get(("raw", key))
        mcp_ref = medians.get(("mcp", key))
        base_ref = medians.get(("mcp_min_base", key)) if key not in NO_BASE_RATIO else None
        cells = ["%s, %s" % (label, unit)]
        for c in clients:
            v = medians.get((c, key))
            text = fmt(v, unit)
            parts = []
            if c != "raw" and ratio(v, raw_ref) is not None:
                parts.append("%.2f× raw" % ratio(v, raw_ref))
            if c != "mcp" and ratio(v, mcp_ref) is not None:
                parts.append("%.2f× mcp" % ratio(v, mcp_ref))
            if c == "mcp_min" and ratio(v, base_ref) is not None:
                parts.append("%.2f× base" % ratio(v, base_ref))
            if parts and v is not None:
                text += " (" + ", ".join(parts) + ")"
            if key == "posts" and (sequences or {}).get(c):
                text += " (" + ", ".join(sequences[c]) + ")"
            if c == "raw" and key == "import" and medians.get(("raw", "bare_ms")):
                text = "bare interpreter: %.1f ms" % medians[("raw", "bare_ms")]
            cells.append(text)
        rows.append("| " + " | ".join(cells) + " |")
    out = "\n".join(rows)
    out += ("\n\nRatios are value ÷ reference, in the row's unit: for µs, ms and MiB lower is better "
            "(0.50× mcp = half the mcp client's figure); for calls/s higher is better.  The raw loop's "
            "threads are the floor of mcp_min's design: one reader thread parsing every line and handing "
            "each answer over through a lock per call, 8 callers writing under a lock.  The official clients are asyncio: their \"threads\" are 8 tasks on one session, their "
            "pipelining is asyncio.gather over all calls.")
    if "mcp_min_base" in clients:
        out += ("  \"× base\" (mcp_min column): ÷ the mcp_min (base) column, the --baseline tree's "
                "mcp_min.py run by the same driver in the same rounds.")
    if any(medians.get((c, k)) is not None for c in clients for k in ("big", "posts")):
        out += ("\n- The %g MiB-result rows measure the raw loop and mcp_min only, the POST count mcp_min "
                "only: the official clients are not driven for them.  Each round runs a fresh driver "
                "process: connect, one `add` call, then VmHWM is reset to the current VmRSS (Linux "
                "/proc/self/clear_refs), one untimed `big` call and the timed ones follow (each value "
                "dropped before the next call), and the memory row is VmHWM at the end minus VmRSS at the "
                "reset, divided by the %d-byte text (the JSON line is ~200 bytes more).  The POST count "
                "wraps http.client.HTTPConnection.request in the driver process; the requests are listed "
                "in order." % (BIG_MIB, BIG_TEXT_BYTES))
    if any(medians.get((c, "http_threads")) is not None for c in clients):
        out += ("\n- The HTTP client-CPU and 8-thread rows measure the raw loop and mcp_min only (8 threads: "
                "the raw loop's each on a keep-alive connection of its own).  CPU is the driver process's "
                "time.process_time() over the timed loop, all its threads; on a busy machine it moves more "
                "than the difference it is meant to show: bench/instructions.py counts instructions instead.")
    for note in extra_notes:
        out += "\n" + note
    return out


def paired(samples, a, b):
    """Median over rounds of a's figure ÷ b's figure in the same round (robust to a noisy machine)."""
    xs, ys = samples.get(a) or [], samples.get(b) or []
    if not xs or len(xs) != len(ys):
        return None
    return statistics.median(x / y for x, y in zip(xs, ys) if y)


def versus_base(medians):
    """One line: the current tree's median ÷ the baseline's, per figure both have."""
    parts = []
    for key, _, _, _, _ in FIGURES:
        r = ratio(medians.get(("mcp_min", key)), medians.get(("mcp_min_base", key)))
        if key not in NO_BASE_RATIO and r is not None:
            parts.append("%s %.2f×" % (key, r))
    return ("- current ÷ base, ratio of medians (calls/s: higher is better; the rest: lower is better): "
            + (", ".join(parts) or "—"))


def spread(values, form="%.2f"):
    """The median of per-round figures with their range, e.g. "0.93 (range 0.88 to 0.97)"."""
    return (form + " (range " + form + " to " + form + ")") % (statistics.median(values), min(values), max(values))


def per_round(samples, a, b, op):
    """``op(a's figure, b's figure)`` per round, for a and b measured in every round; else []."""
    xs, ys = samples.get(a) or [], samples.get(b) or []
    return [op(x, y) for x, y in zip(xs, ys) if y] if xs and len(xs) == len(ys) else []


def add_http_cpu_over(samples):
    """The client CPU per HTTP call above the raw loop's, each round's difference (both ran in it)."""
    for c in ("mcp_min", "mcp_min_base"):
        diffs = per_round(samples, (c, "http_cpu"), ("raw", "http_cpu"), lambda x, y: x - y)
        if diffs:
            samples[(c, "http_cpu_over")] = diffs


def http_client_targets(samples):
    """Issue 30's two HTTP rows, each the median of per-round figures with their range: the client
    CPU per call above the raw http.client loop's, and 8 threads ÷ the raw loop's 8 threads."""
    out = []
    over = samples.get(("mcp_min", "http_cpu_over"))
    if over:
        out.append("- [%s] Streamable HTTP: client CPU per call ≤ 25 µs above a raw http.client keep-alive loop "
                   "(examples/calc.py): %s µs, median of per-round differences" % (
                       "x" if statistics.median(over) <= 25 else " ", spread(over, "%.1f")))
    thr = per_round(samples, ("mcp_min", "http_threads"), ("raw", "http_threads"), lambda x, y: x / y)
    if thr:
        out.append("- [%s] Streamable HTTP, 8 threads ≥ 0.9× a raw http.client loop in 8 threads (a connection "
                   "each): %s×, median of per-round ratios" % (
                       "x" if statistics.median(thr) >= 0.9 else " ", spread(thr)))
    return out


def targets(medians, samples, sequences=None):
    m = medians.get
    lines = []

    def line(ok, text):
        lines.append("- [%s] %s" % ("x" if ok else " ", text))

    seq, raw_seq, mcp_seq = m(("mcp_min", "seq")), m(("raw", "seq")), m(("mcp", "seq"))
    handoff = m(("raw", "handoff"))
    if seq and raw_seq:
        pr = paired(samples, ("mcp_min", "seq"), ("raw", "seq"))
        line(seq <= 1.15 * raw_seq, "sequential stdio call ≤ 1.15× the raw loop: %.0f µs vs %.0f µs = %.2f× "
             "(median of per-round ratios: %s)" % (seq, raw_seq, seq / raw_seq, "%.2f×" % pr if pr else "—"))
    if seq and handoff and raw_seq:
        pr = paired(samples, ("mcp_min", "seq"), ("raw", "handoff"))
        lines.append("  - the design's floor, the raw loop through one reader thread: %.0f µs (%.2f× the raw "
                     "loop); mcp_min is %.2f× that floor (median of per-round ratios: %s)" % (
                         handoff, handoff / raw_seq, seq / handoff, "%.2f×" % pr if pr else "—"))
    if seq and mcp_seq:
        pr = paired(samples, ("mcp", "seq"), ("mcp_min", "seq"))
        line(mcp_seq >= 2 * seq, "sequential stdio call ≥ 2× faster than mcp: %.0f µs vs %.0f µs = %.2f× faster "
             "(median of per-round ratios: %s)" % (seq, mcp_seq, mcp_seq / seq, "%.2f×" % pr if pr else "—"))
    thr, mcp_thr = m(("mcp_min", "threads")), m(("mcp", "threads"))
    raw_pipe, raw_thr = m(("raw", "pipeline")), m(("raw", "threads"))
    if thr and raw_pipe:
        line(thr >= 0.75 * raw_pipe, "8 threads ≥ 0.75× the raw pipelined ceiling: {:,.0f} vs {:,.0f} calls/s = "
             "{:.2f}×; the raw reader-thread floor with 8 threads: {}".format(
                 thr, raw_pipe, thr / raw_pipe, "{:,.0f} calls/s ({:.2f}× the ceiling; mcp_min {:.2f}× it)".format(
                     raw_thr, raw_thr / raw_pipe, thr / raw_thr) if raw_thr else "—"))
    if thr and mcp_thr:
        line(thr >= 3 * mcp_thr, "8 threads ≥ 3× the mcp client's throughput: {:,.0f} vs {:,.0f} calls/s = {:.2f}×"
             .format(thr, mcp_thr, thr / mcp_thr))
    pipe = m(("mcp_min", "pipeline"))
    if pipe and raw_pipe:
        pr = paired(samples, ("mcp_min", "pipeline"), ("raw", "pipeline"))
        line(pipe >= 0.95 * raw_pipe, "pipelined from one thread ≥ 0.95× the raw burst: {:,.0f} vs {:,.0f} calls/s "
             "= {:.2f}× (median of per-round ratios: {})".format(pipe, raw_pipe, pipe / raw_pipe,
                                                                  "%.2f×" % pr if pr else "—"))
    imp = m(("mcp_min", "import"))
    if imp is not None:
        heavy = [x for x in m(("mcp_min", "heavy")) or () if x in ("urllib", "urllib.request", "ssl", "email",
                                                                   "http.client")]
        line(imp <= 10 and not heavy, "`import mcp_min` ≤ 10 ms above a bare interpreter, no urllib/ssl/email: "
             "%.1f ms; loaded: %s" % (imp, ", ".join(m(("mcp_min", "heavy")) or ()) or "none of them"))
    cost = m(("mcp_min", "schema_cost"))
    if cost is not None:
        line(cost <= 10, "a call to a tool with an outputSchema (checked) within 10 µs of one without: "
             "%+.1f µs (%.0f vs %.0f µs per call; in client CPU time %+.1f µs)" % (
                 cost, m(("mcp_min", "schema")), m(("mcp_min", "schema_plain")), m(("mcp_min", "schema_cpu_cost"))))
    rss = m(("mcp_min", "rss"))
    if rss:
        line(rss <= 25, "peak RSS ≤ 25 MB for the 2,000-call run: %.1f MiB (%.1f MB)" % (rss, rss * 1.048576))
    h, rh = m(("mcp_min", "http_calc")), m(("raw", "http_calc"))
    if h and rh:
        pr = paired(samples, ("mcp_min", "http_calc"), ("raw", "http_calc"))
        line(h <= 1.2 * rh, "Streamable HTTP call ≤ 1.2× a raw http.client keep-alive loop (examples/calc.py): "
             "%.0f µs vs %.0f µs = %.2f× (median of per-round ratios: %s)" % (h, rh, h / rh,
                                                                          "%.2f×" % pr if pr else "—"))
    lines.extend(http_client_targets(samples))
    for key, name in (("http_calc", "examples/calc.py"), ("http_sdk", "the SDK MCPServer")):
        h, mh = m(("mcp_min", key)), m(("mcp", key))
        if h and mh:
            line(mh >= 2 * h, "HTTP per call ≥ 2× faster than mcp against %s: %.0f µs vs %.0f µs = %.2f× faster"
                 % (name, h, mh, mh / h))
    big, raw_big = m(("mcp_min", "big")), m(("raw", "big"))
    if big and raw_big:
        pr = paired(samples, ("mcp_min", "big"), ("raw", "big"))
        line(big <= 1.3 * raw_big, "a %g MiB tool result over stdio ≤ 1.3× the raw loop (readline + json.loads): "
             "%.1f ms vs %.1f ms = %.2f× (median of per-round ratios: %s)" % (
                 BIG_MIB, big, raw_big, big / raw_big, "%.2f×" % pr if pr else "—"))
    mem = m(("mcp_min", "big_mem"))
    if mem is not None:
        raw_mem = m(("raw", "big_mem"))
        line(mem <= 3, "peak memory growth over those calls ≤ 3× the message: %.2f× (%.1f MiB over a %g MiB "
             "message; the raw loop: %s)" % (mem, mem * BIG_MIB, BIG_MIB,
                                             "%.2f×" % raw_mem if raw_mem is not None else "—"))
    posts = m(("mcp_min", "posts"))
    if posts is not None:
        seq_posts = (sequences or {}).get("mcp_min")
        line(posts <= 2, "a fresh HTTP client's first value after ≤ 2 POSTs (Client(url) to the first "
             "`call(\"add\", a=1, b=2)`): %g%s" % (posts, " (%s)" % ", ".join(seq_posts) if seq_posts else ""))
    return "\n".join(lines)


# ---------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small counts and 2 rounds (a smoke test)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 2)")
    ap.add_argument("--calls", type=int, help="stdio calls per run (default 2000)")
    ap.add_argument("--http-calls", type=int, help="HTTP calls per run (default 1000 calc / 500 SDK server)")
    ap.add_argument("--mcp-python", help="interpreter with mcp==2.3.0 (default .cache/venv/bin/python)")
    ap.add_argument("--fastmcp-python", help="interpreter with fastmcp==4.2.3 (default bench/.venv-fastmcp/bin/python)")
    ap.add_argument("--clients", default="raw,mcp_min,mcp,fastmcp", help="comma-separated subset")
    ap.add_argument("--no-http", action="store_true", help="skip the Streamable HTTP figures")
    ap.add_argument("--json", help="also write every sample and the medians to this file")
    ap.add_argument("--baseline", metavar="DIR", help="also run DIR/mcp_min.py (e.g. a git worktree of an "
                    "earlier commit) as the client \"mcp_min (base)\", in the same rounds")
    args = ap.parse_args(argv)

    rounds = args.rounds or (2 if args.quick else 5)
    n = args.calls or (200 if args.quick else 2000)
    warmup = 20 if args.quick else 100
    import_reps = 1 if args.quick else 3  # best of this many interpreter starts per round
    http_calc_n = args.http_calls or (50 if args.quick else 1000)
    http_sdk_n = args.http_calls or (50 if args.quick else 500)
    big_n = 2 if args.quick else 5  # timed calls of the 10 MiB tool per round (after one untimed)

    info = machine()
    notes = []
    pythons = {"raw": sys.executable, "mcp_min": sys.executable}
    versions = {"mcp_min": None}
    try:
        sys.path.insert(0, ROOT)
        import mcp_min
        versions["mcp_min"] = "%s (git %s)" % (mcp_min.__version__, git_describe() or "?")
    except Exception as e:  # the driver will report the failure too
        versions["mcp_min"] = "? (%s)" % e
    wanted = [c.strip() for c in args.clients.split(",") if c.strip()]
    for c in wanted:
        if c not in CLIENTS or c == "mcp_min_base":
            ap.error("unknown client %r" % c)
    # Where each client's children run if not in ROOT with CHILD_ENV: the base's import-time runs in
    # base_dir (first on their sys.path), its drivers are told by BENCH_MCP_MIN_DIR (drive_mcp_min.py).
    cwds, envs = {}, {}
    base_dir = base_git = None
    if args.baseline:  # the base runs right after mcp_min, with the same interpreter
        base_dir = os.path.abspath(args.baseline)
        if not os.path.isfile(os.path.join(base_dir, "mcp_min.py")):
            ap.error("--baseline %s: no mcp_min.py there" % args.baseline)
        base_git = git_describe(base_dir)
        out = subprocess.run([sys.executable, "-c", "import mcp_min; print(mcp_min.__version__)"], cwd=base_dir,
                             capture_output=True, text=True, timeout=60, env=CHILD_ENV)
        versions["mcp_min_base"] = "%s (git %s, %s)" % (out.stdout.strip() or "?", base_git or "?", base_dir)
        pythons["mcp_min_base"] = sys.executable
        wanted.insert(wanted.index("mcp_min") + 1 if "mcp_min" in wanted else len(wanted), "mcp_min_base")
        cwds["mcp_min_base"] = base_dir
        envs["mcp_min_base"] = dict(CHILD_ENV, BENCH_MCP_MIN_DIR=base_dir)
    for name, flag, env_name, default in (
            ("mcp", args.mcp_python, "BENCH_MCP_PYTHON", ".cache/venv/bin/python"),
            ("fastmcp", args.fastmcp_python, "BENCH_FASTMCP_PYTHON", "bench/.venv-fastmcp/bin/python")):
        if name not in wanted:
            continue
        python = find_python(flag, env_name, default)
        version, why = probe(python, CLIENTS[name][1], CLIENTS[name][2])
        if version is None:
            notes.append("- %s skipped: %s (see bench/README.md to install it)" % (name, why))
            log(notes[-1][2:])
            continue
        pythons[name], versions[name] = python, version
    clients = [c for c in wanted if c in pythons]
    log("clients: %s; %d rounds, %d stdio calls, %d/%d HTTP calls" % (
        ", ".join(clients), rounds, n, http_calc_n, http_sdk_n))

    servers = []
    http_targets = []
    if not args.no_http:
        try:
            proc, url = start_calc()
            servers.append(proc)
            http_targets.append(("http_calc", url, http_calc_n))
        except Exception as e:
            notes.append("- HTTP against examples/calc.py skipped: %s" % e)
        if "mcp" in pythons:
            try:
                proc, url = start_sdk(pythons["mcp"])
                servers.append(proc)
                http_targets.append(("http_sdk", url, http_sdk_n))
            except Exception as e:
                notes.append("- HTTP against the SDK server skipped: %s" % e)
        else:
            notes.append("- HTTP against the SDK MCPServer skipped: it needs the mcp venv")

    workloads = [("seq", "seq", STUB, n), ("handoff", "handoff", STUB, n), ("threads", "threads", STUB, n), ("pipeline", "pipeline", STUB, n),
                 ("lifecycle", "lifecycle", STUB, 0), ("schema", "schema", STUB, n)]
    workloads += [("big", "big", STUB, big_n)] + close_workloads(STUB)
    workloads += [(key, "http_seq", url, count) for key, url, count in http_targets]
    workloads += [("posts", "first_value", url, 0) for key, url, count in http_targets if key == "http_calc"]
    workloads += [("http_threads", "http_threads", url, count) for key, url, count in http_targets
                  if key == "http_calc"]
    samples = {}  # (client, key) -> [value, ...]
    errors = {}
    sequences = {}  # client -> the HTTP requests before its first value, as "METHOD rpc-method" (last round)

    def add(client, key, value):
        samples.setdefault((client, key), []).append(value)

    t_start = time.monotonic()
    for c in clients:  # compile and cache bytecode once, outside the timings
        if c != "raw":
            time_process(pythons[c], IMPORT_STMT[c], cwd=cwds.get(c, ROOT))
        subprocess.run([pythons[c], "-c", "import sys; sys.path[:0] = [%r]; import _common" % BENCH],
                       cwd=ROOT, env=CHILD_ENV)
    try:
        for r in range(rounds):
            order = clients[r % len(clients):] + clients[:r % len(clients)]
            log("round %d/%d (order %s)" % (r + 1, rounds, ", ".join(order)))
            # import time: a bare interpreter and each client's import, back to back
            for c in order:
                py = pythons[c]
                cwd = cwds.get(c, ROOT)
                bare = time_process(py, "pass", reps=import_reps, cwd=cwd)
                if c == "raw":
                    add("raw", "bare_ms", bare * 1e3)
                    continue
                add(c, "import", (time_process(py, IMPORT_STMT[c], reps=import_reps, cwd=cwd) - bare) * 1e3)
            for key, mode, server, count in workloads:
                for c in order:
                    spec = {"mode": mode, "server": server, "n": count, "warmup": warmup, "threads": 8}
                    if c not in ONLY.get(mode, (c,)):
                        continue  # (the outputSchema rows measure mcp_min's own validator; see ONLY)
                    res = run_driver(pythons[c], c, spec, timeout=600, env=envs.get(c, CHILD_ENV))
                    for proc in servers:
                        if proc.poll() is not None:
                            raise RuntimeError("an HTTP server exited (code %s) before %s/%s"
                                               % (proc.returncode, c, key))
                    if "error" in res:
                        errors.setdefault((c, key), res["error"])
                        log("%s %s failed: %s" % (c, key, res["error"]))
                        continue
                    if "skipped" in res:
                        continue
                    if add_close_result(add, c, key, res):
                        pass
                    elif mode == "lifecycle":
                        add(c, key, res["seconds"] * 1e3)
                    elif key in ("threads", "pipeline", "http_threads"):
                        add(c, key, res["calls_per_s"])
                    elif key == "big":
                        add(c, key, res["per_call_us"] / 1e3)
                        if res.get("peak_growth_kb") is not None:
                            add(c, "big_mem", res["peak_growth_kb"] * 1024.0 / res["message_bytes"])
                    elif key == "posts":
                        add(c, key, res["posts"])
                        seq_now = [m if h == "POST" else "%s %s" % (h, m) for h, m in res["requests"]]
                        if sequences.get(c, seq_now) != seq_now:
                            notes.append("- %s's requests before its first value differ between rounds: %s, then %s"
                                         % (c, ", ".join(sequences[c]), ", ".join(seq_now)))
                        sequences[c] = seq_now
                    elif key == "schema":
                        add(c, key, res["per_call_us"])
                        add(c, "schema_plain", res["plain_us"])
                        add(c, "schema_cost", res["per_call_us"] - res["plain_us"])
                        add(c, "schema_cpu_cost", res["cpu_us"] - res["plain_cpu_us"])
                    else:
                        add(c, key, res["per_call_us"])
                    if key == "http_calc" and res.get("cpu_us") is not None:
                        add(c, "http_cpu", res["cpu_us"])
                    if key == "seq":
                        add(c, "rss", res["rss_kb"] / 1024.0)
                        add(c, "seq_us", res["per_call_us"])
    finally:
        for proc in servers:
            stop(proc)

    add_http_cpu_over(samples)
    medians = {k: statistics.median(v) for k, v in samples.items()}
    if "mcp_min" in clients:
        medians[("mcp_min", "heavy")] = heavy_modules(pythons["mcp_min"])
    for (c, key), err in sorted(errors.items()):
        notes.append("- %s / %s failed in at least one round: %s" % (c, key, err))

    header = ["# mcp_min client benchmark", "",
              "- date: %s; %d rounds, medians; %d stdio calls per run (warm-up %d), HTTP %d (calc) / %d (SDK), "
              "%d calls of the %g MiB result" % (info["date"], rounds, n, warmup, http_calc_n, http_sdk_n, big_n,
                                                 BIG_MIB),
              "- machine: nproc %s, %s, Python %s, %s" % (info["nproc"], info["cpu"], info["python"],
                                                          info["platform"]),
              "- versions: " + "; ".join("%s %s" % (LABELS.get(c, c), versions[c]) for c in clients if c in versions)]
    if "mcp_min_base" in clients:
        header.append("- baseline: column mcp_min (base) is %s/mcp_min.py, %s" % (
            base_dir, "git commit %s" % base_git if base_git else "not a git checkout"))
    header += ["- command: python bench/bench.py %s" % " ".join(sys.argv[1:] if argv is None else argv),
               "- wall time: %.0f s" % (time.monotonic() - t_start), ""]
    text = "\n".join(header) + "\n" + table(medians, clients, notes, sequences) + (
        "\n\n## Targets (mcp_min)\n\n" + (targets(medians, samples, sequences) or "(mcp_min not measured)"))
    if floor_targets(medians, samples):
        text += "\n\n## Against the design's floor (issue 30)\n\n" + floor_targets(medians, samples)
    if "mcp_min_base" in clients and "mcp_min" in clients:
        text += "\n\n" + versus_base(medians)
    if medians.get(("mcp_min", "heavy")) is not None:
        text += "\n\nModules loaded by `import mcp_min` (of %s): %s" % (
            ", ".join(HEAVY_MODULES), ", ".join(medians[("mcp_min", "heavy")]) or "none")
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "versions": versions, "baseline": base_dir and {"dir": base_dir, "git": base_git},
                       "samples": {"%s/%s" % k: v for k, v in samples.items()},
                       "medians": {"%s/%s" % k: v for k, v in medians.items()},
                       "errors": {"%s/%s" % k: v for k, v in errors.items()},
                       "requests_before_first_value": sequences}, f, indent=1)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
