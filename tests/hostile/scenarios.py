#!/usr/bin/env python3
"""Scenarios that need a process of their own, for tests/test_hostile.py.

    python scenarios.py NAME 'JSON config'

Each prints one JSON line (the outcome) on stdout; the test asserts on it.  The test runs
them with an outer time limit and kills the whole process group when it passes, so a
scenario that hangs on a broken mcp_min ends anyway.  mcp_min is imported from the
directory in the environment variable MCP_MIN_DIR (default: the repository root).

  fork         a process holding a stdio client and an HTTP client forks; the child, by
               mode, just exits ("exit"), closes the clients ("close") or uses them ("use").
               Reports how the child ended and how long it took, and whether the parent's
               clients still work afterwards.  The parent leaves with os._exit, so it sends
               no DELETE itself: any DELETE the server saw came from the child.
  rss          one client reads an oversized SSE event (kind: post_sse, get, legacy, listen,
               resume) and must still receive what follows it; reports peak RSS.
  thread_delay every Thread.start is delayed by 0.3 s, before it or after it (a loaded machine), against a server
               that exits at once: reports the error the constructor raised.
  thread_fail  Thread.start raises RuntimeError (a process or thread limit): reports what the
               constructor (and a submit, over HTTP) raised, and whether the stdio server is
               still running.
  pool         each exception class is raised in a multiprocessing.Pool worker and in a
               ProcessPoolExecutor worker; reports whether it arrived intact (bounded waits).
  no_ssl       the ssl module is unavailable; Client("https://...") must fail once, clearly.
  no_module    for each case [module, path]: that module blocked (None in sys.modules), the path
               (http, sse, https, oauth: the browser login, stdio, over: Client.over) is taken;
               reports what it raised (and the missing module's name) and what mcp_min logged.
"""

import json
import os
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("MCP_MIN_DIR") or os.path.dirname(os.path.dirname(HERE)))


def outcome(fn):
    """('ok', value) or (exception type name, message, attributes)."""
    start = time.monotonic()
    try:
        value = fn()
        return {"result": "ok", "value": value if isinstance(value, (str, int, float, dict, list, type(None)))
                else repr(value), "seconds": time.monotonic() - start}
    except BaseException as e:  # noqa: B902 - report everything
        import mcp_min
        return {"result": "raised", "type": type(e).__name__, "mcp_error": isinstance(e, mcp_min.McpError),
                "message": str(e), "returncode": getattr(e, "returncode", None),
                "seconds": time.monotonic() - start}


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


# -- fork ---------------------------------------------------------------------------------

def fork(cfg):
    from mcp_min import Client, McpError
    clients = {}
    if cfg.get("stdio"):
        clients["stdio"] = Client(cfg["stdio"], timeout=cfg.get("timeout", 5))
    if cfg.get("url"):
        clients["http"] = Client(cfg["url"], timeout=cfg.get("timeout", 5))
    for name, c in clients.items():
        assert c.call("echo", {"who": "parent-before-" + name}) == {"who": "parent-before-" + name}
    r, w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: what a worker process that inherited the client would do
        os.close(r)
        report = {}
        if cfg["mode"] == "use":
            for name, c in clients.items():
                t = time.monotonic()
                try:
                    c.call("echo", {"who": "child-" + name})
                    report[name] = "returned"
                except McpError as e:
                    report[name] = "McpError: %s" % e
                except BaseException as e:  # noqa: B902
                    report[name] = "%s: %s" % (type(e).__name__, e)
                report[name + "_seconds"] = time.monotonic() - t
        elif cfg["mode"] == "close":
            for name, c in clients.items():
                t = time.monotonic()
                try:
                    c.close()
                    report[name] = "closed"
                except BaseException as e:  # noqa: B902
                    report[name] = "%s: %s" % (type(e).__name__, e)
                report[name + "_seconds"] = time.monotonic() - t
        os.write(w, json.dumps(report).encode())
        os.close(w)
        sys.exit(0)  # a normal exit: atexit handlers and finalizers run
    os.close(w)
    out = {"child": None}
    limit = started + cfg.get("child_limit", 4.0)
    while time.monotonic() < limit:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            out["child"] = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
            break
        time.sleep(0.01)
    else:
        import signal
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        out["child"] = "hung"
    out["child_seconds"] = time.monotonic() - started
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    out["child_report"] = json.loads(data) if data else None
    for name, c in clients.items():
        out["parent_" + name] = outcome(lambda: c.call("echo", {"who": "parent-after-" + name}, timeout=5))
    emit(out)
    os._exit(0)  # no finalizer: the parent itself sends no DELETE and no signal


