# mcp_min -- MIT License, see LICENSE. Copyright (c) 2026 the mcp_min authors.
"""A synchronous Model Context Protocol client in one file, standard library only.

It speaks stdio and Streamable HTTP (plus the legacy HTTP+SSE transport) to
servers of every MCP revision from 2024-11-05 to 2026-07-28, picking the newest
version both sides share.  There is nothing to install: copy this file into
your project.

    >>> from mcp_min import Client
    >>> Client(["python", "examples/calc.py"]).call("add", a=1, b=2)
    3
"""

import base64
import collections
import itertools
import json
import logging
import os
import shlex
import subprocess
import sys
import threading
import time
import weakref

__version__ = "0.1.0"

__all__ = [
    "Client", "Future", "Subscription", "McpError", "RequestError", "ResourceNotFound",
    "ToolError", "ConnectionClosed", "RequestTimeout", "RequestCancelled", "HttpError",
    "AuthRequired", "main",
]

_log = logging.getLogger("mcp_min")
_server_log = logging.getLogger("mcp_min.server")

# Protocol revisions, newest first.  The first entry is what we offer.
MODERN_VERSIONS = ("2026-07-28",)
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED_VERSIONS = MODERN_VERSIONS + LEGACY_VERSIONS

DEFAULT_TIMEOUT = 30.0  # seconds, connect included; the official SDKs use similar.
PROBE_TIMEOUT = 5.0  # the spec asks for a "reasonable" wait for server/discover;
#                      enough for a slow interpreter start, short enough to fall back.
CLOSE_GRACE = 2.0  # seconds a server gets after stdin EOF, then again after SIGTERM.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # one JSON-RPC message; larger is dropped, not buffered.
STDERR_LINES = 200  # stderr lines kept for error messages and Client.stderr.
MAX_QUEUED_CALLBACKS = 10000  # notifications waiting for a slow callback before we drop more.
MAX_ANSWER_THREADS = 8  # server requests answered at once; more wait their turn in order.
MAX_INPUT_ROUNDS = 8  # input_required round trips before we give up on a request.
MAX_PAGES = 1000  # pages followed by list_* before a cursor loop is assumed.
_TRACE_CHARS = 4000  # a traced message longer than this is shortened in the log.

_META_PREFIX = "io.modelcontextprotocol/"
_CLIENT_INFO = {"name": "mcp_min", "version": __version__}


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

# JSON-RPC and MCP error codes, in one table.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  # up to 2025-11-25; 2026-07-28 uses INVALID_PARAMS
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 only
HEADER_MISMATCH = -32020  # 2026-07-28
MISSING_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28
_MODERN_ERRORS = (HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)


class McpError(Exception):
    """Base class of every error mcp_min raises."""


class RequestError(McpError):
    """The server answered a request with a JSON-RPC error.

    Attributes: ``code`` (int), ``message`` (str), ``data`` (any JSON or None).
    """

    def __init__(self, code, message, data=None, method=None):
        self.code, self.message, self.data, self.method = code, message, data, method
        text = "%s (code %s)" % (message, code)
        if method:
            text = "%s failed: %s" % (method, text)
        if data is not None:
            text += ": " + _shorten(json.dumps(data), 300)
        McpError.__init__(self, text)


class ResourceNotFound(RequestError):
    """``read_resource`` named a URI the server does not have (-32002 or -32602)."""


class ToolError(McpError):
    """A tool ran and reported failure (``isError: true``); ``.result`` is the raw result."""

    def __init__(self, message, result):
        McpError.__init__(self, message)
        self.result = result


class ConnectionClosed(McpError):
    """The connection to the server is gone, or could not be made.

    ``returncode`` is the stdio server's exit code (None when unknown) and
    ``stderr`` the last lines it wrote to stderr.
    """

    def __init__(self, message, returncode=None, stderr=(), detail=""):
        McpError.__init__(self, message + detail)
        self.returncode = returncode
        self.stderr = list(stderr)
        self.summary, self.detail = message, detail  # what happened; the stderr excerpt


class RequestTimeout(McpError, TimeoutError):
    """No answer arrived in time.  The request was cancelled; the client stays usable."""


class RequestCancelled(McpError):
    """The request was cancelled with ``Future.cancel()``."""


class HttpError(McpError):
    """An HTTP request failed with a status the protocol gives no other meaning.

    Attributes: ``url``, ``status`` (int), ``body`` (the first part of the body, str).
    """

    def __init__(self, url, status, body="", reason=""):
        self.url, self.status, self.body = url, status, body
        text = "HTTP %s %sfrom %s" % (status, reason + " " if reason else "", url)
        if body:
            text += ": " + _shorten(body, 300)
        McpError.__init__(self, text)


class AuthRequired(HttpError):
    """The server wants (other) credentials: HTTP 401, or 403 with insufficient scope.

    ``challenge`` holds the ``WWW-Authenticate`` Bearer parameters; the common
    ones are also attributes: ``resource_metadata`` (URL of the protected
    resource metadata), ``scope``, ``error``, ``error_description``.
    """

    def __init__(self, url, status, body, challenge):
        HttpError.__init__(self, url, status, body)
        self.challenge = challenge
        self.resource_metadata = challenge.get("resource_metadata")
        self.scope = challenge.get("scope")
        self.error = challenge.get("error")
        self.error_description = challenge.get("error_description")
        hint = " (pass headers={'Authorization': 'Bearer <token>'}"
        if self.resource_metadata:
            hint += "; resource metadata at %s" % self.resource_metadata
        if self.scope:
            hint += "; scope %r" % self.scope
        self.args = (self.args[0] + hint + ")",)


class _SessionExpired(ConnectionClosed):
    """Internal: HTTP 404 for a request that carried a session id."""

    def __init__(self, message, session_id):
        ConnectionClosed.__init__(self, message)
        self.session_id = session_id


def _shorten(text, limit):
    if len(text) <= limit:
        return text
    return "%s... (%d more characters)" % (text[:limit], len(text) - limit)


# ---------------------------------------------------------------------------
# JSON-RPC core: encoding, ids, futures.  No I/O here.
# ---------------------------------------------------------------------------

_dumps = json.JSONEncoder(separators=(",", ":")).encode  # ASCII only, so no raw newline can appear


def _encode_line(msg):
    """One message as one line of bytes (stdio framing)."""
    return (_dumps(msg) + "\n").encode("ascii")


def _is_id(value):
    # JSON-RPC ids are strings or integers; compare by exact JSON type (1 != "1", and
    # neither true nor 1.0 may stand for 1).
    return type(value) is int or type(value) is str


def _error_from(msg, method=None):
    err = msg.get("error")
    if not isinstance(err, dict):
        return McpError("malformed error answer to %s: %s" % (method, _shorten(_dumps(msg), 200)))
    code = err.get("code")
    return RequestError(code if type(code) is int else INTERNAL_ERROR, str(err.get("message", "")),
                        err.get("data"), method)


def _trace(direction, msg):
    text = _dumps(msg)
    if len(text) > _TRACE_CHARS:
        text = _shorten(text, _TRACE_CHARS)
    _log.debug("%s %s", direction, text)


class Future(object):
    """The pending answer to one request, as returned by ``Client.submit``.

    ``result(timeout)`` waits for it; ``done()`` tells whether it is there;
    ``cancel()`` withdraws the request (the server is told).
    """

    __slots__ = ("_session", "id", "method", "_params", "_timeout", "_deadline", "_cancellable", "_finish",
                 "_latch", "_msg", "_outcome", "progress", "_renewable", "__weakref__")

    def __init__(self, session, request_id, method, params, timeout, finish, progress, cancellable=True):
        self._session = session
        self.id = request_id
        self.method = method
        self._params = params
        self._timeout = timeout
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._cancellable = cancellable  # initialize and the discovery probe must not be cancelled
        self._finish = finish  # turns the raw answer into the caller's value; may block (MRTR)
        self._latch = threading.Lock()  # a one-slot queue: held until the answer is set
        self._latch.acquire()
        self._msg = None  # the answer message, or an McpError that ended the request
        self._outcome = None  # (value, error) once computed
        self.progress = progress
        self._renewable = True  # may be repeated once in a new HTTP session

    def _set(self, msg):
        # Called once, by whoever removed this future from the pending map.
        self._msg = msg
        self._latch.release()

    def done(self):
        """True once the answer (or a failure) has arrived."""
        return self._msg is not None

    def cancel(self, reason="cancelled by the client"):
        """Withdraw the request: the server is told, ``result()`` raises RequestCancelled.

        Returns False when the answer had already arrived.
        """
        if not self._session._withdraw(self, reason):
            return False
        self._set(RequestCancelled("%s %s" % (self.method, reason)))
        return True

    def result(self, timeout=None):
        """Wait for the answer and return the value.

        The request's own deadline (the client's or the call's ``timeout``) always
        applies; when it passes, the request is cancelled and RequestTimeout
        raised.  A smaller ``timeout`` here only limits this wait.
        """
        if self._outcome is None:
            if self._msg is None:
                self._wait(timeout)
            self._outcome = self._settle(self._msg)
        value, error = self._outcome
        if error is not None:
            raise error
        return value

    def _settle(self, msg):
        """(value, error) from the answer, after the one retry the protocol may ask for."""
        if self._renewable and self.method != "initialize":
            if isinstance(msg, _SessionExpired):
                # HTTP 404 on our session: initialize again, then repeat the request once.
                msg = self._repeat(lambda: self._session._restart_session(msg))
            elif self.method == "tools/call" and isinstance(msg, dict) and isinstance(msg.get("error"), dict) \
                    and msg["error"].get("code") == HEADER_MISMATCH:
                # Our Mcp-Param-* headers may follow an outdated tools/list: refetch it, repeat once.
                msg = self._repeat(lambda: self._session.list_tools(True))
        if isinstance(msg, BaseException):
            return None, msg
        if "error" in msg:
            return None, _error_from(msg, self.method)
        try:
            return self._finish(self, msg.get("result")), None
        except McpError as e:
            return None, e

    def _repeat(self, prepare):
        try:
            prepare()
            left = None if self._deadline is None else max(self._deadline - time.monotonic(), 0)
            retry = self._session.submit(self.method, self._params, left, self.progress, inline=True, raw=True)
        except McpError as e:
            return e
        retry._renewable = False
        if retry._msg is None:
            retry._wait(None)
        return retry._msg

    def _wait(self, timeout):
        wait = None if self._deadline is None else max(self._deadline - time.monotonic(), 0)
        local = timeout is not None and (wait is None or timeout < wait)
        if local:
            wait = max(timeout, 0)
        if self._latch.acquire(True, -1 if wait is None else wait):
            self._latch.release()  # leave it open for other waiters
            return
        if local:
            raise RequestTimeout("no answer to %s within %.3g s (still waiting)" % (self.method, timeout))
        if self._session._withdraw(self, "timed out after %.3g s" % self._timeout):
            self._set(RequestTimeout("no answer to %s within %.3g s%s" % (
                self.method, self._timeout, "; request cancelled" if self._cancellable else "")))
        else:  # the answer won the race
            self._latch.acquire()
            self._latch.release()


