"""Helpers shared by the test files (not a test module itself)."""
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _under_wine():
    """True on Wine (.ci/test-windows), whose ntdll exports wine_get_version; Windows' does not."""
    if sys.platform != "win32":
        return False
    try:
        import ctypes
        return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")
    except (ImportError, OSError):
        return False


UNDER_WINE = _under_wine()
# The interpreter options of the Python processes the tests start (servers, most command lines,
# helpers): -S, no site module.  They need only the standard library and this checkout, and site
# can cost more than the rest of a start: a .pth file that imports a package (certifi's, on this
# project's machines) takes 70-110 ms of CPU each time, and the README's test command starts about
# a thousand.  Not while coverage.py measures subprocesses (COVERAGE_PROCESS_START): its own .pth
# file, which site runs, is what starts it there.  The tests of what a user types (the README's
# lines) run without it.
NO_SITE = [] if os.environ.get("COVERAGE_PROCESS_START") else ["-S"]
# Two programs that are not MCP servers (issue 27 §3), as `python -c` code: one sends back what it
# reads, as `cat` does; one answers every request "method not found".
ECHO_PROGRAM = ("import sys\nfor line in iter(sys.stdin.buffer.readline, b''):\n"
                "    sys.stdout.buffer.write(line); sys.stdout.buffer.flush()")
REFUSING_PROGRAM = ("import json, sys\nfor line in sys.stdin:\n    msg = json.loads(line)\n    if 'id' in msg:\n"
                    "        print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'error': {'code': -32601, "
                    "'message': 'Method not found'}}), flush=True)")
# Why a test that holds on Windows is skipped on Wine (the windows-latest workflow jobs run it).
WINE_SLOW_START = ("Wine 8.0 takes a second or more to start a Python process (Windows about 0.1 s), "
                   "longer than this test's deliberately short deadline")


def wait_for(predicate, timeout=10.0):
    """Poll a condition that another thread or process makes true.  Not a sleep for correctness:
    the assertion is the condition itself; the deadline only bounds a failure."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


# How many times connect_patiently() tries.
CONNECT_TRIES = 3


def connect_patiently(connect, tries=CONNECT_TRIES):
    """``connect()`` (which makes a client), tried again when it raises RequestTimeout, up to
    ``tries`` times.  For a client whose short ``timeout`` is what a test is about: it bounds the
    handshake too, which a loaded machine may take longer for (PyPy's cold JIT beside other runs,
    Wine).  What the test then does with the client is unchanged."""
    from mcp_min import RequestTimeout
    for attempt in range(tries):
        try:
            return connect()
        except RequestTimeout:
            if attempt == tries - 1:
                raise


def processes():
    """pid -> (state, parent pid, process group) of every process, from Linux's /proc (None without
    it): what the tests look at to see that nothing of a client outlives its close()."""
    if not os.path.isdir("/proc"):
        return None
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()  # (the name in parentheses may hold anything)
            out[int(name)] = (fields[0], int(fields[1]), int(fields[2]))
        except (OSError, ValueError, IndexError):
            continue  # (a process that ended meanwhile)
    return out


# How often a serving thread wakes to see whether stop() was called: stop() waits up to one
# interval, and socketserver's default (0.5 s) made each test's teardown take 0.3-0.5 s.
POLL_INTERVAL = 0.05


def _cut(connection):
    """Shut a connection both ways, as a server that drops it (the peer reads EOF or a reset)."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already gone


