# mcp_min -- MIT License, see LICENSE. Copyright (c) 2026 the mcp_min authors.
"""A synchronous Model Context Protocol client in one file, standard library only.

It speaks stdio and Streamable HTTP (plus the legacy HTTP+SSE transport) to
servers of every MCP revision from 2024-11-05 to 2026-07-28, picking the newest
version both sides share.  There is nothing to install: copy this file into
your project.

    >>> from mcp_min import Client
    >>> Client(["python", "examples/calc.py"]).call("add", a=1, b=2)
    3

How it works
------------
Layers, top to bottom of this file: constants; errors; a JSON-RPC core with no
I/O (message building, ``Future``, and ``_Dispatcher``, which owns request ids,
the pending requests and the subscriptions, and routes what arrives); pure
protocol helpers; transports behind one interface (``_Transport``: stdio,
Streamable HTTP, legacy HTTP+SSE; every HTTP byte goes through ``_HttpEngine``);
``_Session`` (version negotiation, sending, settling answers) and ``_Inbox``
(what the server sends unasked); tasks (``Task``: tool calls that run in the
background); ``Client``; the auth plug-in (``OAuth``); the CLI.

Threads.  stdio: ``mcp_min-reader-<pid>`` reads the server's stdout and routes
every message; ``mcp_min-stderr-<pid>`` keeps the tail of its stderr (on Windows
``mcp_min-writer-<pid>`` writes to its stdin, and a job object holds its process
tree so that close() can end it whole).  HTTP has
no reader: the thread that POSTs a request reads its answer (JSON or SSE) and
routes it -- the caller's own thread in ``call()``, one ``mcp_min-http-<id>``
thread per ``submit()``.  Server-initiated streams have their own reader
(``mcp_min-get-stream``, ``mcp_min-sse``).  User code never runs on a reader:
notifications, progress, logs and stderr lines run in order on
``mcp_min-events``; server requests on up to 8 ``mcp_min-answer`` threads (then
queued on ``mcp_min-answers``), pings on ``mcp_min-ping``; cancellations we send
without waiting go out on ``mcp_min-courier``.  A submitted call that became a
task is followed on ``mcp_min-task-<id>``; ``mcp_min-deadlines`` cuts HTTP
requests that outlive their deadline.

Settling.  A ``Future`` is a one-slot mailbox: the routing thread puts the raw
answer in it; ``result()`` takes it on the waiting thread and only there turns
it into a value.  So the session's repeats (a new HTTP session after a 404, a
fresh tools/list after -32020) and the input rounds of 2026-07-28 run on the
caller's thread, never on a reader.  The slot is guarded by a latch (a lock
held until the answer is in), not by ``queue.SimpleQueue``: on CPython 3.8 -
3.12 a timed ``SimpleQueue.get`` can block forever when its timeout runs out
between its two internal lock attempts (seen here: about once in a few
thousand waits on a deadline about to pass), and a deadline must always hold.

Era policy.  ``protocol_version="auto"`` first asks ``server/discover``.  A
result listing versions picks the newest common one; 2026-07-28 is stateless
(every request carries our ``_meta``).  A JSON-RPC error, an HTTP 4xx, no
answer within ``probe_timeout`` or a server that dies means a handshake-era
server: mcp_min restarts a dead stdio server and sends ``initialize``.  Older
servers ignore, reject or choke on unknown methods, and waiting longer would
slow every one of them down.  Authorization failures are never an era verdict.

HTTP.  One ``urllib`` opener (proxies from the environment, one TLS context)
with mcp_min's own connection handler: it keeps connections alive (a new TCP
connection per call would triple a call's cost), follows redirects only for
GET and drops credentials when they leave the origin, and a deadline thread
cuts a connection whose request outlived its deadline, byte trickles included.
"""

import sys

if sys.version_info < (3, 8):  # the rest of the file still parses on 3.6, so this can say it plainly
    _MESSAGE = "mcp_min needs Python 3.8 or newer; this is Python %d.%d" % sys.version_info[:2]
    if __name__ == "__main__":
        sys.stderr.write(_MESSAGE + "\n")
        sys.exit(2)
    raise ImportError(_MESSAGE)

import base64
import collections
import itertools
import json
import logging
import math
import os
import re
import threading
import time
import weakref

try:
    # Work queues with untimed get() only (see "Settling" above for why no wait here has a timeout),
    # without queue.py's imports.
    from _queue import SimpleQueue
except ImportError:  # interpreters without the C module
    from queue import SimpleQueue

__version__ = "0.2.0"

__all__ = [
    "Client", "Future", "Subscription", "McpError", "RequestError", "ResourceNotFound",
    "ToolError", "ConnectionClosed", "RequestTimeout", "RequestCancelled", "HttpError",
    "AuthRequired", "AuthError", "SkillVerificationError", "OAuth", "Task", "UrlElicitationRequired", "main",
]

_log = logging.getLogger("mcp_min")
_server_log = logging.getLogger("mcp_min.server")


# ---------------------------------------------------------------------------
# Constants: every default and limit, with its reason
# ---------------------------------------------------------------------------

# Protocol revisions, newest first.  The first entry is what we offer.
MODERN_VERSIONS = ("2026-07-28",)
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED_VERSIONS = MODERN_VERSIONS + LEGACY_VERSIONS

DEFAULT_TIMEOUT = 30.0  # seconds, connect included; the official SDKs use similar.
PROBE_TIMEOUT = 5.0  # the spec asks for a "reasonable" wait for server/discover;
#                      enough for a slow interpreter start, short enough to fall back.
CLOSE_GRACE = 2.0  # seconds a server gets after stdin EOF, then again after SIGTERM.
# Windows: seconds a write to a server's stdin that began just as its deadline came still gets to end.
# Into a pipe with room a write ends at once (a thread switch, even on a loaded machine, is far less);
# a write still blocked then means the server stopped reading.
WRITE_FINISH_GRACE = 0.5
LONGEST_WAIT = 24 * 86400.0  # a longer timeout means "no practical limit"; every lock, socket and
#                              select() accepts this on every platform (a Windows socket refuses over
#                              2**31 ms, about 24.8 days: "timeout doesn't fit into C timeval").
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # one JSON-RPC message; larger is dropped, not buffered.
PIPE_READ_BYTES = 64 * 1024  # asked of a stdio server's stdout and stderr per read: a pipe's capacity.
STDERR_LINES = 200  # stderr lines kept for error messages and Client.stderr.
STDERR_LINE_CHARS = 1000  # one kept stderr line; a server printing a blob must not fill memory.
STDERR_SHOWN = 10  # stderr lines quoted in a ConnectionClosed message.
MAX_QUEUED_CALLBACKS = 10000  # notifications waiting for a slow callback before we drop more.
MAX_ANSWER_THREADS = 8  # server requests answered at once; more wait their turn in order.
MAX_INPUT_ROUNDS = 8  # input_required round trips before we give up on a request.
MAX_PAGES = 1000  # pages followed by list_* before a cursor loop is assumed.
MAX_SCHEMA_DEPTH = 32  # nested properties searched for x-mcp-header markings; no real input goes deeper.
HTTP_POOL_SIZE = 8  # idle kept-alive connections per HTTP server; as many as threads usually share.
HTTP_READ_CHUNK = 64 * 1024  # bodies are read in pieces: Python 3.8/3.9 allocate a whole read(n)
#                              up front, so one read of MAX_MESSAGE_BYTES cost 64 MiB per call.
HTTP_ERROR_BODY = 64 * 1024  # what we keep of a non-2xx body: enough to explain, no more.
HTTP_MAX_REDIRECTS = 5  # GET redirects followed (urllib allows 10; a loop is a loop either way).
SSE_RESUME_ATTEMPTS = 5  # reconnects (GET + Last-Event-ID) of one dropped answer stream.
SSE_RETRY_CAP = 10.0  # seconds: the longest `retry:` we honour, so a server cannot park us.
GET_STREAM_ATTEMPTS = 5  # failed (re)connects of the standalone GET stream before we stop trying.
GET_STREAM_RETRY = 1.0  # seconds between its reconnects when the server named no `retry:`.
GET_STREAM_READY = 5.0  # seconds we wait for the GET stream to open before notifications/initialized.
SESSION_DELETE_TIMEOUT = 5.0  # seconds for the DELETE that ends an HTTP session on close().
DEADLINE_THREAD_IDLE = 30.0  # seconds the deadline thread waits for work before it exits.
# Authorization: the auth plug-in interface and OAuth (see that section).
MAX_AUTH_RETRIES = 3  # repeats of one HTTP request after auth challenges: a 401 (authorize or refresh),
#                       a DPoP nonce, a 403 step-up; beyond that the server is refusing us.
MAX_STEP_UPS = 3  # 403 insufficient_scope re-authorizations per OAuth object: each may open a browser.
DPOP_NONCE_RETRIES = 1  # a use_dpop_nonce answer is retried once per request (RFC 9449 8, 9); twice is a refusal.
MAX_AUTH_RESPONSE_BYTES = 1024 * 1024  # metadata, token and registration answers are a few KiB.
MAX_ASSERTION_BYTES = 64 * 1024  # a workload identity token (jwt-bearer assertion) is a JWT of a few KiB.
TOKEN_EXPIRY_MARGIN = 30.0  # seconds before its expiry a token is refreshed, so it does not expire in flight.
CLIENT_ASSERTION_LIFETIME = 300  # seconds a private_key_jwt client assertion is valid: short, as RFC 7523 asks.
LOGIN_TIMEOUT_FACTOR = 10  # the browser step may take this many OAuth timeouts: a person is typing.
LOOPBACK_IDLE_TIMEOUT = 10.0  # seconds a connection to the redirect listener may stay silent (preconnects).
MAX_LOOPBACK_CONNECTIONS = 16  # connections the redirect listener serves at once; more are closed at once.
TASK_POLL_FLOOR = 0.1  # seconds: a task is never polled faster, whatever interval the server suggests.
TASK_POLL_CEILING = 30.0  # seconds: nor more slowly (a forgotten server must still be noticed).
TASK_POLL_BACKOFF = 1.0  # no suggestion: poll at the floor, doubling the wait up to this.
TASK_CANCEL_TIMEOUT = 5.0  # seconds for the tasks/cancel of a call that gives up on its task.
_TRACE_CHARS = 4000  # a traced message longer than this is shortened in the log.

# Skills (SEP-2640).  A skill past the SEP's limits (servers should serve no more) is refused
# before any of its files is read; its frontmatter is parsed under bounds, hostile or not.
SKILL_MAX_FILES = 512  # files of one skill.
SKILL_MAX_BYTES = 16 * 1024 * 1024  # the sizes of a skill's files, added up.
FRONTMATTER_MAX_CHARS = 64 * 1024  # YAML frontmatter of a SKILL.md; its usual fields take under 2 KiB.
FRONTMATTER_MAX_DEPTH = 16  # lists and maps nested in it: one recursion of the parser each.
FRONTMATTER_MAX_DIGITS = 100  # one number in it: int() is quadratic in the digits (3.11+ refuses 4300).

_META_PREFIX = "io.modelcontextprotocol/"
TASKS_EXTENSION = _META_PREFIX + "tasks"  # 2026-07-28 tasks; always declared: we follow any task
SKILLS_EXTENSION = _META_PREFIX + "skills"  # SEP-2640; always declared: list_skills(), read_skill()
_RELATED_TASK = _META_PREFIX + "related-task"
_CLIENT_INFO = {"name": "mcp_min", "version": __version__}


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

# JSON-RPC and MCP error codes, in one table.
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  # up to 2025-11-25; 2026-07-28 uses INVALID_PARAMS
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25
HEADER_MISMATCH = -32020  # 2026-07-28
MISSING_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28
_MODERN_ERRORS = (HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)


class McpError(Exception):
    """Base class of every error mcp_min raises.

    Every subclass pickles and copies with its attributes (so it crosses
    ``multiprocessing`` and ``concurrent.futures`` process pools intact).
    """

    def __reduce__(self):
        # The default rebuilds an exception from ``args`` alone, which fails for
        # subclasses whose __init__ takes other arguments; restore the object instead.
        return _rebuild_error, (type(self), self.args), self.__dict__


def _rebuild_error(cls, args):
    error = cls.__new__(cls)
    error.args = args
    return error


class RequestError(McpError):
    """The server answered a request with a JSON-RPC error.

    Attributes: ``code`` (int), ``message`` (str), ``data`` (any JSON or None),
    ``method`` (the request's method).
    """

    def __init__(self, code, message, data=None, method=None):
        self.code, self.message, self.data, self.method = code, message, data, method
        text = "%s (code %s)" % (message, code)
        if method:
            text = "%s failed: %s" % (method, text)
        if data is not None:
            text += ": " + _shorten(_dumps_for_humans(data), 300)
        McpError.__init__(self, text)


class ResourceNotFound(RequestError):
    """``read_resource`` named a URI the server does not have (-32002 or -32602)."""


class UrlElicitationRequired(RequestError):
    """-32042 (2025-11-25): the server wants the user to visit one or more URLs first.

    ``elicitations`` lists them: dicts with ``mode`` ("url"), ``elicitationId``,
    ``url`` and ``message``.  With ``Client(url_elicitation=f)`` mcp_min runs ``f``
    for each and repeats the request once instead of raising this.
    """

    def __init__(self, code, message, data=None, method=None):
        RequestError.__init__(self, code, message, data, method)
        found = data.get("elicitations") if isinstance(data, dict) else None
        self.elicitations = [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


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

    ``challenge`` holds the ``WWW-Authenticate`` parameters; the common ones
    are also attributes: ``resource_metadata`` (URL of the protected resource
    metadata), ``scope``, ``error``, ``error_description``.
    """

    def __init__(self, url, status, body, challenge):
        HttpError.__init__(self, url, status, body)
        self.challenge = challenge
        self.resource_metadata = challenge.get("resource_metadata")
        self.scope = challenge.get("scope")
        self.error = challenge.get("error")
        self.error_description = challenge.get("error_description")
        hint = " (pass headers={'Authorization': 'Bearer <token>'} or auth=...)"
        if self.resource_metadata:
            hint = hint[:-1] + "; resource metadata at %s)" % self.resource_metadata
        if self.scope:
            hint = hint[:-1] + "; scope %r)" % self.scope
        self.args = (self.args[0] + hint,)


class AuthError(McpError):
    """The OAuth flow failed: what was fetched, what was wrong, what to do.

    ``error`` and ``error_description`` hold the authorization server's error, if any.
    """

    def __init__(self, message, error=None, error_description=None):
        McpError.__init__(self, message)
        self.error, self.error_description = error, error_description


class SkillVerificationError(McpError):
    """``read_skill`` refused a skill that does not match its entry; nothing of it is returned.

    Attributes: ``skill`` (URI of its SKILL.md), ``uri`` (the file at fault, or None),
    ``problem`` (``"entry"``, ``"dynamic"``, ``"limit"``, ``"missing"``, ``"content"``,
    ``"size"``, ``"digest"`` or ``"frontmatter"``), ``detail``, and ``expected`` and
    ``actual`` where that applies (for ``"frontmatter"``, dicts of the fields that differ).
    """

    def __init__(self, skill, uri, problem, detail, expected=None, actual=None):
        self.skill, self.uri, self.problem, self.detail = skill, uri, problem, detail
        self.expected, self.actual = expected, actual
        text = "%s: %s" % (uri or skill or "skill entry", detail)
        McpError.__init__(self, text + (" (skill %s)" % skill if skill and uri and uri != skill else ""))


class _SessionExpired(ConnectionClosed):
    """Internal: HTTP 404 for a request that carried a session id (the server forgot it)."""

    def __init__(self, message, session_id):
        ConnectionClosed.__init__(self, message)
        self.session_id = session_id


def _shorten(text, limit):
    if len(text) <= limit:
        return text
    return "%s... (%d more characters)" % (text[:limit], len(text) - limit)


def _dumps_for_humans(value):
    """JSON for an error message or a log line; never fails (server data can be anything)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))[:100000]
    except (ValueError, TypeError, RecursionError):
        return repr(value)[:100000]


# ---------------------------------------------------------------------------
# JSON-RPC core: messages, encoding, deadlines, futures, routing.  No I/O here.
# ---------------------------------------------------------------------------

# UTF-8 on the wire (ASCII escapes would triple the size of non-Latin text).  Framing stays
# safe: JSON escapes every control character, so no raw newline can appear in a message,
# and U+2028/U+2029 are not line ends for a byte-level reader.  NaN and Infinity are not JSON.
_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_dumps_ascii = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode  # escapes lone surrogates
_decode_str = json.JSONDecoder().decode  # takes str; json.loads would also sniff the encoding of bytes


def _to_json(value):
    """``value`` as JSON text; ValueError (never a bare token) for what JSON cannot carry."""
    try:
        return _dumps(value)
    except ValueError as e:
        raise ValueError("cannot send %s: NaN and Infinity are not JSON" % _shorten(repr(value), 100)) \
            if "not JSON compliant" in str(e) else e
    except RecursionError:
        raise ValueError("cannot send a value nested this deeply")


def _utf8(text, value):
    """JSON text as bytes.  A lone surrogate (possible in a Python str) has no UTF-8 form:
    such a message goes out ASCII-escaped, which is still valid JSON."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _dumps_ascii(value).encode("ascii")


def _encode_line(msg):
    """One message as one line of bytes (stdio framing; HTTP bodies use the same bytes)."""
    try:
        return (_dumps(msg) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # see _utf8
        return (_dumps_ascii(msg) + "\n").encode("ascii")
    except (ValueError, RecursionError):
        _to_json(msg)  # raises the error that says what JSON cannot carry
        raise


def _decode(data):
    """A message from bytes; ValueError for anything that is not JSON text, including input
    nested too deeply for the decoder (which would otherwise kill the reading thread)."""
    try:
        return _decode_str(data.decode("utf-8") if isinstance(data, bytes) else data)
    except RecursionError:
        raise ValueError("JSON nested too deeply")


def _request(request_id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def _notification(method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def _response(request_id, result):
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error_response(request_id, code, message):
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _is_id(value):
    # JSON-RPC ids are strings or integers; compare by exact JSON type (1 != "1", and
    # neither true nor 1.0 may stand for 1).
    return type(value) is int or type(value) is str


def _error_from(msg, method=None):
    """The exception for an error answer."""
    err = msg.get("error")
    if not isinstance(err, dict):
        return McpError("malformed error answer to %s: %s" % (method, _shorten(_dumps_for_humans(msg), 200)))
    code = err.get("code")
    message = err.get("message")
    cls = UrlElicitationRequired if code == URL_ELICITATION_REQUIRED else RequestError
    return cls(code if type(code) is int else INTERNAL_ERROR,
               message if isinstance(message, str) else _dumps_for_humans(message), err.get("data"), method)


def _result_dict(method, result):
    if not isinstance(result, dict):
        raise McpError("%s answered with a result that is not an object: %s"
                       % (method, _shorten(_dumps_for_humans(result), 200)))
    return result


def _result_of(method, answer):
    """The result dict of an answer (a message, or the McpError that ended the request); raises
    the answer's error."""
    if isinstance(answer, BaseException):
        raise answer
    if "error" in answer:
        raise _error_from(answer, method)
    return _result_dict(method, answer.get("result"))


def _trace(direction, msg):
    """The wire trace: one DEBUG line per message (credentials never travel in messages)."""
    if isinstance(msg, bytes):
        text = msg.decode("utf-8", "replace").rstrip("\n")
    else:
        text = _dumps_for_humans(msg)
    _log.debug("%s %s", direction, _shorten(text, _TRACE_CHARS))


# -- deadlines ---------------------------------------------------------------
# A deadline is a time.monotonic() value, or None for "no deadline".

_DEFAULT = object()  # "the caller gave no timeout": use the client's


def _timeout_arg(value, default=None, name="timeout"):
    """Check a timeout argument.  Returns seconds, or None for no deadline.

    Omitted (``_DEFAULT``) -> ``default``; ``None`` or infinity -> None; a positive
    finite number -> itself, at most LONGEST_WAIT; anything else -> ValueError."""
    if value is _DEFAULT:
        return default
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value <= 0:
        raise ValueError("%s must be a positive number of seconds or None, not %r" % (name, value))
    return None if math.isinf(value) else min(float(value), LONGEST_WAIT)


def _deadline_after(seconds):
    return None if seconds is None else time.monotonic() + seconds


def _remaining(deadline):
    """Seconds left before ``deadline`` (never negative), or None when there is none."""
    if deadline is None:
        return None
    return min(max(deadline - time.monotonic(), 0.0), LONGEST_WAIT)


def _expired(deadline):
    return deadline is not None and time.monotonic() >= deadline


# -- the process ------------------------------------------------------------------
# A client belongs to the process that made it: in a forked child it must not signal the
# parent's server, end its HTTP session, or wait on locks a parent's thread held at the fork.

_pid = os.getpid()  # this process (kept here: os.getpid() is a system call, and this is checked per send)


def _after_fork_in_child():
    global _pid, _deadlines
    _pid = os.getpid()
    _deadlines = None  # the deadline thread does not exist in the child, and its lock may have been held


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# -- futures -------------------------------------------------------------------

class Future(object):
    """The pending answer to one request, as returned by ``Client.submit``.

    ``result(timeout)`` waits for it; ``done()`` tells whether it is there;
    ``cancel()`` withdraws the request (the server is told).
    """

    __slots__ = ("id", "method", "params", "timeout", "deadline", "progress", "finish", "cancellable", "intercept",
                 "_arrived", "_answer", "_outcome", "_settling", "_settle", "_withdraw", "_keepalive", "__weakref__")

    def __init__(self, request_id, method, params, timeout, progress, settle, withdraw, finish=None,
                 cancellable=True):
        self.id = request_id
        self.method = method
        self.params = params
        self.timeout = timeout  # seconds or None, for messages
        self.deadline = _deadline_after(timeout)
        self.progress = progress
        self.finish = finish  # result dict -> the caller's value (None: the dict itself)
        self.cancellable = cancellable  # initialize and the discovery probe must not be cancelled
        self.intercept = None  # (future, answer) -> True when it takes the answer over (see _Dispatcher)
        self._answer = None  # the one slot: the answer message, or the McpError that ended the request
        self._arrived = threading.Lock()  # the latch: held until the answer is in the slot
        self._arrived.acquire()
        self._outcome = None  # (value, error) once settled
        self._settling = threading.Lock()  # several threads may wait; one settles
        self._settle = settle  # (future, answer) -> value, on the waiting thread; may block (input rounds)
        self._withdraw = withdraw  # (future, error) -> True once it ended the request with ``error``
        self._keepalive = None  # the Client, while this is pending (a one-liner's client lives on)

    def _put(self, answer):
        # By whoever removed this future from the pending map: exactly once (a second answer
        # would be a bug elsewhere; it is ignored rather than raising on a reader thread).
        if self._answer is None:
            self._answer = answer
            self._arrived.release()

    def done(self):
        """True once the answer (or a failure) has arrived."""
        return self._answer is not None

    def cancel(self, reason="cancelled by the client"):
        """Withdraw the request: the server is told, ``result()`` raises RequestCancelled.

        Returns False when the answer had already arrived.
        """
        return self._withdraw(self, RequestCancelled("%s %s" % (self.method, reason)))

    def result(self, timeout=None):
        """Wait for the answer and return the value.

        The request's own deadline (the client's or the call's ``timeout``) always
        applies; when it passes, the request is cancelled and RequestTimeout
        raised.  A smaller ``timeout`` here only limits this wait.
        """
        if self._outcome is None:
            answer = self._wait(timeout)
            with self._settling:
                if self._outcome is None:
                    try:
                        self._outcome = (self._settle(self, answer), None)
                    except McpError as e:
                        self._outcome = (None, e.with_traceback(None))  # see below
                    self._keepalive = None
        value, error = self._outcome
        if error is not None:
            try:
                raise error
            finally:
                # A stored error's traceback must not hold this Future (or, through frames, the
                # Client that made it): such a cycle keeps a dropped client's server alive until
                # the garbage collector happens to run.
                self = error = answer = None
        return value

    def _wait(self, timeout=None):
        """Wait for the raw answer (a message dict, or the McpError that ended the request)."""
        if self._answer is not None:
            return self._answer
        local = None
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or math.isnan(timeout):
                raise ValueError("timeout must be a number of seconds or None, not %r" % (timeout,))
            local = min(max(float(timeout), 0.0), LONGEST_WAIT)
        wait = _remaining(self.deadline)
        if local is not None and (wait is None or local < wait):
            answer = self._take(local)
            if answer is None:
                raise RequestTimeout("no answer to %s within %.3g s (still waiting)" % (self.method, local))
            return answer
        answer = self._take(wait)
        if answer is not None:
            return answer
        self._withdraw(self, RequestTimeout("no answer to %s within %.3g s%s" % (
            self.method, self.timeout, "; request cancelled" if self.cancellable else "")))
        return self._take(None)  # ours, or the answer that won the race

    def _take(self, wait):
        """The answer once it is in, or None when ``wait`` seconds (None: no limit) pass first."""
        if not self._arrived.acquire(True, -1 if wait is None else wait):
            return None
        self._arrived.release()  # the latch stays open for every other waiter
        return self._answer



# -- routing -------------------------------------------------------------------

class _Dispatcher(object):
    """The JSON-RPC core of one connection: request ids, the pending requests and the
    open subscriptions, all under one lock, and the routing of every message that arrives.

    A transport delivers to it (it is the transport's *router*): ``receive(msg)`` for a
    decoded message, ``fail(request_id, error)`` when one request cannot be answered,
    ``closed(error)`` when the connection is gone, ``is_pending(request_id)``.  An answer
    settles its Future (unless the Future's ``intercept`` takes it over: a tool call that
    became a background task); a server request goes to ``on_request(msg)``, a notification
    to ``on_notification(method, params)``; ``on_closed(error)`` hears of the end.  No I/O
    and no user code run here.
    """

    def __init__(self, on_request, on_notification, on_closed=None):
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_closed = on_closed
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending = {}  # request id -> Future
        self._subscriptions = {}  # listen request id (or, handshake era, a token) -> Subscription
        self.error = None  # the ConnectionClosed that ended the connection: later requests fail at once

    # -- the session's side ------------------------------------------------------
    def next_id(self):
        return next(self._ids)  # (itertools.count is atomic: one call of C code; no lock to contend for)

    def add(self, fut, subscription=None):
        """Register a request about to be sent (so its answer finds it).  Raises the
        connection's error when it is gone."""
        with self._lock:
            if self.error is not None:
                raise self.error
            self._pending[fut.id] = fut
            if subscription is not None:  # registered before sending: no notification can miss it
                self._subscriptions[fut.id] = subscription

    def withdraw(self, request_id):
        """Remove a pending request; returns its Future, or None when it had already ended."""
        with self._lock:
            return self._pending.pop(request_id, None)

    def pending(self, request_id):
        with self._lock:
            return self._pending.get(request_id)

    def subscribe(self, key, subscription):
        with self._lock:
            self._subscriptions[key] = subscription

    def unsubscribe(self, subscription):
        with self._lock:
            for key in [k for k, s in self._subscriptions.items() if s is subscription]:
                del self._subscriptions[key]

    def subscription(self, key):
        with self._lock:
            return self._subscriptions.get(key)

    def subscriptions(self):
        with self._lock:
            return list(self._subscriptions.values())

    def reset(self):
        """A new connection (a restarted stdio server) starts with no error."""
        with self._lock:
            self.error = None

    # -- the transport's side (the router) ----------------------------------------
    def is_pending(self, request_id):
        with self._lock:
            return request_id in self._pending

    def receive(self, msg):
        """Route one decoded message."""
        if _log.isEnabledFor(logging.DEBUG):
            _trace("<-", msg)
        if type(msg) is not dict:
            if isinstance(msg, list):  # a 2025-03-26 batch
                for m in msg:
                    self.receive(m)
            else:
                _log.warning("ignored a message that is not an object: %s", _shorten(repr(msg), 200))
            return
        method = msg.get("method")
        if method is None:
            self._answer(msg)
        elif "id" in msg:
            if _is_id(msg["id"]) and isinstance(method, str):
                self._on_request(msg)
            else:
                _log.warning("ignored a malformed request: %s", _shorten(_dumps_for_humans(msg), 200))
        elif isinstance(method, str):
            params = msg.get("params")
            self._on_notification(method, params if isinstance(params, dict) else {})
        else:
            _log.warning("ignored a message whose method is not a string: %s", _shorten(_dumps_for_humans(msg), 200))

    def _answer(self, msg):
        rid = msg.get("id")
        if not _is_id(rid):
            rid = None  # (no future has it; checked before the lock, which the senders share)
        with self._lock:
            fut = self._pending.pop(rid, None)
            ended = self._subscriptions.pop(rid, None) if fut is not None and self._subscriptions else None
        if fut is not None:
            if fut.intercept is None or not self._intercepted(fut, msg):
                fut._put(msg)
            if ended is not None:  # the server ended a listen
                ended._end(_error_from(msg, "subscriptions/listen") if "error" in msg else None)
        elif "error" in msg and rid is None:
            _log.warning("server reported an error: %s", _shorten(_dumps_for_humans(msg.get("error")), 500))
        else:
            _log.debug("ignored an answer to unknown request id %r", rid)

    @staticmethod
    def _intercepted(fut, msg):
        try:
            return fut.intercept(fut, msg)
        except Exception:  # a bug there must not lose the answer
            _log.exception("error looking at the answer to %s", fut.method)
            return False

    def fail(self, request_id, error):
        """One request cannot be answered (HTTP: its POST failed)."""
        with self._lock:
            fut = self._pending.pop(request_id, None)
            ended = self._subscriptions.pop(request_id, None)
        if fut is not None:
            fut._put(error)
        if ended is not None:
            ended._end(error)

    def closed(self, error):
        """The connection is gone: every pending request fails with ``error``, and so will later ones."""
        with self._lock:
            if self.error is None:
                self.error = error
            pending, self._pending = list(self._pending.values()), {}
            ended = list(self._subscriptions.values())
        for fut in pending:
            fut._put(ConnectionClosed("%s before answering %s" % (getattr(error, "summary", error), fut.method),
                                      getattr(error, "returncode", None), getattr(error, "stderr", ()),
                                      getattr(error, "detail", "")))
        for sub in ended:
            sub._end(error)
        if self._on_closed is not None:
            self._on_closed(error)