# ---------------------------------------------------------------------------
# Transports.  Each moves messages and reports what it receives to a sink:
#   sink._on_message(msg)            a decoded message (dict or list) arrived
#   sink._on_request_failed(id, exc) one request cannot be answered (HTTP)
#   sink._on_closed(exc)             the connection is gone (called once)
# and offers start(sink), send(msg, deadline, inline, headers), abort(id), close().
# ---------------------------------------------------------------------------

# Variables a server may reasonably need; the rest of the caller's environment
# (API keys, tokens) is passed only when asked for.
_SAFE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
             "TZ") if os.name != "nt" else (
    "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "PROGRAMFILES", "COMSPEC")


def _server_env(env, inherit):
    base = dict(os.environ) if inherit else {k: os.environ[k] for k in _SAFE_ENV if k in os.environ}
    base.update(env or {})
    return base


class _StdioTransport(object):
    """A server process spoken to over its stdin/stdout, one JSON message per line."""

    kind = "stdio"

    def __init__(self, argv, env=None, inherit_env=False, cwd=None, on_stderr=None):
        self.argv = list(argv)
        self.name = "server %r" % " ".join(self.argv)
        self._env = _server_env(env, inherit_env)
        self._cwd = cwd
        self._on_stderr = on_stderr
        self.stderr_tail = collections.deque(maxlen=STDERR_LINES)
        self._write_lock = threading.Lock()
        self._proc = None
        self._closing = False
        self._threads = []
        self.modern = False
        self.protocol_version = None

    def start(self, sink):
        if not self.argv:
            raise ValueError("the server command is empty")
        try:
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=self._env, cwd=self._cwd, close_fds=True,
                # Own process group, so close() also reaches what a launcher (npx, uv) spawned.
                start_new_session=(os.name == "posix"))
        except OSError as e:
            raise ConnectionClosed("cannot start %s: %s" % (self.name, e.strerror or e))
        self._stdin_fd = self._proc.stdin.fileno()
        if os.name == "posix":  # lets a write give up when the server stops reading
            os.set_blocking(self._stdin_fd, False)
        pid = self._proc.pid
        for name, target in (("reader", self._read_loop), ("stderr", self._stderr_loop)):
            t = threading.Thread(target=target, args=(sink,) if name == "reader" else (),
                                 name="mcp_min-%s-%d" % (name, pid), daemon=True)
            self._threads.append(t)
        for t in self._threads:
            t.start()

    # -- receiving -------------------------------------------------------
    def _read_loop(self, sink):
        readline = self._proc.stdout.readline
        on_message = sink._on_message
        try:
            while True:
                line = readline(MAX_MESSAGE_BYTES)
                if not line:
                    break
                if len(line) >= MAX_MESSAGE_BYTES and line[-1:] != b"\n":
                    dropped = len(line)
                    while line and line[-1:] != b"\n":
                        line = readline(1 << 20)
                        dropped += len(line)
                    _log.warning("%s sent a message of over %d bytes; dropped it", self.name, dropped)
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    if line.strip():  # blank lines and bare CRs are tolerated silently
                        _log.warning("%s wrote a line that is not JSON: %s", self.name,
                                     _shorten(repr(line), 200))
                    continue
                try:
                    on_message(msg)
                except Exception:  # a bug in dispatch must not end the reader
                    _log.exception("error dispatching a message from %s", self.name)
        except (OSError, ValueError):
            pass  # the pipe was closed under us by close()
        finally:
            sink._on_closed(self._closed_error())

    def _stderr_loop(self):
        readline = self._proc.stderr.readline
        tail = self.stderr_tail
        try:
            while True:
                line = readline(65536)
                if not line:
                    return
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                tail.append(_shorten(text, 1000))
                if self._on_stderr is not None:
                    try:
                        self._on_stderr(text)
                    except Exception:
                        _log.exception("on_stderr callback failed")
        except (OSError, ValueError):
            pass

    def _closed_error(self):
        if self._closing:
            return ConnectionClosed("client closed the connection to %s" % self.name)
        try:
            code = self._proc.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        self._threads[1].join(0.5)  # let the last stderr lines arrive
        tail = list(self.stderr_tail)
        if code is None:
            text = "%s closed its stdout" % self.name
        else:
            text = "%s exited with code %s" % (self.name, code)
        if tail:
            shown = tail[-10:]
            more = " (%d earlier lines not shown)" % (len(tail) - len(shown)) if len(tail) > len(shown) else ""
            detail = "; last stderr lines%s:\n  %s" % (more, "\n  ".join(shown))
        else:
            detail = " (no stderr output)"
        return ConnectionClosed(text, code, tail, detail)

    # -- sending ---------------------------------------------------------
    def send(self, msg, deadline=None, inline=False, headers=None):
        data = _encode_line(msg)
        lock = self._write_lock
        if not lock.acquire(True, -1 if deadline is None else max(deadline - time.monotonic(), 0)):
            raise RequestTimeout("%s is not reading its stdin" % self.name)
        try:
            self._write_all(data, deadline)
        finally:
            lock.release()

    def _write_all(self, data, deadline):
        fd = self._stdin_fd
        view = memoryview(data)
        while view:
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                n = 0
            except (OSError, ValueError) as e:
                raise ConnectionClosed("cannot write to %s: %s" % (self.name, e))
            view = view[n:]
            if view:  # pipe full: wait until the server reads, within the deadline
                import select
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0 or not select.select([], [fd], [], wait)[1]:
                    # Part of a message went out: the stream is no longer in sync.
                    self._kill()
                    raise ConnectionClosed("%s stopped reading its stdin; connection dropped" % self.name)

    def abort(self, request_id):
        return False  # stdio cancels with notifications/cancelled only

    def connected(self):
        pass

    def fallback(self, error):
        return None

    # -- shutting down ---------------------------------------------------
    def close(self):
        """Close stdin, wait, SIGTERM, wait, SIGKILL; then reap and join (bounded)."""
        proc = self._proc
        if proc is None or self._closing:
            return
        self._closing = True
        with self._write_lock:
            try:
                proc.stdin.close()
            except OSError:
                pass
        try:
            proc.wait(CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            self._signal("SIGTERM")
            try:
                proc.wait(CLOSE_GRACE)
            except subprocess.TimeoutExpired:
                self._kill()
        self._signal("SIGKILL") if os.name == "posix" else None  # stragglers in the group
        me = threading.current_thread()
        alive = False
        for t in self._threads:
            if t is not me:
                t.join(CLOSE_GRACE)
            alive = alive or t.is_alive()
        if not alive:  # closing a pipe a live thread is reading could block; leave those to exit
            for f in (proc.stdout, proc.stderr):
                try:
                    f.close()
                except OSError:
                    pass

    def _signal(self, name):
        proc = self._proc
        try:
            if os.name == "posix":
                import signal
                os.killpg(proc.pid, getattr(signal, name))
            elif name == "SIGTERM":
                proc.terminate()
            else:
                proc.kill()
        except (OSError, ValueError):
            pass  # already gone

    def _kill(self):
        self._signal("SIGKILL")
        try:
            self._proc.wait(CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            pass


# -- HTTP helpers (pure) -----------------------------------------------------

class _SseParser(object):
    """Incremental server-sent-events parser (WHATWG rules), fed one line at a time."""

    def __init__(self):
        self._data = []
        self._event = ""
        self.last_id = None
        self.retry_ms = None

    def feed(self, raw):
        """Feed one line (bytes, with or without its end).  Returns a list of
        complete events ``(type, data)``, usually empty."""
        line = raw.decode("utf-8", "replace")
        if line.endswith("\n"):
            line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
        events = []
        for part in line.split("\r"):  # a lone CR also ends a line
            event = self._feed_one(part)
            if event is not None:
                events.append(event)
        return events

    def _feed_one(self, line):
        if not line:
            data, kind = "\n".join(self._data), self._event or "message"
            self._data, self._event = [], ""
            if not data:  # e.g. the priming event that only carries an id
                return None
            return kind, data
        if line[0] == ":":
            return None  # comment / keep-alive
        field, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self.last_id = value
        elif field == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None


def _parse_www_authenticate(value):
    """The parameters of a Bearer challenge, as a dict (keys lower-cased)."""
    import re
    out = {}
    if not value:
        return out
    for m in re.finditer(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))', value):
        out[m.group(1).lower()] = m.group(2).replace('\\"', '"') if m.group(2) is not None else m.group(3)
    return out


_TCHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _header_value(value):
    """Encode a value for Mcp-Name / Mcp-Param-* headers (2026-07-28 rules)."""
    text = value if isinstance(value, str) else ("true" if value is True else "false" if value is False
                                                 else str(value))
    plain = (text == text.strip(" \t") and all(c in " \t" or "\x21" <= c <= "\x7e" for c in text)
             and not (text.startswith("=?base64?") and text.endswith("?=")))
    if plain:
        return text
    return "=?base64?%s?=" % base64.b64encode(text.encode("utf-8")).decode("ascii")


def _param_headers(tool):
    """The ``x-mcp-header`` markings of a tool: a list of (path, header name).

    Raises ValueError naming the reason when a marking is invalid (the tool
    must then be hidden, as the 2026-07-28 revision asks).
    """
    found = []
    seen = set()

    def walk(schema, path):
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict):
            return
        for key, sub in props.items():
            if not isinstance(sub, dict):
                continue
            if "x-mcp-header" in sub:
                name = sub["x-mcp-header"]
                if not isinstance(name, str) or not name or any(c not in _TCHARS for c in name):
                    raise ValueError("x-mcp-header %r is not a valid header name" % (name,))
                if name.lower() in seen:
                    raise ValueError("x-mcp-header %r is used twice" % name)
                if sub.get("type") not in ("string", "integer", "boolean"):
                    raise ValueError("x-mcp-header %r marks a property of type %r" % (name, sub.get("type")))
                seen.add(name.lower())
                found.append((path + (key,), name))
            walk(sub, path + (key,))

    schema = tool.get("inputSchema") or {}
    # Markings under items/anyOf/$ref etc. are not reachable through properties alone.
    text = _dumps(schema)
    walk(schema, ())
    if text.count('"x-mcp-header"') != len(found):
        raise ValueError("an x-mcp-header marking is not reachable through properties alone")
    return found


