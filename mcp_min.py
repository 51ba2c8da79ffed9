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
import sys
import threading
import time
import weakref

__version__ = "0.1.0"

__all__ = [
    "Client", "Future", "Subscription", "McpError", "RequestError", "ResourceNotFound",
    "ToolError", "ConnectionClosed", "RequestTimeout", "RequestCancelled", "HttpError",
    "AuthRequired", "AuthError", "OAuth", "main",
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
    """No answer arrived in time.  When the request's own deadline passed, it was
    cancelled; the client stays usable either way."""


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
_loads = json.JSONDecoder().decode  # takes str; json.loads would also sniff the encoding of bytes


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
    text = msg[:-1].decode("ascii") if isinstance(msg, bytes) else _dumps(msg)
    if len(text) > _TRACE_CHARS:
        text = _shorten(text, _TRACE_CHARS)
    _log.debug("%s %s", direction, text)


class Future(object):
    """The pending answer to one request, as returned by ``Client.submit``.

    ``result(timeout)`` waits for it; ``done()`` tells whether it is there;
    ``cancel()`` withdraws the request (the server is told).
    """

    __slots__ = ("_session", "id", "method", "_params", "_timeout", "_deadline", "_cancellable", "_finish",
                 "_latch", "_msg", "_outcome", "progress", "_settling", "__weakref__")

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
        self._settling = threading.Lock()  # several threads may wait; one settles the answer

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
            with self._settling:
                if self._outcome is None:
                    if self.progress is not None:  # progress sent before the answer is seen before it
                        self._session._events.drain(self._deadline)
                    self._outcome = self._settle(self._msg)
        value, error = self._outcome
        if error is not None:
            raise error
        return value

    def _settle(self, msg):
        """(value, error) from the answer, after the one retry the protocol may ask for."""
        if self.method != "initialize":
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
        if retry._msg is None:  # (its answer is taken as it comes: a retry is not retried)
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

    def __init__(self, argv, env=None, inherit_env=False, cwd=None, on_stderr=None, timeout=DEFAULT_TIMEOUT):
        self.argv = list(argv)
        self.timeout = timeout  # bounds a write even for requests without a deadline
        self.name = "server %r" % " ".join(self.argv)
        self._env = _server_env(env, inherit_env)
        self._cwd = cwd
        self._on_stderr = on_stderr
        self.stderr_tail = collections.deque(maxlen=STDERR_LINES)
        self._write_lock = threading.Lock()
        self._proc = None
        self._closing = False
        self._drop_reason = None  # set when we kill the server ourselves, and why
        self._threads = []
        self.modern = False
        self.protocol_version = None

    def start(self, sink):
        import subprocess  # here, not at the top: HTTP-only users never need it
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
                    msg = _loads(line.decode("utf-8"))
                except ValueError:  # UnicodeDecodeError included
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
        import subprocess
        if self._closing:
            return ConnectionClosed("client closed the connection to %s" % self.name)
        try:
            code = self._proc.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        self._threads[1].join(0.5)  # let the last stderr lines arrive
        tail = list(self.stderr_tail)
        if self._drop_reason is not None:
            text = self._drop_reason
        elif code is None:
            text = "%s closed its stdout" % self.name
        elif code < 0:
            import signal
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = "signal %d" % -code
            text = "%s was killed by %s" % (self.name, name)
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
    def send(self, msg, deadline=None, inline=False, headers=None, data=None):
        data = data or _encode_line(msg)
        lock = self._write_lock
        if deadline is None:
            deadline = time.monotonic() + self.timeout
        if not lock.acquire(True, max(deadline - time.monotonic(), 0)):
            raise RequestTimeout("%s is not reading its stdin" % self.name)
        try:
            self._write_all(data, deadline)
        finally:
            lock.release()

    def _write_all(self, data, deadline):
        fd = self._stdin_fd
        try:
            n = os.write(fd, data)
            if n == len(data):
                return  # the usual case: the pipe had room
        except BlockingIOError:
            n = 0
        except (OSError, ValueError) as e:
            raise ConnectionClosed("cannot write to %s: %s" % (self.name, e))
        view = memoryview(data)[n:]
        while view:  # pipe full: wait until the server reads, within the deadline
            import select
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0 or not select.select([], [fd], [], wait)[1]:
                if len(view) == len(data):  # nothing went out: the stream is still in sync
                    raise RequestTimeout("%s is not reading its stdin" % self.name)
                # Part of a message went out: the stream can no longer be trusted.
                self._drop_reason = "%s stopped reading its stdin; mcp_min dropped the connection" % self.name
                self._kill()
                raise ConnectionClosed(self._drop_reason)
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                pass
            except (OSError, ValueError) as e:
                raise ConnectionClosed("cannot write to %s: %s" % (self.name, e))

    def abort(self, request_id):
        return False  # stdio cancels with notifications/cancelled only

    def connected(self):
        pass

    def fallback(self, error):
        return None

    # -- shutting down ---------------------------------------------------
    def close(self):
        """Close stdin, wait, SIGTERM, wait, SIGKILL; then reap and join (bounded)."""
        import subprocess
        proc = self._proc
        if proc is None or self._closing:
            return
        self._closing = True
        if self._write_lock.acquire(True, CLOSE_GRACE):
            try:
                proc.stdin.close()
            except OSError:
                pass
            finally:
                self._write_lock.release()
        else:  # a writer is stuck on a server that does not read: stop the server instead
            self._kill()
        try:
            proc.wait(CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            self._signal("SIGTERM")
            try:
                proc.wait(CLOSE_GRACE)
            except subprocess.TimeoutExpired:
                self._kill()
        if os.name == "posix":
            self._signal("SIGKILL")  # stragglers in the server's process group
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
        import subprocess
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
    auth = None  # an OAuth object (see _with_auth)

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
        # Honours HTTP(S)_PROXY / NO_PROXY; redirects to another origin lose our credentials.
        self._opener = urllib.request.build_opener(_redirect_handler(self.headers))
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
        if self.auth is not None:
            _auth_apply(self, h)
        if self.session_id is not None and not self.modern:
            h["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            h["MCP-Protocol-Version"] = self.protocol_version
        if extra:
            h.update(extra)
        return h

    def _open(self, method, headers, body=None, deadline=None, url=None):
        """Send one HTTP request through urllib; return the response.

        A non-2xx answer raises ``_HttpStatus`` (after OAuth had its chance to
        retry); network failures raise ConnectionClosed or RequestTimeout."""
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
            return _auth_retry(self, _HttpStatus(url, e.code, e.headers, text), headers,
                               lambda: self._open(method, headers, body, deadline, url))
        except urllib.error.URLError as e:
            reason = getattr(e, "reason", e)
            raise ConnectionClosed("cannot reach %s: %s" % (url, reason))
        except OSError as e:  # timeouts, resets
            import socket
            if isinstance(e, socket.timeout):
                raise RequestTimeout("no answer from %s within %.3g s" % (url, timeout))
            raise ConnectionClosed("connection to %s failed: %s" % (url, e))

    # -- POSTs on kept-alive connections ------------------------------------
    def _post(self, headers, body, deadline, rid=None):
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
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            reused = conn is not None
            if conn is None:
                conn = self._connection_class(self._host, self._port, timeout=timeout, **self._conn_kwargs)
            if rid is not None:  # so that a cancel can cut the request short even before the answer starts
                with self._lock:
                    self._streams[rid] = conn
            try:
                if reused:
                    conn.sock.settimeout(timeout)
                conn.request("POST", self._path, body, headers)
                resp = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                conn.close()
                if reused:
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
                return _auth_retry(self, _HttpStatus(self.url, resp.status, resp.headers, text), headers,
                                   lambda: self._post(headers, body, deadline))
            return resp

    def _release(self, resp, reuse=True):
        """Done with a response: its connection goes back to the pool if it can be reused
        (read to the end, not aborted, not a stream)."""
        conn = getattr(resp, "_mcp_min_conn", None)
        if reuse and conn is not None and resp.isclosed() and not resp.will_close:
            with self._lock:
                if len(self._idle) < 8 and not self._closed:
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

    def send(self, msg, deadline=None, inline=False, headers=None, data=None):
        data = data or _encode_line(msg)
        if "id" in msg and "method" in msg:
            if inline:
                self._exchange(msg, deadline, headers, data)
            else:
                threading.Thread(target=self._exchange, args=(msg, deadline, headers, data),
                                 name="mcp_min-http-%s" % msg["id"], daemon=True).start()
            return
        # A notification or our answer to a server request: expect 202, nothing to read.
        try:
            resp = self._post(self._headers(self._modern_headers(msg)), data, deadline)
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

    def _exchange(self, msg, deadline, extra, data):
        """POST a request and deliver everything the answer carries to the sink."""
        rid = msg["id"]
        try:
            try:
                resp = self._post(self._headers(self._modern_headers(msg, extra)), data, deadline, rid)
            except _HttpStatus as e:
                if not self._deliver_error_body(e, rid):
                    raise e.error(self, msg["method"])
                return
            if msg["method"] == "initialize":
                sid = resp.headers.get("Mcp-Session-Id")
                if sid:
                    self.session_id = sid
            self._read_answer(resp, rid, deadline)
        except RequestTimeout as e:
            if deadline is None or time.monotonic() < deadline:
                self._sink._on_request_failed(rid, e)
            # else the request's own deadline ends it, cancelling as it should
        except McpError as e:
            self._sink._on_request_failed(rid, e)
        except Exception as e:  # never let a thread die silently
            _log.exception("HTTP exchange failed")
            self._sink._on_request_failed(rid, ConnectionClosed("HTTP exchange with %s failed: %r" % (self.url, e)))
        finally:
            with self._lock:
                self._streams.pop(rid, None)

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
                    _no_read_timeout(resp)
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
            # A stream may have been cut short (timeout, cancel): never reuse its connection.
            self._release(resp, ctype != "text/event-stream")

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
                try:
                    on_message(msg)
                except Exception:  # a bug in dispatch must not end the stream
                    _log.exception("error dispatching a message from %s", self.name)
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
        if self.modern or (self._listener is not None and self._listener.is_alive()):
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
                _no_read_timeout(resp)
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
            return _with_auth(_SseTransport(self.url, self.headers, self.timeout), self.auth)
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


def _no_read_timeout(resp):
    # For streams that legitimately go quiet; close() unblocks them by shutting the socket down.
    try:
        resp.fp.raw._sock.settimeout(None)
    except AttributeError:
        pass


def _close_response(resp):
    # Closing from another thread must unblock a reader stuck in recv(): shut the socket down.
    # (``resp`` is a response, or a connection still waiting for its response.)
    try:
        import socket
        sock = getattr(resp, "sock", None) or resp.fp.raw._sock
        sock.shutdown(socket.SHUT_RDWR)
    except Exception:
        pass
    try:
        resp.close()
    except Exception:
        pass


def _origin(url):
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


def _redirect_handler(own_headers):
    """A urllib redirect handler that drops credentials when a redirect leaves the origin."""
    import urllib.request
    sensitive = {"authorization", "cookie", "proxy-authorization"} | {k.lower() for k in own_headers}

    class Redirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):
            new = urllib.request.HTTPRedirectHandler.redirect_request(self, req, fp, code, msg, headers, newurl)
            if new is not None and _origin(newurl) != _origin(req.full_url):
                for name in list(new.headers):
                    if name.lower() in sensitive:
                        del new.headers[name]
            return new
    return Redirect()


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
        _no_read_timeout(resp)  # a quiet server is not a dead one; close() shuts the socket
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
                        endpoint = urllib.parse.urljoin(self.url, data.strip())
                        if _origin(endpoint) != _origin(self.url):  # our headers (tokens) go there
                            _log.warning("%s named an endpoint on another origin (%s); refused", self.name,
                                         endpoint)
                        else:
                            self.endpoint = endpoint
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

    def send(self, msg, deadline=None, inline=False, headers=None, data=None):
        if "id" in msg and "method" in msg and not inline:
            threading.Thread(target=self._post_message, args=(msg, deadline, data), daemon=True).start()
        else:
            self._post_message(msg, deadline, data)

    def _post_message(self, msg, deadline, data):
        try:
            try:
                h = self._headers(None)
                h.pop("Mcp-Session-Id", None)
                self._open("POST", h, data or _encode_line(msg), deadline, self.endpoint).close()
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
# OAuth 2.1 authorization for HTTP servers: discovery (RFC 9728, RFC 8414 and
# OpenID), client registration (pre-registered, Client ID Metadata Documents,
# RFC 7591), authorization code + PKCE, refresh, step-up, client_credentials
# (secret or ES256 private_key_jwt) and cross-app access (RFC 8693 + RFC 7523).
# The transports call _auth_apply before each request and _auth_retry on a
# non-2xx answer; everything else lives here.
# ---------------------------------------------------------------------------

class AuthError(McpError):
    """The OAuth flow failed: what was fetched, what was wrong, what to do.

    ``error`` and ``error_description`` hold the authorization server's error, if any.
    """

    def __init__(self, message, error=None, error_description=None):
        McpError.__init__(self, message)
        self.error, self.error_description = error, error_description


_auth_local = threading.local()  # per-thread depth of _auth_retry, so retries stay bounded
MAX_AUTH_RETRIES = 2  # authorizations for one request: a 401, then one 403 step-up
MAX_STEP_UPS = 3  # 403 insufficient_scope re-authorizations per OAuth object
_SECRET_PARAMS = ("client_secret", "code", "code_verifier", "refresh_token", "client_assertion", "assertion",
                  "subject_token", "access_token", "id_token")
_GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


def _with_auth(transport, auth):
    """Hook: give a transport its OAuth object (None: no OAuth)."""
    transport.auth = auth
    return transport


def _auth_apply(transport, headers):
    """Hook: put the current access token (if any) on an outgoing request."""
    value = transport.auth._header(transport.url)
    if value:
        headers["Authorization"] = value


def _auth_retry(transport, status, headers, again):
    """Hook: a non-2xx answer.  A 401 (or 403 insufficient_scope) is answered by
    (re)authorizing and repeating the request, at most MAX_AUTH_RETRIES times;
    otherwise ``status`` is raised as before."""
    auth = getattr(transport, "auth", None)
    if auth is None or status.status not in (401, 403):
        raise status
    depth = getattr(_auth_local, "depth", 0)
    if depth >= MAX_AUTH_RETRIES:
        raise status
    challenge = _parse_www_authenticate(status.headers.get("WWW-Authenticate", "") if status.headers else "")
    if not auth._on_challenge(transport.url, status.status, challenge, headers.get("Authorization"), depth):
        raise status
    value = auth._header(transport.url)
    if value:
        headers["Authorization"] = value
    _auth_local.depth = depth + 1
    try:
        return again()
    finally:
        _auth_local.depth = depth


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# -- ES256 (ECDSA over NIST P-256 with SHA-256), pure Python ---------------------
# Deterministic nonces (RFC 6979), so signatures are reproducible and testable.

_P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
_P256_A = _P256_P - 3
_P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
_P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_P256_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
           0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)


def _ec_add(p1, p2):
    """Affine point addition on P-256; None is the point at infinity."""
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    (x1, y1), (x2, y2) = p1, p2
    if x1 == x2:
        if (y1 + y2) % _P256_P == 0:
            return None
        slope = (3 * x1 * x1 + _P256_A) * pow(2 * y1, _P256_P - 2, _P256_P) % _P256_P
    else:
        slope = (y2 - y1) * pow(x2 - x1, _P256_P - 2, _P256_P) % _P256_P
    x3 = (slope * slope - x1 - x2) % _P256_P
    return x3, (slope * (x1 - x3) - y1) % _P256_P


def _ec_mul(k, point):
    result = None
    while k:
        if k & 1:
            result = _ec_add(result, point)
        point = _ec_add(point, point)
        k >>= 1
    return result


def _es256_sign(d, message):
    """Sign ``message`` with private scalar ``d``: returns (r, s), nonce per RFC 6979."""
    import hashlib
    import hmac
    n = _P256_N
    h = int.from_bytes(hashlib.sha256(message).digest(), "big")
    x = d.to_bytes(32, "big")
    h1 = (h % n).to_bytes(32, "big")
    v, key = b"\x01" * 32, b"\x00" * 32

    def mac(k, data):
        return hmac.new(k, data, hashlib.sha256).digest()

    key = mac(key, v + b"\x00" + x + h1)
    v = mac(key, v)
    key = mac(key, v + b"\x01" + x + h1)
    v = mac(key, v)
    while True:
        v = mac(key, v)
        k = int.from_bytes(v, "big")
        if 1 <= k < n:
            r = _ec_mul(k, _P256_G)[0] % n
            s = pow(k, n - 2, n) * (h + r * d) % n
            if r and s:
                return r, s
        key = mac(key, v + b"\x00")
        v = mac(key, v)


def _der_items(data):
    """The TLV items of a DER byte string: a list of (tag, value bytes)."""
    items, i = [], 0
    while i < len(data):
        tag, length = data[i], data[i + 1]
        i += 2
        if length & 0x80:
            count = length & 0x7F
            length = int.from_bytes(data[i:i + count], "big")
            i += count
        items.append((tag, data[i:i + length]))
        i += length
    return items


def _ec_private_key(key):
    """The P-256 private scalar from a PEM (PKCS#8 or SEC1), a JWK dict, raw 32 bytes or an int."""
    if isinstance(key, int):
        return key
    if isinstance(key, dict):
        return int.from_bytes(base64.urlsafe_b64decode(key["d"] + "=" * (-len(key["d"]) % 4)), "big")
    if isinstance(key, bytes) and len(key) == 32:
        return int.from_bytes(key, "big")
    text = key.decode("ascii") if isinstance(key, bytes) else key
    body = "".join(line for line in text.strip().splitlines() if line and not line.startswith("-----"))
    try:
        (tag, seq), = _der_items(base64.b64decode(body))
        items = _der_items(seq)
        if items[0] == (0x02, b"\x00") and items[2][0] == 0x04:  # PKCS#8: the key is SEC1 inside
            items = _der_items(_der_items(items[2][1])[0][1])
        if items[0] == (0x02, b"\x01") and items[1][0] == 0x04 and len(items[1][1]) == 32:
            return int.from_bytes(items[1][1], "big")
    except (ValueError, IndexError, TypeError):
        pass
    raise AuthError("the private key is not an EC P-256 key in PEM (PKCS#8 or SEC1) form")


def _jwt_es256(claims, private_key, header=None):
    """A compact JWS (ES256) over ``claims``."""
    head = dict({"alg": "ES256", "typ": "JWT"}, **(header or {}))
    signing_input = "%s.%s" % (_b64url(_dumps(head).encode("ascii")), _b64url(_dumps(claims).encode("ascii")))
    r, s = _es256_sign(_ec_private_key(private_key), signing_input.encode("ascii"))
    return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


# -- the OAuth client --------------------------------------------------------------

def _canonical_resource(url):
    """RFC 8707 resource URI of a server URL: lower-case scheme and host, no fragment."""
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    path = "" if parts.path == "/" else parts.path
    return urllib.parse.urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _resource_covers(resource, server_url):
    """True when a protected resource identifier names ``server_url`` (same origin, path prefix)."""
    import urllib.parse
    a, b = urllib.parse.urlsplit(_canonical_resource(resource)), urllib.parse.urlsplit(
        _canonical_resource(server_url))
    if (a.scheme, a.hostname, a.port) != (b.scheme, b.hostname, b.port) or a.fragment:
        return False
    prefix = a.path.rstrip("/")
    return b.path == prefix or b.path.startswith(prefix + "/") or not prefix


class OAuth(object):
    """OAuth 2.1 for HTTP servers: ``Client(url, auth=OAuth(...))``.

    On a 401 (or a 403 ``insufficient_scope``) the client discovers the
    authorization server, obtains a token and repeats the request once.

    Args:
        client_id, client_secret: a pre-registered client.  Without them the
            client uses ``client_metadata_url`` (a Client ID Metadata Document)
            when the server supports it, else dynamic client registration.
        client_metadata_url: the https URL of this client's metadata document.
        scopes: scopes to ask for (default: what the server's challenge or
            metadata names).
        authorize: ``f(authorization_url) -> redirect_url`` runs the user step
            (headless use, tests).  Without it a browser is opened and the
            redirect is caught on a loopback port.
        redirect_uri: the redirect URI (default: ``http://127.0.0.1:<port>/callback``).
        grant_type: ``"authorization_code"`` (default), ``"client_credentials"``
            or ``"cross_app_access"`` (an identity provider's ``id_token`` is
            exchanged at ``idp_token_endpoint`` for an ID-JAG, then for a token).
        private_key: a P-256 key (PEM, JWK dict) for ``private_key_jwt`` client
            authentication (ES256).
        token_store: a file path; tokens and registrations are kept there
            (mode 0600) across runs.  Default: memory only.
        client_name: sent in dynamic registration.
        timeout: seconds for each authorization server request, and for the
            browser step ten times that.
    """

    def __init__(self, client_id=None, client_secret=None, client_metadata_url=None, scopes=None,
                 authorize=None, redirect_uri=None, grant_type="authorization_code", private_key=None,
                 token_store=None, client_name="mcp_min", id_token=None, idp_token_endpoint=None,
                 idp_client_id=None, idp_client_secret=None, token_endpoint_auth_method=None,
                 open_browser=True, timeout=DEFAULT_TIMEOUT):
        if grant_type not in ("authorization_code", "client_credentials", "cross_app_access"):
            raise ValueError("grant_type must be authorization_code, client_credentials or cross_app_access")
        self.client_id, self.client_secret = client_id, client_secret
        self.client_metadata_url = client_metadata_url
        self.scopes = scopes.split() if isinstance(scopes, str) else list(scopes) if scopes else None
        self.authorize, self.redirect_uri = authorize, redirect_uri
        self.grant_type, self.private_key = grant_type, private_key
        self.token_store = os.path.expanduser(token_store) if token_store else None
        self.client_name = client_name
        self.id_token, self.idp_token_endpoint = id_token, idp_token_endpoint
        self.idp_client_id, self.idp_client_secret = idp_client_id, idp_client_secret
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.open_browser, self.timeout = open_browser, timeout
        self._lock = threading.RLock()
        self._state = {}  # canonical resource -> {"tokens", "issuer", "scope"}
        self._clients = {}  # issuer -> registered client {"client_id", "client_secret", "method"}
        self._step_ups = 0
        self._opener = None
        if self.token_store and os.path.exists(self.token_store):
            try:
                with open(self.token_store) as f:
                    saved = json.load(f)
                self._state, self._clients = dict(saved.get("resources") or {}), dict(saved.get("clients") or {})
            except (OSError, ValueError, AttributeError, TypeError) as e:
                _log.warning("OAuth: ignoring the unreadable token store %s (%s)", self.token_store, e)

    def __repr__(self):
        return "OAuth(grant_type=%r, client_id=%r)" % (self.grant_type, self.client_id)

    # -- what the transport calls ------------------------------------------------
    def _header(self, server_url):
        with self._lock:
            state = self._state.get(_canonical_resource(server_url))
            tokens = state and state.get("tokens")
            if not tokens:
                return None
            expires = tokens.get("expires_at")
            if expires and time.time() > expires - 30 and tokens.get("refresh_token"):
                try:
                    self._refresh(server_url, state)
                except AuthError as e:
                    _log.debug("OAuth: refresh failed: %s", e)
                tokens = state.get("tokens") or {}
            token = tokens.get("access_token")
            return "Bearer " + token if token else None

    def _on_challenge(self, server_url, status, challenge, sent, depth):
        """A 401/403 arrived for a request that carried ``sent``: True to retry it."""
        if status == 403 and challenge.get("error") != "insufficient_scope":
            return False
        key = _canonical_resource(server_url)
        with self._lock:
            state = self._state.setdefault(key, {})
            current = (state.get("tokens") or {}).get("access_token")
            if current and "Bearer " + current != sent:
                return True  # another request already got a new token
            if status == 401 and sent and depth == 0 and (state.get("tokens") or {}).get("refresh_token"):
                try:
                    self._refresh(server_url, state)
                    return True
                except AuthError as e:
                    _log.debug("OAuth: refresh failed (%s); authorizing again", e)
            step_up = None
            if status == 403:
                wanted = (challenge.get("scope") or "").split()
                had = state.get("scope") or []
                if not [s for s in wanted if s not in had] or self._step_ups >= MAX_STEP_UPS:
                    return False  # a new token would carry the same scopes: give up
                self._step_ups += 1
                step_up = had + [s for s in wanted if s not in had]
            elif sent and depth > 0:
                return False  # the token we just obtained was refused
            self._authorize(server_url, state, challenge, step_up)
            self._save()
            return True

    # -- HTTP --------------------------------------------------------------------
    def _http(self, method, url, body=None, headers=None):
        """One request to an authorization server: (status, headers, body bytes)."""
        import urllib.error
        import urllib.request
        if self._opener is None:
            self._opener = urllib.request.build_opener()  # honours HTTP(S)_PROXY / NO_PROXY
        h = {"Accept": "application/json", "User-Agent": "mcp_min/" + __version__}
        h.update(headers or {})
        _log.debug("OAuth: %s %s", method, url)
        req = urllib.request.Request(url, data=body, headers=h, method=method)
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return resp.status, resp.headers, resp.read(MAX_MESSAGE_BYTES)
        except urllib.error.HTTPError as e:
            try:
                text = e.read(65536)
            finally:
                e.close()
            return e.code, e.headers, text
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise AuthError("OAuth: cannot reach %s: %s" % (url, getattr(e, "reason", e)))

    def _get_json(self, url):
        """GET a metadata document: the dict, or None when absent (4xx) or not JSON."""
        status, _, body = self._http("GET", url, headers={"MCP-Protocol-Version": LEGACY_VERSIONS[0]})
        if status != 200:
            _log.debug("OAuth: %s answered %s", url, status)
            return None
        try:
            doc = json.loads(body)
        except ValueError:
            return None
        return doc if isinstance(doc, dict) else None

    def _post_form(self, url, params, headers=None, what="token request"):
        import urllib.parse
        h = {"Content-Type": "application/x-www-form-urlencoded"}
        h.update(headers or {})
        _log.debug("OAuth: %s to %s with %s", what, url,
                   ", ".join("%s=%s" % (k, "<redacted>" if k in _SECRET_PARAMS else v) for k, v in params.items()))
        status, _, body = self._http("POST", url, urllib.parse.urlencode(params).encode("ascii"), h)
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if status != 200 or not isinstance(doc, dict):
            doc = doc if isinstance(doc, dict) else {}
            raise AuthError("OAuth: %s to %s failed with HTTP %s: %s%s" % (
                what, url, status, doc.get("error") or _shorten(body.decode("utf-8", "replace"), 200),
                " (%s)" % doc["error_description"] if doc.get("error_description") else ""),
                doc.get("error"), doc.get("error_description"))
        return doc

    # -- discovery ------------------------------------------------------------------
    def _discover(self, server_url, challenge):
        """Protected resource metadata, then authorization server metadata.

        Returns (resource, prm or None, issuer, as metadata or None)."""
        import urllib.parse
        parts = urllib.parse.urlsplit(server_url)
        origin = "%s://%s" % (parts.scheme, parts.netloc)
        path = parts.path.rstrip("/")
        if challenge.get("resource_metadata"):
            candidates = [urllib.parse.urljoin(server_url, challenge["resource_metadata"])]
        else:
            candidates = ([origin + "/.well-known/oauth-protected-resource" + path] if path else []) + [
                origin + "/.well-known/oauth-protected-resource"]
        prm = None
        for url in candidates:
            prm = self._get_json(url)
            if prm is not None:
                break
        resource = _canonical_resource(server_url)
        if prm is not None:
            claimed = prm.get("resource")
            if not isinstance(claimed, str) or not _resource_covers(claimed, server_url):
                raise AuthError("OAuth: the protected resource metadata at %s names resource %r, which is not "
                                "the server %s; refusing to authorize (check the server URL)"
                                % (url, claimed, server_url))
            resource = claimed
            servers = prm.get("authorization_servers") or []
            if not servers or not isinstance(servers[0], str):
                raise AuthError("OAuth: the protected resource metadata at %s names no authorization_servers"
                                % url)
            issuer, strict = servers[0], True
        else:  # 2025-03-26: the MCP server's origin is the authorization server
            issuer, strict = origin, False
        meta = self._as_metadata(issuer)
        if meta is not None and strict and meta.get("issuer") != issuer:
            raise AuthError("OAuth: the authorization server metadata for %s says issuer %r; refusing to use it "
                            "(RFC 8414 requires them to match)" % (issuer, meta.get("issuer")))
        if meta is None:
            if strict:
                raise AuthError("OAuth: no authorization server metadata found for %s (tried the OAuth and OpenID "
                                "well-known locations)" % issuer)
            meta = {"issuer": issuer, "authorization_endpoint": origin + "/authorize",
                    "token_endpoint": origin + "/token", "registration_endpoint": origin + "/register",
                    "_fallback": True}
        return resource, prm, meta.get("issuer") if not strict else issuer, meta

    def _as_metadata(self, issuer):
        import urllib.parse
        parts = urllib.parse.urlsplit(issuer)
        origin = "%s://%s" % (parts.scheme, parts.netloc)
        path = parts.path.rstrip("/")
        candidates = [origin + "/.well-known/oauth-authorization-server" + path,
                      origin + "/.well-known/openid-configuration" + path]
        if path:
            candidates.append(origin + path + "/.well-known/openid-configuration")
        for url in candidates:
            meta = self._get_json(url)
            if meta is not None:
                return meta
        return None

    # -- the flows ---------------------------------------------------------------------
    def _authorize(self, server_url, state, challenge, step_up):
        resource, prm, issuer, meta = self._discover(server_url, challenge)
        if step_up is not None:
            scope = step_up
        elif self.scopes is not None:
            scope = list(self.scopes)
        elif challenge.get("scope"):
            scope = challenge["scope"].split()
        else:
            scope = list((prm or {}).get("scopes_supported") or [])
        if (self.grant_type == "authorization_code" and "offline_access" in (meta.get("scopes_supported") or [])
                and "offline_access" not in scope):
            scope.append("offline_access")
        if self.grant_type == "client_credentials":
            tokens = self._client_credentials(meta, issuer, resource, scope)
        elif self.grant_type == "cross_app_access":
            tokens = self._cross_app(meta, issuer, resource, scope)
        else:
            tokens = self._authorization_code(meta, issuer, resource, scope)
        self._take(state, tokens, scope, issuer, resource)
        # Refreshing goes back to this same authorization server, never to a rediscovered one.
        state["as_metadata"] = meta

    def _take(self, state, tokens, scope, issuer, resource):
        if not isinstance(tokens.get("access_token"), str) or not tokens["access_token"]:
            raise AuthError("OAuth: the token endpoint of %s answered without an access_token" % issuer)
        kept = {"access_token": tokens["access_token"]}
        if tokens.get("refresh_token"):
            kept["refresh_token"] = tokens["refresh_token"]
        elif (state.get("tokens") or {}).get("refresh_token") and state.get("issuer") == issuer:
            kept["refresh_token"] = state["tokens"]["refresh_token"]  # refresh answers may omit it
        if isinstance(tokens.get("expires_in"), (int, float)):
            kept["expires_at"] = time.time() + tokens["expires_in"]
        state.update(tokens=kept, issuer=issuer, resource=resource, scope=scope)
        if tokens.get("_client"):
            state["client"] = tokens["_client"]

    def _client(self, meta, issuer, redirect_uri):
        """The client to use with this server: {"client_id", "client_secret", "method"}."""
        supported = meta.get("token_endpoint_auth_methods_supported")
        if self.client_id:
            return {"client_id": self.client_id, "client_secret": self.client_secret,
                    "method": self._auth_method(supported, self.client_secret)}
        if self.client_metadata_url and meta.get("client_id_metadata_document_supported"):
            return {"client_id": self.client_metadata_url, "client_secret": None, "method": "none"}
        if issuer in self._clients:
            return self._clients[issuer]
        endpoint = meta.get("registration_endpoint")
        if not endpoint:
            raise AuthError("OAuth: the authorization server %s offers no dynamic client registration%s; pass "
                            "OAuth(client_id=...) (and client_secret) for a pre-registered client"
                            % (issuer, "" if self.client_metadata_url else " and this client has no "
                               "client_metadata_url"))
        wanted = self.token_endpoint_auth_method or (
            "none" if supported is None or "none" in supported else self._auth_method(supported, True))
        grants = ["authorization_code", "refresh_token"] if self.grant_type == "authorization_code" else [
            self.grant_type]
        import urllib.parse
        host = urllib.parse.urlsplit(redirect_uri).hostname or ""
        request = {"client_name": self.client_name, "redirect_uris": [redirect_uri], "grant_types": grants,
                   "response_types": ["code"], "token_endpoint_auth_method": wanted,
                   # SEP-837: a loopback redirect means a native application
                   "application_type": "native" if host in ("127.0.0.1", "::1", "localhost") else "web"}
        _log.debug("OAuth: registering at %s", endpoint)
        status, _, body = self._http("POST", endpoint, _dumps(request).encode("ascii"),
                                     {"Content-Type": "application/json"})
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if status not in (200, 201) or not isinstance(doc, dict) or not doc.get("client_id"):
            raise AuthError("OAuth: dynamic client registration at %s failed with HTTP %s: %s; pass "
                            "OAuth(client_id=...) instead" % (endpoint, status, _shorten(
                                body.decode("utf-8", "replace"), 200)))
        secret = doc.get("client_secret")
        client = {"client_id": doc["client_id"], "client_secret": secret,
                  "method": doc.get("token_endpoint_auth_method") or self._auth_method(supported, secret)}
        self._clients[issuer] = client
        return client

    def _auth_method(self, supported, secret):
        if self.token_endpoint_auth_method:
            return self.token_endpoint_auth_method
        if self.private_key is not None:
            return "private_key_jwt"
        if not secret:
            return "none"
        if supported is None:
            return "client_secret_basic"  # the RFC 8414 default
        for method in ("client_secret_basic", "client_secret_post", "none"):
            if method in supported:
                return method
        return "client_secret_basic"

    def _authenticate(self, client, params, headers, audience):
        """Add the client's credentials to a token request."""
        import urllib.parse
        method = client.get("method")
        if method == "private_key_jwt":
            if self.private_key is None:
                raise AuthError("OAuth: private_key_jwt needs OAuth(private_key=...)")
            now = int(time.time())
            claims = {"iss": client["client_id"], "sub": client["client_id"], "aud": audience, "iat": now,
                      "exp": now + 300, "jti": _b64url(os.urandom(16))}
            params["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            params["client_assertion"] = _jwt_es256(claims, self.private_key)
        elif method == "client_secret_basic" and client.get("client_secret"):
            pair = "%s:%s" % (urllib.parse.quote(client["client_id"], safe=""),
                              urllib.parse.quote(client["client_secret"], safe=""))
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
        elif method == "client_secret_post" and client.get("client_secret"):
            params["client_id"], params["client_secret"] = client["client_id"], client["client_secret"]
        else:
            params["client_id"] = client["client_id"]

    def _token(self, meta, client, params, issuer, what="token request"):
        headers = {}
        self._authenticate(client, params, headers, issuer)
        endpoint = meta.get("token_endpoint")
        if not endpoint:
            raise AuthError("OAuth: the authorization server metadata of %s has no token_endpoint" % issuer)
        return self._post_form(endpoint, params, headers, what)

    def _authorization_code(self, meta, issuer, resource, scope):
        import hashlib
        import secrets
        import urllib.parse
        if not meta.get("_fallback") and "S256" not in (meta.get("code_challenge_methods_supported") or []):
            raise AuthError("OAuth: the authorization server %s does not advertise PKCE S256 support "
                            "(code_challenge_methods_supported is %r); refusing to authorize without PKCE"
                            % (issuer, meta.get("code_challenge_methods_supported")))
        if not meta.get("authorization_endpoint"):
            raise AuthError("OAuth: the authorization server metadata of %s has no authorization_endpoint" % issuer)
        listener = None
        redirect_uri = self.redirect_uri
        if self.authorize is None:
            listener = _LoopbackListener()
            redirect_uri = redirect_uri or listener.uri
        redirect_uri = redirect_uri or "http://127.0.0.1/callback"
        try:
            client = self._client(meta, issuer, redirect_uri)
            verifier = _b64url(secrets.token_bytes(32))
            state_value = secrets.token_urlsafe(24)
            query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": redirect_uri,
                     "code_challenge": _b64url(hashlib.sha256(verifier.encode("ascii")).digest()),
                     "code_challenge_method": "S256", "state": state_value}
            if scope:
                query["scope"] = " ".join(scope)
            query["resource"] = resource
            endpoint = meta["authorization_endpoint"]
            url = endpoint + ("&" if "?" in endpoint else "?") + urllib.parse.urlencode(query)
            if listener is not None:
                redirect = listener.wait(url, self.open_browser, self.timeout * 10)
            else:
                redirect = self.authorize(url)
        finally:
            if listener is not None:
                listener.close()
        answer = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect or "").query))
        if answer.get("state") != state_value:
            raise AuthError("OAuth: the authorization response's state does not match the request; "
                            "discarding it (a forged or stale redirect)")
        if "iss" in answer or meta.get("authorization_response_iss_parameter_supported"):
            if answer.get("iss") != issuer:
                raise AuthError("OAuth: the authorization response came from issuer %r, expected %r (RFC 9207); "
                                "discarding it" % (answer.get("iss"), issuer))
        if answer.get("error"):
            raise AuthError("OAuth: authorization was refused: %s%s" % (answer["error"], " (%s)" % answer[
                "error_description"] if answer.get("error_description") else ""), answer["error"],
                answer.get("error_description"))
        if not answer.get("code"):
            raise AuthError("OAuth: the authorization response has no code: %s" % _shorten(redirect or "", 200))
        params = {"grant_type": "authorization_code", "code": answer["code"], "redirect_uri": redirect_uri,
                  "code_verifier": verifier, "resource": resource}
        tokens = self._token(meta, client, params, issuer)
        tokens["_client"] = client
        return tokens

    def _client_credentials(self, meta, issuer, resource, scope):
        if not self.client_id:
            raise AuthError("OAuth: the client_credentials grant needs OAuth(client_id=..., client_secret=... or "
                            "private_key=...)")
        client = {"client_id": self.client_id, "client_secret": self.client_secret,
                  "method": self._auth_method(meta.get("token_endpoint_auth_methods_supported"), self.client_secret)}
        params = {"grant_type": "client_credentials", "resource": resource}
        if scope:
            params["scope"] = " ".join(scope)
        tokens = self._token(meta, client, params, issuer)
        tokens["_client"] = client
        return tokens

    def _cross_app(self, meta, issuer, resource, scope):
        if not (self.id_token and self.idp_token_endpoint and self.client_id):
            raise AuthError("OAuth: cross-app access needs OAuth(id_token=..., idp_token_endpoint=..., "
                            "client_id=..., client_secret=...)")
        params = {"grant_type": _GRANT_TOKEN_EXCHANGE,
                  "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                  "subject_token": self.id_token, "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                  "audience": issuer, "resource": resource}
        if scope:
            params["scope"] = " ".join(scope)
        headers = {}
        idp_client = {"client_id": self.idp_client_id or self.client_id, "client_secret": self.idp_client_secret,
                      "method": "client_secret_basic" if self.idp_client_secret else "none"}
        self._authenticate(idp_client, params, headers, self.idp_token_endpoint)
        grant = self._post_form(self.idp_token_endpoint, params, headers, "token exchange")
        if not grant.get("access_token"):
            raise AuthError("OAuth: the identity provider's token exchange at %s returned no ID-JAG"
                            % self.idp_token_endpoint)
        client = {"client_id": self.client_id, "client_secret": self.client_secret,
                  "method": self._auth_method(meta.get("token_endpoint_auth_methods_supported"), self.client_secret)}
        params = {"grant_type": _GRANT_JWT_BEARER, "assertion": grant["access_token"], "resource": resource}
        if scope:
            params["scope"] = " ".join(scope)
        tokens = self._token(meta, client, params, issuer, "JWT bearer grant")
        tokens["_client"] = client
        return tokens

    def _refresh(self, server_url, state):
        tokens = state.get("tokens") or {}
        meta, issuer, resource = state.get("as_metadata"), state.get("issuer"), state.get("resource")
        if not (isinstance(meta, dict) and meta.get("token_endpoint") and issuer and resource):
            raise AuthError("OAuth: no record of the authorization server that issued the refresh token")
        client = state.get("client") or self._clients.get(issuer) or {
            "client_id": self.client_id or self.client_metadata_url, "client_secret": self.client_secret,
            "method": self._auth_method(meta.get("token_endpoint_auth_methods_supported"), self.client_secret)}
        params = {"grant_type": "refresh_token", "refresh_token": tokens.get("refresh_token"),
                  "resource": resource}
        try:
            answer = self._token(meta, client, params, issuer, "token refresh")
        except AuthError:
            state["tokens"] = {}
            raise
        self._take(state, answer, state.get("scope") or [], issuer, resource)
        self._save()

    def _save(self):
        if not self.token_store:
            return
        import tempfile
        data = _dumps({"resources": self._state, "clients": self._clients}).encode("ascii")
        # A fresh, exclusive, 0600 file beside the store, then an atomic rename over it.
        fd, tmp = tempfile.mkstemp(prefix=".mcp_min-", dir=os.path.dirname(os.path.abspath(self.token_store)))
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, self.token_store)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


