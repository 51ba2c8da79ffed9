"""pytest setup for every test file: a wall-clock bound on each test.

A test that hangs must fail on its own, with the stacks of every thread, and let the
run go on; never stall the whole run until CI's limit.  The bound covers the test's
setup (module fixtures included), call and teardown.  It is far above what any test
takes (the slowest, a conformance-suite run, takes under 10 s here; PyPy about twice
that), so it never decides an outcome: it only turns a hang into a failure.

pytest loads this file whenever it collects tests/; the plugin it registers then
applies to every test of the run, test_mcp_min.py's included.

It also says how many test processes ``-n auto`` (pyproject.toml's addopts, pytest-xdist)
starts: see ``pytest_xdist_auto_num_workers``; and it writes mcp_min.py's bytecode cache
once, before any test process starts the command line (testsupport.ensure_bytecode).
"""
import faulthandler
import gc
import os
import signal
import sys
import threading

import pytest

import testsupport  # (conftest's directory is on sys.path)

# Seconds for one test, fixtures included (MCP_MIN_TEST_LIMIT to change it, 0 to switch it off).
TEST_LIMIT = float(os.environ.get("MCP_MIN_TEST_LIMIT", "120"))
# Test processes for ``-n auto``: four per core, at most WORKERS_CAP.  Most of a test's time is
# spent waiting (on a server process, a socket, a deadline that must pass), not computing, so the
# cores stay busy only with several processes each: the unit tests under 3.12 on 2 cores took 94 s
# with 4 processes, 72 s with 8 (6: 78 s, 12: 79 s), using 99-104 CPU-s either way.  More than
# WORKERS_CAP only repeats the module-scoped fixtures and the collection (3-5 CPU-s each).
# MCP_MIN_TEST_WORKERS sets the number (.ci/test-interpreters runs two interpreters at once and
# gives each half the machine).
WORKERS_PER_CORE = 4
WORKERS_CAP = 8
# After the limit, how long the test has to unwind before the process itself is ended (with the
# stacks of every thread): a hang that the signal cannot interrupt must not stall the run either.
UNWIND_GRACE = 60.0


class Overran(BaseException):
    """Raised in the main thread when a test outlives TEST_LIMIT (a BaseException, so that no
    ``except Exception`` in the code under test can swallow it)."""


class _Watchdog(object):
    def __init__(self, limit):
        self.limit = limit
        self.can_signal = hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM")

    def _overran(self, signum, frame):
        sys.stderr.write("\n=== test ran past %.0f s; the stacks of every thread:\n" % self.limit)
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        raise Overran("the test ran past %.0f s (stacks above, on stderr)" % self.limit)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        armed = self.limit > 0 and threading.current_thread() is threading.main_thread()
        previous = None
        if armed:
            faulthandler.dump_traceback_later(self.limit + UNWIND_GRACE, exit=True)
            if self.can_signal:
                previous = signal.signal(signal.SIGALRM, self._overran)
                signal.setitimer(signal.ITIMER_REAL, self.limit)
        try:
            yield
        finally:
            if armed:
                if self.can_signal:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    signal.signal(signal.SIGALRM, previous)
                faulthandler.cancel_dump_traceback_later()


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("mcp-min-watchdog"):
        config.pluginmanager.register(_Watchdog(TEST_LIMIT), "mcp-min-watchdog")
    if not hasattr(config, "workerinput"):  # once, before any test process starts the CLI
        testsupport.ensure_bytecode()


def pytest_collection_finish(session):
    """Once the tests are collected: move what collecting made out of the collector's way
    (``gc.freeze``), and say when pytest-xdist's groups did not take (see _check_groups)."""
    # Collecting every test makes a heap of a few hundred thousand objects (modules, items,
    # parameters) that lives until the end.  A full collection walks all of it: 0.15 s each here,
    # and the tests that check what a dropped client leaves call gc.collect() often (the 60
    # open/close cycles alone: 9 CPU-s instead of 4).  Frozen, they are skipped; what the tests
    # make is collected as before.  (CPython 3.7+; PyPy has no freeze and needs none.)
    if hasattr(gc, "freeze"):
        gc.collect()
        gc.freeze()
    _check_groups(session)


def _check_groups(session):
    """In a test process of ``--dist loadgroup``: say so when the xdist_group marks did not take
    (pytest-xdist marks a grouped test by adding "@group" to its id; see tests/requirements.txt).
    The tests still pass, but every process builds each shared lab again."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [item.nodeid for item in session.items
            if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid]
    if lost:
        session.config.issue_config_time_warning(pytest.PytestWarning(
            "pytest-xdist's --dist loadgroup did not group %d tests (%s ...) under pytest %s: "
            "each test process builds their shared fixtures again; tests/requirements.txt has "
            "the versions that work" % (len(lost), lost[0], pytest.__version__)), stacklevel=2)


def pytest_xdist_auto_num_workers(config):
    """The number of test processes ``-n auto`` starts (see WORKERS_PER_CORE)."""
    chosen = os.environ.get("MCP_MIN_TEST_WORKERS")
    if chosen:
        return int(chosen)
    return min(WORKERS_CAP, WORKERS_PER_CORE * (os.cpu_count() or 1))