class HttpTestHandler(BaseHTTPRequestHandler):
    """HttpTestServer's request handler (HTTP/1.1): hands each request to the server's callables,
    ``post(request, msg)`` with the body parsed as JSON, ``get(request)`` or ``delete(request)``.
    ``request`` is this handler: its ``path``, ``headers`` and ``connection``, and the ways to
    answer below.  Subclass it for what a callable cannot say (another protocol version)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass  # one line per request on stderr would bury a failing test's output

    def do_POST(self):
        self.server.on_post(self, self.read_json())

    def do_GET(self):
        self.server.on_get(self)

    def do_DELETE(self):
        self.server.on_delete(self)

    def read_json(self):
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def reply(self, status, body=b"", headers=(), content_type="application/json"):
        """A whole answer: ``body`` (bytes) with its length, plus ``headers`` as (name, value) pairs.
        An empty 202 (a notification or response accepted) has no Content-Type, as servers send it."""
        self.send_response(status)
        if body or status != 202:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def start_sse(self, headers=(), chunked=False):
        """Start a 200 answer that is an SSE stream, with ``headers`` added.  It ends with the
        connection, or with ``chunked`` it is a kept-alive chunked stream (as SDK servers send)
        whose end is end_sse()."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.chunked = chunked
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def write_sse(self, data):
        """Raw bytes of the stream (one chunk of a chunked one)."""
        if getattr(self, "chunked", False):
            data = b"%x\r\n%s\r\n" % (len(data), data)
        self.wfile.write(data)
        self.wfile.flush()

    def end_sse(self):
        """The end of a chunked stream (the last, empty chunk); the connection stays open."""
        self.write_sse(b"")

    def event(self, msg, event_id=None, kind=None):
        """One SSE event: ``msg`` as JSON, or a str as it is (a line per data field; "" for the
        empty data of a priming event); ``kind`` its event type."""
        payload = msg if isinstance(msg, str) else json.dumps(msg)
        text = ("id: %s\n" % event_id if event_id else "") + ("event: %s\n" % kind if kind else "")
        text += "".join("data: %s\n" % part for part in payload.split("\n")) + "\n"
        self.write_sse(text.encode())

    def wait_for_hangup(self):
        """Block until the client closes the connection, or it is cut (cut(), the server's stop())."""
        try:
            while self.connection.recv(1):
                pass
        except OSError:
            pass

    def cut(self):
        """Cut this connection both ways, as a server that drops it."""
        _cut(self.connection)

    def reset(self):
        """Close this connection with a reset (RST, not FIN): the client sees ECONNRESET."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True


class HttpTestServer(ThreadingHTTPServer):
    """An HTTP server for one test on 127.0.0.1, serving on a daemon thread from the start:

        with HttpTestServer(post=answer) as server:     # answer(request, msg)
            Client(server.url) ...                      # http://127.0.0.1:PORT/mcp

    ``post``, ``get`` and ``delete`` are called with the HttpTestHandler (see there); without
    them a POST is answered 405, a GET 405 (no stream) and a DELETE 200 (the session ended).
    ``port``: 0 for any free one, or one to start again on (a restarted server).  ``handler``:
    another handler class, for servers that need their own (it may ignore the callables).
    ``tls``: an ssl.SSLContext for https.  stop() (also close(), and leaving the ``with``)
    returns within POLL_INTERVAL and cuts every connection still open, as a server that exits."""

    daemon_threads = True  # a handler still blocked when the test ends does not keep the process

    def __init__(self, post=None, get=None, delete=None, port=0, handler=HttpTestHandler, tls=None):
        ThreadingHTTPServer.__init__(self, ("127.0.0.1", port), handler)
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.on_post = post or (lambda request, msg: request.reply(405))
        self.on_get = get or (lambda request: request.reply(405))
        self.on_delete = delete or (lambda request: request.reply(200))
        self.port = self.server_address[1]
        self.base = "%s://127.0.0.1:%d" % ("https" if tls is not None else "http", self.port)
        self.url = self.base + "/mcp"
        self._lock = threading.Lock()
        self._connections = set()
        self.thread = threading.Thread(target=self.serve_forever, args=(POLL_INTERVAL,), daemon=True,
                                       name="http-test-server-%d" % self.port)
        self.thread.start()

    def process_request(self, request, client_address):
        with self._lock:
            self._connections.add(request)
        ThreadingHTTPServer.process_request(self, request, client_address)

    def shutdown_request(self, request):
        # Forgotten only once closed: a test that waits for no connection to be left (tests/leftovers.py)
        # then counts descriptors, and must not see this one between the two steps.
        try:
            ThreadingHTTPServer.shutdown_request(self, request)
        finally:
            with self._lock:
                self._connections.discard(request)

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client that hung up, or a connection stop() cut: expected here
        ThreadingHTTPServer.handle_error(self, request, client_address)  # a bug in the test's server

    def stop(self):
        """Stop serving and listening, and cut every connection still open."""
        self.shutdown()
        self.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            _cut(connection)

    close = stop

    def __exit__(self, *exc_info):
        self.stop()  # (socketserver's own __exit__ only closes the socket: serve_forever would go on)


# ---------------------------------------------------------------------------
# The command line as a subprocess
# ---------------------------------------------------------------------------
# The tests start the CLI about 180 times per interpreter.  Started as a script
# (``python mcp_min.py``), every start compiles the 470 KB module first, about 0.15 s of CPU: a
# main script's bytecode is never cached, and CI sets PYTHONDONTWRITEBYTECODE.  So the tests start
# it as the module instead (what ``python -m mcp_min`` does), which loads the bytecode that
# ensure_bytecode() keeps current.  The program sees what the script form gives it: the same
# sys.argv (argv[0] the path of mcp_min.py; its usage reads "python -m mcp_min", as -m's does), this
# checkout first on sys.path and not the current directory, and __name__ "__main__".
# The forms users type are still run as such: ``python -m mcp_min`` from the repository root by
# test_cli.py's test_every_command_runs_on_the_bundled_examples (in the default era), the script by
# test_the_shell (on a terminal), and both by test_mcp_min.py's test_cli_call_prints_the_value.
# The directory whose mcp_min.py the tests run ($MCP_MIN_DIR, as tests/hostile/scenarios.py reads it).
MCP_MIN_DIR = os.environ.get("MCP_MIN_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCP_MIN_SOURCE = os.path.join(MCP_MIN_DIR, "mcp_min.py")

# ``python -c`` with this, then the CLI's arguments.  Not ``-m mcp_min``: -m puts the current
# directory first on sys.path, and the tests run the CLI from various directories.  -c puts it
# there too (as ""), unless -I or -P: removed, as a script's sys.path does not have it.
_CLI_BOOTSTRAP = """\
import runpy, sys
if sys.path[:1] == [""]:
    del sys.path[0]