class _HttpTransport(object):
    """Streamable HTTP: every message is a POST; answers come back as JSON or SSE."""

    kind = "streamable-http"

    def __init__(self, url, headers=None, timeout=DEFAULT_TIMEOUT):
        import urllib.request  # only HTTP users pay for urllib/ssl/email
        self._urllib = urllib.request
        self.url = url
        self.name = "server at %s" % url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.session_id = None
        self.protocol_version = None  # negotiated; sent as MCP-Protocol-Version
        self.modern = False  # 2026-07-28 headers, no session, no GET stream
        self.stderr_tail = ()
        self._opener = urllib.request.build_opener()  # honours HTTP(S)_PROXY / NO_PROXY
        self._lock = threading.Lock()
        self._streams = {}  # request id -> open response, so a cancel can close it
        self._listener = None
        self._closed = False
        self._stopping = threading.Event()
        self._sink = None
        self._direct = None  # POSTs bypass urllib (keep-alive pool) unless a proxy applies
        self._idle = []  # idle kept-alive connections

    def start(self, sink):
        self._sink = sink

    # -- one HTTP request ------------------------------------------------
    def _headers(self, extra):
        h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
             "User-Agent": "mcp_min/" + __version__}
        h.update(self.headers)
        if self.session_id is not None and not self.modern:
            h["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            h["MCP-Protocol-Version"] = self.protocol_version
        if extra:
            h.update(extra)
        return h

    def _open(self, method, headers, body=None, deadline=None, url=None):
        """Send one HTTP request; return the response, or raise a McpError subclass.

        HTTP errors come back as (status, headers, body) through ``HttpStatus``."""
        import urllib.error
        url = url or self.url
        timeout = self.timeout if deadline is None else max(deadline - time.monotonic(), 0.05)
        req = self._urllib.Request(url, data=body, headers=headers, method=method)
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("HTTP %s %s %s", method, url, _redact(headers))
        try:
            return self._opener.open(req, timeout=timeout)
        except urllib.error.HTTPError as e:
            try:
                text = e.read(MAX_MESSAGE_BYTES)
            except Exception:
                text = b""
            e.close()
            raise _HttpStatus(url, e.code, e.headers, text)
        except urllib.error.URLError as e:
            reason = getattr(e, "reason", e)
            raise ConnectionClosed("cannot reach %s: %s" % (url, reason))
        except OSError as e:  # timeouts, resets
            import socket
            if isinstance(e, socket.timeout):
                raise RequestTimeout("no answer from %s within %.3g s" % (url, timeout))
            raise ConnectionClosed("connection to %s failed: %s" % (url, e))

    # -- POSTs on kept-alive connections ------------------------------------
    def _post(self, headers, body, deadline):
        """POST to the endpoint, reusing an idle connection when no proxy is in the way.

        urllib opens a connection per request; for a per-call protocol that is
        most of the cost, so direct connections are pooled (through a proxy,
        urllib does the work)."""
        if self._direct is None:
            self._direct = self._no_proxy()
        if not self._direct:
            return self._open("POST", headers, body, deadline)
        import http.client
        timeout = self.timeout if deadline is None else max(deadline - time.monotonic(), 0.05)
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("HTTP POST %s %s", self.url, _redact(headers))
        for attempt in (0, 1):
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            reused = conn is not None
            if conn is None:
                conn = self._connection_class(self._host, self._port, timeout=timeout, **self._conn_kwargs)
            try:
                if reused:
                    conn.sock.settimeout(timeout)
                conn.request("POST", self._path, body, headers)
                resp = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                conn.close()
                if reused and attempt == 0:
                    continue  # the server closed an idle connection: the request never arrived
                raise ConnectionClosed("connection to %s failed: %s" % (self.url, e))
            except OSError as e:
                conn.close()
                import socket
                if isinstance(e, socket.timeout):
                    raise RequestTimeout("no answer from %s within %.3g s" % (self.url, timeout))
                raise ConnectionClosed("cannot reach %s: %s" % (self.url, e))
            except http.client.HTTPException as e:
                conn.close()
                raise ConnectionClosed("bad HTTP answer from %s: %r" % (self.url, e))
            resp._mcp_min_conn = conn
            if resp.status >= 300:
                text = resp.read(MAX_MESSAGE_BYTES)
                self._release(resp)
                raise _HttpStatus(self.url, resp.status, resp.headers, text)
            return resp

    def _release(self, resp):
        """Done with a response: its connection goes back to the pool if it can be reused."""
        conn = getattr(resp, "_mcp_min_conn", None)
        if conn is not None and resp.isclosed() and not resp.will_close and not self._closed:
            with self._lock:
                if len(self._idle) < 8:
                    self._idle.append(conn)
                    return
        resp.close()
        if conn is not None:
            conn.close()

    def _no_proxy(self):
        import urllib.parse
        parts = urllib.parse.urlsplit(self.url)
        proxies = self._urllib.getproxies()
        if parts.scheme in proxies and not self._urllib.proxy_bypass(parts.hostname or ""):
            return False
        import http.client
        self._host, self._port = parts.hostname, parts.port
        self._path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        if parts.scheme == "https":
            import ssl
            self._connection_class = http.client.HTTPSConnection
            self._conn_kwargs = {"context": ssl.create_default_context()}
        else:
            self._connection_class = http.client.HTTPConnection
            self._conn_kwargs = {}
        return True

    def send(self, msg, deadline=None, inline=False, headers=None):
        if "id" in msg and "method" in msg:
            if inline:
                self._exchange(msg, deadline, headers)
            else:
                threading.Thread(target=self._exchange, args=(msg, deadline, headers),
                                 name="mcp_min-http-%s" % msg["id"], daemon=True).start()
            return
        # A notification or our answer to a server request: expect 202, nothing to read.
        try:
            resp = self._post(self._headers(self._modern_headers(msg)), _dumps(msg).encode("ascii"), deadline)
            resp.read()
            self._release(resp)
        except _HttpStatus as e:
            raise e.error(self, msg.get("method"))

    def _modern_headers(self, msg, extra=None):
        if not self.modern or "method" not in msg:
            return extra
        h = {"Mcp-Method": msg["method"]}
        params = msg.get("params") or {}
        if msg["method"] in ("tools/call", "prompts/get"):
            h["Mcp-Name"] = _header_value(params.get("name", ""))
        elif msg["method"] == "resources/read":
            h["Mcp-Name"] = _header_value(params.get("uri", ""))
        if extra:
            h.update(extra)
        return h

    def _exchange(self, msg, deadline, extra):
        """POST a request and deliver everything the answer carries to the sink."""
        rid = msg["id"]
        try:
            try:
                resp = self._post(self._headers(self._modern_headers(msg, extra)),
                                  _dumps(msg).encode("ascii"), deadline)
            except _HttpStatus as e:
                if not self._deliver_error_body(e, rid):
                    raise e.error(self, msg["method"])
                return
            if msg["method"] == "initialize":
                sid = resp.headers.get("Mcp-Session-Id")
                if sid:
                    self.session_id = sid
            self._read_answer(resp, rid, deadline)
        except RequestTimeout:
            pass  # the request's own deadline ends it, cancelling as it should
        except McpError as e:
            self._sink._on_request_failed(rid, e)
        except Exception as e:  # never let a thread die silently
            _log.exception("HTTP exchange failed")
            self._sink._on_request_failed(rid, ConnectionClosed("HTTP exchange with %s failed: %r" % (self.url, e)))

    def _deliver_error_body(self, e, rid):
        """A non-2xx answer whose body is a JSON-RPC error for this request goes to it."""
        if e.status in (401, 403) or (e.status == 404 and self.session_id is not None and not self.modern):
            return False
        try:
            msg = json.loads(e.body)
        except ValueError:
            return False
        if isinstance(msg, dict) and "error" in msg and msg.get("id") == rid and _is_id(msg.get("id")):
            self._sink._on_message(msg)
            return True
        return False

    def _read_answer(self, resp, rid, deadline):
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            if ctype == "text/event-stream":
                if deadline is None:  # a stream meant to stay open (subscriptions/listen)
                    try:
                        resp.fp.raw._sock.settimeout(None)
                    except AttributeError:
                        pass
                with self._lock:
                    self._streams[rid] = resp
                try:
                    parser = _SseParser()
                    if self._read_sse(resp, parser, rid, deadline):
                        return
                finally:
                    with self._lock:
                        self._streams.pop(rid, None)
                if deadline is None or time.monotonic() < deadline:
                    self._resume(parser, rid, deadline)
            elif ctype == "application/json":
                body = resp.read(MAX_MESSAGE_BYTES + 1)
                try:
                    msg = json.loads(body)
                except ValueError:
                    raise HttpError(self.url, resp.status, body[:300].decode("utf-8", "replace"),
                                    "with a body that is not JSON")
                self._sink._on_message(msg)
            else:
                resp.read(65536)
                raise HttpError(self.url, resp.status, "", "with Content-Type %r instead of an answer"
                                % (ctype or None))
        finally:
            self._release(resp)

    def _read_sse(self, resp, parser, rid, deadline):
        """Deliver SSE events until the answer to ``rid`` arrives; True when it did."""
        readline = resp.readline
        on_message = self._sink._on_message
        while True:
            try:
                line = readline(MAX_MESSAGE_BYTES)
            except (OSError, ValueError, AttributeError):
                return False  # dropped, or closed by a cancel
            if not line:
                return False
            for kind, data in parser.feed(line):
                if kind != "message":
                    continue
                try:
                    msg = json.loads(data)
                except ValueError:
                    _log.warning("%s sent an SSE event that is not JSON: %s", self.name, _shorten(data, 200))
                    continue
                on_message(msg)
                for m in (msg if isinstance(msg, list) else (msg,)):
                    if isinstance(m, dict) and "method" not in m and m.get("id") == rid and _is_id(m.get("id")):
                        return True
            if deadline is not None and time.monotonic() > deadline:
                return False

    def _resume(self, parser, rid, deadline):
        """A POST's stream ended before its answer: resume it with GET + Last-Event-ID."""
        for attempt in range(5):
            if self._closed or parser.last_id is None or self.modern or not self._sink._is_pending(rid):
                break
            time.sleep(min((parser.retry_ms or 0) / 1000.0, 10.0))
            try:
                resp = self._open("GET", self._get_headers(parser.last_id), None, deadline)
            except (_HttpStatus, McpError) as e:
                _log.debug("resuming the stream for request %s failed: %s", rid, e)
                continue
            with self._lock:
                self._streams[rid] = resp
            try:
                if self._read_sse(resp, parser, rid, deadline):
                    return
            finally:
                with self._lock:
                    self._streams.pop(rid, None)
                resp.close()
        if self._sink._is_pending(rid):
            raise ConnectionClosed("%s ended the answer stream before answering" % self.name)

    def _get_headers(self, last_event_id=None):
        h = self._headers(None)
        h["Accept"] = "text/event-stream"
        del h["Content-Type"]
        if last_event_id is not None:
            h["Last-Event-ID"] = last_event_id
        return h

    # -- the standalone GET stream (handshake era) --------------------------
    def connected(self):
        """Called after the handshake: listen for server messages on GET when offered.

        Waits (briefly) until the server has answered the GET, so that what the
        server sends there right after our next request is not lost."""
        if self.modern or self._listener is not None:
            return
        ready = threading.Event()
        self._listener = threading.Thread(target=self._listen_loop, args=(ready,), name="mcp_min-get-stream",
                                          daemon=True)
        self._listener.start()
        ready.wait(min(self.timeout, 5.0))

    def _listen_loop(self, ready):
        parser = _SseParser()
        failures = 0
        while not self._closed and failures < 5:
            try:
                resp = self._open("GET", self._get_headers(parser.last_id), None, None)
            except _HttpStatus as e:
                if e.status in (400, 404, 405):
                    ready.set()
                    return  # no standalone stream offered
                failures += 1
            except McpError:
                failures += 1
            else:
                ready.set()
                ctype = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
                if ctype != "text/event-stream":
                    resp.close()
                    return
                with self._lock:
                    self._streams["GET"] = resp
                try:
                    failures = 0
                    self._read_sse(resp, parser, None, None)
                finally:
                    with self._lock:
                        self._streams.pop("GET", None)
                    resp.close()
            ready.set()
            # Honour the server's retry: field; back off further after failures.
            self._stopping.wait(min((parser.retry_ms or 1000) / 1000.0, 10.0) * (failures or 1))

    # -- cancel and close ---------------------------------------------------
    def abort(self, request_id):
        with self._lock:
            resp = self._streams.pop(request_id, None)
        if resp is not None:
            _close_response(resp)
        return self.modern  # in 2026-07-28 closing the stream is the cancellation

    def fallback(self, error):
        """After an ``initialize`` POST failed: the legacy HTTP+SSE transport, or None."""
        if isinstance(error, HttpError) and not isinstance(error, AuthRequired) and error.status in (400, 404, 405):
            return _SseTransport(self.url, self.headers, self.timeout)
        return None

    def close(self):
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        with self._lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for resp in streams:
            _close_response(resp)
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        if self.session_id is not None and not self.modern:
            h = self._get_headers()
            del h["Accept"]
            try:
                self._open("DELETE", h, None, time.monotonic() + min(self.timeout, 5.0)).close()
            except (McpError, _HttpStatus) as e:
                _log.debug("DELETE of the session: %s", e)
        if self._listener is not None:
            self._listener.join(1.0)


class _HttpStatus(Exception):
    """Internal: a non-2xx HTTP answer, before we decide what it means."""

    def __init__(self, url, status, headers, body):
        Exception.__init__(self, status)
        self.url, self.status, self.headers, self.body = url, status, headers, body

    def error(self, transport, method):
        text = self.body[:2000].decode("utf-8", "replace")
        if self.status == 404 and getattr(transport, "session_id", None) is not None \
                and not transport.modern and method != "initialize":
            return _SessionExpired("%s no longer knows our session" % transport.name, transport.session_id)
        challenge = _parse_www_authenticate(self.headers.get("WWW-Authenticate", "") if self.headers else "")
        if self.status == 401 or (self.status == 403 and challenge.get("error") == "insufficient_scope"):
            return AuthRequired(self.url, self.status, text, challenge)
        return HttpError(self.url, self.status, text, "for %s" % method if method else "")


def _close_response(resp):
    # Closing from another thread must unblock a reader stuck in recv(): shut the socket down.
    try:
        import socket
        sock = resp.fp.raw._sock
        sock.shutdown(socket.SHUT_RDWR)
    except Exception:
        pass
    try:
        resp.close()
    except Exception:
        pass


def _redact(headers):
    secret = ("authorization", "cookie", "proxy-authorization", "x-api-key", "api-key", "mcp-session-id")
    return {k: ("<redacted>" if k.lower() in secret or "token" in k.lower() or "key" in k.lower() else v)
            for k, v in headers.items()}


class _SseTransport(_HttpTransport):
    """The 2024-11-05 HTTP+SSE transport: one GET stream in, a POST endpoint out."""

    kind = "sse"

    def __init__(self, url, headers=None, timeout=DEFAULT_TIMEOUT):
        _HttpTransport.__init__(self, url, headers, timeout)
        self.endpoint = None
        self._stream = None
        self._ready = threading.Event()

    def start(self, sink):
        self._sink = sink
        deadline = time.monotonic() + self.timeout
        try:
            resp = self._open("GET", self._get_headers(), None, deadline)
        except _HttpStatus as e:
            raise e.error(self, None)
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype != "text/event-stream":
            resp.close()
            raise HttpError(self.url, resp.status, "", "with Content-Type %r, not an SSE stream" % ctype)
        self._stream = resp
        self._listener = threading.Thread(target=self._sse_loop, args=(resp,), name="mcp_min-sse", daemon=True)
        self._listener.start()
        if not self._ready.wait(max(deadline - time.monotonic(), 0)) or self.endpoint is None:
            self.close()
            raise ConnectionClosed("%s sent no endpoint event" % self.name)

    def _sse_loop(self, resp):
        import urllib.parse
        parser = _SseParser()
        error = ConnectionClosed("%s closed the SSE stream" % self.name)
        try:
            while True:
                try:
                    line = resp.readline(MAX_MESSAGE_BYTES)
                except (OSError, ValueError, AttributeError):
                    break
                if not line:
                    break
                for kind, data in parser.feed(line):
                    if kind == "endpoint":
                        self.endpoint = urllib.parse.urljoin(self.url, data.strip())
                        self._ready.set()
                    elif kind == "message":
                        try:
                            msg = json.loads(data)
                        except ValueError:
                            _log.warning("%s sent an SSE event that is not JSON", self.name)
                            continue
                        try:
                            self._sink._on_message(msg)
                        except Exception:
                            _log.exception("error dispatching a message from %s", self.name)
        finally:
            self._ready.set()
            if self._closed:
                error = ConnectionClosed("client closed the connection to %s" % self.name)
            self._sink._on_closed(error)

    def send(self, msg, deadline=None, inline=False, headers=None):
        if "id" in msg and "method" in msg and not inline:
            threading.Thread(target=self._post, args=(msg, deadline), daemon=True).start()
        else:
            self._post(msg, deadline)

    def _post(self, msg, deadline):
        try:
            try:
                h = self._headers(None)
                h.pop("Mcp-Session-Id", None)
                self._open("POST", h, _dumps(msg).encode("ascii"), deadline, self.endpoint).close()
            except _HttpStatus as e:
                raise e.error(self, msg.get("method"))
        except McpError as e:
            if "id" in msg and "method" in msg:
                self._sink._on_request_failed(msg["id"], e)
            else:
                raise

    def connected(self):
        pass

    def abort(self, request_id):
        return False

    def fallback(self, error):
        return None

    def close(self):
        if self._closed:
            return
        self._closed = True
        if self._stream is not None:
            _close_response(self._stream)
        if self._listener is not None and self._listener is not threading.current_thread():
            self._listener.join(1.0)


# ---------------------------------------------------------------------------
# Session: version negotiation, the handshake or stateless _meta, dispatch of
# what the server sends.  Knows nothing of the Client object (so a dropped
# Client can be collected) and nothing of how bytes move.
# ---------------------------------------------------------------------------

class _Worker(object):
    """Runs callbacks in order on one thread, started when first needed, so user
    code never runs on (and never blocks) the reader thread."""

    def __init__(self, name):
        import queue
        self._queue = queue.SimpleQueue()
        self._name = name
        self._thread = None
        self._lock = threading.Lock()
        self._dropping = False

    def put(self, fn, *args):
        if self._queue.qsize() >= MAX_QUEUED_CALLBACKS:
            # A server flooding us while a callback is slow must not eat all memory.
            if not self._dropping:
                _log.warning("callbacks are %d behind; dropping server messages until they catch up",
                             MAX_QUEUED_CALLBACKS)
            self._dropping = True
            return
        self._dropping = False
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                    self._thread.start()
        self._queue.put((fn, args))

    def _run(self):
        get = self._queue.get
        while True:
            item = get()
            if item is None:
                return
            fn, args = item
            try:
                fn(*args)
            except Exception:
                _log.exception("callback %r failed", fn)

    def stop(self):
        if self._thread is not None:
            self._queue.put(None)
            if self._thread is not threading.current_thread():
                self._thread.join(CLOSE_GRACE)


def _roots_result(roots):
    if callable(roots):
        return roots()
    out = []
    for r in roots:
        if isinstance(r, dict):
            out.append(r)
            continue
        uri = str(r)
        if not uri.startswith("file://"):
            import pathlib
            uri = pathlib.Path(uri).resolve().as_uri()
        out.append({"uri": uri, "name": uri.rstrip("/").rsplit("/", 1)[-1]})
    return {"roots": out}


def _apply_defaults(params, result):
    # An accepted form leaves unset fields to their schema defaults (SEP-1034).
    if not isinstance(result, dict) or result.get("action") != "accept":
        return result
    props = ((params or {}).get("requestedSchema") or {}).get("properties") or {}
    content = dict(result.get("content") or {})
    for key, schema in props.items():
        if key not in content and isinstance(schema, dict) and "default" in schema:
            content[key] = schema["default"]
    return dict(result, content=content)


class _Session(object):
    def __init__(self, transport, timeout, protocol_version, probe_timeout, client_info, roots, sampling,
                 elicitation, on_log, on_notification):
        if protocol_version != "auto" and protocol_version not in SUPPORTED_VERSIONS:
            raise ValueError("protocol_version must be 'auto' or one of %s" % ", ".join(SUPPORTED_VERSIONS))
        self.transport = transport
        self.timeout = timeout
        self.wanted_version = protocol_version
        self.probe_timeout = probe_timeout
        self.client_info = dict(client_info or _CLIENT_INFO)
        self.roots, self.sampling, self.elicitation = roots, sampling, elicitation
        self.on_log, self.on_notification = on_log, on_notification
        self.protocol_version = None
        self.modern = False
        self.server_info = {}
        self.server_capabilities = {}
        self.instructions = None
        self._ids = itertools.count(1)
        self._pending = {}
        self._pending_lock = threading.Lock()
        self._error = None  # the ConnectionClosed that ended the session (terminal)
        self._events = _Worker("mcp_min-events")
        self._overflow = _Worker("mcp_min-answers")  # server requests beyond MAX_ANSWER_THREADS
        self._answering = 0
        self._subscriptions = {}  # listen request id -> Subscription
        self._cache = {}  # list method -> (expires, items)
        self._tool_headers = None  # tool name -> x-mcp-header paths (HTTP, 2026-07-28)
        self._base_meta = None
        self._closed = False
        self._restart_lock = threading.Lock()

    # -- capabilities ---------------------------------------------------------
    def capabilities(self, modern):
        caps = {}
        if self.roots is not None:
            caps["roots"] = {} if modern else {"listChanged": False}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {"form": {}}
        return caps

    def _meta(self, version):
        return {_META_PREFIX + "protocolVersion": version,
                _META_PREFIX + "clientCapabilities": self.capabilities(True),
                _META_PREFIX + "clientInfo": self.client_info}

    # -- connecting -------------------------------------------------------------
    def connect(self, restart):
        """Negotiate the version.  ``restart()`` gives a fresh transport when the
        probe killed the old one (stdio servers that die on unknown methods)."""
        deadline = time.monotonic() + self.timeout
        self.transport.start(self)
        wanted = self.wanted_version
        if wanted == "auto" or wanted in MODERN_VERSIONS:
            version = self._probe(deadline, pinned=wanted != "auto")
            if version in MODERN_VERSIONS:
                return
            if self._error is not None:  # the probe ended the connection: start over
                self.transport.close()
                self.transport = restart()
                self._error = None
                self.transport.start(self)
            wanted = version or LEGACY_VERSIONS[0]
        self._handshake(wanted, deadline)

    def _probe(self, deadline, pinned, retried=False):
        """Ask ``server/discover``.  Returns the modern version chosen, a legacy
        version to shake hands with, or None (a handshake-era server)."""
        version = self.protocol_version if retried else MODERN_VERSIONS[0]
        self._base_meta = self._meta(version)
        self.modern = self.transport.modern = True
        self.transport.protocol_version = version
        wait = max(deadline - time.monotonic(), 0) if pinned else min(self.probe_timeout, max(
            deadline - time.monotonic(), 0))
        try:
            result = self.request("server/discover", {}, timeout=wait, cancellable=False)
        except RequestError as e:
            if retried:
                return self.protocol_version  # it is a 2026 server; the discovery data is optional
            supported = (e.data or {}).get("supported") if isinstance(e.data, dict) else None
            if e.code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(supported, list):
                version = self._choose(supported, None)
                if version in MODERN_VERSIONS and not retried:  # ask again, in a version it speaks
                    return self._probe(deadline, pinned, True)
                return version
            if e.code in _MODERN_ERRORS or pinned:
                if pinned:
                    raise
                return self._choose([version], {})
            self._be_legacy()
            _log.debug("server/discover failed (%s): a handshake-era server", e)
            return None
        except (RequestTimeout, HttpError, ConnectionClosed) as e:
            if pinned or isinstance(e, AuthRequired):
                raise
            self._be_legacy()
            _log.debug("server/discover failed (%s): a handshake-era server", e)
            return None
        if not isinstance(result, dict) or not isinstance(result.get("supportedVersions"), list):
            if pinned:
                raise McpError("server/discover answer has no supportedVersions: %s" % _shorten(_dumps(result), 300))
            self._be_legacy()
            return None
        return self._choose(result["supportedVersions"], result)

    def _be_legacy(self):
        self.modern = self.transport.modern = False
        self.transport.protocol_version = None
        self._base_meta = None

    def _choose(self, supported, discovered):
        for v in MODERN_VERSIONS:
            if v in supported:
                self.protocol_version = self.transport.protocol_version = v
                self._base_meta = self._meta(v)
                if discovered is not None:
                    self._take_discovery(discovered)
                return v
        self._be_legacy()
        for v in LEGACY_VERSIONS:
            if v in supported:
                return v
        raise McpError("no protocol version in common: the server supports %s, mcp_min supports %s"
                       % (", ".join(map(str, supported)), ", ".join(SUPPORTED_VERSIONS)))

    def _take_discovery(self, result):
        self.server_capabilities = result.get("capabilities") or {}
        self.instructions = result.get("instructions")
        meta = result.get("_meta") or {}
        self.server_info = meta.get(_META_PREFIX + "serverInfo") or {}

    def _handshake(self, version, deadline, retried=False):
        params = {"protocolVersion": version, "capabilities": self.capabilities(False),
                  "clientInfo": self.client_info}
        try:
            result = self.request("initialize", params, timeout=max(deadline - time.monotonic(), 0), cancellable=False)
        except RequestError as e:
            supported = e.data.get("supported") if isinstance(e.data, dict) else None
            if not retried and isinstance(supported, list):
                common = [v for v in LEGACY_VERSIONS if v in supported]
                if common:
                    return self._handshake(common[0], deadline, True)
            raise
        except HttpError as e:
            replacement = None if retried else self.transport.fallback(e)
            if replacement is None:
                raise
            _log.debug("initialize POST failed (%s); trying the HTTP+SSE transport", e)
            self.transport = replacement
            replacement.start(self)
            return self._handshake(version, deadline, True)
        answered = result.get("protocolVersion") if isinstance(result, dict) else None
        if answered not in LEGACY_VERSIONS:
            raise McpError("the server answered initialize with protocol version %r; mcp_min speaks %s"
                           % (answered, ", ".join(SUPPORTED_VERSIONS)))
        self.protocol_version = self.transport.protocol_version = answered
        self.server_capabilities = result.get("capabilities") or {}
        self.server_info = result.get("serverInfo") or {}
        self.instructions = result.get("instructions")
        self.notify("notifications/initialized")
        self.transport.connected()

    # -- sending ------------------------------------------------------------------
    def submit(self, method, params=None, timeout=None, progress=None, finish=None, inline=False,
               cancellable=True, raw=False, on_id=None):
        """Send a request; return its Future.  ``inline`` lets an HTTP transport use the
        calling thread, which is about to wait anyway."""
        if self._error is not None:
            raise self._error
        rid = next(self._ids)
        if on_id is not None:
            on_id(rid)
        if self._base_meta is not None:  # stateless: every request describes the client
            params = dict(params) if params else {}
            meta = dict(params.get("_meta") or ())
            meta.update(self._base_meta)
            params["_meta"] = meta
        if progress is not None:
            params = dict(params) if params else {}
            params["_meta"] = dict(params.get("_meta") or (), progressToken=rid)
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        timeout = self.timeout if timeout is None else None if timeout is _NO_TIMEOUT else timeout
        if raw:
            done = _plain_result
        elif finish is None:
            done = self._complete
        else:
            done = lambda f, r: finish(self._complete(f, r))  # noqa: E731
        fut = Future(self, rid, method, params, timeout, done, progress, cancellable)
        with self._pending_lock:
            self._pending[rid] = fut
        if _log.isEnabledFor(logging.DEBUG):
            _trace("->", msg)
        try:
            self.transport.send(msg, fut._deadline, inline,
                                self._param_headers(params) if method == "tools/call" else None)
        except McpError as e:
            self._on_request_failed(rid, e)
        return fut

    def request(self, method, params=None, timeout=None, progress=None, finish=None, cancellable=True):
        """Send a request and wait for its result (the result dict, or what ``finish`` makes of it)."""
        return self.submit(method, params, timeout, progress, finish, True, cancellable).result()

    def notify(self, method, params=None):
        if self._error is not None:
            raise self._error
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if _log.isEnabledFor(logging.DEBUG):
            _trace("->", msg)
        self.transport.send(msg, time.monotonic() + self.timeout)

    def _restart_session(self, expired):
        """HTTP 404 on our session: the server forgot it.  Shake hands again, once for
        however many requests found out at the same time."""
        with self._restart_lock:
            if self.transport.session_id != expired.session_id:
                return  # another thread already did
            _log.info("%s forgot session %s; initializing again", self.transport.name, expired.session_id)
            self.transport.session_id = None
            self.transport.protocol_version = None
            self._handshake(self.protocol_version or LEGACY_VERSIONS[0], time.monotonic() + self.timeout, True)

    def _withdraw(self, fut, reason):
        """Remove a pending request and tell the server; False if it had already ended."""
        with self._pending_lock:
            if self._pending.pop(fut.id, None) is None:
                return False
        if self.transport.abort(fut.id) or self._error is not None or not fut._cancellable:
            return True
        try:
            self.notify("notifications/cancelled", {"requestId": fut.id, "reason": reason})
        except McpError as e:
            _log.debug("could not send notifications/cancelled: %s", e)
        return True

    def _complete(self, fut, result):
        """Check a result's resultType (2026-07-28) and run input_required rounds."""
        result = _plain_result(fut, result)
        if not self.modern:
            return result
        rounds = 0
        while True:
            kind = result.get("resultType", "complete")
            if kind == "complete":
                return result
            if kind != "input_required" or fut.method not in _INPUT_METHODS:
                raise McpError("%s answered with resultType %r, which mcp_min does not know"
                               % (fut.method, kind))
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise McpError("%s still asked for input after %d rounds; giving up"
                               % (fut.method, MAX_INPUT_ROUNDS))
            responses = {}
            requests = result.get("inputRequests") or {}
            for key, ask in requests.items():
                ask = ask if isinstance(ask, dict) else {}
                try:
                    responses[key] = self._serve(ask.get("method"), ask.get("params") or {})
                except RequestError as e:
                    raise McpError("%s needs %s input, which this client cannot give: %s"
                                   % (fut.method, ask.get("method"), e.message))
            params = dict(fut._params or ())
            params.pop("inputResponses", None)
            params.pop("requestState", None)
            if requests:
                params["inputResponses"] = responses
            if "requestState" in result:  # echoed untouched, and only when sent
                params["requestState"] = result["requestState"]
            left = None if fut._deadline is None else max(fut._deadline - time.monotonic(), 0)
            retry = self.submit(fut.method, params, left, fut.progress, inline=True, raw=True)
            result = retry.result()

    def _param_headers(self, params):
        """Mcp-Param-* headers for a tools/call (Streamable HTTP, 2026-07-28)."""
        table = self._tool_headers
        if not self.modern or table is None or self.transport.kind == "stdio":
            return None
        paths = table.get(params.get("name"))
        if not paths:
            return None
        out = {}
        for path, name in paths:
            value = params.get("arguments") or {}
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if value is not None:
                out["Mcp-Param-" + name] = _header_value(value)
        return out

    # -- lists --------------------------------------------------------------------
    def list_all(self, method, key, refresh=False):
        """Every page of a list, from the cache while the server's ttlMs allows."""
        cached = self._cache.get(method)
        if cached is not None and not refresh and cached[0] > time.monotonic():
            return list(cached[1])
        items, cursor, seen, ttl = [], None, set(), None
        for _ in range(MAX_PAGES):
            result = self.request(method, {"cursor": cursor} if cursor is not None else None)
            items.extend(result.get(key) or [])
            page_ttl = result.get("ttlMs")
            page_ttl = page_ttl if type(page_ttl) is int and page_ttl > 0 else 0
            ttl = page_ttl if ttl is None else min(ttl, page_ttl)
            cursor = result.get("nextCursor")
            if cursor is None or (cursor == "" and not self.modern):  # 2026: "" is a real cursor
                break
            if cursor in seen:
                raise McpError("%s repeated the cursor %r; stopping" % (method, cursor))
            seen.add(cursor)
        else:
            raise McpError("%s returned more than %d pages; stopping" % (method, MAX_PAGES))
        if ttl:
            self._cache[method] = (time.monotonic() + ttl / 1000.0, items)
        return list(items)

    def list_tools(self, refresh=False):
        tools = self.list_all("tools/list", "tools", refresh)
        if self.modern and self.transport.kind != "stdio":
            table, kept = {}, []
            for tool in tools:
                try:
                    table[tool.get("name")] = _param_headers(tool)
                    kept.append(tool)
                except ValueError as e:
                    _log.warning("hiding tool %r: %s", tool.get("name"), e)
            self._tool_headers = table
            tools = kept
        return tools

    # -- receiving (reader thread) -------------------------------------------------
    def _on_message(self, msg):
        if _log.isEnabledFor(logging.DEBUG):
            _trace("<-", msg)
        if type(msg) is not dict:
            if isinstance(msg, list):  # a 2025-03-26 batch
                for m in msg:
                    self._on_message(m)
            else:
                _log.warning("ignored a message that is not an object: %s", _shorten(repr(msg), 200))
            return
        method = msg.get("method")
        if method is None:
            rid = msg.get("id")
            with self._pending_lock:
                fut = self._pending.pop(rid, None) if _is_id(rid) else None
            if fut is not None:
                fut._set(msg)
                if self._subscriptions and rid in self._subscriptions:  # the server ended a listen
                    self._subscriptions.pop(rid)._end(None)
            elif "error" in msg and rid is None:
                _log.warning("server reported an error: %s", _shorten(_dumps(msg["error"]), 500))
            else:
                _log.debug("ignored an answer to unknown request id %r", rid)
            return
        if "id" in msg:  # the server asks something of us: answer from another thread
            with self._pending_lock:
                spare = self._answering < MAX_ANSWER_THREADS
                if spare:
                    self._answering += 1
            if spare:
                threading.Thread(target=self._answer, args=(msg, True), name="mcp_min-answer", daemon=True).start()
            else:  # a flood of requests: one more thread would not help, a queue bounds the cost
                self._overflow.put(self._answer, msg, False)
            return
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method == "notifications/progress":
            with self._pending_lock:
                fut = self._pending.get(params.get("progressToken"))
            if fut is not None and fut.progress is not None:
                self._events.put(fut.progress, params.get("progress"), params.get("total"), params.get("message"))
            return
        if method == "notifications/message":
            self._events.put(self._log_message, params)
            return
        sub_id = (params.get("_meta") or {}).get(_META_PREFIX + "subscriptionId")
        if method == "notifications/cancelled" and params.get("requestId") in self._subscriptions:
            sub_id = params.get("requestId")
        if method.endswith("/list_changed") or method == "notifications/resources/updated":
            self._cache.pop(method.replace("notifications/", "").replace("/list_changed", "/list"), None)
            if method == "notifications/resources/list_changed":
                self._cache.pop("resources/templates/list", None)
        sub = self._subscriptions.get(sub_id) if sub_id is not None else None
        if sub is not None:
            self._events.put(sub._deliver, method, params)
        elif self._subscriptions and sub_id is None and not self.modern:
            for sub in list(self._subscriptions.values()):
                self._events.put(sub._deliver, method, params)
        elif self.on_notification is not None:
            self._events.put(self.on_notification, method, params)

    def _log_message(self, params):
        if self.on_log is not None:
            self.on_log(params.get("level"), params.get("logger"), params.get("data"))
            return
        level = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
                 "warning": logging.WARNING}.get(params.get("level"), logging.ERROR)
        _server_log.log(level, "%s%s", "[%s] " % params["logger"] if params.get("logger") else "",
                        params.get("data"))

    def _answer(self, msg, own_thread):
        try:
            self._answer_one(msg)
        finally:
            if own_thread:
                with self._pending_lock:
                    self._answering -= 1

    def _answer_one(self, msg):
        method, rid = msg["method"], msg["id"]
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            result = self._serve(method, params)
            answer = {"jsonrpc": "2.0", "id": rid, "result": result}
        except RequestError as e:
            answer = {"jsonrpc": "2.0", "id": rid, "error": {"code": e.code, "message": e.message}}
        except Exception as e:
            _log.exception("answering the server's %s failed", method)
            answer = {"jsonrpc": "2.0", "id": rid, "error": {"code": INTERNAL_ERROR, "message": "%s: %s" % (
                type(e).__name__, e)}}
        if _log.isEnabledFor(logging.DEBUG):
            _trace("->", answer)
        try:
            self.transport.send(answer, time.monotonic() + self.timeout)
        except McpError as e:
            _log.debug("could not answer the server's %s: %s", method, e)

    def _serve(self, method, params):
        """What we answer to a server request (handshake era) or an input request (MRTR)."""
        if method == "ping":
            return {}
        if method == "roots/list" and self.roots is not None:
            return _roots_result(self.roots)
        if method == "sampling/createMessage" and self.sampling is not None:
            return self.sampling(params)
        if method == "elicitation/create" and self.elicitation is not None:
            return _apply_defaults(params, self.elicitation(params))
        raise RequestError(METHOD_NOT_FOUND, "mcp_min client does not handle %s" % method)


    def _on_request_failed(self, rid, exc):
        with self._pending_lock:
            fut = self._pending.pop(rid, None)
        if fut is not None:
            fut._set(exc)
        sub = self._subscriptions.pop(rid, None)
        if sub is not None:
            sub._end(exc)

    def _is_pending(self, rid):
        with self._pending_lock:
            return rid in self._pending

    def _on_closed(self, exc):
        if self._error is None:
            self._error = exc
        with self._pending_lock:
            pending = list(self._pending.values())
            self._pending.clear()
        for fut in pending:
            fut._set(ConnectionClosed("%s before answering %s" % (getattr(exc, "summary", exc), fut.method),
                                      getattr(exc, "returncode", None), getattr(exc, "stderr", ()),
                                      getattr(exc, "detail", "")))
        for sub in list(self._subscriptions.values()):
            sub._end(exc)

    def close(self):
        """Shut down in reverse order of setup; idempotent, callable from any thread."""
        with self._pending_lock:
            if self._closed:
                return
            self._closed = True
        if self._error is None:
            self._error = ConnectionClosed("the client is closed")
        try:
            self.transport.close()
        finally:
            self._on_closed(self._error)
            self._events.stop()
            self._overflow.stop()