# ---------------------------------------------------------------------------
# Protocol helpers: pure functions of MCP and HTTP details (tested in memory)
# ---------------------------------------------------------------------------

def _choose_version(supported):
    """The newest version in both ``supported`` (what a server listed) and ours."""
    for version in SUPPORTED_VERSIONS:
        if version in supported:
            return version
    raise McpError("no protocol version in common: the server supports %s, mcp_min supports %s"
                   % (_shorten(", ".join(map(str, supported)), 300), ", ".join(SUPPORTED_VERSIONS)))


def _field(result, key, kind, method, default=None):
    """``result[key]`` checked against ``kind`` (the server may send anything)."""
    value = result.get(key, default)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise McpError("%s answered with %r of the wrong type: %s"
                       % (method, key, _shorten(_dumps_for_humans(value), 100)))
    return value


def _tool_value(result):
    """The value a tool returned: structured content, else a lone text, else the content list."""
    content = _field(result, "content", list, "tools/call", [])
    if result.get("isError"):
        text = "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("type") == "text")
        raise ToolError(text or "the tool reported an error", result)
    structured = result.get("structuredContent")
    if structured is not None:
        if isinstance(structured, dict) and len(structured) == 1 and "result" in structured:
            return structured["result"]  # the Python SDKs wrap scalar returns this way
        return structured
    if len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "text":
        return content[0].get("text")
    return content


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
    """An accepted form leaves unset fields to their schema defaults (SEP-1034)."""
    if not isinstance(result, dict) or result.get("action") != "accept":
        return result
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    props = schema.get("properties") if isinstance(schema, dict) else None
    content = dict(result.get("content") or {})
    for key, prop in (props.items() if isinstance(props, dict) else ()):
        if key not in content and isinstance(prop, dict) and "default" in prop:
            content[key] = prop["default"]
    return dict(result, content=content)


# -- skills (SEP-2640) ----------------------------------------------------------
# A skill is a SKILL.md (YAML frontmatter, then Markdown) and other files, each a resource.  Its
# entry (skills/list, skills/get) gives each file's size and sha256 digest, and the frontmatter
# as JSON.  Nothing read is believed until it matches the entry.

class _Yaml(object):
    """The YAML of skill frontmatter, read line by line: block maps and lists, flow lists of
    scalars, plain scalars (YAML 1.2 core schema), quoted strings ending on their line, block
    scalars (| and >, with - or + chomping), comments and {}.  Anything else raises ValueError
    ("line N: what").  Linear time; one recursion per nesting level.  Keys stay strings."""

    def __init__(self, text, first_line):
        self.lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
        self.first, self.i, self.dash = first_line, 0, False  # self.i: the line being read

    def fail(self, reason):
        raise ValueError("line %d: %s" % (self.first + self.i, reason))

    def next_content(self):
        """Skip blank and comment lines; the indentation of the next line, or -1 at the end."""
        while self.i < len(self.lines):
            text = self.lines[self.i].lstrip(" ")
            if text.lstrip(" \t")[:1] not in ("", "#"):
                if text[0] == "\t":
                    self.fail("tab in indentation (YAML indents with spaces)")
                self.dash = text[0] == "-" and text[1:2] in ("", " ", "\t")  # a list item
                return len(self.lines[self.i]) - len(text)
            self.i += 1
        return -1

    def node(self, parent, depth, line=None):
        """The value at the next content indented more than ``parent`` (None when there is
        none).  A list or map may not start on ``line`` (a map value's own line)."""
        col = self.next_content()
        if col <= parent:
            return None
        text = self.lines[self.i][col:]
        if self.i != line and (self.dash or self.key(text)):
            if depth >= FRONTMATTER_MAX_DEPTH:
                self.fail("lists and maps nested deeper than %d levels" % FRONTMATTER_MAX_DEPTH)
            return self.block(col, depth + 1, self.dash)
        if text[0] in "|>":
            return self.block_scalar(text, parent)
        if text[0] in "\"'[" or text[:2] == "{}":  # an empty map is how emitters write one
            value, end = ({}, 2) if text[0] == "{" else self.flow_list(text) if text[0] == "[" else self.quoted(text)
            if text[end:].strip(" \t") and not re.match(r"[ \t]+#", text[end:]):
                self.fail("unexpected text after the value: %r" % text[end:].strip()[:40])
        else:
            value = self.plain(text)
        self.i += 1
        return value

    def block(self, col, depth, is_list):
        """A block list or map whose items start at column ``col``."""
        out = [] if is_list else {}
        while True:
            line = self.lines[self.i]
            if is_list:  # "- item": the item is what follows, one column further in
                self.lines[self.i] = line[:col] + " " + line[col + 1:]
                out.append(self.node(col, depth))
            else:
                key, at = self.key(line[col:]) or self.fail("expected 'key: value'")
                if key in out:
                    self.fail("duplicate key %r" % key)
                start, self.lines[self.i] = self.i, " " * (col + at) + line[col + at:]
                same = self.next_content() == col and self.dash  # a list may start at the key's column
                out[key] = self.node(col - same, depth, start)
            indent = self.next_content()
            if indent < col or is_list and indent == col and not self.dash:
                return out
            if indent > col:
                self.fail("unexpected indentation (a value on several lines needs | or >)")

    def key(self, text):
        """(key, where its value starts in ``text``) for a ``key: value`` line, else None."""
        if text[0] in "\"'":
            key, end = self.quoted(text)
        else:
            found = re.search(r":(?=[ \t]|\Z)|[ \t]#", text)
            if not found or found.group() != ":":
                return None
            key, end = text[:found.start()].rstrip(" \t"), found.start()
            self.plain(key, "mapping key")  # (it stays a string)
        colon = re.compile(r"[ \t]*:(?:[ \t]+|\Z)").match(text, end)
        return (key, colon.end()) if colon else None

    def plain(self, text, what="plain value"):
        """A plain scalar: null, bool, int, float (the YAML 1.2 core schema), else the text."""
        comment = re.search(r"[ \t]#", text)
        text = (text[:comment.start()] if comment else text).rstrip(" \t")
        c, spaced = text[:1], text[1:2] in ("", " ", "\t")
        if c and c in "&*!{" or c == "?" and spaced:
            self.fail({"{": "flow maps are not supported (write the map on indented lines)", "?": "complex keys "
                       "('? ') are not supported"}.get(c, "anchors, aliases and tags are not supported"))
        if not c or c in "-:" and spaced or c in "[]},#|>@`%\"'":
            self.fail("a %s cannot %s (quote it)" % (what, "start with %r" % c if c else "be empty"))
        if re.search(r":(?:[ \t]|\Z)", text):
            self.fail("':' followed by a space in a plain value (quote the value)")
        if text in ("~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"):
            return None if text[0] in "~nN" else text[0] in "tT"
        number = re.match(r"([-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)"
                          r"([eE][-+]?[0-9]+)?\Z|([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))\Z", text)
        if not number:
            return text
        if len(text) > FRONTMATTER_MAX_DIGITS:
            self.fail("a number longer than %d characters" % FRONTMATTER_MAX_DIGITS)
        return int(text, {"0o": 8, "0x": 16}.get(text[:2], 10)) if number.group(1) else float(
            text.replace(".", "") if text[-1] in "fFnN" else text)  # .inf, .nan

    def quoted(self, text):
        """(value, end) of the quoted string that starts ``text``; it must end on its line.
        Double quotes take JSON's escapes (\\uD83D\\uDE00 is one character, as in JSON)."""
        found = re.match(r"""'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|""", text).group()
        if not found:
            self.fail("unterminated quoted string (it must end on its line)")
        if found[0] == "'":
            return found[1:-1].replace("''", "'"), len(found)
        bad = [c for c in re.findall(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt]|(.))', found) if c]
        if bad:
            self.fail("unsupported escape \\%s in a double-quoted string (JSON's escapes are)" % bad[0])
        return json.loads(found, strict=False), len(found)

    def flow_list(self, text):
        """([items], end) of the flow list of scalars that starts ``text``; it must end on its line."""
        item = re.compile(r"""[ \t]*(?:('(?:[^']|'')*'|"(?:[^"\\]|\\.)*")[ \t]*"""  # a quoted item, or
                          r"""|([^,\[\]{}'" \t][^,\[\]{}]*)?)([,\]])""")  # a plain one; then , or ]
        out, pos = [], 1
        while True:
            found = item.match(text, pos)
            plain = found and (found.group(2) or "").rstrip(" \t")
            if not found or plain and re.search(r"(^|[ \t])#", plain):
                self.fail("nested flow collections are not supported" if text[pos:].lstrip(" \t")[:1] in ("[", "{")
                          else "a flow list holds scalars separated by ',' and ends with ']' on its line")
            pos = found.end()
            if found.group(1) or plain:
                out.append(self.quoted(found.group(1))[0] if found.group(1) else self.plain(plain))
            elif found.group(3) == ",":
                self.fail("an empty item in a flow list")
            if found.group(3) == "]":
                return out, pos

    def block_scalar(self, text, parent):
        """A | (literal) or > (folded) scalar on the lines indented more than ``parent``."""
        header = re.match(r"([|>])([-+]?)(?:[ \t]+(?:#.*)?)?\Z", text)
        if not header:
            self.fail("a block scalar header is | or > and then - or + at most (no indentation digit)")
        lines, indent = [], None
        self.i += 1
        while self.i < len(self.lines):
            line = self.lines[self.i]
            spaces = len(line) - len(line.lstrip(" "))
            if spaces == len(line):  # an empty line; spaces beyond the indentation are text
                lines.append("" if indent is None else line[indent:])
            elif spaces > (parent if indent is None else indent - 1):
                indent = spaces if indent is None else indent
                lines.append(line[indent:])
            elif line[spaces] == "\t" or indent is not None and spaces > parent and line[spaces] != "#":
                self.fail("a line of a block scalar indented less than its first line (or with a tab)")
            else:
                break
            self.i += 1
        texts = [n for n, line in enumerate(lines) if line]
        if not texts:
            return "\n" * len(lines) if header.group(2) == "+" else ""
        out = ["\n" * texts[0], lines[texts[0]]]
        for a, b in zip(texts, texts[1:]):  # folded: one line break between two lines of text is a space
            fold = header.group(1) == ">" and lines[a][0] not in " \t" and lines[b][0] not in " \t"
            out += ["\n" * (b - a - 1) or " " if fold else "\n" * (b - a), lines[b]]
        return "".join(out) + {"-": "", "": "\n", "+": "\n" * (len(lines) - texts[-1])}[header.group(2)]


def _parse_frontmatter(markdown):
    """(frontmatter dict, body) of a SKILL.md; ValueError("line N: what") when its frontmatter
    is missing or not in the YAML that _Yaml reads."""
    text = markdown[1:] if markdown.startswith("\ufeff") else markdown
    opening = re.match(r"---[ \t]*\r?\n", text)
    closing = opening and re.compile(r"^---[ \t]*\r?$", re.M).search(text, opening.end())
    if not closing:
        raise ValueError("line 1: SKILL.md must begin with YAML frontmatter between two '---' lines")
    if closing.start() - opening.end() > FRONTMATTER_MAX_CHARS:
        raise ValueError("line 2: the frontmatter is longer than %d characters" % FRONTMATTER_MAX_CHARS)
    yaml = _Yaml(text[opening.end():closing.start()].replace("\r\n", "\n").replace("\r", "\n"), 2)
    value = yaml.node(-1, 0)
    if yaml.next_content() >= 0:
        yaml.fail("unexpected text after the frontmatter's fields")
    if not isinstance(value, (dict, type(None))):
        raise ValueError("line 2: the frontmatter must be a map of fields, not a %s" % type(value).__name__)
    return value or {}, text[closing.end() + 1:]


def _same_json(a, b):
    """Equal as JSON values: 1 == 1.0, but True != 1 and "1" != 1.  Recurses as deep as ``a``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)):
        return isinstance(b, (int, float)) and a == b
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(_same_json(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _skill_files(entry):
    """Check a skill entry before anything is read: (URI of its SKILL.md, its files, SKILL.md first)."""
    uri = entry.get("uri") if isinstance(entry, dict) else None

    def bad(detail, problem="entry"):
        raise SkillVerificationError(uri if isinstance(uri, str) else None, None, problem, detail)

    if not isinstance(uri, str) or "://" not in uri or not uri.endswith("/SKILL.md"):
        bad("a skill entry's uri must be that of a SKILL.md, not %s" % _shorten(_dumps_for_humans(uri), 100))
    root, frontmatter, files = uri[:-len("/SKILL.md")], entry.get("frontmatter"), entry.get("resources")
    if not isinstance(frontmatter, dict) or frontmatter.get("name") != root.rsplit("/", 1)[-1]:
        bad("the entry's frontmatter does not name the skill %r (its path's last segment)" % root.rsplit("/", 1)[-1])
    if files == "dynamic":
        bad("the server makes this skill's files on demand, so they cannot be verified (read_resource() "
            "reads them unverified)", "dynamic")
    if not isinstance(files, list) or len(files) > SKILL_MAX_FILES:
        bad("the entry's resources must be a list of at most %d files" % SKILL_MAX_FILES,
            "limit" if isinstance(files, list) else "entry")
    listed = {}
    for item in files:
        file_uri = item.get("uri") if isinstance(item, dict) else None
        if not isinstance(file_uri, str):
            bad("a file of the entry has no uri: %s" % _shorten(_dumps_for_humans(item), 100))
        if not isinstance(item.get("digest"), str) or not re.match(r"sha256:[0-9a-f]{64}\Z", item["digest"]):
            bad("%s: the entry's digest is not sha256:<64 lowercase hex digits>" % file_uri)
        if type(item.get("size")) is not int or item["size"] < 0:
            bad("%s: the entry's size is not a byte count" % file_uri)
        inside = file_uri.startswith(root + "/") and not {"", ".", ".."} & set(file_uri[len(root) + 1:].split("/"))
        if file_uri in listed or not inside:
            bad("%s %s" % (file_uri, "is listed twice" if inside else "is not in the skill's directory " + root))
        listed[file_uri] = item
    if sum(item["size"] for item in files) > SKILL_MAX_BYTES:
        bad("the skill's files add up to more than %d bytes" % SKILL_MAX_BYTES, "limit")
    if uri not in listed:
        bad("the entry's resources do not list %s itself" % uri)
    return uri, [listed[uri]] + [item for item in files if item["uri"] != uri]


def _skill_file(skill, item, result):
    """The bytes of ``item`` in a resources/read result, once its size and digest match."""
    import hashlib
    contents = result.get("contents") if isinstance(result, dict) else None
    parts = [c for c in contents if isinstance(c, dict) and c.get("uri") == item["uri"]] if isinstance(
        contents, list) else []
    text, blob = (parts[0].get("text"), parts[0].get("blob")) if len(parts) == 1 else (None, None)
    try:
        data = text.encode("utf-8") if isinstance(text, str) else base64.b64decode(blob, validate=True)
    except (ValueError, TypeError):  # (text with a lone surrogate, blob not base64, neither)
        raise SkillVerificationError(skill, item["uri"], "content", "resources/read did not return this file "
                                     "(one content with its uri, with a text or a base64 blob)")
    if len(data) != item["size"]:
        raise SkillVerificationError(skill, item["uri"], "size", "size mismatch: the entry says %d bytes, the "
                                     "server sent %d" % (item["size"], len(data)), item["size"], len(data))
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != item["digest"]:
        raise SkillVerificationError(skill, item["uri"], "digest", "digest mismatch: the entry says %s, the "
                                     "content hashes to %s" % (item["digest"], digest), item["digest"], digest)
    return data


def _skill_md(skill, entry, data):
    """(text, frontmatter, body) of a SKILL.md whose frontmatter equals the entry's, field by field."""
    try:
        text = data.decode("utf-8")
        frontmatter, body = _parse_frontmatter(text)
    except ValueError as e:  # (UnicodeDecodeError is one)
        raise SkillVerificationError(skill, skill, "frontmatter", "cannot read its frontmatter: %s" % e) from e
    listed = entry["frontmatter"]
    differ = [k for k in list(listed) + [k for k in frontmatter if k not in listed]
              if k not in frontmatter or k not in listed or not _same_json(frontmatter[k], listed[k])]
    if differ:
        def show(fields, k):
            return _shorten(_dumps_for_humans(fields[k]), 80) if k in fields else "(absent)"
        raise SkillVerificationError(skill, skill, "frontmatter", "frontmatter differs from the entry: " + "; ".join(
            "%s: the entry says %s, the file says %s" % (k, show(listed, k), show(frontmatter, k)) for k in differ),
            {k: listed[k] for k in differ if k in listed}, {k: frontmatter[k] for k in differ if k in frontmatter})
    return text, frontmatter, body


# -- HTTP details ---------------------------------------------------------------

_TCHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _clean_headers(headers, what="header"):
    """The caller's HTTP headers, checked: names are tokens, values are text without line
    breaks, surrounding whitespace (a token read from a file ends in a newline) removed.
    Errors name the header, never its value (it is usually a credential)."""
    out = {}
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not name or any(c not in _TCHARS for c in name):
            raise ValueError("%s name %r is not a valid HTTP header name" % (what, name))
        if not isinstance(value, str):
            raise ValueError("%s %s: the value must be a string" % (what, name))
        value = value.strip()
        if any(c in value for c in "\r\n\0"):
            raise ValueError("%s %s: the value contains a line break or NUL" % (what, name))
        out[name] = value
    return out


def _url_credentials(url, headers):
    """``user:password@`` in a server URL becomes a Basic Authorization header (unless
    one is given), so the URL itself -- which names the server in messages and logs --
    carries no secret.  Returns (url, headers)."""
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, headers
    userinfo, _, host = parts.netloc.rpartition("@")
    if not any(k.lower() == "authorization" for k in headers):
        pair = urllib.parse.unquote(userinfo).encode("utf-8")
        headers = dict(headers, Authorization="Basic " + base64.b64encode(pair).decode("ascii"))
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), headers


def _valid_session_id(value):
    # The spec allows visible ASCII only: anything else could smuggle header syntax.
    return bool(value) and all("\x21" <= c <= "\x7e" for c in value)


def _header_value(value):
    """Encode a value for Mcp-Method / Mcp-Name / Mcp-Param-* headers (2026-07-28 rules)."""
    text = value if isinstance(value, str) else ("true" if value is True else "false" if value is False
                                                 else str(value))
    plain = (text == text.strip(" \t") and all(c in " \t" or "\x21" <= c <= "\x7e" for c in text)
             and not (text.startswith("=?base64?") and text.endswith("?=")))
    if plain:
        return text
    return "=?base64?%s?=" % base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")


def _param_headers(tool):
    """The ``x-mcp-header`` markings of a tool: a list of (path, header name).

    Raises ValueError naming the reason when a marking is invalid (the tool
    must then be hidden, as the 2026-07-28 revision asks).
    """
    found = []
    seen = set()

    def walk(schema, path):
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict) or len(path) > MAX_SCHEMA_DEPTH:
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

    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    schema = schema if isinstance(schema, dict) else {}
    # Markings under items/anyOf/$ref etc. are not reachable through properties alone.
    text = _dumps_for_humans(schema)
    walk(schema, ())
    if text.count('"x-mcp-header"') != len(found):
        raise ValueError("an x-mcp-header marking is not reachable through properties alone")
    return found


def _b64url(data):
    """Base64url without padding (JOSE, PKCE)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _media_type(headers):
    """The lower-cased media type of a Content-Type header, without parameters."""
    return (headers.get("Content-Type") or "").split(";")[0].strip().lower()


def _parse_www_authenticate(value):
    """The parameters of the challenges in a WWW-Authenticate header, as a dict (keys
    lower-cased; ``scheme`` holds the first scheme named)."""
    import re
    out = {}
    if not value:
        return out
    scheme = re.match(r"\s*([A-Za-z][A-Za-z0-9_.-]*)(?:\s|$)", value)
    if scheme:
        out["scheme"] = scheme.group(1)
    for m in re.finditer(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))', value):
        out.setdefault(m.group(1).lower(), m.group(2).replace('\\"', '"') if m.group(2) is not None
                       else m.group(3))
    return out


def _origin(url):
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port or default


def _is_loopback(host):
    return host in ("localhost", "127.0.0.1", "::1") or host.startswith("127.")


def _redact(headers):
    """Headers for a log line, credentials replaced."""
    secret = ("authorization", "cookie", "proxy-authorization", "x-api-key", "api-key", "mcp-session-id", "dpop")
    return {k: ("<redacted>" if k.lower() in secret or "token" in k.lower() or "key" in k.lower()
                or "secret" in k.lower() else v) for k, v in headers.items()}


class _SseParser(object):
    """Incremental server-sent-events parser (WHATWG rules), fed one line at a time.

    An event larger than MAX_MESSAGE_BYTES is dropped as it grows, not buffered."""

    def __init__(self, name="the server"):
        self._data = []
        self._size = 0
        self._event = ""
        self._name = name
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

    def oversized(self):
        """The current event grew too large (a line longer than the limit arrived): drop it."""
        if self._size >= 0:
            _log.warning("%s sent an SSE event of over %d bytes; dropped it", self._name, MAX_MESSAGE_BYTES)
        self._data, self._size = [], -1  # -1: dropping until the event ends

    def _feed_one(self, line):
        if not line:
            data, kind, dropped = "\n".join(self._data), self._event or "message", self._size < 0
            self._data, self._event, self._size = [], "", 0
            if not data or dropped:  # (an empty one is e.g. the priming event that only carries an id)
                return None
            return kind, data
        if line[0] == ":":
            return None  # comment / keep-alive
        field, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if field == "data":
            if self._size >= 0:
                self._size += len(value) + 1
                if self._size > MAX_MESSAGE_BYTES:
                    self.oversized()
                else:
                    self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self.last_id = value
        elif field == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None


# ---------------------------------------------------------------------------
# Transports: one interface, three ways of moving messages
# ---------------------------------------------------------------------------

class _Transport(object):
    """What the session needs from a way of moving messages.  Subclasses override
    what applies to them; the defaults here are the "nothing to do" answers.

    Attributes:
        kind: ``"stdio"``, ``"streamable-http"`` or ``"sse"`` (``Client.transport``).
        name: how messages name the peer (``server 'python calc.py'``, ``server at URL``).
        carries_headers: True where each request has HTTP headers of its own (then
            the 2026-07-28 ``Mcp-Param-*`` headers apply, which need tools/list first).
        stderr_tail: the last lines a stdio server wrote to stderr.

    Methods:
        start(router): connect, then deliver to ``router.receive(msg)``,
            ``router.fail(request_id, error)`` and ``router.closed(error)``, and ask
            ``router.is_pending(request_id)`` (the router is a _Dispatcher).
        send(msg, data, deadline, wait_here=False, headers=None): send one message;
            ``data`` is its encoding.  For a request, ``wait_here`` says the caller is
            about to wait for the answer, so HTTP may read it on this thread; ``headers``
            are that request's own HTTP headers.  Raises ConnectionClosed or
            RequestTimeout when it could not be sent; after close() it writes nothing.
        cancel(request_id): cut a request short where the transport can; True when
            that alone is the cancellation (a 2026-07-28 HTTP stream closed), so no
            notifications/cancelled is sent.
        configure(version, modern): the era -- the version in use (None until one is
            agreed) and whether requests are stateless 2026-07-28 ones.
        after_handshake(): the initialize handshake is done.
        replacement_for(error): another transport to retry ``initialize`` with after
            ``error`` (Streamable HTTP -> legacy HTTP+SSE), or None.
        close(): bounded, idempotent, any thread; does nothing in a forked child.
    """

    kind = None
    name = "the server"
    carries_headers = False
    stderr_tail = ()
    _router = None

    def start(self, router):
        self._router = router

    def cancel(self, request_id):
        return False

    def configure(self, version, modern):
        pass

    def after_handshake(self):
        pass

    def replacement_for(self, error):
        return None


def _start_thread(target, name, args=(), what="read from the server"):
    """Start a daemon thread; a process out of threads gets an error that says so."""
    thread = threading.Thread(target=target, name=name, args=args, daemon=True)
    try:
        thread.start()
    except RuntimeError as e:
        raise ConnectionClosed("cannot start a thread to %s (%s): the process may be at its thread limit"
                               % (what, e))
    return thread


# -- stdio -----------------------------------------------------------------------------

# Variables a server may reasonably need; the rest of the caller's environment
# (API keys, tokens) is passed only when asked for.
_SAFE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
             "TZ") if os.name != "nt" else (
    "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "PROGRAMFILES", "COMSPEC")


def _server_env(env, inherit):
    base = dict(os.environ) if inherit else {k: os.environ[k] for k in _SAFE_ENV if k in os.environ}
    for key, value in (env or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError("env must map strings to strings; %r is %r" % (key, type(value).__name__))
        if os.name == "nt":  # names are case-insensitive there: "Path" replaces PATH, not beside it
            for same in [k for k in base if k.upper() == key.upper()]:
                del base[same]
        base[key] = value
    return base


def _env_get(env, name):
    for key, value in env.items():
        if key.upper() == name.upper():  # (Windows: a config may say "Path")
            return value
    return None


def _resolve_program(argv0, env, cwd):
    """Windows: the file CreateProcess must be given for ``argv0``.  It neither searches
    PATHEXT nor turns "npx" into npx.cmd, so the most common configs ("command": "npx")
    fail without this; the child's PATH is searched, and a relative path is taken from its
    cwd, as on POSIX.  Not found: ``argv0`` as given, so the start error names it."""
    import shutil
    name = os.path.join(cwd, argv0) if cwd and os.path.dirname(argv0) and not os.path.isabs(argv0) else argv0
    path, exts = _env_get(env, "PATH"), (_env_get(os.environ, "PATHEXT") or ".COM;.EXE;.BAT;.CMD").lower()
    found = shutil.which(name, path=path)
    if found and os.path.splitext(found)[1].lower() not in exts.split(";"):
        # Python 3.12.0 can return npm's extensionless shell script beside npx.cmd.
        found = next(filter(None, (shutil.which(name + e, path=path) for e in exts.split(";") if e)), found)
    return found or argv0


def _batch_command_line(program, args):
    """Windows: the command line for a .cmd/.bat launcher (npx.cmd).  CreateProcess hands it to
    cmd.exe, which re-parses the line: an unquoted "&" in an argument would start a second
    command.  Inside double quotes cmd.exe leaves & | < > ^ ( ) alone and the program behind
    the launcher drops the quotes; % and " cannot be made safe there, so they are refused."""
    parts = ['"%s"' % program]
    for arg in args:
        if any(c in arg for c in '%"\r\n\0'):
            raise ValueError("%r cannot be passed through %s: cmd.exe would change it; start the program "
                             "behind the launcher directly" % (arg, os.path.basename(program)))
        if not arg or any(c.isspace() or c in "&|<>^()!,;=" for c in arg):
            body = arg.rstrip("\\")  # backslashes before the closing quote are doubled, or they escape it
            arg = '"%s%s"' % (body, "\\" * (2 * (len(arg) - len(body))))
        parts.append(arg)
    return " ".join(parts)