sys.path.insert(0, %s)
runpy.run_module("mcp_min", run_name="__main__", alter_sys=True)
"""


def _bytecode_is_current(source, cache):
    """The check the import system makes before it uses a timestamp-based cache (PEP 552)."""
    import importlib.util
    try:
        stat = os.stat(source)
        with open(cache, "rb") as f:
            header = f.read(16)
    except OSError:
        return False
    return header == importlib.util.MAGIC_NUMBER + struct.pack(
        "<III", 0, int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)


def ensure_bytecode(source=MCP_MIN_SOURCE):
    """Write this interpreter's bytecode cache of ``source`` (mcp_min.py) unless it is current, so
    that the CLI runs of cli_argv() load it instead of compiling the module each.  Returns the
    cache's path, or None where there is none: a Python without a cache, a checkout it cannot
    write (the runs are then only slower).  Cheap when current (a stat and 16 bytes read).  Safe
    when several interpreters and test processes call it at once: py_compile writes a temporary
    file and renames it over the cache, and every writer writes the same bytes."""
    import importlib.util
    try:
        cache = importlib.util.cache_from_source(source)
    except NotImplementedError:  # sys.implementation.cache_tag is None: no caching
        return None
    if _bytecode_is_current(source, cache):
        return cache
    import py_compile
    try:
        # TIMESTAMP: the header _bytecode_is_current() checks (SOURCE_DATE_EPOCH would make a hash-based one)
        py_compile.compile(source, cfile=cache, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    except (OSError, py_compile.PyCompileError):  # (Windows refuses the rename while another process reads it)
        return None
    return cache


def cli_argv(*python_options):
    """The argv that runs mcp_min's command line, from its bytecode (see above): append the CLI's
    arguments.  ``python_options`` go to the interpreter (NO_SITE, say)."""
    ensure_bytecode()  # (current already, normally: tests/conftest.py calls it once per session)
    return [sys.executable] + list(python_options) + ["-c", _CLI_BOOTSTRAP % ascii(MCP_MIN_DIR)]


def run_cli(*args, python_options=(), **kwargs):
    """subprocess.run() of the command line with these arguments (see cli_argv); stdout and stderr
    are captured unless ``kwargs`` say otherwise."""
    if "capture_output" not in kwargs:
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(cli_argv(*python_options) + list(args), **kwargs)
