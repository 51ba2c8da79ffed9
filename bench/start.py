"""What starting mcp_min costs over a bare interpreter: the import, with and without a bytecode
cache, and the command line in its two forms (``python -m mcp_min``, which loads the cached
bytecode, and ``python mcp_min.py``, which Python compiles at every start: a main script's
bytecode is never cached).

    python bench/start.py            # 21 rounds
    python bench/start.py -n 51

Each round starts every form once, back to back, in a rotating order; a form's figure is the
median over the rounds of (the form - the bare interpreter of the same round), with the spread
(the 10th and 90th percentiles) beside it.  Two measures: the child's CPU time (user + system,
from ``os.wait4``: little moved by other load on the machine) and the wall time.  POSIX only.
Run from any directory; the forms run with the repository root as the current directory, as the
README shows them.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable


def forms(uncached):
    """(label, argv, extra environment, current directory) of every form.  ``uncached``: a
    directory with a copy of mcp_min.py and no bytecode of it (the standard library's stays cached)."""
    return [
        ("bare interpreter", [PY, "-c", "pass"], {}, ROOT),
        ("import mcp_min (bytecode cached)", [PY, "-c", "import mcp_min"], {}, ROOT),
        ("import mcp_min (no bytecode cache)", [PY, "-c", "import mcp_min"], {"PYTHONDONTWRITEBYTECODE": "1"}, uncached),
        ("python -m mcp_min --version", [PY, "-m", "mcp_min", "--version"], {}, ROOT),
        ("python mcp_min.py --version", [PY, "mcp_min.py", "--version"], {}, ROOT),
    ]


def run(argv, env, cwd):
    """(CPU ms, wall ms) of one run of argv in cwd, which must succeed."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = 0  # (reaped above)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.stderr:
        proc.stderr.close()
    if status != 0:
        sys.exit("%s failed (%s): %s" % (" ".join(argv), status, err.decode(errors="replace")))
    return (usage.ru_utime + usage.ru_stime) * 1000.0, wall * 1000.0


def spread(values):
    """(median, 10th percentile, 90th percentile)."""
    ordered = sorted(values)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]
    return statistics.median(ordered), at(0.1), at(0.9)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=21, help="rounds (default 21)")
    rounds = parser.parse_args().n
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    with tempfile.TemporaryDirectory() as uncached:
        shutil.copy(os.path.join(ROOT, "mcp_min.py"), uncached)
        cases = forms(uncached)
        run([PY, "-c", "import mcp_min"], base, ROOT)  # the bytecode cache, current
        samples = {label: [] for label, _, _, _ in cases}
        for r in range(rounds):
            order = cases[r % len(cases):] + cases[:r % len(cases)]
            got = {label: run(argv, dict(base, **extra), cwd) for label, argv, extra, cwd in order}
            bare = got["bare interpreter"]
            for label in samples:
                cpu, wall = got[label]
                samples[label].append((cpu, wall) if label == "bare interpreter" else (cpu - bare[0], wall - bare[1]))
    print("%s, %d rounds, load %s; over the bare interpreter of the same round: median [p10, p90]"
          % (sys.version.split()[0], rounds, " ".join("%.2f" % x for x in os.getloadavg())))
    print("%-36s %24s %24s" % ("", "CPU ms", "wall ms"))
    for label, values in samples.items():
        cells = ["%6.1f [%5.1f, %5.1f]" % spread([v[i] for v in values]) for i in (0, 1)]
        print("%-36s %24s %24s" % (label + (" (itself)" if label == "bare interpreter" else ""), *cells))


if __name__ == "__main__":
    main()