# -- rss ------------------------------------------------------------------------------------

def peak_rss_kib():
    """This process's peak RSS.  /proc/self/status VmHWM belongs to this image only; ru_maxrss
    would also count the RSS of the pytest process we were forked from before exec."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def rss(cfg):
    from mcp_min import Client
    got = threading.Event()

    def callback(method, params):
        if method == "notifications/tools/list_changed":
            got.set()

    before = peak_rss_kib()
    kind = cfg["kind"]
    if kind == "get":
        client = Client(cfg["url"], timeout=60, on_notification=callback)
        result = outcome(lambda: got.wait(60) or "no notification after the big event")
    elif kind == "listen":
        client = Client(cfg["url"], timeout=60)
        client.listen(callback=callback)
        result = outcome(lambda: got.wait(60) or "no notification after the big event")
    else:
        client = Client(cfg["url"], timeout=60)
        result = outcome(lambda: client.call(cfg["tool"], cfg.get("args", {})))
    emit({"outcome": result, "baseline_mib": before / 1024.0, "peak_mib": peak_rss_kib() / 1024.0})
    os._exit(0)


# -- threads --------------------------------------------------------------------------------

def _state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return "zombie" if f.read().rsplit(")", 1)[1].split()[0] == "Z" else "running"
    except OSError:
        return "gone"


def thread_delay(cfg):
    from mcp_min import Client
    original = threading.Thread.start

    def slow_start(self):  # "after": the new thread runs while the one starting it is held up
        if cfg.get("after"):
            original(self)
            time.sleep(0.3)
            return None
        time.sleep(0.3)
        return original(self)

    threading.Thread.start = slow_start
    emit(outcome(lambda: Client(cfg["argv"], timeout=5)))
    os._exit(0)


def thread_fail(cfg):
    from mcp_min import Client

    def no_thread(self):
        raise RuntimeError("can't start new thread")

    out = {}
    if cfg.get("argv"):
        threading.Thread.start = no_thread
        out["connect"] = outcome(lambda: Client(cfg["argv"], timeout=5))
        try:
            pid = int(open(cfg["pidfile"]).read())
        except (OSError, ValueError):
            out["server"] = "never started"
        else:
            deadline = time.monotonic() + 5
            while _state(pid) == "running" and time.monotonic() < deadline:
                time.sleep(0.02)
            out["server"] = _state(pid)
    else:
        original = threading.Thread.start
        threading.Thread.start = no_thread
        holder = {}

        def connect():
            holder["client"] = Client(cfg["url"], timeout=5)
            return "connected"
        out["connect"] = outcome(connect)
        if "client" in holder:
            out["submit"] = outcome(lambda: holder["client"].submit("echo", {"x": 1}).result(5))
        threading.Thread.start = original
    emit(out)
    os._exit(0)


# -- pool -------------------------------------------------------------------------------------

def make(name, args):
    import mcp_min
    return getattr(mcp_min, name)(*args)


def raiser(name, args):
    raise make(name, args)


def same(a, b):
    return type(a) is type(b) and str(a) == str(b) and a.args == b.args and vars(a) == vars(b)


def pool(cfg):
    """Each class gets its own Pool and its own executor (one broken pool must not hide the
    others), one after the other: a worker is forked only while the threads of the pools made
    before it sit idle.  (Forked while another pool's threads were busy unpickling, a PyPy
    executor worker now and then never answered.)"""
    import concurrent.futures
    import multiprocessing
    # Import mcp_min before the first fork.  Otherwise the result threads of the pools made so
    # far may be importing it (to unpickle an answer) while the next worker is forked; that
    # child inherits the module's import lock held by a thread it does not have, and hangs.
    import mcp_min
    table = cfg["table"]  # class name -> constructor args
    ctx = multiprocessing.get_context("fork")
    out = {name: {} for name in table}
    # These waits only bound a failure (an answer that cannot be unpickled never arrives);
    # correct answers come in well under a second each.
    deadline = time.monotonic() + 60

    def left():
        return min(max(deadline - time.monotonic(), 0.01), 15.0)

    def verdict(name, e):
        # Match our classes first: RequestTimeout is also a TimeoutError, which is what
        # concurrent.futures raises when a wait times out.
        if isinstance(e, mcp_min.McpError):
            return "ok" if same(e, make(name, table[name])) else "changed: %r %r" % (e, vars(e))
        if isinstance(e, concurrent.futures.process.BrokenProcessPool):
            return "broken pool: %s" % e
        if isinstance(e, (multiprocessing.TimeoutError, concurrent.futures.TimeoutError)):
            return "timeout (the exception could not be unpickled)"
        return "unexpected %r" % (e,)

    kept = []  # a dropped Pool or executor would be shut down by the collector; we end them below
    for name, args in table.items():
        try:
            kept.append(ctx.Pool(1))
            kept[-1].apply_async(raiser, (name, args)).get(left())
            out[name]["pool"] = "no exception"
        except Exception as e:
            out[name]["pool"] = verdict(name, e)
        try:
            kept.append(concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx))
            kept[-1].submit(raiser, name, args).result(left())
            out[name]["executor"] = "no exception"
        except Exception as e:
            out[name]["executor"] = verdict(name, e)
    emit(out)
    # Kill the workers instead of shutting the pools down: Pool.terminate() and
    # ProcessPoolExecutor.shutdown() can raise or block on 3.8 once a result thread has died,
    # a Pool forks a replacement for each worker killed one by one, and any worker left alive
    # holds our stdout open past the harness's deadline.  The harness starts us as the leader
    # of a process group of our own, so one signal to that group ends every worker and us.
    if os.getpgrp() == os.getpid():
        os.killpg(0, signal.SIGKILL)
    for child in multiprocessing.active_children():
        child.kill()
    os._exit(0)


# -- no ssl ---------------------------------------------------------------------------------

def no_ssl(cfg):
    import logging
    sys.modules["ssl"] = None
    sys.modules["_ssl"] = None
    from mcp_min import Client
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    logging.basicConfig(level=logging.WARNING)
    logging.getLogger().addHandler(Keep())
    out = outcome(lambda: Client(cfg["url"], timeout=2))
    out["log_errors"] = [r.getMessage() for r in records if r.levelno >= logging.ERROR]
    out["log_tracebacks"] = sum(1 for r in records if r.exc_info)
    emit(out)
    os._exit(0)


# -- no module ------------------------------------------------------------------------------

def no_module(cfg):
    import logging
    import mcp_min
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    log = logging.getLogger("mcp_min")
    log.addHandler(Keep())
    log.setLevel(logging.DEBUG)
    paths = {
        "http": lambda: mcp_min.Client("http://127.0.0.1:9/mcp", timeout=2),
        "sse": lambda: mcp_min.Client("http://127.0.0.1:9/mcp", transport="sse", timeout=2),
        "https": lambda: mcp_min.Client("https://127.0.0.1:9/mcp", timeout=2),
        "oauth": lambda: mcp_min.OAuth(timeout=2)._authorization_code(  # (no authorize=: the loopback listener)
            {"_fallback": True, "authorization_endpoint": "https://as.invalid/authorize"}, "https://as.invalid",
            "https://mcp.invalid/mcp", None),
        "stdio": lambda: mcp_min.Client([sys.executable, "-c", "pass"], timeout=2),
        "over": lambda: mcp_min.Client.over(*os.pipe(), timeout=2),
    }
    results = []
    for module, path in cfg["cases"]:
        before = dict(sys.modules)
        del records[:]
        sys.modules[module] = None
        error = []

        def run():
            try:
                return paths[path]()
            except BaseException as e:  # noqa: B902 - reported
                error.append(e)
                raise
        out = outcome(run)
        for name in [name for name in sys.modules if name not in before]:  # as if in a new process
            del sys.modules[name]
        sys.modules.update(before)
        out.update(module=module, path=path, name=getattr(error[0], "name", None) if error else None,
                   import_error=bool(error) and isinstance(error[0], ImportError),
                   log_errors=[r.getMessage() for r in records if r.levelno >= logging.ERROR],
                   log_tracebacks=sum(1 for r in records if r.exc_info))
        results.append(out)
    emit(results)
    os._exit(0)


if __name__ == "__main__":
    globals()[sys.argv[1]](json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})