class _LoopbackListener(object):
    """The browser step: a one-shot HTTP server on 127.0.0.1 catching the redirect."""

    def __init__(self, port=0):
        import http.server
        import urllib.parse
        listener = self
        self.redirect = None
        self.state = None  # the state the authorization URL carries; other redirects are ignored
        self.done = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if not self.path.startswith("/callback"):
                    self.send_error(404)
                    return
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                if query.get("state", [None])[0] != listener.state:  # not our flow: keep waiting
                    self.send_error(400, "unexpected state")
                    return
                listener.redirect = "http://127.0.0.1:%d%s" % (listener.port, self.path)
                listener.done.set()
                page = b"<html><body>Authorization finished; you can close this window.</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.uri = "http://127.0.0.1:%d/callback" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, name="mcp_min-oauth-callback",
                                       daemon=True)
        self.thread.start()

    def wait(self, url, open_browser, timeout):
        import urllib.parse
        self.state = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("state", [None])[0]
        print("mcp_min: authorize in your browser: %s" % url, file=sys.stderr, flush=True)
        if open_browser:
            import webbrowser
            webbrowser.open(url)
        if not self.done.wait(timeout):
            raise AuthError("OAuth: no authorization redirect reached %s within %.0f s" % (self.uri, timeout))
        return self.redirect

    def close(self):
        self.server.shutdown()
        self.server.server_close()


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
        self._stopped = False

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

    def drain(self, deadline=None):
        """Wait (until ``deadline`` at most) for the callbacks queued so far to run."""
        if self._thread is None or self._thread is threading.current_thread() or self._stopped \
                or not self._thread.is_alive():
            return
        done = threading.Event()
        self._queue.put((done.set, ()))
        done.wait(None if deadline is None else max(deadline - time.monotonic(), 0))

    def stop(self):
        self._stopped = True
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
        self._base_meta = None  # our _meta in stateless mode (a dict), else None
        self._meta_json = None  # the same, encoded once
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

    def _use_meta(self, version):
        """Stateless mode in ``version`` (every request carries our _meta), or None for the handshake era."""
        if version is None:
            self._base_meta = self._meta_json = None
            return
        self._base_meta = {_META_PREFIX + "protocolVersion": version,
                           _META_PREFIX + "clientCapabilities": self.capabilities(True),
                           _META_PREFIX + "clientInfo": self.client_info}
        self._meta_json = _dumps(self._base_meta)

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
        self._use_meta(version)
        self.modern = self.transport.modern = True
        self.transport.protocol_version = version
        wait = max(deadline - time.monotonic(), 0) if pinned else min(self.probe_timeout, max(
            deadline - time.monotonic(), 0))
        try:
            result = self.request("server/discover", {}, wait, cancellable=False)
        except RequestError as e:
            if retried:
                return self.protocol_version  # it is a 2026 server; the discovery data is optional
            supported = (e.data or {}).get("supported") if isinstance(e.data, dict) else None
            if e.code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(supported, list):
                version = self._choose(supported, None)
                if version in MODERN_VERSIONS:  # ask again, in a version it speaks
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
        self._use_meta(None)

    def _choose(self, supported, discovered):
        for v in MODERN_VERSIONS:
            if v in supported:
                self.protocol_version = self.transport.protocol_version = v
                self._use_meta(v)
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
            result = self.request("initialize", params, max(deadline - time.monotonic(), 0), cancellable=False)
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
            self.transport.close()
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
        # The GET stream first: servers announce things (tools/list_changed) as soon as
        # they hear notifications/initialized, and need a stream to say them on.
        self.transport.connected()
        self.notify("notifications/initialized")

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
        if progress is not None:
            params = dict(params) if params else {}
            params["_meta"] = dict(params.get("_meta") or (), progressToken=rid)
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        data = self._encode(msg)
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
            _trace("->", data)
        try:
            self.transport.send(msg, fut._deadline, inline,
                                self._param_headers(params) if method == "tools/call" else None, data)
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
        data = _encode_line(msg)
        if _log.isEnabledFor(logging.DEBUG):
            _trace("->", data)
        self.transport.send(msg, time.monotonic() + self.timeout, data=data)

    def _encode(self, msg):
        """A request as a line of bytes; in stateless mode with our ``_meta`` added.

        The ``_meta`` block is the same on every request, so it is encoded once and
        spliced in (most of a small request's bytes; encoding it each time showed up
        in profiles)."""
        meta_json = self._meta_json
        if meta_json is None:
            return _encode_line(msg)
        params = msg.get("params")
        if params and "_meta" in params:  # the caller's own _meta: merge (keys of ours win)
            meta = dict(params["_meta"])
            meta.update(self._base_meta)
            return _encode_line(dict(msg, params=dict(params, _meta=meta)))
        body = _dumps(params) if params else "{}"
        body = "%s%s\"_meta\":%s}" % (body[:-1], "," if len(body) > 2 else "", meta_json)
        return ('{"jsonrpc":"2.0","id":%d,"method":%s,"params":%s}\n' % (
            msg["id"], _dumps(msg["method"]), body)).encode("ascii")

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
                    self._subscriptions.pop(rid)._end(_error_from(msg, "subscriptions/listen")
                                                      if "error" in msg else None)
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
        if not isinstance(method, str):
            _log.warning("ignored a message whose method is not a string: %s", _shorten(_dumps(msg), 200))
            return
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            self._on_notification(method, params)
        except (TypeError, AttributeError):  # unhashable ids, a _meta that is not an object...
            _log.warning("ignored a malformed %s notification: %s", method, _shorten(_dumps(msg), 200))

    def _on_notification(self, method, params):
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
        auth: an ``OAuth`` object: authorize with OAuth 2.1 when an HTTP
            server answers 401 (or 403 insufficient_scope).

    Raises ConnectionClosed when the server cannot be started or reached,
    RequestTimeout when it does not answer in time, McpError otherwise.
    """

    def __init__(self, server, *, timeout=DEFAULT_TIMEOUT, protocol_version="auto", env=None, inherit_env=False,
                 cwd=None, headers=None, roots=None, sampling=None, elicitation=None, on_log=None,
                 on_notification=None, on_stderr=None, client_info=None, probe_timeout=PROBE_TIMEOUT, auth=None):
        if isinstance(server, str) and server.split("://", 1)[0].lower() in ("http", "https"):
            def make_transport():
                return _with_auth(_HttpTransport(server, headers, timeout), auth)
        else:
            import shlex
            argv = shlex.split(server) if isinstance(server, str) else list(server)

            def make_transport():
                return _StdioTransport(argv, env, inherit_env, cwd, on_stderr, timeout)
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
    def call(self, name, arguments=None, /, *, timeout=None, progress=None, **kwargs):
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

    def call_tool(self, name, arguments=None, /, *, timeout=None, progress=None):
        """Call a tool and return the raw CallToolResult dict (no ToolError)."""
        return self._tool_future(name, arguments, None, timeout, progress, None, True).result()

    def submit(self, name, arguments=None, /, *, timeout=None, progress=None, **kwargs):
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

    def read_resource(self, uri, *, timeout=None):
        """Read a resource; returns the result dict (its ``contents`` list holds the data).

        Raises ResourceNotFound for an unknown URI."""
        try:
            return self._session.request("resources/read", {"uri": uri}, timeout)
        except RequestError as e:
            if e.code in (RESOURCE_NOT_FOUND, INVALID_PARAMS) and not isinstance(e, ResourceNotFound):
                raise ResourceNotFound(e.code, e.message, e.data, e.method)
            raise

    def get_prompt(self, name, arguments=None, /, *, timeout=None, **kwargs):
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

    def ping(self, *, timeout=None):
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
    def request(self, method, params=None, *, timeout=None, progress=None):
        """Send any request and return its raw result dict."""
        return self._session.request(method, params, timeout, progress)

    def submit_request(self, method, params=None, *, timeout=None, progress=None):
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
    p.add_argument("--oauth", action="store_true", help="authorize with OAuth 2.1 in a browser when asked")
    p.add_argument("--client-id", help="pre-registered OAuth client id (implies --oauth)")
    p.add_argument("--client-secret", help="its OAuth client secret")
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
        auth = OAuth(client_id=opts.client_id, client_secret=opts.client_secret) if (
            opts.oauth or opts.client_id) else None
        with Client(server, timeout=opts.timeout, protocol_version=opts.protocol_version, env=env,
                    inherit_env=opts.inherit_env, headers=headers, auth=auth) as client:
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