_NO_TIMEOUT = object()  # for requests that legitimately stay open (subscriptions/listen)
_INPUT_METHODS = ("tools/call", "prompts/get", "resources/read")  # may answer input_required


def _plain_result(fut, result):
    if not isinstance(result, dict):
        raise McpError("%s answered with a result that is not an object: %s"
                       % (fut.method, _shorten(repr(result), 200)))
    return result


# ---------------------------------------------------------------------------
# The Client API
# ---------------------------------------------------------------------------

class Subscription(object):
    """Change notifications from the server, delivered to a callback until ``close()``.

    On 2026-07-28 servers this is one ``subscriptions/listen`` stream; on
    handshake-era servers it is ``resources/subscribe`` plus the notifications
    the server sends anyway.  ``acknowledged`` holds what the server agreed to
    send (2026-07-28), once it said so.
    """

    def __init__(self, session, callback, tools, prompts, resources, resource_uris):
        self._session = session
        self._callback = callback
        self._kinds = {"notifications/tools/list_changed": tools,
                       "notifications/prompts/list_changed": prompts,
                       "notifications/resources/list_changed": resources}
        self.resource_uris = list(resource_uris)
        self.acknowledged = None
        self.ended = threading.Event()
        self.error = None
        self._future = None

    def _deliver(self, method, params):
        if method == "notifications/subscriptions/acknowledged":
            self.acknowledged = params.get("notifications")
            return
        if method == "notifications/cancelled":
            self._end(None)
            return
        if method in self._kinds and not self._kinds[method]:
            return
        if method == "notifications/resources/updated" and not self._session.modern and not any(
                str(params.get("uri", "")).startswith(u) for u in self.resource_uris):
            return
        if self._callback is not None:
            self._callback(method, params)

    def _end(self, error):
        if not self.ended.is_set():
            self.error = error
            self.ended.set()

    def close(self):
        """Stop the subscription (idempotent)."""
        if self.ended.is_set():
            return
        self._end(None)
        session = self._session
        for key, sub in list(session._subscriptions.items()):
            if sub is self:
                session._subscriptions.pop(key, None)
        if self._future is not None:
            self._future.cancel("subscription closed")
        elif session._error is None:
            for uri in self.resource_uris:
                try:
                    session.request("resources/unsubscribe", {"uri": uri})
                except McpError as e:
                    _log.debug("resources/unsubscribe %s: %s", uri, e)