def _process_group():
    """Popen keywords that give a server a process group of its own, so close() reaches
    what a launcher (npx, uv) started, and a Ctrl+C in our console does not reach it."""
    if os.name != "nt":
        return {"start_new_session": True}
    import subprocess  # (no console window per server for GUI and pythonw applications either)
    return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP | getattr(subprocess, "CREATE_NO_WINDOW", 0)}


def _taskkill_argv(pid):
    """Windows: taskkill from the system folder (never whatever PATH finds) ending ``pid``
    and every process it started; it must run while the launcher still lives."""
    root = _env_get(os.environ, "SystemRoot") or "C:\\Windows"
    return [os.path.join(root, "System32", "taskkill.exe"), "/T", "/F", "/PID", str(int(pid))]


class _WindowsJob(object):
    """Windows: a job object that holds a server and every process it starts, so that close()
    ends the whole tree even after the server itself has exited (Windows does not end children
    with their parent, and taskkill /T cannot find the children of a process that is gone).
    Ours is the job's only handle and the job ends its processes when that handle closes: a
    client that dies leaves no server behind either.

    The server joins the job right after Popen returns.  A child it starts before that stays
    outside; starting it suspended would close that gap, but subprocess cannot resume a
    suspended process (Popen closes the thread handle ResumeThread needs), and a launcher
    (cmd.exe, npx, uvx) needs far longer than those microseconds to start anything.
    ``for_process`` gives None where ctypes or the job API is missing or Windows refuses the
    job; close() then falls back to taskkill, which reaches the tree only while the server lives."""

    _KILL_ON_JOB_CLOSE = 0x2000      # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    _EXTENDED_LIMIT_INFORMATION = 9  # JobObjectExtendedLimitInformation
    _PROCESS_ACCESS = 0x0100 | 0x0001  # PROCESS_SET_QUOTA | PROCESS_TERMINATE: what assigning needs
    _api = None  # (kernel32, the limits structure): our own ctypes view, whose argtypes touch nobody else's

    def __init__(self, handle):
        self._handle = handle
        self._lock = threading.Lock()  # a handle closed by close() is never used after (nor reused)

    @classmethod
    def for_process(cls, pid):
        """A new job holding process ``pid`` (ours, so the pid cannot be reused meanwhile), or None."""
        try:
            import ctypes
            kernel32, limits_type = cls._api or cls._load_api()
        except (ImportError, OSError, AttributeError) as e:
            _log.warning("no job objects here (%s): close() can miss what a server started", e)
            return None
        job = kernel32.CreateJobObjectW(None, None)
        process = kernel32.OpenProcess(cls._PROCESS_ACCESS, False, pid)
        limits = limits_type(LimitFlags=cls._KILL_ON_JOB_CLOSE)
        ok = bool(job and process) and kernel32.SetInformationJobObject(
            job, cls._EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits), ctypes.sizeof(limits)) and (
            kernel32.AssignProcessToJobObject(job, process))
        error = ctypes.get_last_error()
        for handle in (process, None if ok else job):
            if handle:
                kernel32.CloseHandle(handle)
        if not ok:
            _log.warning("no job object for process %d (Windows error %d): close() can miss what it starts",
                         pid, error)
            return None
        return cls(job)

    @classmethod
    def _load_api(cls):
        import ctypes
        from ctypes import wintypes
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle, dword, boolean, size = wintypes.HANDLE, wintypes.DWORD, wintypes.BOOL, ctypes.c_size_t
        for name, restype, argtypes in (
                ("CreateJobObjectW", handle, [ctypes.c_void_p, wintypes.LPCWSTR]),
                ("SetInformationJobObject", boolean, [handle, ctypes.c_int, ctypes.c_void_p, dword]),
                ("OpenProcess", handle, [dword, boolean, dword]),
                ("AssignProcessToJobObject", boolean, [handle, handle]),
                ("TerminateJobObject", boolean, [handle, wintypes.UINT]),
                ("CloseHandle", boolean, [handle])):
            function = getattr(kernel32, name)
            function.restype, function.argtypes = restype, argtypes

        class ExtendedLimits(ctypes.Structure):  # JOBOBJECT_EXTENDED_LIMIT_INFORMATION
            _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                        ("LimitFlags", dword), ("MinimumWorkingSetSize", size), ("MaximumWorkingSetSize", size),
                        ("ActiveProcessLimit", dword), ("Affinity", size), ("PriorityClass", dword),
                        ("SchedulingClass", dword), ("IoInfo", ctypes.c_ulonglong * 6),
                        ("ProcessMemoryLimit", size), ("JobMemoryLimit", size),
                        ("PeakProcessMemoryUsed", size), ("PeakJobMemoryUsed", size)]
        cls._api = (kernel32, ExtendedLimits)
        return cls._api

    def terminate(self):
        """End every process in the job; False when that could not be done."""
        with self._lock:
            return self._handle is not None and bool(self._api[0].TerminateJobObject(self._handle, 1))

    def close(self):
        """Close the job (which ends whatever is still in it)."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle is not None:
                self._api[0].CloseHandle(handle)


class _WriteJob(object):
    """One message for _PipeWriter: queued, then started by the thread or withdrawn by the sender."""
    __slots__ = ("data", "state", "started", "done", "error")

    def __init__(self, data):
        self.data, self.state, self.started, self.done, self.error = data, "queued", None, threading.Event(), None


class _PipeWriter(object):
    """Windows: blocking writes to a pipe on a thread of its own, so a sender can give up at
    its deadline (Windows has no select() on pipes, and no non-blocking pipes before 3.12).
    A message the thread has not begun by its deadline is withdrawn: none of it goes out; one it
    began just before gets WRITE_FINISH_GRACE from its start to end."""

    def __init__(self, fd, name):
        self._fd, self._jobs = fd, SimpleQueue()
        self._lock = threading.Lock()  # a job is either started or withdrawn, never both
        _start_thread(self._run, name, what="write to the server")

    def write(self, data, deadline):
        """True once written; None when the deadline came before the write began (nothing went
        out: the stream is intact); False when it came during the write (how much went out is
        unknown); raises the OSError of a failed write."""
        job = _WriteJob(data)
        self._jobs.put(job)
        if not job.done.wait(_remaining(deadline)):
            with self._lock:
                if job.state == "queued":
                    job.state = "withdrawn"
                    return None
            if not job.done.wait(max(job.started + WRITE_FINISH_GRACE - time.monotonic(), 0.0)):
                return False
        if job.error is not None:
            raise job.error
        return True

    def close(self):
        self._jobs.put(None)

    def _run(self):
        while True:
            job = self._jobs.get()
            if job is None:
                return
            with self._lock:
                if job.state == "withdrawn":
                    continue
                job.state, job.started = "started", time.monotonic()
            try:
                view = memoryview(job.data)
                while view:
                    view = view[os.write(self._fd, view):]
            except OSError as e:
                job.error = e
            job.done.set()


def _split_command(command):
    """A command string as an argv list, by the rules of this platform's shells."""
    if os.name == "nt":
        return _split_windows(command)
    import shlex  # only when a string needs splitting: a list argv never imports it
    return shlex.split(command)


