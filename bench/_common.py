"""Shared bits of the bench drivers (standard library only; runs under every
client's interpreter).  A driver is invoked as

    <python> bench/drive_<client>.py '<json spec>'

and prints exactly one JSON object on its last stdout line.  The spec has
``mode`` (seq | handoff | threads | pipeline | lifecycle | http_seq | http_threads | big | first_value),
``server`` (an argv list for stdio modes, a URL for http_seq, http_threads and first_value),
``n`` (timed calls), ``warmup`` (untimed calls first) and ``threads``.
"""

import json
import sys
import threading
import time

ROOT = __file__.rsplit("/", 2)[0] if "/" in __file__ else ".."
clock = time.perf_counter


def spec():
    return json.loads(sys.argv[1])


def _status_kb(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def vm_hwm_kb():
    """Peak resident set size of this process in KiB (Linux /proc), else ru_maxrss."""
    kb = _status_kb("VmHWM:")
    if kb is not None:
        return kb
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_peak_kb():
    """Start a fresh peak: Linux resets VmHWM to the current VmRSS when "5" is written to
    /proc/self/clear_refs (Linux 4.0+).  Returns the resident set size (KiB) the peak now
    starts from; None where neither can be done (no peak figure is then reported)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    return _status_kb("VmRSS:")


def emit(seconds=None, calls=0, **extra):
    out = dict(extra)
    if seconds is not None:
        out["seconds"] = seconds
        if calls:
            out["calls"] = calls
            out["per_call_us"] = seconds / calls * 1e6
            out["calls_per_s"] = calls / seconds
    out["rss_kb"] = vm_hwm_kb()
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


def check(value, expected):
    """Each answer is checked, so a client that skips work cannot look fast."""
    if str(value) != str(expected):
        raise SystemExit("wrong answer: %r, expected %r" % (value, expected))


def in_threads(n, k, call_one):
    """Calls ``call_one(i)`` for i in range(n), shared by ``k`` threads: the seconds taken.
    The first error in a thread ends the driver with it."""
    errors = []

    def work(lo, hi):
        try:
            for i in range(lo, hi):
                call_one(i)
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
    if errors:
        raise SystemExit(errors[0])
    return dt