def _tool_value(result):
    """The value a tool returned: structured content, else a lone text, else the content list."""
    content = result.get("content") or []
    if result.get("isError"):
        text = "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
        raise ToolError(text or "the tool reported an error", result)
    structured = result.get("structuredContent")
    if structured is not None:
        if isinstance(structured, dict) and len(structured) == 1 and "result" in structured:
            return structured["result"]  # the Python SDKs wrap scalar returns this way
        return structured
    if len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "text":
        return content[0].get("text")
    return content


class Client(object):
    """A connection to one MCP server.

    Args:
        server: the server's argv list (spawned over stdio, never through a
            shell; a string is split with ``shlex``) or an ``http(s)://`` URL
            (Streamable HTTP, falling back to the legacy HTTP+SSE transport).
        timeout: seconds for connecting and for each request (default 30).
        protocol_version: ``"auto"`` (default) picks the newest version both
            sides speak; a version string pins it.
        env, inherit_env, cwd: the server process's environment and directory.
            By default only PATH, HOME, locale and similar variables are passed,
            plus ``env``; ``inherit_env=True`` passes the whole environment.
        headers: extra HTTP headers on every request (``Authorization``...).
        roots: a list of paths or ``file://`` URIs, or a callable returning a
            ``{"roots": [...]}`` result; declares the roots capability.
        sampling, elicitation: callables ``f(params) -> result dict`` for the
            server's sampling/createMessage and elicitation/create requests.
        on_log: ``f(level, logger, data)`` for the server's log messages
            (default: the ``mcp_min.server`` logger).
        on_notification: ``f(method, params)`` for other notifications.
        on_stderr: ``f(line)`` for each stderr line of a stdio server.
        client_info: the ``{"name", "version"}`` we introduce ourselves with.
        probe_timeout: seconds to wait for ``server/discover`` before deciding
            the server predates 2026-07-28.

    Raises ConnectionClosed when the server cannot be started or reached,
    RequestTimeout when it does not answer in time, McpError otherwise.
    """

    def __init__(self, server, timeout=DEFAULT_TIMEOUT, protocol_version="auto", env=None, inherit_env=False,
                 cwd=None, headers=None, roots=None, sampling=None, elicitation=None, on_log=None,
                 on_notification=None, on_stderr=None, client_info=None, probe_timeout=PROBE_TIMEOUT):
        if isinstance(server, str) and server.split("://", 1)[0].lower() in ("http", "https"):
            def make_transport():
                return _HttpTransport(server, headers, timeout)
        else:
            argv = shlex.split(server) if isinstance(server, str) else list(server)

            def make_transport():
                return _StdioTransport(argv, env, inherit_env, cwd, on_stderr)
        session = _Session(make_transport(), timeout, protocol_version, probe_timeout, client_info, roots,
                           sampling, elicitation, on_log, on_notification)
        self._session = session
        # A dropped Client still reaps its server: the session holds no reference back to us.
        self._finalizer = weakref.finalize(self, session.close)
        try:
            session.connect(make_transport)
        except BaseException:
            session.close()
            raise

    # -- what the server told us ------------------------------------------------
    @property
    def protocol_version(self):
        """The protocol revision in use, e.g. ``"2025-11-25"`` or ``"2026-07-28"``."""
        return self._session.protocol_version

    @property
    def server_info(self):
        """The server's ``{"name", "version", ...}``."""
        return self._session.server_info

    @property
    def server_capabilities(self):
        """The capabilities the server declared."""
        return self._session.server_capabilities

    @property
    def instructions(self):
        """The server's instructions for the model, or None."""
        return self._session.instructions

    @property
    def transport(self):
        """``"stdio"``, ``"streamable-http"`` or ``"sse"`` (the legacy HTTP+SSE transport)."""
        return self._session.transport.kind

    @property
    def stderr(self):
        """The last lines the stdio server wrote to stderr."""
        return list(self._session.transport.stderr_tail)

    # -- tools -------------------------------------------------------------------
    def call(self, name, arguments=None, timeout=None, progress=None, **kwargs):
        """Call a tool and return its value.

        Arguments come as a dict, as keywords, or both (a tool argument called
        ``timeout`` or ``progress`` must go in the dict).  The value is the
        structured content when there is some (a lone ``{"result": x}`` is
        unwrapped to ``x``), else the text of a single text block, else the
        content list.  ``progress(progress, total, message)`` receives progress
        notifications.

        Raises ToolError when the tool reports failure, RequestError for a
        protocol error, RequestTimeout, ConnectionClosed.
        """
        return self._tool_future(name, arguments, kwargs, timeout, progress, _tool_value, True).result()

    def call_tool(self, name, arguments=None, timeout=None, progress=None):
        """Call a tool and return the raw CallToolResult dict (no ToolError)."""
        return self._tool_future(name, arguments, None, timeout, progress, None, True).result()

    def submit(self, name, arguments=None, timeout=None, progress=None, **kwargs):
        """Start a tool call and return a Future at once; ``.result()`` gives what ``call`` would."""
        return self._tool_future(name, arguments, kwargs, timeout, progress, _tool_value, False)

    def _tool_future(self, name, arguments, kwargs, timeout, progress, finish, inline):
        args = dict(arguments) if arguments else {}
        if kwargs:
            args.update(kwargs)
        session = self._session
        if session._tool_headers is None and session.modern and session.transport.kind != "stdio":
            session.list_tools(True)  # x-mcp-header markings must be known before calling over HTTP
        return session.submit("tools/call", {"name": name, "arguments": args}, timeout, progress, finish, inline)

    def list_tools(self, refresh=False):
        """All tools (every page).  Served from cache while the server's ``ttlMs`` allows,
        unless ``refresh``.  Over HTTP with 2026-07-28, tools whose ``x-mcp-header``
        markings are invalid are left out (with a warning), as the spec asks."""
        return self._session.list_tools(refresh)

    # -- resources and prompts ----------------------------------------------------
    def list_resources(self, refresh=False):
        """All resources (every page)."""
        return self._session.list_all("resources/list", "resources", refresh)

    def list_resource_templates(self, refresh=False):
        """All resource templates (every page)."""
        return self._session.list_all("resources/templates/list", "resourceTemplates", refresh)

    def list_prompts(self, refresh=False):
        """All prompts (every page)."""
        return self._session.list_all("prompts/list", "prompts", refresh)

    def read_resource(self, uri, timeout=None):
        """Read a resource; returns the result dict (its ``contents`` list holds the data).

        Raises ResourceNotFound for an unknown URI."""
        try:
            return self._session.request("resources/read", {"uri": uri}, timeout)
        except RequestError as e:
            if e.code in (RESOURCE_NOT_FOUND, INVALID_PARAMS) and not isinstance(e, ResourceNotFound):
                raise ResourceNotFound(e.code, e.message, e.data, e.method)
            raise

    def get_prompt(self, name, arguments=None, timeout=None, **kwargs):
        """Get a prompt with its arguments filled in; returns the result dict (``messages``)."""
        args = dict(arguments) if arguments else {}
        args.update(kwargs)
        params = {"name": name}
        if args:
            params["arguments"] = {k: v if isinstance(v, str) else _dumps(v) for k, v in args.items()}
        return self._session.request("prompts/get", params, timeout)

    def complete(self, ref, argument, context=None):
        """Ask for completions of a prompt or resource-template argument.

        ``ref`` is a prompt name, a resource (template) URI, or the raw ref dict;
        ``argument`` is ``(name, value)`` or ``{"name", "value"}``; ``context`` maps
        other argument names to values.  Returns the list of suggested values."""
        if isinstance(ref, str):
            ref = {"type": "ref/resource", "uri": ref} if "://" in ref or "{" in ref else \
                {"type": "ref/prompt", "name": ref}
        if not isinstance(argument, dict):
            argument = {"name": argument[0], "value": argument[1]}
        params = {"ref": ref, "argument": argument}
        if context:
            params["context"] = {"arguments": context}
        return self._session.request("completion/complete", params).get("completion", {}).get("values", [])

    def subscribe(self, uri):
        """Ask for ``notifications/resources/updated`` about a resource (handshake era)."""
        self._legacy_only("resources/subscribe", "listen(resource_uris=[...])")
        self._session.request("resources/subscribe", {"uri": uri})

    def unsubscribe(self, uri):
        """Stop updates about a resource (handshake era)."""
        self._legacy_only("resources/unsubscribe", "Subscription.close()")
        self._session.request("resources/unsubscribe", {"uri": uri})

    def set_logging_level(self, level):
        """Ask the server to send log messages at ``level`` and above (handshake era)."""
        self._legacy_only("logging/setLevel",
                          "the io.modelcontextprotocol/logLevel _meta key on each request (request(..., "
                          "params={'_meta': {'io.modelcontextprotocol/logLevel': level}}))")
        self._session.request("logging/setLevel", {"level": level})

    def ping(self, timeout=None):
        """Check the server answers (2026-07-28 has no ping: server/discover stands in)."""
        self._session.request("server/discover" if self._session.modern else "ping", None, timeout)

    def listen(self, tools=True, prompts=True, resources=True, resource_uris=(), callback=None):
        """Receive change notifications until the returned Subscription (or the client) is closed.

        ``callback(method, params)`` (default: the client's ``on_notification``)
        gets tools/prompts/resources list changes and updates of the resources
        under ``resource_uris``.  It runs on a worker thread, never the reader.
        """
        session = self._session
        callback = callback if callback is not None else session.on_notification
        sub = Subscription(session, callback, tools, prompts, resources, resource_uris)
        if session.modern:
            wanted = {"toolsListChanged": bool(tools), "promptsListChanged": bool(prompts),
                      "resourcesListChanged": bool(resources)}
            if resource_uris:
                wanted["resourceSubscriptions"] = list(resource_uris)
            # Registered under the request id before sending, so no notification can miss it.
            sub._future = session.submit("subscriptions/listen", {"notifications": wanted}, _NO_TIMEOUT,
                                         on_id=lambda rid: session._subscriptions.__setitem__(rid, sub))
        else:
            session._subscriptions[object()] = sub
            for uri in sub.resource_uris:
                session.request("resources/subscribe", {"uri": uri})
        return sub

    def _legacy_only(self, method, instead):
        if self._session.modern:
            raise McpError("%s does not exist in protocol %s; use %s instead"
                           % (method, self._session.protocol_version, instead))

    # -- raw access ------------------------------------------------------------
    def request(self, method, params=None, timeout=None, progress=None):
        """Send any request and return its raw result dict."""
        return self._session.request(method, params, timeout, progress)

    def submit_request(self, method, params=None, timeout=None, progress=None):
        """Send any request and return a Future of its raw result dict."""
        return self._session.submit(method, params, timeout, progress)

    def notify(self, method, params=None):
        """Send a notification."""
        self._session.notify(method, params)

    # -- lifetime --------------------------------------------------------------
    def close(self):
        """Close the connection and stop the server (idempotent, any thread).

        Pending requests fail with ConnectionClosed."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        s = self._session
        return "<mcp_min.Client %s %s %s>" % (s.transport.kind, getattr(s.transport, "name", ""),
                                              s.protocol_version)


# ---------------------------------------------------------------------------
# Command line: python mcp_min.py [options] COMMAND [ARGS] -- SERVER_ARGV...
# ---------------------------------------------------------------------------

_USAGE = """python mcp_min.py [options] COMMAND [ARGS] -- SERVER_ARGV...
       python mcp_min.py [options] --url URL COMMAND [ARGS]