def _split_windows(command):
    """Split a command line as the Microsoft C runtime splits a program's own: blanks
    separate words, double quotes group; 2n backslashes before a quote give n backslashes
    and the quote delimits, 2n+1 give n and a literal quote; a doubled quote inside quotes
    is a literal quote; other backslashes are literal, and in the first word (the program)
    every backslash is, so "C:\\Program Files\\x.exe" works as typed."""
    argv, word, in_word, quoted = [], [], False, False
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c == "\\" and not argv:
            word.append(c)
            i, in_word = i + 1, True
        elif c == "\\":
            j = i
            while j < n and command[j] == "\\":
                j += 1
            if j < n and command[j] == '"':
                word.append("\\" * ((j - i) // 2))
                if (j - i) % 2:
                    word.append('"')
                    j += 1
            else:
                word.append("\\" * (j - i))
            i, in_word = j, True
        elif c == '"':
            if quoted and command[i + 1:i + 2] == '"' and argv:
                word.append('"')
                i += 1
            else:
                quoted = not quoted
            i, in_word = i + 1, True
        elif c in " \t" and not quoted:
            if in_word:
                argv.append("".join(word))
                word, in_word = [], False
            i += 1
        else:
            word.append(c)
            i, in_word = i + 1, True
    if in_word:
        argv.append("".join(word))
    return argv


class _StdioTransport(_Transport):
    """A server process spoken to over its stdin/stdout, one JSON message per line.

    The pipes are unbuffered and read with os.read: no buffered-file lock that a
    reader thread holds can then deadlock a forked child, and line framing and
    the size limit are ours."""

    kind = "stdio"

    def __init__(self, argv, env=None, inherit_env=False, cwd=None, on_stderr=None, timeout=DEFAULT_TIMEOUT):
        self.argv = [str(a) if isinstance(a, os.PathLike) else a for a in argv]
        if not self.argv or not all(isinstance(a, str) for a in self.argv):
            raise ValueError("the server command must be a non-empty list of strings, not %r" % (argv,))
        self.timeout = timeout  # bounds every write, even for requests without a deadline
        self.name = "server %r" % " ".join(self.argv)
        self._env = _server_env(env, inherit_env)
        self._cwd = cwd
        self._on_stderr = on_stderr
        self.stderr_tail = collections.deque(maxlen=STDERR_LINES)
        self._write_lock = threading.Lock()
        self._pid = _pid  # the process that owns the server; a forked child leaves it alone
        self._proc = None
        self._closing = False  # close() has begun: nothing more is written
        self._drop_reason = None  # set when we kill the server ourselves, and why
        self._reader = self._stderr_reader = self._writer = None  # (the writer: Windows only)
        self._job = None  # Windows: the job object holding the server's process tree

    def start(self, router):
        import subprocess  # here, not at the top: HTTP-only users never need it
        self._router = router
        command = self.argv
        if os.name == "nt":
            program = _resolve_program(self.argv[0], self._env, self._cwd)
            command = _batch_command_line(program, self.argv[1:]) if os.path.splitext(program)[1].lower() in (
                ".cmd", ".bat") else [program] + self.argv[1:]
        try:
            self._proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                env=self._env, cwd=self._cwd, close_fds=True, **_process_group())
        except OSError as e:
            raise ConnectionClosed("cannot start %s: %s" % (self.name, e.strerror or e))
        except (ValueError, TypeError) as e:
            raise ValueError("cannot start %s: %s" % (self.name, e))
        pid = self._proc.pid
        self._stdin_fd = self._proc.stdin.fileno()
        if os.name == "posix":  # lets a write give up when the server stops reading
            os.set_blocking(self._stdin_fd, False)
        else:
            self._job = _WindowsJob.for_process(pid)  # at once: before the server starts children
        try:
            if os.name == "nt":
                self._writer = _PipeWriter(self._stdin_fd, "mcp_min-writer-%d" % pid)
            self._reader = _start_thread(self._read_loop, "mcp_min-reader-%d" % pid)
            self._stderr_reader = _start_thread(self._stderr_loop, "mcp_min-stderr-%d" % pid,
                                                what="read the server's stderr")
        except ConnectionClosed:
            self._kill()
            if self._job is not None:
                self._job.close()
            raise

    # -- receiving (reader thread) -------------------------------------------
    def _read_loop(self):
        receive, loads = self._router.receive, _decode_str
        read, fd = os.read, self._proc.stdout.fileno()
        pending, size = [], 0  # the unfinished line; size -1 while dropping an oversized one
        try:
            while True:
                chunk = read(fd, PIPE_READ_BYTES)
                if not chunk:
                    break
                lines = chunk.split(b"\n")
                tail = lines.pop()  # what follows the last line end: the start of the next line
                if lines and size:
                    lines[0] = b"".join(pending) + lines[0] if size > 0 else b""
                    pending, size = [], 0
                for line in lines:
                    if not line or line == b"\r":  # blank lines and bare CRs are tolerated silently
                        continue
                    try:
                        msg = loads(line.decode("utf-8"))
                    except (ValueError, RecursionError):  # (UnicodeDecodeError, JSON nested too deeply)
                        if line.strip():
                            _log.warning("%s wrote a line that is not JSON: %s", self.name,
                                         _shorten(repr(line[:300]), 200))
                        continue
                    try:
                        receive(msg)
                    except Exception:  # a bug in routing must not end the reader
                        _log.exception("error routing a message from %s", self.name)
                if tail and size >= 0:
                    pending.append(tail)
                    size += len(tail)
                    if size > MAX_MESSAGE_BYTES:
                        _log.warning("%s sent a message of over %d bytes; dropped it", self.name, MAX_MESSAGE_BYTES)
                        pending, size = [], -1
        except OSError:
            pass  # the pipe was closed under us
        finally:
            self._router.closed(self._closed_error())

    def _stderr_loop(self):
        read, fd = os.read, self._proc.stderr.fileno()
        pending = b""
        try:
            while True:
                chunk = read(fd, PIPE_READ_BYTES)
                if not chunk:
                    break
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()[-STDERR_LINE_CHARS * 4:]  # an endless line keeps only its end
                for raw in lines:
                    self._stderr_line(raw)
        except OSError:
            pass
        if pending:
            self._stderr_line(pending)

    def _stderr_line(self, raw):
        text = raw.decode("utf-8", "replace").rstrip("\r")
        self.stderr_tail.append(_shorten(text, STDERR_LINE_CHARS))
        if self._on_stderr is not None:  # hands over to a worker thread: never blocks this reader
            self._on_stderr(text)

    def _closed_error(self):
        import subprocess
        if self._closing:
            return ConnectionClosed("client closed the connection to %s" % self.name)
        try:
            code = self._proc.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        if self._stderr_reader is not None:
            self._stderr_reader.join(0.5)  # let the last stderr lines arrive
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
            shown = tail[-STDERR_SHOWN:]
            more = " (%d earlier lines not shown)" % (len(tail) - len(shown)) if len(tail) > len(shown) else ""
            detail = "; last stderr lines%s:\n  %s" % (more, "\n  ".join(shown))
        else:
            detail = " (no stderr output)"
        return ConnectionClosed(text, code, tail, detail)

    # -- sending -------------------------------------------------------------
    def send(self, msg, data, deadline=None, wait_here=False, headers=None):
        if deadline is None:
            deadline = time.monotonic() + self.timeout
        if not self._write_lock.acquire(True, _remaining(deadline)):
            raise RequestTimeout("%s is not reading its stdin" % self.name)
        try:
            # Checked under the lock that close() takes before closing stdin: no write can
            # reach a descriptor number that has since been closed (and maybe reused).
            if self._closing or _pid != self._pid:
                raise ConnectionClosed("the connection to %s is closed" % self.name)
            if os.name == "nt":
                self._write_windows(data, deadline)
            else:
                self._write_all(data, deadline)
        finally:
            self._write_lock.release()

    def _write_all(self, data, deadline):
        fd = self._stdin_fd
        try:
            n = os.write(fd, data)
            if n == len(data):
                return  # the usual case: the pipe had room
        except BlockingIOError:
            n = 0
        except OSError as e:
            raise ConnectionClosed("cannot write to %s: %s" % (self.name, e))
        import select
        view = memoryview(data)[n:]
        while view:  # pipe full: wait until the server reads, within the deadline
            wait = _remaining(deadline)
            if not wait or not select.select([], [fd], [], wait)[1]:
                if len(view) == len(data):  # nothing went out: the stream is still in sync
                    raise RequestTimeout("%s is not reading its stdin" % self.name)
                self._drop("stopped reading its stdin")  # half a message out: the stream is broken
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                pass
            except OSError as e:
                raise ConnectionClosed("cannot write to %s: %s" % (self.name, e))

    def _write_windows(self, data, deadline):
        # The writer thread writes.  A write that began and did not end by the deadline left
        # an unknown part out, so the connection is dropped (killing the server frees the
        # write); one the thread had not begun was withdrawn, and the stream is intact.
        try:
            written = self._writer.write(data, deadline)
        except OSError as e:
            raise ConnectionClosed("cannot write to %s: %s" % (self.name, e))
        if written is None:
            raise RequestTimeout("the deadline passed before the message to %s could be written" % self.name)
        if not written:
            self._drop("stopped reading its stdin")

    def _drop(self, why):
        self._drop_reason = "%s %s; mcp_min dropped the connection" % (self.name, why)
        self._kill()
        raise ConnectionClosed(self._drop_reason)

    # -- shutting down -------------------------------------------------------
    def close(self):
        """Close stdin, wait, terminate, wait, kill (the whole process group or tree);
        then reap and join, every step bounded."""
        proc = self._proc
        if proc is None or self._closing or _pid != self._pid:
            return
        self._closing = True
        locked = self._write_lock.acquire(True, CLOSE_GRACE)
        if not locked:  # a writer is stuck on a server that does not read: stop the server
            self._kill()
            locked = self._write_lock.acquire(True, CLOSE_GRACE)
        if locked:
            try:
                proc.stdin.close()
                if self._writer is not None:
                    self._writer.close()
            except OSError:
                pass
            finally:
                self._write_lock.release()
        else:  # never close a descriptor another thread may still write to
            _log.warning("a write to %s is still stuck; its stdin stays open", self.name)
        if not self._wait(CLOSE_GRACE):
            self._terminate()
            if not self._wait(CLOSE_GRACE):
                self._kill()
        if os.name == "posix":
            self._signal("SIGKILL")  # stragglers in the server's process group
        elif self._job is not None:
            self._job.terminate()  # stragglers in its job: their end closes the pipes they inherited
        me = threading.current_thread()
        for thread in (self._reader, self._stderr_reader):
            if thread is not None and thread is not me:
                thread.join(CLOSE_GRACE)
        # A descriptor is closed only once its reader is done: a reader that read from a
        # closed (and reused) descriptor number would read someone else's file.
        for thread, f in ((self._reader, proc.stdout), (self._stderr_reader, proc.stderr)):
            if thread is None or not thread.is_alive():
                try:
                    f.close()
                except OSError:
                    pass
        if self._job is not None:
            self._job.close()

    def _wait(self, seconds):
        import subprocess
        try:
            self._proc.wait(seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _terminate(self):
        if os.name == "posix":
            self._signal("SIGTERM")
        else:
            self._kill()  # Windows has no gentle signal for a console-less process tree

    def _signal(self, name):
        try:
            import signal
            os.killpg(self._proc.pid, getattr(signal, name))
        except (OSError, ValueError):
            pass  # already gone

    def _kill(self):
        if os.name == "posix":
            self._signal("SIGKILL")
        else:  # the whole tree: npx/uvx grandchildren would keep the pipes open
            if self._job is None or not self._job.terminate():
                import subprocess  # (taskkill /T: only while the server itself still lives)
                try:
                    subprocess.run(_taskkill_argv(self._proc.pid), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=CLOSE_GRACE,
                                   **_process_group())
                except (OSError, subprocess.SubprocessError):
                    pass
            try:
                self._proc.kill()
            except OSError:
                pass
        self._wait(CLOSE_GRACE)


# -- HTTP: one engine for every request ----------------------------------------------

class _Deadlines(object):
    """One thread that cuts HTTP connections whose request outlived its deadline.

    A socket timeout only bounds each wait for bytes: a server trickling one
    byte at a time would keep a request going forever.  Shutting the socket down
    wakes the thread blocked on it, which then reports RequestTimeout."""

    def __init__(self):
        import heapq
        self._push, self._pop = heapq.heappush, heapq.heappop
        self._cond = threading.Condition(threading.Lock())
        self._heap = []  # [deadline, sequence, connection or None once unwatched]
        self._sequence = itertools.count()
        self._thread = None
        self._wake_at = 0.0  # when the thread next wakes by itself

    def watch(self, deadline, conn):
        entry = [deadline, next(self._sequence), conn]
        with self._cond:
            self._push(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mcp_min-deadlines", daemon=True)
                self._thread.start()
            elif deadline < self._wake_at:  # only then: a wake-up per request would cost every request
                self._cond.notify()
        return entry

    def unwatch(self, entry):
        with self._cond:
            entry[2] = None
            while self._heap and self._heap[0][2] is None:  # keep the heap as small as the work
                self._pop(self._heap)

    def _run(self):
        with self._cond:
            while True:
                while self._heap and self._heap[0][2] is None:
                    self._pop(self._heap)
                now = time.monotonic()
                if not self._heap:
                    self._wake_at = now + DEADLINE_THREAD_IDLE
                    if not self._cond.wait(DEADLINE_THREAD_IDLE) and not self._heap:
                        self._thread = None
                        return
                elif self._heap[0][0] > now:
                    self._wake_at = min(self._heap[0][0], now + DEADLINE_THREAD_IDLE)
                    self._cond.wait(self._wake_at - now)
                else:
                    entry = self._pop(self._heap)
                    _cut_connection(entry[2])
                    entry[2] = None


_deadlines = None  # made when the first HTTP request with a deadline needs it


def _watch(deadline, conn):
    global _deadlines
    if _deadlines is None:
        _deadlines = _Deadlines()
    return _deadlines.watch(deadline, conn)


def _unwatch(entry):
    if entry is not None and _deadlines is not None:
        _deadlines.unwatch(entry)



def _cut_connection(conn):
    """Cut a connection from any thread: the socket is shut down, so a blocked reader wakes.
    (``mcp_min_sock``: http.client forgets ``conn.sock`` once a response owns the socket.)"""
    conn.mcp_min_cut = True
    sock = getattr(conn, "mcp_min_sock", None)
    if sock is not None:
        try:
            import socket
            sock.shutdown(socket.SHUT_RDWR)
        except (OSError, ValueError):
            pass


def _is_dropped(sock):
    """True when an idle kept-alive socket is unusable: readable means the server closed
    it (or sent something unasked), which is the same to us."""
    import select
    try:
        if sock.fileno() < 1024 or not hasattr(select, "poll"):  # select() takes no higher descriptor
            return bool(select.select((sock,), (), (), 0)[0])
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


class _Cut(object):
    """Lets another thread (a cancel, close()) cut one HTTP exchange short, even
    before its answer has started."""

    __slots__ = ("conn", "cut")

    def __init__(self):
        self.conn, self.cut = None, False

    def __call__(self):
        self.cut = True
        if self.conn is not None:
            _cut_connection(self.conn)


def _network_error(error, url, deadline, what="connection to"):
    """The one map from a network failure to what the caller sees."""
    import socket
    if _expired(deadline) or isinstance(error, socket.timeout):
        return RequestTimeout("no answer from %s in time" % url)
    if isinstance(error, McpError):
        return error
    if isinstance(error, ConnectionRefusedError):
        return ConnectionClosed("cannot reach %s: connection refused" % url)
    reason = getattr(error, "strerror", None) or error
    return ConnectionClosed("%s %s failed: %s" % (what, url, reason))


class _Answer(object):
    """One HTTP response: ``status``, ``headers``, ``url``; bounded reads; ``release()``
    returns the connection to the pool when it can serve another request."""

    def __init__(self, engine, resp, conn, key, watch, deadline, url):
        self._engine, self._resp, self._conn, self._key = engine, resp, conn, key
        self._watch, self._deadline = watch, deadline
        self.url = url
        self.status = resp.status
        self.headers = resp.headers
        self.body = b""  # of a non-2xx answer, read in advance (at most HTTP_ERROR_BODY bytes)
        # True once the body was provably read to its end (see release()).
        self._whole = False

    def read(self, limit=MAX_MESSAGE_BYTES):
        """The whole body, read in bounded pieces; McpError when it is larger than ``limit``."""
        import http.client
        parts, size = [], 0
        try:
            length = self._resp.length
            if length is not None and length <= limit:  # the usual case: one read of what was announced
                data = self._resp.read(length)
                if len(data) == length:
                    self._whole = True
                    return data
                raise http.client.IncompleteRead(data, length - len(data))
            while True:
                piece = self._resp.read(HTTP_READ_CHUNK)
                if not piece:
                    # http.client ends a body cut short quietly: it must not pass for a whole one.
                    if self._resp.length or getattr(self._conn, "mcp_min_cut", False):
                        raise http.client.IncompleteRead(b"".join(parts), self._resp.length)
                    self._whole = True
                    return b"".join(parts)
                size += len(piece)
                if size > limit:
                    self.abort()
                    raise McpError("%s sent a body of over %d bytes; dropped it" % (self.url, limit))
                parts.append(piece)
        except (OSError, ValueError, http.client.HTTPException) as e:
            self.abort()
            raise _network_error(e, self.url, self._deadline, "reading the answer from")

    def readline(self, limit):
        """One line of a stream; b"" when it ended, was cut, or failed."""
        import http.client
        try:
            return self._resp.readline(limit)
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            self.abort()  # whatever state the connection is in, it is not one to reuse
            return b""

    def discard(self):
        """Done with an answer whose body we do not need (that of a notification): an empty
        one leaves the connection reusable; any other is not read at all -- a server that
        streams or trickles one cannot hold us -- and its connection is dropped."""
        if self._resp.length == 0:
            self._resp.read()
            self._whole = True
        else:
            self.abort()
        self.release()

    def stream_forever(self):
        """From now on this is a stream that may stay quiet: no deadline, no read timeout
        (close() ends it by cutting the connection)."""
        _unwatch(self._watch)
        self._watch = None
        try:
            self._conn.mcp_min_sock.settimeout(None)
        except (AttributeError, OSError):
            pass

    def abort(self):
        conn = self._conn
        if conn is not None:
            _cut_connection(conn)

    def release(self):
        """Done with this answer: pool the connection when its body was provably read to
        the end by read() or discard().  A stream read line by line never is: http.client's
        readline() ends a chunked body at a malformed chunk exactly as at its last one (it
        closes the response and returns b""), and a connection pooled after such an end is
        one the server has closed: the next request on it would be lost."""
        _unwatch(self._watch)
        self._watch = None
        conn, self._conn = self._conn, None
        if conn is None:
            return
        reusable = self._whole and self._resp.isclosed() and not self._resp.will_close and not getattr(
            conn, "mcp_min_cut", False)
        self._resp.close()
        if not (reusable and self._engine._idle_put(self._key, conn)):
            conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class _KeepAliveHandler(object):
    """urllib's http/https handler, replaced: connections are kept alive and reused
    (urllib's own sends "Connection: close" on every request), each request is
    watched by its deadline, and a pooled connection is used only if it is alive."""

    handler_order = 500  # where urllib's own HTTP handlers sit: after the proxy handler

    def __init__(self, engine):
        self._engine = engine

    def add_parent(self, parent):
        self.parent = parent

    def close(self):
        pass

    def __lt__(self, other):
        return self.handler_order < getattr(other, "handler_order", 500)

    def http_open(self, req):
        return self._engine._open(req, False)

    def https_open(self, req):
        return self._engine._open(req, True)


class _HttpEngine(object):
    """Every HTTP request mcp_min makes, through one urllib opener: proxies from the
    environment (HTTP(S)_PROXY, NO_PROXY), one TLS context, kept-alive connections,
    a wall-clock deadline on every request, redirects followed for GET only and
    stripped of credentials when they leave the origin, one map of network errors,
    and a bounded retry loop for the auth plug-in.

    ``credential_headers``: header names (besides Authorization, Cookie, DPoP and
    Mcp-Session-Id) never to send to another origin -- the caller's own headers.
    """

    _CREDENTIALS = ("authorization", "cookie", "proxy-authorization", "dpop", "mcp-session-id")

    def __init__(self, credential_headers=()):
        import urllib.request
        self._urllib = urllib.request
        self._opener = urllib.request.OpenerDirector()
        for handler in (urllib.request.ProxyHandler(), urllib.request.UnknownHandler(), _KeepAliveHandler(self)):
            self._opener.add_handler(handler)  # no file:, ftp: or data: handlers: only HTTP(S) is ever fetched
        self._credentials = frozenset(self._CREDENTIALS) | {h.lower() for h in credential_headers}
        self._lock = threading.Lock()
        self._routes = {}  # URL -> what _direct decided
        self._idle = {}  # (scheme, host, tunnel host) -> [idle connections]
        self._tls = None
        self._closed = False

    def request(self, method, url, headers, body=None, deadline=None, auth=None, cut=None, secure=False):
        """Send one request and return its _Answer, whatever the status (a non-2xx
        answer comes with ``.body`` read and its connection released).

        ``auth`` (the plug-in) adds headers and may ask for a repeat after 401/403, at
        most MAX_AUTH_RETRIES times.  ``secure`` refuses any URL (redirects included)
        that is not https or http on a loopback address.  Network failures raise
        ConnectionClosed; the deadline passing raises RequestTimeout."""
        for attempt in range(MAX_AUTH_RETRIES + 1):
            sent = dict(headers)
            if auth is not None:
                sent.update(_clean_headers(auth.headers(method, url) or {}, "auth header"))
            answer = self._follow(method, url, sent, body, deadline, cut, secure)
            challenge = getattr(auth, "challenge", None)
            if answer.status not in (401, 403) or challenge is None or attempt == MAX_AUTH_RETRIES \
                    or not challenge(method, url, answer.status, answer.headers, sent):
                return answer
        return answer

    def _follow(self, method, url, headers, body, deadline, cut, secure):
        import urllib.parse
        for hop in range(HTTP_MAX_REDIRECTS + 1):
            if secure:
                _check_secure(url, "follow a redirect to" if hop else "fetch")
            answer = self._send(method, url, headers, body, deadline, cut)
            location = answer.headers.get("Location") if 300 <= answer.status < 400 else None
            if answer.status in (301, 302, 303, 307, 308) and method == "GET" and location:
                answer.release()
                target = urllib.parse.urljoin(url, location)
                if _origin(target) != _origin(url):  # credentials stay with their origin
                    headers = {k: v for k, v in headers.items() if k.lower() not in self._credentials}
                url = target
                continue
            if answer.status >= 300:
                try:
                    answer.body = answer.read(HTTP_ERROR_BODY)
                except McpError:
                    pass  # too long to keep all of, or cut: what we have is the status
                answer.release()
            return answer
        raise ConnectionClosed("%s redirected more than %d times" % (url, HTTP_MAX_REDIRECTS))

    def _send(self, method, url, headers, body, deadline, cut):
        import urllib.error
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("HTTP %s %s %s", method, url, _redact(headers))
        direct = self._direct(url)
        if direct is not None:  # no proxy for this origin: straight to our handler (see _direct)
            return self._open(_DirectRequest(direct, method, body, headers, deadline, cut), direct[0])
        try:  # (our headers ride beside the Request: urllib would only re-case them one by one)
            req = self._urllib.Request(url, data=body, method=method)
        except ValueError as e:
            raise ConnectionClosed("cannot request %s: %s" % (url, e))
        req.mcp_min_headers, req.mcp_min_deadline, req.mcp_min_cut = headers, deadline, cut
        try:
            return self._opener.open(req)
        except urllib.error.URLError as e:  # an unknown URL scheme, a proxy failure
            raise ConnectionClosed("cannot reach %s: %s" % (url, getattr(e, "reason", e)))

    def _direct(self, url):
        """(tls, host, selector, url) when no proxy applies to ``url``, else None -- decided by
        urllib's own rules (HTTP(S)_PROXY, NO_PROXY), once per URL.  Such a request skips the
        opener's Request and handler chain, a quarter of our own cost per call, and goes to
        the same connection handler it would reach through them."""
        found = self._routes.get(url)
        if found is None:
            import urllib.parse
            parts = urllib.parse.urlsplit(url)
            scheme = parts.scheme.lower()
            proxied = scheme not in ("http", "https") or (scheme in self._urllib.getproxies()
                                                          and not self._urllib.proxy_bypass(parts.hostname or ""))
            found = self._routes[url] = False if proxied else (
                scheme == "https", parts.netloc.rpartition("@")[2], urllib.parse.urlunsplit(
                    ("", "", parts.path or "/", parts.query, "")), url)
            if len(self._routes) > HTTP_POOL_SIZE * 8:  # a bounded memo (URLs are few: the server's, OAuth's)
                self._routes.clear()
        return found or None

    # -- the connection handler's side --------------------------------------------
    def _open(self, req, tls):
        import http.client
        deadline, cut = req.mcp_min_deadline, req.mcp_min_cut
        tunnel = getattr(req, "_tunnel_host", None)
        key = (tls, req.host, tunnel)
        headers = req.mcp_min_headers
        if req.headers or req.unredirected_hdrs:  # what a proxy handler added (Proxy-Authorization)
            headers = dict(headers, **{k.title(): v for k, v in req.header_items()})
        conn = self._idle_take(key)
        if conn is None:
            conn = self._connection(req.host, tls, tunnel, headers, deadline)
        if cut is not None:
            cut.conn = conn
        watch = _watch(deadline, conn) if deadline is not None else None
        try:
            if conn.sock is None:
                conn.timeout = _remaining(deadline)
                conn.connect()
                conn.mcp_min_sock = conn.sock
            if cut is not None and cut.cut:  # cut before the socket existed (a cancel, close())
                raise RequestCancelled("%s %s was cut short" % (req.get_method(), req.full_url))
            if getattr(conn, "mcp_min_cut", False):  # the deadline passed while connecting
                raise RequestTimeout("no answer from %s in time" % req.full_url)
            conn.sock.settimeout(_remaining(deadline))  # each wait; the deadline thread bounds the whole
            try:
                conn.request(req.get_method(), req.selector, req.data, headers)
            except (BrokenPipeError, ConnectionResetError) as e:
                # The server may have answered (413, 401...) and closed before reading it all.
                try:
                    resp = conn.getresponse()
                except (OSError, http.client.HTTPException):
                    raise ConnectionClosed("%s closed the connection while we were sending: %s"
                                           % (req.full_url, e))
            else:
                resp = conn.getresponse()
        except BaseException as e:
            _unwatch(watch)
            conn.close()
            if isinstance(e, McpError) or not isinstance(e, (OSError, ValueError, http.client.HTTPException)):
                raise
            raise _network_error(e, req.full_url, deadline)
        return _Answer(self, resp, conn, key, watch, deadline, req.full_url)

    def _connection(self, host, tls, tunnel, headers, deadline):
        import http.client
        if not tls:
            conn = http.client.HTTPConnection(host, timeout=_remaining(deadline))
        else:
            context = self._tls_context()  # first: without ssl, http.client has no HTTPSConnection
            conn = http.client.HTTPSConnection(host, timeout=_remaining(deadline), context=context)
        if tunnel:  # https through a proxy: CONNECT first; the proxy's credentials go there only
            proxy_auth = headers.pop("Proxy-Authorization", None)
            conn.set_tunnel(tunnel, headers={"Proxy-Authorization": proxy_auth} if proxy_auth else None)
        return conn

    def _tls_context(self):
        if self._tls is None:
            try:
                import ssl
            except ImportError:
                raise ConnectionClosed("https:// URLs need Python's ssl module, which this Python lacks")
            self._tls = ssl.create_default_context()
        return self._tls

    def _idle_take(self, key):
        """A kept-alive connection that is still usable, or None.  This is the only place a
        connection is given up on and another tried: here nothing has been sent, so nothing
        can run twice.  Once a request's first byte is written, any failure is the request's
        (a server may have read it: a tool must not run twice)."""
        while True:
            with self._lock:
                idle = self._idle.get(key)
                conn = idle.pop() if idle else None
            if conn is None or conn.sock is not None and not getattr(conn, "mcp_min_cut", False) \
                    and not _is_dropped(conn.sock):
                return conn
            conn.close()  # the server closed it while idle: nothing was sent on it

    def _idle_put(self, key, conn):
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if self._closed or len(idle) >= HTTP_POOL_SIZE:
                return False
            idle.append(conn)
            return True

    def close(self):
        with self._lock:
            self._closed = True
            idle, self._idle = [c for conns in self._idle.values() for c in conns], {}
        for conn in idle:
            conn.close()


class _DirectRequest(object):
    """What the connection handler reads of a urllib Request, for a request no proxy touches."""

    __slots__ = ("host", "selector", "full_url", "data", "_method", "mcp_min_headers", "mcp_min_deadline",
                 "mcp_min_cut")
    headers = unredirected_hdrs = {}  # (nothing added by a proxy handler)
    _tunnel_host = None

    def __init__(self, route, method, body, headers, deadline, cut):
        _, self.host, self.selector, self.full_url = route
        self._method, self.data = method, body
        self.mcp_min_headers, self.mcp_min_deadline, self.mcp_min_cut = headers, deadline, cut

    def get_method(self):
        return self._method


def _check_secure(url, what="fetch"):
    scheme, host, _ = _origin(url)
    if not (scheme == "https" or scheme == "http" and _is_loopback(host)):
        raise McpError("refusing to %s %s: only https (or http on this machine) is allowed here"
                       % (what, _shorten(url.split("?")[0], 200)))


def _pump_sse(answer, parser, on_event):
    """Read an SSE stream, calling ``on_event(type, data)`` for each complete event,
    until it returns True (then True) or the stream ends (then False)."""
    while True:
        line = answer.readline(MAX_MESSAGE_BYTES + 1)
        if not line:
            return False
        if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            parser.oversized()
            while line and not line.endswith(b"\n"):  # skip the rest of the line
                line = answer.readline(HTTP_READ_CHUNK)
            continue
        for kind, data in parser.feed(line):
            if on_event(kind, data):
                return True


def _status_error(answer, method, session_id=None):
    """The exception for a non-2xx answer."""
    text = answer.body[:2000].decode("utf-8", "replace")
    if answer.status == 404 and session_id is not None and method != "initialize":
        return _SessionExpired("%s no longer knows our session" % answer.url, session_id)
    challenge = _parse_www_authenticate(answer.headers.get("WWW-Authenticate", ""))
    if answer.status == 401 or (answer.status == 403 and challenge.get("error") == "insufficient_scope"):
        return AuthRequired(answer.url, answer.status, text, challenge)
    reason = "for %s" % method if method else ""
    if 300 <= answer.status < 400:
        reason += " (a redirect to %s; mcp_min follows redirects for GET only: use that URL)" % (
            answer.headers.get("Location"))
    return HttpError(answer.url, answer.status, text, reason.strip())


class _StreamableHttpTransport(_Transport):
    """Streamable HTTP: every message is a POST; answers come back as JSON or SSE.

    Handshake era: a session id from the initialize answer, a GET stream for what
    the server sends unasked, resumption of dropped answer streams, DELETE on
    close.  2026-07-28: no session, no GET stream; Mcp-Method / Mcp-Name headers;
    closing an answer stream cancels its request."""

    kind = "streamable-http"
    carries_headers = True

    def __init__(self, url, headers=None, timeout=DEFAULT_TIMEOUT, auth=None):
        self.url, self._headers = _url_credentials(url, _clean_headers(headers))
        self.name = "server at %s" % self.url
        self.timeout = timeout
        self.auth = auth
        self._engine = _HttpEngine(self._headers)
        self._pid = _pid
        self._version = None  # negotiated; sent as MCP-Protocol-Version
        self._modern = False  # 2026-07-28: headers per request, no session, no GET stream
        self.session_id = None
        self._lock = threading.Lock()
        self._cuts = {}  # request id (or "GET") -> _Cut of the exchange in flight
        self._listener = None
        self._closed = False
        self._stopping = threading.Event()

    def configure(self, version, modern):
        self._version, self._modern = version, modern

    # -- headers -----------------------------------------------------------------
    def _base_headers(self, accept="application/json, text/event-stream"):
        h = {"Accept": accept, "User-Agent": "mcp_min/" + __version__}
        h.update(self._headers)
        if self.session_id is not None and not self._modern:
            h["Mcp-Session-Id"] = self.session_id
        if self._version is not None:
            h["MCP-Protocol-Version"] = self._version
        return h

    def _post_headers(self, msg, extra=None):
        h = self._base_headers()
        h["Content-Type"] = "application/json"
        method = msg.get("method")
        if self._modern and method is not None:  # 2026-07-28: routing information in headers
            h["Mcp-Method"] = _header_value(method)
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            name = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(
                method, "taskId" if method.startswith("tasks/") else None)
            if name is not None and name in params:
                h["Mcp-Name"] = _header_value(params[name])
        if extra:
            h.update(extra)
        return h

    # -- sending -----------------------------------------------------------------
    def send(self, msg, data, deadline=None, wait_here=False, headers=None):
        if self._closed or _pid != self._pid:
            raise ConnectionClosed("the connection to %s is closed" % self.name)
        if "id" in msg and "method" in msg:
            if wait_here:
                self._exchange(msg, data, deadline, headers)
            else:
                _start_thread(self._exchange, "mcp_min-http-%s" % msg["id"], (msg, data, deadline, headers),
                              "send a request")
            return
        # A notification, or our answer to a server request: 2xx expected, nothing to read.
        if deadline is None:
            deadline = time.monotonic() + self.timeout
        answer = self._engine.request("POST", self.url, self._post_headers(msg, headers), data, deadline, self.auth)
        if answer.status >= 300:
            raise _status_error(answer, msg.get("method"), self.session_id)
        answer.discard()

    def _exchange(self, msg, data, deadline, extra):
        """POST a request and route everything its answer carries; runs on the thread
        that will wait for the answer (or on its own thread, for submit())."""
        rid = msg["id"]
        cut = _Cut()
        with self._lock:
            self._cuts[rid] = cut
        try:
            # Without a deadline of its own (a listen), the request still gets one for connecting
            # and for the answer to start; only its stream may then stay open.
            answer = self._engine.request("POST", self.url, self._post_headers(msg, extra), data, deadline if (
                deadline is not None) else time.monotonic() + self.timeout, self.auth, cut)
            with answer:
                if answer.status >= 300:
                    self._failed(answer, msg)
                    return
                if msg["method"] == "initialize":
                    self._take_session(answer)
                self._read_answer(answer, rid, deadline)
        except RequestTimeout as e:
            if not _expired(deadline):
                self._router.fail(rid, e)
            # else the request's own deadline ends it, and cancels it as it should
        except McpError as e:
            self._router.fail(rid, e)
        except Exception as e:  # a bug: never let the request hang or the thread die silently
            _log.exception("HTTP exchange with %s failed", self.url)
            self._router.fail(rid, ConnectionClosed("HTTP exchange with %s failed: %r" % (self.url, e)))
        finally:
            with self._lock:
                self._cuts.pop(rid, None)

    def _take_session(self, answer):
        sid = answer.headers.get("Mcp-Session-Id")
        if sid is not None:
            if not _valid_session_id(sid):
                raise McpError("%s sent an Mcp-Session-Id that is not visible ASCII; refused" % self.name)
            self.session_id = sid

    def _failed(self, answer, msg):
        """A non-2xx answer: its body, when a JSON-RPC error for this request, answers it;
        otherwise the status is the error."""
        session = self.session_id if not self._modern else None
        if answer.status not in (401, 403) and not (answer.status == 404 and session is not None):
            try:
                error = _decode(answer.body)
            except ValueError:
                error = None
            if isinstance(error, dict) and "error" in error and error.get("id") == msg["id"] and _is_id(msg["id"]):
                self._router.receive(error)
                return
        problem = _status_error(answer, msg["method"], session)
        if isinstance(problem, _SessionExpired):
            with self._lock:
                if self.session_id == problem.session_id:
                    self.session_id = None  # the next initialize starts a new one
        raise problem

    def _read_answer(self, answer, rid, deadline):
        ctype = _media_type(answer.headers)
        if ctype == "application/json":
            body = answer.read()
            try:
                msg = _decode(body)
            except ValueError:
                raise HttpError(self.url, answer.status, body[:300].decode("utf-8", "replace"),
                                "with a body that is not JSON")
            self._router.receive(msg)
        elif ctype == "text/event-stream":
            if deadline is None:  # a stream meant to stay open (subscriptions/listen)
                answer.stream_forever()
            parser = _SseParser(self.name)
            if self._pump(answer, parser, rid):
                return
            if _expired(deadline):
                raise RequestTimeout("no answer from %s in time" % self.url)
            self._resume(parser, rid, deadline)
        else:
            answer.read(HTTP_ERROR_BODY)
            raise HttpError(self.url, answer.status, "", "with Content-Type %r instead of an answer" % (ctype or None))

    def _pump(self, answer, parser, rid):
        """Route what an SSE stream carries; True once the answer to ``rid`` came."""
        receive = self._router.receive

        def on_event(kind, data):
            if kind != "message":
                return False
            try:
                msg = _decode(data)
            except ValueError:
                _log.warning("%s sent an SSE event that is not JSON: %s", self.name, _shorten(data, 200))
                return False
            try:
                receive(msg)
            except Exception:  # a bug in routing must not end the stream
                _log.exception("error routing a message from %s", self.name)
            return rid is not None and any(isinstance(m, dict) and "method" not in m and m.get("id") == rid
                                           for m in (msg if isinstance(msg, list) else (msg,)))

        return _pump_sse(answer, parser, on_event)

    def _resume(self, parser, rid, deadline):
        """A POST's stream ended before its answer: resume it with GET + Last-Event-ID
        (handshake era only; 2026-07-28 streams cannot be resumed)."""
        for _ in range(SSE_RESUME_ATTEMPTS):
            if self._closed or parser.last_id is None or self._modern or not self._router.is_pending(rid):
                break
            pause = min((parser.retry_ms or 0) / 1000.0, SSE_RETRY_CAP)
            left = _remaining(deadline)
            if left is not None and pause >= left or self._stopping.wait(pause):
                break  # the server's retry: would outlast our deadline, or close() came
            h = self._base_headers("text/event-stream")
            h["Last-Event-ID"] = parser.last_id
            cut = _Cut()
            with self._lock:
                self._cuts[rid] = cut
            try:
                with self._engine.request("GET", self.url, h, None, deadline if deadline is not None else (
                        time.monotonic() + self.timeout), self.auth, cut) as answer:
                    if answer.status >= 300 or _media_type(answer.headers) != "text/event-stream":
                        _log.debug("resuming the stream of request %s: HTTP %s", rid, answer.status)
                        continue
                    if deadline is None:
                        answer.stream_forever()
                    if self._pump(answer, parser, rid):
                        return
            except RequestTimeout:
                raise
            except McpError as e:
                _log.debug("resuming the stream of request %s failed: %s", rid, e)
        if _expired(deadline):
            raise RequestTimeout("no answer from %s in time" % self.url)
        if self._router.is_pending(rid):
            raise ConnectionClosed("%s ended the answer stream before answering" % self.name)

    # -- the standalone GET stream (handshake era) -------------------------------
    def after_handshake(self):
        """Listen for server messages on GET when the server offers it.  Waits (briefly)
        until the server has answered the GET, so that what it sends there right after
        our next message is not lost."""
        if self._modern or (self._listener is not None and self._listener.is_alive()):
            return
        ready = threading.Event()
        self._listener = _start_thread(self._listen_loop, "mcp_min-get-stream", (ready,), "listen to the server")
        ready.wait(min(self.timeout, GET_STREAM_READY))

    def _listen_loop(self, ready):
        parser = _SseParser(self.name)
        failures = 0
        while not self._closed and failures < GET_STREAM_ATTEMPTS:
            cut = _Cut()
            with self._lock:
                self._cuts["GET"] = cut
            h = self._base_headers("text/event-stream")
            if parser.last_id is not None:
                h["Last-Event-ID"] = parser.last_id
            try:
                answer = self._engine.request("GET", self.url, h, None, time.monotonic() + self.timeout,
                                              self.auth, cut)
            except McpError as e:
                _log.debug("the GET stream of %s: %s", self.name, e)
                failures += 1
            else:
                with answer:
                    if answer.status in (400, 404, 405) or (answer.status < 300 and _media_type(
                            answer.headers) != "text/event-stream"):
                        ready.set()
                        return  # no standalone stream offered
                    if answer.status >= 300:
                        failures += 1
                    else:
                        ready.set()
                        answer.stream_forever()  # a quiet server is not a dead one
                        failures = 0
                        self._pump(answer, parser, None)
            ready.set()
            # Honour the server's retry: field; back off further after failures.
            pause = parser.retry_ms / 1000.0 if parser.retry_ms is not None else GET_STREAM_RETRY
            self._stopping.wait(min(pause, SSE_RETRY_CAP) * (failures or 1))

    # -- cancel and close ----------------------------------------------------------
    def cancel(self, request_id):
        with self._lock:
            cut = self._cuts.pop(request_id, None)
        if cut is not None:
            cut()
        return self._modern  # in 2026-07-28 closing the stream is the cancellation

    def replacement_for(self, error):
        """After an ``initialize`` POST failed: the legacy HTTP+SSE transport, or None."""
        if isinstance(error, HttpError) and not isinstance(error, AuthRequired) and error.status in (400, 404, 405):
            return _SseTransport(self.url, self._headers, self.timeout, self.auth)
        return None

    def close(self):
        if self._closed or _pid != self._pid:
            return  # (a forked child must not end the parent's session)
        self._closed = True
        self._stopping.set()
        with self._lock:
            cuts, self._cuts = list(self._cuts.values()), {}
        for cut in cuts:
            cut()
        self._engine.close()
        if self.session_id is not None and not self._modern:
            try:
                with self._engine.request("DELETE", self.url, self._base_headers(), None, time.monotonic() + min(
                        self.timeout, SESSION_DELETE_TIMEOUT), self.auth):
                    pass
            except McpError as e:
                _log.debug("DELETE of the session: %s", e)
        if self._listener is not None and self._listener is not threading.current_thread():
            self._listener.join(CLOSE_GRACE)


class _SseTransport(_Transport):
    """The 2024-11-05 HTTP+SSE transport: one GET stream in, POSTs to the endpoint
    the stream names."""

    kind = "sse"

    def __init__(self, url, headers=None, timeout=DEFAULT_TIMEOUT, auth=None):
        self.url, self._headers = _url_credentials(url, _clean_headers(headers))
        self.name = "server at %s" % self.url
        self.timeout = timeout
        self.auth = auth
        self._engine = _HttpEngine(self._headers)
        self._pid = _pid
        self._version = None
        self.endpoint = None
        self._stream = None
        self._ready = threading.Event()
        self._listener = None
        self._closed = False

    def configure(self, version, modern):
        self._version = version

    def _headers_for(self, accept):
        h = {"Accept": accept, "User-Agent": "mcp_min/" + __version__}
        h.update(self._headers)
        if self._version is not None:
            h["MCP-Protocol-Version"] = self._version
        return h

    def start(self, router):
        self._router = router
        deadline = time.monotonic() + self.timeout
        answer = self._engine.request("GET", self.url, self._headers_for("text/event-stream"), None, deadline,
                                      self.auth)
        if answer.status >= 300:
            raise _status_error(answer, None)
        if _media_type(answer.headers) != "text/event-stream":
            answer.release()
            raise HttpError(self.url, answer.status, "", "with Content-Type %r, not an SSE stream"
                            % _media_type(answer.headers))
        answer.stream_forever()  # a quiet server is not a dead one; close() cuts the connection
        self._stream = answer
        self._listener = _start_thread(self._read_loop, "mcp_min-sse", (answer,))
        if not self._ready.wait(_remaining(deadline)) or self.endpoint is None:
            self.close()
            raise ConnectionClosed("%s sent no endpoint event" % self.name)

    def _read_loop(self, answer):
        import urllib.parse
        receive = self._router.receive

        def on_event(kind, data):
            if kind == "endpoint":
                endpoint = urllib.parse.urljoin(self.url, data.strip())
                if _origin(endpoint) != _origin(self.url):  # our headers (tokens) would go there
                    _log.warning("%s named an endpoint on another origin (%s); refused", self.name, endpoint)
                else:
                    self.endpoint = endpoint
                self._ready.set()
            elif kind == "message":
                try:
                    msg = _decode(data)
                except ValueError:
                    _log.warning("%s sent an SSE event that is not JSON", self.name)
                    return False
                try:
                    receive(msg)
                except Exception:
                    _log.exception("error routing a message from %s", self.name)
            return False

        try:
            _pump_sse(answer, _SseParser(self.name), on_event)
        finally:
            answer.release()
            self._ready.set()
            self._router.closed(ConnectionClosed(("client closed the connection to %s" if self._closed
                                                  else "%s closed the SSE stream") % self.name))

    def send(self, msg, data, deadline=None, wait_here=False, headers=None):
        if self._closed or _pid != self._pid:
            raise ConnectionClosed("the connection to %s is closed" % self.name)
        if "id" in msg and "method" in msg and not wait_here:
            _start_thread(self._post_request, "mcp_min-sse-post-%s" % msg["id"], (msg, data, deadline),
                          "send a request")
        elif "id" in msg and "method" in msg:
            self._post_request(msg, data, deadline)
        else:
            self._post(msg, data, deadline)

    def _post_request(self, msg, data, deadline):
        try:
            self._post(msg, data, deadline)
        except McpError as e:
            self._router.fail(msg["id"], e)

    def _post(self, msg, data, deadline):
        h = self._headers_for("application/json, text/event-stream")
        h["Content-Type"] = "application/json"
        answer = self._engine.request("POST", self.endpoint, h, data, deadline or time.monotonic() + self.timeout,
                                      self.auth)
        if answer.status >= 300:
            raise _status_error(answer, msg.get("method"))
        answer.discard()  # the answer comes on the stream

    def close(self):
        if self._closed or _pid != self._pid:
            return
        self._closed = True
        if self._stream is not None:
            self._stream.abort()
        self._engine.close()
        if self._listener is not None and self._listener is not threading.current_thread():
            self._listener.join(CLOSE_GRACE)


# ---------------------------------------------------------------------------
# Session: what the server sends unasked (_Inbox), and one conversation with it
# (_Session: negotiation, sending, settling).  Neither knows the Client object
# (so a dropped Client can be collected) nor how bytes move.
# ---------------------------------------------------------------------------

class _Worker(object):
    """Runs callbacks in order on one thread, started when first needed, so user
    code never runs on (and never blocks) a thread that reads from the server."""

    def __init__(self, name):
        self._queue = SimpleQueue()
        self._name = name
        self._thread = None
        self._lock = threading.Lock()
        self._dropping = False
        self._stopped = False

    def put(self, fn, *args):
        if self._stopped:
            return
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
                    try:
                        self._thread = _start_thread(self._run, self._name, what="run callbacks")
                    except ConnectionClosed as e:
                        _log.warning("dropped a server message: %s", e)
                        return
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
        thread = self._thread
        if thread is None or thread is threading.current_thread() or self._stopped or not thread.is_alive():
            return
        done = threading.Event()
        self._queue.put((done.set, ()))
        done.wait(_remaining(deadline))

    def stop(self):
        self._stopped = True
        if self._thread is not None:
            self._queue.put(None)
            if self._thread is not threading.current_thread():
                self._thread.join(CLOSE_GRACE)


_SUBSCRIPTION_ID = _META_PREFIX + "subscriptionId"
_CHANGED_LISTS = {  # a list_changed notification -> the cached lists it makes stale
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


class _Inbox(object):
    """What the server sends unasked: requests we answer (handshake era) and
    notifications we deliver.  Called on whatever thread routed the message (a
    reader, or the thread that read an HTTP answer); user code runs on workers."""

    def __init__(self, send_answer, cache, tasks, roots=None, sampling=None, elicitation=None,
                 url_elicitation=None, on_log=None, on_notification=None):
        self.roots, self.sampling, self.elicitation = roots, sampling, elicitation
        self.url_elicitation = url_elicitation
        self.on_log, self.on_notification = on_log, on_notification
        self._tasks = tasks
        self.modern = False  # set by the session: 2026-07-28 notifications name their subscription
        self.dispatcher = None  # the _Dispatcher whose routing calls take_request and take_notification
        self._send_answer = send_answer
        self._list_cache = cache
        self.events = _Worker("mcp_min-events")  # notifications, progress, logs, stderr lines, in order
        self._pings = _Worker("mcp_min-ping")  # never waits behind a slow callback
        self.courier = _Worker("mcp_min-courier")  # what we send without waiting: cancellations
        self._overflow = _Worker("mcp_min-answers")  # server requests beyond MAX_ANSWER_THREADS
        self._lock = threading.Lock()
        self._answering = 0
        self._serving = {}  # id of a server request being answered -> True once the server cancelled it

    def capabilities(self, modern, version=None):
        """What we declare: a capability per callback given, tasks (we follow any) and skills."""
        inbox, caps = self, {}
        newest = modern or (version or "") >= "2025-11-25"  # URL elicitation and tasks came then
        if inbox.roots is not None:
            caps["roots"] = {} if modern else {"listChanged": False}
        if inbox.sampling is not None:
            caps["sampling"] = {}
        modes = {"form": {}} if inbox.elicitation is not None else {}
        if inbox.url_elicitation is not None and newest:
            modes["url"] = {}
        if modes:
            caps["elicitation"] = modes
        if newest:  # skills (SEP-2640): 2025-11-25 servers serve them too
            caps["extensions"] = {SKILLS_EXTENSION: {}}
        if modern:
            caps["extensions"][TASKS_EXTENSION] = {}
        elif newest:
            caps["tasks"] = {}
        return caps

    # -- requests ------------------------------------------------------------------
    def take_request(self, msg):
        rid = msg["id"]
        if msg["method"] == "ping":
            self._pings.put(self._send_answer, _response(rid, {}))
            return
        with self._lock:
            self._serving[rid] = False
            spare = self._answering < MAX_ANSWER_THREADS
            if spare:
                self._answering += 1
        if spare:
            try:
                _start_thread(self._answer, "mcp_min-answer", (msg, True), "answer the server")
                return
            except ConnectionClosed:
                with self._lock:
                    self._answering -= 1
        self._overflow.put(self._answer, msg, False)  # a flood: a queue bounds the cost

    def _answer(self, msg, own_thread):
        method, rid = msg["method"], msg["id"]
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            if not self._cancelled(rid):
                result = self.serve(method, params)
                meta = params.get("_meta")
                related = meta.get(_RELATED_TASK) if isinstance(meta, dict) else None
                if related is not None and isinstance(result, dict):  # input for a task says so (2025-11-25)
                    result = dict(result, _meta=dict(_meta_of(result), **{_RELATED_TASK: related}))
                answer = _response(rid, result)
        except RequestError as e:
            answer = _error_response(rid, e.code, e.message)
        except Exception as e:
            _log.exception("answering the server's %s failed", method)
            answer = _error_response(rid, INTERNAL_ERROR, "%s: %s" % (type(e).__name__, e))
        finally:
            with self._lock:
                cancelled = self._serving.pop(rid, False)
                if own_thread:
                    self._answering -= 1
        if cancelled:
            _log.debug("the server cancelled its %s; not answering it", method)
        else:
            self._send_answer(answer)

    def _cancelled(self, rid):
        with self._lock:
            return self._serving.get(rid, False)

    def serve(self, method, params):
        """What we answer to a server request (handshake era) or an input request (2026-07-28)."""
        if method == "ping":
            return {}
        if method == "roots/list" and self.roots is not None:
            return _roots_result(self.roots)
        if method == "sampling/createMessage" and self.sampling is not None:
            return self.sampling(params)
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            if mode == "url" and self.url_elicitation is not None:
                return self.url_elicitation(params)
            if mode == "form" and self.elicitation is not None:
                return _apply_defaults(params, self.elicitation(params))
            if self.elicitation is not None or self.url_elicitation is not None:
                raise RequestError(INVALID_PARAMS, "mcp_min client does not handle %r elicitation" % (mode,))
        raise RequestError(METHOD_NOT_FOUND, "mcp_min client does not handle %s" % method)

    def give_input(self, asking, ask):
        """Our answer to one input request of a 2026-07-28 result (``ask``: method and params)."""
        ask = ask if isinstance(ask, dict) else {}
        params = ask.get("params") if isinstance(ask.get("params"), dict) else {}
        try:
            return self.serve(ask.get("method"), params)
        except RequestError as e:
            raise McpError("%s needs %s input, which this client cannot give: %s"
                           % (asking, ask.get("method"), e.message))

    def visit_urls(self, elicitations):
        """-32042: the user visits each URL (through url_elicitation); True when they agreed to all."""
        for ask in elicitations:
            try:
                answer = self.serve("elicitation/create", dict(ask, mode="url"))
            except RequestError:
                return False
            if not isinstance(answer, dict) or answer.get("action") != "accept":
                return False
        return bool(elicitations)

    # -- notifications ---------------------------------------------------------------
    def take_notification(self, method, params):
        try:
            self._notification(method, params)
        except (TypeError, AttributeError, ValueError):  # unhashable ids, a _meta that is not an object...
            _log.warning("ignored a malformed %s notification: %s", method, _shorten(_dumps_for_humans(params), 200))

    def _notification(self, method, params):
        if method == "notifications/progress":
            fut = self.dispatcher.pending(params.get("progressToken"))
            if fut is not None and fut.progress is not None:
                self.events.put(fut.progress, params.get("progress"), params.get("total"), params.get("message"))
            elif fut is None:
                self._tasks.progress(params)
            return
        if method in ("notifications/tasks/status", "notifications/tasks"):
            self._tasks.status(params)  # (2025-11-25 ones also reach on_notification below)
        elif method == "notifications/tools/list_changed":
            self._tasks.forget_support()
        if method == "notifications/message":
            self.events.put(self._log_message, params)
            return
        meta = params.get("_meta")
        sub_id = meta.get(_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if method == "notifications/cancelled":
            rid = params.get("requestId")
            with self._lock:
                if rid in self._serving:  # a request of the server's that we are answering
                    self._serving[rid] = True
                    return
            if self.dispatcher.subscription(rid) is not None:  # the server ended a listen
                sub_id = rid
        for stale in _CHANGED_LISTS.get(method, ()):
            self._list_cache.drop(stale)
        sub = self.dispatcher.subscription(sub_id) if sub_id is not None else None
        if sub is not None:
            self.events.put(sub._deliver, method, params)
            return
        subs = self.dispatcher.subscriptions() if sub_id is None and not self.modern else ()
        for sub in subs:  # handshake era: what the server sends anyway goes to every listener
            self.events.put(sub._deliver, method, params)
        if not subs and self.on_notification is not None:
            self.events.put(self.on_notification, method, params)

    def _log_message(self, params):
        if self.on_log is not None:
            self.on_log(params.get("level"), params.get("logger"), params.get("data"))
            return
        level = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
                 "warning": logging.WARNING}.get(params.get("level"), logging.ERROR)
        _server_log.log(level, "%s%s", "[%s] " % params["logger"] if params.get("logger") else "",
                        params.get("data"))

    def stop(self):
        for worker in (self.events, self._pings, self._overflow, self.courier):
            worker.stop()


class _ListCache(object):
    """Lists as the server last sent them, while its ttlMs allows (2026-07-28)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._lists = {}  # list method -> (expiry time, items)

    def get(self, method):
        with self._lock:
            entry = self._lists.get(method)
        return list(entry[1]) if entry is not None and entry[0] > time.monotonic() else None

    def put(self, method, items, ttl_ms):
        if ttl_ms > 0:
            with self._lock:
                self._lists[method] = (time.monotonic() + ttl_ms / 1000.0, list(items))

    def drop(self, method):
        with self._lock:
            self._lists.pop(method, None)


_INPUT_METHODS = ("tools/call", "prompts/get", "resources/read")  # may answer input_required


def _supported_in(error):
    """The versions a version error lists in its data (``supported``), or None."""
    supported = error.data.get("supported") if isinstance(error.data, dict) else None
    return supported if isinstance(supported, list) else None


class _Era(object):
    """What the negotiated protocol era changes about every outgoing request: the
    version; in 2026-07-28 (``modern``) our ``_meta`` on each request, encoded once;
    and over HTTP the x-mcp-header table behind the Mcp-Param-* headers.  Replaced
    whole when the era changes, so a request never sees half of one."""

    def __init__(self, version=None, modern=False, capabilities=None, client_info=None):
        self.version, self.modern = version, modern
        self.tool_headers = None  # tool name -> x-mcp-header paths, once tools/list was read
        self._meta = self._meta_json = None
        if modern:
            self._meta = {_META_PREFIX + "protocolVersion": version,
                          _META_PREFIX + "clientCapabilities": capabilities,
                          _META_PREFIX + "clientInfo": client_info}
            self._meta_json = _to_json(self._meta)

    def encode(self, msg):
        """A request as bytes; in stateless mode with our ``_meta`` added.

        The ``_meta`` block is the same on every request, so it is spliced into the
        encoded params (most of a small request's bytes; encoding it each time showed
        up in profiles).  ``params`` is a dict or None here (checked before)."""
        if self._meta_json is None:
            return _encode_line(msg)
        params = msg.get("params")
        if params and "_meta" in params:  # the caller's own _meta: merge (keys of ours win)
            meta = dict(_meta_of(params), **self._meta)
            return _encode_line(dict(msg, params=dict(params, _meta=meta)))
        body = _to_json(params) if params else "{}"
        text = '{"jsonrpc":"2.0","id":%d,"method":%s,"params":%s%s"_meta":%s}}' % (
            msg["id"], _dumps(msg["method"]), body[:-1], "," if len(body) > 2 else "", self._meta_json)
        return _utf8(text, dict(msg, params=dict(params or (), _meta=self._meta))) + b"\n"

    def param_headers(self, params):
        """Mcp-Param-* headers for a tools/call (2026-07-28 over HTTP), or None."""
        table = self.tool_headers
        paths = table.get(params.get("name")) if self.modern and table is not None else None
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


class _Session(object):
    """One conversation with a server.

    Negotiation: ``server/discover`` and the choice of era (see "How it works"),
    else the ``initialize`` handshake.  Sending: ids from the dispatcher, our
    ``_meta`` on every 2026-07-28 request.  Settling (on the waiting thread): error
    answers become exceptions, the two repeats the protocol asks for (a new HTTP
    session after a 404; a fresh tools/list after -32020), and 2026-07-28 input
    rounds.  Lists, with their cache.  Holds no reference to the Client.
    """

    def __init__(self, make_transport, timeout=DEFAULT_TIMEOUT, protocol_version="auto",
                 probe_timeout=PROBE_TIMEOUT, client_info=None, **callbacks):
        if protocol_version != "auto" and protocol_version not in SUPPORTED_VERSIONS:
            raise ValueError("protocol_version must be 'auto' or one of %s, not %r"
                             % (", ".join(SUPPORTED_VERSIONS), protocol_version))
        self._make_transport = make_transport
        self.timeout = timeout
        self.wanted_version = protocol_version
        self.probe_timeout = probe_timeout
        self.client_info = dict(client_info or _CLIENT_INFO)
        self.era = _Era()
        self.server_info = {}
        self.server_capabilities = {}
        self.instructions = None
        self.list_cache = _ListCache()
        self.tasks = _Tasks(self)
        self.inbox = _Inbox(self._send_answer, self.list_cache, self.tasks, **callbacks)
        self.dispatcher = self.inbox.dispatcher = _Dispatcher(self.inbox.take_request, self.inbox.take_notification,
                                                              self.tasks.end_all)
        self.transport = make_transport(self.inbox.events)
        self._pid = _pid  # a forked child must leave this session alone
        self._closed = False
        self._close_lock = threading.Lock()
        self._restart_lock = threading.Lock()
        self._restarted = set()  # HTTP session ids already replaced after a 404

    @property
    def protocol_version(self):
        return self.era.version

    @property
    def modern(self):
        return self.era.modern

    def _set_era(self, version, modern):
        """The one place era state changes; the transport hears of it here."""
        self.era = _Era(version, modern, self.inbox.capabilities(True), self.client_info)
        self.inbox.modern = modern
        self.transport.configure(version, modern)

    # -- negotiation -------------------------------------------------------------
    def connect(self):
        deadline = time.monotonic() + self.timeout
        self.transport.start(self.dispatcher)
        wanted = self.wanted_version
        if wanted == "auto" or wanted in MODERN_VERSIONS:
            version = self._probe(deadline, pinned=wanted != "auto")
            if self.modern:
                return
            if self.dispatcher.error is not None:  # the probe ended the connection: start over
                self.transport.close()
                self.transport = self._make_transport(self.inbox.events)
                self.dispatcher.reset()
                self.transport.start(self.dispatcher)
            wanted = version or LEGACY_VERSIONS[0]
        self._handshake(wanted, deadline)

    def _probe(self, deadline, pinned, version=MODERN_VERSIONS[0], retried=False):
        """Ask ``server/discover``.  Returns the version chosen: a modern one (then the era is
        set), a legacy one to shake hands with, or None (a handshake-era server)."""
        self._set_era(version, True)
        wait = _remaining(deadline) if pinned else min(self.probe_timeout, _remaining(deadline))
        try:
            result = self.request("server/discover", {}, wait, cancellable=False)
        except RequestError as e:
            supported = _supported_in(e)
            if retried:
                return version  # a 2026 server; its discovery data is optional
            if e.code == UNSUPPORTED_PROTOCOL_VERSION and supported is not None:
                chosen = _choose_version(supported)
                return self._probe(deadline, pinned, chosen, True) if chosen in MODERN_VERSIONS \
                    else self._legacy(chosen, e)
            if e.code in _MODERN_ERRORS and not pinned:
                return version  # a 2026 server complaining about something else
            if pinned:
                raise
            return self._legacy(None, e)
        except AuthRequired:
            raise  # never an era verdict
        except McpError as e:  # no answer in time, an HTTP 4xx, a server that died...
            if pinned:
                raise
            return self._legacy(None, e)
        if not isinstance(result.get("supportedVersions"), list):
            if pinned:
                raise McpError("server/discover answer has no supportedVersions: %s"
                               % _shorten(_dumps_for_humans(result), 300))
            return self._legacy(None, "no supportedVersions")
        chosen = _choose_version(result["supportedVersions"])
        if chosen not in MODERN_VERSIONS:
            return self._legacy(chosen, "it supports only %s" % chosen)
        self._set_era(chosen, True)
        self.server_capabilities = _field(result, "capabilities", dict, "server/discover", {})
        self.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
        meta = result.get("_meta")
        info = meta.get(_META_PREFIX + "serverInfo") if isinstance(meta, dict) else None
        self.server_info = info if isinstance(info, dict) else {}
        return chosen

    def _legacy(self, version, why):
        _log.debug("server/discover: a handshake-era server (%s)", why)
        self._set_era(None, False)
        return version

    def _handshake(self, version, deadline, retried=False):
        params = {"protocolVersion": version, "capabilities": self.inbox.capabilities(False, version),
                  "clientInfo": self.client_info}
        try:
            result = self.request("initialize", params, _remaining(deadline), cancellable=False)
        except RequestError as e:
            supported = _supported_in(e) or ()
            if not retried and self.wanted_version == "auto" and any(v in supported for v in MODERN_VERSIONS):
                # A 2026 server after all (its discovery answer was too slow for the probe).
                return self._probe(deadline, True, _choose_version(supported), True)
            common = [v for v in LEGACY_VERSIONS if v in supported]
            if retried or not common:
                raise
            return self._handshake(common[0], deadline, True)
        except HttpError as e:
            replacement = None if retried else self.transport.replacement_for(e)
            if replacement is None:
                raise
            _log.debug("initialize POST failed (%s); trying the HTTP+SSE transport", e)
            self.transport.close()
            self.transport = replacement
            self.dispatcher.reset()
            replacement.start(self.dispatcher)
            return self._handshake(version, deadline, True)
        answered = result.get("protocolVersion")
        if answered not in LEGACY_VERSIONS:
            raise McpError("the server answered initialize with protocol version %r; mcp_min speaks %s"
                           % (answered, ", ".join(SUPPORTED_VERSIONS)))
        self._set_era(answered, False)
        self.server_capabilities = _field(result, "capabilities", dict, "initialize", {})
        self.server_info = _field(result, "serverInfo", dict, "initialize", {})
        self.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
        # The GET stream first: servers announce things (tools/list_changed) as soon as
        # they hear notifications/initialized, and need a stream to say them on.
        self.transport.after_handshake()
        self.notify("notifications/initialized")

    def _restart_session(self, expired):
        """HTTP 404 on our session: the server forgot it.  Shake hands again, once for
        however many requests found out at the same time."""
        with self._restart_lock:
            if expired.session_id in self._restarted:
                return  # another thread already did
            self._restarted.add(expired.session_id)
            _log.info("%s forgot session %s; initializing again", self.transport.name, expired.session_id)
            version = self.protocol_version or LEGACY_VERSIONS[0]
            self._set_era(None, False)
            self._handshake(version, time.monotonic() + self.timeout, True)

    # -- sending -----------------------------------------------------------------
    def _check_usable(self):
        if _pid != self._pid:
            raise McpError("this client belongs to process %d; a forked child must make its own" % self._pid)
        if self.dispatcher.error is not None:
            raise self.dispatcher.error

    def submit(self, method, params=None, timeout=_DEFAULT, progress=None, finish=None, wait_here=False,
               cancellable=True, subscription=None, keepalive=None, intercept=None):
        """Send a request; return its Future.  ``timeout`` is seconds, None for no deadline, or
        _DEFAULT for the client's.  ``wait_here``: the caller waits next, so HTTP may read the
        answer on this thread.  Nothing is pending when this raises."""
        self._check_usable()
        if not isinstance(method, str) or not method:
            raise ValueError("the method must be a non-empty string, not %r" % (method,))
        if params is not None and not isinstance(params, dict):
            raise ValueError("params must be a dict (MCP params are JSON objects), not %s" % type(params).__name__)
        rid = self.dispatcher.next_id()
        if progress is not None:
            params = dict(params or ())
            params["_meta"] = dict(_meta_of(params), progressToken=rid)
        msg = _request(rid, method, params)
        era = self.era
        data = era.encode(msg)  # ValueError for what JSON cannot carry, before anything is pending
        fut = Future(rid, method, params, self.timeout if timeout is _DEFAULT else timeout, progress,
                     self._settle, self._withdraw, finish, cancellable)
        fut._keepalive, fut.intercept = keepalive, intercept
        self.dispatcher.add(fut, subscription)
        if _log.isEnabledFor(logging.DEBUG):
            _trace("->", data)
        try:
            self.transport.send(msg, data, fut.deadline, wait_here, era.param_headers(params) if (
                method == "tools/call" and self.transport.carries_headers) else None)
        except Exception as e:  # whatever went wrong, the future is settled
            self.dispatcher.fail(rid, e if isinstance(e, McpError) else ConnectionClosed(
                "cannot send %s to %s: %r" % (method, self.transport.name, e)))
        return fut

    def request(self, method, params=None, timeout=_DEFAULT, progress=None, finish=None, cancellable=True):
        """Send a request and wait for its value (the result dict, or what ``finish`` makes of it)."""
        return self.submit(method, params, timeout, progress, finish, True, cancellable).result()

    def notify(self, method, params=None):
        self._check_usable()
        if params is not None and not isinstance(params, dict):
            raise ValueError("params must be a dict (MCP params are JSON objects), not %s" % type(params).__name__)
        msg = _notification(method, params)
        data = _encode_line(msg)
        if _log.isEnabledFor(logging.DEBUG):
            _trace("->", data)
        self.transport.send(msg, data, time.monotonic() + self.timeout)

    def _send_answer(self, answer):
        """Our answer to a server request; dropped once the client is closed."""
        if self._closed or _pid != self._pid:
            _log.debug("dropped the answer to the server's request %r: the client is closed", answer.get("id"))
            return
        try:
            data = _encode_line(answer)
        except ValueError as e:  # a callback returned what JSON cannot carry
            answer = _error_response(answer["id"], INTERNAL_ERROR, str(e))
            data = _encode_line(answer)
        if _log.isEnabledFor(logging.DEBUG):
            _trace("->", data)
        try:
            self.transport.send(answer, data, time.monotonic() + self.timeout)
        except McpError as e:
            _log.debug("could not answer the server's request %r: %s", answer.get("id"), e)

    # -- settling (on the waiting thread) --------------------------------------------
    def _withdraw(self, fut, error):
        """End a request with ``error`` and tell the server; False if it had already ended.
        (A tool call that became a task is ended by cancelling the task.)"""
        if self.dispatcher.withdraw(fut.id) is None:
            task = self.tasks.of_future(fut)
            return task is not None and task._abandon(error)
        fut._keepalive = None
        try:
            if not self.transport.cancel(fut.id) and fut.cancellable and not self._closed \
                    and self.dispatcher.error is None:
                # Sent from a worker: the caller's deadline is now, not after one more round trip.
                self.inbox.courier.put(self._tell_cancelled, fut.id, str(error))
        except Exception as e:  # withdrawn whatever happens here
            _log.debug("could not send notifications/cancelled: %s", e)
        finally:
            fut._put(error)
        return True

    def _tell_cancelled(self, request_id, reason):
        try:
            self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
        except McpError as e:
            _log.debug("could not send notifications/cancelled: %s", e)

    def _settle(self, fut, answer):
        """The value of a request's answer, after the one repeat the protocol may ask for."""
        if fut.progress is not None:  # progress sent before the answer is seen before it
            self.inbox.events.drain(fut.deadline)
        if type(answer) is not dict or "result" not in answer:
            answer = self._repeat_if_asked(fut, answer)
        result = _result_of(fut.method, answer)
        if self.era.modern and result.get("resultType", "complete") != "complete":
            result = self._complete(fut, result)
        if fut.method == "tools/call" and (fut.finish is _TASK_HANDLE or "task" in result
                                           or result.get("resultType") == "task"):
            if fut.finish is _TASK_HANDLE:  # Client.start(): the caller gets a Task for what came
                return self.tasks.made(fut, result) or Task(self, None, None, fut.progress, result)
            result = self.tasks.follow_here(fut, result)
            if fut.progress is not None:
                self.inbox.events.drain(fut.deadline)  # its status reports are seen before its end
        if fut.finish is None:
            return result
        try:
            return fut.finish(result)
        except McpError:
            raise
        except Exception as e:  # the server's result did not have the shape we rely on
            raise McpError("malformed answer to %s: %s: %s" % (fut.method, type(e).__name__, e))

    def _repeat_if_asked(self, fut, answer):
        """The answer after the one repeat an error may ask for: a new HTTP session (404), a
        fresh tools/list (-32020), URLs the user visited (-32042); else ``answer`` itself."""
        if isinstance(answer, _SessionExpired) and fut.method != "initialize":
            return self._repeat(fut, lambda: self._restart_session(answer))
        code = answer["error"].get("code") if isinstance(answer, dict) and isinstance(answer.get("error"), dict) \
            else None
        if code == HEADER_MISMATCH and fut.method == "tools/call":
            # Our Mcp-Param-* headers may follow an outdated tools/list: refetch it, repeat once.
            return self._repeat(fut, lambda: self.list_tools(True))
        if code == URL_ELICITATION_REQUIRED and self.inbox.url_elicitation is not None \
                and self.inbox.visit_urls(_error_from(answer, fut.method).elicitations):
            return self._repeat(fut, lambda: None)  # the user went there: once more
        return answer

    def _repeat(self, fut, prepare, params=None):
        """Send ``fut``'s request again (after ``prepare()``), with what is left of its
        deadline; returns the new raw answer (a repeat is not repeated)."""
        try:
            prepare()
            again = self.submit(fut.method, fut.params if params is None else params, _remaining(fut.deadline),
                                fut.progress, wait_here=True, cancellable=fut.cancellable)
        except McpError as e:
            return e
        return again._wait()

    def _complete(self, fut, result):
        """Check a 2026-07-28 result's resultType and run the input_required rounds."""
        for _ in range(MAX_INPUT_ROUNDS + 1):
            kind = result.get("resultType", "complete")
            if kind == "complete" or kind == "task" and fut.method == "tools/call":
                return result  # (a task is followed by the caller of this)
            if kind != "input_required" or fut.method not in _INPUT_METHODS:
                raise McpError("%s answered with resultType %r, which mcp_min does not know"
                               % (fut.method, _shorten(kind, 100) if isinstance(kind, str) else kind))
            asked = _field(result, "inputRequests", dict, fut.method, {})
            params = dict(fut.params or ())
            params.pop("inputResponses", None)
            params.pop("requestState", None)
            if asked:
                params["inputResponses"] = {key: self.inbox.give_input(fut.method, ask) for key, ask in asked.items()}
            if "requestState" in result:  # echoed untouched, and only when sent
                params["requestState"] = result["requestState"]
            result = _result_of(fut.method, self._repeat(fut, lambda: None, params))
        raise McpError("%s still asked for input after %d rounds; giving up" % (fut.method, MAX_INPUT_ROUNDS))

    # -- lists -------------------------------------------------------------------
    def list_all(self, method, key, refresh=False):
        """Every page of a list, from the cache while the server's ttlMs allows."""
        if not refresh:
            cached = self.list_cache.get(method)
            if cached is not None:
                return cached
        items, cursor, seen, ttl = [], None, set(), None
        for _ in range(MAX_PAGES):
            result = self.request(method, {"cursor": cursor} if cursor is not None else None)
            items.extend(_field(result, key, list, method, []))
            page_ttl = result.get("ttlMs")
            page_ttl = min(page_ttl, int(LONGEST_WAIT * 1000)) if type(page_ttl) is int and page_ttl > 0 else 0
            ttl = page_ttl if ttl is None else min(ttl, page_ttl)
            cursor = result.get("nextCursor")
            if cursor is None or (cursor == "" and not self.modern):  # 2026: "" is a real cursor
                break
            if not isinstance(cursor, str):
                raise McpError("%s answered with a nextCursor that is not a string: %s"
                               % (method, _shorten(_dumps_for_humans(cursor), 100)))
            if cursor in seen:
                raise McpError("%s repeated the cursor %r; stopping" % (method, _shorten(cursor, 100)))
            seen.add(cursor)
        else:
            raise McpError("%s returned more than %d pages; stopping" % (method, MAX_PAGES))
        self.list_cache.put(method, items, ttl)
        return list(items)

    def list_tools(self, refresh=False):
        tools = self.list_all("tools/list", "tools", refresh)
        self.tasks.note_tools(tools)
        if self.modern and self.transport.carries_headers:
            table, kept = {}, []
            for tool in tools:
                try:
                    table[tool.get("name")] = _param_headers(tool)
                    kept.append(tool)
                except (ValueError, AttributeError, TypeError) as e:
                    _log.warning("hiding tool %r: %s", tool.get("name") if isinstance(tool, dict) else tool, e)
            self.era.tool_headers = table
            tools = kept
        return tools

    def listen(self, sub, wanted):
        """Start a Subscription: one subscriptions/listen (2026-07-28), else resources/subscribe."""
        if self.modern:
            sub._future = self.submit("subscriptions/listen", {"notifications": wanted}, None, subscription=sub)
        else:
            self.dispatcher.subscribe(object(), sub)
            for uri in sub.resource_uris:
                self.request("resources/subscribe", {"uri": uri})

    # -- the end -------------------------------------------------------------------
    def close(self):
        """Shut down in reverse order of setup; idempotent, any thread; inert in a forked child."""
        if _pid != self._pid:
            return
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self.inbox.courier.drain(time.monotonic() + CLOSE_GRACE)  # cancellations already said go out first
        self.dispatcher.closed(ConnectionClosed("the client is closed"))  # pending calls fail at once
        try:
            self.transport.close()
        finally:
            self.inbox.stop()


def _meta_of(params):
    meta = params.get("_meta")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise ValueError("params._meta must be a dict, not %s" % type(meta).__name__)
    return meta


# ---------------------------------------------------------------------------
# Tasks: tool calls the server runs in the background.
#   2025-11-25 (core, experimental): we ask with params.task when a tool's
#   execution.taskSupport says so; then tasks/get (polling), tasks/result (the
#   outcome; while the task waits for input it also carries the server's
#   requests), tasks/cancel; notifications/tasks/status may come.
#   2026-07-28 (extension io.modelcontextprotocol/tasks): the server answers a
#   tools/call with resultType "task" when it likes; tasks/get carries the
#   outcome or the input requests, tasks/update takes the answers, tasks/cancel;
#   notifications/tasks on a subscriptions/listen stream where offered.
# call() follows a task on its own thread, in result(); a submitted call's task
# is followed by a thread of its own, so its Future stands for the whole task.
# ---------------------------------------------------------------------------

_TERMINAL = ("completed", "failed", "cancelled")
_TASK_HANDLE = object()  # finish= of Client.start(): the answer becomes a Task, not followed here


def _time_left(*deadlines):
    ends = [d for d in deadlines if d is not None]
    return None if not ends else min(ends) - time.monotonic()


class _Expired(Exception):
    """Internal: following a task reached the call's deadline or the wait's limit."""

    def __init__(self, deadline):
        Exception.__init__(self)
        self.deadline = deadline


def _older(stamp, than):
    """Whether ISO 8601 timestamp ``stamp`` is before ``than`` (both in the server's one format)."""
    return isinstance(stamp, str) and isinstance(than, str) and len(stamp) == len(than) and stamp < than


class _Tasks(object):
    """A session's tasks: which tools want one (2025-11-25), the tasks being followed
    (for pushed status and progress), and the threads that follow submitted calls."""

    def __init__(self, session):
        self._session = session
        self._lock = threading.Lock()
        self._by_id = weakref.WeakValueDictionary()  # task id -> Task
        self._by_future = weakref.WeakKeyDictionary()  # the call's Future -> the Task it became
        self._tokens = {}  # progress token of a 2025-11-25 call that became a task -> Task
        self._support = None  # tool name -> execution.taskSupport (2025-11-25), from tools/list
        self.push = None  # False once the server showed it pushes no task status (2026-07-28)

    # -- asking for a task (2025-11-25) ---------------------------------------------
    def support(self, name):
        """A tool's execution.taskSupport, listing the tools first when not yet known; None
        when the server takes no task-augmented tools/call (then we never ask for one)."""
        session = self._session
        if session.era.modern:
            return None  # (2026-07-28: the server decides)
        caps = session.server_capabilities.get("tasks")
        requests = caps.get("requests") if isinstance(caps, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        if session.modern or not isinstance(tools, dict) or "call" not in tools:
            return None
        if self._support is None:  # (listed once; again after tools/list_changed)
            session.list_tools(True)
        return (self._support or {}).get(name)

    def note_tools(self, tools):
        self._support = {t["name"]: t["execution"].get("taskSupport") for t in tools if isinstance(t, dict)
                         and isinstance(t.get("name"), str) and isinstance(t.get("execution"), dict)}

    def forget_support(self):
        self._support = None

    # -- tasks made ---------------------------------------------------------------
    def made(self, fut, result):
        """The Task a tools/call result announces, or None for an ordinary result."""
        if fut.method != "tools/call" or not isinstance(result, dict):
            return None
        if self._session.modern:
            if result.get("resultType") != "task":
                return None
            state = {k: v for k, v in result.items() if k not in ("resultType", "_meta")}
        else:
            state = result.get("task")
            if "task" not in (fut.params or ()) or not isinstance(state, dict):
                return None
        if not isinstance(state.get("taskId"), str) or not isinstance(state.get("status"), str):
            raise McpError("%s answered with resultType 'task' but no valid task (taskId, status): %s"
                           % (fut.method, _shorten(_dumps_for_humans(result), 200)))
        task = Task(self._session, state["taskId"], state, fut.progress)
        with self._lock:
            self._by_future[fut] = task
            if fut.progress is not None and not self._session.modern:
                self._tokens[fut.id] = task  # 2025-11-25: progress keeps using the call's token
        return task

    def of_future(self, fut):
        with self._lock:
            return self._by_future.get(fut)

    def intercept(self, fut, msg):
        """On the routing thread: a submitted call whose answer is a task is followed by a
        thread of its own, and its Future ends with the task (True: the answer is taken)."""
        result = msg.get("result")
        if not isinstance(result, dict) or ("task" not in result and result.get("resultType") != "task"):
            return False  # the usual case, decided cheaply
        try:
            task = self.made(fut, result)
        except McpError:
            return False  # settling reports it
        if task is None:
            return False
        _start_thread(self._follow, "mcp_min-task-%s" % fut.id, (task, fut), "follow a task")
        return True

    def _follow(self, task, fut):
        outcome = task._follow_call(fut)
        fut._put(outcome if isinstance(outcome, BaseException) else _response(fut.id, outcome))

    def follow_here(self, fut, result):
        """From settling, on the waiting thread: the final result of a call that became a
        task (then followed here), or ``result`` itself."""
        task = self.made(fut, result)
        if task is None:
            return result
        outcome = task._follow_call(fut)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    # -- what the server pushes ------------------------------------------------------
    def add(self, task):
        with self._lock:
            self._by_id[task.id] = task

    def forget(self, task):
        with self._lock:
            for token in [k for k, t in self._tokens.items() if t is task]:
                del self._tokens[token]

    def status(self, params):
        """notifications/tasks/status (2025-11-25) or notifications/tasks (2026-07-28)."""
        with self._lock:
            task = self._by_id.get(params.get("taskId"))
        if task is not None:
            task._push(params)

    def progress(self, params):
        """A 2025-11-25 task's progress (it keeps its call's token); False when not one of ours."""
        with self._lock:
            task = self._tokens.get(params.get("progressToken"))
        if task is None:
            return False
        task._on_progress(params)
        return True

    def end_all(self, error):
        """The connection is gone: every task being followed ends its wait at once."""
        with self._lock:
            tasks = list(self._by_id.values())
        for task in tasks:
            task._end(ConnectionClosed("%s before task %s ended" % (getattr(error, "summary", error), task.id),
                                       getattr(error, "returncode", None), getattr(error, "stderr", ()),
                                       getattr(error, "detail", "")))


class Task(object):
    """A tool call the server runs in the background (MCP tasks, both eras).

    ``call()`` and ``submit()`` follow such calls on their own; a Task is for
    work that outlives one call: ``client.start(...)`` makes one and
    ``client.task(task_id)`` re-attaches to one by id, e.g. from a later
    process (when the server keeps its tasks that long).

    ``id`` is the server's task id; None when the server answered at once
    instead of making a task (the result is then already there).
    """

    def __init__(self, session, task_id, state=None, progress=None, outcome=None):
        self._session = session
        self.id = task_id
        self._modern = session.modern
        self._progress = progress
        self._numbers = (0, None)  # the latest progress/total, for status messages
        self._reported = None
        self._cond = threading.Condition()
        self._state = None  # the latest task fields seen (poll or push)
        self._fresh = False  # a pushed state arrived that the loop has not looked at
        self._following = False
        self._outcome = outcome  # the final result dict, or the McpError the task ended with
        self._answered = set()  # input request keys already answered (2026-07-28)
        self._sub = None
        if task_id is not None:
            session.tasks.add(self)
        if state is not None:
            self._update(state)

    def __repr__(self):
        return "<mcp_min.Task %s %s>" % (self.id, (self._state or {}).get("status"))

    # -- public ---------------------------------------------------------------
    def status(self, *, timeout=_DEFAULT):
        """The task's state now (``tasks/get``): a dict with ``status``
        (working, input_required, completed, failed, cancelled), ``statusMessage``,
        ``createdAt``, the suggested poll interval..."""
        if self.id is None:
            return {"status": "failed" if isinstance(self._outcome, BaseException) else "completed"}
        wait = _timeout_arg(timeout, self._session.timeout)
        return dict(self._get(None, _deadline_after(wait)))

    def result(self, timeout=_DEFAULT):
        """Wait for the outcome and return what ``call()`` would (ToolError when the tool
        failed, RequestError for a failed task, RequestCancelled for a cancelled one).

        While waiting, the task is followed: polled at the server's interval and its
        input requests answered with the client's callbacks.  ``timeout`` bounds this
        wait only (default: the client's timeout; None: no bound); RequestTimeout
        then leaves the task running, to wait again or ``cancel()``."""
        wait = _timeout_arg(timeout, self._session.timeout)
        limit = _deadline_after(wait)
        try:
            outcome = self._await(None, limit)
        except _Expired:
            raise RequestTimeout("task %s did not end within %.3g s (it goes on)" % (self.id, wait))
        if isinstance(outcome, BaseException):
            raise outcome
        return _tool_value(outcome)

    def cancel(self):
        """Cancel the task (``tasks/cancel``); ``result()`` then raises RequestCancelled.
        Returns False when the server says it had already ended."""
        if self.id is None:
            return False
        return self._abandon(RequestCancelled("task %s was cancelled by the client" % self.id), strict=True)

    # -- following ------------------------------------------------------------
    def _follow_call(self, fut):
        """Follow the task a tool call became, to its outcome (a result dict or an McpError);
        at the call's deadline, or on a failure of ours, the task is cancelled."""
        try:
            return self._await(fut.deadline, None)
        except _Expired:
            outcome = RequestTimeout("no outcome of %s (task %s) within %.3g s; task cancelled"
                                     % (fut.method, self.id, fut.timeout))
        except ConnectionClosed as e:
            return e
        except McpError as e:
            outcome = e  # (input we cannot give...): nobody will follow the task any more
        except Exception as e:  # never leave the caller waiting
            _log.exception("following task %s failed", self.id)
            outcome = McpError("following task %s failed: %r" % (self.id, e))
        self._abandon(outcome, force=True)
        return self._outcome

    def _await(self, deadline, limit):
        """The outcome, following the task unless another thread already does (then wait for it)."""
        with self._cond:
            while self._outcome is None and self._following:
                left = _time_left(deadline, limit)
                if left is not None and left <= 0:
                    raise _Expired(deadline is not None and time.monotonic() >= deadline)
                self._cond.wait(left)
            if self._outcome is not None:
                return self._outcome
            self._following = True
        try:
            return self._drive(deadline, limit)
        finally:
            with self._cond:
                self._following = False
                self._cond.notify_all()

    def _drive(self, deadline, limit):
        backoff = TASK_POLL_FLOOR
        if self._modern:
            self._listen()
        try:
            while True:
                with self._cond:
                    if self._outcome is not None:
                        return self._outcome
                    state, self._fresh = self._state, False
                if state is not None:
                    outcome = self._step(state, deadline, limit)
                    if outcome is not None:
                        return self._end(outcome)
                    wait = self._interval(state, backoff)
                    backoff = min(backoff * 2, TASK_POLL_BACKOFF)
                    left = _time_left(deadline, limit)
                    with self._cond:
                        if not self._fresh and self._outcome is None and (left is None or left > 0):
                            self._cond.wait(wait if left is None else min(wait, left))
                        if self._fresh or self._outcome is not None:
                            continue  # a pushed state: look at it before polling
                    self._check_push()
                left = _time_left(deadline, limit)
                if left is not None and left <= 0:
                    raise _Expired(deadline is not None and time.monotonic() >= deadline)
                self._get(deadline, limit)
        except RequestTimeout:
            left = _time_left(deadline, limit)
            if left is not None and left <= 0:  # a request cut short by the deadline itself
                raise _Expired(deadline is not None and time.monotonic() >= deadline)
            raise
        finally:
            if self._sub is not None:
                self._sub.close()
                self._sub = None

    def _interval(self, state, backoff):
        hint = state.get("pollIntervalMs" if self._modern else "pollInterval")
        if type(hint) in (int, float) and hint == hint:
            return min(max(hint / 1000.0, TASK_POLL_FLOOR), TASK_POLL_CEILING)
        return backoff

    def _step(self, state, deadline, limit):
        """Act on a state; returns the outcome once there is one."""
        status = state.get("status")
        if status == "cancelled":
            why = state.get("statusMessage")
            return RequestCancelled("task %s was cancelled%s" % (self.id, ": %s" % why if why else ""))
        if self._modern:
            if status == "completed":
                result = state.get("result")
                if not isinstance(result, dict):
                    return McpError("task %s completed without a result object" % self.id)
                return result
            if status == "failed":
                return _error_from({"error": state.get("error")}, "tools/call")
            if status == "input_required":
                self._give_input(state.get("inputRequests"), deadline, limit)
                return None
        elif status in ("completed", "failed", "input_required"):
            # tasks/result gives the outcome; while input is required it also brings the
            # server's requests (answered by the session's callbacks) and waits for the end.
            left = _time_left(deadline, limit)
            wait = (None if left is None else max(left, 0)) if status == "input_required" else \
                self._session.timeout if left is None else min(self._session.timeout, max(left, 0))
            try:
                return self._session.request("tasks/result", {"taskId": self.id}, wait)
            except RequestError as e:
                return type(e)(e.code, e.message, e.data, "tools/call")
        if status in ("working", "input_required"):
            return None
        return McpError("task %s has an unknown status %r" % (self.id, status))

    def _give_input(self, requests, deadline, limit):
        """Answer the input requests not answered yet, with tasks/update (2026-07-28)."""
        if not isinstance(requests, dict):
            return
        responses = {}
        for key, ask in requests.items():
            if key in self._answered:  # (the server may list it until it has taken our answer)
                continue
            ask = ask if isinstance(ask, dict) else {}
            try:
                responses[key] = self._session.inbox.serve(ask.get("method"), ask.get("params") or {})
            except RequestError as e:
                raise McpError("task %s needs %s input, which this client cannot give: %s"
                               % (self.id, ask.get("method"), e.message))
        if responses:
            self._request("tasks/update", {"taskId": self.id, "inputResponses": responses}, deadline, limit)
            self._answered.update(responses)

    def _get(self, deadline, limit):
        result = self._request("tasks/get", {"taskId": self.id}, deadline, limit)
        state = {k: v for k, v in result.items() if k not in ("resultType", "_meta")}
        if not isinstance(state.get("status"), str):
            raise McpError("tasks/get answered without a status: %s" % _shorten(_dumps_for_humans(result), 300))
        self._update(state)
        return state

    def _request(self, method, params, deadline, limit):
        """One request about the task, with its own timeout (never past the deadline or limit)."""
        left = _time_left(deadline, limit)
        timeout = self._session.timeout if left is None else max(min(self._session.timeout, left), 0.001)
        return self._session.request(method, params, timeout)

    # -- status -----------------------------------------------------------------
    def _update(self, state):
        with self._cond:
            old = self._state
            if old is not None and (old.get("status") in _TERMINAL and state.get("status") not in _TERMINAL
                                    or _older(state.get("lastUpdatedAt"), old.get("lastUpdatedAt"))):
                return  # a stale report (polls and pushes cross): an ended task stays ended
            self._state = state
        self._report(state)

    def _push(self, params):
        """notifications/tasks/status (2025-11-25) or notifications/tasks (2026-07-28)."""
        state = {k: v for k, v in params.items() if k != "_meta"}
        if not isinstance(state.get("status"), str):
            return
        self._update(state)
        with self._cond:
            self._fresh = True
            self._cond.notify_all()

    def _report(self, state):
        """Status changes go to the call's progress callback: (latest progress, total, message)."""
        text = "task %s" % state.get("status")
        if state.get("statusMessage"):
            text += ": %s" % state["statusMessage"]
        if self._progress is not None and text != self._reported:
            self._reported = text
            self._session.inbox.events.put(self._progress, self._numbers[0], self._numbers[1], text)

    def _on_progress(self, params):
        self._numbers = (params.get("progress"), params.get("total"))
        self._session.inbox.events.put(self._progress, params.get("progress"), params.get("total"),
                                  params.get("message"))

    def _listen(self):
        """Ask for pushed status (2026-07-28) where the server has the extension; polling goes on."""
        session = self._session
        ext = session.server_capabilities.get("extensions") if isinstance(session.server_capabilities, dict) \
            else None
        if session.tasks.push is False or not isinstance(ext, dict) or TASKS_EXTENSION not in ext:
            return
        sub = Subscription(session, None, False, False, False, ())
        try:
            session.listen(sub, {"taskIds": [self.id]})
        except McpError as e:
            _log.debug("no task status stream: %s", e)
            return
        self._sub = sub

    def _check_push(self):
        """Stop listening when the server does not push this task's status (and stop asking)."""
        sub = self._sub
        if sub is None:
            return
        ack = sub.acknowledged
        if sub.ended.is_set() or (ack is not None and self.id not in (
                ack.get("taskIds") or () if isinstance(ack, dict) else ())):
            self._session.tasks.push = False
            sub.close()
            self._sub = None

    # -- ending -----------------------------------------------------------------
    def _end(self, outcome):
        with self._cond:
            if self._outcome is None:
                self._outcome = outcome
            self._cond.notify_all()
        self._session.tasks.forget(self)
        return self._outcome

    def _abandon(self, error, strict=False, force=False):
        """Cancel the task on the server (tasks/cancel); then it ends with ``error``.

        Returns False, leaving the task be, when the server says it had ended (-32602);
        ``force`` ends it here anyway.  Other failures raise when ``strict``."""
        with self._cond:
            if self._outcome is not None:
                return False
        try:
            self._session.request("tasks/cancel", {"taskId": self.id},
                                  min(self._session.timeout, TASK_CANCEL_TIMEOUT))
        except McpError as e:
            _log.debug("tasks/cancel %s: %s", self.id, e)
            if isinstance(e, RequestError) and e.code == INVALID_PARAMS and not force:
                return False  # it had ended already: its outcome stands
            if strict and not isinstance(e, RequestError):
                raise
        self._end(error)
        return True


# ---------------------------------------------------------------------------
# The Client API
# ---------------------------------------------------------------------------

class Subscription(object):
    """Change notifications from the server, delivered to a callback until ``close()``.

    On 2026-07-28 servers this is one ``subscriptions/listen`` stream; on
    handshake-era servers it is ``resources/subscribe`` plus the notifications
    the server sends anyway.  ``acknowledged`` holds what the server agreed to
    send (2026-07-28), once it said so; ``ended`` is set when the subscription
    ends, with ``error`` telling why (None for a clean end).
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
        session.dispatcher.unsubscribe(self)
        if self._future is not None:
            self._future.cancel("subscription closed")
        elif session.dispatcher.error is None:
            for uri in self.resource_uris:
                try:
                    session.request("resources/unsubscribe", {"uri": uri})
                except McpError as e:
                    _log.debug("resources/unsubscribe %s: %s", uri, e)


def _positional(args, names, signature):
    """Positional-only parameters the pre-3.8 way (the standard library's own idiom):
    ``def f(*args, **kwargs)`` leaves every keyword free for the tool's arguments."""
    if not 2 <= len(args) <= len(names) + 1:
        raise TypeError("%s takes %s" % (signature, "a name and an optional arguments dict"))
    return args + (None,) * (len(names) + 1 - len(args))


def _client_timeout(value, name):
    seconds = _timeout_arg(value, None, name)
    if seconds is None:  # it also bounds connecting, writes and close(): it must be a number
        raise ValueError("%s must be a positive finite number of seconds, not %r" % (name, value))
    return seconds


class Client(object):
    """A connection to one MCP server.

    Args:
        server: the server's argv list (spawned over stdio, never through a
            shell; a string is split by the platform's command-line rules) or
            an ``http(s)://`` URL (Streamable HTTP, falling back to the legacy
            HTTP+SSE transport).
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
            server's sampling/createMessage and (form mode) elicitation/create
            requests.
        url_elicitation: ``f(params) -> {"action": "accept" | "decline" | "cancel"}``
            for URL-mode elicitation (2025-11-25 and later): show the user
            ``params["message"]`` and the full ``params["url"]``, open it only with
            their consent, and return once they agreed (for a request refused with
            -32042: once they are done there; the request is then repeated once).
        on_log: ``f(level, logger, data)`` for the server's log messages
            (default: the ``mcp_min.server`` logger).
        on_notification: ``f(method, params)`` for other notifications.
        on_stderr: ``f(line)`` for each stderr line of a stdio server.
        client_info: the ``{"name", "version"}`` we introduce ourselves with.
        probe_timeout: seconds to wait for ``server/discover`` before deciding
            the server predates 2026-07-28.
        auth: for HTTP servers, an ``OAuth`` object or any object with
            ``headers(method, url) -> dict`` and, optionally,
            ``challenge(method, url, status, headers, sent) -> bool`` (see OAuth).

    Every callback runs on a worker thread, never on one that reads from the
    server.  A per-call ``timeout`` may be None (or infinity) for no deadline.

    Raises ConnectionClosed when the server cannot be started or reached,
    RequestTimeout when it does not answer in time, McpError otherwise, and
    ValueError for arguments that cannot work.
    """

    def __init__(self, server, *, timeout=DEFAULT_TIMEOUT, protocol_version="auto", env=None, inherit_env=False,
                 cwd=None, headers=None, roots=None, sampling=None, elicitation=None, on_log=None,
                 on_notification=None, on_stderr=None, client_info=None, probe_timeout=PROBE_TIMEOUT, auth=None,
                 url_elicitation=None):
        timeout = _client_timeout(timeout, "timeout")
        probe_timeout = _client_timeout(probe_timeout, "probe_timeout")
        if auth is not None and not callable(getattr(auth, "headers", None)):
            raise ValueError("auth must have a headers(method, url) method (see OAuth), not %r" % (auth,))
        if isinstance(server, str) and server.split("://", 1)[0].lower() in ("http", "https"):
            headers = _clean_headers(headers)

            def make_transport(events):
                return _StreamableHttpTransport(server, headers, timeout, auth)
        else:
            if isinstance(server, str):
                argv = _split_command(server)
            elif isinstance(server, (list, tuple)):
                argv = list(server)
            else:
                raise ValueError("server must be an argv list or an http(s):// URL, not %r" % (server,))

            def make_transport(events):
                stderr = (lambda line: events.put(on_stderr, line)) if on_stderr is not None else None
                return _StdioTransport(argv, env, inherit_env, cwd, stderr, timeout)
        session = _Session(make_transport, timeout, protocol_version, probe_timeout, client_info, roots=roots,
                           sampling=sampling, elicitation=elicitation, url_elicitation=url_elicitation,
                           on_log=on_log, on_notification=on_notification)
        self._session = session
        # A dropped Client still reaps its server: the session holds no reference back to us.
        # (On PyPy, without reference counting, that happens at a collection or at exit.)
        self._finalizer = weakref.finalize(self, session.close)
        try:
            session.connect()
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
    def call(*args, timeout=_DEFAULT, progress=None, **kwargs):
        """call(name, arguments=None, /, *, timeout=None, progress=None, **kwargs)

        Call a tool and return its value.

        Arguments come as a dict, as keywords, or both (a tool argument called
        ``timeout`` or ``progress`` must go in the dict).  The value is the
        structured content when there is some (a lone ``{"result": x}`` is
        unwrapped to ``x``), else the text of a single text block, else the
        content list.  ``progress(progress, total, message)`` receives progress
        notifications.

        A tool the server runs as a task is followed to its end: the value comes
        the same way, ``progress`` also receives its status changes, and
        ``timeout`` bounds the whole task (when it passes, the task is cancelled).

        Raises ToolError when the tool reports failure, RequestError for a
        protocol error, RequestTimeout, ConnectionClosed.
        """
        self, name, arguments = _positional(args, ("name", "arguments"), "call(name, arguments=None, **kwargs)")
        return self._tool_future(name, arguments, kwargs, timeout, progress, _tool_value, True).result()

    def call_tool(*args, timeout=_DEFAULT, progress=None):
        """call_tool(name, arguments=None, /, *, timeout=None, progress=None)

        Call a tool and return the raw CallToolResult dict (no ToolError)."""
        self, name, arguments = _positional(args, ("name", "arguments"), "call_tool(name, arguments=None)")
        return self._tool_future(name, arguments, None, timeout, progress, None, True).result()

    def submit(*args, timeout=_DEFAULT, progress=None, **kwargs):
        """submit(name, arguments=None, /, *, timeout=None, progress=None, **kwargs)

        Start a tool call and return a Future at once; ``.result()`` gives what
        ``call`` would.  The Future keeps the client alive until it is settled."""
        self, name, arguments = _positional(args, ("name", "arguments"), "submit(name, arguments=None, **kwargs)")
        return self._tool_future(name, arguments, kwargs, timeout, progress, _tool_value, False)

    def start(*args, timeout=_DEFAULT, ttl=None, progress=None, **kwargs):
        """start(name, arguments=None, /, *, timeout=None, ttl=None, progress=None, **kwargs)

        Call a tool as a task and return the Task at once (``.id``, ``.status()``,
        ``.result(timeout)``, ``.cancel()``), for work that outlives one call.

        2025-11-25 servers are asked for a task when the tool allows one
        (``execution.taskSupport`` optional or required), kept ``ttl`` seconds if
        given; 2026-07-28 servers decide themselves.  A server that answers at once
        gives a Task whose ``id`` is None, its result already there.  ``timeout``
        bounds getting the task made, not the task.
        """
        self, name, arguments = _positional(args, ("name", "arguments"), "start(name, arguments=None, **kwargs)")
        return self._tool_future(name, arguments, kwargs, timeout, progress, _TASK_HANDLE, True, ttl).result()

    def task(self, task_id, *, progress=None):
        """The task with this id (from ``start()``, perhaps in an earlier process), to follow again."""
        if not isinstance(task_id, str):
            raise ValueError("a task id is a string, not %r" % (task_id,))
        return Task(self._session, task_id, None, progress)

    def _tool_future(self, name, arguments, kwargs, timeout, progress, finish, wait_here, ttl=None):
        if not isinstance(name, str):
            raise ValueError("the tool name must be a string, not %r" % (name,))
        args = dict(arguments) if arguments else {}
        if kwargs:
            args.update(kwargs)
        timeout = _timeout_arg(timeout, _DEFAULT)
        session = self._session
        if session.transport.carries_headers and session.era.modern and session.era.tool_headers is None:
            session.list_tools(True)  # x-mcp-header markings must be known before calling over HTTP
        params = {"name": name, "arguments": args}
        support = session.tasks.support(name)  # (2025-11-25: ask for a task where the tool wants one)
        if support == "required" or support == "optional" and finish is _TASK_HANDLE:
            keep = _timeout_arg(ttl, None, "ttl")
            params["task"] = {} if keep is None else {"ttl": int(keep * 1000)}
        # Nobody waits on a submitted call: a task it becomes is followed by a thread of its own.
        return session.submit("tools/call", params, timeout, progress, finish, wait_here, keepalive=self,
                              intercept=None if wait_here else session.tasks.intercept)

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

    def read_resource(self, uri, *, timeout=_DEFAULT):
        """Read a resource; returns the result dict (its ``contents`` list holds the data).

        Raises ResourceNotFound for an unknown URI."""
        try:
            return self._session.request("resources/read", {"uri": uri}, _timeout_arg(timeout, _DEFAULT))
        except RequestError as e:
            if e.code in (RESOURCE_NOT_FOUND, INVALID_PARAMS) and not isinstance(e, ResourceNotFound):
                raise ResourceNotFound(e.code, e.message, e.data, e.method)
            raise

    def get_prompt(*args, timeout=_DEFAULT, **kwargs):
        """get_prompt(name, arguments=None, /, *, timeout=None, **kwargs)

        Get a prompt with its arguments filled in; returns the result dict (``messages``).
        Non-string argument values are sent as JSON text (prompt arguments are strings)."""
        self, name, arguments = _positional(args, ("name", "arguments"), "get_prompt(name, arguments=None)")
        params = {"name": name}
        if arguments is not None or kwargs:  # send what the caller gave, an empty dict included
            given = dict(arguments or {}, **kwargs)
            params["arguments"] = {k: v if isinstance(v, str) else _to_json(v) for k, v in given.items()}
        return self._session.request("prompts/get", params, _timeout_arg(timeout, _DEFAULT))

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
        result = self._session.request("completion/complete", params)
        completion = _field(result, "completion", dict, "completion/complete", {})
        return _field(completion, "values", list, "completion/complete", [])

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

    def ping(self, *, timeout=_DEFAULT):
        """Check the server answers (2026-07-28 has no ping: server/discover stands in)."""
        self._session.request("server/discover" if self._session.modern else "ping", None,
                              _timeout_arg(timeout, _DEFAULT))

    def listen(self, tools=True, prompts=True, resources=True, resource_uris=(), callback=None):
        """Receive change notifications until the returned Subscription (or the client) is closed.

        ``callback(method, params)`` (default: the client's ``on_notification``)
        gets tools/prompts/resources list changes and updates of the resources
        under ``resource_uris``.  It runs on a worker thread, never the reader.
        """
        session = self._session
        callback = callback if callback is not None else session.inbox.on_notification
        sub = Subscription(session, callback, tools, prompts, resources, resource_uris)
        wanted = {"toolsListChanged": bool(tools), "promptsListChanged": bool(prompts),
                  "resourcesListChanged": bool(resources)}
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        session.listen(sub, wanted)
        return sub

    def _legacy_only(self, method, instead):
        if self._session.modern:
            raise McpError("%s does not exist in protocol %s; use %s instead"
                           % (method, self._session.protocol_version, instead))

    # -- skills (the io.modelcontextprotocol/skills extension, SEP-2640) ----------
    def list_skills(self, refresh=False):
        """Every skill the server lists (all pages of ``skills/list``): entries with ``uri`` (of
        its SKILL.md), ``frontmatter`` and ``resources`` (its files, with ``size`` and
        ``digest``).  Reads no skill file.  McpError when the server lacks the extension."""
        self._need_skills()
        return [e for e in self._session.list_all("skills/list", "skills", refresh) if isinstance(e, dict)]

    def read_skill(self, skill, *, files=True, timeout=_DEFAULT):
        """Load one skill, verified against its entry; nothing unverified is returned.

        ``skill``: a name or skill path (looked up in ``list_skills()``), the URI of its
        SKILL.md (its entry comes from ``skills/get``) or an entry of ``list_skills()``.
        SKILL.md is read first, then (``files=True``) each other listed file, one
        ``resources/read`` each (``timeout`` applies to each request).  Each file's byte size
        and sha256 digest must match the entry, and SKILL.md's frontmatter must equal the
        entry's field by field: the first mismatch raises SkillVerificationError and nothing
        more is read.  Skills whose files are ``"dynamic"`` cannot be verified and are refused.

        Returns a dict: ``uri``, ``name``, ``frontmatter``, ``text`` (all of SKILL.md),
        ``body`` (the Markdown after the frontmatter), ``files`` (URI -> bytes, SKILL.md
        first, then in the entry's order) and ``entry``."""
        timeout = _timeout_arg(timeout, _DEFAULT)
        entry = self._skill_entry(skill, timeout)
        uri, listed = _skill_files(entry)
        out = {}
        for item in listed if files else listed[:1]:
            try:
                result = self._session.request("resources/read", {"uri": item["uri"]}, timeout)
            except RequestError as e:
                raise SkillVerificationError(uri, item["uri"], "missing", "the server did not serve it: %s" % e) from e
            out[item["uri"]] = _skill_file(uri, item, result)
            if item["uri"] == uri:  # SKILL.md, first: its frontmatter is checked before anything else is read
                text, frontmatter, body = _skill_md(uri, entry, out[uri])
        return {"uri": uri, "name": frontmatter["name"], "frontmatter": frontmatter, "text": text, "body": body,
                "files": out, "entry": entry}

    def _skill_entry(self, skill, timeout):
        """The entry to verify against: as given, from skills/get (a URI) or from the listing."""
        if isinstance(skill, dict):
            return skill
        if not isinstance(skill, str) or not skill:
            raise ValueError("read_skill() takes a skill name, the URI of its SKILL.md or an entry of list_skills()")
        if "://" in skill:
            self._need_skills()
            entry = _field(self._session.request("skills/get", {"uri": skill}, timeout), "skill", dict, "skills/get")
            if not entry or entry.get("uri") != skill:
                raise SkillVerificationError(skill, None, "entry", "skills/get did not return this skill's entry")
            return entry

        def names(entry):  # its name, and its path (the URI without scheme and /SKILL.md)
            uri, fm = entry.get("uri"), entry.get("frontmatter")
            return (fm.get("name") if isinstance(fm, dict) else None,
                    uri.split("://", 1)[-1][:-len("/SKILL.md")] if isinstance(uri, str) else None)
        found = [entry for entry in self.list_skills() if skill in names(entry)]
        if len(found) != 1:
            raise McpError("%d listed skills are named %r%s" % (len(found), skill, (
                ": %s; pass the URI of the one you want" % ", ".join(str(e.get("uri")) for e in found)) if found else
                " (one it does not list can still be read by the URI of its SKILL.md)"))
        return found[0]

    def _need_skills(self):
        extensions = self._session.server_capabilities.get("extensions")
        if not isinstance(extensions, dict) or SKILLS_EXTENSION not in extensions:
            raise McpError("the server does not declare the %s extension (skill files can still be read with "
                           "read_resource())" % SKILLS_EXTENSION)

    # -- raw access ------------------------------------------------------------
    def request(self, method, params=None, *, timeout=_DEFAULT, progress=None):
        """Send any request and return its raw result dict (``params``: a dict or None)."""
        return self._session.request(method, params, _timeout_arg(timeout, _DEFAULT), progress)

    def submit_request(self, method, params=None, *, timeout=_DEFAULT, progress=None):
        """Send any request and return a Future of its raw result dict."""
        return self._session.submit(method, params, _timeout_arg(timeout, _DEFAULT), progress, keepalive=self)

    def notify(self, method, params=None):
        """Send a notification."""
        self._session.notify(method, params)

    # -- lifetime --------------------------------------------------------------
    def close(self):
        """Close the connection and stop the server (idempotent, any thread).

        Pending requests fail with ConnectionClosed.  In a forked child this does
        nothing: the server belongs to the parent."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        s = self._session
        return "<mcp_min.Client %s %s %s>" % (s.transport.kind, s.transport.name, s.protocol_version)


# ---------------------------------------------------------------------------
# Auth plug-in: OAuth 2.1 for HTTP servers, an add-on that nothing above depends on.
#
# The auth plug-in interface.  A transport talks to its ``auth=`` object through
# two duck-typed methods and nothing else, so any object offering them works:
#   auth.headers(method, url) -> dict
#       headers to add to this HTTP request (Authorization, DPoP ...); {} for none.
#   auth.challenge(method, url, status, response_headers, sent_headers) -> bool
#       the request was answered 401 or 403; True means "call headers() again and
#       repeat the request".  The transport bounds the repeats (MAX_AUTH_RETRIES);
#       an object without challenge() is never asked, and nothing is repeated.
# OAuth implements both: discovery (RFC 9728, RFC 8414, OpenID Connect), client
# registration (pre-registered, Client ID Metadata Documents, RFC 7591), grants
# (authorization code + PKCE with refresh and step-up; client_credentials with a
# secret or an ES256 private_key_jwt; RFC 7523 jwt-bearer for workload identity;
# cross-app access = RFC 8693 token exchange + jwt-bearer) and RFC 9449 DPoP.
# All its HTTP goes through OAuth._fetch: https only (plain http only to a loopback
# host), no credentials across origins on a redirect, a deadline on every exchange.
# ---------------------------------------------------------------------------

_SECRET_PARAMS = ("client_secret", "code", "code_verifier", "refresh_token", "client_assertion", "assertion",
                  "subject_token", "access_token", "id_token")
_GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_GRANTS = ("authorization_code", "client_credentials", "cross_app_access", "jwt-bearer")

# -- ES256 (ECDSA over NIST P-256 with SHA-256), pure Python ---------------------
# Deterministic nonces (RFC 6979), so signatures are reproducible and testable.
# Not constant-time: Python integers and the double-and-add loop take time that
# depends on the secret.  Acceptable here because these keys only sign short-lived
# client assertions and DPoP proofs, each sent over the network after seconds of
# other work: recovering a key from timing needs many precisely timed signatures,
# which a remote peer cannot take.  Two cheap measures keep the classic leaks shut
# anyway: RFC 6979 nonces are never reused or biased, and every nonce is padded to
# the same bit length (k + n or k + 2n), so the loop length says nothing about it.
# Keys that guard more deserve a vetted constant-time library.

_P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
_P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
_P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_P256_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
           0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)
_INFINITY = (1, 1, 0)  # Jacobian coordinates (X, Y, Z) stand for (X/Z², Y/Z³); Z = 0 is infinity


def _ec_double(pt):
    """2·pt in Jacobian coordinates (P-256 has a = -3)."""
    x, y, z = pt
    if not z or not y:
        return _INFINITY
    p = _P256_P
    yy = y * y % p
    s = 4 * x * yy % p
    zz = z * z % p
    m = 3 * (x - zz) * (x + zz) % p
    x3 = (m * m - 2 * s) % p
    return x3, (m * (s - x3) - 8 * yy * yy) % p, 2 * y * z % p


def _ec_add_affine(pt, q):
    """pt (Jacobian) + q (affine): no modular inversion on the way."""
    x1, y1, z1 = pt
    if not z1:
        return q[0], q[1], 1
    p = _P256_P
    zz = z1 * z1 % p
    h = (q[0] * zz - x1) % p
    r = (q[1] * z1 * zz - y1) % p
    if not h:
        return _ec_double(pt) if not r else _INFINITY
    hh = h * h % p
    hhh = h * hh % p
    v = x1 * hh % p
    x3 = (r * r - hhh - 2 * v) % p
    return x3, (r * (v - x3) - y1 * hhh) % p, z1 * h % p


def _ec_mul(k, point):
    """k·point for an affine point on P-256: an affine (x, y), or None for infinity."""
    acc = _INFINITY
    for bit in bin(k)[2:]:
        acc = _ec_double(acc)
        if bit == "1":
            acc = _ec_add_affine(acc, point)
    x, y, z = acc
    if not z:
        return None
    p = _P256_P
    zi = pow(z, p - 2, p)
    zi2 = zi * zi % p
    return x * zi2 % p, y * zi2 * zi % p


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
            padded = k + n if (k + n).bit_length() > 256 else k + 2 * n  # same point, always 257 bits
            r = _ec_mul(padded, _P256_G)[0] % n
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
    signing_input = "%s.%s" % (_b64url(_dumps(head).encode("utf-8")), _b64url(_dumps(claims).encode("utf-8")))
    r, s = _es256_sign(_ec_private_key(private_key), signing_input.encode("ascii"))
    return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def _jwt_claims(jwt):
    """The claims of a compact JWT, unverified ({} when it is not one)."""
    try:
        part = jwt.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8"))
    except (AttributeError, IndexError, ValueError, TypeError):
        return {}
    return claims if isinstance(claims, dict) else {}


# -- URLs ----------------------------------------------------------------------------

def _split(url):
    import urllib.parse
    try:
        parts = urllib.parse.urlsplit(url)
        return parts, (parts.hostname or "").lower(), parts.port
    except (ValueError, TypeError, AttributeError):  # a malformed port or host
        return None, "", None


def _oauth_origin(url):
    """scheme://host[:port] of a URL, lower-cased, the default port left out (RFC 6454)."""
    parts, host, port = _split(url)
    if parts is None:
        return ""
    scheme = parts.scheme.lower()
    if ":" in host:
        host = "[%s]" % host
    if port is not None and port != {"http": 80, "https": 443}.get(scheme):
        host += ":%d" % port
    return "%s://%s" % (scheme, host)


def _htu(url):
    """The htu claim of a DPoP proof: the request URI without query and fragment (RFC 9449 4.2)."""
    parts = _split(url)[0]
    return _oauth_origin(url) + ((parts.path if parts else "") or "/")


def _loopback(host):
    if host == "localhost" or host.endswith(".localhost"):
        return True
    import ipaddress
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _allowed_url(url):
    """Authorization traffic is https; plain http only to this machine (the MCP spec's
    communication security rules; RFC 8252 loopback redirects)."""
    parts, host, _ = _split(url)
    scheme = parts.scheme.lower() if parts else ""
    return bool(host) and (scheme == "https" or (scheme == "http" and _loopback(host)))


def _plain_url(url):
    """A URL as an error may show it: no user info, query or fragment."""
    parts = _split(url)[0]
    if parts is None:
        return _shorten(repr(url), 200)
    return _shorten("%s://%s%s" % (parts.scheme, parts.netloc.rpartition("@")[2], parts.path), 200)


def _check_url(url, what):
    if not isinstance(url, str) or not _allowed_url(url):
        raise AuthError("OAuth: refusing to %s %s: authorization traffic must use https (plain http only to "
                        "a loopback host)" % (what, _plain_url(url)))


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


def _header_of(headers, name):
    """One header from an http.client message (case-insensitive) or a plain dict."""
    if headers is None:
        return None
    value = headers.get(name)
    if value is None and isinstance(headers, dict):
        value = next((v for k, v in headers.items() if str(k).lower() == name.lower()), None)
    return value


def _json_object(raw):
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _redacted(text, secrets):
    """``text`` with every secret we sent replaced (a server may echo them back)."""
    for secret in secrets:
        if isinstance(secret, str) and len(secret) >= 4:
            text = text.replace(secret, "<redacted>")
    return text


def _stripped(value):
    # Tokens and secrets often come from files, with a trailing newline.
    return value.strip() if isinstance(value, str) else value


# -- HTTP for OAuth ------------------------------------------------------------------

def _oauth_request(engine, method, url, headers, body, timeout):
    """One HTTP exchange for OAuth, through the module's HTTP engine: (status, response
    headers, body bytes).  Only https (plain http only to a loopback host) is fetched,
    redirects included (GET only; credentials never follow one to another origin); the
    exchange ends within ``timeout`` (RequestTimeout); a non-2xx answer is an answer."""
    _check_url(url, "fetch")
    _log.debug("OAuth: %s %s", method, _plain_url(url))
    h = {"Accept": "application/json", "User-Agent": "mcp_min/" + __version__}
    h.update(headers)
    try:
        answer = engine.request(method, url, h, body, time.monotonic() + timeout, secure=True)
        with answer:
            data = answer.read(MAX_AUTH_RESPONSE_BYTES) if answer.status < 300 else answer.body
    except RequestTimeout:
        raise RequestTimeout("OAuth: no complete answer from %s within %.3g s" % (_plain_url(url), timeout))
    except McpError as e:
        raise AuthError("OAuth: cannot reach %s: %s" % (_plain_url(url), e))
    return answer.status, answer.headers, data


class _DpopKey(object):
    """A DPoP (RFC 9449) key pair, ES256, and the latest DPoP-Nonce of each origin."""

    def __init__(self, d=None):
        import secrets
        self.d = d or secrets.randbelow(_P256_N - 1) + 1
        x, y = _ec_mul(self.d, _P256_G)
        self.jwk = {"kty": "EC", "crv": "P-256", "x": _b64url(x.to_bytes(32, "big")),
                    "y": _b64url(y.to_bytes(32, "big"))}
        self.nonces = {}

    def __repr__(self):  # never the private half
        return "<DPoP key x=%s>" % self.jwk["x"]

    def proof(self, method, url, token=None):
        """A proof JWT for one request (RFC 9449 4.2): fresh jti, ath with a token, the nonce."""
        import hashlib
        claims = {"jti": _b64url(os.urandom(16)), "htm": method.upper(), "htu": _htu(url), "iat": int(time.time())}
        if token:
            claims["ath"] = _b64url(hashlib.sha256(token.encode("utf-8")).digest())
        nonce = self.nonces.get(_oauth_origin(url))
        if nonce:
            claims["nonce"] = nonce
        return _jwt_es256(claims, self.d, {"typ": "dpop+jwt", "jwk": self.jwk})

    def keep_nonce(self, url, headers):
        """Keep the DPoP-Nonce a response from ``url`` carries; returns it ("" for none)."""
        nonce = (_header_of(headers, "DPoP-Nonce") or "").strip()
        if nonce:
            self.nonces[_oauth_origin(url)] = nonce
        return nonce


# -- its parts: token records, scopes, client authentication, discovery, the store ------

def _read_store(path):
    """The token store's content ({} when absent or unreadable); its directory is created 0700."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        try:
            os.makedirs(directory, 0o700)
        except OSError as e:
            raise AuthError("OAuth: cannot create the token store directory %s: %s" % (directory, e.strerror or e))
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        out = {name: {k: v for k, v in (saved.get(name) or {}).items() if isinstance(v, dict)}
               for name in ("resources", "clients")}
        d = _ec_private_key({"d": saved["dpop_key"]}) if saved.get("dpop_key") else 0
        if 0 < d < _P256_N:
            out["dpop_key"] = d
        return out
    except (OSError, ValueError, AttributeError, TypeError, KeyError) as e:
        _log.warning("OAuth: ignoring the unreadable token store %s (%s)", path, type(e).__name__)
        return {}


def _write_store(path, doc):
    """Replace the token store: a fresh, exclusive 0600 file beside it, then an atomic rename."""
    import tempfile
    data = _dumps(doc).encode("utf-8")
    tmp = None
    try:
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, 0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".mcp_min-", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise AuthError("OAuth: cannot write the token store %s: %s" % (path, e.strerror or e))


def _state_for(states, url, nearby=True):
    """The record (in ``states``) of the resource ``url`` belongs to: the exact URL, else the longest
    resource covering it, else (``nearby``) the one record on its origin (the legacy
    SSE transport POSTs beside its stream URL).  None when there is none."""
    key = _canonical_resource(url)
    if key in states:
        return states[key]
    best = None
    for name, state in states.items():
        resource = state.get("resource") or name
        if isinstance(resource, str) and _resource_covers(resource, url) and (
                best is None or len(resource) > len(best[0])):
            best = (resource, state)
    if best is not None or not nearby:
        return best and best[1]
    origin = _oauth_origin(url)
    same = [s for name, s in states.items() if _oauth_origin(name) == origin and s.get("tokens")]
    return same[0] if len(same) == 1 else None


def _take(state, answer, scope, issuer, resource, client):
    """Keep in ``state`` what a token endpoint answered for its resource."""
    token = _stripped(answer.get("access_token"))
    if not isinstance(token, str) or not token or any(not "\x21" <= c <= "\x7e" for c in token):
        raise AuthError("OAuth: the token endpoint of %s answered without a usable access_token"
                        % _plain_url(issuer))
    kept = {"access_token": token,
            "token_type": "DPoP" if str(answer.get("token_type", "")).lower() == "dpop" else "Bearer"}
    refresh = _stripped(answer.get("refresh_token"))
    if isinstance(refresh, str) and refresh:
        kept["refresh_token"] = refresh
    elif (state.get("tokens") or {}).get("refresh_token") and state.get("issuer") == issuer:
        kept["refresh_token"] = state["tokens"]["refresh_token"]  # refresh answers may omit it
    expires_in = answer.get("expires_in")
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and 0 <= expires_in < 1e9:
        kept["expires_at"] = time.time() + expires_in
    state.update(tokens=kept, issuer=issuer, resource=resource, scope=scope, client=client)


def _scopes(wanted, challenge, prm, meta, offline):
    """The scopes to ask for: ours, else the challenge's, else the resource's; plus offline_access
    for a refresh token (``offline``) when the authorization server offers it."""
    if wanted is not None:
        scope = list(wanted)
    elif challenge.get("scope"):
        scope = challenge["scope"].split()
    else:
        scope = [s for s in (prm or {}).get("scopes_supported") or [] if isinstance(s, str)]
    if offline and "offline_access" in (meta.get("scopes_supported") or []) and "offline_access" not in scope:
        scope.append("offline_access")
    return scope


def _authenticate(client, params, headers, audience, private_key):
    """Add the client's credentials to a token request."""
    import urllib.parse
    method, client_id, secret = client.get("method"), client.get("client_id"), client.get("client_secret")
    if not client_id:
        return  # e.g. a jwt-bearer grant: the assertion names the workload
    if method == "private_key_jwt":
        if private_key is None:
            raise AuthError("OAuth: private_key_jwt needs OAuth(private_key=...)")
        now = int(time.time())
        claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now,
                  "exp": now + CLIENT_ASSERTION_LIFETIME, "jti": _b64url(os.urandom(16))}
        params["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        params["client_assertion"] = _jwt_es256(claims, private_key)
    elif method == "client_secret_basic" and secret:
        pair = "%s:%s" % (urllib.parse.quote(client_id, safe=""), urllib.parse.quote(secret, safe=""))
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    elif method == "client_secret_post" and secret:
        params["client_id"], params["client_secret"] = client_id, secret
    else:
        params["client_id"] = client_id


def _read_assertion(assertion, path, provider):
    """The workload's identity token for a jwt-bearer grant, fresh for each token request."""
    if provider is not None:
        try:
            value = provider()
        except Exception as e:  # its message may quote what it read: only the type here, the cause chained
            raise AuthError("OAuth: assertion_provider failed: %s" % type(e).__name__) from e
        source = "assertion_provider"
    elif path is not None:
        source = "the assertion file %s" % path
        try:
            with open(path, encoding="utf-8") as f:
                value = f.read(MAX_ASSERTION_BYTES + 1)
        except (OSError, UnicodeDecodeError) as e:
            raise AuthError("OAuth: cannot read %s: %s" % (source, getattr(e, "strerror", None) or
                                                           type(e).__name__))
    else:
        value, source = assertion, "assertion"
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ASSERTION_BYTES:
        raise AuthError("OAuth: %s gave no usable assertion (a JWT of at most %d bytes)"
                        % (source, MAX_ASSERTION_BYTES))
    return value.strip()


def _authorization_response(redirect, state, issuer, meta):
    """The code from the redirect the user step ended with, after the state and RFC 9207 iss checks."""
    import urllib.parse
    answer = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect or "").query))
    if answer.get("state") != state:
        raise AuthError("OAuth: the authorization response's state does not match the request; "
                        "discarding it (a forged or stale redirect)")
    if "iss" in answer or meta.get("authorization_response_iss_parameter_supported"):
        if answer.get("iss") != issuer:
            raise AuthError("OAuth: the authorization response came from issuer %r, expected %r (RFC 9207); "
                            "discarding it" % (_shorten(str(answer.get("iss")), 200), issuer))
    if answer.get("error"):
        raise AuthError("OAuth: authorization was refused: %s%s" % (
            _shorten(answer["error"], 200), " (%s)" % _shorten(answer["error_description"], 300)
            if answer.get("error_description") else ""), answer["error"], answer.get("error_description"))
    if not answer.get("code"):
        raise AuthError("OAuth: the authorization response has no code")
    return answer["code"]


def _register(fetch, endpoint, request):
    """RFC 7591 dynamic client registration: the server's answer (a dict with a client_id)."""
    _log.debug("OAuth: registering at %s", _plain_url(endpoint))
    status, _, body = fetch("POST", endpoint, {"Content-Type": "application/json"}, _dumps(request).encode("utf-8"))
    doc = _json_object(body)
    if status not in (200, 201) or not isinstance(doc.get("client_id"), str) or not doc["client_id"].strip():
        raise AuthError("OAuth: dynamic client registration at %s failed with HTTP %s: %s; pass "
                        "OAuth(client_id=...) instead" % (_plain_url(endpoint), status, _shorten(
                            doc.get("error") or body.decode("utf-8", "replace"), 200)))
    return doc


def _discover(get_json, server_url, challenge):
    """Protected resource metadata, then authorization server metadata, fetched with
    ``get_json(url) -> dict or None``.

    Returns (resource, prm or None, issuer, as metadata)."""
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
        prm = get_json(url)
        if prm is not None:
            break
    resource = _canonical_resource(server_url)
    if prm is not None:
        claimed = prm.get("resource")
        if not isinstance(claimed, str) or not _resource_covers(claimed, server_url):
            raise AuthError("OAuth: the protected resource metadata at %s names resource %r, which is not "
                            "the server %s; refusing to authorize (check the server URL)"
                            % (_plain_url(url), _shorten(str(claimed), 200), _plain_url(server_url)))
        resource = claimed
        servers = prm.get("authorization_servers") or []
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise AuthError("OAuth: the protected resource metadata at %s names no authorization_servers"
                            % _plain_url(url))
        issuer = servers[0]
    else:  # 2025-03-26: the MCP server's origin is the authorization server
        issuer = origin
    meta = _as_metadata(get_json, issuer)
    if meta is None and prm is not None:
        raise AuthError("OAuth: no authorization server metadata found for %s (tried the OAuth and OpenID "
                        "well-known locations)" % _plain_url(issuer))
    if meta is None:
        return resource, None, issuer, {
            "issuer": issuer, "authorization_endpoint": origin + "/authorize", "token_endpoint": origin + "/token",
            "registration_endpoint": origin + "/register", "_fallback": True}
    named = meta.get("issuer")
    # RFC 8414 3.3: the document names the issuer it was fetched for.  In the 2025-03-26
    # fallback the server's origin is the authorization server: an issuer on that origin
    # is the same party (older mocks add a path), one on another origin is refused.
    same_party = prm is None and isinstance(named, str) and _oauth_origin(named) == _oauth_origin(origin)
    if named != issuer and not same_party:
        raise AuthError("OAuth: the authorization server metadata for %s says issuer %r; refusing to use it "
                        "(RFC 8414 requires them to match)" % (_plain_url(issuer), _shorten(str(named), 200)))
    return resource, prm, named, meta

def _as_metadata(get_json, issuer):
    import urllib.parse
    parts = urllib.parse.urlsplit(issuer)
    origin = "%s://%s" % (parts.scheme, parts.netloc)
    path = parts.path.rstrip("/")
    candidates = [origin + "/.well-known/oauth-authorization-server" + path,
                  origin + "/.well-known/openid-configuration" + path]
    if path:
        candidates.append(origin + path + "/.well-known/openid-configuration")
    for url in candidates:
        meta = get_json(url)
        if meta is not None:
            return meta
    return None


class _LoopbackListener(object):
    """The browser step: a small HTTP server on 127.0.0.1 catching the redirect.

    Each connection is served on its own daemon thread, so an idle one (a browser's
    preconnect, a port scan) cannot hold up the redirect; a connection that sends no
    request within LOOPBACK_IDLE_TIMEOUT is dropped, at most MAX_LOOPBACK_CONNECTIONS
    are served at once, and close() cuts whatever is still open."""

    def __init__(self, port=0):
        import http.server
        import urllib.parse
        listener = self
        self.redirect = None
        self.state = None  # the state the authorization URL carries; other redirects are ignored
        self.done = threading.Event()
        self._open = set()  # connections being served
        self._lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            timeout = LOOPBACK_IDLE_TIMEOUT  # for reading the request; then the connection goes

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

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False  # close() cuts connections instead of waiting for them

            def verify_request(self, request, client_address):
                with listener._lock:
                    if len(listener._open) >= MAX_LOOPBACK_CONNECTIONS:
                        return False
                    listener._open.add(request)
                return True

            def shutdown_request(self, request):
                with listener._lock:
                    listener._open.discard(request)
                http.server.ThreadingHTTPServer.shutdown_request(self, request)

            def process_request(self, request, client_address):  # one named thread per connection
                _start_thread(self.process_request_thread, "mcp_min-oauth-connection", (request, client_address),
                              "serve the login redirect")

        self.server = Server(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.uri = "http://127.0.0.1:%d/callback" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.1,),  # close() waits <= 0.1 s
                                       name="mcp_min-oauth-callback", daemon=True)
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
        import socket
        self.server.shutdown()
        self.server.server_close()
        with self._lock:
            still_open = list(self._open)
        for sock in still_open:  # idle preconnects: their threads end at once
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


# -- the OAuth client ------------------------------------------------------------------

class OAuth(object):
    """OAuth 2.1 for HTTP servers: ``Client(url, auth=OAuth(...))``.

    On a 401 (or a 403 ``insufficient_scope``) the client discovers the
    authorization server, obtains a token and repeats the request.

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
        grant_type: ``"authorization_code"`` (default); ``"client_credentials"``;
            ``"jwt-bearer"`` (RFC 7523 workload identity: a token from the
            workload's identity provider, given as ``assertion``,
            ``assertion_file`` or ``assertion_provider``, is exchanged for an
            access token); or ``"cross_app_access"`` (an identity provider's
            ``id_token`` is exchanged at ``idp_token_endpoint`` for an ID-JAG,
            then for a token).
        assertion, assertion_file, assertion_provider: the jwt-bearer assertion:
            a string, a file read again for every token request, or a callable
            ``f() -> str`` called for every token request (these tokens rotate).
        private_key: a P-256 key (PEM, JWK dict) for ``private_key_jwt`` client
            authentication (ES256).
        dpop: DPoP (RFC 9449) sender-constrained tokens.  ``None`` (default): when
            the authorization server advertises ``dpop_signing_alg_values_supported``
            with ES256; ``True``: always; ``False``: never.  The key pair is made
            here (ES256) and kept in ``token_store`` with the tokens bound to it.
        token_store: a file path; tokens, registrations and the DPoP key are kept
            there (mode 0600, directory created 0700) across runs.  Default:
            memory only.
        client_name: sent in dynamic registration.
        timeout: seconds for each authorization server request, and for the
            browser step LOGIN_TIMEOUT_FACTOR times that.
    """

    def __init__(self, client_id=None, client_secret=None, client_metadata_url=None, scopes=None,
                 authorize=None, redirect_uri=None, grant_type="authorization_code", private_key=None,
                 token_store=None, client_name="mcp_min", id_token=None, idp_token_endpoint=None,
                 idp_client_id=None, idp_client_secret=None, token_endpoint_auth_method=None,
                 open_browser=True, timeout=DEFAULT_TIMEOUT, dpop=None, assertion=None, assertion_file=None,
                 assertion_provider=None):
        grant_type = "jwt-bearer" if grant_type == _GRANT_JWT_BEARER else grant_type
        if grant_type not in _GRANTS:
            raise ValueError("grant_type must be one of %s" % ", ".join(_GRANTS))
        sources = [s for s in (assertion, assertion_file, assertion_provider) if s is not None]
        if (grant_type == "jwt-bearer") != bool(sources) or len(sources) > 1:
            raise ValueError("grant_type='jwt-bearer' takes exactly one of assertion, assertion_file and "
                             "assertion_provider (and they mean nothing to other grants)")
        if assertion_provider is not None and not callable(assertion_provider):
            raise ValueError("assertion_provider must be callable")
        if dpop not in (None, True, False):
            raise ValueError("dpop must be None (when offered), True or False")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise ValueError("timeout must be a positive number of seconds")
        self.client_id, self.client_secret = _stripped(client_id), _stripped(client_secret)
        self.client_metadata_url = _stripped(client_metadata_url)
        self.scopes = scopes.split() if isinstance(scopes, str) else list(scopes) if scopes else None
        self.authorize, self.redirect_uri = authorize, redirect_uri
        self.grant_type, self.private_key, self.dpop = grant_type, private_key, dpop
        self.assertion, self.assertion_file = _stripped(assertion), assertion_file
        self.assertion_provider = assertion_provider
        self.token_store = os.path.expanduser(token_store) if token_store else None
        self.client_name = client_name
        self.id_token, self.idp_token_endpoint = _stripped(id_token), idp_token_endpoint
        self.idp_client_id, self.idp_client_secret = _stripped(idp_client_id), _stripped(idp_client_secret)
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.open_browser, self.timeout = open_browser, float(timeout)
        self._lock = threading.RLock()
        self._local = threading.local()  # pairs challenge() with the headers() call of its repeat
        self._state = {}  # canonical resource -> {"tokens", "issuer", "resource", "scope", "client", ...}
        self._clients = {}  # issuer -> registered client {"client_id", "client_secret", "method"}
        self._dpop = None  # the _DpopKey, made on first use
        self._step_ups = 0
        self._engine = None  # the HTTP engine of its own requests, made on first use
        if self.token_store:
            saved = _read_store(self.token_store)
            self._state, self._clients = saved.get("resources", {}), saved.get("clients", {})
            if saved.get("dpop_key"):
                self._dpop = _DpopKey(saved["dpop_key"])

    def __repr__(self):  # never the secrets, tokens or keys
        return "OAuth(grant_type=%r, client_id=%r)" % (self.grant_type, self.client_id)

    # -- the plug-in interface -----------------------------------------------------
    def headers(self, method, url):
        """The credentials for one HTTP request to ``url``: {} while we hold none."""
        retry, self._local.retry = getattr(self._local, "retry", None), None
        # (depth, nonce retries) of the request in progress: a repeat follows its challenge
        self._local.depth = retry[2:] if retry and retry[:2] == (method, url) else (0, 0)
        if not _allowed_url(url):
            return {}  # tokens never travel in clear text
        with self._lock:
            state = _state_for(self._state, url)
            tokens = (state or {}).get("tokens") or {}
            expires = tokens.get("expires_at")
            if expires and time.time() > expires - TOKEN_EXPIRY_MARGIN and tokens.get("refresh_token"):
                try:
                    self._refresh(state)
                except AuthError as e:
                    _log.debug("OAuth: refresh failed: %s", e)
                tokens = state.get("tokens") or {}
            token = tokens.get("access_token")
            if not token:
                return {}
            if tokens.get("token_type") != "DPoP":
                return {"Authorization": "Bearer " + token}
        return {"Authorization": "DPoP " + token, "DPoP": self._dpop_key().proof(method, url, token)}

    def challenge(self, method, url, status, response_headers, sent_headers):
        """``url`` answered ``status`` to a request that carried ``sent_headers``.

        Returns True when there is something new to send (a token, a refreshed or
        stepped-up token, a DPoP nonce): call headers() again and repeat."""
        if status not in (401, 403) or not _allowed_url(url):
            return False
        params = _parse_www_authenticate(_header_of(response_headers, "WWW-Authenticate") or "")
        sent = {str(k).lower(): v for k, v in (sent_headers or {}).items()}
        depth, nonce_retries = getattr(self._local, "depth", (0, 0))
        with self._lock:
            if params.get("error") == "use_dpop_nonce":  # RFC 9449 9: once per request, with the new nonce
                retry = nonce_retries < DPOP_NONCE_RETRIES and self._new_nonce(url, response_headers,
                                                                                sent.get("dpop"))
                nonce_retries += 1
            else:
                retry = self._refused(url, status, params, sent.get("authorization"), depth)
        if retry and depth < MAX_AUTH_RETRIES:  # else the transport will not repeat: nothing to pair
            self._local.retry = (method, url, depth + 1, nonce_retries)
        return retry

    # -- behind the interface ------------------------------------------------------
    def _new_nonce(self, url, response_headers, sent_proof):
        """A use_dpop_nonce challenge: keep the nonce; True when a proof carrying it is new."""
        nonce = self._dpop_key().keep_nonce(url, response_headers) if sent_proof else ""
        return bool(nonce) and _jwt_claims(sent_proof).get("nonce") != nonce  # the same one refused: give up

    def _refused(self, url, status, params, sent, depth):
        """A 401, or a 403 insufficient_scope: refresh, authorize or step up; True to repeat."""
        if status == 403 and params.get("error") != "insufficient_scope":
            return False
        state = _state_for(self._state, url, nearby=False)
        if state is None:
            state = self._state.setdefault(_canonical_resource(url), {})
        tokens = state.get("tokens") or {}
        current, sent_token = tokens.get("access_token"), (sent or "").partition(" ")[2].strip()
        if current and current != sent_token:
            return True  # another request already got a new token
        if status == 401 and sent_token and depth == 0 and tokens.get("refresh_token"):
            try:
                self._refresh(state)
                return True
            except AuthError as e:
                _log.debug("OAuth: refresh failed (%s); authorizing again", e)
        step_up = None
        if status == 403:
            wanted = (params.get("scope") or "").split()
            had = state.get("scope") or []
            if not [s for s in wanted if s not in had] or self._step_ups >= MAX_STEP_UPS:
                return False  # a new token would carry the same scopes: give up
            self._step_ups += 1
            step_up = had + [s for s in wanted if s not in had]
        elif sent_token and depth > 0:
            return False  # the token we just obtained for this request was refused
        self._authorize(url, state, params, step_up)
        self._save()
        return True

    def _dpop_key(self):
        with self._lock:
            if self._dpop is None:
                self._dpop = _DpopKey()
            return self._dpop

    def _uses_dpop(self, meta):
        if self.dpop is not None:
            return self.dpop
        algs = meta.get("dpop_signing_alg_values_supported")
        return isinstance(algs, list) and "ES256" in algs

    # -- HTTP --------------------------------------------------------------------------
    def _fetch(self, method, url, headers, body=None):
        """Every HTTP request OAuth makes goes through here: (status, headers, body bytes)."""
        if self._engine is None:
            self._engine = _HttpEngine()
        return _oauth_request(self._engine, method, url, headers, body, self.timeout)

    def _get_json(self, url):
        """GET a metadata document: the dict, or None when absent (not 200) or not JSON."""
        status, _, body = self._fetch("GET", url, {"MCP-Protocol-Version": LEGACY_VERSIONS[0]})
        if status != 200:
            _log.debug("OAuth: %s answered %s", _plain_url(url), status)
            return None
        return _json_object(body) or None

    def _post_form(self, url, params, headers, what, dpop=False):
        """POST a token request: the answer (a dict) or AuthError.  With DPoP, a
        use_dpop_nonce answer is repeated once, with the nonce given (RFC 9449 8)."""
        import urllib.parse
        params = {k: v for k, v in params.items() if v is not None}
        body = urllib.parse.urlencode(params).encode("utf-8")
        _log.debug("OAuth: %s to %s with %s", what, _plain_url(url), ", ".join(
            "%s=%s" % (k, "<redacted>" if k in _SECRET_PARAMS else v) for k, v in params.items()))
        for attempt in range(DPOP_NONCE_RETRIES + 1):
            h = dict(headers, **{"Content-Type": "application/x-www-form-urlencoded"})
            if dpop:
                h["DPoP"] = self._dpop_key().proof("POST", url)
            status, answer_headers, raw = self._fetch("POST", url, h, body)
            doc = _json_object(raw)
            nonce = self._dpop_key().keep_nonce(url, answer_headers) if dpop else ""
            if not (nonce and status in (400, 401) and doc.get("error") == "use_dpop_nonce"):
                break
        if status != 200 or not doc:
            secrets = [v for k, v in params.items() if k in _SECRET_PARAMS] + list(headers.values())
            detail = doc.get("error") or _shorten(raw.decode("utf-8", "replace"), 200)
            description = doc.get("error_description")
            description = _redacted(description, secrets) if isinstance(description, str) else None
            raise AuthError("OAuth: %s to %s failed with HTTP %s: %s%s" % (
                what, _plain_url(url), status, _redacted(str(detail), secrets),
                " (%s)" % _shorten(description, 300) if description else ""), doc.get("error"), description)
        return doc

    # -- the flows ---------------------------------------------------------------------
    def _authorize(self, server_url, state, challenge, step_up):
        _check_url(server_url, "authorize for")
        resource, prm, issuer, meta = _discover(self._get_json, server_url, challenge)
        scope = _scopes(step_up or self.scopes, challenge, prm, meta, self.grant_type == "authorization_code")
        answer, client = self._grant(meta, issuer, resource, scope)
        _take(state, answer, scope, issuer, resource, client)
        # Refreshing goes back to this same authorization server, never to a rediscovered one.
        state["as_metadata"] = meta

    def _grant(self, meta, issuer, resource, scope):
        """Run the configured grant: (token endpoint answer, client record used)."""
        if not meta.get("token_endpoint"):
            raise AuthError("OAuth: the authorization server metadata of %s has no token_endpoint"
                            % _plain_url(issuer))
        _check_url(meta["token_endpoint"], "send a token request to")  # before any user step
        if self.grant_type == "authorization_code":
            return self._authorization_code(meta, issuer, resource, scope)
        if self.grant_type == "client_credentials" and not self.client_id:
            raise AuthError("OAuth: the client_credentials grant needs OAuth(client_id=..., client_secret=... or "
                            "private_key=...)")
        if self.grant_type == "jwt-bearer":
            params, what = {"grant_type": _GRANT_JWT_BEARER, "assertion": _read_assertion(
                self.assertion, self.assertion_file, self.assertion_provider)}, "JWT bearer grant"
        elif self.grant_type == "cross_app_access":
            params, what = {"grant_type": _GRANT_JWT_BEARER, "assertion": self._id_jag(issuer, resource, scope)}, \
                "JWT bearer grant"
        else:
            params, what = {"grant_type": "client_credentials"}, "token request"
        params["resource"] = resource
        if scope:
            params["scope"] = " ".join(scope)
        client = self._preregistered(meta)
        return self._token(meta, client, params, issuer, what), client

    def _id_jag(self, issuer, resource, scope):
        """Cross-app access: the identity provider exchanges our id_token for an ID-JAG."""
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
        _authenticate(idp_client, params, headers, self.idp_token_endpoint, None)
        grant = self._post_form(self.idp_token_endpoint, params, headers, "token exchange")
        if not isinstance(grant.get("access_token"), str) or not grant["access_token"]:
            raise AuthError("OAuth: the identity provider's token exchange at %s returned no ID-JAG"
                            % _plain_url(self.idp_token_endpoint))
        return grant["access_token"]

    def _preregistered(self, meta, client_id=None):
        """The record of the client we were given: {"client_id", "client_secret", "method"}."""
        return {"client_id": client_id or self.client_id, "client_secret": self.client_secret,
                "method": self._auth_method(meta.get("token_endpoint_auth_methods_supported"), self.client_secret)}

    def _client(self, meta, issuer, redirect_uri):
        """The client to use with this server: given, a metadata document URL, or registered."""
        if self.client_id:
            return self._preregistered(meta)
        if self.client_metadata_url and meta.get("client_id_metadata_document_supported"):
            return {"client_id": self.client_metadata_url, "client_secret": None, "method": "none"}
        if issuer in self._clients:
            return self._clients[issuer]
        endpoint = meta.get("registration_endpoint")
        if not endpoint:
            raise AuthError("OAuth: the authorization server %s offers no dynamic client registration%s; pass "
                            "OAuth(client_id=...) (and client_secret) for a pre-registered client"
                            % (_plain_url(issuer), "" if self.client_metadata_url else " and this client has no "
                               "client_metadata_url"))
        supported = meta.get("token_endpoint_auth_methods_supported")
        wanted = self.token_endpoint_auth_method or (
            "none" if supported is None or "none" in supported else self._auth_method(supported, True))
        request = {"client_name": self.client_name, "redirect_uris": [redirect_uri],
                   "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                   "token_endpoint_auth_method": wanted,
                   # SEP-837: a loopback redirect means a native application
                   "application_type": "native" if _loopback(_split(redirect_uri)[1]) else "web"}
        doc = _register(self._fetch, endpoint, request)
        secret = _stripped(doc.get("client_secret")) if isinstance(doc.get("client_secret"), str) else None
        client = {"client_id": doc["client_id"].strip(), "client_secret": secret,
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
        if not isinstance(supported, list):
            return "client_secret_basic"  # the RFC 8414 default
        for method in ("client_secret_basic", "client_secret_post", "none"):
            if method in supported:
                return method
        return "client_secret_basic"

    def _token(self, meta, client, params, issuer, what="token request"):
        headers = {}
        _authenticate(client, params, headers, issuer, self.private_key)
        return self._post_form(meta["token_endpoint"], params, headers, what, self._uses_dpop(meta))

    def _authorization_code(self, meta, issuer, resource, scope):
        import hashlib
        import secrets
        import urllib.parse
        if not meta.get("_fallback") and "S256" not in (meta.get("code_challenge_methods_supported") or []):
            raise AuthError("OAuth: the authorization server %s does not advertise PKCE S256 support "
                            "(code_challenge_methods_supported is %r); refusing to authorize without PKCE"
                            % (_plain_url(issuer), meta.get("code_challenge_methods_supported")))
        endpoint = meta.get("authorization_endpoint")
        if not endpoint:
            raise AuthError("OAuth: the authorization server metadata of %s has no authorization_endpoint"
                            % _plain_url(issuer))
        _check_url(endpoint, "send the browser to")
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
            url = endpoint + ("&" if "?" in endpoint else "?") + urllib.parse.urlencode(query)
            if listener is not None:
                redirect = listener.wait(url, self.open_browser, self.timeout * LOGIN_TIMEOUT_FACTOR)
            else:
                redirect = self.authorize(url)
        finally:
            if listener is not None:
                listener.close()
        code = _authorization_response(redirect, state_value, issuer, meta)
        params = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                  "code_verifier": verifier, "resource": resource}
        return self._token(meta, client, params, issuer), client

    def _refresh(self, state):
        tokens = state.get("tokens") or {}
        meta, issuer, resource = state.get("as_metadata"), state.get("issuer"), state.get("resource")
        if not (isinstance(meta, dict) and meta.get("token_endpoint") and issuer and resource):
            raise AuthError("OAuth: no record of the authorization server that issued the refresh token")
        client = state.get("client") or self._clients.get(issuer) or self._preregistered(
            meta, self.client_id or self.client_metadata_url)
        params = {"grant_type": "refresh_token", "refresh_token": tokens.get("refresh_token"),
                  "resource": resource}
        try:
            answer = self._token(meta, client, params, issuer, "token refresh")  # DPoP: the same key
        except AuthError:
            state["tokens"] = {}
            raise
        _take(state, answer, state.get("scope") or [], issuer, resource, client)
        self._save()

    def _save(self):
        if self.token_store:
            doc = {"resources": self._state, "clients": self._clients}
            if self._dpop is not None:  # tokens bound to the key are useless without it
                doc["dpop_key"] = _b64url(self._dpop.d.to_bytes(32, "big"))
            _write_store(self.token_store, doc)


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
  skills                    list skills (the io.modelcontextprotocol/skills extension)
  skill NAME|URI            read a skill, verified against its entry; print its SKILL.md
  ping                      check the server answers
  raw METHOD [JSON]         send any request, print the raw result
  task ID                   wait (up to --timeout) for a task and print its value;
                            with --json print its status now

exit status: 0 ok, 1 tool or protocol error, 2 usage, 3 connection failure"""


class _UsageError(ValueError):
    """A bad command line or config file (exit status 2)."""


def _cli_parser():
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):  # one line and status 2, like every other usage error
            raise _UsageError(message)

    p = Parser(prog="mcp_min", usage=_USAGE, add_help=True)
    p.add_argument("command")
    p.add_argument("args", nargs="*")
    p.add_argument("--url", help="connect to a Streamable HTTP (or HTTP+SSE) server")
    p.add_argument("--header", action="append", default=[], metavar="K:V", help="HTTP header (repeatable)")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="server environment variable")
    p.add_argument("--inherit-env", action="store_true", help="pass the whole environment to the server")
    p.add_argument("--timeout", default=str(DEFAULT_TIMEOUT), help="seconds (default %(default)s)")
    p.add_argument("--protocol-version", default="auto", help="pin a protocol version (default: auto)")
    p.add_argument("--config", help="a JSON file with an mcpServers table (Claude Desktop style)")
    p.add_argument("--server", help="the server's name in --config")
    p.add_argument("--trace", action="store_true", help="log every JSON-RPC message to stderr")
    p.add_argument("--json", action="store_true", help="print raw JSON")
    p.add_argument("--oauth", action="store_true", help="authorize with OAuth 2.1 in a browser when asked")
    p.add_argument("--client-id", help="pre-registered OAuth client id (implies --oauth)")
    p.add_argument("--client-secret", help="its OAuth client secret")
    p.add_argument("--assertion-file", metavar="PATH", help="workload identity: OAuth jwt-bearer grant with the "
                   "identity token in PATH, read again for each token request (implies --oauth)")
    p.add_argument("--dpop", action="store_true", help="OAuth: always ask for DPoP-bound tokens (default: when "
                   "the authorization server offers them)")
    p.add_argument("--version", action="version", version="mcp_min " + __version__)
    return p


def _json_arg(text, what):
    """A command-line value as JSON; NaN, Infinity and overflowing numbers are refused."""
    def refuse(token):
        raise _UsageError("%s: %s is not JSON (quote it to send it as text)" % (what, token))

    def number(token):
        value = float(token)
        return value if math.isfinite(value) else refuse(token)
    return json.loads(text, parse_constant=refuse, parse_float=number)


def _key_values(pairs, as_json=True):
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _UsageError("expected key=value, got %r" % pair)
        if as_json:
            try:
                value = _json_arg(value, pair)
            except _UsageError:
                raise
            except ValueError:
                pass  # not JSON: the text itself
        out[key] = value
    return out


def _server_from_config(path, name):
    """(server, env, headers) of one entry of an mcpServers file; errors name the key."""
    try:
        with open(path, encoding="utf-8-sig") as f:  # (with or without the BOM Windows editors write)
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise _UsageError("cannot read %s: %s" % (path, e))

    def need(value, kind, key, what):
        if not isinstance(value, kind) or kind is str and not value:
            raise _UsageError("%s: %s must be %s" % (path, key, what))
        return value

    def strings(value, key):
        for k, v in need(value, dict, key, "an object").items():
            need(v, str, "%s.%s" % (key, k), "a string")
        return value

    servers = need(need(doc, dict, "the top level", "an object").get("mcpServers"), dict, "mcpServers", "an object")
    if name is None:
        if len(servers) != 1:
            raise _UsageError("%s lists %d servers; pick one with --server NAME (%s)"
                              % (path, len(servers), ", ".join(sorted(servers))))
        name = next(iter(servers))
    if name not in servers:
        raise _UsageError("no server %r in %s (it has: %s)" % (name, path, ", ".join(sorted(servers))))
    key = "mcpServers.%s" % name
    entry = need(servers[name], dict, key, "an object")
    if entry.get("url") is not None:
        return need(entry["url"], str, key + ".url", "a URL"), {}, strings(entry.get("headers") or {}, key + ".headers")
    command = need(entry.get("command"), str, key + ".command", "a non-empty string (or give a url)")
    args = need(entry.get("args") or [], list, key + ".args", "a list")
    for i, arg in enumerate(args):
        need(arg, str, "%s.args[%d]" % (key, i), "a string")
    return [command] + args, strings(entry.get("env") or {}, key + ".env"), {}


def _parse_cli(argv):
    """The command line as (options, server, env, headers, command arguments); _UsageError when bad."""
    server_argv = []
    if "--" in argv:
        cut = argv.index("--")
        argv, server_argv = argv[:cut], argv[cut + 1:]
    opts = _cli_parser().parse_args(argv)
    env = _key_values(opts.env, as_json=False)
    headers = {}
    for h in opts.header:
        key, sep, value = h.partition(":")
        if not sep:
            raise _UsageError("expected --header K:V, got %r" % h)
        headers[key.strip()] = value.strip()
    if opts.config:
        server, config_env, config_headers = _server_from_config(opts.config, opts.server)
        env, headers = dict(config_env, **env), dict(config_headers, **headers)
    elif opts.url or server_argv:
        server = opts.url or server_argv
    else:
        raise _UsageError("say which server: -- SERVER_ARGV..., --url URL, or --config FILE")
    try:
        opts.timeout = _client_timeout(float(opts.timeout), "--timeout")
    except ValueError:
        raise _UsageError("--timeout must be a positive finite number of seconds, not %r" % opts.timeout)
    if opts.protocol_version != "auto" and opts.protocol_version not in SUPPORTED_VERSIONS:
        raise _UsageError("--protocol-version must be auto or one of %s" % ", ".join(SUPPORTED_VERSIONS))
    needs, parse = _COMMANDS.get(opts.command, (None, None))[:2]
    if needs is None:
        raise _UsageError("unknown command %r (see --help)" % opts.command)
    if len(opts.args) < needs:
        raise _UsageError("%s needs an argument" % opts.command)
    return opts, server, env, headers, parse(opts.args)


# -- the commands: (arguments needed, parse(args), run(client, parsed, as_json) -> status)

def _print(value, as_json):
    if as_json or not isinstance(value, str):
        print(_dumps_for_humans_indented(value))
    else:
        print(value)


def _dumps_for_humans_indented(value):
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return repr(value)


def _listing(items, as_json, label="name"):
    if as_json:
        _print(items, True)
        return
    for item in items:
        item = item if isinstance(item, dict) else {label: item}
        desc = str(item.get("description") or "").strip().splitlines()
        print("%s%s" % (item.get(label), "  - " + desc[0] if desc else ""))


def _run_info(client, parsed, as_json):
    info = {"server": client.server_info, "protocol_version": client.protocol_version,
            "transport": client.transport, "capabilities": client.server_capabilities,
            "instructions": client.instructions}
    if as_json:
        _print(info, True)
        return 0
    print("server: %s %s" % (client.server_info.get("name"), client.server_info.get("version")))
    print("protocol: %s over %s" % (client.protocol_version, client.transport))
    print("capabilities: %s" % ", ".join(sorted(map(str, client.server_capabilities))))
    if client.instructions:
        print("instructions: %s" % client.instructions)
    return 0


def _run_call(client, parsed, as_json):
    name, arguments = parsed
    if as_json:
        result = client.call_tool(name, arguments, progress=_show_progress)
        _print(result, True)
        return 1 if result.get("isError") else 0
    _print(client.call(name, arguments, progress=_show_progress), False)
    return 0


def _show_progress(done, total, message):
    if isinstance(message, str) and message.startswith("task ") and not done and total is None:
        print("mcp_min: %s" % message, file=sys.stderr, flush=True)  # a task's status
        return
    print("progress: %s%s%s" % (done, "/%s" % total if total is not None else "", " %s" % message if message else ""),
          file=sys.stderr, flush=True)


def _cli_url_elicitation(params):
    """URL-mode elicitation on the command line: show the URL; on a terminal, offer a browser."""
    import urllib.parse
    url = str(params.get("url", ""))
    host = urllib.parse.urlsplit(url).hostname or "?"
    print("mcp_min: the server asks you to visit a URL: %s" % params.get("message", ""), file=sys.stderr)
    print("  %s\n  (site: %s%s)" % (url, host, "; an internationalized name, check it" if "xn--" in host else ""),
          file=sys.stderr, flush=True)
    if not (sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()):
        return {"action": "cancel"}  # nobody here to agree
    if input("Open it in your browser? [y/N] ").strip().lower() not in ("y", "yes"):
        return {"action": "decline"}
    import webbrowser
    webbrowser.open(url)
    input("Press Enter when you are done there... ")
    return {"action": "accept"}


def _run_task(client, task_id, as_json):
    task = client.task(task_id, progress=_show_progress)
    _print(task.status() if as_json else task.result(), as_json)
    return 0


def _run_resources(client, parsed, as_json):
    if as_json:
        _print({"resources": client.list_resources(), "resourceTemplates": client.list_resource_templates()}, True)
        return 0
    _listing(client.list_resources(), False, "uri")
    if client.server_capabilities.get("resources") is not None:
        _listing(client.list_resource_templates(), False, "uriTemplate")
    return 0


def _run_read(client, uri, as_json):
    result = client.read_resource(uri)
    if as_json:
        _print(result, True)
        return 0
    for part in _field(result, "contents", list, "resources/read", []):
        part = part if isinstance(part, dict) else {"text": _dumps_for_humans(part)}
        print(part["text"] if "text" in part else "<%s: %d characters of base64>" % (
            part.get("mimeType", "binary"), len(str(part.get("blob", "")))))
    return 0


def _run_prompt(client, parsed, as_json):
    result = client.get_prompt(*parsed)
    if as_json:
        _print(result, True)
        return 0
    for m in _field(result, "messages", list, "prompts/get", []):
        m = m if isinstance(m, dict) else {}
        content = m.get("content") if isinstance(m.get("content"), dict) else {}
        print("%s: %s" % (m.get("role"), content.get("text", _dumps_for_humans(content))))
    return 0


def _run_skills(client, parsed, as_json):
    skills = client.list_skills()
    if as_json:
        _print(skills, True)
        return 0
    for entry in skills:
        fm = entry.get("frontmatter") if isinstance(entry.get("frontmatter"), dict) else {}
        desc = str(fm.get("description") or "").strip().splitlines()
        print("%s%s  (%s)" % (fm.get("name"), "  - " + desc[0] if desc else "", entry.get("uri")))
    return 0


def _run_skill(client, name, as_json):
    skill = client.read_skill(name)
    if not as_json:
        print(skill["text"], end="" if skill["text"].endswith("\n") else "\n")
        return 0
    files = {}
    for uri, data in skill["files"].items():
        try:
            files[uri] = {"size": len(data), "text": data.decode("utf-8")}
        except UnicodeDecodeError:
            files[uri] = {"size": len(data), "blob": base64.b64encode(data).decode("ascii")}
    _print(dict(skill, files=files), True)
    return 0


def _run_ping(client, parsed, as_json):
    client.ping()
    print("ok")
    return 0


def _raw_args(args):
    try:
        params = _json_arg(args[1], "raw params") if len(args) > 1 else None
    except _UsageError:
        raise
    except ValueError as e:
        raise _UsageError("raw: the params are not JSON: %s" % e)
    if params is not None and not isinstance(params, dict):
        raise _UsageError("raw: the params must be a JSON object")
    return args[0], params


_COMMANDS = {
    "info": (0, lambda args: None, _run_info),
    "tools": (0, lambda args: None, lambda client, parsed, as_json: _listing(client.list_tools(), as_json) or 0),
    "call": (1, lambda args: (args[0], _key_values(args[1:])), _run_call),
    "resources": (0, lambda args: None, _run_resources),
    "read": (1, lambda args: args[0], _run_read),
    "prompts": (0, lambda args: None, lambda client, parsed, as_json: _listing(client.list_prompts(), as_json) or 0),
    "prompt": (1, lambda args: (args[0], _key_values(args[1:], as_json=False)), _run_prompt),
    "skills": (0, lambda args: None, _run_skills),
    "skill": (1, lambda args: args[0], _run_skill),
    "ping": (0, lambda args: None, _run_ping),
    "raw": (1, _raw_args, lambda client, parsed, as_json: _print(client.request(*parsed), True) or 0),
    "task": (1, lambda args: args[0], _run_task),
}


def main(argv=None):
    """Run the command line; returns the exit status (never raises, never prints a traceback)."""
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show a character must not crash us
        if hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    try:
        opts, server, env, headers, parsed = _parse_cli(list(sys.argv[1:] if argv is None else argv))
    except _UsageError as e:
        print("mcp_min: error: %s" % e, file=sys.stderr)
        return 2
    if opts.trace:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        _log.addHandler(handler)
        _log.setLevel(logging.DEBUG)
    else:
        logging.basicConfig(level=logging.WARNING, format="mcp_min: %(message)s")
    try:
        auth = None
        if opts.oauth or opts.client_id or opts.assertion_file or opts.dpop:
            grant = {"grant_type": "jwt-bearer", "assertion_file": opts.assertion_file} if opts.assertion_file else {}
            auth = OAuth(client_id=opts.client_id, client_secret=opts.client_secret, dpop=opts.dpop or None, **grant)
        with Client(server, timeout=opts.timeout, protocol_version=opts.protocol_version, env=env,
                    inherit_env=opts.inherit_env, headers=headers, auth=auth,
                    url_elicitation=_cli_url_elicitation) as client:
            return _COMMANDS[opts.command][2](client, parsed, opts.json)
    except (ConnectionClosed, RequestTimeout) as e:
        status, message = 3, str(e)  # (with the server's last stderr lines, when it has some)
    except HttpError as e:
        status, message = 3 if isinstance(e, AuthRequired) or e.status >= 500 else 1, str(e)
    except McpError as e:
        status, message = 1, str(e)
    except ValueError as e:  # arguments the client refused (a header, the environment...)
        status, message = 2, "error: %s" % e
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug of ours: still one line, never a traceback
        status, message = 1, "internal error (%s): %s" % (type(e).__name__, e)
    print("mcp_min: %s" % message, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