commands:
  info                      server name, version, protocol, capabilities
  tools                     list tools
  call NAME [key=value ...] call a tool (values parsed as JSON when they parse)
  resources                 list resources and resource templates
  read URI                  read a resource
  prompts                   list prompts
  prompt NAME [key=value ...]  get a prompt
  ping                      check the server answers
  raw METHOD [JSON]         send any request, print the raw result

exit status: 0 ok, 1 tool or protocol error, 2 usage, 3 connection failure"""


def _cli_parser():
    import argparse
    p = argparse.ArgumentParser(prog="mcp_min", usage=_USAGE, add_help=True)
    p.add_argument("command")
    p.add_argument("args", nargs="*")
    p.add_argument("--url", help="connect to a Streamable HTTP (or HTTP+SSE) server")
    p.add_argument("--header", action="append", default=[], metavar="K:V", help="HTTP header (repeatable)")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="server environment variable")
    p.add_argument("--inherit-env", action="store_true", help="pass the whole environment to the server")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds (default %(default)s)")
    p.add_argument("--protocol-version", default="auto", help="pin a protocol version (default: auto)")
    p.add_argument("--config", help="a JSON file with an mcpServers table (Claude Desktop style)")
    p.add_argument("--server", help="the server's name in --config")
    p.add_argument("--trace", action="store_true", help="log every JSON-RPC message to stderr")
    p.add_argument("--json", action="store_true", help="print raw JSON")
    p.add_argument("--version", action="version", version="mcp_min " + __version__)
    return p


def _key_values(pairs, as_json=True):
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError("expected key=value, got %r" % pair)
        if as_json:
            try:
                value = json.loads(value)
            except ValueError:
                pass
        out[key] = value
    return out


def _server_from_config(path, name):
    with open(path) as f:
        servers = json.load(f).get("mcpServers") or {}
    if name is None:
        if len(servers) != 1:
            raise ValueError("%s lists %d servers; pick one with --server NAME (%s)"
                             % (path, len(servers), ", ".join(sorted(servers))))
        name = next(iter(servers))
    if name not in servers:
        raise ValueError("no server %r in %s (it has: %s)" % (name, path, ", ".join(sorted(servers))))
    entry = servers[name]
    if entry.get("url"):
        return entry["url"], {}, entry.get("headers") or {}
    return [entry["command"]] + list(entry.get("args") or []), entry.get("env") or {}, {}


def _print(value, as_json):
    if as_json or not isinstance(value, str):
        print(json.dumps(value, indent=2, ensure_ascii=False))
    else:
        print(value)


def _listing(items, as_json, label="name"):
    if as_json:
        _print(items, True)
        return
    for item in items:
        desc = (item.get("description") or "").strip().splitlines()
        print("%s%s" % (item.get(label), "  - " + desc[0] if desc else ""))


def main(argv=None):
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    server_argv = []
    if "--" in argv:
        cut = argv.index("--")
        argv, server_argv = argv[:cut], argv[cut + 1:]
    parser = _cli_parser()
    opts = parser.parse_args(argv)
    if opts.trace:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        _log.addHandler(handler)
        _log.setLevel(logging.DEBUG)
    else:
        logging.basicConfig(level=logging.WARNING, format="mcp_min: %(message)s")
    try:
        env = _key_values(opts.env, as_json=False)
        headers = {}
        for h in opts.header:
            key, sep, value = h.partition(":")
            if not sep:
                raise ValueError("expected --header K:V, got %r" % h)
            headers[key.strip()] = value.strip()
        if opts.config:
            server, config_env, config_headers = _server_from_config(opts.config, opts.server)
            env = dict(config_env, **env)
            headers = dict(config_headers, **headers)
        elif opts.url:
            server = opts.url
        elif server_argv:
            server = server_argv
        else:
            raise ValueError("say which server: -- SERVER_ARGV..., --url URL, or --config FILE")
        commands = {"info": 0, "tools": 0, "resources": 0, "prompts": 0, "ping": 0, "call": 1, "read": 1,
                    "prompt": 1, "raw": 1}
        if opts.command not in commands:
            raise ValueError("unknown command %r" % opts.command)
        if len(opts.args) < commands[opts.command]:
            raise ValueError("%s needs an argument" % opts.command)
        if opts.command in ("call", "prompt"):
            _key_values(opts.args[1:])  # check the syntax before starting anything
    except (ValueError, OSError, KeyError) as e:
        parser.print_usage(sys.stderr)
        print("mcp_min: error: %s" % (e.args[0] if isinstance(e, KeyError) else e), file=sys.stderr)
        return 2

    def progress(done, total, message):
        print("progress: %s%s%s" % (done, "/%s" % total if total is not None else "",
                                    " " + message if message else ""), file=sys.stderr, flush=True)

    try:
        with Client(server, timeout=opts.timeout, protocol_version=opts.protocol_version, env=env,
                    inherit_env=opts.inherit_env, headers=headers) as client:
            cmd, args = opts.command, opts.args
            if cmd == "info":
                info = {"server": client.server_info, "protocol_version": client.protocol_version,
                        "transport": client.transport, "capabilities": client.server_capabilities,
                        "instructions": client.instructions}
                if opts.json:
                    _print(info, True)
                else:
                    print("server: %s %s" % (client.server_info.get("name"), client.server_info.get("version")))
                    print("protocol: %s over %s" % (client.protocol_version, client.transport))
                    print("capabilities: %s" % ", ".join(sorted(client.server_capabilities)))
                    if client.instructions:
                        print("instructions: %s" % client.instructions)
            elif cmd == "tools":
                _listing(client.list_tools(), opts.json)
            elif cmd == "call":
                arguments = _key_values(args[1:])
                if opts.json:
                    result = client.call_tool(args[0], arguments, progress=progress)
                    _print(result, True)
                    return 1 if result.get("isError") else 0
                _print(client.call(args[0], arguments, progress=progress), False)
            elif cmd == "resources":
                if opts.json:
                    _print({"resources": client.list_resources(),
                            "resourceTemplates": client.list_resource_templates()}, True)
                else:
                    _listing(client.list_resources(), False, "uri")
                    if client.server_capabilities.get("resources") is not None:
                        _listing(client.list_resource_templates(), False, "uriTemplate")
            elif cmd == "read":
                result = client.read_resource(args[0])
                if opts.json:
                    _print(result, True)
                else:
                    for part in result.get("contents") or []:
                        print(part["text"] if "text" in part else "<%s: %d bytes of base64>" % (
                            part.get("mimeType", "binary"), len(part.get("blob", ""))))
            elif cmd == "prompts":
                _listing(client.list_prompts(), opts.json)
            elif cmd == "prompt":
                result = client.get_prompt(args[0], _key_values(args[1:], as_json=False))
                if opts.json:
                    _print(result, True)
                else:
                    for m in result.get("messages") or []:
                        content = m.get("content") or {}
                        print("%s: %s" % (m.get("role"), content.get("text", json.dumps(content))))
            elif cmd == "ping":
                client.ping()
                print("ok")
            elif cmd == "raw":
                params = json.loads(args[1]) if len(args) > 1 else None
                _print(client.request(args[0], params), True)
        return 0
    except (ConnectionClosed, RequestTimeout) as e:
        print("mcp_min: %s" % e, file=sys.stderr)
        return 3
    except HttpError as e:
        print("mcp_min: %s" % e, file=sys.stderr)
        return 3 if isinstance(e, AuthRequired) or e.status >= 500 else 1
    except McpError as e:
        print("mcp_min: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
