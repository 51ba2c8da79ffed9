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
I/O (message building, ``_Request`` and ``Future``, ``_Dispatcher``, which owns request ids, the
pending requests and the subscriptions, and routes what arrives, and
``_Extension``, the interface add-ons plug in through); pure protocol helpers and
the framing on bytes (``_LineSplitter``: stdio's lines, and the lines of event
streams, which ``_SseParser`` makes events of; a line that exceeds
MAX_MESSAGE_BYTES is dropped as it grows);
transports behind one interface (``_Transport``: stdio, the stdio framing over
the caller's own streams, Streamable HTTP, legacy HTTP+SSE; every HTTP byte goes
through ``_HttpEngine``); ``_Session`` (version negotiation, sending, settling
answers) and ``_Inbox`` (what the server sends unasked); ``Client``.  Then the
add-ons, in sections of their own that the layers above never name: skills
(``_Skills``, SEP-2640), output validation (``_Validation`` over a JSON Schema
validator: tool output, elicitation answers) and tasks (``_Tasks``, ``Task``:
tool calls that run in the background).  Each of those three sections ends by
appending its class to ``_EXTENSIONS``; every session makes one of each and
meets them only through the hooks of ``_Extension`` -- what they declare, the
results they claim and how those finish, what they check, the notifications and
lists they take -- folded once by the methods they watch; ``Client`` reaches one
only as ``session.extension(kind)``.  After them come the add-ons that need no
hook: ``Group`` (many servers at once, over ``Client``), model tools (the tools
in a model provider's format, and the calls the model asks for, over ``Client``
and ``Group``) and the auth plug-in (``OAuth``, a transport's ``auth=``
object); last, the CLI.

Threads.  stdio: ``mcp_min-reader-<pid>`` reads the server's stdout and routes
every message; ``mcp_min-stderr-<pid>`` keeps the tail of its stderr (on Windows
``mcp_min-writer-<pid>`` writes to its stdin, and a job object holds its process
tree so that close() can end it whole).  Over the caller's streams
(``Client.over``) ``mcp_min-reader-streams`` reads and ``mcp_min-writer-streams``
writes.  A ``Group`` connects, lists and closes on one ``mcp_min-group-<name>``
thread per server.  HTTP has
no reader: the thread that POSTs a request reads its answer (JSON or SSE) and
routes it -- the caller's own thread in ``call()``, one ``mcp_min-http-<id>``
thread per ``submit()`` (``mcp_min-sse-post-<id>`` over legacy HTTP+SSE).
Server-initiated streams have their own reader (``mcp_min-get-stream``,
``mcp_min-sse``).  A browser login (``OAuth``) catches its redirect on
``mcp_min-oauth-callback``, one ``mcp_min-oauth-connection`` thread per
connection to it.  User code never runs on a reader:
notifications, progress, logs and stderr lines run in order on
``mcp_min-events``; server requests on up to 8 ``mcp_min-answer`` threads (then
queued on ``mcp_min-answers``), pings on ``mcp_min-ping``; cancellations we send
without waiting go out on ``mcp_min-courier``.  A submitted call that became a
task is followed on ``mcp_min-task-<id>``, a submitted request whose answer
needs more round trips on ``mcp_min-settle-<id>``; ``mcp_min-deadlines`` (one
per process, alive while an HTTP client is open or a request is watched) cuts
HTTP requests that outlive their deadline, and has ``mcp_min-expire-<id>`` end a
submitted request with a done callback (asyncio's) that nobody waits for in
``result()``.  A Future's done callbacks run on ``mcp_min-events``.  Every
thread starts in ``_start_thread``, and whoever starts one joins it in close(): a
transport its own, the client's ``_Threads`` (answers, task followers, settling,
expiry) the rest, then the workers.  So none is left once
close() returns, nor a descriptor or a child process; close() stays bounded (each
wait CLOSE_GRACE at most) and leaves what it cannot end, with a warning in the
log: a callback of the user's still running after that wait (its thread finishes
it; what it sends then is dropped), and over ``Client.over`` pipes a write blocked
on a peer that stopped reading or a reader whose peer never ends its output (no
thread can end such a blocking call, and a descriptor still in use is never
closed: its number could be reused under the blocked call).  A socket is shut
down instead, which ends both.

Settling.  A request (a ``_Request``; a submitted one is a ``Future``, also a
``concurrent.futures.Future``, whose state -- what ``wait()``, ``as_completed()``
and asyncio read -- only changes through the base class's public methods, once
the outcome is known; ``call()`` waits on a bare ``_Request``, which nobody else
sees, so it keeps no such state) is a one-slot mailbox: the routing thread puts
the raw answer in it; ``result()`` takes it on the waiting thread and only there
turns it into a value.  So the session's repeats (a new
HTTP session after the old one was found gone, a fresh tools/list after -32020)
and the input rounds of 2026-07-28 run on the caller's thread, never on a
reader.  The value is what the request's ``finish(future, result)`` makes of the
result, once the add-ons that watch the method checked it (output validation).
An add-on may claim the result first (``_Extension.claim``, asked cheaply, also
on the routing thread): its finish makes the value instead -- the tasks add-on
claims a tool call's result that announces a task, follows the task, and hands
its final result back to be checked and finished -- so settling itself knows
nothing of tasks.  ``done()`` means what it
means in ``concurrent.futures`` (``result()`` returns at once): an answer that
needs such round trips makes a submitted Future done only after they ran on
``mcp_min-settle-<id>``, since nobody may be waiting to run them; any other
answer to a submitted request is settled on ``mcp_min-events`` (after the
progress that came before it) unless a waiting thread gets there first.  An
error that ended a request (a cancellation, a lost connection) needs no
settling: the Future is done with it where it is put.  A timeout of 0 or less
sends nothing: the Future is done at once with RequestTimeout.  Waiters wait on
a latch (a lock held until the answer or the outcome is in), not on
``queue.SimpleQueue``: on CPython 3.8 - 3.12 a timed ``SimpleQueue.get`` can
block forever when its timeout runs out between its two internal lock attempts
(seen here: about once in a few thousand waits on a deadline about to pass), and
a deadline must always hold.
The deadline wins (``_in_time``): whatever is routed to a request after its
deadline -- a result, an error a server sends the moment its request is cut or
cancelled, an HTTP error status -- settles it as RequestTimeout; an answer routed
before the deadline wins, however late the caller looks at it.  Only the loss of
the whole connection stays ConnectionClosed (what every later call raises).  On
the way out too: a request, notification or answer whose deadline passes while it
is still being written raises RequestTimeout, not the broken pipe of the connection
the deadline thread cut (``_network_error``); over stdio and ``Client.over`` such a
write has put part of a message out, so mcp_min drops the connection: the writer
gets RequestTimeout, every later call ConnectionClosed.

Era policy.  ``protocol_version="auto"`` first asks ``server/discover``.  A
result listing versions picks the newest common one; 2026-07-28 is stateless
(every request carries our ``_meta``).  What the probe meets otherwise is judged
by one table (``_era_verdict``): it is a handshake-era server when the answer is
what an older server does with a method it does not know -- any JSON-RPC error
but the 2026-07-28 ones, whatever the HTTP status (some answer 500 with one);
over HTTP a 4xx other than 401/403 (no such route, method or session) or a 2xx
that is no MCP answer; silence for ``probe_timeout`` (at most PROBE_SHARE of the
connect timeout); over stdio an exit, also one after that wait and before the
answer to ``initialize`` (a server slower to start than the wait).  Then mcp_min
restarts a dead stdio server once and sends ``initialize``; waiting longer would
slow every old server down.  What is about the server's state, not its era, is
raised as it is: authorization failures (AuthRequired, AuthError, HTTP 401/403:
the user would log in a second time for initialize), and over HTTP a connection
refused, reset or cut and a 5xx whose body is no JSON-RPC error (an outage or a
proxy; initialize would only meet it again, and its error would name the wrong
cause).

HTTP.  One engine (``_HttpEngine``) on connections of its own (``_Conn``,
``http.client`` underneath): proxies from the environment as urllib reads them
(an HTTP proxy gets absolute URLs; https goes through a CONNECT tunnel), one TLS
context per client (``verify=``, ``cert=``, ``ssl_context=``; OAuth's traffic
too), kept-alive connections (a new TCP connection per call would triple a
call's cost), redirects followed only for GET with credentials dropped when they
leave the origin (scheme, host, port): every header of ``headers=``, everything the
auth plug-in gave whatever its name, the secret-looking names (the wire trace shows
them as <redacted>); one set of URL rules (origin, loopback, https-or-loopback), and
a deadline thread that cuts a connection whose request outlived its deadline,
byte trickles included.  A handshake-era session the server forgets (a 404 to any
message that carried its id: a request, a notification -- the handshake's
notifications/initialized too -- or our answer to a server request) is replaced by
one new session (``_Session._renew_session``), and that message goes out once more
in it; the internal ``_SessionExpired`` never reaches the user.
"""

from __future__ import annotations  # annotations stay text: nothing from typing is imported at run time

import base64
import collections
import concurrent.futures  # Future's base class: about 1 ms, no thread, no executor
import itertools
import json
import logging
import math
import os
import re
import sys
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

TYPE_CHECKING = False  # type checkers take this name as True (as typing.TYPE_CHECKING), the interpreter never
if TYPE_CHECKING:
    from typing import (IO, Any, BinaryIO, Callable, Deque, Dict, FrozenSet, Generator, Iterable, Iterator, List,
                        Mapping, NoReturn, Optional, Pattern, Sequence, Set, TextIO, Tuple, Type, TypeVar, Union)

    _Json = Dict[str, Any]  # a JSON object: params, results, capabilities
    _Progress = Callable[[Any, Any, Any], object]  # f(progress, total, message)


# Python 3.6 and 3.7 cannot compile this file.  The first line they stop at is the next one, so it is
# the line their SyntaxError shows:
def _python_3_8_or_newer(_: object = None, /) -> None:  # SyntaxError here? mcp_min needs Python 3.8 or newer.
    """Positional-only parameters (``/``, as in ``Client.call``) are Python 3.8 syntax."""

__all__ = [
    "Client", "Future", "Subscription", "McpError", "RequestError", "ResourceNotFound",
    "ToolError", "OutputValidationError", "ConnectionClosed", "RequestTimeout", "RequestCancelled", "HttpError",
    "AuthRequired", "AuthError", "SkillVerificationError", "OAuth", "Task", "UrlElicitationRequired", "Group",
    "main",
]

_log = logging.getLogger("mcp_min")
_server_log = logging.getLogger("mcp_min.server")

if TYPE_CHECKING:  # more names for type checkers (the block above is shared by every section)
    from types import ModuleType
    from typing import overload


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
PROBE_SHARE = 0.5  # at most this share of the connect timeout goes to server/discover (not pinned),
#                    so a server that ignores it still has the rest to shake hands in.
CLOSE_GRACE = 2.0  # seconds a server gets after stdin EOF, then again after SIGTERM.
STDERR_DRAIN = 2.0  # seconds the stderr reader gets to read a gone server's last lines for the error
#   (on a loaded machine half a second was too little); only a child of the server still holding
#   the pipe makes us wait it all.
EXIT_CODE_WAIT = 1.0  # seconds a server whose stdout ended gets to exit, so the error can carry its exit
#                       code; one that lives on without its stdout gets "closed its stdout" instead.
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
KEEP_ALIVE_MARGIN = 2.0  # seconds: a connection is reused only until this long before the idle timeout its
#                          server announced (Keep-Alive: timeout=N; as undici, Node's fetch).  A loaded server
#                          may run that timer before reading a request sent in time: reset, the request unread.
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
RESET_TOTAL_FACTOR = 10  # reset_on_progress without max_total: at most this many timeouts in all (the spec
#                          asks for a hard maximum even when progress keeps coming).
TASK_CANCEL_TIMEOUT = 5.0  # seconds for the tasks/cancel of a call that gives up on its task.
# JSON Schema checks (tool output, elicitation answers).  Real schemas have tens of nodes and
# a few levels; these bound what a hostile server can make one check cost.
SCHEMA_MAX_NODES = 10000  # subschemas in one schema document.
SCHEMA_MAX_DEPTH = 128  # nested subschemas, in the document and in one check ($ref hops and
#   value levels included): each level is two Python frames, well inside the recursion limit.
SCHEMA_MAX_STEPS = 1000000  # subschemas one check visits (about a second of Python): ends
#   $ref cycles and anyOf-of-anyOf blow-ups; a result of a million values still fits.
SCHEMA_PATTERN_CHARS = 1000  # one pattern; real ones are a few dozen characters.
SCHEMA_PATTERN_WORK = 2 * 10 ** 7  # regex steps one pattern check may take (see _translate_pattern).
SCHEMA_MAX_SECONDS = 1.0  # one check's time, all of its work counted (each search bounded is not enough:
#   a result of many strings adds them up).  About what SCHEMA_MAX_STEPS take; real outputs are checked in
#   micro- to milliseconds.  Past it the value passes unchecked with a warning (see _Unchecked): a verdict
#   must not depend on how busy this machine is.  A search is never cut, so a check may end one search later.
SCHEMA_CLOCK_STEPS = 1000  # subschema visits between two looks at the clock (a few ms, with what a step
#   may lead to uncounted: see SCHEMA_SMALL): a look is a system call, too dear for every visit.
SCHEMA_CLOCK_WORK = 1 << 18  # other work between two looks at the clock, in regex steps (about 5 ms), where
#   a search counts its worst case (n ** d, see _translate_pattern) ...
SCHEMA_VISIT_WORK = 32  # ... and each value, property or branch visited counts this (about as long).
SCHEMA_SMALL = 16  # an object of at most this many properties (and required names), or a string of at most
#   SCHEMA_SMALL * SCHEMA_VISIT_WORK characters under a pattern of one repeat, counts no work where it is
#   checked: counting would cost a small output's check a tenth of its time, and what it leads to is at most
#   that many visits, each counted on (a subschema with subschemas counts a step).
_TRACE_CHARS = 4000  # a traced message longer than this is shortened in the log.
_SHOWN_JSON_CHARS = 100000  # JSON made for an error message or a log line stops here (and is shortened where shown).
_EXCERPT_CHARS = 300  # what a message quotes of a body, a result, error data, a description, a line not JSON.
_SHOWN_CHARS = 200  # what a log line or an error quotes of a message, an answer, a URL or a reference.
_QUOTE_CHARS = 100  # a name, key, pattern, cursor or small value quoted inside a sentence.
_COLUMN_CHARS = 80  # one value of a line that shows several (a table row, two differing fields).
_SERVER_ERROR_CHARS = 500  # an error the server sent unasked, in the log.
_ERROR_BODY_BYTES = 2000  # of a non-2xx body, decoded as HttpError.body (its message quotes an excerpt).
_HTML_SNIFF_CHARS = 1000  # the start of a body searched for an HTML tag: an error page, not an answer.
_MAX_ROUTES = HTTP_POOL_SIZE * 8  # URLs whose _Route is kept: a bounded memo (URLs are few: the server's, OAuth's).
_LEAST_TIMEOUT = 0.001  # seconds: a task request's timeout once its deadline has passed (it times out at once).
_MAX_EXPIRES_IN = 1e9  # seconds (about 31 years): a token's larger expires_in is taken as none.
_LISTENER_POLL = 0.1  # seconds between the OAuth redirect listener's looks for shutdown(): what close() waits.

# Skills (SEP-2640).  A skill past the SEP's limits (servers should serve no more) is refused
# before any of its files is read; its frontmatter is parsed under bounds, hostile or not.
SKILL_MAX_FILES = 512  # files of one skill.
SKILL_MAX_BYTES = 16 * 1024 * 1024  # the sizes of a skill's files, added up.
FRONTMATTER_MAX_CHARS = 64 * 1024  # YAML frontmatter of a SKILL.md; its usual fields take under 2 KiB.
FRONTMATTER_MAX_DEPTH = 16  # lists and maps nested in it: one recursion of the parser each.
FRONTMATTER_MAX_DIGITS = 100  # one number in it: int() is quadratic in the digits (3.11+ refuses 4300).

_META_PREFIX = "io.modelcontextprotocol/"
_RELATED_TASK = _META_PREFIX + "related-task"
_LOG_LEVEL = _META_PREFIX + "logLevel"  # 2026-07-28: a request's wish for log messages
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")  # RFC 5424 order
_TRACE_KEYS = ("traceparent", "tracestate", "baggage")  # W3C trace context in _meta (SEP-414)
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
# Our answer to a server request we do not handle; coming back as the answer to our own
# initialize, it says the program echoes what it reads (see _connect_hint).
_NOT_HANDLED = "mcp_min client does not handle %s"


class McpError(Exception):
    """Base class of every error mcp_min raises.

    Every subclass pickles and copies with its attributes (so it crosses
    ``multiprocessing`` and ``concurrent.futures`` process pools intact).
    ``hint`` says what to try where mcp_min knows (a failure to connect: see
    _connect_hint; a method the server does not offer: _not_offered); it is also
    the message's last line.  None otherwise.
    """

    hint: str | None = None

    def __reduce__(self) -> Any:
        # The default rebuilds an exception from ``args`` alone, which fails for
        # subclasses whose __init__ takes other arguments; restore the object instead.
        return _rebuild_error, (type(self), self.args), self.__dict__


def _rebuild_error(cls: Type[McpError], args: Tuple[Any, ...]) -> McpError:
    error = cls.__new__(cls)
    error.args = args
    return error


def _hinted(error: McpError, hint: str | None) -> None:
    """Put what to try (``hint``, if any) into ``error``: its ``hint``, and its message's last
    line, so a Python caller reads what the CLI prints (the message, as it is)."""
    if hint:
        error.hint = hint
        error.args = ("%s\n  hint: %s" % (error.args[0] if error.args else "", hint),) + error.args[1:]


class RequestError(McpError):
    """The server answered a request with a JSON-RPC error.

    Attributes: ``code`` (int), ``message`` (str), ``data`` (any JSON or None),
    ``method`` (the request's method).
    """

    def __init__(self, code: int, message: str, data: Any = None, method: str | None = None) -> None:
        self.code, self.message, self.data, self.method = code, message, data, method
        text = "%s (code %s)" % (message, code)
        if method:
            text = "%s failed: %s" % (method, text)
        if data is not None:
            text += ": " + _shorten(_dumps_for_humans(data), _EXCERPT_CHARS)
        McpError.__init__(self, text)


class ResourceNotFound(RequestError):
    """``read_resource`` named a URI the server does not have (-32002 or -32602)."""


class UrlElicitationRequired(RequestError):
    """-32042 (2025-11-25): the server wants the user to visit one or more URLs first.

    ``elicitations`` lists them: dicts with ``mode`` ("url"), ``elicitationId``,
    ``url`` and ``message``.  With ``Client(url_elicitation=f)`` mcp_min runs ``f``
    for each and repeats the request once instead of raising this.
    """

    def __init__(self, code: int, message: str, data: Any = None, method: str | None = None) -> None:
        RequestError.__init__(self, code, message, data, method)
        found = data.get("elicitations") if isinstance(data, dict) else None
        self.elicitations: List[Dict[str, Any]] = [e for e in found if isinstance(e, dict)] \
            if isinstance(found, list) else []


class ToolError(McpError):
    """A tool ran and reported failure (``isError: true``); ``.result`` is the raw result."""

    def __init__(self, message: str, result: Dict[str, Any]) -> None:
        McpError.__init__(self, message)
        self.result = result


class OutputValidationError(ToolError):
    """A tool's ``structuredContent`` does not match the ``outputSchema`` its tools/list entry
    declares (or is missing); the call returns nothing.

    Attributes: ``tool`` (its name), ``pointer`` (the JSON pointer, inside structuredContent,
    of the first difference; "" for the whole value), ``problem`` (what is wrong there) and
    ``result`` (the raw CallToolResult).
    """

    def __init__(self, tool: str, pointer: str, problem: str, result: Dict[str, Any]) -> None:
        self.tool, self.pointer, self.problem = tool, pointer, problem
        ToolError.__init__(self, "tool %r: structuredContent%s does not match its outputSchema: %s"
                           % (tool, pointer, problem), result)


class ConnectionClosed(McpError):
    """The connection to the server is gone, or could not be made.

    ``returncode`` is the stdio server's exit code (None when unknown) and
    ``stderr`` the last lines it wrote to stderr.
    """

    def __init__(self, message: str, returncode: int | None = None, stderr: Iterable[str] = (),
                 detail: str = "") -> None:
        McpError.__init__(self, message + detail)
        self.returncode = returncode
        self.stderr = list(stderr)
        self.summary, self.detail = message, detail  # what happened; the stderr excerpt

    # True when mcp_min dropped the connection itself because a write outlived its deadline:
    # to a request whose deadline passed, that loss is a timeout (see _in_time).
    _by_deadline = False


if sys.version_info >= (3, 11):
    _Timeout = TimeoutError  # concurrent.futures.TimeoutError is the builtin one from 3.11
else:
    class _Timeout(concurrent.futures.TimeoutError, TimeoutError):
        """Both timeouts of Python 3.8 - 3.10: what ``Future.result()`` raises, and the builtin."""


class RequestTimeout(McpError, _Timeout):
    """No answer arrived in time.  When the request's own deadline passed, it was
    cancelled; the client stays usable either way.  Raised by Client() (no answer
    while connecting), ``stderr`` holds the last lines a stdio server wrote.

    ``method`` names the request that got no answer (None for a timeout of something
    else: a write, a task's wait, OAuth).

    Also a ``TimeoutError`` and a ``concurrent.futures.TimeoutError`` (two classes before
    Python 3.11): what ``Future.result(timeout)`` raises in ``concurrent.futures``."""

    stderr: Sequence[str] = ()  # (a request's own timeout knows no stderr)
    method: str | None = None  # (set by _no_answer, where a request's wait ends)


def _no_answer(method: str, seconds: float, how: str = "") -> RequestTimeout:
    """The RequestTimeout of a request that got no answer within ``seconds``, marked with its
    method (what _connect_hint looks for: the probe's or initialize's); ``how`` ends the message."""
    error = RequestTimeout("no answer to %s within %.3g s%s" % (method, seconds, how))
    error.method = method
    return error


class RequestCancelled(McpError, concurrent.futures.CancelledError):
    """The request was cancelled: with ``Future.cancel()`` (then ``cancelled()`` is true),
    or, for a call that became a task, by the server.

    Also a ``concurrent.futures.CancelledError``, what ``concurrent.futures`` raises for a
    cancelled Future (an ``Exception``; asyncio's own CancelledError is another class)."""

    # True when Future.cancel() made it: only then is the Future cancelled(), as in
    # concurrent.futures (a task the server cancelled is an outcome, an error).
    _by_cancel = False


class HttpError(McpError):
    """An HTTP request failed with a status the protocol gives no other meaning.

    Attributes: ``url``, ``status`` (int), ``body`` (the first part of the body, str).
    """

    def __init__(self, url: str, status: int, body: str = "", reason: str = "") -> None:
        self.url, self.status, self.body = url, status, body
        text = "HTTP %s %sfrom %s" % (status, reason + " " if reason else "", url)
        shown = _body_excerpt(body)
        if shown:
            text += ": " + shown
        McpError.__init__(self, text)


class AuthRequired(HttpError):
    """The server wants (other) credentials: HTTP 401, or 403 with insufficient scope.

    ``challenge`` holds the ``WWW-Authenticate`` parameters; the common ones
    are also attributes: ``resource_metadata`` (URL of the protected resource
    metadata), ``scope``, ``error``, ``error_description``.
    """

    def __init__(self, url: str, status: int, body: str, challenge: Dict[str, str]) -> None:
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

    def __init__(self, message: str, error: str | None = None, error_description: str | None = None) -> None:
        McpError.__init__(self, message)
        self.error, self.error_description = error, error_description


class SkillVerificationError(McpError):
    """``read_skill`` refused a skill that does not match its entry; nothing of it is returned.

    Attributes: ``skill`` (URI of its SKILL.md), ``uri`` (the file at fault, or None),
    ``problem`` (``"entry"``, ``"dynamic"``, ``"limit"``, ``"missing"``, ``"content"``,
    ``"size"``, ``"digest"`` or ``"frontmatter"``), ``detail``, and ``expected`` and
    ``actual`` where that applies (for ``"frontmatter"``, dicts of the fields that differ).
    """

    def __init__(self, skill: str | None, uri: str | None, problem: str, detail: str, expected: Any = None,
                 actual: Any = None) -> None:
        self.skill, self.uri, self.problem, self.detail = skill, uri, problem, detail
        self.expected, self.actual = expected, actual
        text = "%s: %s" % (uri or skill or "skill entry", detail)
        McpError.__init__(self, text + (" (skill %s)" % skill if skill and uri and uri != skill else ""))


class _SessionExpired(ConnectionClosed):
    """Internal: the HTTP session a message was sent in (``session_id``) is gone -- the
    server said so (see _session_gone), or it was found gone before this one went out.
    It never reaches the user: the session starts one new session and repeats the message;
    when that does not help either, the user gets ``public()``."""

    def __init__(self, message: str, session_id: str | None) -> None:
        ConnectionClosed.__init__(self, message)
        self.session_id = session_id

    def public(self) -> ConnectionClosed:
        """The ConnectionClosed the user sees: the session was gone again in the new one."""
        return ConnectionClosed("%s (again, in the new session mcp_min started for it; the next request "
                                "starts another)" % self.summary)


class _MissingModule(McpError, ImportError):
    """A standard-library module this Python lacks or blocks (a stripped or sandboxed
    interpreter): ``name`` is that module, ``needed_by`` what needs it.  Expected there, so it
    is raised as it is and never logged; an ImportError too (``except ImportError`` still
    catches what a missing ``subprocess`` raised before)."""

    def __init__(self, name: str, needed_by: str, via: str | None = None) -> None:
        McpError.__init__(self, "this Python has no %r module%s, which %s needs" % (
            name, " (%s imports it)" % via if via and via != name else "", needed_by))
        self.name, self.needed_by, self.via = name, needed_by, via

    def __reduce__(self) -> Tuple[Type[_MissingModule], Tuple[str | None, str, str | None]]:
        # (``name`` is ImportError's slot, not in __dict__)
        return _MissingModule, (self.name, self.needed_by, self.via)


def _stdlib(name: str, needed_by: str) -> ModuleType:
    """The standard-library module ``name`` imported, or _MissingModule naming the module that is
    missing: ``name`` or one it imports (urllib.request needs tempfile, http.client email).  Every
    import that a stripped Python can lack goes through here (or follows a check made here)."""
    try:
        __import__(name)
    except ImportError as e:
        missing = e.name or name
        blocked = [p for p in itertools.accumulate(missing.split("."), "{}.{}".format) if
                   p in sys.modules and sys.modules[p] is None]  # (email blocked: e.name is email.parser)
        raise _MissingModule(blocked[0] if blocked else missing, needed_by, name) from None
    return sys.modules[name]


def _body_excerpt(body: str) -> str:
    """What an error message shows of an HTTP body: one line of it; a web page by its title (a
    proxy's or a web server's error page would otherwise fill the message with markup)."""
    text = body.strip()
    if text[:1] == "<" and re.search(r"<(!doctype\s+html|html|head|body)\b", text[:_HTML_SNIFF_CHARS], re.I):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        if title and title.group(1).strip():
            return 'an HTML page titled "%s"' % _shorten(" ".join(title.group(1).split()), _QUOTE_CHARS)
        words = re.sub(r"<[^>]*>", " ", re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", text)).split()
        return "an HTML page" + (': "%s"' % _shorten(" ".join(words), _QUOTE_CHARS) if words else "")
    return _shorten(" ".join(text.split()), _EXCERPT_CHARS)


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return "%s... (%d more characters)" % (text[:limit], len(text) - limit)


# What drives a terminal instead of showing on it: C0 controls (ESC starts CSI and OSC sequences:
# clearing, clipboard writes, hidden links; BEL; a bare CR overwrites the line), DEL, C1 controls
# (U+009B is an 8-bit CSI) and the bidi controls, which reorder what is shown (U+202E...).
# Regular expressions (compiled once, by re's cache, where they are first used); _LINES keeps tab,
# newline and CRLF: what multi-line text is made of.
_TERMINAL_CONTROLS = r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
_TERMINAL_CONTROLS_LINES = r"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"


def _visible(text: object, lines: bool = False, as_json: bool = False) -> str:
    """``text`` (server text: names, descriptions, messages, content) made safe to show on a
    terminal: each terminal control written as Python's repr() writes it (``\\x1b``, ``\\r``,
    ``\\x9b``, ``\\u202e``); ``lines`` keeps tab, newline and CRLF.  ``as_json``: ``text`` is JSON
    (json.dumps escapes C0 but leaves C1 and bidi controls raw): those become ``\\u`` escapes, so it
    stays the same JSON.  The one function the command line shows server text through."""
    if as_json:
        return re.sub(_TERMINAL_CONTROLS_LINES, lambda m: "\\u%04x" % ord(m.group()), str(text))
    return re.sub(_TERMINAL_CONTROLS_LINES if lines else _TERMINAL_CONTROLS, lambda m: repr(m.group())[1:-1],
                  str(text))


def _to_stderr(text: str) -> None:
    """``text`` to sys.stderr in one write, flushed; dropped where there is no stderr to write to:
    None (pythonw.exe, a service, an embedder) or a closed one.  Never print(file=sys.stderr),
    which writes to stdout when sys.stderr is None."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):  # (a descriptor closed under it; a closed file): nowhere left to say it
        pass


_dumps_shown = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # (Infinity and NaN too)


def _dumps_for_humans(value: object) -> str:
    """JSON for an error message or a log line; never fails (server data can be anything, nested
    past the recursion limit too: then json.dumps and repr() both fail, _glimpse does not)."""
    try:
        return _dumps_shown(value)[:_SHOWN_JSON_CHARS]
    except (ValueError, TypeError, RecursionError):
        return _glimpse(value, _SHOWN_JSON_CHARS)


def _glimpse(value: object, limit: int | None = None) -> str:
    """``value`` as compact JSON, cut after ``limit`` characters (None: whole), then "...".  It
    walks with a list, not recursion, and only as far as it shows: a value may be huge, or nested
    past the recursion limit.  What JSON cannot carry shows as its repr()."""
    out: List[str] = []
    size = 0
    stack: List[Iterator[str | Tuple[object]]] = [iter(((value,),))]
    while stack and (limit is None or size <= limit):
        part = next(stack[-1], None)  # text, or a 1-tuple: a value to show
        if part is None:
            stack.pop()
            continue
        if isinstance(part, tuple):
            item = part[0]
            if isinstance(item, (dict, list, tuple)):
                stack.append(_glimpse_parts(item))
                continue
            part = _scalar_text(item[:limit + 1] if limit is not None and isinstance(item, str) else item)
        out.append(part)
        size += len(part)
    text = "".join(out)
    return text if limit is None or size <= limit else text[:limit] + "..."


def _glimpse_parts(item: Dict[object, object] | List[object] | Tuple[object, ...]) -> Iterator[str | Tuple[object]]:
    """A container's text and members, in order, for _glimpse (members as 1-tuples)."""
    if isinstance(item, dict):
        yield "{"
        for i, (key, member) in enumerate(item.items()):
            yield ("," if i else "") + _scalar_text(key if isinstance(key, str) else str(key)) + ":"
            yield (member,)
        yield "}"
    else:
        yield "["
        for i, member in enumerate(item):
            if i:
                yield ","
            yield (member,)
        yield "]"


def _scalar_text(value: object) -> str:
    try:
        return _dumps_shown(value)
    except (ValueError, TypeError):
        try:
            return repr(value)
        except Exception:  # (anything a callback gave: its repr may fail too)
            return "<%s>" % type(value).__name__


# ---------------------------------------------------------------------------
# JSON-RPC core: messages, encoding, deadlines, futures, routing.  No I/O here.
# ---------------------------------------------------------------------------

# UTF-8 on the wire (ASCII escapes would triple the size of non-Latin text).  Framing stays
# safe: JSON escapes every control character, so no raw newline can appear in a message,
# and U+2028/U+2029 are not line ends for a byte-level reader.  NaN and Infinity are not JSON.
_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_dumps_ascii = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode  # escapes lone surrogates
_decode_str = json.JSONDecoder().decode  # takes str; json.loads would also sniff the encoding of bytes


def _to_json(value: object) -> str:
    """``value`` as JSON text; ValueError (never a bare token) for what JSON cannot carry."""
    try:
        return _dumps(value)
    except ValueError as e:
        raise ValueError("cannot send %s: NaN and Infinity are not JSON" % _shorten(repr(value), _QUOTE_CHARS)) \
            if "not JSON compliant" in str(e) else e
    except RecursionError:
        raise ValueError("cannot send a value nested this deeply")


def _encode_line(msg: _Json) -> bytes:
    """One message as one line of bytes (stdio framing; HTTP bodies use the same bytes)."""
    try:
        return (_dumps(msg) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # see _utf8
        return (_dumps_ascii(msg) + "\n").encode("ascii")
    except (ValueError, RecursionError):
        _to_json(msg)  # raises the error that says what JSON cannot carry
        raise


def _decode(data: bytes | str) -> Any:
    """A message from bytes; ValueError for anything that is not JSON text, including input
    nested too deeply for the decoder (which would otherwise kill the reading thread)."""
    try:
        return _decode_str(data.decode("utf-8") if isinstance(data, bytes) else data)
    except RecursionError:
        raise ValueError("JSON nested too deeply")


def _message(method: str, params: _Json | None, request_id: int | None = None) -> _Json:
    """A request, or without ``request_id`` a notification."""
    msg: _Json = {"jsonrpc": "2.0", "method": method} if request_id is None else {
        "jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def _response(request_id: int | str, result: Any) -> _Json:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error_response(request_id: int | str, code: int, message: str) -> _Json:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _is_id(value: object) -> bool:
    # JSON-RPC ids are strings or integers; compare by exact JSON type (1 != "1", and
    # neither true nor 1.0 may stand for 1).
    return type(value) is int or type(value) is str


def _error_from(msg: _Json, method: str | None = None) -> McpError:
    """The exception for an error answer."""
    err = msg.get("error")
    if not isinstance(err, dict):
        return McpError("malformed error answer to %s: %s" % (method, _shorten(_dumps_for_humans(msg), _SHOWN_CHARS)))
    code = err.get("code")
    message = err.get("message")
    cls = UrlElicitationRequired if code == URL_ELICITATION_REQUIRED else RequestError
    return cls(code if type(code) is int else INTERNAL_ERROR,
               message if isinstance(message, str) else _dumps_for_humans(message), err.get("data"), method)


def _result_of(method: str, answer: _Json | McpError) -> _Json:
    """The result dict of an answer (a message, or the McpError that ended the request); raises
    the answer's error."""
    if isinstance(answer, BaseException):
        raise answer
    if "error" in answer:
        raise _error_from(answer, method)
    result = answer.get("result")
    if not isinstance(result, dict):
        raise McpError("%s answered with a result that is not an object: %s"
                       % (method, _shorten(_dumps_for_humans(result), _SHOWN_CHARS)))
    return result


def _trace(direction: str, msg: object) -> None:
    """The wire trace: one DEBUG line per message (credentials never travel in messages)."""
    if not _log.isEnabledFor(logging.DEBUG):
        return
    if isinstance(msg, bytes):
        text = msg.decode("utf-8", "replace").rstrip("\n")
    else:
        text = _dumps_for_humans(msg)
    _log.debug("%s %s", direction, _shorten(text, _TRACE_CHARS))


# -- deadlines ---------------------------------------------------------------
# A deadline is a time.monotonic() value, or None for "no deadline".


class _Default(object):
    """The type of ``DEFAULT``: "the caller gave no timeout", so the client's applies."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFAULT"

    def __reduce__(self) -> str:
        return "_DEFAULT"


_DEFAULT: Any = _Default()  # ``timeout=DEFAULT`` in signatures; typed Any so ``timeout: float | None = _DEFAULT``


def _timeout_arg(value: object, default: float | None = None, name: str = "timeout") -> float | None:
    """Check a timeout argument.  Returns seconds (0.0: no time left), or None for no deadline.

    Python's conventions (as ``threading``, ``queue`` and ``concurrent.futures``): omitted
    (``_DEFAULT``) -> ``default``; ``None`` or infinity -> None; 0 or less (a deadline already
    passed, as in ``deadline - now``) -> 0.0; a positive number -> itself, at most LONGEST_WAIT;
    NaN, a bool or a non-number -> ValueError."""
    if value is _DEFAULT:
        return default
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError("%s must be a number of seconds or None, not %r" % (name, value))
    if value <= 0:
        return 0.0
    return None if math.isinf(value) else min(float(value), LONGEST_WAIT)


if TYPE_CHECKING:  # a number gives a number: callers that know they have one need no check
    @overload
    def _deadline_after(seconds: float) -> float: ...
    @overload
    def _deadline_after(seconds: float | None) -> float | None: ...


def _deadline_after(seconds: float | None) -> float | None:
    """The deadline ``seconds`` from now, or None (no deadline) for None."""
    return None if seconds is None else time.monotonic() + seconds


def _deadline_or(deadline: float | None, seconds: float) -> float:
    """``deadline``, or when there is none, the one ``seconds`` from now (a step that must
    end even when its request may wait for ever: a write, a connect, the answer's start)."""
    return time.monotonic() + seconds if deadline is None else deadline


def _expired(deadline: float | None) -> bool:
    """Whether ``deadline`` has come (never, for None)."""
    return deadline is not None and time.monotonic() >= deadline


if TYPE_CHECKING:  # (as for _deadline_after)
    @overload
    def _remaining(deadline: float) -> float: ...
    @overload
    def _remaining(deadline: float | None) -> float | None: ...


def _remaining(deadline: float | None) -> float | None:
    """Seconds left before ``deadline`` (never negative), or None when there is none."""
    if deadline is None:
        return None
    return min(max(deadline - time.monotonic(), 0.0), LONGEST_WAIT)


# -- the process ------------------------------------------------------------------
# A client belongs to the process that made it: in a forked child it must not signal the
# parent's server, end its HTTP session, or wait on locks a parent's thread held at the fork.

_pid = os.getpid()  # this process (kept here: os.getpid() is a system call, and this is checked per send)


def _after_fork_in_child() -> None:
    global _pid
    _pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# -- futures -------------------------------------------------------------------

if TYPE_CHECKING:
    _FutureBase = concurrent.futures.Future[Any]
    _Outcome = Tuple[Any, Optional[McpError]]  # (value, error) of a settled request
    _R = TypeVar("_R", bound="_Request")  # a _Request or a Future: what _Session.send_request makes
else:
    _FutureBase = concurrent.futures.Future  # (subscripted at run time only from Python 3.9)


def _settles_at_once(answer: _Json | BaseException, fut: _Request | None = None) -> bool:
    """Whether ``_Session._settle`` can make an outcome of this raw answer (to ``fut``) without
    another round trip.  Not for: a forgotten HTTP session (404), a -32020 or -32042 error
    (the request is repeated), a result asking for input or one an add-on claims (a task it
    follows).  Conservative: a False only costs a submitted call a thread to settle on
    (tests/test_api.py checks both agree)."""
    if type(answer) is not dict:
        return not isinstance(answer, _SessionExpired)
    result = answer.get("result")
    if type(result) is dict:
        return result.get("resultType", "complete") == "complete" and (
            fut is None or fut._claim is None or fut._claim(fut, result) is None)
    error = answer.get("error")
    return not (type(error) is dict and error.get("code") in (HEADER_MISMATCH, URL_ELICITATION_REQUIRED))


class _Request(object):
    """The pending outcome of one request: what the session, the transports and the add-ons
    use (the answer's slot, the latch, settling once, the deadline, withdrawing).

    ``call()`` and ``request()`` wait on one of these: a request nobody else sees needs
    none of the ``concurrent.futures`` state and locks that ``Future`` (the submitted
    kind, built on this) keeps for ``wait()``, ``as_completed()`` and asyncio.
    """

    id: int
    method: str
    __slots__ = ("id", "method", "_params", "_timeout", "_deadline", "_progress", "_finish", "_cancellable",
                 "_intercept", "_claim", "_background", "_post", "_arrived", "_opened", "_answer", "_outcome",
                 "_settling", "_settle", "_withdraw", "_keepalive", "_storing", "__weakref__")

    def __init__(self, request_id: int, method: str, params: _Json | None, timeout: float | None,
                 progress: _Progress | None, settle: Callable[[_Request, Any], Any],
                 withdraw: Callable[[_Request, McpError], bool],
                 finish: Callable[[_Request, _Json], Any] | None = None, cancellable: bool = True,
                 background: _Threads | bool = False, post: Callable[..., bool] | None = None) -> None:
        self.id = request_id
        self.method = method
        self._params = params
        self._timeout = timeout  # seconds or None, for messages
        self._deadline = _deadline_after(timeout)
        self._progress = progress
        self._finish = finish  # (request, result dict) -> the caller's value (None: the dict itself)
        self._cancellable = cancellable  # initialize and the discovery probe must not be cancelled
        # (request, answer) -> True when it takes the answer over (see _Dispatcher)
        self._intercept: Callable[[_Request, _Json], bool] | None = None
        # (request, result) -> the finish of the add-on that takes a result over, or None; set by the
        # session when some add-on may claim this method's results (None: none may, nothing to ask)
        self._claim: Callable[[_Request, _Json], Callable[[_Request, _Json], Any] | None] | None = None
        # Truthy: nobody waits on it yet (a submitted Future), so it is settled off the routing
        # thread: on mcp_min-events (through ``post``), or when that takes round trips on a thread
        # of its own, owned by the client's _Threads (the session passes it), whose close() then
        # waits for that thread.
        self._background = background
        self._post = post  # (fn, *args) -> True once queued on mcp_min-events (None: run here)
        # The one slot: the answer message, or the McpError that ended the request.
        self._answer: _Json | BaseException | None = None
        self._arrived = threading.Lock()  # the latch: held until a waiter may settle (see _open)
        self._arrived.acquire()
        self._opened = False
        self._outcome: _Outcome | None = None  # (value, error) once settled: then done
        self._settling = threading.Lock()  # several threads may wait; one settles
        self._storing = threading.Lock()  # the first outcome stored stays (see _store)
        self._settle = settle  # (request, answer) -> value; may block (input rounds)
        self._withdraw = withdraw  # (request, error) -> True once it ended the request with ``error``
        self._keepalive: object = None  # the Client, while this is pending (a one-liner's client lives on)

    def __repr__(self) -> str:
        return "<mcp_min request %s %s %s>" % (self.id, self.method, "running" if self._outcome is None else "finished")

    def result(self, timeout: float | None = None) -> Any:
        """Wait for the outcome and return the value (or raise the request's McpError).

        The request's own deadline (the client's or the call's ``timeout``) always
        applies; when it passes, the request is cancelled and RequestTimeout
        raised.  A smaller ``timeout`` here only limits this wait (RequestTimeout,
        the request goes on); 0 or less looks without waiting.
        """
        value, error = self._outcome or self._settled(self._wait(timeout))
        if error is not None:
            try:
                raise error
            finally:
                # A stored error's traceback must not hold this request (or, through frames, the
                # Client that made it): such a cycle keeps a dropped client's server alive until
                # the garbage collector happens to run.
                del self, error
        return value

    def exception(self, timeout: float | None = None) -> McpError | None:
        """Wait like ``result()``; return the request's McpError (RequestCancelled when it
        was cancelled), or None when it succeeded."""
        return (self._outcome or self._settled(self._wait(timeout)))[1]

    # -- settling (the client's side) -------------------------------------------------
    def _put(self, answer: _Json | BaseException) -> None:
        # By whoever removed this request from the pending map: exactly once (a second answer
        # would be a bug elsewhere; it is ignored rather than raising on a reader thread).
        if self._answer is not None:
            return
        self._answer = answer
        if isinstance(answer, McpError) and not isinstance(answer, _SessionExpired):
            self._store((None, answer))  # what ended the request (nothing to settle): done here and now
            return
        if not self._background and self._post is not None:
            self._open()  # the caller waits (or will) in result() and settles it there, round trips and all
            return
        # Nobody may be waiting (a submitted call), or there is no mcp_min-events to settle on.  (An
        # add-on's claim matters only to an answer nobody may be waiting for: a waiter settles any.)
        if not _settles_at_once(answer, self):
            if not self._background:
                self._open()  # the caller waits next and makes the round trips
                return
            # The round trips must not run on the routing thread (and nobody may be waiting).
            try:
                _start_thread(self._settled, "mcp_min-settle-%s" % self.id, (answer,), "settle %s" % self.method,
                              None if self._background is True else self._background)
            except ConnectionClosed as e:
                self._store((None, e))
            return
        self._open()  # a waiting thread settles it ...
        # ... or, when none may be, mcp_min-events: after the progress that came before it (what
        # settling waits for elsewhere), and then its done callbacks there at once.
        if self._post is None or not self._post(self._settle_queued, True):
            self._settle_queued(False)

    def _open(self) -> None:
        """Let waiters through: the answer is in (or the outcome is)."""
        with self._storing:
            self._open_held()

    def _open_held(self) -> None:
        if not self._opened:  # (under _storing)
            self._opened = True
            self._arrived.release()  # and it stays open for every waiter (see _take)

    def _settle_queued(self, here: bool) -> None:
        # A thread waiting in result() may hold _settling: it settles, and this would wait for it
        # while it may wait for mcp_min-events (to run the progress callbacks queued before).
        if self._outcome is None and self._settling.acquire(False):
            try:
                if self._outcome is None:
                    self._store(self._settled_now(self._answer), here)
            finally:
                self._settling.release()

    def _settled(self, answer: _Json | BaseException | None) -> _Outcome:
        """The outcome (value, error), settling the answer first on this thread if nobody has."""
        outcome = self._outcome
        if outcome is None:  # (the deadline may have ended it while another thread settles)
            with self._settling:
                outcome = self._outcome or self._store(self._settled_now(answer))
        return outcome

    def _settled_now(self, answer: _Json | BaseException | None) -> _Outcome:
        try:
            return self._settle(self, answer), None
        except McpError as e:
            return None, e.with_traceback(None)  # see result()
        except Exception as e:  # a bug: still an outcome, so every waiter ends
            _log.exception("settling the answer to %s failed", self.method)
            return None, McpError("settling the answer to %s failed: %r" % (self.method, e))

    def _store(self, outcome: _Outcome, here: bool = False) -> _Outcome:
        """Keep the first outcome and make the request done with it: what a Future shows of it
        (``_publish``), the latch, then what a Future does once done (``here``: this is
        mcp_min-events).  Returns the outcome that stays."""
        with self._storing:
            if self._outcome is not None:
                return self._outcome
            self._outcome = outcome
            self._keepalive = None
            after = self._publish(outcome)
            self._open_held()
        if after is not None:
            after(here)
        return outcome

    def _publish(self, outcome: _Outcome) -> Callable[[bool], object] | None:
        """Under _storing, as the outcome is stored: nothing here (nobody else sees this
        request).  A Future's sets its public state and returns what runs after the lock."""
        return None

    def _wait(self, timeout: float | None = None) -> _Json | BaseException | None:
        """Wait until the answer is in; the raw answer (a message dict, or the McpError that
        ended the request; None when the deadline ended it while its answer was followed up)."""
        local = None if timeout is None else _timeout_arg(timeout)  # this wait only
        if self._opened:
            return self._answer
        wait = _remaining(self._deadline)
        if local is not None and (wait is None or local < wait):
            if not self._take(local):
                raise _no_answer(self.method, local, " (still waiting)")
            return self._answer
        taken = self._take(wait)
        while not taken and not _expired(self._deadline):  # postponed meanwhile (reset_on_progress): wait on
            taken = self._take(_remaining(self._deadline))
        if taken:
            return self._answer
        self._end_at_deadline()
        self._take(None)  # ours, or the answer that won the race
        return self._answer

    def _end_at_deadline(self) -> None:
        """The deadline passed with no answer in: end the request with RequestTimeout."""
        error = _no_answer(self.method, self._timeout or 0.0, "; request cancelled" if self._cancellable else "")
        if not self._withdraw(self, error) and not self._take(0):
            # The answer came and is being followed up on another thread: the deadline still wins.
            self._store((None, error))

    def _take(self, wait: float | None) -> bool:
        """True once the latch is open, False when ``wait`` seconds (None: no limit) pass first."""
        if not self._arrived.acquire(True, -1 if wait is None else wait):
            return False
        self._arrived.release()  # the latch stays open for every other waiter
        return True


class Future(_Request, _FutureBase):
    """The pending outcome of one request, as returned by ``Client.submit`` and
    ``Client.submit_request``: a ``concurrent.futures.Future``.

    So ``concurrent.futures.wait()``, ``as_completed()`` and ``asyncio.wrap_future()``
    take it.  ``done()`` means what it means there: ``result()`` returns at once.  So an
    answer that needs more round trips first (a new HTTP session, a fresh tools/list,
    input rounds, a task) is followed up on a thread of its own before the Future is
    done.  Differences: ``result()`` and ``exception()`` wait at most until the request's
    deadline (then the request is cancelled and RequestTimeout raised); ``cancel()``
    works while the server runs the request (the server is told; ``cancelled()`` is then
    true and ``result()`` raises RequestCancelled, a ``concurrent.futures.CancelledError``),
    so ``running()`` means "sent and not done"; a failed or cancelled request raises its
    McpError from ``result()`` and ``exception()`` returns it.  The request's answer sets
    the outcome: ``set_result()`` and the other executor-side methods are refused.

    Done callbacks run on the client's ``mcp_min-events`` thread, in order with
    notifications and progress (never on a thread that reads from the server), also
    when the Future was already done; after ``close()``, on the thread that adds them.
    A done callback (``asyncio.wrap_future`` adds one) also has the request end at its
    deadline when no thread waits for it in ``result()``.
    """

    __slots__ = ("_callbacks", "_watched")

    def __init__(self, request_id: int, method: str, params: _Json | None, timeout: float | None,
                 progress: _Progress | None, settle: Callable[[_Request, Any], Any],
                 withdraw: Callable[[_Request, McpError], bool],
                 finish: Callable[[_Request, _Json], Any] | None = None, cancellable: bool = True,
                 background: _Threads | bool = False, post: Callable[..., bool] | None = None) -> None:
        # The state wait(), as_completed() and asyncio read is the base class's: only _publish
        # drives it, through its public methods.  The request keeps the answer and the outcome.
        concurrent.futures.Future.__init__(self)
        _Request.__init__(self, request_id, method, params, timeout, progress, settle, withdraw, finish,
                          cancellable, background, post)
        self._callbacks: List[Callable[[Future], object]] = []
        self._watched: List[Any] | None = None  # its entry in mcp_min-deadlines (see _watch_deadline)

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled() else "finished" if self.done() else "running"
        return "<mcp_min.Future %s %s %s>" % (self.id, self.method, state)

    # -- the concurrent.futures protocol (done() and cancelled() are the base class's) --------
    def running(self) -> bool:
        """True while the request is out and not done (it can still be cancelled)."""
        return not self.done()

    def cancel(self, reason: str = "cancelled by the client") -> bool:
        """Withdraw the request: the server is told, ``cancelled()`` is true and ``result()``
        raises RequestCancelled.

        Returns False when it is too late: the request has ended (cancelled before
        included), or its answer is in (and any follow-up of it runs to its end).
        """
        error = RequestCancelled("%s %s" % (self.method, reason))
        error._by_cancel = True  # (withdrawing may settle the Future on this thread: marked first)
        if not self._withdraw(self, error):
            return False
        self._store((None, error))  # cancelled now, whichever thread settles the withdrawal
        return True

    def add_done_callback(self, fn: Callable[[Future], object]) -> None:
        """Call ``fn(future)`` once the Future is done (see the class docstring for the thread)."""
        with self._storing:
            if self._outcome is None:
                self._callbacks.append(fn)
                if self._watched is None and self._background and self._deadline is not None:
                    self._watch_deadline()
                return
        self._call_back([fn])

    def set_running_or_notify_cancel(self) -> bool:
        """Refused: a request runs from the moment it is sent."""
        raise RuntimeError("%r runs from the moment its request is sent" % self)

    def set_result(self, result: Any) -> None:
        """Refused: the request's answer sets the outcome."""
        raise concurrent.futures.InvalidStateError("%r is set by its request's answer" % self)

    def set_exception(self, exception: BaseException | None) -> None:
        """Refused: the request's answer sets the outcome."""
        raise concurrent.futures.InvalidStateError("%r is set by its request's answer" % self)

    # -- done (the client's side) --------------------------------------------------------
    def _publish(self, outcome: _Outcome) -> Callable[[bool], object] | None:
        # Under _storing: the base class's state, then the done callbacks and the deadline watch
        # taken out, for _done to run after the lock (each of the base class's methods wakes
        # concurrent.futures' waiters, which take no lock of ours and run no user code).
        base = concurrent.futures.Future
        value, error = outcome
        if error is None:
            base.set_result(self, value)
        elif getattr(error, "_by_cancel", False) and base.cancel(self):
            base.set_running_or_notify_cancel(self)  # (what wait() and as_completed() count)
        else:
            base.set_exception(self, error)
        callbacks, watched = self._callbacks, self._watched
        if not callbacks and watched is None:
            return None
        self._callbacks, self._watched = [], None
        return lambda here: self._done(callbacks, watched, here)  # (what _store runs after the lock)

    def _done(self, callbacks: List[Callable[[Future], object]], watched: List[Any] | None, here: bool) -> None:
        if watched is not None:
            _unwatch(watched)
        if callbacks:
            if here:
                self._run_callbacks(callbacks)
            else:
                self._call_back(callbacks)

    def _call_back(self, callbacks: List[Callable[[Future], object]]) -> None:
        if self._post is None or not self._post(self._run_callbacks, callbacks):
            self._run_callbacks(callbacks)

    def _run_callbacks(self, callbacks: List[Callable[[Future], object]]) -> None:
        for fn in callbacks:
            try:
                fn(self)
            except Exception:
                _log.exception("done callback %r of %s failed", fn, self.method)

    # A submitted Future with a done callback (asyncio.wrap_future adds one) may have nobody in
    # result() to end it at its deadline: mcp_min-deadlines does, on a thread of its own.
    def _watch_deadline(self) -> None:
        try:  # (under _storing; mcp_min-deadlines never takes it)
            if self._deadline is not None:
                self._watched = _watch(self._deadline, _AtDeadline(self._expire_soon))
        except ConnectionClosed as e:
            _log.warning("%s: %s will end at its deadline only in result()", e, self.method)

    def _expire_soon(self) -> None:
        # On mcp_min-deadlines, under its lock: only start the thread that ends the request.
        self._watched = None
        try:
            _start_thread(self._expire, "mcp_min-expire-%s" % self.id, (), "end %s at its deadline" % self.method,
                          self._background if isinstance(self._background, _Threads) else None)
        except ConnectionClosed as e:
            _log.warning("%s: %s will end at its deadline only in result()", e, self.method)

    def _expire(self) -> None:
        if self._outcome is not None or self._opened:
            return  # done, or its answer came in time (so it wins) and is being settled
        if not _expired(self._deadline):  # postponed meanwhile (reset_on_progress): watched on
            with self._storing:
                if self._outcome is None and self._watched is None:
                    self._watch_deadline()
            return
        self._end_at_deadline()


class _AtDeadline(object):
    """A Future's entry in mcp_min-deadlines, which calls ``cut()`` when its deadline passes."""

    __slots__ = ("_end",)

    def __init__(self, end: Callable[[], None]) -> None:
        self._end = end

    def cut(self) -> None:
        self._end()


class _ProgressClock(object):
    """A request's progress callback when its deadline follows progress (reset_on_progress):
    each progress notification moves the deadline ``window`` seconds on, never past ``total``
    (a deadline); the caller's own callback, if any, still gets each one."""

    __slots__ = ("callback", "window", "total", "following")

    def __init__(self, callback: _Progress | None, window: float, total: float) -> None:
        self.callback, self.window, self.total = callback, window, total
        self.following: _Request | None = None  # the request of a call that became a task, while it is followed

    def tick(self, fut: _Request) -> None:
        fut._deadline = min(_deadline_after(self.window), self.total)

    def __call__(self, progress: Any, total: Any, message: Any) -> None:
        if self.following is not None:  # a task's status change or progress: it counts too
            self.tick(self.following)
        if self.callback is not None:
            self.callback(progress, total, message)



# -- routing -------------------------------------------------------------------

def _in_time(fut: _Request, answer: _Json | McpError) -> _Json | McpError:
    """What a request's Future gets when its answer (a message, or the McpError that ended
    the request) is routed: ``answer``, or RequestTimeout once the request's deadline has
    passed ("The deadline wins" in the module docstring: some servers answer a request cut at
    its deadline with an error at once, "context canceled", which must not stand in for the
    timeout).  The loss of the whole connection stays ConnectionClosed, with the exit code and
    stderr that say why, unless the deadline caused it (``_by_deadline``: a write blocked at
    its deadline left part of a message out).  A RequestTimeout stays itself: its own words
    say where the time ran out, as a write still under way."""
    deadline, timeout = fut._deadline, fut._timeout  # (a deadline comes from a timeout: both or neither)
    if deadline is not None and timeout is not None and time.monotonic() >= deadline:
        if not isinstance(answer, (ConnectionClosed, RequestTimeout)):
            return _no_answer(fut.method, timeout, " (what came, came later)")
        if isinstance(answer, ConnectionClosed) and answer._by_deadline:
            return _no_answer(fut.method, timeout, ": %s" % answer)
    return answer


def _closed_error(error: BaseException, what: str) -> ConnectionClosed:
    """The loss of the connection (``error``: a ConnectionClosed, or what ended it) as one
    waiter sees it: "<what happened> before <what>", with the exit code and stderr lines."""
    summary, returncode = getattr(error, "summary", error), getattr(error, "returncode", None)
    return ConnectionClosed("%s before %s" % (summary, what), returncode, getattr(error, "stderr", ()),
                            getattr(error, "detail", ""))


class _Dispatcher(object):
    """The JSON-RPC core of one connection: request ids, the pending requests and the
    open subscriptions, all under one lock, and the routing of every message that arrives.

    A transport delivers to it (it is the transport's *router*): ``receive(msg)`` for a
    decoded message, ``fail(request_id, error)`` when one request cannot be answered,
    ``closed(error)`` when the connection is gone, ``is_pending(request_id)``.  An answer
    settles its Future (unless the Future's ``intercept`` takes it over: a submitted call
    whose answer an add-on follows on a thread of its own); a server request goes to
    ``on_request(msg)``, a notification to ``on_notification(method, params)``;
    ``on_closed(error)`` hears of the end.  No I/O and no user code run here.
    """

    def __init__(self, on_request: Callable[[_Json], object], on_notification: Callable[[str, _Json], object],
                 on_closed: Callable[[ConnectionClosed], object] | None = None) -> None:
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_closed = on_closed
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: Dict[object, _Request] = {}  # request id -> request
        # listen request id (or, handshake era, a token) -> Subscription
        self._subscriptions: Dict[object, Subscription] = {}
        # The ConnectionClosed that ended the connection: later requests fail at once.
        self.error: ConnectionClosed | None = None

    # -- the session's side ------------------------------------------------------
    def next_id(self) -> int:
        return next(self._ids)  # (itertools.count is atomic: one call of C code; no lock to contend for)

    def add(self, fut: _Request, subscription: Subscription | None = None) -> None:
        """Register a request about to be sent (so its answer finds it).  Raises the
        connection's error when it is gone."""
        with self._lock:
            if self.error is not None:
                raise self.error
            self._pending[fut.id] = fut
            if subscription is not None:  # registered before sending: no notification can miss it
                self._subscriptions[fut.id] = subscription

    def withdraw(self, request_id: object) -> _Request | None:
        """Remove a pending request; returns its request, or None when it had already ended."""
        with self._lock:
            return self._pending.pop(request_id, None)

    def pending(self, request_id: object) -> _Request | None:
        with self._lock:
            return self._pending.get(request_id)

    def subscribe(self, key: object, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions[key] = subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            for key in [k for k, s in self._subscriptions.items() if s is subscription]:
                del self._subscriptions[key]

    def subscription(self, key: object) -> Subscription | None:
        with self._lock:
            return self._subscriptions.get(key)

    def subscriptions(self) -> List[Subscription]:
        with self._lock:
            return list(self._subscriptions.values())

    def reset(self) -> None:
        """A new connection (a restarted stdio server) starts with no error."""
        with self._lock:
            self.error = None

    # -- the transport's side (the router) ----------------------------------------
    def is_pending(self, request_id: object) -> bool:
        with self._lock:
            return request_id in self._pending

    def receive(self, msg: object) -> None:
        """Route one decoded message."""
        _trace("<-", msg)
        if type(msg) is not dict:
            if isinstance(msg, list):  # a 2025-03-26 batch
                for m in msg:
                    self.receive(m)
            else:
                _log.warning("ignored a message that is not an object: %s", _shorten(repr(msg), _SHOWN_CHARS))
            return
        method = msg.get("method")
        if method is None:
            self._answer(msg)
        elif "id" in msg:
            if _is_id(msg["id"]) and isinstance(method, str):
                self._on_request(msg)
            else:
                _log.warning("ignored a malformed request: %s", _shorten(_dumps_for_humans(msg), _SHOWN_CHARS))
        elif isinstance(method, str):
            params = msg.get("params")
            self._on_notification(method, params if isinstance(params, dict) else {})
        else:
            _log.warning("ignored a message whose method is not a string: %s",
                         _shorten(_dumps_for_humans(msg), _SHOWN_CHARS))

    def _answer(self, msg: _Json) -> None:
        rid = msg.get("id")
        if not _is_id(rid):
            rid = None  # (no future has it; checked before the lock, which the senders share)
        with self._lock:
            fut = self._pending.pop(rid, None)
            ended = self._subscriptions.pop(rid, None) if fut is not None and self._subscriptions else None
        if fut is not None:
            try:
                taken = fut._intercept is not None and fut._intercept(fut, msg)
            except Exception:  # a bug there must not lose the answer
                _log.exception("error looking at the answer to %s", fut.method)
                taken = False
            if not taken:
                fut._put(_in_time(fut, msg))
            if ended is not None:  # the server ended a listen
                ended._end(_error_from(msg, "subscriptions/listen") if "error" in msg else None)
        elif "error" in msg and rid is None:
            _log.warning("server reported an error: %s",
                         _shorten(_dumps_for_humans(msg.get("error")), _SERVER_ERROR_CHARS))
        else:
            _log.debug("ignored an answer to unknown request id %r", rid)

    def fail(self, request_id: object, error: McpError) -> None:
        """One request cannot be answered (HTTP: its POST failed)."""
        with self._lock:
            fut = self._pending.pop(request_id, None)
            ended = self._subscriptions.pop(request_id, None)
        if fut is not None:
            fut._put(_in_time(fut, error))
        if ended is not None:
            ended._end(error)

    def closed(self, error: ConnectionClosed) -> None:
        """The connection is gone: every pending request fails with ``error``, and so will later ones."""
        with self._lock:
            if self.error is None:
                self.error = error
            pending, self._pending = list(self._pending.values()), {}
            ended = list(self._subscriptions.values())
        for fut in pending:
            lost = _closed_error(error, "answering " + fut.method)
            lost._by_deadline = getattr(error, "_by_deadline", False)
            fut._put(_in_time(fut, lost) if lost._by_deadline else lost)
        for sub in ended:
            sub._end(error)
        if self._on_closed is not None:
            self._on_closed(error)


# -- add-ons: the one interface through which the session meets them ---------------
# (See "How it works" for who registers and how a session folds them.)  The order of the
# registry does not matter: one claim at most takes a result, and every other hook only adds
# or looks.

class _Extension(object):
    """An add-on of the session.  Made once per session with it (``kind(session)``), before
    the session has its inbox or transport: keep the session, use it later.

    ``watches``: the methods it looks at -- of requests we send (``claim``, ``check``,
    ``withdraw``), of server requests we answer (``check``), of notifications
    (``notification``) and of lists (``listed``).  Those hooks are only called for those
    methods; ``declare`` and ``closed`` always.  Three kinds of hooks, then: what we declare;
    results (claimed, checked, withdrawn); what the server says (``closed`` included).
    """

    watches: Tuple[str, ...] = ()

    def __init__(self, session: _Session) -> None:
        self._session = session

    def declare(self, caps: _Json, modern: bool, newest: bool) -> None:
        """Add to the capabilities we declare (``modern``: 2026-07-28, sent in every request's
        _meta; ``newest``: 2025-11-25 or later)."""

    def claim(self, fut: _Request, result: _Json) -> Callable[[_Request, _Json], Any] | None:
        """Whether this add-on takes a result of ``fut`` over: None (the session finishes it:
        ``check``, then the request's own finish), or the finish that makes the caller's value
        instead (on the settling thread, round trips allowed; it may hand a final result back
        to ``_Session.finished``).  Called on any thread, the routing one included, and for a
        2026-07-28 result of a resultType the session does not know: cheap, no I/O."""
        return None

    def check(self, method: str, params: _Json | None, result: Any) -> None:
        """Look at a final result of our ``method`` request (``params``: ours), or at our answer
        ``result`` to the server's ``method`` request (``params``: the server's), before it goes
        on; raise an McpError to refuse it (to the server: a RequestError)."""

    def withdraw(self, fut: _Request, error: McpError) -> bool:
        """End, with ``error``, what a claim still follows for ``fut`` (no longer pending);
        True when it did."""
        return False

    def notification(self, method: str, params: _Json) -> None:
        """A notification the server sent (progress: only that of no pending request)."""

    def listed(self, method: str, items: List[Any]) -> None:
        """A whole list was read: every page (``_Session.list_all``), or the cache."""

    def closed(self, error: ConnectionClosed) -> None:
        """The connection is gone."""


_EXTENSIONS: List[Type[_Extension]] = []  # each add-on section appends its class at its end


# ---------------------------------------------------------------------------
# Protocol helpers: pure functions of MCP and HTTP details (tested in memory)
# ---------------------------------------------------------------------------

if TYPE_CHECKING:
    import urllib.parse
    from typing import Container, Hashable, Match, Protocol

    class _Headers(Protocol):
        """What _media_type reads of a response's headers (an http.client.HTTPMessage)."""
        def get(self, name: str, /) -> str | None: ...


def _choose_version(supported: Sequence[Any]) -> str:
    """The newest version in both ``supported`` (what a server listed) and ours."""
    for version in SUPPORTED_VERSIONS:
        if version in supported:
            return version
    raise McpError("no protocol version in common: the server supports %s, mcp_min supports %s"
                   % (_shorten(", ".join(map(str, supported)), _EXCERPT_CHARS), ", ".join(SUPPORTED_VERSIONS)))


def _field(result: _Json, key: str, kind: type, method: str, default: Any = None) -> Any:
    """``result[key]`` checked against ``kind`` (the server may send anything)."""
    value = result.get(key, default)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise McpError("%s answered with %r of the wrong type: %s"
                       % (method, key, _shorten(_dumps_for_humans(value), _QUOTE_CHARS)))
    return value


def _tool_value(result: _Json) -> Any:
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


def _roots_result(roots: Callable[[], _Json] | Iterable[Any]) -> _Json:
    if callable(roots):
        return roots()
    out: List[_Json] = []
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


def _apply_defaults(params: _Json, result: Any) -> Any:
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


# -- declared capabilities ---------------------------------------------------------
# Extension ids follow the _meta key rules, with the prefix required: dot-separated labels, a slash, a name.
# (Patterns as text: re compiles them on first use, so importing the module does not pay for them.)
_EXTENSION_ID = (r"(?:[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?/"
                 r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?\Z")


def _merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` applied as a JSON Merge Patch (RFC 7396): objects merge key by
    key, None removes a key, any other value replaces.  Neither argument is changed."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


def _check_capabilities(patch: Any, callbacks: Mapping[str, object]) -> _Json | None:
    """The ``capabilities=`` option, checked once: a dict of objects (or None to withdraw one of
    ours), extension ids well formed, and nothing served by a callback declared without it."""
    if patch is None:
        return None
    if not isinstance(patch, dict) or not all(isinstance(v, dict) or v is None for v in patch.values()):
        raise ValueError("capabilities must be a dict of capability objects (None withdraws one), not %r"
                         % (patch,))
    for key in ("extensions", "experimental"):
        for name, value in (patch.get(key) or {}).items():
            if not (isinstance(value, dict) or value is None) or key == "extensions" and not (
                    isinstance(name, str) and re.match(_EXTENSION_ID, name)):
                raise ValueError("capabilities[%r] must map %s to objects, not %r: %r"
                                 % (key, "ids like 'com.example/name'" if key == "extensions" else "names",
                                    name, value))
    for key in ("roots", "sampling", "elicitation"):  # each served by the callback of its name
        given = patch.get(key)
        if given is not None and callbacks.get(key) is None and not (
                key == "elicitation" and callbacks.get("url_elicitation") is not None and "form" not in given):
            raise ValueError("capabilities declare %r, but no %s= callback would answer it" % (key, key))
    if (patch.get("elicitation") or {}).get("url") is not None and callbacks.get("url_elicitation") is None:
        raise ValueError("capabilities declare URL elicitation, but no url_elicitation= callback would answer it")
    _to_json(patch)  # ValueError now for what JSON cannot carry
    return patch


# -- trace context (SEP-414) ---------------------------------------------------------
_TRACEPARENT = r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}\Z"  # W3C: version-trace-parent-flags


def _trace_meta(given: Any) -> Dict[str, str]:
    """What the ``trace_context`` hook returned, checked: None or {} (no trace), else W3C
    ``traceparent`` (and optionally ``tracestate``, ``baggage``) as strings, for a request's _meta."""
    if not given:
        return {}
    if not isinstance(given, dict) or not set(given) <= set(_TRACE_KEYS) or not all(
            isinstance(v, str) for v in given.values()):
        raise ValueError("trace_context must return a dict of %s strings, not %r" % ("/".join(_TRACE_KEYS), given))
    if "traceparent" in given and not re.match(_TRACEPARENT, given["traceparent"]):
        raise ValueError("trace_context returned a traceparent that is not W3C trace context "
                         "('00-<32 hex>-<16 hex>-<2 hex>'): %r" % (given["traceparent"],))
    return given


# -- HTTP details ---------------------------------------------------------------

_TCHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _clean_headers(headers: Mapping[Any, Any] | None, what: str = "header") -> Dict[str, str]:
    """The caller's HTTP headers, checked: names are tokens, values are text without line
    breaks, surrounding whitespace (a token read from a file ends in a newline) removed.
    Errors name the header, never its value (it is usually a credential)."""
    out: Dict[str, str] = {}
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


def _url_credentials(url: str, headers: Dict[str, str]) -> Tuple[str, Dict[str, str]]:
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


def _valid_session_id(value: str) -> bool:
    # The spec allows visible ASCII only: anything else could smuggle header syntax.
    return bool(value) and all("\x21" <= c <= "\x7e" for c in value)


def _header_value(value: Any) -> str:
    """Encode a value for Mcp-Method / Mcp-Name / Mcp-Param-* headers (2026-07-28 rules)."""
    text = value if isinstance(value, str) else ("true" if value is True else "false" if value is False
                                                 else str(value))
    spaced = text.replace("\t", " ")  # plain: visible ASCII, spaces and tabs (ASCII's printable are 0x20-0x7E)
    plain = (spaced.isascii() and spaced.isprintable() and text == text.strip(" \t")
             and not (text.startswith("=?base64?") and text.endswith("?=")))
    if plain:
        return text
    return "=?base64?%s?=" % base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")


def _param_headers(tool: Any) -> List[Tuple[Tuple[str, ...], str]]:
    """The ``x-mcp-header`` markings of a tool: a list of (path, header name).

    Raises ValueError naming the reason when a marking is invalid (the tool
    must then be hidden, as the 2026-07-28 revision asks).
    """
    found: List[Tuple[Tuple[str, ...], str]] = []
    seen: Set[str] = set()

    def walk(schema: Any, path: Tuple[str, ...]) -> None:
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


def _b64url(data: bytes) -> str:
    """Base64url without padding (JOSE, PKCE)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _media_type(headers: _Headers) -> str:
    """The lower-cased media type of a Content-Type header, without parameters."""
    return (headers.get("Content-Type") or "").split(";")[0].strip().lower()


def _parse_www_authenticate(value: str | None) -> Dict[str, str]:
    """The parameters of the challenges in a WWW-Authenticate header, as a dict (keys
    lower-cased; ``scheme`` holds the first scheme named)."""
    out: Dict[str, str] = {}
    if not value:
        return out
    scheme = re.match(r"\s*([A-Za-z][A-Za-z0-9_.-]*)(?:\s|$)", value)
    if scheme:
        out["scheme"] = scheme.group(1)
    for m in re.finditer(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))', value):
        out.setdefault(m.group(1).lower(), m.group(2).replace('\\"', '"') if m.group(2) is not None
                       else m.group(3))
    return out


# -- URL, origin, loopback and credential rules: one set, for the engine and OAuth ----------------

# Header names that carry (or may carry) a secret, by a word in them: never logged, and never sent
# to another origin on a redirect (Authorization, Proxy-Authorization, Cookie, DPoP,
# Mcp-Session-Id, X-Api-Key, X-Auth-Token, ...).
_CREDENTIAL_WORDS = ("auth", "cookie", "dpop", "key", "secret", "session", "token", "password", "credential")


def _is_credential_header(name: str) -> bool:
    name = name.lower()
    return any(word in name for word in _CREDENTIAL_WORDS)


def _fingerprint(credentials: Mapping[Any, Any]) -> str | None:
    """An opaque digest of credential headers (not the credentials), or None for none.  A DPoP
    proof is left out: it is new on every request, while the token it proves stays the same."""
    kept = sorted((str(k).lower(), str(v)) for k, v in credentials.items() if str(k).lower() != "dpop")
    if not kept:
        return None
    import hashlib  # (the HTTP engine's urllib.request has imported it already)
    return hashlib.sha256(_to_json(kept).encode("utf-8")).hexdigest()


def _redact(headers: Mapping[str, str], private: Container[str] = ()) -> Dict[str, str]:
    """Headers for a log line, credentials replaced: the secret-looking names and ``private``
    (lower-cased names that are credentials whatever they are called)."""
    return {k: ("<redacted>" if _is_credential_header(k) or k.lower() in private else v) for k, v in headers.items()}


def _split_url(url: str) -> Tuple[urllib.parse.SplitResult | None, str, int | None]:
    """(urlsplit parts, lower-cased host, port), or (None, "", None) for a malformed URL."""
    import urllib.parse
    try:
        parts = urllib.parse.urlsplit(url)
        return parts, (parts.hostname or "").lower(), parts.port
    except (ValueError, TypeError, AttributeError):  # a malformed port or host
        return None, "", None


def _origin(url: str) -> str:
    """scheme://host[:port] of a URL, lower-cased, the default port left out (RFC 6454); ""
    for a malformed one (which then matches no other origin)."""
    parts, host, port = _split_url(url)
    if parts is None or not host:
        return ""
    scheme = parts.scheme.lower()
    if ":" in host:
        host = "[%s]" % host
    if port is not None and port != {"http": 80, "https": 443}.get(scheme):
        host += ":%d" % port
    return "%s://%s" % (scheme, host)


def _is_loopback(host: str) -> bool:
    """True when a connection to ``host`` (lower-cased, IPv6 without brackets) stays on this
    machine whatever DNS answers.  Loopback here is what the socket layer connects to a
    loopback address: the name ``localhost`` (every OS resolves it locally); an IPv4 address
    in 127.0.0.0/8 in any spelling this platform's address parser (inet_aton) accepts --
    ``127.1``, ``0x7f.0.0.1`` and ``2130706433`` connect to 127.x where it accepts them; ``::1``
    and IPv4-mapped ``::ffff:127.x``.  Not ``*.localhost``: RFC 6761 asks resolvers to keep
    those names on the machine, but a system resolver may ask DNS for them, so a network could
    send them (and a token in clear text) elsewhere."""
    if host == "localhost":
        return True
    if host and all(c in "0123456789abcdefx." for c in host):  # an IPv4 address, perhaps shorthand
        socket = _stdlib("socket", "reading an IPv4 address in a URL")
        try:
            packed: bytes = socket.inet_aton(host)
            return packed[0] == 127
        except (OSError, ValueError):
            return False
    if ":" in host:
        import ipaddress
        try:
            address = ipaddress.IPv6Address(host)  # (a host with ":" is no IPv4 address)
        except ValueError:
            return False
        return address.is_loopback or bool(address.ipv4_mapped and address.ipv4_mapped.is_loopback)
    return False


def _secure_url(url: str) -> bool:
    """https, or plain http only to this machine: the MCP spec's communication security rules
    (and RFC 8252 loopback redirects), for every URL a credential may go to."""
    parts, host, _ = _split_url(url)
    scheme = parts.scheme.lower() if parts is not None else ""
    return bool(host) and (scheme == "https" or (scheme == "http" and _is_loopback(host)))


def _plain_url(url: str) -> str:
    """A URL as an error may show it: no user info, query or fragment."""
    parts = _split_url(url)[0]
    if parts is None:
        return _shorten(repr(url), _SHOWN_CHARS)
    return _shorten("%s://%s%s" % (parts.scheme, parts.netloc.rpartition("@")[2], parts.path), _SHOWN_CHARS)


class _LineSplitter(object):
    """Line framing on bytes: fed what a pipe or socket gives, in pieces of any size, it returns
    the complete lines without their ends, blank ones as ``b""``.  Lines end at ``\\n`` (stdio: a
    CRLF line keeps its ``\\r``, which JSON takes as whitespace), or with ``any_end`` at LF, CR
    or CRLF (server-sent events; _SseParser joins a CRLF that pieces split).

    A line longer than ``limit`` bytes is dropped as it grows, not buffered: ``on_oversized()``
    is called once for it and the rest of it is skipped up to its end (none of it is returned).

    A line that spans pieces grows in one bytearray and is returned as it (bytes-like, decoded
    as it is): kept as a list of pieces, a 10 MiB line left 10 MiB of freed pieces resident in
    the heap beside its joined copy and the decoded text (peak memory 3x the message, not 2x)."""

    def __init__(self, limit: int, on_oversized: Callable[[], object], any_end: bool = False) -> None:
        self._limit, self._on_oversized, self._any_end = limit, on_oversized, any_end
        self._pending = bytearray()  # the unfinished line
        self._size = 0  # its size; -1 while dropping an oversized line

    def feed(self, chunk: bytes) -> List[bytes | bytearray]:
        """The lines that ``chunk`` (not empty) completes, in order (a list, often of one line)."""
        # (splitlines on bytes: at LF, CR and CRLF only; _join_and_bound may put a bytearray in it)
        lines: List[Any] = chunk.splitlines() if self._any_end else chunk.split(b"\n")
        # what follows the last line end: the start of the next line (none after a final CR or LF)
        tail = lines.pop() if not self._any_end or chunk[-1] not in b"\r\n" else b""
        if self._size or tail or len(chunk) > self._limit:  # (not the usual whole lines)
            self._join_and_bound(lines, tail, len(chunk))
        return lines

    def _join_and_bound(self, lines: List[bytes | bytearray], tail: bytes, chunk_size: int) -> None:
        if lines and self._size:  # the first line ends the unfinished one
            if self._size < 0 or self._size + len(lines[0]) > self._limit:
                if self._size > 0:
                    self._on_oversized()
                del lines[0]  # (the end of a dropped line: nothing, not a blank line)
            else:
                self._pending += lines[0]
                lines[0] = self._pending  # (no copy: a large message is not doubled here)
            self._pending, self._size = bytearray(), 0
        if chunk_size > self._limit:  # only then can a whole line in it be too long
            for line in [line for line in lines if len(line) > self._limit]:
                self._on_oversized()
                lines.remove(line)
        if tail and self._size >= 0:
            self._size += len(tail)
            if self._size > self._limit:
                self._on_oversized()
                self._pending, self._size = bytearray(), -1
            else:
                self._pending += tail

    def finish(self) -> bytes | bytearray:
        """At the end of the stream: the last line when it had no line end (else ``b""``)."""
        rest = self._pending if self._size > 0 else b""
        self._pending, self._size = bytearray(), 0
        return rest


class _SseParser(object):
    """Incremental server-sent-events parser (WHATWG rules), fed a stream's bytes as they
    arrive, in pieces of any size.

    Lines end in LF, CR or CRLF, mixed (a CR that ends one piece and the LF that starts the
    next are one line end), so a line is only known to be complete once its end came; a UTF-8
    BOM that starts the stream is skipped.  A blank line ends an event: it commits the ``id``
    the event named (``last_id``: an event cut off by the stream's end never moves it, so a
    resumption asks for that event again) and dispatches the event if it has data.

    It works on the bytes: a field's value is neither copied nor decoded until the event keeps
    it, and an event's data is decoded once, when the event ends.  A line or an event larger
    than MAX_MESSAGE_BYTES is dropped as it grows, not buffered (a line that never ends too),
    so memory stays bounded whatever the framing (lone CRs are blank lines: nothing to keep).
    One parser follows one stream at a time: ``end_stream()`` when it ends; ``last_id`` and
    ``retry_ms`` carry over to the next (a reconnect)."""

    _BOM = b"\xef\xbb\xbf"

    def __init__(self, name: str = "the server") -> None:
        self._name = name
        self.last_id: str | None = None  # the last complete event's id (None: none, or the server reset it)
        self.retry_ms: int | None = None
        self.end_stream()

    def end_stream(self) -> None:
        """The stream ended or was given up: what it left unfinished is discarded (WHATWG: an
        event without its blank line is not dispatched), and the next stream starts afresh."""
        # the current event's data lines (bytes; short ones joined with LF in bytearrays)
        self._data: List[bytes | bytearray] | None = None
        self._size = 0  # its size so far; -1 while dropping an oversized event
        self._event = ""
        self._id = self.last_id  # the id buffer: what the current event's end commits
        self._lines = _LineSplitter(MAX_MESSAGE_BYTES, self.oversized, any_end=True)
        self._after_cr = False  # the last piece ended in CR: an LF that starts the next ends nothing
        self._begun = False  # past the stream's first bytes (and the BOM they may be)
        self._head = b""  # those bytes while they may still be a BOM

    def feed(self, piece: bytes) -> List[Tuple[str, str]]:
        """Feed the stream's next bytes (not empty).  Returns the events they complete,
        ``(type, data)``, in order: a list, often empty."""
        if self._after_cr or not self._begun:  # (rare: a CRLF split between pieces; the stream's start)
            piece = self._skip(piece)
            if not piece:
                return []
        self._after_cr = piece[-1] == 13
        events: List[Tuple[str, str]] = []
        for line in self._lines.feed(piece):
            if line:
                self._field(line)
            else:
                event = self._dispatch()
                if event is not None:
                    events.append(event)
        return events

    def oversized(self) -> None:
        """The current event grew too large: drop it."""
        if self._size >= 0:
            _log.warning("%s sent an SSE event of over %d bytes; dropped it", self._name, MAX_MESSAGE_BYTES)
        self._data, self._size = None, -1  # -1: dropping until the event ends

    def _skip(self, piece: bytes) -> bytes:
        """What of ``piece`` is stream: without the LF of a CRLF that the last piece began, or
        the BOM that starts the stream (its first bytes are held while they may be one)."""
        if self._after_cr:
            self._after_cr = False
            if piece[:1] == b"\n":
                piece = piece[1:]
        if not self._begun:
            piece = self._head + piece
            if len(piece) < 3 and self._BOM.startswith(piece):
                self._head = piece
                return b""
            self._begun, self._head = True, b""
            if piece.startswith(self._BOM):
                piece = piece[3:]
        return piece

    def _dispatch(self) -> Tuple[str, str] | None:
        """A blank line: the event is complete."""
        self.last_id = self._id or None  # (an empty id: no Last-Event-ID to send)
        parts, kind, dropped = self._data, self._event or "message", self._size < 0
        self._data, self._event, self._size = None, "", 0
        if parts is None or dropped:
            return None
        data = parts[0] if len(parts) == 1 else b"\n".join(parts)
        del parts[:]  # (the pieces go before the decoded copy is made)
        return (kind, data.decode("utf-8", "replace")) if data else None  # (empty: e.g. a priming event)

    def _field(self, line: bytes | bytearray) -> None:
        """One line that is not blank, without its end."""
        colon = line.find(b":")
        if colon == 0:
            return  # a comment (keep-alives are these)
        if colon < 0:
            colon = len(line)  # a field without a value
        if colon > 5:
            return  # no field we know has a longer name ("retry"): ignored, never copied
        field = line[:colon]
        start = colon + 1
        if line[start:start + 1] == b" ":
            start += 1  # one space after the colon is not part of the value
        if field == b"data":
            if self._size < 0:
                return
            self._size += len(line) - start + 1
            if self._size > MAX_MESSAGE_BYTES:
                self.oversized()
                return
            value: bytes | bytearray
            if type(line) is bytearray:  # (a line joined from pieces: ours, cut in place, not copied)
                del line[:start]
                value = line
            else:
                value = line[start:]
            parts = self._data
            if parts is None:
                self._data = [value]
            elif len(value) > 1024 or len(parts[-1]) > 65536:
                parts.append(value)
            else:  # (short lines joined as they come: a list of many would cost far more than their bytes;
                #     not all of them in one bytearray: on PyPy its regrowths are garbage, a 64 MiB event's many times)
                if type(parts[-1]) is not bytearray:
                    parts[-1] = bytearray(parts[-1])
                parts[-1] += b"\n"
                parts[-1] += value
        elif field == b"event":
            self._event = line[start:].decode("utf-8", "replace")
        elif field == b"id":
            value = line[start:]
            if b"\0" not in value:
                self._id = value.decode("utf-8", "replace")
        elif field == b"retry":
            value = line[start:]
            if value.isdigit():  # (ASCII digits only, as the rules say)
                value = value.lstrip(b"0")  # (int() refuses thousands of digits; 10 are past SSE_RETRY_CAP)
                self.retry_ms = int(value or b"0") if len(value) < 10 else 10 ** 9

# ---------------------------------------------------------------------------
# Transports: one interface, three ways of moving messages
# ---------------------------------------------------------------------------

if TYPE_CHECKING:
    # Modules for annotations only, under names of their own: code imports a module where it runs,
    # and a use without that import must still be an error.
    import http.client as _http_client
    import socket as _socket_module
    import ssl as _ssl_module
    from typing import Protocol

    # A stdio server's process: its subprocess.Popen, started with three pipes (typeshed types them
    # Optional, since they are None for a stream that is not a pipe).
    class _Child(Protocol):
        @property
        def pid(self) -> int: ...
        @property
        def stdin(self) -> IO[bytes]: ...
        @property
        def stdout(self) -> IO[bytes]: ...
        @property
        def stderr(self) -> IO[bytes]: ...
        @property
        def returncode(self) -> int | None: ...
        def wait(self, timeout: float | None = None) -> int: ...
        def kill(self) -> None: ...

    _RouteKey = Tuple[bool, str, Optional[str]]  # (tls, host connected to, tunnel host): one pool of connections
    _Watch = List[Any]  # a _Deadlines entry: [deadline, sequence, connection or None once unwatched]

    class _Cuttable(Protocol):  # what mcp_min-deadlines ends: a connection (_ConnState), a Future's _AtDeadline
        def cut(self) -> None: ...


class _Transport(object):
    """What the session needs from a way of moving messages.  Subclasses override
    what applies to them; the defaults here are the "nothing to do" answers.

    Attributes:
        kind: ``"stdio"``, ``"streamable-http"`` or ``"sse"`` (``Client.transport``).
        name: how messages name the peer (``server 'python calc.py'``, ``server at URL``).
        carries_headers: True where each request has HTTP headers of its own (then
            the 2026-07-28 ``Mcp-Param-*`` headers apply, which need tools/list first).
        stderr_tail: the last lines a stdio server wrote to stderr.
        session_gone: True when the server's HTTP session was found gone; the next
            request first starts a new one (``_Session._renew_session``).
        authorization: a fingerprint of the credentials the auth plug-in gave the
            last request (None: none), so a "private" cached result is never served
            under other credentials.
        restartable: True where a fresh transport is a fresh peer (a new server
            process), so a connection the discovery probe ended can start over.

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
        close(grace=CLOSE_GRACE): bounded, idempotent, any thread; does nothing in a
            forked child.  ``grace``: seconds a stdio server gets to exit by itself after
            its stdin ends (0 after a failed connect: a server that did not answer in
            time is not waited for past the caller's deadline).
    """

    kind: str  # each transport's own
    name = "the server"
    carries_headers = False
    stderr_tail: Sequence[str] = ()
    session_gone = False
    restartable = False
    _router: _Dispatcher  # set by start()

    @property
    def authorization(self) -> str | None:
        return None

    def start(self, router: _Dispatcher) -> None:
        self._router = router

    def send(self, msg: _Json, data: bytes, deadline: float | None = None, wait_here: bool = False,
             headers: Mapping[str, str] | None = None) -> None:
        raise NotImplementedError  # (each transport moves messages its own way)

    def cancel(self, request_id: int | str) -> bool:
        return False

    def configure(self, version: str | None, modern: bool) -> None:
        pass

    def after_handshake(self) -> None:
        pass

    def replacement_for(self, error: McpError) -> _Transport | None:
        return None

    def close(self, grace: float = CLOSE_GRACE) -> None:
        pass


def _start_thread(target: Callable[..., object], name: str, args: Tuple[Any, ...] = (),
                  what: str = "read from the server", owner: _Threads | None = None) -> threading.Thread:
    """Start a daemon thread; a process out of threads gets an error that says so.  Every thread
    mcp_min starts is started here, and whoever starts one joins it in its close(): a line
    transport its own (reader, writer), an ``owner``'s ``_Threads`` the rest."""
    thread = threading.Thread(target=target, name=name, args=args, daemon=True)
    try:
        thread.start()
    except RuntimeError as e:
        raise ConnectionClosed("cannot start a thread to %s (%s): the process may be at its thread limit"
                               % (what, e))
    if owner is not None:
        owner.add(thread)
    return thread


class _Threads(object):
    """The threads an owner starts for its close() to wait for: a client's (answering a server
    request, following a task, settling a submitted answer), an HTTP transport's (requests,
    stream readers).  Weak: ``threading`` holds a thread while it runs, so only running ones
    are here and a long-lived client does not pile up ended ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # (a WeakSet must not change while it is copied)
        self._threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()

    def add(self, thread: threading.Thread) -> None:
        with self._lock:
            self._threads.add(thread)

    def join(self, deadline: float) -> List[str]:
        """Wait for them (not the calling one: close() from a callback) until ``deadline``;
        returns the names of those still running then."""
        with self._lock:
            threads = list(self._threads)
        _join_all(threads, _remaining(deadline))
        me = threading.current_thread()
        return [t.name for t in threads if t is not me and t.is_alive()]


def _join_all(threads: Iterable[threading.Thread], seconds: float = CLOSE_GRACE) -> None:
    """Wait for ``threads`` (other than the calling one) to end, all within ``seconds``."""
    deadline = _deadline_after(seconds)
    for thread in threads:
        if thread is not threading.current_thread():
            thread.join(_remaining(deadline))


class _Worker(object):
    """Runs calls in order on one thread of its own, started when first needed: callbacks,
    so user code never runs on (and never blocks) a thread that reads from the server, and
    the Windows pipe writer's writes (_PipeWriter)."""

    def __init__(self, name: str, what: str = "run callbacks") -> None:
        self._queue: SimpleQueue[Tuple[Callable[..., object], Tuple[Any, ...]] | None] = SimpleQueue()
        self._name, self._what = name, what  # the thread's name; what it is for (in the error if none starts)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._dropping = False
        self._stopped = False

    def put(self, fn: Callable[..., object], *args: Any) -> bool:
        """Queue ``fn(*args)``; False when it was dropped (stopped, flooded, no thread)."""
        if self._stopped:
            return False
        if self._queue.qsize() >= MAX_QUEUED_CALLBACKS:
            # A server flooding us while a callback is slow must not eat all memory.
            if not self._dropping:
                _log.warning("callbacks are %d behind; dropping server messages until they catch up",
                             MAX_QUEUED_CALLBACKS)
            self._dropping = True
            return False
        self._dropping = False
        if self._thread is None:
            try:
                self.start()
            except ConnectionClosed as e:
                _log.warning("dropped a server message: %s", e)
            if self._thread is None:  # (stop() came first, or no thread could start)
                return False
        self._queue.put((fn, args))
        return True

    def start(self) -> None:
        """Start the thread now, unless stop() came first (else the first put() starts it);
        raises ConnectionClosed when the process can start no thread."""
        with self._lock:
            if self._thread is None and not self._stopped:  # (stop() takes the lock: none starts after it)
                self._thread = _start_thread(self._run, self._name, what=self._what)

    def _run(self) -> None:
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

    def drain(self, deadline: float | None = None) -> None:
        """Wait (until ``deadline`` at most) for the callbacks queued so far to run."""
        thread = self._thread
        if thread is None or thread is threading.current_thread() or self._stopped or not thread.is_alive():
            return
        done = threading.Event()
        self._queue.put((done.set, ()))
        done.wait(_remaining(deadline))

    def stop(self, wait: bool = True) -> None:
        """Stop once what is queued ran; ``wait``: join it (CLOSE_GRACE at most), else see join()."""
        with self._lock:
            self._stopped = True
        if self._thread is not None:
            self._queue.put(None)
            if wait:
                self.join(_deadline_after(CLOSE_GRACE))

    def join(self, deadline: float | None) -> bool:
        """Wait for the thread until ``deadline``; True unless it still runs (a callback)."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(_remaining(deadline))
            return not thread.is_alive()
        return True


# -- stdio -----------------------------------------------------------------------------

def _stderr_excerpt(tail: Sequence[str]) -> str:
    """The end of an error message that quotes what a stdio server last wrote to stderr."""
    if not tail:
        return " (no stderr output)"
    shown = tail[-STDERR_SHOWN:]
    more = " (%d earlier lines not shown)" % (len(tail) - len(shown)) if len(tail) > len(shown) else ""
    return "; last stderr lines%s:\n  %s" % (more, "\n  ".join(shown))


# Variables a server may reasonably need; the rest of the caller's environment
# (API keys, tokens) is passed only when asked for.
_SAFE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
             "TZ") if os.name != "nt" else (
    "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "PROGRAMFILES", "COMSPEC")


def _server_env(env: Mapping[str, str] | None, inherit: bool) -> Dict[str, str]:
    base = dict(os.environ) if inherit else {k: os.environ[k] for k in _SAFE_ENV if k in os.environ}
    for key, value in (env or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError("env must map strings to strings; %r is %r" % (key, type(value).__name__))
        if os.name == "nt":  # names are case-insensitive there: "Path" replaces PATH, not beside it
            for same in [k for k in base if k.upper() == key.upper()]:
                del base[same]
        base[key] = value
    return base


def _env_get(env: Mapping[str, str], name: str) -> str | None:
    for key, value in env.items():
        if key.upper() == name.upper():  # (Windows: a config may say "Path")
            return value
    return None


def _resolve_program(argv0: str, env: Mapping[str, str], cwd: str | os.PathLike[str] | None) -> str:
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


def _batch_command_line(program: str, args: Sequence[str]) -> str:
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


def _process_group() -> Dict[str, Any]:
    """Popen keywords that give a server a process group of its own, so close() reaches
    what a launcher (npx, uv) started, and a Ctrl+C in our console does not reach it."""
    if sys.platform == "win32":  # (as os.name == "nt"; type checkers read this one as the platform)
        import subprocess  # (no console window per server for GUI and pythonw applications either)
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP | getattr(subprocess, "CREATE_NO_WINDOW", 0)}
    else:
        return {"start_new_session": True}


def _hold_standard_descriptors() -> List[int]:
    """POSIX: the null device opened on each of descriptors 0, 1 and 2 that is closed (a process
    started without them, or one that closed them), for the caller to close once a server's pipes
    exist.  A new descriptor takes the lowest free number, so without this our ends of the pipes
    would sit there, where whatever writes to "stdout" or "stderr" by number (C code, a sys.stdout
    kept over its closed descriptor) would write into the server's stdin, and a process that gives
    itself standard streams again (dup2, as daemons do) would replace a pipe of ours."""
    held: List[int] = []
    if os.name == "posix":
        try:
            while True:
                fd = os.open(os.devnull, os.O_RDWR)  # (not inheritable: no child of anyone keeps it)
                if fd > 2:
                    os.close(fd)
                    break
                held.append(fd)
        except OSError:  # (no /dev/null, no descriptor left): the pipes go where they can
            pass
    return held


def _taskkill_argv(pid: int) -> List[str]:
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
    # (kernel32, the limits structure, get_last_error): our own ctypes view, whose argtypes touch nobody else's
    _api: Tuple[Any, Any, Callable[[], int]] | None = None

    def __init__(self, handle: int, kernel32: Any) -> None:
        self._handle: int | None = handle
        self._kernel32 = kernel32
        self._lock = threading.Lock()  # a handle closed by close() is never used after (nor reused)

    @classmethod
    def for_process(cls, pid: int) -> _WindowsJob | None:
        """A new job holding process ``pid`` (ours, so the pid cannot be reused meanwhile), or None."""
        try:
            import ctypes
            kernel32, limits_type, last_error = cls._api or cls._load_api()
        except (ImportError, OSError, AttributeError) as e:
            _log.warning("no job objects here (%s): close() can miss what a server started", e)
            return None
        job = kernel32.CreateJobObjectW(None, None)
        process = kernel32.OpenProcess(cls._PROCESS_ACCESS, False, pid)
        limits = limits_type(LimitFlags=cls._KILL_ON_JOB_CLOSE)
        ok = bool(job and process) and kernel32.SetInformationJobObject(
            job, cls._EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits), ctypes.sizeof(limits)) and (
            kernel32.AssignProcessToJobObject(job, process))
        error = last_error()
        for handle in (process, None if ok else job):
            if handle:
                kernel32.CloseHandle(handle)
        if not ok:
            _log.warning("no job object for process %d (Windows error %d): close() can miss what it starts",
                         pid, error)
            return None
        return cls(job, kernel32)

    @classmethod
    def _load_api(cls) -> Tuple[Any, Any, Callable[[], int]]:
        if sys.platform == "win32":  # (type checkers read the Windows API only there)
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
            api = cls._api = (kernel32, ExtendedLimits, ctypes.get_last_error)
            return api
        else:
            raise OSError("job objects are a Windows API")

    def terminate(self) -> bool:
        """End every process in the job; False when that could not be done."""
        with self._lock:
            return self._handle is not None and bool(self._kernel32.TerminateJobObject(self._handle, 1))

    def close(self) -> None:
        """Close the job (which ends whatever is still in it)."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle is not None:
                self._kernel32.CloseHandle(handle)


class _WriteJob(object):
    """One message for _PipeWriter: queued, then started by the thread or withdrawn by the sender."""
    __slots__ = ("data", "state", "started", "done", "error")
    error: OSError | None

    def __init__(self, data: bytes) -> None:
        # (started: the time.monotonic() the thread began it, once ``state`` is "started")
        self.data, self.state, self.started, self.done, self.error = data, "queued", 0.0, threading.Event(), None


class _PipeWriter(object):
    """Windows: blocking writes to a pipe on a thread of its own, so a sender can give up at
    its deadline (Windows has no select() on pipes, and no non-blocking pipes before 3.12).
    A message the thread has not begun by its deadline is withdrawn: none of it goes out; one it
    began just before gets WRITE_FINISH_GRACE from its start to end."""

    def __init__(self, fd: int, name: str) -> None:
        self._fd = fd
        self._lock = threading.Lock()  # a job is either started or withdrawn, never both
        self._worker = _Worker(name, what="write to the server")
        self._worker.start()

    def write(self, data: bytes, deadline: float | None) -> bool | None:
        """True once written; None when the deadline came before the write began (nothing went
        out: the stream is intact); False when it came during the write (how much went out is
        unknown); raises the OSError of a failed write."""
        job = _WriteJob(data)
        if not self._worker.put(self._write, job):
            return None  # (after close(): nothing goes out)
        if not job.done.wait(_remaining(deadline)):
            with self._lock:
                if job.state == "queued":
                    job.state = "withdrawn"
                    return None
            if not job.done.wait(_remaining(job.started + WRITE_FINISH_GRACE)):
                return False
        if job.error is not None:
            raise job.error
        return True

    def close(self) -> None:
        """The thread ends once what is queued before this is written (join() waits for that)."""
        self._worker.stop(wait=False)

    def join(self, seconds: float) -> None:
        """After close(): wait up to ``seconds`` for the thread to end.  It cannot end while a
        write to a peer that does not read blocks it (nothing but the peer ends such a write):
        the caller then leaves it, with its descriptor, to end with the peer."""
        self._worker.join(_deadline_after(seconds))

    def _write(self, job: _WriteJob) -> None:
        with self._lock:
            if job.state == "withdrawn":
                return
            job.state, job.started = "started", time.monotonic()
        try:
            view = memoryview(job.data)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as e:
            job.error = e
        job.done.set()


def _split_command(command: str) -> List[str]:
    """A command string as an argv list, by the rules of this platform's shells."""
    if os.name == "nt":
        return _split_windows(command)
    import shlex  # only when a string needs splitting: a list argv never imports it
    return shlex.split(command)


def _split_windows(command: str) -> List[str]:
    """Split a command line as the Microsoft C runtime splits a program's own: blanks
    separate words, double quotes group; 2n backslashes before a quote give n backslashes
    and the quote delimits, 2n+1 give n and a literal quote; a doubled quote inside quotes
    is a literal quote; other backslashes are literal, and in the first word (the program)
    every backslash is, so "C:\\Program Files\\x.exe" works as typed."""
    argv: List[str]
    word: List[str]
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


class _LineTransport(_Transport):
    """One JSON message per line over two descriptors: the reader thread (framing, the size
    limit), sends bounded by their deadline through a writer thread (_PipeWriter), and the
    dropped connection when a write outlives its deadline.  Its two kinds: stdio (a server
    process it starts) and streams (descriptors the caller already has)."""

    def __init__(self, name: str, timeout: float) -> None:
        self.name = name
        self.timeout = timeout  # bounds every write, even for requests without a deadline
        self._write_lock = threading.Lock()
        self._pid = _pid  # the process that owns the connection; a forked child leaves it alone
        self._closing = False  # close() has begun: nothing more is written
        self._drop_reason: str | None = None  # set when we end the connection ourselves, and why
        self._reader: threading.Thread | None = None
        self._writer: _PipeWriter | None = None  # (stdio: Windows only)

    # -- receiving (reader thread) -------------------------------------------
    def _read_loop(self, fd: int) -> None:
        receive, loads = self._router.receive, _decode_str
        read = os.read
        splitter = _LineSplitter(MAX_MESSAGE_BYTES, lambda: _log.warning(
            "%s sent a message of over %d bytes; dropped it", self.name, MAX_MESSAGE_BYTES))
        feed = splitter.feed
        try:
            while True:
                chunk = read(fd, PIPE_READ_BYTES)
                at_end = not chunk
                lines = feed(chunk) if chunk else [splitter.finish()]  # at EOF: a last line without its end
                # Each message is let go of as soon as the next form of it exists (bytes, text, the
                # parsed value), and nothing of it is held while the next read waits: a large
                # message costs about twice its size here, not five times.
                for i in range(len(lines)):
                    line, lines[i] = lines[i], b""
                    if not line or line == b"\r":  # blank lines and bare CRs are tolerated silently
                        continue
                    text = ""
                    try:
                        text = line.decode("utf-8")
                        line = b""
                        msg = loads(text)
                    except (ValueError, RecursionError):  # (UnicodeDecodeError, JSON nested too deeply)
                        shown = bytes(line[:_EXCERPT_CHARS]) if line else (  # (line: not yet decoded)
                            text[:_EXCERPT_CHARS].encode("utf-8"))
                        if shown.strip():
                            _log.warning("%s wrote a line that is not JSON: %s", self.name,
                                         _shorten(repr(shown[:_EXCERPT_CHARS]), _SHOWN_CHARS))
                        continue
                    finally:
                        text = ""
                    try:
                        receive(msg)
                    except Exception:  # a bug in routing must not end the reader
                        _log.exception("error routing a message from %s", self.name)
                    msg = None
                if at_end:
                    break
        except OSError:
            pass  # the pipe was closed under us
        finally:
            try:
                error = self._closed_error()
            except Exception as e:  # whatever happens, the pending requests learn the end now
                error = ConnectionClosed("%s ended its output (%s)" % (self.name, e))
            self._router.closed(error)

    # -- sending -------------------------------------------------------------
    def send(self, msg: _Json, data: bytes, deadline: float | None = None, wait_here: bool = False,
             headers: Mapping[str, str] | None = None) -> None:
        deadline = _deadline_or(deadline, self.timeout)
        # (uncontended, the usual case: taken without working out how long it may be waited for)
        if not self._write_lock.acquire(False) and not self._write_lock.acquire(True, _remaining(deadline)):
            raise RequestTimeout("%s is not reading its stdin" % self.name)
        try:
            # Checked under the lock that close() takes before closing stdin: no write can
            # reach a descriptor number that has since been closed (and maybe reused).
            if self._closing or _pid != self._pid:
                raise ConnectionClosed("the connection to %s is closed" % self.name)
            self._write(data, deadline)
        finally:
            self._write_lock.release()

    def _write_error(self, error: OSError, deadline: float | None) -> ConnectionClosed:
        # A server that closed its stdin has usually exited: its exit code and last stderr lines
        # say why, where the broken pipe alone would not (waited for within the deadline only).
        closed = self._closed_error(deadline)
        if closed.returncode is None and self._drop_reason is None:
            return ConnectionClosed("cannot write to %s: %s" % (self.name, error))
        return closed

    def _write(self, data: bytes, deadline: float) -> None:
        # The writer thread writes.  A write that began and did not end by the deadline left
        # an unknown part out, so the connection is dropped (killing the server frees the
        # write); one the thread had not begun was withdrawn, and the stream is intact.
        assert self._writer is not None  # (start() made it wherever this writes)
        try:
            written = self._writer.write(data, deadline)
        except OSError as e:
            raise self._write_error(e, deadline)
        if written is None:
            raise RequestTimeout("the deadline passed before the message to %s could be written" % self.name)
        if not written:
            self._drop("stopped reading its stdin")

    def _drop(self, why: str) -> NoReturn:
        """A write still blocked at its deadline left part of a message out: the stream is broken,
        so the connection is dropped -- every other request and every later call sees it closed
        (``_by_deadline``: a request whose deadline passed too sees a timeout).  The deadline wins
        for the writer: RequestTimeout."""
        self._drop_reason = "%s %s; mcp_min dropped the connection" % (self.name, why)
        self._kill()
        raise RequestTimeout("the deadline passed while writing to %s: %s" % (self.name, self._drop_reason))

    def _closed_error(self, deadline: float | None = None) -> ConnectionClosed:
        """The error that says why the connection ended (waiting until ``deadline`` at most)."""
        if self._closing:
            return ConnectionClosed("client closed the connection to %s" % self.name)
        error = self._end_error(deadline)
        error._by_deadline = self._drop_reason is not None  # (see _drop)
        return error

    def _end_error(self, deadline: float | None) -> ConnectionClosed:
        raise NotImplementedError  # (each kind knows its own end)

    def _kill(self) -> None:
        raise NotImplementedError  # (each kind ends its peer its own way)


class _StdioTransport(_LineTransport):
    """A server process spoken to over its stdin/stdout, one JSON message per line.

    The pipes are unbuffered and read with os.read: no buffered-file lock that a
    reader thread holds can then deadlock a forked child, and line framing and
    the size limit are ours."""

    kind = "stdio"
    restartable = True

    def __init__(self, argv: Sequence[str | os.PathLike[str]], env: Mapping[str, str] | None = None,
                 inherit_env: bool = False, cwd: str | os.PathLike[str] | None = None,
                 on_stderr: Callable[[str], object] | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.argv = [str(a) if isinstance(a, os.PathLike) else a for a in argv]
        if not self.argv or not all(isinstance(a, str) for a in self.argv):
            raise ValueError("the server command must be a non-empty list of strings, not %r" % (argv,))
        _LineTransport.__init__(self, "server %r" % " ".join(self.argv), timeout)
        self._env = _server_env(env, inherit_env)
        self._cwd = cwd
        self._on_stderr = on_stderr
        self._stderr_lines: Deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.stderr_tail = self._stderr_lines
        self._proc: _Child | None = None
        self._stderr_reader: threading.Thread | None = None
        # Set when the stderr reader has read its last line.  The stdout reader waits on this, not
        # on join(): close() may join the same thread at the same moment, and two concurrent joins
        # of one thread can raise RuntimeError ("cannot release un-acquired lock"; seen on PyPy 3.9).
        self._stderr_done = threading.Event()
        self._job: _WindowsJob | None = None  # Windows: the job object holding the server's process tree

    def start(self, router: _Dispatcher) -> None:
        subprocess = _stdlib("subprocess", "running a stdio server")  # (HTTP-only users never import it)
        self._router = router
        command: str | List[str] = self.argv
        if os.name == "nt":
            program = _resolve_program(self.argv[0], self._env, self._cwd)
            command = _batch_command_line(program, self.argv[1:]) if os.path.splitext(program)[1].lower() in (
                ".cmd", ".bat") else [program] + self.argv[1:]
        held = _hold_standard_descriptors()  # (the server gets its 0, 1 and 2 either way: our pipes)
        try:
            proc: _Child = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                env=self._env, cwd=self._cwd, close_fds=True, **_process_group())
        except OSError as e:
            raise ConnectionClosed("cannot start %s: %s" % (self.name, e.strerror or e))
        except (ValueError, TypeError) as e:
            raise ValueError("cannot start %s: %s" % (self.name, e))
        finally:
            for fd in held:
                os.close(fd)
        self._proc = proc
        pid = proc.pid
        self._stdin_fd = proc.stdin.fileno()
        if os.name == "posix":  # lets a write give up when the server stops reading
            os.set_blocking(self._stdin_fd, False)
        else:
            self._job = _WindowsJob.for_process(pid)  # at once: before the server starts children
        try:
            if os.name == "nt":
                self._writer = _PipeWriter(self._stdin_fd, "mcp_min-writer-%d" % pid)
            # stderr's reader first: the stdout reader's error for a server that is gone waits for it,
            # so it must exist by the time the stdout reader can see the end of its stream
            self._stderr_reader = _start_thread(self._stderr_loop, "mcp_min-stderr-%d" % pid,
                                                (proc.stderr.fileno(),), "read the server's stderr")
            self._reader = _start_thread(self._read_loop, "mcp_min-reader-%d" % pid, (proc.stdout.fileno(),))
        except ConnectionClosed:
            self._kill()
            if self._job is not None:
                self._job.close()
            raise

    def _stderr_loop(self, fd: int) -> None:
        read = os.read
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
        finally:
            try:
                if pending:
                    self._stderr_line(pending)
            finally:
                self._stderr_done.set()

    def _stderr_line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        self._stderr_lines.append(_shorten(text, STDERR_LINE_CHARS))
        if self._on_stderr is not None:  # hands over to a worker thread: never blocks this reader
            self._on_stderr(text)

    def _end_error(self, deadline: float | None) -> ConnectionClosed:
        def within(seconds: float) -> float:
            return seconds if deadline is None else min(seconds, _remaining(deadline))
        code = self._child.returncode if self._wait(within(EXIT_CODE_WAIT)) else None
        if self._stderr_reader is not None:
            self._stderr_done.wait(within(STDERR_DRAIN))  # let the last stderr lines arrive
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
        return ConnectionClosed(text, code, tail, _stderr_excerpt(tail))

    @property
    def _child(self) -> _Child:  # the server process, for what runs only once start() made it
        assert self._proc is not None
        return self._proc

    def _write(self, data: bytes, deadline: float) -> None:
        if os.name == "nt":  # (no select() on pipes: the writer thread writes)
            _LineTransport._write(self, data, deadline)
            return
        fd = self._stdin_fd
        try:
            n = os.write(fd, data)
            if n == len(data):
                return  # the usual case: the pipe had room
        except BlockingIOError:
            n = 0
        except OSError as e:
            raise self._write_error(e, deadline)
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
                raise self._write_error(e, deadline)

    # -- shutting down -------------------------------------------------------
    def close(self, grace: float = CLOSE_GRACE) -> None:
        """Close stdin, wait ``grace``, terminate, wait, kill (the whole process group or
        tree); then reap and join, every step bounded."""
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
        if not self._wait(grace):
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
        if self._writer is not None:  # (Windows) a write stuck above ended with the server's tree
            self._writer.close()  # (again, if above: a second stop is never read)
            self._writer.join(CLOSE_GRACE)
        # A descriptor is closed only once its reader is done: a reader that read from a
        # closed (and reused) descriptor number would read someone else's file.
        for thread, f in ((self._reader, proc.stdout), (self._stderr_reader, proc.stderr)):
            if thread is None or not thread.is_alive():
                try:
                    f.close()
                except OSError:
                    pass
            elif thread is not me:  # (say what close() leaves: README, "What close() guarantees")
                _log.warning("a process outside the group of %s still holds its %s open; that reader stays",
                             self.name, "stdout" if f is proc.stdout else "stderr")
        if self._job is not None:
            self._job.close()

    def _wait(self, seconds: float) -> bool:
        """Whether the server exited (and is reaped) within ``seconds``.  Popen.wait(timeout)
        polls, sleeping 0.5, 1, 2, 4 ... ms between looks, so a server that exits after 4 ms is
        seen after 7.5 (closing took up to twice the server's own exit).  Where Linux offers a
        process descriptor (os.pidfd_open: Linux 5.3+, Python 3.9+), the exit wakes us at once
        and Popen.wait only reaps; elsewhere, or when the kernel refuses one, Popen.wait alone.
        From Python 3.15 on, Popen.wait itself waits on a descriptor (or kqueue) where it can."""
        import subprocess
        proc = self._child
        deadline = _deadline_after(seconds)
        if proc.returncode is None and sys.version_info < (3, 15) and hasattr(os, "pidfd_open"):
            try:
                pidfd = os.pidfd_open(proc.pid)
            except OSError:  # an older kernel (ENOSYS), or reaped meanwhile by another thread
                pass
            else:
                try:
                    if proc.returncode is None:  # (not reaped by another thread before the descriptor was made)
                        import select  # poll, not select(): no FD_SETSIZE limit on the descriptor's number
                        poller = select.poll()
                        poller.register(pidfd, select.POLLIN)
                        poller.poll(math.ceil(_remaining(deadline) * 1000))  # readable once it exited
                finally:
                    os.close(pidfd)
        try:
            proc.wait(_remaining(deadline))  # at once if it exited
            return True
        except subprocess.TimeoutExpired:
            return False

    def _terminate(self) -> None:
        if os.name == "posix":
            self._signal("SIGTERM")
        else:
            self._kill()  # Windows has no gentle signal for a console-less process tree

    def _signal(self, name: str) -> None:
        try:
            import signal
            os.killpg(self._child.pid, getattr(signal, name))
        except (OSError, ValueError):
            pass  # already gone

    def _kill(self) -> None:
        if os.name == "posix":
            self._signal("SIGKILL")
        else:  # the whole tree: npx/uvx grandchildren would keep the pipes open
            if self._job is None or not self._job.terminate():
                import subprocess  # (taskkill /T: only while the server itself still lives)
                try:
                    subprocess.run(_taskkill_argv(self._child.pid), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=CLOSE_GRACE,
                                   **_process_group())
                except (OSError, subprocess.SubprocessError):
                    pass
            try:
                self._child.kill()
            except OSError:
                pass
        self._wait(CLOSE_GRACE)


# -- streams: the stdio framing over byte streams the caller already has ----------------

def _fd_of(stream: Any, what: str) -> int:
    """The descriptor of a stream given to Client.over(): an int, or anything with fileno()."""
    try:
        fd = stream if type(stream) is int else stream.fileno()
    except (AttributeError, OSError, ValueError) as e:
        raise ValueError("the %s must be a file descriptor or have fileno() (a socket, a pipe end, a binary "
                         "file), not %r (%s)" % (what, stream, e))
    if type(fd) is not int or fd < 0:
        raise ValueError("the %s has no usable file descriptor: %r" % (what, stream))
    return fd


def _shut_down(sock: _socket_module.socket) -> None:
    """End a socket's both directions from any thread: a read or write blocked on it returns."""
    import socket
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass  # not connected any more, or closed


class _StreamTransport(_LineTransport):
    """The stdio framing (one JSON message per line) over byte streams the caller already
    has: a connected socket, or a reader and a writer (``os.pipe()`` ends, binary files,
    anything with ``fileno()``).  No process.  The reader and the deadline-bounded writer
    thread of _LineTransport do the work, so the caller's descriptors keep their
    blocking mode.  The transport owns the streams from now on.

    close() shuts a socket down (which ends its reader and a stuck write at once), else
    closes the writer (EOF: the server should end its output, as stdio servers do); then it
    joins the reader and closes the streams.  Ended streams cannot be reopened."""

    kind = "streams"

    def __init__(self, reader: Any, writer: Any = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        _stdlib("select", "Client.over()")  # (a write waits on it while the pipe is full)
        socket = sys.modules.get("socket")  # (a Python that never imported it was given no socket)
        writer = reader if writer is None else writer
        self._rfd, self._wfd = _fd_of(reader, "reader"), _fd_of(writer, "writer")
        self._streams = [reader] if self._rfd == self._wfd else [writer, reader]  # closed in this order
        self._socket: _socket_module.socket | None = next(
            (s for s in (reader, writer) if socket and isinstance(s, socket.socket)), None)
        if self._socket is not None and os.name == "nt":
            raise ValueError("on Windows a socket is not a file descriptor: give Client.over() pipe ends")
        _LineTransport.__init__(self, "server on %s" % ("descriptor %d" % self._rfd if self._rfd == self._wfd
                                                        else "descriptors %d and %d" % (self._rfd, self._wfd)), timeout)

    def start(self, router: _Dispatcher) -> None:
        if self._writer is not None:
            raise ConnectionClosed("%s ended, and streams cannot be reopened" % self.name)
        self._router = router
        writer = self._writer = _PipeWriter(self._wfd, "mcp_min-writer-streams")
        try:
            self._reader = _start_thread(self._read_loop, "mcp_min-reader-streams", (self._rfd,))
        except ConnectionClosed:
            writer.close()
            writer.join(CLOSE_GRACE)  # (nothing was queued: at once)
            raise

    def _kill(self) -> None:
        # A write outlived its deadline (see _drop): half a message may be out, so the stream is over.
        if self._socket is not None:
            _shut_down(self._socket)  # also ends the reader
        self._router.closed(self._closed_error())

    def _end_error(self, deadline: float | None) -> ConnectionClosed:
        return ConnectionClosed(self._drop_reason or "%s ended its output" % self.name)  # (nothing to wait for)

    def close(self, grace: float = CLOSE_GRACE) -> None:
        """Bounded and idempotent; a descriptor another thread may still use stays open (with a warning)."""
        writer, reader = self._writer, self._reader
        if writer is None or reader is None or self._closing or _pid != self._pid:
            return  # (not started, or its start failed: then its writer ended already)
        self._closing = True
        if self._socket is not None:
            _shut_down(self._socket)
        locked = self._write_lock.acquire(True, CLOSE_GRACE)
        try:  # an empty write is a barrier: once it is through, no earlier write still uses the writer
            idle = locked and writer.write(b"", _deadline_after(CLOSE_GRACE))
            writer.close()
        finally:
            if locked:
                self._write_lock.release()
        if idle:
            writer.join(CLOSE_GRACE)  # its stop was next in its queue: it ends at once
        if reader is not threading.current_thread():
            if idle and self._rfd != self._wfd:
                self._close_stream(self._streams[0])  # EOF for the server: it ends its output
            reader.join(CLOSE_GRACE)
        if not idle:
            _log.warning("a write to %s is still stuck; its writer stays open", self.name)
        elif reader.is_alive():
            _log.warning("%s has not ended its output; its reader stays open", self.name)
        else:
            self._close_stream(self._streams[-1])

    @staticmethod
    def _close_stream(stream: Any) -> None:
        try:
            os.close(stream) if type(stream) is int else stream.close()
        except OSError:
            pass


# -- HTTP: one engine for every request ----------------------------------------------

class _Deadlines(object):
    """One thread that cuts HTTP connections whose request outlived its deadline.

    A socket timeout only bounds each wait for bytes: a server trickling one
    byte at a time would keep a request going forever.  Shutting the socket down
    wakes the thread blocked on it, which then reports RequestTimeout.

    Its life: started by the first request watched; while an HTTP client is open
    (``hold()``, one per transport's engine) it waits for work without costing
    anything; once none is, it ends as soon as no request is watched, and the last
    ``release()`` waits for that -- so no thread is left once close() returns, and
    a client's requests never pay for starting one."""

    def __init__(self) -> None:
        import heapq
        self._push, self._pop = heapq.heappush, heapq.heappop
        # watch() and unwatch() run twice per request: they enter the condition's lock itself, which
        # skips Condition's __enter__/__exit__ (Python functions, two calls per use); same lock.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._heap: List[_Watch] = []  # [deadline, sequence, connection or None once unwatched]
        self._sequence = itertools.count()
        self._thread: threading.Thread | None = None
        self._holders = 0  # open engines that keep the thread waiting for work
        self._wake_at = 0.0  # when the thread next wakes by itself (infinity: only when notified)

    def hold(self) -> None:
        with self._cond:
            self._holders += 1

    def release(self) -> None:
        with self._cond:
            self._holders -= 1
            thread = self._thread if self._holders == 0 else None
            if thread is not None:
                self._cond.notify()
        if thread is not None and thread is not threading.current_thread():
            thread.join(CLOSE_GRACE)  # at once unless a request is still being cut

    def wait_idle(self) -> None:
        """After a client closed: when nothing is watched and no engine holds the thread, it
        ends at once; wait for that, so that none is left once close() returns."""
        with self._cond:
            idle = not self._holders and all(entry[2] is None for entry in self._heap)
            thread = self._thread if idle else None
            if thread is not None:
                self._cond.notify()
        if thread is not None and thread is not threading.current_thread():
            thread.join(CLOSE_GRACE)

    def watch(self, deadline: float, conn: _Cuttable) -> _Watch:
        entry = [deadline, next(self._sequence), conn]
        with self._lock:
            self._push(self._heap, entry)
            if self._thread is None:
                try:
                    self._thread = _start_thread(self._run, "mcp_min-deadlines", what="bound HTTP requests")
                except ConnectionClosed:
                    entry[2] = None  # (popped by the next watch or unwatch)
                    raise
            elif deadline < self._wake_at:  # only then: a wake-up per request would cost every request
                self._cond.notify()
        return entry

    def unwatch(self, entry: _Watch) -> None:
        with self._lock:
            entry[2] = None
            while self._heap and self._heap[0][2] is None:  # keep the heap as small as the work
                self._pop(self._heap)
            if not self._heap and not self._holders and self._thread is not None:
                self._cond.notify()  # nothing left to watch for anyone: the thread may end

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][2] is None:
                    self._pop(self._heap)
                now = time.monotonic()
                if not self._heap:
                    if not self._holders:
                        self._thread = None
                        return
                    self._wake_at = float("inf")
                    self._cond.wait()
                elif self._heap[0][0] > now:
                    self._wake_at = self._heap[0][0]
                    self._cond.wait(min(self._wake_at - now, LONGEST_WAIT))
                else:
                    entry = self._pop(self._heap)
                    entry[2].cut()
                    entry[2] = None


_deadlines: _Deadlines | None = None  # this process's _Deadlines, made when the first HTTP engine needs it
_deadlines_made = threading.Lock()  # (two threads making it at once would split the holders)


def _the_deadlines() -> _Deadlines:
    global _deadlines
    with _deadlines_made:
        if _deadlines is None:
            _deadlines = _Deadlines()
        return _deadlines


def _forget_deadlines_in_child() -> None:
    # The thread does not exist in a forked child, and the parent's locks may have been held.
    global _deadlines, _deadlines_made
    _deadlines, _deadlines_made = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_deadlines_in_child)


def _watch(deadline: float, conn: _Cuttable) -> _Watch:
    return (_deadlines or _the_deadlines()).watch(deadline, conn)


def _unwatch(entry: _Watch | None) -> None:
    if entry is not None and _deadlines is not None:
        _deadlines.unwatch(entry)


if TYPE_CHECKING:
    _ConnBase = _http_client.HTTPConnection  # (what _ConnState is always mixed into)
else:
    _ConnBase = object


class _ConnState(_ConnBase):
    """What mcp_min adds to http.client's connections (mixed into the _Conn and _TlsConn
    classes, which _conn_class() makes on first use, so only HTTP users import http.client)."""

    cut_short = False  # cut(): a request on it must not pass for answered, nor the connection be pooled
    reuse_until: float | None = None  # time.monotonic() past which it is not reused (the server's Keep-Alive)
    # the socket: http.client forgets ``sock`` once a response owns it; cut() does not
    raw_sock: _socket_module.socket | None = None
    poller: Any = None  # a select.poll() watching raw_sock for input (None where select has no poll)

    def connect(self) -> None:
        super(_ConnState, self).connect()
        self.raw_sock = self.sock
        import select
        if hasattr(select, "poll"):  # made once per socket: dropped() runs before every reuse
            self.poller = select.poll()
            self.poller.register(self.sock, select.POLLIN)

    def cut(self) -> None:
        """Cut the connection from any thread: the socket is shut down, so a blocked reader wakes."""
        self.cut_short = True
        if self.raw_sock is not None:
            _shut_down(self.raw_sock)

    def dropped(self) -> bool:
        """True when this idle kept-alive connection is unusable: never connected, cut, idle
        too close to the timeout its server announced, or readable (the server closed it, or
        sent something unasked: the same to us)."""
        if self.sock is None or self.cut_short or _expired(self.reuse_until):
            return True
        try:
            if self.poller is not None and self.sock is self.raw_sock:
                return bool(self.poller.poll(0))
            import select  # (select() takes no descriptor over 1023: poll is used wherever it exists)
            return bool(select.select((self.sock,), (), (), 0)[0])
        except (OSError, ValueError):
            return True


_conn_classes: Dict[bool, Callable[..., _ConnState]] = {}  # tls -> the connection class


def _conn_class(tls: bool) -> Callable[..., _ConnState]:
    if not _conn_classes:
        import http.client

        class _Conn(_ConnState, http.client.HTTPConnection):
            pass
        _conn_classes[False] = _Conn
        if hasattr(http.client, "HTTPSConnection"):  # (not without the ssl module)

            class _TlsConn(_ConnState, http.client.HTTPSConnection):
                pass
            _conn_classes[True] = _TlsConn
    return _conn_classes[tls]  # (True: there once ssl imports, which _Tls.context() checks first)


class _Cut(object):
    """Lets another thread (a cancel, close()) cut one HTTP exchange short, even
    before its answer has started."""

    __slots__ = ("conn", "cut")
    conn: _ConnState | None

    def __init__(self) -> None:
        self.conn, self.cut = None, False

    def __call__(self) -> None:
        self.cut = True
        if self.conn is not None:
            self.conn.cut()


# What a TLS failure that may be a client certificate's absence ends with (an alert that says so, a
# handshake failure, a TLS 1.3 connection closed before its first answer): the one sentence for all.
_CLIENT_CERT_HINT = "; if the server asks for a client certificate, give one: cert=\"client.pem\" (CLI: --cert)"


def _network_error(error: BaseException, url: str, deadline: float | None, what: str = "connection to") -> McpError:
    """The one map from a network failure (or an McpError of the exchange) to what the caller
    sees.  Once the deadline passed, whatever failed is RequestTimeout: the deadline thread's
    cut shows as a broken pipe or a reset, sending or reading."""
    import socket
    if _expired(deadline) or isinstance(error, socket.timeout):
        return RequestTimeout("no answer from %s in time" % url)
    if isinstance(error, McpError):
        return error
    if isinstance(error, ConnectionRefusedError):
        return ConnectionClosed("cannot reach %s: connection refused" % url)
    ssl = sys.modules.get("ssl")  # (imported by then, if TLS was used at all)
    if ssl is not None and isinstance(error, ssl.SSLCertVerificationError):
        return ConnectionClosed("TLS: the certificate of %s is not trusted (%s); give its CA with verify="
                                "\"ca.pem\" (CLI: --cacert)" % (url, getattr(error, "verify_message", None) or error))
    if ssl is not None and isinstance(error, ssl.SSLError):
        # (an SSLEOFError: how a refused client certificate often ends under TLS 1.3)
        hint = _CLIENT_CERT_HINT if "CERTIFICATE_REQUIRED" in str(error) or "HANDSHAKE_FAILURE" in str(error) \
            or isinstance(error, ssl.SSLEOFError) else ""
        return ConnectionClosed("TLS with %s failed: %s%s" % (url, error, hint))
    reason = getattr(error, "strerror", None) or error
    return ConnectionClosed("%s %s failed: %s" % (what, url, reason))


def _keep_alive_timeout(headers: _Headers) -> float | None:
    """The seconds an idle connection is kept by a server that says so (``Keep-Alive: timeout=5``,
    as Node does), else None."""
    value = headers.get("Keep-Alive")
    if not value:  # (most servers send none: no pattern matched per answer)
        return None
    match = re.search(r"(?:^|[\s,;])timeout\s*=\s*\"?(\d+)", value, re.IGNORECASE)
    return float(match.group(1)) if match else None


class _Answer(object):
    """One HTTP response: ``status``, ``headers``, ``url``; bounded reads; ``release()``
    returns the connection to the pool when it can serve another request."""

    def __init__(self, engine: _HttpEngine, resp: _http_client.HTTPResponse, conn: _ConnState, key: _RouteKey,
                 watch: _Watch | None, deadline: float | None, url: str, cut: _Cut | None = None) -> None:
        self._conn: _ConnState | None = conn  # (None once released)
        self._engine, self._resp, self._key = engine, resp, key
        self._watch, self._deadline, self._cut = watch, deadline, cut
        self.url = url
        self.status = resp.status
        self.headers = resp.headers
        self.body = b""  # of a non-2xx answer, read in advance (at most HTTP_ERROR_BODY bytes)
        # True once the body was provably read to its end (see release()).
        self._whole = False

    def read(self, limit: int = MAX_MESSAGE_BYTES) -> bytes:
        """The whole body, read in bounded pieces; McpError when it is larger than ``limit``."""
        import http.client
        parts: List[bytes] = []
        size = 0
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
                    if self._resp.length or self._conn is None or self._conn.cut_short:
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

    def read_some(self, limit: int) -> bytes:
        """What a stream has next, at most ``limit`` bytes, as soon as any came (one read of
        the socket at most); b"" when it ended, was cut, or failed."""
        import http.client
        try:
            return self._resp.read1(limit)
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            self.abort()  # whatever state the connection is in, it is not one to reuse
            return b""

    def discard(self) -> None:
        """Done with an answer whose body we do not need (that of a notification): an empty
        one leaves the connection reusable; any other is not read at all -- a server that
        streams or trickles one cannot hold us -- and its connection is dropped."""
        if self._resp.length == 0:
            self._resp.read()
            self._whole = True
        else:
            self.abort()
        self.release()

    def stream_forever(self) -> None:
        """From now on this is a stream that may stay quiet: no deadline, no read timeout
        (close() ends it by cutting the connection)."""
        _unwatch(self._watch)
        self._watch = None
        sock = self._conn.raw_sock if self._conn is not None else None
        if sock is not None:
            try:
                sock.settimeout(None)
            except OSError:
                pass

    def abort(self) -> None:
        conn = self._conn
        if conn is not None:
            conn.cut()

    def release(self) -> None:
        """Done with this answer: pool the connection when its body was provably read to
        the end by read() or discard().  A stream read by read_some() never is: it is given
        up once its answer came, or it ended wherever the server or a cut ended it, and a
        connection pooled after such an end may be one the server has closed: the next
        request on it would be lost."""
        _unwatch(self._watch)
        self._watch = None
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._cut is not None and self._cut.conn is conn:
            self._cut.conn = None  # a cancel from now on must not cut the request that reuses it
        reusable = self._whole and self._resp.isclosed() and not self._resp.will_close and not conn.cut_short
        if reusable:
            idle_timeout = _keep_alive_timeout(self.headers)
            reusable = idle_timeout is None or idle_timeout > KEEP_ALIVE_MARGIN
            conn.reuse_until = None if idle_timeout is None else time.monotonic() + idle_timeout - KEEP_ALIVE_MARGIN
        self._resp.close()
        if not (reusable and self._engine._idle_put(self._key, conn)):
            conn.close()

    def __enter__(self) -> _Answer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class _Tls(object):
    """The TLS settings of one client (``Client(verify=, cert=, ssl_context=)``): the one
    context every https connection of it uses, OAuth's included, made once.

    ``verify``: True (the system's CAs; ``ssl.create_default_context()``, which OpenSSL
    points at SSL_CERT_FILE / SSL_CERT_DIR when they are set), False (no verification:
    logged once as a warning), or the path of a CA bundle file or a directory of hashed
    CA files (then only those CAs).  ``cert``: a PEM file with the client certificate
    and its key, or a (certificate file, key file) pair.  ``ssl_context``: a ready
    ``ssl.SSLContext``, used as it is (then neither of the others)."""

    def __init__(self, verify: bool | str = True, cert: str | Tuple[str, str] | List[str] | None = None,
                 ssl_context: _ssl_module.SSLContext | None = None) -> None:
        if not (isinstance(verify, bool) or isinstance(verify, str) and verify):
            raise ValueError("verify must be True, False or the path of a CA file or directory, not %r" % (verify,))
        if not (cert is None or isinstance(cert, str) and cert or isinstance(cert, (tuple, list)) and len(
                cert) == 2 and all(isinstance(c, str) and c for c in cert)):
            raise ValueError("cert must be a PEM file path or a (certificate file, key file) pair, not %r" % (cert,))
        if ssl_context is not None:
            if verify is not True or cert is not None:
                raise ValueError("ssl_context= is used as it is: give verify= and cert= to it, not beside it")
            if not hasattr(ssl_context, "wrap_socket"):
                raise ValueError("ssl_context must be an ssl.SSLContext, not %r" % (ssl_context,))
        self.verify, self.cert, self._context = verify, cert, ssl_context
        self._lock = threading.Lock()
        if verify is not True or cert is not None:
            self.context()  # a wrong path is an error now, not at the first request

    def context(self) -> _ssl_module.SSLContext:
        with self._lock:
            if self._context is None:
                self._context = self._make()
            return self._context

    def _make(self) -> _ssl_module.SSLContext:
        ssl = _stdlib("ssl", "TLS (https:// URLs, verify=, cert=)")
        verify = self.verify
        context: _ssl_module.SSLContext
        try:
            if isinstance(verify, str):
                context = ssl.create_default_context(**{"capath" if os.path.isdir(verify) else "cafile": verify})
            else:
                context = ssl.create_default_context()
            if verify is False:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                _log.warning("TLS certificates are not verified (verify=False): anyone on the network can "
                             "read and change this client's traffic, credentials included")
            if self.cert is not None:
                certfile, keyfile = (self.cert, None) if isinstance(self.cert, str) else self.cert
                context.load_cert_chain(certfile, keyfile)
        except (OSError, ssl.SSLError) as e:
            raise ValueError("cannot use the TLS settings (verify=%r, cert=%r): %s" % (verify, self.cert, e))
        return context


# What every HTTP request imports (http.client brings email, urllib.request tempfile; the pool's
# check of an idle connection, select); checked when an engine is made (ssl: when TLS is).
_HTTP_MODULES = ("socket", "select", "http.client", "urllib.request", "hashlib")


class _HttpEngine(object):
    """Every HTTP request mcp_min makes, as "HTTP" in the module docstring says (proxies, TLS,
    kept-alive connections, redirects, deadlines); also one map of network errors, and a bounded
    retry loop for the auth plug-in.

    ``credential_headers``: header names (besides Authorization, Cookie, DPoP and
    Mcp-Session-Id) never to send to another origin nor to log -- the caller's own
    headers; whatever the auth plug-in gives a request is treated the same way.
    ``keep_alive``: pool connections until close() (a transport's engine); without
    it every connection is closed after its answer and nothing needs closing (OAuth's
    engine, which lives as long as its OAuth object and talks to servers rarely).
    """

    def __init__(self, credential_headers: Iterable[str] = (), keep_alive: bool = True,
                 tls: _Tls | None = None) -> None:
        for name in _HTTP_MODULES:  # here, once: the engine's own imports then cannot fail
            _stdlib(name, "HTTP (http:// and https:// URLs)")
        self._own = frozenset(h.lower() for h in credential_headers)
        self._lock = threading.Lock()
        self._routes: Dict[str, _Route] = {}  # URL -> its _Route
        self._idle: Dict[_RouteKey, List[_ConnState]] = {}  # (tls, host, tunnel host) -> [idle connections]
        self._tls = tls or _Tls()
        self._closed = not keep_alive  # (a closed engine pools nothing)
        self._deadlines: _Deadlines | None = None
        if keep_alive:  # the deadline thread waits for this engine's requests until close()
            self._deadlines, self._pid = _the_deadlines(), _pid
            self._deadlines.hold()
        self.authorization: str | None = None  # the fingerprint of what the auth plug-in last gave (see _Transport)

    def request(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None = None,
                deadline: float | None = None, auth: Any = None, cut: _Cut | None = None,
                secure: bool = False) -> _Answer:
        """Send one request and return its _Answer, whatever the status (a non-2xx
        answer comes with ``.body`` read and its connection released).

        ``auth`` (the plug-in) adds headers and may ask for a repeat after 401/403, at
        most MAX_AUTH_RETRIES times.  ``secure`` refuses any URL (redirects included)
        that is not https or http on a loopback address.  Network failures raise
        ConnectionClosed; the deadline passing raises RequestTimeout."""
        attempt = 0
        while True:
            sent, private = dict(headers), self._own
            if auth is not None:
                given = _clean_headers(auth.headers(method, url) or {}, "auth header")
                sent.update(given)
                self.authorization = _fingerprint(given)
                # Whatever the plug-in gives is a credential for this URL, whatever its name
                # (X-Signature, X-Goog-Iap-Jwt-Assertion): it never leaves the origin, never logged.
                private = private | {k.lower() for k in given}
            answer = self._follow(method, url, sent, body, deadline, cut, secure, private)
            challenge = getattr(auth, "challenge", None)
            if answer.status not in (401, 403) or challenge is None or attempt >= MAX_AUTH_RETRIES \
                    or not challenge(method, url, answer.status, answer.headers, sent):
                return answer
            attempt += 1

    def _follow(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, deadline: float | None,
                cut: _Cut | None, secure: bool, private: FrozenSet[str] = frozenset()) -> _Answer:
        """``private``: lower-cased names of the headers that are credentials whatever they are
        called (the caller's own headers, the auth plug-in's), besides the secret-looking ones."""
        for hop in range(HTTP_MAX_REDIRECTS + 1):
            if secure:
                _check_secure(url, "follow a redirect to" if hop else "fetch")
            answer = self._send(method, url, headers, body, deadline, cut, private)
            location = answer.headers.get("Location") if 300 <= answer.status < 400 else None
            if answer.status in (301, 302, 303, 307, 308) and method == "GET" and location:
                import urllib.parse
                answer.release()
                target = urllib.parse.urljoin(url, location)
                if _origin(target) != _origin(url):  # credentials stay with their origin (scheme, host, port)
                    headers = {k: v for k, v in headers.items()
                               if not _is_credential_header(k) and k.lower() not in private}
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

    def _send(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, deadline: float | None,
              cut: _Cut | None, private: FrozenSet[str] = frozenset()) -> _Answer:
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("HTTP %s %s %s", method, url, _redact(headers, private))
        route = self._routes.get(url)
        if route is None:
            route = _Route(url)
            if len(self._routes) >= _MAX_ROUTES:
                self._routes.clear()
            self._routes[url] = route
        if route.proxy_headers:  # (Proxy-Authorization to an HTTP proxy)
            headers = dict(headers, **route.proxy_headers)
        return self._open(method, url, route, headers, body, deadline, cut)

    def _open(self, method: str, url: str, route: _Route, headers: Mapping[str, str], body: bytes | None,
              deadline: float | None, cut: _Cut | None) -> _Answer:
        import http.client
        conn = self._idle_take(route.key)
        if conn is None:
            conn = self._connection(route, deadline)
        if cut is not None:
            cut.conn = conn
        watch: _Watch | None = None
        try:
            if deadline is not None:
                watch = _watch(deadline, conn)
            fresh = conn.sock is None
            if fresh:
                conn.timeout = _remaining(deadline)
                conn.connect()
            if cut is not None and cut.cut:  # cut before the socket existed (a cancel, close())
                raise RequestCancelled("%s %s was cut short" % (method, url))
            if conn.cut_short:  # the deadline passed while connecting
                raise RequestTimeout("no answer from %s in time" % url)
            conn.sock.settimeout(_remaining(deadline))  # each wait; the deadline thread bounds the whole
            try:
                conn.request(method, route.target, body, headers)
            except (BrokenPipeError, ConnectionResetError) as e:
                if conn.cut_short or _expired(deadline):
                    raise  # we cut it (the deadline thread: RequestTimeout below), not the server
                # The server may have answered (413, 401...) and closed before reading it all.
                try:
                    resp = conn.getresponse()
                except (OSError, http.client.HTTPException):
                    # (TLS 1.3 ends the handshake before the server checks our certificate: a
                    # refused or missing one shows as this reset on a new connection's first request)
                    hint = _CLIENT_CERT_HINT if fresh and route.tls else ""
                    raise ConnectionClosed("%s closed the connection while we were sending: %s%s" % (url, e, hint))
            else:
                resp = conn.getresponse()
        except BaseException as e:
            _unwatch(watch)
            conn.close()
            if not isinstance(e, (McpError, OSError, ValueError, http.client.HTTPException)):
                raise
            # The deadline wins on the way out too: once it passed, whatever failed (a write into
            # a connection the deadline thread cut, a server that closed it meanwhile) is a timeout.
            raise _network_error(e, url, deadline)
        return _Answer(self, resp, conn, route.key, watch, deadline, url, cut)

    def _connection(self, route: _Route, deadline: float | None) -> _ConnState:
        if not route.tls:
            conn = _conn_class(False)(route.host, timeout=_remaining(deadline))
        else:
            context = self._tls.context()  # first: without ssl, http.client has no HTTPSConnection
            conn = _conn_class(True)(route.host, timeout=_remaining(deadline), context=context)
        if route.tunnel:  # https through a proxy: CONNECT first; the proxy's credentials go there only
            conn.set_tunnel(route.tunnel, headers=route.tunnel_headers)
        return conn

    def _idle_take(self, key: _RouteKey) -> _ConnState | None:
        """A kept-alive connection that is still usable, or None.  This is the only place a
        connection is given up on and another tried: here nothing has been sent, so nothing
        can run twice.  Once a request's first byte is written, any failure is the request's
        (a server may have read it: a tool must not run twice)."""
        while True:
            with self._lock:
                idle = self._idle.get(key)
                conn = idle.pop() if idle else None
            if conn is None or not conn.dropped():
                return conn
            conn.close()  # the server closed it while idle: nothing was sent on it

    def _idle_put(self, key: _RouteKey, conn: _ConnState) -> bool:
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if self._closed or len(idle) >= HTTP_POOL_SIZE:
                return False
            idle.append(conn)
            return True

    def close(self) -> None:
        """Close the pooled connections; then, when no other engine is open, the deadline
        thread ends (and is waited for).  Idempotent; inert in a forked child."""
        with self._lock:
            self._closed = True
            idle, self._idle = [c for conns in self._idle.values() for c in conns], {}
            held, self._deadlines = self._deadlines, None
        for conn in idle:
            conn.close()
        if held is not None and self._pid == _pid:
            held.release()


class _Route(object):
    """Where a request for one URL goes, by the proxy rules of the environment (HTTP_PROXY,
    HTTPS_PROXY, NO_PROXY, read by urllib's getproxies/proxy_bypass, so they mean what they
    mean to urllib): straight to the server; through an HTTP proxy (an absolute URL on the
    request line); or, for https, through a CONNECT tunnel the proxy opens to the server.
    A proxy URL's user:password becomes its Proxy-Authorization, sent to the proxy only."""

    __slots__ = ("tls", "host", "target", "tunnel", "proxy_headers", "tunnel_headers", "key")
    tunnel: str | None
    proxy_headers: Dict[str, str] | None
    tunnel_headers: Dict[str, str] | None

    def __init__(self, url: str) -> None:
        import urllib.parse
        import urllib.request
        parts, _, _ = _split_url(url)
        scheme = parts.scheme.lower() if parts is not None else ""
        if parts is None or scheme not in ("http", "https") or not parts.hostname:
            raise ConnectionClosed("cannot request %s: only http:// and https:// URLs are fetched" % _plain_url(url))
        self.tls = scheme == "https"
        server = parts.netloc.rpartition("@")[2]
        self.target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        self.host, self.tunnel, self.proxy_headers, self.tunnel_headers = server, None, None, None
        proxy = urllib.request.getproxies().get(scheme)
        if proxy and not urllib.request.proxy_bypass(server):
            proxy_parts = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
            userinfo, _, self.host = proxy_parts.netloc.rpartition("@")
            auth: Dict[str, str] = {}
            if userinfo:
                pair = ":".join(urllib.parse.unquote(p) for p in userinfo.split(":", 1)).encode("utf-8")
                auth["Proxy-Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
            if self.tls:
                self.tunnel, self.tunnel_headers = server, auth or None
            else:
                self.target = urllib.parse.urlunsplit((scheme, server, parts.path or "/", parts.query, ""))
                self.proxy_headers = auth
        self.key = (self.tls, self.host, self.tunnel)


def _check_secure(url: str, what: str = "fetch") -> None:
    if not _secure_url(url):
        raise McpError("refusing to %s %s: only https (or http on this machine) is allowed here"
                       % (what, _plain_url(url)))


def _session_gone(answer: _Answer, session_id: str | None) -> bool:
    """Whether a non-2xx answer to a message sent in HTTP session ``session_id`` says the
    session is gone: 404, as the spec says; or 400 with a body that names the session,
    which servers built on the official TypeScript examples answer for an id they do not
    know (server-everything: "Bad Request: No valid session ID provided").  A 400 that
    does not name the session stays an ordinary error: renewing for it would only repeat it."""
    return session_id is not None and (answer.status == 404 or answer.status == 400 and (
        b"session" in answer.body[:HTTP_ERROR_BODY].lower()))


def _status_error(answer: _Answer, method: str | None, session_id: str | None = None) -> McpError:
    """The exception for a non-2xx answer (``session_id``: the one the message carried)."""
    text = answer.body[:_ERROR_BODY_BYTES].decode("utf-8", "replace")
    if method != "initialize" and _session_gone(answer, session_id):
        return _SessionExpired("%s no longer knows our session" % answer.url, session_id)
    challenge = _parse_www_authenticate(answer.headers.get("WWW-Authenticate", ""))
    if answer.status == 401 or (answer.status == 403 and challenge.get("error") == "insufficient_scope"):
        return AuthRequired(answer.url, answer.status, text, challenge)
    reason = "for %s" % method if method else ""
    if 300 <= answer.status < 400:
        reason += " (a redirect to %s; mcp_min follows redirects for GET only: use that URL)" % (
            answer.headers.get("Location"))
    return HttpError(answer.url, answer.status, text, reason.strip())


_ANSWER_TYPES = "application/json, text/event-stream"  # the Accept of a POST: its answer comes as either


class _HttpTransport(_Transport):
    """What both HTTP transports share: the URL (its credentials taken out), the engine that
    sends every request (connections, TLS, the auth plug-in), the era, the headers every
    request carries, and sending: a request on the caller's thread, or a submitted one on a
    thread of its own (``_exchange``); a notification or our answer in one POST (``_post``)."""

    _request_thread = "mcp_min-http-%s"  # a submitted request's thread, by its id

    def __init__(self, url: str, headers: Mapping[str, str] | None, timeout: float, auth: Any,
                 tls: _Tls | None) -> None:
        self.url, self._headers = _url_credentials(url, _clean_headers(headers))
        self.name = "server at %s" % self.url
        self.timeout = timeout
        self.auth = auth
        self._engine = _HttpEngine(self._headers, tls=tls)
        self._pid = _pid
        self._version: str | None = None  # negotiated; sent as MCP-Protocol-Version
        self._modern = False  # 2026-07-28: headers per request, no session, no GET stream
        self._usual = self._fixed_headers(_ANSWER_TYPES)  # (remade by configure(); each request copies it)
        self._lock = threading.Lock()
        self._threads = _Threads()  # request threads and stream readers, for close() to wait for
        self._cuts: Dict[Any, _Cut] = {}  # the _Cut of each exchange in flight (see _cut_for)
        self._stopping = threading.Event()  # set by close(): a pause before a reconnect ends
        self._closed = False

    def configure(self, version: str | None, modern: bool) -> None:
        self._version, self._modern = version, modern
        self._usual = self._fixed_headers(_ANSWER_TYPES)

    @property
    def authorization(self) -> str | None:
        return self._engine.authorization

    # -- headers -----------------------------------------------------------------
    def _fixed_headers(self, accept: str) -> Dict[str, str]:
        """The headers that stay the same from request to request (the caller's own override ours)."""
        h = {"Accept": accept, "User-Agent": "mcp_min/" + __version__}
        h.update(self._headers)
        if self._version is not None:
            h["MCP-Protocol-Version"] = self._version
        return h

    def _base_headers(self, accept: str = _ANSWER_TYPES, method: str | None = None) -> Dict[str, str]:
        h = dict(self._usual) if accept == _ANSWER_TYPES else self._fixed_headers(accept)
        self._add_session(h, method)
        return h

    def _add_session(self, h: Dict[str, str], method: str | None) -> None:
        pass  # (HTTP+SSE has no session header)

    # -- sending -----------------------------------------------------------------
    def send(self, msg: _Json, data: bytes, deadline: float | None = None, wait_here: bool = False,
             headers: Mapping[str, str] | None = None) -> None:
        if self._closed or _pid != self._pid:
            raise ConnectionClosed("the connection to %s is closed" % self.name)
        if "id" not in msg or "method" not in msg:
            self._post(msg, data, deadline, headers)
        elif wait_here:
            self._exchange(msg, data, deadline, headers)
        else:
            with self._lock:  # (with the check: a close() at this moment either waits for it or refuses it)
                if self._closed:
                    raise ConnectionClosed("the connection to %s is closed" % self.name)
                _start_thread(self._exchange, self._request_thread % msg["id"], (msg, data, deadline, headers),
                              "send a request", self._threads)

    def _exchange(self, msg: _Json, data: bytes, deadline: float | None, extra: Mapping[str, str] | None) -> None:
        """Send a request; the router gets its answer or the error that ends it.  (Here: its answer
        comes on the stream, as over HTTP+SSE; Streamable HTTP reads it from the POST.)"""
        try:
            self._post(msg, data, deadline, extra)
        except McpError as e:
            self._router.fail(msg["id"], e)

    def _post(self, msg: _Json, data: bytes, deadline: float | None, extra: Mapping[str, str] | None) -> None:
        """POST a message whose answer does not come back on this POST: 2xx expected, nothing read."""
        raise NotImplementedError  # (each transport posts to its own URL)

    def _pump(self, answer: _Answer, parser: _SseParser, rid: int | str | None = None) -> bool:
        """Route the messages of an SSE stream until the answer to ``rid`` came (then True) or the
        stream ended (False); other events go to _event.  The stream is read as it comes, not by
        lines: http.client's lines end only at LF, and a server may end its lines with a lone CR."""
        try:
            while True:
                piece = answer.read_some(HTTP_READ_CHUNK)
                if not piece:
                    return False
                for kind, data in parser.feed(piece):
                    if kind != "message":
                        self._event(kind, data)
                        continue
                    try:
                        msg = _decode(data)
                    except ValueError:
                        _log.warning("%s sent an SSE event that is not JSON: %s", self.name,
                                     _shorten(data, _SHOWN_CHARS))
                        continue
                    try:
                        self._router.receive(msg)
                    except Exception:  # a bug in routing must not end the stream
                        _log.exception("error routing a message from %s", self.name)
                    if rid is not None and any(isinstance(m, dict) and "method" not in m and m.get("id") == rid
                                               for m in (msg if isinstance(msg, list) else (msg,))):
                        return True
        finally:
            parser.end_stream()  # (a reconnect's stream never continues what this one left unfinished)

    def _event(self, kind: str, data: str) -> None:
        pass  # (an SSE event other than "message": only HTTP+SSE's endpoint means something)

    # -- close -------------------------------------------------------------------
    def _cut_for(self, key: Any = None) -> _Cut:
        """A _Cut for one exchange, kept under ``key`` (a request's id, for cancel(); by default
        itself) until it ends, for close() to cut; one made after close() is cut at once (close()
        waits for its thread)."""
        cut = _Cut()
        with self._lock:
            self._cuts[cut if key is None else key] = cut
            cut.cut = self._closed
        return cut

    def close(self, grace: float = CLOSE_GRACE) -> None:
        if self._closed or _pid != self._pid:
            return  # (a forked child must not end the parent's session)
        self._closed = True
        self._stopping.set()
        with self._lock:
            cuts, self._cuts = list(self._cuts.values()), {}
        for cut in cuts:
            cut()
        self._end_session()
        self._threads.join(_deadline_after(CLOSE_GRACE))  # cut short above: they end at once
        self._engine.close()

    def _end_session(self) -> None:
        pass  # (HTTP+SSE has no session to end)


_NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # the param Mcp-Name carries


class _StreamableHttpTransport(_HttpTransport):
    """Streamable HTTP: every message is a POST; answers come back as JSON or SSE.

    Handshake era: a session id from the initialize answer, a GET stream for what
    the server sends unasked, resumption of dropped answer streams, DELETE on
    close.  2026-07-28: no session, no GET stream; Mcp-Method / Mcp-Name headers;
    closing an answer stream cancels its request.

    Sessions.  Once the server issued a session id, no message but ``initialize``
    goes out without one.  A session found gone -- an answer that says so (see
    _session_gone) to a request, a notification, the GET stream or a resumption
    GET -- is forgotten here (only if it is still the current one: a late 404 of
    an old session must not end its successor) and ``session_gone`` is set; a
    message that would then go out without a session fails with _SessionExpired
    instead, and the session (``_Session._renew_session``) starts one new session
    before the next message, whichever thread found out and however many did; the
    message that met the 404 (a request, a notification, our answer) goes out once
    more in it (see _Session._repeat_if_asked and _Session._send_message)."""

    kind = "streamable-http"
    carries_headers = True

    def __init__(self, url: str, headers: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT,
                 auth: Any = None, tls: _Tls | None = None, fallback: bool = True) -> None:
        _HttpTransport.__init__(self, url, headers, timeout, auth, tls)
        self._tls, self._fallback = tls, fallback  # fallback: to HTTP+SSE (transport="auto")
        self.session_id: str | None = None  # the current HTTP session; None before initialize or once found gone
        self._issued = False  # the last initialize answer carried a session id
        self._listening = False  # a GET stream listener runs (or is being started)

    # -- headers -----------------------------------------------------------------
    def _add_session(self, h: Dict[str, str], method: str | None) -> None:
        if not self._modern:
            sid = self.session_id  # (read once: another thread may forget it meanwhile)
            if sid is not None:
                h["Mcp-Session-Id"] = sid
            elif self._issued and method != "initialize":
                raise _SessionExpired("%s forgot our session" % self.name, None)  # (the session starts a new one)

    def _post_headers(self, msg: _Json, extra: Mapping[str, str] | None = None) -> Dict[str, str]:
        method = msg.get("method")
        h = self._base_headers(method=method)
        h["Content-Type"] = "application/json"
        if self._modern and method is not None:  # 2026-07-28: routing information in headers
            h["Mcp-Method"] = _header_value(method)
            params = msg.get("params")
            params = params if isinstance(params, dict) else {}
            name = _NAMED_BY.get(method, "taskId" if method.startswith("tasks/") else None)
            if name is not None and name in params:
                h["Mcp-Name"] = _header_value(params[name])
        if extra:
            h.update(extra)
        return h

    # -- sending -----------------------------------------------------------------
    def _post(self, msg: _Json, data: bytes, deadline: float | None, extra: Mapping[str, str] | None) -> None:
        sent = self._post_headers(msg, extra)
        answer = self._engine.request("POST", self.url, sent, data, _deadline_or(deadline, self.timeout), self.auth)
        if answer.status >= 300:
            raise self._checked(_status_error(answer, msg.get("method"), sent.get("Mcp-Session-Id")))
        answer.discard()

    def _exchange(self, msg: _Json, data: bytes, deadline: float | None, extra: Mapping[str, str] | None) -> None:
        """POST a request and route everything its answer carries; runs on the thread
        that will wait for the answer (or on its own thread, for submit())."""
        rid = msg["id"]
        cut = self._cut_for(rid)
        try:
            # Without a deadline of its own (a listen), the request still gets one for connecting
            # and for the answer to start; only its stream may then stay open.
            sent = self._post_headers(msg, extra)
            answer = self._engine.request("POST", self.url, sent, data, _deadline_or(
                deadline, self.timeout), self.auth, cut)
            with answer:
                if answer.status >= 300:
                    self._failed(answer, msg, sent.get("Mcp-Session-Id"))
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

    def _take_session(self, answer: _Answer) -> None:
        sid = answer.headers.get("Mcp-Session-Id")
        if sid is not None and not _valid_session_id(sid):
            raise McpError("%s sent an Mcp-Session-Id that is not visible ASCII; refused" % self.name)
        with self._lock:
            self.session_id, self._issued = sid, sid is not None

    def _checked(self, error: McpError) -> McpError:
        """``error``, after forgetting the session it says is gone (see the class docstring)."""
        if isinstance(error, _SessionExpired) and error.session_id is not None:
            with self._lock:
                if self.session_id == error.session_id:
                    self.session_id = None
                    self.session_gone = True
                    _log.info("%s forgot session %s", self.name, error.session_id)
        return error

    def _failed(self, answer: _Answer, msg: _Json, session: str | None) -> None:
        """A non-2xx answer: its body, when a JSON-RPC error for this request, answers it;
        otherwise the status is the error.  ``session``: the id the request carried."""
        if answer.status not in (401, 403) and not (msg["method"] != "initialize" and _session_gone(answer, session)):
            try:
                error = _decode(answer.body)
            except ValueError:
                error = None
            if isinstance(error, dict) and "error" in error and error.get("id") == msg["id"] and _is_id(msg["id"]):
                self._router.receive(error)
                return
        raise self._checked(_status_error(answer, msg["method"], session))

    def _read_answer(self, answer: _Answer, rid: int | str, deadline: float | None) -> None:
        ctype = _media_type(answer.headers)
        if ctype == "application/json":
            body = answer.read()
            try:
                msg = _decode(body)
            except ValueError:
                raise HttpError(self.url, answer.status, body[:_EXCERPT_CHARS].decode("utf-8", "replace"),
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

    def _resume(self, parser: _SseParser, rid: int | str, deadline: float | None) -> None:
        """A POST's stream ended before its answer: resume it with GET + Last-Event-ID
        (handshake era only; 2026-07-28 streams cannot be resumed)."""
        for _ in range(SSE_RESUME_ATTEMPTS):
            if self._closed or parser.last_id is None or self._modern or not self._router.is_pending(rid):
                break
            pause = min((parser.retry_ms or 0) / 1000.0, SSE_RETRY_CAP)
            left = _remaining(deadline)
            if left is not None and pause >= left or self._stopping.wait(pause):
                break  # the server's retry: would outlast our deadline, or close() came
            h = self._base_headers("text/event-stream")  # (_SessionExpired once the session is gone)
            h["Last-Event-ID"] = parser.last_id
            cut = self._cut_for(rid)
            try:
                with self._engine.request("GET", self.url, h, None, _deadline_or(
                        deadline, self.timeout), self.auth, cut) as answer:
                    if answer.status >= 300 and _session_gone(answer, h.get("Mcp-Session-Id")):
                        raise self._checked(_status_error(answer, "GET", h.get("Mcp-Session-Id")))
                    if answer.status >= 300 or _media_type(answer.headers) != "text/event-stream":
                        _log.debug("resuming the stream of request %s: HTTP %s", rid, answer.status)
                        continue
                    if deadline is None:
                        answer.stream_forever()
                    if self._pump(answer, parser, rid):
                        return
            except (RequestTimeout, _SessionExpired):
                raise
            except McpError as e:
                _log.debug("resuming the stream of request %s failed: %s", rid, e)
        if _expired(deadline):
            raise RequestTimeout("no answer from %s in time" % self.url)
        if self._router.is_pending(rid):
            raise ConnectionClosed("%s ended the answer stream before answering" % self.name)

    # -- the standalone GET stream (handshake era) -------------------------------
    def after_handshake(self) -> None:
        """Listen for server messages on GET when the server offers it.  Waits (briefly)
        until the server has answered the GET, so that what it sends there right after
        our next message is not lost.  A listener still running goes on in the new session."""
        with self._lock:
            if self._modern or self._listening:
                return
            self._listening = True
        ready = threading.Event()
        try:
            _start_thread(self._listen_loop, "mcp_min-get-stream", (ready,), "listen to the server", self._threads)
        except McpError:
            self._listening = False
            raise
        ready.wait(min(self.timeout, GET_STREAM_READY))

    def _listen_loop(self, ready: threading.Event) -> None:
        parser = _SseParser(self.name)
        failures = 0
        session, opened = self.session_id, False  # opened: a stream of this session was open
        owned = True  # this thread's end clears _listening (unless _stop_listening did)
        try:
            while not self._closed:
                try:
                    h = self._base_headers("text/event-stream")
                except _SessionExpired:  # the next request starts a new session...
                    if self._stop_listening(session):
                        owned = False
                        return  # ...and a new GET stream
                    continue
                if h.get("Mcp-Session-Id") != session:  # a new session: its events are numbered anew
                    parser, session, opened, failures = _SseParser(self.name), h.get("Mcp-Session-Id"), False, 0
                if failures >= GET_STREAM_ATTEMPTS:
                    if self._stop_listening(session):
                        owned = False
                        return
                    continue
                if parser.last_id is not None:
                    h["Last-Event-ID"] = parser.last_id
                cut = self._cut_for("GET")
                try:
                    answer = self._engine.request("GET", self.url, h, None, _deadline_after(self.timeout),
                                                  self.auth, cut)
                except McpError as e:
                    _log.debug("the GET stream of %s: %s", self.name, e)
                    failures += 1
                else:
                    with answer:
                        if opened and answer.status >= 300 and _session_gone(answer, session):
                            self._checked(_status_error(answer, "GET", session))
                            continue  # (then _SessionExpired above)
                        if answer.status in (400, 404, 405) or (answer.status < 300 and _media_type(
                                answer.headers) != "text/event-stream"):
                            # No standalone stream offered.  (On a session's first GET a 404 does not
                            # say the session is gone: a server without a GET route would be renewed
                            # forever; its requests' answers tell.)
                            return
                        if answer.status >= 300:
                            failures += 1
                        else:
                            ready.set()
                            answer.stream_forever()  # a quiet server is not a dead one
                            failures, opened = 0, True
                            self._pump(answer, parser)
                ready.set()
                # Honour the server's retry: field; back off further after failures.
                pause = parser.retry_ms / 1000.0 if parser.retry_ms is not None else GET_STREAM_RETRY
                self._stopping.wait(min(pause, SSE_RETRY_CAP) * (failures or 1))
        finally:
            ready.set()
            if owned:
                with self._lock:
                    self._listening = False

    def _stop_listening(self, session: str | None) -> bool:
        """Whether the GET stream of ``session`` ends here: yes, unless a new session began
        meanwhile (its handshake found this listener running, so it goes on in that one)."""
        with self._lock:
            if self.session_id is not None and self.session_id != session and not self._closed:
                return False
            self._listening = False
            return True

    # -- cancel and close ----------------------------------------------------------
    def cancel(self, request_id: int | str) -> bool:
        with self._lock:
            cut = self._cuts.pop(request_id, None)
        if cut is not None:
            cut()
        return self._modern  # in 2026-07-28 closing the stream is the cancellation

    def replacement_for(self, error: McpError) -> _Transport | None:
        """After an ``initialize`` POST failed: the legacy HTTP+SSE transport, or None."""
        if self._fallback and isinstance(error, HttpError) and not isinstance(error, AuthRequired) and (
                error.status in (400, 404, 405)):
            return _SseTransport(self.url, self._headers, self.timeout, self.auth, self._tls)
        return None

    def _end_session(self) -> None:
        if self.session_id is not None and not self._modern:
            try:  # (before the pool closes: on a kept-alive connection, no new handshake)
                with self._engine.request("DELETE", self.url, self._base_headers(), None, _deadline_after(min(
                        self.timeout, SESSION_DELETE_TIMEOUT)), self.auth):
                    pass
            except McpError as e:
                _log.debug("DELETE of the session: %s", e)


class _SseTransport(_HttpTransport):
    """The 2024-11-05 HTTP+SSE transport: one GET stream in, POSTs to the endpoint
    the stream names."""

    kind = "sse"
    _request_thread = "mcp_min-sse-post-%s"

    def __init__(self, url: str, headers: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT,
                 auth: Any = None, tls: _Tls | None = None) -> None:
        _HttpTransport.__init__(self, url, headers, timeout, auth, tls)
        self.endpoint: str | None = None
        self._ready = threading.Event()

    def start(self, router: _Dispatcher) -> None:
        self._router = router
        deadline = _deadline_after(self.timeout)
        answer = self._engine.request("GET", self.url, self._base_headers("text/event-stream"), None, deadline,
                                      self.auth, self._cut_for())
        if answer.status >= 300:
            raise _status_error(answer, None)
        if _media_type(answer.headers) != "text/event-stream":
            answer.release()
            raise HttpError(self.url, answer.status, "", "with Content-Type %r, not an SSE stream"
                            % _media_type(answer.headers))
        answer.stream_forever()  # a quiet server is not a dead one; close() cuts the connection
        _start_thread(self._read_loop, "mcp_min-sse", (answer,), owner=self._threads)
        if not self._ready.wait(_remaining(deadline)) or self.endpoint is None:
            self.close()
            raise ConnectionClosed("%s sent no endpoint event" % self.name)

    def _event(self, kind: str, data: str) -> None:
        import urllib.parse
        if kind == "endpoint":
            endpoint = urllib.parse.urljoin(self.url, data.strip())
            if _origin(endpoint) != _origin(self.url):  # our headers (tokens) would go there
                _log.warning("%s named an endpoint on another origin (%s); refused", self.name, endpoint)
            else:
                self.endpoint = endpoint
            self._ready.set()

    def _read_loop(self, answer: _Answer) -> None:
        try:
            self._pump(answer, _SseParser(self.name))
        finally:
            answer.release()
            self._ready.set()
            self._router.closed(ConnectionClosed(("client closed the connection to %s" if self._closed
                                                  else "%s closed the SSE stream") % self.name))

    def _post(self, msg: _Json, data: bytes, deadline: float | None, extra: Mapping[str, str] | None) -> None:
        endpoint = self.endpoint
        assert endpoint is not None  # (start() returns only once the stream named it)
        h = self._base_headers()
        h["Content-Type"] = "application/json"
        cut = self._cut_for()
        try:
            answer = self._engine.request("POST", endpoint, h, data, _deadline_or(deadline, self.timeout),
                                          self.auth, cut)
        finally:
            with self._lock:
                self._cuts.pop(cut, None)
        if answer.status >= 300:
            raise _status_error(answer, msg.get("method"))
        answer.discard()  # the answer comes on the stream


# ---------------------------------------------------------------------------
# Session: what the server sends unasked (_Inbox), and one conversation with it
# (_Session: negotiation, sending, settling).  Neither knows the Client object
# (so a dropped Client can be collected) nor how bytes move.
# ---------------------------------------------------------------------------

if TYPE_CHECKING:
    import ssl  # (Client's ssl_context=)

    _E = TypeVar("_E", bound=_Extension)


def _callback_failed(asking: str, method: object, error: Exception) -> McpError:
    """A callback that raised while answering ``method`` for a request: in both eras the request
    fails with an McpError that says so, with the text a handshake-era server is sent (and
    usually reports back: "RuntimeError: boom"), never with the callback's own exception."""
    return McpError("%s needs %s input, and the client's callback for it raised %s: %s"
                    % (asking, method, type(error).__name__, error))


_SUBSCRIPTION_ID = _META_PREFIX + "subscriptionId"
_CHANGED_LISTS = {  # a list_changed notification -> the cached lists it makes stale
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


class _Extensions(object):
    """A session's add-ons: one of each class in _EXTENSIONS, made with the session, and by
    method the ones that watch it (see _Extension).  A hook is asked only of those, in turn, so
    a method no add-on watches costs one dict lookup; a result is claimed and checked only by
    those whose class defines ``claim`` or ``check`` (the two hooks every tools/call result
    passes through: the base class's do-nothing ones are not called for it)."""

    def __init__(self, session: _Session) -> None:
        self.all = tuple(kind(session) for kind in _EXTENSIONS)
        self.watching: Dict[str, List[_Extension]] = {}
        for ext in self.all:
            for method in ext.watches:
                self.watching.setdefault(method, []).append(ext)
        self.claiming = self._defining("claim")
        self._checking = self._defining("check")

    def _defining(self, hook: str) -> Dict[str, List[_Extension]]:
        """By method, the watching add-ons whose class defines ``hook`` (methods with none left out)."""
        own = {m: [e for e in exts if getattr(type(e), hook) is not getattr(_Extension, hook)]
               for m, exts in self.watching.items()}
        return {m: exts for m, exts in own.items() if exts}

    def declare(self, caps: _Json, modern: bool, newest: bool) -> None:
        for ext in self.all:
            ext.declare(caps, modern, newest)

    def claim(self, fut: _Request, result: _Json) -> Callable[[_Request, _Json], Any] | None:
        for ext in self.claiming.get(fut.method, ()):
            finish = ext.claim(fut, result)
            if finish is not None:
                return finish
        return None

    def check(self, method: str, params: _Json | None, result: Any) -> None:
        for ext in self._checking.get(method, ()):
            ext.check(method, params, result)

    def withdraw(self, fut: _Request, error: McpError) -> bool:
        return any(ext.withdraw(fut, error) for ext in self.watching.get(fut.method, ()))

    def notification(self, method: str, params: _Json) -> None:
        for ext in self.watching.get(method, ()):
            ext.notification(method, params)

    def listed(self, method: str, items: List[Any]) -> None:
        for ext in self.watching.get(method, ()):
            ext.listed(method, items)

    def closed(self, error: ConnectionClosed) -> None:
        for ext in self.all:
            ext.closed(error)


class _Inbox(object):
    """What the server sends unasked: requests we answer (handshake era) and
    notifications we deliver.  Called on whatever thread routed the message (a
    reader, or the thread that read an HTTP answer); user code runs on workers."""

    # The _Dispatcher whose routing calls take_request and take_notification: the session makes it
    # with those two, then sets it here, before anything can be routed.
    dispatcher: _Dispatcher

    def __init__(self, send_answer: Callable[[_Json], None], cache: _Cache, extensions: _Extensions,
                 roots: Iterable[str] | Callable[[], _Json] | None = None,
                 sampling: Callable[[_Json], _Json] | None = None, elicitation: Callable[[_Json], _Json] | None = None,
                 url_elicitation: Callable[[_Json], _Json] | None = None,
                 on_log: Callable[[Any, Any, Any], object] | None = None,  # (level and logger as the server sent them)
                 on_notification: Callable[[str, _Json], object] | None = None,
                 validate: bool | Callable[[Any, _Json], object] = True,
                 capabilities: Mapping[str, Any] | None = None) -> None:
        self.roots, self.sampling, self.elicitation = roots, sampling, elicitation
        self.validate = validate  # the Client's validate= option (output validation, an add-on, reads it)
        self.declared = capabilities  # the caller's patch over what we declare (Client's capabilities=)
        self.url_elicitation = url_elicitation
        self.on_log, self.on_notification = on_log, on_notification
        self._extensions = extensions
        self.modern = False  # set by the session: 2026-07-28 notifications name their subscription
        self._send_answer = send_answer
        self._list_cache = cache
        self.events = _Worker("mcp_min-events")  # notifications, progress, logs, stderr lines, in order
        self._pings = _Worker("mcp_min-ping")  # never waits behind a slow callback
        self.courier = _Worker("mcp_min-courier")  # what we send without waiting: cancellations
        self._overflow = _Worker("mcp_min-answers")  # server requests beyond MAX_ANSWER_THREADS
        # The client's other threads (answers, task followers, settling): stop() waits for them.
        self.threads = _Threads()
        self._lock = threading.Lock()
        self._answering = 0
        # id of a server request being answered -> True once the server cancelled it
        self._serving: Dict[Any, bool] = {}

    def capabilities(self, modern: bool, version: str | None = None) -> _Json:
        """What we declare: a capability per callback given, what the add-ons declare (tasks:
        we follow any; skills); then the caller's ``capabilities=`` over that, as a JSON Merge
        Patch."""
        caps: _Json = {}
        newest = modern or (version or "") >= "2025-11-25"  # URL elicitation and tasks came then
        if self.roots is not None:
            caps["roots"] = {} if modern else {"listChanged": False}
        if self.sampling is not None:
            caps["sampling"] = {}
        modes: _Json = {"form": {}} if self.elicitation is not None else {}
        if self.url_elicitation is not None and newest:
            modes["url"] = {}
        if modes:
            caps["elicitation"] = modes
        self._extensions.declare(caps, modern, newest)
        if self.declared is None:
            return caps
        patched: _Json = _merge_patch(caps, self.declared)
        return patched

    # -- requests ------------------------------------------------------------------
    def take_request(self, msg: _Json) -> None:
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
                _start_thread(self._answer, "mcp_min-answer", (msg, True), "answer the server", self.threads)
                return
            except ConnectionClosed:
                with self._lock:
                    self._answering -= 1
        self._overflow.put(self._answer, msg, False)  # a flood: a queue bounds the cost

    def _answer(self, msg: _Json, own_thread: bool) -> None:
        method, rid, given = msg["method"], msg["id"], msg.get("params")
        params: _Json = given if isinstance(given, dict) else {}
        answer: _Json | None = None  # (stays None when the server cancelled the request before we began)
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
        if cancelled or answer is None:
            _log.debug("the server cancelled its %s; not answering it", method)
        else:
            self._send_answer(answer)

    def _cancelled(self, rid: Any) -> bool:
        with self._lock:
            return self._serving.get(rid, False)

    def serve(self, method: str, params: _Json) -> Any:
        """What we answer to a server request (handshake era) or an input request (2026-07-28)."""
        if method == "ping":
            return {}
        if method == "roots/list" and self.roots is not None:
            return _roots_result(self.roots)
        if method == "sampling/createMessage" and self.sampling is not None:
            if ("tools" in params or "toolChoice" in params) and "tools" not in (
                    (self.declared or {}).get("sampling") or {}):  # SEP-1577: a client MUST refuse them then
                raise RequestError(INVALID_PARAMS, "mcp_min client did not declare sampling.tools")
            return self.sampling(params)
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            if mode == "url" and self.url_elicitation is not None:
                return self.url_elicitation(params)
            if mode == "form" and self.elicitation is not None:
                # an add-on (output validation) may refuse an accepted form's content: the server then
                # gets an error, never a made-up decline
                answer = _apply_defaults(params, self.elicitation(params))
                self._extensions.check(method, params, answer)
                return answer
            if self.elicitation is not None or self.url_elicitation is not None:
                raise RequestError(INVALID_PARAMS, "mcp_min client does not handle %r elicitation" % (mode,))
        raise RequestError(METHOD_NOT_FOUND, _NOT_HANDLED % method)

    def give_input(self, asking: str, ask: Any) -> Any:
        """Our answer to one input request of a 2026-07-28 result (``ask``: method and params)."""
        ask = ask if isinstance(ask, dict) else {}
        given = ask.get("params")
        params: _Json = given if isinstance(given, dict) else {}
        try:
            return self.serve(ask.get("method"), params)
        except RequestError as e:
            raise McpError("%s needs %s input, which this client cannot give: %s"
                           % (asking, ask.get("method"), e.message))
        except Exception as e:  # a callback of the user's raised
            raise _callback_failed(asking, ask.get("method"), e)

    def visit_urls(self, elicitations: List[_Json]) -> bool:
        """-32042: the user visits each URL (through url_elicitation); True when they agreed to all."""
        for ask in elicitations:
            try:
                answer = self.serve("elicitation/create", dict(ask, mode="url"))
            except RequestError:
                return False
            except Exception as e:
                raise _callback_failed("a request refused with -32042", "elicitation/create", e)
            if not isinstance(answer, dict) or answer.get("action") != "accept":
                return False
        return bool(elicitations)

    # -- notifications ---------------------------------------------------------------
    def take_notification(self, method: str, params: _Json) -> None:
        try:
            self._notification(method, params)
        except (TypeError, AttributeError, ValueError):  # unhashable ids, a _meta that is not an object...
            _log.warning("ignored a malformed %s notification: %s", method,
                         _shorten(_dumps_for_humans(params), _SHOWN_CHARS))

    def _notification(self, method: str, params: _Json) -> None:
        if method == "notifications/progress":
            fut = self.dispatcher.pending(params.get("progressToken"))
            if fut is not None and fut._progress is not None:
                if isinstance(fut._progress, _ProgressClock):  # here, not on a worker: a slow callback must not delay it
                    fut._progress.tick(fut)
                self.events.put(fut._progress, params.get("progress"), params.get("total"), params.get("message"))
            elif fut is None:  # (a 2025-11-25 task keeps its call's token: the add-on may know it)
                self._extensions.notification(method, params)
            return
        self._extensions.notification(method, params)  # (and on: on_notification may want it too)
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
        if method == "notifications/resources/updated":
            self._list_cache.drop("resources/read", params.get("uri"))
        sub = self.dispatcher.subscription(sub_id) if sub_id is not None else None
        if sub is not None:
            self.events.put(sub._deliver, method, params)
            return
        subs = self.dispatcher.subscriptions() if sub_id is None and not self.modern else ()
        for sub in subs:  # handshake era: what the server sends anyway goes to every listener
            self.events.put(sub._deliver, method, params)
        if not subs and self.on_notification is not None:
            self.events.put(self.on_notification, method, params)

    def _log_message(self, params: _Json) -> None:
        if self.on_log is not None:
            self.on_log(params.get("level"), params.get("logger"), params.get("data"))
            return
        levels: Dict[Any, int] = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
                                  "warning": logging.WARNING}
        level = levels.get(params.get("level"), logging.ERROR)
        _server_log.log(level, "%s%s", "[%s] " % params["logger"] if params.get("logger") else "",
                        params.get("data"))

    def stop(self) -> None:
        """After the transport closed (nothing is routed any more): wait for the client's threads,
        then for its workers, CLOSE_GRACE at most each time.  A callback of the user's may run
        longer (a sampling call to a model): its thread is then left to finish it, and what it
        sends after that is dropped (the client is closed)."""
        left = self.threads.join(_deadline_after(CLOSE_GRACE))  # first: they may still queue callbacks
        workers = (self.events, self._pings, self._overflow, self.courier)
        for worker in workers:
            worker.stop(wait=False)  # all at once: the idle ones end while a busy one is waited for
        deadline = _deadline_after(CLOSE_GRACE)
        left += [worker._name for worker in workers if not worker.join(deadline)]
        if left:
            _log.warning("close() did not wait longer for %s: a callback still runs there (the thread ends "
                         "when it returns)", ", ".join(sorted(set(left))))


class _Cache(object):
    """Results as the server last sent them, while their ``ttlMs`` allows (2026-07-28): the
    lists, ``resources/read`` by URI and ``server/discover``.  Keys are (method, URI or None).

    A ``cacheScope: "private"`` result (and one without a scope) is kept with the
    authorization context it was fetched under (the transport's ``authorization``) and is
    never served under another: a new token, another auth.  "public" ones are served to all.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (method, uri) -> (expiry time, value, None or (authorization context,))
        self._entries: Dict[Tuple[str, str | None], Tuple[float, Any, Tuple[object] | None]] = {}

    def get(self, key: Tuple[str, str | None], context: object) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if _expired(entry[0]) or entry[2] is not None and entry[2] != (context,):
                del self._entries[key]  # stale, or another authorization context's: fetch again
                return None
        return _copy(entry[1])

    def put(self, key: Tuple[str, str | None], value: Any, ttl_ms: int, scope: object, context: object) -> None:
        if ttl_ms > 0:
            with self._lock:
                self._entries[key] = (_deadline_after(ttl_ms / 1000.0), _copy(value),
                                      None if scope == "public" else (context,))

    def drop(self, method: str, uri: object = None) -> None:
        """Forget ``method``'s entries (with ``uri``: those of that resource and the ones it is under)."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == method and (
                    uri is None or isinstance(uri, str) and uri.startswith(k[1] or ""))]:
                del self._entries[key]


def _copy(value: Any) -> Any:
    """A cached list or result as the caller gets it: a copy of its top level, as lists always were."""
    return list(value) if isinstance(value, list) else dict(value)


def _ttl_of(result: _Json) -> int:
    """A cacheable result's ``ttlMs`` as a number we can add (0: not to be kept)."""
    ttl = result.get("ttlMs")
    return min(ttl, int(LONGEST_WAIT * 1000)) if type(ttl) is int and ttl > 0 else 0


class _Keep(object):
    """The ``finish`` of a cacheable request: the result goes into the cache, unless it came
    out of input rounds (those are never cached) or the credentials changed meanwhile."""

    def __init__(self, session: _Session, key: Tuple[str, str | None]) -> None:
        self.session, self.key = session, key
        self.context = session.transport.authorization  # what the request is about to carry
        self.after_input = False

    def __call__(self, fut: _Request, result: _Json) -> _Json:
        if not self.after_input:
            self.session.keep(self.key, result, _ttl_of(result), result.get("cacheScope"), self.context)
        return result


_INPUT_METHODS = ("tools/call", "prompts/get", "resources/read")  # may answer input_required


def _era_verdict(error: McpError, over_http: bool) -> str | None:
    """The era policy in one table: what ``error``, met by ``server/discover``, says of the
    server (see "Era policy" in the module docstring).  Returns "versions" (a version error
    listing what the server speaks: choose from it), "2026" (a 2026-07-28 server objecting to
    something else), "handshake" (an older server meeting a method it does not know), or None
    (the server's state, not its era: the error is raised as it is).

        what the probe met                                     verdict
        -32022 listing supported versions                       versions
        another 2026-07-28 error (-32020, -32021, -32022)       2026
        any other JSON-RPC error, whatever the HTTP status      handshake
        HTTP 401 or 403, AuthRequired, AuthError                None: log in once, not again
        HTTP 5xx whose body is no JSON-RPC error                None: an outage or a proxy
        HTTP 4xx, or a 2xx that is no MCP answer                handshake
        no answer within the probe's wait                       handshake
        stdio: the server exited                                handshake (it is restarted)
        HTTP: connection refused, reset or cut                  None: the network failed
        this Python lacks a module (_MissingModule)             None: initialize would too
        anything else (a malformed answer)                      handshake
    """
    if isinstance(error, RequestError):  # the server spoke JSON-RPC
        if error.code == UNSUPPORTED_PROTOCOL_VERSION and _supported_in(error) is not None:
            return "versions"
        return "2026" if error.code in _MODERN_ERRORS else "handshake"
    if isinstance(error, (AuthRequired, AuthError, _MissingModule)):
        return None
    if isinstance(error, HttpError):
        if error.status in (401, 403):
            return None
        if error.status >= 500:
            return "handshake" if _is_jsonrpc_error(error.body) else None
        return "handshake"
    if isinstance(error, ConnectionClosed):
        return None if over_http else "handshake"
    return "handshake"  # silence (a RequestTimeout: it ignores the request), a malformed answer


def _is_jsonrpc_error(body: str) -> bool:
    """Whether an HTTP body is a JSON-RPC error response (a server that spoke JSON-RPC, with
    whatever id: some answer an unknown method with ``"id": null`` and status 500)."""
    try:
        msg = _decode(body)
    except ValueError:
        return False
    return isinstance(msg, dict) and msg.get("jsonrpc") == "2.0" and isinstance(msg.get("error"), dict)


# The capability each family of methods needs: a server that did not declare it answers them -32601.
# (An add-on adds its own family where it registers.)
_CAPABILITY_OF = {"tools/": "tools", "resources/": "resources", "prompts/": "prompts", "completion/": "completions",
                  "logging/": "logging"}


def _not_offered(method: str | None, capabilities: _Json) -> str | None:
    """The hint for a request answered -32601 (method not found) whose method needs a capability
    the server did not declare: which, and what it declared; None when the cause is another."""
    wanted = next((v for k, v in _CAPABILITY_OF.items() if method and method.startswith(k)), None)
    if wanted is None or wanted in capabilities:
        return None
    offers = ", ".join(sorted(str(k) for k in capabilities if k != "experimental"))
    return "the server does not offer %s; it offers: %s" % (wanted, offers or "nothing beyond the basics")


def _supported_in(error: McpError) -> List[Any] | None:
    """The versions a version error lists in its data (``supported``), or None."""
    data = error.data if isinstance(error, RequestError) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    return supported if isinstance(supported, list) else None


class _Era(object):
    """What the negotiated protocol era changes about every outgoing request: the
    version; in 2026-07-28 (``modern``) our ``_meta`` on each request, encoded once;
    and over HTTP the x-mcp-header table behind the Mcp-Param-* headers.  Replaced
    whole when the era changes, so a request never sees half of one."""

    def __init__(self, version: str | None = None, modern: bool = False, capabilities: _Json | None = None,
                 client_info: _Json | None = None, defaults: _Json | None = None) -> None:
        self.version, self.modern = version, modern
        # tool name -> x-mcp-header paths, once tools/list was read
        self.tool_headers: Dict[Any, Sequence[Tuple[Sequence[str], str]]] | None = None
        self._required: _Json = {}
        self._meta: _Json = {}
        self._meta_json: str | None = None  # None: requests carry no _meta of ours
        if modern:
            self._required = {_META_PREFIX + "protocolVersion": version,
                              _META_PREFIX + "clientCapabilities": capabilities,
                              _META_PREFIX + "clientInfo": client_info}
            # ``defaults`` (the client-wide log level) give way to a request's own _meta keys.
            self._meta = dict(defaults or {}, **self._required)
            self._meta_json = _to_json(self._meta)

    def encode(self, msg: _Json) -> bytes:
        """A request as bytes; in stateless mode with our ``_meta`` added.

        The ``_meta`` block is the same on every request, so it is spliced into the
        encoded params (most of a small request's bytes; encoding it each time showed
        up in profiles).  ``params`` is a dict or None here (checked before)."""
        if self._meta_json is None:
            return _encode_line(msg)
        params = msg.get("params")
        if params and "_meta" in params:  # the caller's own _meta: merge (our required keys win)
            meta = dict(self._meta, **_meta_of(params))
            meta.update(self._required)
            return _encode_line(dict(msg, params=dict(params, _meta=meta)))
        try:
            body = _dumps(params) if params else "{}"
        except (ValueError, RecursionError):
            _to_json(params)  # raises the error that says what JSON cannot carry
            raise
        text = '{"jsonrpc":"2.0","id":%d,"method":%s,"params":%s%s"_meta":%s}}' % (
            msg["id"], _dumps(msg["method"]), body[:-1], "," if len(body) > 2 else "", self._meta_json)
        try:
            return text.encode("utf-8") + b"\n"
        except UnicodeEncodeError:  # (see _encode_line; the message is only built again for this)
            return _encode_line(dict(msg, params=dict(params or {}, _meta=self._meta)))

    def param_headers(self, params: _Json) -> Dict[str, str] | None:
        """Mcp-Param-* headers for a tools/call (2026-07-28 over HTTP), or None."""
        table = self.tool_headers
        paths = table.get(params.get("name")) if self.modern and table is not None else None
        if not paths:
            return None
        out: Dict[str, str] = {}
        for path, name in paths:
            value: Any = params.get("arguments") or {}
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

    def __init__(self, make_transport: Callable[[_Worker], _Transport], timeout: float = DEFAULT_TIMEOUT,
                 protocol_version: str = "auto", probe_timeout: float = PROBE_TIMEOUT,
                 client_info: Mapping[str, Any] | None = None, request_timeout: float | None = _DEFAULT,
                 log_level: str | None = None, trace_context: Callable[[], Mapping[str, str] | None] | None = None,
                 **callbacks: Any) -> None:
        if protocol_version != "auto" and protocol_version not in SUPPORTED_VERSIONS:
            raise ValueError("protocol_version must be 'auto' or one of %s, not %r"
                             % (", ".join(SUPPORTED_VERSIONS), protocol_version))
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError("log_level must be None or one of %s, not %r" % (", ".join(LOG_LEVELS), log_level))
        if trace_context is not None and not callable(trace_context):
            raise ValueError("trace_context must be a callable returning {'traceparent': ...}, not %r"
                             % (trace_context,))
        self.log_level = log_level  # client-wide: every 2026-07-28 request's _meta, else logging/setLevel
        self.trace_context = trace_context
        self._make_transport = make_transport
        self.timeout = timeout  # bounds connecting, writes, closing: always a number
        self.request_timeout = timeout if request_timeout is _DEFAULT else request_timeout  # None: no deadline
        self.wanted_version = protocol_version
        self.probe_timeout = probe_timeout
        self.client_info = dict(client_info or _CLIENT_INFO)
        self.era = _Era()
        self.server_info: _Json = {}
        self.server_capabilities: _Json = {}
        self.instructions: str | None = None
        self.list_cache = _Cache()
        self.extensions = _Extensions(self)  # the add-ons (see _Extension), never named here
        self.inbox = _Inbox(self._send_answer, self.list_cache, self.extensions, **callbacks)
        self.dispatcher = self.inbox.dispatcher = _Dispatcher(self.inbox.take_request, self.inbox.take_notification,
                                                              self.extensions.closed)
        self.transport = make_transport(self.inbox.events)
        self._pid = _pid  # a forked child must leave this session alone
        self._closed = False
        self._close_lock = threading.Lock()
        self._renew_lock = threading.Lock()  # one new HTTP session at a time
        self._renewing = False  # a new HTTP session's handshake is under way: requests wait for it
        self._renewer: int | None = None  # the thread (ident) running that handshake: its own requests do not wait

    @property
    def protocol_version(self) -> str | None:
        return self.era.version

    def extension(self, kind: Type[_E]) -> _E:
        """This session's add-on of class ``kind`` (what Client reaches add-ons through)."""
        for ext in self.extensions.all:
            if isinstance(ext, kind):
                return ext
        raise LookupError("no %s add-on in this session" % kind.__name__)

    @property
    def modern(self) -> bool:
        return self.era.modern

    def _set_era(self, version: str | None, modern: bool) -> None:
        """The one place era state changes; the transport hears of it here."""
        self.era = _Era(version, modern, self.inbox.capabilities(True), self.client_info,
                        {_LOG_LEVEL: self.log_level} if self.log_level else None)
        self.inbox.modern = modern
        self.transport.configure(version, modern)

    # -- negotiation -------------------------------------------------------------
    def connect(self) -> None:
        deadline = _deadline_after(self.timeout)
        self.transport.start(self.dispatcher)
        wanted = self.wanted_version
        if wanted == "auto" or wanted in MODERN_VERSIONS:
            version = self._probe(deadline, pinned=wanted != "auto")
            if self.modern:
                return
            restart = self.dispatcher.error is not None
            if restart:
                self._restart()  # the probe ended the connection: start over (streams say they cannot)
            wanted = version or LEGACY_VERSIONS[0]
            try:
                self._handshake(wanted, deadline)
                return
            except ConnectionClosed as e:
                # A server slower to start than the probe's wait reads server/discover only then,
                # and one that chokes on it exits before answering initialize: once more, unprobed.
                # (Whether the reader has seen the exit yet or the write of initialize met it first
                # is a race; the error is the same either way.  One the deadline caused is final.)
                if restart or e._by_deadline or not self.transport.restartable:
                    raise
                _log.debug("the server exited after the discovery probe; starting it again")
                self._restart()
        self._handshake(wanted, deadline)

    def _restart(self, replacement: _Transport | None = None) -> None:
        """A fresh transport (a fresh server process over stdio) after the old one ended, or
        ``replacement`` in its place."""
        self.transport.close()
        self.transport = self._make_transport(self.inbox.events) if replacement is None else replacement
        self.dispatcher.reset()
        self.transport.start(self.dispatcher)

    def _probe(self, deadline: float, pinned: bool, version: str = MODERN_VERSIONS[0], retried: bool = False
               ) -> str | None:
        """Ask ``server/discover``.  Returns the version chosen: a modern one (then the era is
        set), a legacy one to shake hands with, or None (a handshake-era server)."""
        self._set_era(version, True)
        left = _remaining(deadline)
        assert left is not None  # (the deadline is a number)
        wait = left if pinned else min(self.probe_timeout, left * PROBE_SHARE)
        try:
            result = self.request("server/discover", {}, wait, cancellable=False)
        except McpError as e:
            verdict = _era_verdict(e, self.transport.carries_headers)
            if retried and isinstance(e, RequestError):
                return version  # a 2026 server; its discovery data is optional
            if verdict == "versions":
                chosen = _choose_version(_supported_in(e) or [])
                return self._probe(deadline, pinned, chosen, True) if chosen in MODERN_VERSIONS \
                    else self._legacy(chosen, e)
            if pinned or verdict is None:
                raise
            return version if verdict == "2026" else self._legacy(None, e)
        if not isinstance(result.get("supportedVersions"), list):
            if pinned:
                raise McpError("server/discover answer has no supportedVersions: %s"
                               % _shorten(_dumps_for_humans(result), _EXCERPT_CHARS))
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
        self.keep(("server/discover", None), result, _ttl_of(result), result.get("cacheScope"),
                  self.transport.authorization)
        return chosen

    def _legacy(self, version: str | None, why: object) -> str | None:
        _log.debug("server/discover: a handshake-era server (%s)", why)
        self._set_era(None, False)
        return version

    def _handshake(self, version: str, deadline: float, retried: bool = False) -> None:
        params = {"protocolVersion": version, "capabilities": self.inbox.capabilities(False, version),
                  "clientInfo": self.client_info}
        try:
            result = self.request("initialize", params, _remaining(deadline), cancellable=False)
        except RequestError as e:
            supported = _supported_in(e) or ()
            if not retried and self.wanted_version == "auto" and any(v in supported for v in MODERN_VERSIONS):
                # A 2026 server after all (its discovery answer was too slow for the probe).
                self._probe(deadline, True, _choose_version(supported), True)
                return
            common = [v for v in LEGACY_VERSIONS if v in supported]
            if retried or not common:
                raise
            self._handshake(common[0], deadline, True)
            return
        except HttpError as e:
            replacement = None if retried else self.transport.replacement_for(e)
            if replacement is None:
                raise
            _log.debug("initialize POST failed (%s); trying the HTTP+SSE transport", e)
            self._restart(replacement)
            self._handshake(version, deadline, True)
            return
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
        try:
            self.notify("notifications/initialized", renew=False)
            gone = False
        except _SessionExpired:
            if self._renewer == threading.get_ident():
                raise  # a new session gone in its own handshake: _renew_session answers for it
            gone = True  # (renewed outside the handler: an error there must not name this one its cause)
        if gone:  # forgotten at once: one new session, whose handshake sends all that follows here again
            self._renew_session(deadline)
            return
        if self.log_level and "logging" in self.server_capabilities:  # the handshake era's client-wide level
            try:
                self.request("logging/setLevel", {"level": self.log_level}, _remaining(deadline))
            except RequestError as e:
                _log.warning("%s refused logging/setLevel %s: %s", self.transport.name, self.log_level, e)

    def _renew_session(self, deadline: float | None = None) -> None:
        """The server's HTTP session was found gone (``transport.session_gone``): start one
        new session -- one initialize, one notifications/initialized -- however many
        threads found out at once; they, and requests sent meanwhile, wait for it.  When
        it fails, the next request tries again: a client never stays without a session.
        The handshake's own messages (on this thread) do not wait for it, nor renew again:
        a new session found gone in its handshake is the ConnectionClosed raised here."""
        if self._renewer == threading.get_ident():
            return  # (a request of this very handshake: logging/setLevel)
        with self._renew_lock:
            if not self.transport.session_gone:
                return  # another thread already did
            self._renewing, self._renewer = True, threading.get_ident()
            try:
                _log.info("%s forgot our session; initializing again", self.transport.name)
                version = self.protocol_version or LEGACY_VERSIONS[0]
                self._set_era(None, False)
                self.transport.session_gone = False  # (set again if the new session is found gone too)
                try:
                    self._handshake(version, _deadline_or(deadline, self.timeout), True)
                except BaseException as e:
                    self.transport.session_gone = True
                    if isinstance(e, _SessionExpired):
                        raise e.public() from None  # (the private class stays out of the traceback too)
                    raise
            finally:
                self._renewing, self._renewer = False, None

    # -- sending -----------------------------------------------------------------
    def _check_usable(self) -> None:
        if _pid != self._pid:
            raise McpError("this client belongs to process %d; a forked child must make its own" % self._pid)
        if self.dispatcher.error is not None:
            raise self.dispatcher.error

    def submit(self, method: str, params: _Json | None = None, timeout: float | None = _DEFAULT,
               progress: _Progress | None = None, finish: Callable[[_Request, _Json], Any] | None = None,
               cancellable: bool = True, subscription: Subscription | None = None, keepalive: object = None,
               intercept: Callable[[_Request, _Json], bool] | None = None, max_total: float | None = None) -> Future:
        """Send a request; return its Future (see ``send_request``)."""
        return self.send_request(Future, method, params, timeout, progress, finish, cancellable, subscription,
                                 keepalive, intercept, max_total)

    def send_request(self, kind: Type[_R], method: str, params: _Json | None = None,
                     timeout: float | None = _DEFAULT, progress: _Progress | None = None,
                     finish: Callable[[_Request, _Json], Any] | None = None, cancellable: bool = True,
                     subscription: Subscription | None = None, keepalive: object = None,
                     intercept: Callable[[_Request, _Json], bool] | None = None,
                     max_total: float | None = None) -> _R:
        """Send a request; return its ``kind``: a Future (submitted: others may see it), or a
        _Request when only the caller waits for it, next (so HTTP may read the answer on this
        thread).  ``timeout`` is seconds, None for no deadline, or _DEFAULT for the client's.
        ``max_total`` (seconds): the deadline follows progress (reset_on_progress), never past
        this.  Nothing is pending when this raises."""
        wait_here = kind is _Request
        timeout = self.request_timeout if timeout is _DEFAULT else timeout
        if max_total is not None and timeout is not None and not isinstance(progress, _ProgressClock):
            progress = _ProgressClock(progress, timeout, _deadline_after(max_total))  # (asks for progress)
        self._check_usable()
        if not isinstance(method, str) or not method:
            raise ValueError("the method must be a non-empty string, not %r" % (method,))
        if params is not None and not isinstance(params, dict):
            raise ValueError("params must be a dict (MCP params are JSON objects), not %s" % type(params).__name__)
        if (self._renewing or self.transport.session_gone) and method != "initialize":
            self._renew_session()  # (waits while another thread renews)
        rid = self.dispatcher.next_id()
        if progress is not None:
            params = dict(params or ())
            params["_meta"] = dict(_meta_of(params), progressToken=rid)
        if self.trace_context is not None:  # on the caller's thread, where its current span is
            params = dict(params or ())
            params["_meta"] = dict(_trace_meta(self.trace_context()), **_meta_of(params))
        msg = _message(method, params, rid)
        era = self.era
        data = era.encode(msg)  # ValueError for what JSON cannot carry, before anything is pending
        fut = kind(rid, method, params, timeout, progress, self._settle, self._withdraw, finish, cancellable,
                   not wait_here and self.inbox.threads, self.inbox.events.put)
        if fut._timeout == 0:  # no time left (Python's convention for 0 and less): nothing is sent
            fut._put(RequestTimeout("no time left for %s (timeout 0 or less): not sent" % method))
            return fut
        hard = fut._deadline  # what the transport enforces: with a progress clock, its total
        if isinstance(progress, _ProgressClock):
            assert fut._deadline is not None  # (a progress clock comes with a timeout: its window)
            fut._deadline, hard = min(fut._deadline, progress.total), progress.total
            wait_here = False  # the window is the Future's to watch: HTTP must not read the answer in send()
        fut._keepalive, fut._intercept = keepalive, intercept
        fut._claim = self.extensions.claim if method in self.extensions.claiming else None
        self.dispatcher.add(fut, subscription)
        _trace("->", data)
        try:
            self.transport.send(msg, data, hard, wait_here, era.param_headers(params) if (
                method == "tools/call" and params is not None and self.transport.carries_headers) else None)
        except Exception as e:  # whatever went wrong, the future is settled
            self.dispatcher.fail(rid, e if isinstance(e, McpError) else ConnectionClosed(
                "cannot send %s to %s: %r" % (method, self.transport.name, e)))
        return fut

    def request(self, method: str, params: _Json | None = None, timeout: float | None = _DEFAULT,
                progress: _Progress | None = None, finish: Callable[[_Request, _Json], Any] | None = None,
                cancellable: bool = True, max_total: float | None = None) -> Any:
        """Send a request and wait for its value (the result dict, or what ``finish`` makes of it)."""
        return self.send_request(_Request, method, params, timeout, progress, finish, cancellable,
                                 max_total=max_total).result()

    def notify(self, method: str, params: _Json | None = None, renew: bool = True) -> None:
        """Send a notification (``renew``: see _send_message)."""
        self._check_usable()
        if params is not None and not isinstance(params, dict):
            raise ValueError("params must be a dict (MCP params are JSON objects), not %s" % type(params).__name__)
        msg = _message(method, params)
        data = _encode_line(msg)
        _trace("->", data)
        if renew:
            self._send_message(msg, data)
        else:
            self.transport.send(msg, data, _deadline_after(self.timeout))

    def _send_message(self, msg: _Json, data: bytes) -> None:
        """Send a notification or our answer to a server request, within the client's timeout.
        As for requests: a session found gone first starts one new session; one found gone by
        this message (a 404) starts one new session, and the message goes out once more in it
        (``renew=False``, the handshake's notifications/initialized: the handshake does that)."""
        if self._renewing or self.transport.session_gone:
            self._renew_session()  # (waits while another thread renews)
        try:
            self.transport.send(msg, data, _deadline_after(self.timeout))
            return
        except _SessionExpired:
            pass  # (renewed outside the handler: an error there must not name this one its cause)
        self._renew_session()
        try:
            self.transport.send(msg, data, _deadline_after(self.timeout))
        except _SessionExpired as e:
            raise e.public() from None  # (the private class stays out of the traceback too)

    def _send_answer(self, answer: _Json) -> None:
        """Our answer to a server request; dropped once the client is closed."""
        if self._closed or _pid != self._pid:
            _log.debug("dropped the answer to the server's request %r: the client is closed", answer.get("id"))
            return
        try:
            data = _encode_line(answer)
        except ValueError as e:  # a callback returned what JSON cannot carry
            answer = _error_response(answer["id"], INTERNAL_ERROR, str(e))
            data = _encode_line(answer)
        _trace("->", data)
        try:
            self._send_message(answer, data)
        except McpError as e:
            _log.debug("could not answer the server's request %r: %s", answer.get("id"), e)

    # -- settling (on the waiting thread) --------------------------------------------
    def _withdraw(self, fut: _Request, error: McpError) -> bool:
        """End a request with ``error`` and tell the server; False if it had already ended.
        (What an add-on follows after the answer, a task, the add-on ends.)"""
        if self.dispatcher.withdraw(fut.id) is None:
            return self.extensions.withdraw(fut, error)
        fut._keepalive = None
        try:
            if not self.transport.cancel(fut.id) and fut._cancellable and not self._closed \
                    and self.dispatcher.error is None:
                # Sent from a worker: the caller's deadline is now, not after one more round trip.
                self.inbox.courier.put(self._tell_cancelled, fut.id, str(error))
        except Exception as e:  # withdrawn whatever happens here
            _log.debug("could not send notifications/cancelled: %s", e)
        finally:
            fut._put(error)
        return True

    def _tell_cancelled(self, request_id: int, reason: str) -> None:
        try:
            self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
        except McpError as e:
            _log.debug("could not send notifications/cancelled: %s", e)

    def _settle(self, fut: _Request, answer: _Json | McpError) -> Any:
        """The value of a request's answer, after the one repeat the protocol may ask for: what
        the finish of an add-on that claims the result makes of it (a task's: following it),
        else ``finished``."""
        if fut._progress is not None:  # progress sent before the answer is seen before it
            self.inbox.events.drain(fut._deadline)
        if type(answer) is not dict or "result" not in answer:
            answer = self._repeat_if_asked(fut, answer)
        try:
            result = _result_of(fut.method, answer)
        except RequestError as e:
            if e.code == METHOD_NOT_FOUND and e.hint is None:
                _hinted(e, _not_offered(e.method, self.server_capabilities))
            raise
        if self.era.modern and result.get("resultType", "complete") != "complete":
            result = self._complete(fut, result)
        try:
            claimed = None if fut._claim is None else fut._claim(fut, result)
            return self.finished(fut, result) if claimed is None else claimed(fut, result)
        except McpError:
            raise
        except Exception as e:  # the server's result did not have the shape we rely on
            raise McpError("malformed answer to %s: %s: %s" % (fut.method, type(e).__name__, e))

    def finished(self, fut: _Request, result: _Json) -> Any:
        """The caller's value of a final result: the add-ons' checks (OutputValidationError),
        then ``fut._finish(fut, result)`` (None: the result dict itself)."""
        self.extensions.check(fut.method, fut._params, result)
        return result if fut._finish is None else fut._finish(fut, result)

    def _repeat_if_asked(self, fut: _Request, answer: _Json | McpError) -> _Json | McpError:
        """The answer after the one repeat an error may ask for: a new HTTP session (404), a
        fresh tools/list (-32020), URLs the user visited (-32042); else ``answer`` itself."""
        if isinstance(answer, _SessionExpired):
            if fut.method != "initialize":
                answer = self._repeat(fut, self._renew_session)
            return answer.public() if isinstance(answer, _SessionExpired) else answer  # (gone again)
        if not isinstance(answer, dict):  # (the McpError that ended the request)
            return answer
        error = answer.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if code == HEADER_MISMATCH and fut.method == "tools/call":
            # Our Mcp-Param-* headers may follow an outdated tools/list: refetch it, repeat once.
            return self._repeat(fut, lambda: self.list_tools(True))
        if code == URL_ELICITATION_REQUIRED and self.inbox.url_elicitation is not None:
            asked = _error_from(answer, fut.method)  # (an UrlElicitationRequired, by its code)
            if isinstance(asked, UrlElicitationRequired) and self.inbox.visit_urls(asked.elicitations):
                return self._repeat(fut, lambda: None)  # the user went there: once more
        return answer

    def _repeat(self, fut: _Request, prepare: Callable[[], object], params: _Json | None = None) -> _Json | McpError:
        """Send ``fut``'s request again (after ``prepare()``), with what is left of its
        deadline; returns the new raw answer (a repeat is not repeated)."""
        try:
            prepare()
            again = self.send_request(_Request, fut.method, fut._params if params is None else params,
                                      _remaining(fut._deadline), fut._progress, cancellable=fut._cancellable)
        except McpError as e:
            return e
        answer = again._wait()
        if isinstance(answer, (dict, McpError)):
            return answer
        # None: its deadline ended it (the outcome is stored), or an error that is no McpError
        return again.exception(0) or McpError("%s ended without an answer: %r" % (fut.method, answer))

    def _complete(self, fut: _Request, result: _Json) -> _Json:
        """Check a 2026-07-28 result's resultType and run the input_required rounds."""
        for _ in range(MAX_INPUT_ROUNDS + 1):
            kind = result.get("resultType", "complete")
            if kind == "complete":
                return result
            if kind != "input_required" or fut.method not in _INPUT_METHODS:
                if self.extensions.claim(fut, result) is not None:
                    return result  # (a kind an add-on takes, a task: its claim follows it, in _settle)
                raise McpError("%s answered with resultType %r, which mcp_min does not know"
                               % (fut.method, _shorten(kind, _QUOTE_CHARS) if isinstance(kind, str) else kind))
            asked = _field(result, "inputRequests", dict, fut.method, {})
            if isinstance(fut._finish, _Keep):
                fut._finish.after_input = True  # what answers made is never cached (spec)
            params = dict(fut._params or {})
            params.pop("inputResponses", None)
            params.pop("requestState", None)
            if asked:
                params["inputResponses"] = {key: self.inbox.give_input(fut.method, ask) for key, ask in asked.items()}
            if "requestState" in result:  # echoed untouched, and only when sent
                params["requestState"] = result["requestState"]
            result = _result_of(fut.method, self._repeat(fut, lambda: None, params))
        raise McpError("%s still asked for input after %d rounds; giving up" % (fut.method, MAX_INPUT_ROUNDS))

    # -- lists -------------------------------------------------------------------
    def list_all(self, method: str, key: str, refresh: bool = False, timeout: float | None = _DEFAULT) -> List[Any]:
        """Every page of a list, from the cache while the server's ttlMs allows (the add-ons
        watching ``method`` see it).  ``timeout`` bounds all the pages (default: the client's
        timeout for each)."""
        if not refresh:
            cached: List[Any] | None = self.list_cache.get((method, None), self.transport.authorization)
            if cached is not None:
                self.extensions.listed(method, cached)
                return cached
        deadline = None if timeout is _DEFAULT else _deadline_after(timeout)
        items: List[Any] = []
        cursor: str | None = None
        seen: Set[str] = set()
        ttl: int | None = None
        scope = "public"
        context = self.transport.authorization
        for _ in range(MAX_PAGES):
            result = self.request(method, {"cursor": cursor} if cursor is not None else None,
                                  timeout if timeout is _DEFAULT else _remaining(deadline))
            items.extend(_field(result, key, list, method, []))
            ttl = _ttl_of(result) if ttl is None else min(ttl, _ttl_of(result))
            scope = scope if result.get("cacheScope") == "public" else "private"  # one private page: all
            cursor = result.get("nextCursor")
            if cursor is None or (cursor == "" and not self.modern):  # 2026: "" is a real cursor
                break
            if not isinstance(cursor, str):
                raise McpError("%s answered with a nextCursor that is not a string: %s"
                               % (method, _shorten(_dumps_for_humans(cursor), _QUOTE_CHARS)))
            if cursor in seen:
                raise McpError("%s repeated the cursor %r; stopping" % (method, _shorten(cursor, _QUOTE_CHARS)))
            seen.add(cursor)
        else:
            raise McpError("%s returned more than %d pages; stopping" % (method, MAX_PAGES))
        self.keep((method, None), items, ttl, scope, context)  # (the cache keeps a copy)
        self.extensions.listed(method, items)  # (tools/list: output checks, which tools want a task)
        return items

    def keep(self, key: Tuple[str, str | None], value: Any, ttl_ms: int, scope: object, context: object) -> None:
        """Cache a result fetched under authorization ``context``, unless that changed meanwhile
        (then which one it was fetched under is unknown)."""
        if context == self.transport.authorization:
            self.list_cache.put(key, value, ttl_ms, scope, context)

    def cached(self, method: str, params: _Json, uri: str | None = None, refresh: bool = False,
               timeout: float | None = _DEFAULT) -> _Json:
        """A cacheable request's result (resources/read, server/discover): from the cache while
        fresh for this authorization, else asked for and kept for its ``ttlMs``."""
        if not refresh:
            hit: _Json | None = self.list_cache.get((method, uri), self.transport.authorization)
            if hit is not None:
                return hit
        result: _Json = self.request(method, params, timeout,
                                     finish=_Keep(self, (method, uri)) if self.modern else None)
        return result

    def list_tools(self, refresh: bool = False, timeout: float | None = _DEFAULT) -> List[Any]:
        tools = self.list_all("tools/list", "tools", refresh, timeout)
        if self.modern and self.transport.carries_headers:
            table: Dict[Any, Sequence[Tuple[Sequence[str], str]]] = {}
            kept = []
            for tool in tools:
                try:
                    table[tool.get("name")] = _param_headers(tool)
                    kept.append(tool)
                except (ValueError, AttributeError, TypeError) as e:
                    _log.warning("hiding tool %r: %s", tool.get("name") if isinstance(tool, dict) else tool, e)
            self.era.tool_headers = table
            tools = kept
        return tools

    def listen(self, sub: Subscription, wanted: _Json) -> None:
        """Start a Subscription: one subscriptions/listen (2026-07-28), else resources/subscribe."""
        if self.modern:
            sub._future = self.submit("subscriptions/listen", {"notifications": wanted}, None, subscription=sub)
        else:
            self.dispatcher.subscribe(object(), sub)
            for uri in sub.resource_uris:
                self.request("resources/subscribe", {"uri": uri})

    # -- the end -------------------------------------------------------------------
    def close(self, grace: float = CLOSE_GRACE) -> None:
        """Shut down in reverse order of setup; idempotent, any thread; inert in a forked child.
        ``grace``: see _Transport.close."""
        if _pid != self._pid:
            return
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self.inbox.courier.drain(_deadline_after(CLOSE_GRACE))  # cancellations already said go out first
        self.dispatcher.closed(ConnectionClosed("the client is closed"))  # pending calls fail at once
        try:
            self.transport.close(grace)
        finally:
            self.inbox.stop()
            if _deadlines is not None:  # (a Future with a done callback is watched there too, over any transport)
                _deadlines.wait_idle()


def _meta_of(params: _Json) -> _Json:
    meta = params.get("_meta")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise ValueError("params._meta must be a dict, not %s" % type(meta).__name__)
    return meta


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

    resource_uris: List[str]
    acknowledged: Dict[str, Any] | None
    ended: threading.Event
    error: McpError | None

    def __init__(self, session: _Session, callback: Callable[[str, Dict[str, Any]], object] | None, tools: bool,
                 prompts: bool, resources: bool, resource_uris: Iterable[str]) -> None:
        self._session = session
        self._callback = callback
        self._kinds = {"notifications/tools/list_changed": tools,
                       "notifications/prompts/list_changed": prompts,
                       "notifications/resources/list_changed": resources}
        self.resource_uris = list(resource_uris)
        self.acknowledged = None
        self.ended = threading.Event()
        self.error = None
        self._future: Future | None = None

    def _deliver(self, method: str, params: _Json) -> None:
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

    def _end(self, error: McpError | None) -> None:
        if not self.ended.is_set():
            self.error = error
            self.ended.set()

    def close(self) -> None:
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


def _client_timeout(value: object, name: str) -> float:
    """A timeout option that bounds connecting: positive seconds (0 would leave no time to
    connect, None no bound)."""
    seconds = _timeout_arg(value, None, name)
    if seconds is None or seconds == 0:
        raise ValueError("%s must be a positive number of seconds, not %r" % (name, value))
    return seconds


# host[:port][/path]: a URL someone meant, written without its scheme (a pattern, compiled on first
# use by re's cache: it costs no import time)
_URL_LIKE = r"^(localhost|[\w-]+(\.[\w-]+)+|\d+\.\d+\.\d+\.\d+|\[[0-9a-fA-F:]+\])(:\d+)?(/\S*)?$"


def _url_meant(text: str) -> str | None:
    """The http(s) URL ``text`` probably means when it is one written without its scheme, else None."""
    if not re.match(_URL_LIKE, text):
        return None
    local = text.split(":")[0].split("/")[0] in ("localhost", "127.0.0.1", "[::1]")
    return "%s://%s" % ("http" if local else "https", text)


def _connect_hint(error: McpError, transport: _Transport, server: str | Sequence[str], inherit_env: bool,
                  passed_env: Mapping[str, str] | None, timeout: float, elapsed: float) -> McpError:
    """Say what to do about a server that could not be reached, in ``error`` itself: its message
    ends with the hint (also its ``hint``), and a timeout says the whole wait and quotes the
    server's stderr (also its ``stderr``).  Python callers and the CLI (which prints the message)
    read the same text.  ``server`` is the URL or argv; ``passed_env``, the variables given."""
    message, hint, local = str(error), None, transport.kind == "stdio"
    if isinstance(error, RequestTimeout) and error.method in ("server/discover", "initialize") \
            and transport.kind != "streams":
        # The probe and initialize each had their share of the wait: say the whole of it.  (Other
        # timeouts, OAuth's or a write's, name what they waited for and stay as they are.)
        error.stderr = list(transport.stderr_tail)
        message = "no answer from %s within %.1f s of %s it (timeout %g s)%s" % (
            transport.name, elapsed, "starting" if local else "contacting", timeout,
            _stderr_excerpt(error.stderr) if local else "")
    elif isinstance(error, ConnectionClosed) and local and error.returncode not in (None, 0) and not inherit_env:
        # names of variables the server's stderr mentions that are set here but were not passed
        # (only the names are shown, never a value)
        passed = set(passed_env or ()) | set(_server_env(None, False))
        mentioned = set(w for line in error.stderr for w in re.findall(r"\b[A-Z][A-Z0-9_]{2,}\b", line))
        named = sorted(w for w in mentioned if w in os.environ and w not in passed)
        hint = "mcp_min passes the server only PATH, HOME, locale and similar variables%s; give what it " \
               "needs with env={'K': 'V'} (--env K=V), or pass everything with inherit_env=True (--inherit-env)" % (
                   " (%s is set here but was not passed)" % ", ".join(named) if named else "")
    elif isinstance(error, ConnectionClosed) and local and error.returncode is None and len(server) == 1 \
            and _url_meant(server[0]) and not os.path.exists(server[0]):
        hint = "a URL needs its scheme: did you mean %s?" % _url_meant(server[0])
    elif isinstance(error, HttpError) and error.status == 404 and not local and isinstance(server, str):
        import urllib.parse
        if urllib.parse.urlsplit(server).path.rstrip("/") == "":
            hint = "MCP endpoints usually live at a path: try %s/mcp" % server.rstrip("/")
    elif isinstance(error, RequestError) and error.method == "initialize" and error.code == METHOD_NOT_FOUND:
        echoed = error.message == _NOT_HANDLED % "initialize"  # (our own answer to our request came back)
        hint = "the program is not an MCP server: it %s" % (
            "sends back what it reads (our initialize came back)" if echoed else "does not know initialize")
    error.args = (message,) + error.args[1:]
    _hinted(error, hint)
    return error


class Client(object):
    """A connection to one MCP server.

    Args:
        server: the server's argv list (spawned over stdio, never through a
            shell; a string is split by the platform's command-line rules) or
            an ``http(s)://`` URL (Streamable HTTP, falling back to the legacy
            HTTP+SSE transport).
        transport: ``"auto"`` (default: stdio for an argv; for a URL, Streamable
            HTTP, falling back to HTTP+SSE when the server refuses the POST),
            ``"streamable-http"`` (no fallback) or ``"sse"`` (the legacy HTTP+SSE
            transport only: for a server that also answers a POST at its SSE URL).
        timeout: seconds for each request (a method's ``timeout=`` replaces it for
            that call) and for connecting (default 30).  None: no deadline on
            requests, while connecting, each write and ``close()`` keep a bound
            of DEFAULT_TIMEOUT seconds.
        probe_timeout: seconds to wait for ``server/discover`` before deciding
            the server predates 2026-07-28 (at most half of ``timeout``, so a
            server that ignores it still has time for the handshake).
        protocol_version: ``"auto"`` (default) picks the newest version both
            sides speak; a version string pins it.

    A stdio server:
        env, inherit_env, cwd: the server process's environment and directory.
            By default only PATH, HOME, locale and similar variables are passed,
            plus ``env``; ``inherit_env=True`` passes the whole environment.
        on_stderr: ``f(line)`` for each stderr line of a stdio server.

    An HTTP server:
        headers: extra HTTP headers on every request (``Authorization``...).
        auth: for HTTP servers, an ``OAuth`` object or any object with
            ``headers(method, url) -> dict`` and, optionally,
            ``challenge(method, url, status, headers, sent) -> bool`` (see OAuth).
        verify: for https, True (default: the system's CA certificates, or
            SSL_CERT_FILE / SSL_CERT_DIR when set), False (no verification; a
            warning is logged), or the path of a CA bundle file or CA directory.
        cert: a client certificate for https: a PEM file holding it and its key,
            or a (certificate file, key file) pair.
        ssl_context: a ready ``ssl.SSLContext`` instead of ``verify``/``cert``.
            The TLS settings apply to every https request of the client, its
            OAuth traffic included.

    What the server may ask of the client (a callback declares its capability):
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
        capabilities: more to declare, applied as a JSON Merge Patch (RFC 7396)
            over what mcp_min declares itself, in both eras: e.g.
            ``{"sampling": {"tools": {}}, "extensions": {"io.modelcontextprotocol/ui": {...}}}``;
            ``None`` as a value withdraws one of ours.  Roots, sampling and
            elicitation need their callback.

    What the server sends, and what is checked:
        on_log: ``f(level, logger, data)`` for the server's log messages
            (default: the ``mcp_min.server`` logger).
        log_level: ``"debug"`` ... ``"emergency"``: the server's log messages
            wanted at that level and above, on every 2026-07-28 request
            (``_meta`` ``io.modelcontextprotocol/logLevel``; a request's own
            ``_meta`` key wins), else one ``logging/setLevel`` after the handshake.
        on_notification: ``f(method, params)`` for other notifications.
        validate: check tool results against their ``outputSchema`` and
            elicitation answers against their ``requestedSchema`` (default
            True, mcp_min's own JSON Schema validator); False passes both
            through; or a callable ``f(instance, schema)`` that raises on a
            mismatch (``jsonschema.validate`` fits).

    What every request says of the client:
        client_info: the ``{"name", "version"}`` we introduce ourselves with.
        trace_context: ``f() -> {"traceparent": ..., "tracestate": ...}`` (or
            None), called on the sending thread for every request; the W3C trace
            context goes into its ``_meta`` (SEP-414).

    Every callback runs on a worker thread, never on one that reads from the
    server.  Every method that sends a request takes ``timeout``: seconds, None
    (or infinity) for no deadline, and 0 or less for "no time left": an
    immediate RequestTimeout, nothing sent.  NaN, bools and other types raise
    ValueError.  Its default, ``DEFAULT`` in the signatures below, is the
    client's ``timeout``.

    Raises ConnectionClosed when the server cannot be started or reached,
    RequestTimeout when it does not answer in time, McpError otherwise, and
    ValueError for arguments that cannot work.
    """

    def __init__(self, server: str | Sequence[str], *, timeout: float | None = DEFAULT_TIMEOUT,
                 protocol_version: str = "auto", env: Mapping[str, str] | None = None, inherit_env: bool = False,
                 cwd: str | os.PathLike[str] | None = None, headers: Mapping[str, str] | None = None,
                 roots: Iterable[str] | Callable[[], Dict[str, Any]] | None = None,
                 sampling: Callable[[Dict[str, Any]], Dict[str, Any]] | None = None,
                 elicitation: Callable[[Dict[str, Any]], Dict[str, Any]] | None = None,
                 on_log: Callable[[str, str | None, Any], object] | None = None,
                 on_notification: Callable[[str, Dict[str, Any]], object] | None = None,
                 on_stderr: Callable[[str], object] | None = None, client_info: Mapping[str, Any] | None = None,
                 probe_timeout: float = PROBE_TIMEOUT, auth: Any = None,
                 url_elicitation: Callable[[Dict[str, Any]], Dict[str, Any]] | None = None,
                 transport: str = "auto", verify: bool | str = True, cert: str | Tuple[str, str] | None = None,
                 ssl_context: ssl.SSLContext | None = None,
                 validate: bool | Callable[[Any, Dict[str, Any]], object] = True,
                 capabilities: Mapping[str, Any] | None = None, log_level: str | None = None,
                 trace_context: Callable[[], Mapping[str, str] | None] | None = None) -> None:
        request_timeout = _timeout_arg(timeout, None, "timeout")  # None (or infinity): no deadline on requests
        if request_timeout == 0:  # (no time to connect)
            raise ValueError("timeout must be a positive number of seconds or None, not %r" % (timeout,))
        timeout = DEFAULT_TIMEOUT if request_timeout is None else request_timeout
        declared = _check_capabilities(capabilities, {"roots": roots, "sampling": sampling, "elicitation": (
            elicitation), "url_elicitation": url_elicitation})
        probe_timeout = _client_timeout(probe_timeout, "probe_timeout")
        if not (validate is True or validate is False or callable(validate)):
            raise ValueError("validate must be True, False or a callable f(instance, schema), not %r" % (validate,))
        if auth is not None and not callable(getattr(auth, "headers", None)):
            raise ValueError("auth must have a headers(method, url) method (see OAuth), not %r" % (auth,))
        if transport not in ("auto", "stdio", "streamable-http", "sse"):
            raise ValueError("transport must be 'auto', 'stdio', 'streamable-http' or 'sse', not %r" % (transport,))
        if isinstance(server, str) and server.split("://", 1)[0].lower() in ("http", "https"):
            if transport == "stdio":
                raise ValueError("transport='stdio' needs the server's argv, not a URL")
            url = server
            headers = _clean_headers(headers)
            tls = _Tls(verify, cert, ssl_context)
            use_tls = getattr(auth, "use_tls", None)
            if callable(use_tls):  # (the auth plug-in's own HTTPS traffic: OAuth's, with these settings too)
                use_tls(tls)

            def make_transport(events: _Worker) -> _Transport:
                if transport == "sse":
                    return _SseTransport(url, headers, timeout, auth, tls)
                return _StreamableHttpTransport(url, headers, timeout, auth, tls, fallback=transport == "auto")
        elif isinstance(server, _StreamTransport):  # Client.over()
            streams = server
            streams.timeout = timeout

            def make_transport(events: _Worker) -> _Transport:
                return streams
        else:
            if transport not in ("auto", "stdio"):
                raise ValueError("transport=%r needs an http(s):// URL" % (transport,))
            if isinstance(server, str):
                argv = _split_command(server)
            elif isinstance(server, (list, tuple)):
                argv = list(server)
            else:
                raise ValueError("server must be an argv list or an http(s):// URL, not %r" % (server,))
            server = argv  # (for _connect_hint)

            def make_transport(events: _Worker) -> _Transport:
                report = on_stderr
                stderr = (lambda line: events.put(report, line)) if report is not None else None
                return _StdioTransport(argv, env, inherit_env, cwd, stderr, timeout)
        session = _Session(make_transport, timeout, protocol_version, probe_timeout, client_info, request_timeout,
                           log_level, trace_context, roots=roots, sampling=sampling, elicitation=elicitation,
                           url_elicitation=url_elicitation, on_log=on_log, on_notification=on_notification,
                           validate=validate, capabilities=declared)
        self._session = session
        # A dropped Client still reaps its server: the session holds no reference back to us.
        # (On PyPy, without reference counting, that happens at a collection or at exit.)
        self._finalizer = weakref.finalize(self, session.close)
        started = time.monotonic()
        try:
            session.connect()
        except BaseException as e:
            if isinstance(e, McpError):  # (before close(): the hint may quote the transport's stderr tail)
                _connect_hint(e, session.transport, server, inherit_env, env, timeout, time.monotonic() - started)
            session.close(grace=0.0)  # the deadline has passed or the server failed: no grace past it
            raise

    @classmethod
    def over(cls, reader: Any, writer: Any = None, **options: Any) -> Client:
        """A client of a server at the other end of byte streams you already have: a
        connected socket (TCP or Unix, POSIX only) as ``reader`` alone, or a ``reader``
        and a ``writer`` (``os.pipe()`` ends of a server thread in this process, binary
        files; ints or anything with ``fileno()``).  The stdio framing and everything
        above it, no subprocess.  ``options`` are Client's; the client owns the streams:
        close() closes them (a socket is shut down first)."""
        return cls(_StreamTransport(reader, writer), **options)  # type: ignore[arg-type]

    # -- what the server told us ------------------------------------------------
    @property
    def protocol_version(self) -> str | None:
        """The protocol revision in use, e.g. ``"2025-11-25"`` or ``"2026-07-28"``."""
        return self._session.protocol_version

    @property
    def server_info(self) -> Dict[str, Any]:
        """The server's ``{"name", "version", ...}``."""
        return self._session.server_info

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        """The capabilities the server declared."""
        return self._session.server_capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, or None."""
        return self._session.instructions

    @property
    def transport(self) -> str:
        """``"stdio"``, ``"streamable-http"``, ``"sse"`` (the legacy HTTP+SSE transport) or
        ``"streams"`` (Client.over())."""
        return self._session.transport.kind

    @property
    def stderr(self) -> List[str]:
        """The last lines the stdio server wrote to stderr."""
        return list(self._session.transport.stderr_tail)

    # -- tools -------------------------------------------------------------------
    def call(self, name: str, arguments: Mapping[str, Any] | None = None, /, *, timeout: float | None = _DEFAULT,
             progress: Callable[..., object] | None = None, reset_on_progress: bool = False,
             max_total: float | None = None, **kwargs: Any) -> Any:
        """Call a tool and return its value.

        Arguments come as a dict, as keywords, or both (a tool argument called
        ``timeout`` or ``progress`` must go in the dict).  The value is the
        structured content when there is some (a lone ``{"result": x}`` is
        unwrapped to ``x``), else the text of a single text block, else the
        content list.  ``progress(progress, total, message)`` receives progress
        notifications.  ``timeout``: seconds (default: the client's), None for no
        deadline, 0 or less for none left (RequestTimeout, nothing sent).

        A tool the server runs as a task is followed to its end: the value comes
        the same way, ``progress`` also receives its status changes, and
        ``timeout`` bounds the whole task (when it passes, the task is cancelled).

        ``reset_on_progress=True``: ``timeout`` is the longest silence; each progress
        notification (and, for a task, each status change) starts it again, up to
        ``max_total`` seconds in all (default RESET_TOTAL_FACTOR timeouts).

        Raises ToolError when the tool reports failure, OutputValidationError
        (a ToolError) when its structuredContent does not match the outputSchema
        of a tools/list already read, RequestError for a protocol error,
        RequestTimeout, ConnectionClosed.
        """
        return self._tool_future(name, arguments, kwargs, timeout, progress, _tool_value, _Request,
                                 total=self._total(timeout, reset_on_progress, max_total)).result()

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, /, *,
                  timeout: float | None = _DEFAULT, progress: Callable[..., object] | None = None,
                  reset_on_progress: bool = False, max_total: float | None = None, **kwargs: Any) -> Dict[str, Any]:
        """Call a tool like ``call`` and return the raw CallToolResult dict (no ToolError:
        look at its ``isError``)."""
        result: _Json = self._tool_future(name, arguments, kwargs, timeout, progress, None, _Request,
                                          total=self._total(timeout, reset_on_progress, max_total)).result()
        return result

    def submit(self, name: str, arguments: Mapping[str, Any] | None = None, /, *, timeout: float | None = _DEFAULT,
               progress: Callable[..., object] | None = None, reset_on_progress: bool = False,
               max_total: float | None = None, **kwargs: Any) -> Future:
        """Start a tool call and return a Future at once; ``.result()`` gives what
        ``call`` would (``timeout`` is the call's, counted from now).  The Future keeps
        the client alive until it is settled."""
        return self._tool_future(name, arguments, kwargs, timeout, progress, _tool_value, Future,
                                 total=self._total(timeout, reset_on_progress, max_total))

    def start(self, name: str, arguments: Mapping[str, Any] | None = None, /, *, timeout: float | None = _DEFAULT,
              ttl: float | None = None, progress: Callable[..., object] | None = None, **kwargs: Any) -> Task:
        """Call a tool as a task and return the Task at once (``.id``, ``.status()``,
        ``.result(timeout)``, ``.cancel()``), for work that outlives one call.

        2025-11-25 servers are asked for a task when the tool allows one
        (``execution.taskSupport`` optional or required), kept ``ttl`` seconds if
        given; 2026-07-28 servers decide themselves.  A server that answers at once
        gives a Task whose ``id`` is None, its result already there.  ``timeout``
        bounds getting the task made, not the task.
        """
        task: Task = self._tool_future(name, arguments, kwargs, timeout, progress, None, _Request, ttl,
                                       start=True).result()
        return task

    def task(self, task_id: str, *, progress: Callable[..., object] | None = None) -> Task:
        """The task with this id (from ``start()``, perhaps in an earlier process), to follow again."""
        if not isinstance(task_id, str):
            raise ValueError("a task id is a string, not %r" % (task_id,))
        return self._session.extension(_Tasks).attach(task_id, progress)

    def _total(self, timeout: float | None, reset_on_progress: bool, max_total: float | None) -> float | None:
        """The ``max_total`` seconds of a call whose deadline follows progress, else None."""
        if not reset_on_progress:
            if max_total is not None:
                raise ValueError("max_total bounds a call with reset_on_progress=True")
            return None
        window = _timeout_arg(timeout, self._session.request_timeout)
        if max_total is None:
            return None if window is None else window * RESET_TOTAL_FACTOR
        total = _timeout_arg(max_total, None, "max_total")
        if total == 0:  # (a bound, not a wait: "no time left" makes no sense here)
            raise ValueError("max_total must be a positive number of seconds or None, not %r" % (max_total,))
        return LONGEST_WAIT if total is None else total

    def _tool_future(self, name: str, arguments: Mapping[str, Any] | None, kwargs: Dict[str, Any],
                     timeout: float | None, progress: _Progress | None, value: Callable[[_Json], Any] | None,
                     kind: Type[_R], ttl: float | None = None, total: float | None = None, start: bool = False
                     ) -> _R:
        """Send a tools/call whose task, if it becomes one, is followed (the tasks add-on):
        ``value`` makes the caller's value of its final result (None: the dict itself);
        ``start`` (Client.start): the caller gets a Task instead.  ``kind``: Future for a
        submitted call, _Request for one the caller waits for next (see _Session.send_request)."""
        if not isinstance(name, str):
            raise ValueError("the tool name must be a string, not %r" % (name,))
        args = dict(arguments) if arguments else {}
        if kwargs:
            args.update(kwargs)
        if timeout is not _DEFAULT:  # (the client's own was checked when it was given)
            timeout = _timeout_arg(timeout)
        session = self._session
        params = {"name": name, "arguments": args}
        if timeout == 0:  # no time left: submit() sends nothing, and nothing is listed first either
            return session.send_request(kind, "tools/call", params, timeout, progress)  # (no result to finish)
        # Over HTTP with 2026-07-28, x-mcp-header markings (from tools/list) make Mcp-Param-*
        # headers.  They are not fetched before a first call: most tools have none, and a server
        # that misses a header refuses the call with -32020 before running it, which refetches
        # the list and repeats the call once (see _repeat_if_asked).  So a fresh client's first
        # value costs two POSTs (server/discover, tools/call), not three.
        tasks = session.extension(_Tasks)
        tasks.ask(params, start, ttl)  # (2025-11-25: ask for a task where the tool wants one)
        # Nobody waits on a submitted call: a task it becomes is followed by a thread of its own.
        finish = tasks.handle if start else tasks.finish(value)
        return session.send_request(kind, "tools/call", params, timeout, progress, finish, keepalive=self,
                                    intercept=None if kind is _Request else tasks.intercept, max_total=total)

    def list_tools(self, refresh: bool = False, *, timeout: float | None = _DEFAULT) -> List[Dict[str, Any]]:
        """All tools (every page).  Served from cache while the server's ``ttlMs`` allows,
        unless ``refresh``; ``timeout`` bounds all the pages (default: the client's for each).
        Over HTTP with 2026-07-28, tools whose ``x-mcp-header`` markings are invalid are left
        out (with a warning), as the spec asks."""
        return self._session.list_tools(refresh, _timeout_arg(timeout, _DEFAULT))

    def tools_for(self, provider: str, *, strict: bool = False) -> List[Dict[str, Any]]:
        """The server's tools as a model provider's API takes them in ``tools=``: ``provider`` is
        ``"openai"`` (Chat Completions), ``"openai-responses"`` or ``"anthropic"`` (Messages).
        Names the providers refuse are mapped (run_tool_calls maps them back); ``strict=True``
        applies OpenAI's strict-mode schema rules where a tool's schema allows; for Anthropic,
        whose strict tool use takes a subset of its own, it gives the plain tools without
        ``strict`` (see the README, "Giving a model the tools")."""
        return _tools_for(self, provider, strict)

    def run_tool_calls(self, calls: Any, provider: str, *, timeout: float | None = _DEFAULT
                       ) -> List[Dict[str, Any]]:
        """Run every tool call in a model's answer at once; return what to append to the
        conversation, in ``provider``'s shape.  ``calls``: the assistant message (or its
        ``tool_calls``), the Responses output items, the Anthropic message (or its ``content``
        blocks); dicts, or the provider SDK's objects.  The model's own mistakes (an unknown
        tool, arguments that are not JSON or fail the tool's input schema) and the tools'
        failures and timeouts come back as answers the model reads, never as exceptions.
        ``calls`` in another provider's shape raises ValueError naming that provider."""
        return _run_tool_calls(self, calls, provider, _timeout_arg(timeout, _DEFAULT))

    # -- resources and prompts ----------------------------------------------------
    def list_resources(self, refresh: bool = False, *, timeout: float | None = _DEFAULT) -> List[Dict[str, Any]]:
        """All resources (every page)."""
        return self._session.list_all("resources/list", "resources", refresh, _timeout_arg(timeout, _DEFAULT))

    def list_resource_templates(self, refresh: bool = False, *, timeout: float | None = _DEFAULT
                                ) -> List[Dict[str, Any]]:
        """All resource templates (every page)."""
        return self._session.list_all("resources/templates/list", "resourceTemplates", refresh,
                                      _timeout_arg(timeout, _DEFAULT))

    def list_prompts(self, refresh: bool = False, *, timeout: float | None = _DEFAULT) -> List[Dict[str, Any]]:
        """All prompts (every page)."""
        return self._session.list_all("prompts/list", "prompts", refresh, _timeout_arg(timeout, _DEFAULT))

    def read_resource(self, uri: str, *, timeout: float | None = _DEFAULT, refresh: bool = False) -> Dict[str, Any]:
        """Read a resource; returns the result dict (its ``contents`` list holds the data).
        Served from cache while a 2026-07-28 server's ``ttlMs`` allows, unless ``refresh``.

        Raises ResourceNotFound for an unknown URI."""
        try:
            return self._session.cached("resources/read", {"uri": uri}, uri, refresh, _timeout_arg(timeout, _DEFAULT))
        except RequestError as e:
            if e.code in (RESOURCE_NOT_FOUND, INVALID_PARAMS) and not isinstance(e, ResourceNotFound):
                raise ResourceNotFound(e.code, e.message, e.data, e.method)
            raise

    def get_prompt(self, name: str, arguments: Mapping[str, Any] | None = None, /, *,
                   timeout: float | None = _DEFAULT, **kwargs: Any) -> Dict[str, Any]:
        """Get a prompt with its arguments filled in; returns the result dict (``messages``).
        Non-string argument values are sent as JSON text (prompt arguments are strings)."""
        params: _Json = {"name": name}
        if arguments is not None or kwargs:  # send what the caller gave, an empty dict included
            given = dict(arguments or {}, **kwargs)
            params["arguments"] = {k: v if isinstance(v, str) else _to_json(v) for k, v in given.items()}
        result: _Json = self._session.request("prompts/get", params, _timeout_arg(timeout, _DEFAULT))
        return result

    def complete(self, ref: str | Dict[str, Any], argument: Tuple[str, str] | Dict[str, str],
                 context: Mapping[str, str] | None = None, *, timeout: float | None = _DEFAULT) -> List[str]:
        """Ask for completions of a prompt or resource-template argument.

        ``ref`` is a prompt name, a resource (template) URI, or the raw ref dict;
        ``argument`` is ``(name, value)`` or ``{"name", "value"}``; ``context`` maps
        other argument names to values.  Returns the list of suggested values."""
        if isinstance(ref, str):
            ref = {"type": "ref/resource", "uri": ref} if "://" in ref or "{" in ref else \
                {"type": "ref/prompt", "name": ref}
        if not isinstance(argument, dict):
            argument = {"name": argument[0], "value": argument[1]}
        params: _Json = {"ref": ref, "argument": argument}
        if context:
            params["context"] = {"arguments": context}
        result = self._session.request("completion/complete", params, _timeout_arg(timeout, _DEFAULT))
        completion = _field(result, "completion", dict, "completion/complete", {})
        values: List[str] = _field(completion, "values", list, "completion/complete", [])
        return values

    def subscribe(self, uri: str, *, timeout: float | None = _DEFAULT) -> None:
        """Ask for ``notifications/resources/updated`` about a resource (handshake era)."""
        self._legacy_only("resources/subscribe", "listen(resource_uris=[...])")
        self._session.request("resources/subscribe", {"uri": uri}, _timeout_arg(timeout, _DEFAULT))

    def unsubscribe(self, uri: str, *, timeout: float | None = _DEFAULT) -> None:
        """Stop updates about a resource (handshake era)."""
        self._legacy_only("resources/unsubscribe", "Subscription.close()")
        self._session.request("resources/unsubscribe", {"uri": uri}, _timeout_arg(timeout, _DEFAULT))

    def set_logging_level(self, level: str, *, timeout: float | None = _DEFAULT) -> None:
        """Ask the server to send log messages at ``level`` and above (handshake era)."""
        self._legacy_only("logging/setLevel",
                          "the io.modelcontextprotocol/logLevel _meta key on each request (request(..., "
                          "params={'_meta': {'io.modelcontextprotocol/logLevel': level}}))")
        self._session.request("logging/setLevel", {"level": level}, _timeout_arg(timeout, _DEFAULT))

    def discover(self, refresh: bool = False, *, timeout: float | None = _DEFAULT) -> Dict[str, Any]:
        """The server's ``server/discover`` result (2026-07-28): versions, capabilities,
        instructions.  The one from connecting is served while its ``ttlMs`` allows, unless
        ``refresh``."""
        if not self._session.modern:
            raise McpError("server/discover does not exist in protocol %s (server_capabilities, server_info and "
                           "instructions hold what initialize said)" % self._session.protocol_version)
        return self._session.cached("server/discover", {}, None, refresh, _timeout_arg(timeout, _DEFAULT))

    def ping(self, *, timeout: float | None = _DEFAULT) -> None:
        """Check the server answers (2026-07-28 has no ping: server/discover stands in)."""
        self._session.request("server/discover" if self._session.modern else "ping", None,
                              _timeout_arg(timeout, _DEFAULT))

    def listen(self, tools: bool = True, prompts: bool = True, resources: bool = True,
               resource_uris: Iterable[str] = (), callback: Callable[[str, Dict[str, Any]], object] | None = None
               ) -> Subscription:
        """Receive change notifications until the returned Subscription (or the client) is closed.

        ``callback(method, params)`` (default: the client's ``on_notification``)
        gets tools/prompts/resources list changes and updates of the resources
        under ``resource_uris``.  It runs on a worker thread, never the reader.
        """
        session = self._session
        callback = callback if callback is not None else session.inbox.on_notification
        sub = Subscription(session, callback, tools, prompts, resources, resource_uris)
        wanted: _Json = {"toolsListChanged": bool(tools), "promptsListChanged": bool(prompts),
                  "resourcesListChanged": bool(resources)}
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        session.listen(sub, wanted)
        return sub

    def _legacy_only(self, method: str, instead: str) -> None:
        if self._session.modern:
            raise McpError("%s does not exist in protocol %s; use %s instead"
                           % (method, self._session.protocol_version, instead))

    # -- skills (the io.modelcontextprotocol/skills extension, SEP-2640) ----------
    def list_skills(self, refresh: bool = False, *, timeout: float | None = _DEFAULT) -> List[Dict[str, Any]]:
        """Every skill the server lists (all pages of ``skills/list``): entries with ``uri`` (of
        its SKILL.md), ``frontmatter`` and ``resources`` (its files, with ``size`` and
        ``digest``).  Reads no skill file.  McpError when the server lacks the extension."""
        return self._session.extension(_Skills).skills(refresh, _timeout_arg(timeout, _DEFAULT))

    def read_skill(self, skill: str | Dict[str, Any], *, files: bool = True, timeout: float | None = _DEFAULT
                   ) -> Dict[str, Any]:
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
        return self._session.extension(_Skills).read(skill, files, _timeout_arg(timeout, _DEFAULT))

    # -- raw access ------------------------------------------------------------
    def request(self, method: str, params: Dict[str, Any] | None = None, *, timeout: float | None = _DEFAULT,
                progress: Callable[..., object] | None = None, reset_on_progress: bool = False,
                max_total: float | None = None) -> Dict[str, Any]:
        """Send any request and return its raw result dict (``params``: a dict or None).
        ``reset_on_progress``, ``max_total``: as for call()."""
        result: _Json = self._session.request(method, params, _timeout_arg(timeout, _DEFAULT), progress,
                                              max_total=self._total(timeout, reset_on_progress, max_total))
        return result

    def submit_request(self, method: str, params: Dict[str, Any] | None = None, *, timeout: float | None = _DEFAULT,
                       progress: Callable[..., object] | None = None) -> Future:
        """Send any request and return a Future of its raw result dict."""
        return self._session.submit(method, params, _timeout_arg(timeout, _DEFAULT), progress, keepalive=self)

    def notify(self, method: str, params: Dict[str, Any] | None = None) -> None:
        """Send a notification."""
        self._session.notify(method, params)

    # -- lifetime --------------------------------------------------------------
    def close(self) -> None:
        """Close the connection and stop the server (idempotent, any thread).

        Pending requests fail with ConnectionClosed.  In a forked child this does
        nothing: the server belongs to the parent."""
        self._finalizer()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        s = self._session
        return "<mcp_min.Client %s %s %s>" % (s.transport.kind, s.transport.name, s.protocol_version)


# ---------------------------------------------------------------------------
# Skills (SEP-2640): a server's skill files, read and verified (an add-on: _Skills)
# ---------------------------------------------------------------------------
# A skill is a SKILL.md (YAML frontmatter, then Markdown) and other files, each a resource.  Its
# entry (skills/list, skills/get) gives each file's size and sha256 digest, and the frontmatter
# as JSON.  Nothing read is believed until it matches the entry.

class _Yaml(object):
    """The YAML of skill frontmatter, read line by line: block maps and lists, flow lists of
    scalars, plain scalars (YAML 1.2 core schema), quoted strings ending on their line, block
    scalars (| and >, with - or + chomping), comments and {}.  Anything else raises ValueError
    ("line N: what").  Linear time; one recursion per nesting level.  Keys stay strings."""

    def __init__(self, text: str, first_line: int) -> None:
        self.lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
        self.first, self.i, self.dash = first_line, 0, False  # self.i: the line being read

    def fail(self, reason: str) -> NoReturn:
        raise ValueError("line %d: %s" % (self.first + self.i, reason))

    def next_content(self) -> int:
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

    def node(self, parent: int, depth: int, line: int | None = None) -> Any:
        """The value at the next content indented more than ``parent`` (None when there is
        none).  A list or map may not start on ``line`` (a map value's own line)."""
        value: Any
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

    def block(self, col: int, depth: int, is_list: bool) -> Any:
        """A block list or map whose items start at column ``col``."""
        out: Any = [] if is_list else {}  # (a list or a dict: each branch below uses one)
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

    def key(self, text: str) -> Tuple[str, int] | None:
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

    def plain(self, text: str, what: str = "plain value") -> str | bool | int | float | None:
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

    def quoted(self, text: str) -> Tuple[str, int]:
        """(value, end) of the quoted string that starts ``text``; it must end on its line.
        Double quotes take JSON's escapes (\\uD83D\\uDE00 is one character, as in JSON)."""
        match = re.match(r"""'(?:[^']|'')*'|"(?:[^"\\]|\\.)*\"""", text)
        if not match:
            self.fail("unterminated quoted string (it must end on its line)")
        found = match.group()
        if found[0] == "'":
            return found[1:-1].replace("''", "'"), len(found)
        bad = [c for c in re.findall(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt]|(.))', found) if c]
        if bad:
            self.fail("unsupported escape \\%s in a double-quoted string (JSON's escapes are)" % bad[0])
        return json.loads(found, strict=False), len(found)

    def flow_list(self, text: str) -> Tuple[List[Any], int]:
        """([items], end) of the flow list of scalars that starts ``text``; it must end on its line."""
        item = re.compile(r"""[ \t]*(?:('(?:[^']|'')*'|"(?:[^"\\]|\\.)*")[ \t]*"""  # a quoted item, or
                          r"""|([^,\[\]{}'" \t][^,\[\]{}]*)?)([,\]])""")  # a plain one; then , or ]
        out: List[Any] = []
        pos = 1
        while True:
            found = item.match(text, pos)
            plain = (found.group(2) or "").rstrip(" \t") if found else ""
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

    def block_scalar(self, text: str, parent: int) -> str:
        """A | (literal) or > (folded) scalar on the lines indented more than ``parent``."""
        header = re.match(r"([|>])([-+]?)(?:[ \t]+(?:#.*)?)?\Z", text)
        if not header:
            self.fail("a block scalar header is | or > and then - or + at most (no indentation digit)")
        lines: List[str] = []
        indent: int | None = None
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


def _parse_frontmatter(markdown: str) -> Tuple[_Json, str]:
    """(frontmatter dict, body) of a SKILL.md; ValueError("line N: what") when its frontmatter
    is missing or not in the YAML that _Yaml reads."""
    text = markdown[1:] if markdown.startswith("\ufeff") else markdown
    opening = re.match(r"---[ \t]*\r?\n", text)
    closing = opening and re.compile(r"^---[ \t]*\r?$", re.M).search(text, opening.end())
    if not opening or not closing:
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


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: 1 == 1.0, but True != 1 and "1" != 1.  Walks both with a list, not
    recursion: server JSON may nest deeper than Python's recursion limit."""
    pairs = [(a, b)]
    while pairs:
        a, b = pairs.pop()
        if isinstance(a, bool) or isinstance(b, bool):
            same = a is b
        elif isinstance(a, (int, float)):
            same = isinstance(b, (int, float)) and a == b
        elif isinstance(a, list):
            same = isinstance(b, list) and len(a) == len(b)
            if same:
                pairs.extend(zip(a, b))
        elif isinstance(a, dict):
            same = isinstance(b, dict) and a.keys() == b.keys()
            if same:
                pairs.extend((a[k], b[k]) for k in a)
        else:
            same = type(a) is type(b) and a == b
        if not same:
            return False
    return True


def _skill_files(entry: Any) -> Tuple[str, List[_Json]]:
    """Check a skill entry before anything is read: (URI of its SKILL.md, its files, SKILL.md first)."""
    uri = entry.get("uri") if isinstance(entry, dict) else None

    def bad(detail: str, problem: str = "entry") -> NoReturn:
        raise SkillVerificationError(uri if isinstance(uri, str) else None, None, problem, detail)

    if not isinstance(uri, str) or "://" not in uri or not uri.endswith("/SKILL.md"):
        bad("a skill entry's uri must be that of a SKILL.md, not %s" % _shorten(_dumps_for_humans(uri), _QUOTE_CHARS))
    root, frontmatter, files = uri[:-len("/SKILL.md")], entry.get("frontmatter"), entry.get("resources")
    if not isinstance(frontmatter, dict) or frontmatter.get("name") != root.rsplit("/", 1)[-1]:
        bad("the entry's frontmatter does not name the skill %r (its path's last segment)" % root.rsplit("/", 1)[-1])
    if files == "dynamic":
        bad("the server makes this skill's files on demand, so they cannot be verified (read_resource() "
            "reads them unverified)", "dynamic")
    if not isinstance(files, list) or len(files) > SKILL_MAX_FILES:
        bad("the entry's resources must be a list of at most %d files" % SKILL_MAX_FILES,
            "limit" if isinstance(files, list) else "entry")
    listed: Dict[str, _Json] = {}
    for item in files:
        file_uri = item.get("uri") if isinstance(item, dict) else None
        if not isinstance(file_uri, str):
            bad("a file of the entry has no uri: %s" % _shorten(_dumps_for_humans(item), _QUOTE_CHARS))
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


def _skill_file(skill: str, item: _Json, result: Any) -> bytes:
    """The bytes of ``item`` in a resources/read result, once its size and digest match."""
    hashlib = _stdlib("hashlib", "checking a skill's digests")
    contents = result.get("contents") if isinstance(result, dict) else None
    parts = [c for c in contents if isinstance(c, dict) and c.get("uri") == item["uri"]] if isinstance(
        contents, list) else []
    blob: Any  # (None when there is neither: b64decode raises TypeError, caught below)
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


def _skill_md(skill: str, entry: _Json, data: bytes) -> Tuple[str, _Json, str]:
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
        def show(fields: _Json, k: str) -> str:
            return _shorten(_dumps_for_humans(fields[k]), _COLUMN_CHARS) if k in fields else "(absent)"
        raise SkillVerificationError(skill, skill, "frontmatter", "frontmatter differs from the entry: " + "; ".join(
            "%s: the entry says %s, the file says %s" % (k, show(listed, k), show(frontmatter, k)) for k in differ),
            {k: listed[k] for k in differ if k in listed}, {k: frontmatter[k] for k in differ if k in frontmatter})
    return text, frontmatter, body


SKILLS_EXTENSION = _META_PREFIX + "skills"  # SEP-2640; always declared: list_skills(), read_skill()


class _Skills(_Extension):
    """Skills, as an add-on: it declares the extension (2025-11-25 servers serve skills too)
    and lists and reads skills for Client.list_skills() and Client.read_skill()."""

    def declare(self, caps: _Json, modern: bool, newest: bool) -> None:
        if newest:
            caps.setdefault("extensions", {})[SKILLS_EXTENSION] = {}

    def skills(self, refresh: bool, timeout: float | None) -> List[Dict[str, Any]]:
        """Client.list_skills()."""
        self._need_skills()
        return [e for e in self._session.list_all("skills/list", "skills", refresh, timeout) if isinstance(e, dict)]

    def read(self, skill: str | Dict[str, Any], files: bool, timeout: float | None) -> Dict[str, Any]:
        """Client.read_skill()."""
        if timeout == 0:
            raise RequestTimeout("no time left to read skill %r (timeout 0): nothing sent" % (skill,))
        entry = self._skill_entry(skill, timeout)
        uri, listed = _skill_files(entry)

        def read(item: _Json) -> bytes:
            try:
                result = self._session.request("resources/read", {"uri": item["uri"]}, timeout)
            except RequestError as e:
                raise SkillVerificationError(uri, item["uri"], "missing", "the server did not serve it: %s" % e) from e
            return _skill_file(uri, item, result)

        # SKILL.md (``listed`` starts with it) first: its frontmatter is checked before anything else is read
        out = {uri: read(listed[0])}
        text, frontmatter, body = _skill_md(uri, entry, out[uri])
        for item in listed[1:] if files else ():
            out[item["uri"]] = read(item)
        return {"uri": uri, "name": frontmatter["name"], "frontmatter": frontmatter, "text": text, "body": body,
                "files": out, "entry": entry}

    def _skill_entry(self, skill: str | _Json, timeout: float | None) -> _Json:
        """The entry to verify against: as given, from skills/get (a URI) or from the listing."""
        if isinstance(skill, dict):
            return skill
        if not isinstance(skill, str) or not skill:
            raise ValueError("read_skill() takes a skill name, the URI of its SKILL.md or an entry of list_skills()")
        if "://" in skill:
            self._need_skills()
            entry: _Json = _field(self._session.request("skills/get", {"uri": skill}, timeout), "skill", dict,
                                  "skills/get")
            if not entry or entry.get("uri") != skill:
                raise SkillVerificationError(skill, None, "entry", "skills/get did not return this skill's entry")
            return entry

        def names(entry: _Json) -> Tuple[Any, str | None]:
            # its name, and its path (the URI without scheme and /SKILL.md)
            uri, fm = entry.get("uri"), entry.get("frontmatter")
            return (fm.get("name") if isinstance(fm, dict) else None,
                    uri.split("://", 1)[-1][:-len("/SKILL.md")] if isinstance(uri, str) else None)
        found = [entry for entry in self.skills(False, _DEFAULT) if skill in names(entry)]
        if len(found) != 1:
            raise McpError("%d listed skills are named %r%s" % (len(found), skill, (
                ": %s; pass the URI of the one you want" % ", ".join(str(e.get("uri")) for e in found)) if found else
                " (one it does not list can still be read by the URI of its SKILL.md)"))
        return found[0]

    def _need_skills(self) -> None:
        extensions = self._session.server_capabilities.get("extensions")
        if not isinstance(extensions, dict) or SKILLS_EXTENSION not in extensions:
            raise McpError("the server does not declare the %s extension (skill files can still be read with "
                           "read_resource())" % SKILLS_EXTENSION)


_EXTENSIONS.append(_Skills)


# ---------------------------------------------------------------------------
# JSON Schema: checking what the server returns and what we answer (an add-on: _Validation)
#
# The spec asks clients to check a tool's ``structuredContent`` against its
# ``outputSchema``, and a form elicitation answer follows the ``requestedSchema``
# it was asked with.  This is a JSON Schema 2020-12 validator that also reads the
# draft-07 / 2019-09 spellings servers still emit (``definitions``, array-form
# ``items`` with ``additionalItems``, ``dependencies``, ``"$id": "#name"``, and
# ``$ref`` beside nothing else under a draft-07 ``$schema``).  It is pure (no I/O);
# the session meets it only as the add-on _Validation, the section's last class.
# ``_compile_schema`` turns a schema into a check function once: one
# closure per keyword present, so a check walks only those.
#   ``format`` is an annotation (2020-12's default) and never checked; 2019-09's
#   ``$recursiveRef`` is refused (_SchemaError), as is any ``$ref`` outside the
#   document: mcp_min never fetches a schema (the spec forbids it).  ``$dynamicRef``
#   follows the dynamic scope (tracked only in a document that uses it).
#   A hostile schema cannot hang or exhaust a call: the document is indexed up to
#   SCHEMA_MAX_NODES subschemas and SCHEMA_MAX_DEPTH levels, and compiled within
#   SCHEMA_MAX_DEPTH levels, $ref hops included; every check counts its steps
#   (SCHEMA_MAX_STEPS: ``$ref`` cycles and anyOf-of-anyOf blow-ups end there) and its
#   nesting (SCHEMA_MAX_DEPTH, well inside Python's recursion limit); ``pattern`` is
#   made safe for Python's backtracking ``re`` (see _translate_pattern); and all the
#   work of one check -- searches, values, branches -- counts against one clock,
#   SCHEMA_MAX_SECONDS (see _Run).  Nor does it blame anyone wrongly: a schema it cannot
#   check with (_SchemaError; also one with a number past a float's range, such as
#   1e400) is logged and not checked, and a check that can give no verdict (_Unchecked:
#   out of time, or a value past a float's range) passes the value with a warning.
#   Every walk over a schema or a value is bounded or iterative (_same_json, _glimpse).
# ---------------------------------------------------------------------------


class _SchemaError(ValueError):
    """A schema mcp_min cannot check with: malformed, too large or too deep, a ``$ref`` outside
    the document, a refused ``pattern``, ``$recursiveRef``, or a number past a float's range."""


class _Mismatch(object):
    """The first difference found: ``message``, and the path to the value at fault,
    innermost part first (parts are added on the way out: a passing check builds nothing).
    The message may come as a function that makes it: most mismatches are never shown (a failing
    branch of anyOf), and showing a value costs."""
    __slots__ = ("_message", "parts")

    def __init__(self, message: str | Callable[[], str]) -> None:
        self._message = message
        self.parts: List[str | int] = []

    @property
    def message(self) -> str:
        if not isinstance(self._message, str):
            self._message = self._message()
        return self._message

    @message.setter
    def message(self, text: str) -> None:
        self._message = text

    def pointer(self) -> str:
        """The JSON pointer (RFC 6901) of the value at fault; "" for the whole value."""
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in reversed(self.parts))


class _Evaluated(object):
    """Which properties and items of one value its schema has evaluated: the annotations
    that unevaluatedProperties and unevaluatedItems read.  Collected only under those."""
    __slots__ = ("props", "items")

    def __init__(self) -> None:
        self.props: Set[str] = set()
        self.items: Set[int] = set()

    def merge(self, other: _Evaluated) -> None:
        self.props |= other.props
        self.items |= other.items


class _TooCostly(Exception):
    """A check went past SCHEMA_MAX_STEPS or SCHEMA_MAX_DEPTH.  An exception, not a
    mismatch, so that no ``not`` or ``anyOf`` can turn it into a pass."""


class _Unchecked(Exception):
    """A check that can give no verdict: it ran past SCHEMA_MAX_SECONDS, or met a number past a
    float's range (1e400 is valid JSON, read as inf: which multiples it has, or whether two such
    numbers differ, is lost).  The value passes unchecked, with a warning: a mismatch would blame
    the server for what this machine's speed or floats decided.  (The limits that do not depend on
    the machine -- steps, depth, a string too long for its pattern -- stay mismatches saying
    mcp_min gives up: the same verdict everywhere, and never a pass that ``not`` could invert.)"""


class _Run(object):
    """One check's budget, shared by every schema node it visits: steps (``steps`` counts down a
    chunk of SCHEMA_CLOCK_STEPS; ``left``: the steps after it), other work (``work``: what is left
    to the next look at the clock) and time (``ends``).  ``left`` and ``ends`` are set at the first
    look (most checks never get there; the few ms before it are not timed).  And its dynamic
    scope: the base URIs of the schema resources entered so far, outermost first (kept only for
    a document that uses $dynamicRef)."""
    __slots__ = ("steps", "work", "scope", "left", "ends")

    left: int
    ends: float

    def __init__(self) -> None:
        self.steps, self.work = SCHEMA_CLOCK_STEPS, SCHEMA_CLOCK_WORK
        self.scope: List[str] = []

    def over(self, depth: int) -> None:
        """A node found its steps run out or its depth past SCHEMA_MAX_DEPTH: _TooCostly, unless
        only a chunk of steps ended (then the clock is looked at, and the next chunk given)."""
        if depth > SCHEMA_MAX_DEPTH:
            raise _TooCostly()
        self.look()
        if self.left <= 0:  # (SCHEMA_MAX_STEPS is counted a chunk at a time)
            raise _TooCostly()
        chunk = min(self.left, SCHEMA_CLOCK_STEPS)
        self.left -= chunk
        self.steps += chunk

    def spend(self, work: int) -> None:
        """Count ``work`` (a visit to each of a container's members, a pattern's worst case ...):
        the clock is looked at each time a chunk of SCHEMA_CLOCK_WORK is used up."""
        self.work -= work
        if self.work < 0:
            self.look()

    def look(self) -> None:
        """Where a chunk of work ended: _Unchecked once the check has taken SCHEMA_MAX_SECONDS."""
        self.work = SCHEMA_CLOCK_WORK
        try:
            ends = self.ends
        except AttributeError:  # the first look
            self.ends, self.left = _deadline_after(SCHEMA_MAX_SECONDS), SCHEMA_MAX_STEPS - SCHEMA_CLOCK_STEPS
            return
        if _expired(ends):
            raise _Unchecked("checking it takes more than %.3g s (SCHEMA_MAX_SECONDS)" % SCHEMA_MAX_SECONDS)


_JSON_TYPES = {str: "string", dict: "object", list: "array", bool: "boolean", type(None): "null",
               int: "integer", float: "number"}
_TYPE_NAMES = frozenset(_JSON_TYPES.values())


def _json_type(value: Any) -> str | None:
    """The JSON type of a value ("integer" for 1 and 1.0), or None for what JSON cannot carry."""
    kind = _JSON_TYPES.get(type(value))
    if kind is None:  # subclasses and tuples (from a callback; json.loads makes none)
        for base, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                           (dict, "object"), ((list, tuple), "array")):
            if isinstance(value, base):
                kind = name
                break
    if isinstance(value, float) and (value.is_integer() or abs(value) == math.inf):  # (1e400 reads as inf: an integer)
        return "integer"
    return kind


def _json_key(value: Any, run: _Run | None = None, depth: int = 0) -> Hashable:
    """A hashable key, equal for equal JSON values: 1 and 1.0 share one, True and 1 do not.
    ``run``: the check whose work it counts; nesting past SCHEMA_MAX_DEPTH is _TooCostly."""
    if type(value) is str or value is None:
        return value
    if isinstance(value, bool):
        return ("b", bool(value))
    if isinstance(value, (int, float)):
        return int(value) if isinstance(value, float) and value.is_integer() else value
    if not isinstance(value, (list, tuple, dict)):
        return ("?", id(value))  # not JSON: equal to nothing else
    if depth >= SCHEMA_MAX_DEPTH:
        raise _TooCostly()
    if run is not None:
        run.spend(len(value) * SCHEMA_VISIT_WORK)
    if isinstance(value, dict):
        return ("o", frozenset((k, _json_key(v, run, depth + 1)) for k, v in value.items()))
    return ("a",) + tuple(_json_key(v, run, depth + 1) for v in value)


def _schema_key(value: Any, keyword: str) -> Hashable:
    """The _json_key of a ``const`` or ``enum`` value; _SchemaError for one mcp_min cannot compare
    with: nested past SCHEMA_MAX_DEPTH, or holding a number past a float's range (1e400 reads as
    inf, and every such number would equal every other)."""
    try:
        key = _json_key(value)
        _dumps(value)  # (ValueError for inf and NaN)
    except _TooCostly:
        raise _SchemaError("%s nests deeper than %d levels" % (keyword, SCHEMA_MAX_DEPTH))
    except (ValueError, TypeError):
        raise _SchemaError("%s holds a number mcp_min cannot compare (such as 1e400): %s" % (keyword, _short(value)))
    return key


def _decimal(number: int | float) -> Tuple[int, int]:
    """(digits, exponent) with number == digits * 10 ** exponent, read from its shortest repr:
    JSON numbers are decimal, and 0.0075 is a multiple of 0.0001 as written."""
    if not isinstance(number, float):
        return int(number), 0
    mantissa, _, exp = repr(number).lower().partition("e")
    whole, _, frac = mantissa.partition(".")
    return int(whole + frac), int(exp or 0) - len(frac)


def _is_multiple(value: float, of: float) -> bool:
    if isinstance(value, float) and not math.isfinite(value):
        if value != value:  # NaN (not JSON): a multiple of nothing
            return False
        raise _Unchecked("%s is past a float's range: whether it is a multiple of %s is lost"
                         % (_short(value), _short(of)))
    (a, ea), (b, eb) = _decimal(value), _decimal(of)
    low = min(ea, eb)  # exact integer arithmetic; exponents of finite floats stay within +-400
    remainder: int = (a * 10 ** (ea - low)) % (b * 10 ** (eb - low))
    return remainder == 0


def _short(value: Any) -> str:
    """What a mismatch or a schema error shows of a value: at a cost that does not grow with it."""
    return _glimpse(value, 80)


# -- patterns ----------------------------------------------------------------------
# Python's re backtracks and has no timeout, so two rules bound every pattern check:
# 1. A repeated group whose body can itself repeat or branch -- (a+)+, (a|ab)*, (\w+\s?)* --
#    is refused (_SchemaError): such patterns can take time exponential in the input's length.
#    Except when each round must start with one literal character that nothing repeated or
#    optional in the body can match, as in (\.[a-z0-9]+)* or (-\w+)*: then where each round
#    starts is fixed, and there is nothing to backtrack over.  (Telling every safe pattern
#    apart needs a real regex analysis; a linear-time engine would be a second regex
#    implementation in this file.)
# 2. What remains costs at most about n ** d steps for a string of n characters, where d is
#    the number of repeats plus one when the pattern is not anchored with ^ (a search
#    tries every start).  A string longer than SCHEMA_PATTERN_WORK ** (1 / d) characters
#    is reported as a mismatch ("too long to check against the pattern"), never matched:
#    ^[a-z0-9-]+$ (d = 1) checks any string, an e-mail-like ^[^@]+@[^@]+\.[^@]+$ (d = 3)
#    up to 271 characters.
# Translated from ECMA-262 where cheap: \d and \w are ASCII there, \s has U+FEFF, . stops at every line
# terminator, $ is the very end (Python's also matches before a final newline), and named
# groups are (?<name>...), \cX is a control character.  Unicode property escapes (\p{...}),
# back-references and \u{...} are refused.

def _quantifier(pattern: str, i: int) -> Tuple[int, int, int | None] | None:
    """The counted quantifier {n}, {n,} or {n,m} at ``pattern[i]``: (end, low, high or None),
    or None when the brace is a literal (ECMA-262 reads a stray { as itself)."""
    close = pattern.find("}", i)
    if close < 0:
        return None
    low, comma, high = pattern[i + 1:close].partition(",")
    if not (low.isascii() and low.isdigit()) or high and not (high.isascii() and high.isdigit()) or not comma and high:
        return None  # (ASCII digits only: "²".isdigit() is true, and int("²") fails)
    return close + 1, int(low), (int(high) if high else None) if comma else int(low)


def _translate_pattern(pattern: str) -> Tuple[str, int]:
    """An ECMA-262 pattern as Python regex text, and its degree d (see above); or SchemaError."""
    if len(pattern) > SCHEMA_PATTERN_CHARS:
        raise _SchemaError("pattern of %d characters (mcp_min checks up to %d)" % (len(pattern), SCHEMA_PATTERN_CHARS))

    def refuse(why: str) -> NoReturn:
        raise _SchemaError("pattern %r: %s" % (_shorten(pattern, _QUOTE_CHARS), why))

    def atom(text: str, literal: str | None = None) -> None:  # ``literal``: the one character the atom matches
        group = groups[-1]
        group.atoms += 1
        if group.lead is None:
            group.lead = literal or False
        out.append(text)

    out: List[str] = []
    groups, repeats = [_RegexGroup()], 0  # groups: the open ones, outermost first
    last: str | None = None  # what a quantifier here would repeat: "atom", "group" or None (nothing)
    closed = _RegexGroup()  # ... the _RegexGroup, when it is a group
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1:i + 2]
            if not e:
                refuse("it ends with a backslash")
            if e in "dDwWsS":
                atom(("[%s]" if e.islower() else "[^%s]") % _ECMA_CLASSES[e.lower()])
            elif e == "c" and pattern[i + 2:i + 3].isalpha():  # \cJ: a control character
                atom("\\x%02x" % (ord(pattern[i + 2]) % 32), chr(ord(pattern[i + 2]) % 32))
                i += 1
            elif e.isdigit() and e != "0" or e in "kpPc" or pattern.startswith("\\u{", i):
                refuse("back-references, \\p{...} and \\u{...} are not supported")
            else:
                atom(pattern[i:i + 2], None if e.isalnum() else e)
            i, last = i + 2, "atom"
        elif c == "[":
            j = i + 1
            negated = pattern.startswith("^", j)
            j += negated
            if pattern.startswith("]", j):  # ECMA-262: [] matches nothing, [^] anything
                atom("[\\s\\S]" if negated else "(?!)")
                i, last = j + 1, "atom"
                continue
            part = ["[^" if negated else "["]
            while j < n and pattern[j] != "]":
                if pattern[j] == "\\":
                    e = pattern[j + 1:j + 2]
                    if e in ("d", "w", "s"):
                        part.append(_ECMA_CLASSES[e])
                    elif e == "c" and pattern[j + 2:j + 3].isalpha():
                        part.append("\\x%02x" % (ord(pattern[j + 2]) % 32))
                        j += 1
                    elif e and (e in "pPc" or e.isdigit() and e != "0"):
                        refuse("back-references and \\p{...} are not supported")
                    else:
                        part.append(pattern[j:j + 2])
                    j += 2
                else:
                    part.append("\\[" if pattern[j] == "[" else pattern[j])  # Python would warn of nested sets
                    j += 1
            if j >= n:
                refuse("a [ is never closed")
            atom("".join(part) + "]")
            i, last = j + 1, "atom"
        elif c == "(":
            head = pattern[i:i + 4]
            if head.startswith("(?<") and head[3:4] not in ("=", "!"):
                out.append("(?P<")
                i += 3
            elif head.startswith(("(?:", "(?=", "(?!")):
                out.append(head[:3])
                i += 3
            elif head.startswith(("(?<=", "(?<!")):
                out.append(head)
                i += 4
            elif head.startswith("(?"):
                refuse("(? that is not a group, lookaround or named group")
            else:
                out.append("(")
                i += 1
            groups[-1].atoms += 1
            if groups[-1].lead is None:
                groups[-1].lead = False
            groups.append(_RegexGroup())
            last = None
        elif c == ")":
            if len(groups) == 1:
                refuse("unbalanced )")
            closed = groups.pop()
            groups[-1].varies = groups[-1].varies or closed.varies
            groups[-1].tangled = groups[-1].tangled or closed.varies
            out.append(")")
            i, last = i + 1, "group"
        elif c == "|":
            groups[-1].varies = groups[-1].tangled = True
            out.append("|")
            i, last = i + 1, None
        elif c in "*+?" or c == "{" and _quantifier(pattern, i) is not None:
            if c == "{":
                counted = _quantifier(pattern, i)
                assert counted is not None  # (the elif above found it)
                end, low, high = counted
            else:
                end, low, high = i + 1, (1 if c == "+" else 0), (1 if c == "?" else None)
            if last is None:
                refuse("nothing to repeat at position %d" % i)
            end += pattern.startswith("?", end)  # lazy
            repeating = high is None or high > 1 and high != low
            if repeating and last == "group" and closed.varies and not closed.rounds_are_fixed():
                refuse("a repeated group that can itself repeat or branch can backtrack exponentially")
            repeats += repeating
            group = groups[-1]
            if high != low:
                group.varies = True
                if last == "group":
                    group.tangled = True
                else:
                    group.loose.append(out[-1])
                    if group.atoms == 1:  # the lead itself repeats or is optional: no lead
                        group.lead = False
            out.append(pattern[i:end])
            i, last = end, None
        elif c == "{":
            atom("\\{", "{")
            i, last = i + 1, "atom"
        elif c == "$":
            out.append("\\Z")
            i, last = i + 1, None
        elif c == ".":
            atom("[^\\n\\r\\u2028\\u2029]")
            i, last = i + 1, "atom"
        elif c == "^":
            out.append(c)
            i, last = i + 1, None
        else:
            atom(c, c)
            i, last = i + 1, "atom"
    if len(groups) != 1:
        refuse("a ( is never closed")
    return "".join(out), max(1, repeats + (not pattern.startswith("^")))


class _RegexGroup(object):
    """What _translate_pattern knows of one group's body (the whole pattern is one too)."""
    __slots__ = ("atoms", "lead", "varies", "tangled", "loose")

    def __init__(self) -> None:
        self.atoms = 0  # atoms (characters, classes, groups) of the body so far
        self.lead: str | bool | None = None  # the literal character the body starts with; False: it starts otherwise
        self.varies = False  # the body can repeat or branch
        self.tangled = False  # ... with a branch, or a group that repeats or varies itself
        self.loose: List[str] = []  # Python texts of the atoms the body repeats or makes optional

    def rounds_are_fixed(self) -> bool:
        """Each round of this group, repeated, starts where its lead is, and only there."""
        lead = self.lead  # (a character: never an empty string)
        return isinstance(lead, str) and not self.tangled and not any(re.fullmatch(text, lead) for text in self.loose)


_ECMA_CLASSES = {"d": "0-9", "w": "a-zA-Z0-9_", "s": "\\s\\ufeff"}  # (ECMA-262's \s has U+FEFF too)


def _pattern_search(pattern: Any) -> Tuple[Callable[[str], Match[str] | None], int, int]:
    """(the compiled regex's ``search``, the longest string it may be given, its degree d: see above)."""
    if not isinstance(pattern, str):
        raise _SchemaError("a pattern must be a string, not %s" % _short(pattern))
    text, degree = _translate_pattern(pattern)
    try:
        found = re.compile(text).search
    except (re.error, OverflowError, RecursionError) as e:
        raise _SchemaError("pattern %r: %s" % (_shorten(pattern, _QUOTE_CHARS), e))
    return found, int(SCHEMA_PATTERN_WORK ** (1.0 / degree)), degree


# -- the compiler --------------------------------------------------------------------
# A compiled node is ``check(value, evaluated, run, depth)``: None when the value passes,
# else the _Mismatch.  ``evaluated`` is an _Evaluated to record annotations into, or None.
if TYPE_CHECKING:
    _Check = Callable[[Any, Optional[_Evaluated], _Run, int], Optional[_Mismatch]]
    _LateCheck = Callable[[Any, _Evaluated, _Run, int], Optional[_Mismatch]]  # unevaluated*: always given one
    _ValueCheck = Callable[[Any], Optional[Tuple[str, str]]]  # what _compile_schema gives: (pointer, message)


def _accept(value: Any, evaluated: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
    return None


def _reject(value: Any, evaluated: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
    return _Mismatch("no value is allowed here (the schema is false)")


# A check whose value passes when its Python type is in ``check.fast`` (a schema that is only a
# ``type``, or none): objects and arrays test that themselves and call it only for other types.
# Most properties of real output schemas are such leaves; this saves a call for each.  (setattr: type
# checkers know no attributes of a function.)
setattr(_accept, "fast", frozenset(_JSON_TYPES))


def _passing_types(check: _Check | None) -> FrozenSet[type]:
    return getattr(check, "fast", frozenset())


_SUBSCHEMA = ("additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems",
              "contains", "propertyNames", "not", "if", "then", "else", "items")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_OLD_DRAFTS = ("draft-03", "draft-04", "draft-06", "draft-07")  # there $ref replaces its siblings


def _subschemas(schema: _Json) -> Iterator[Any]:
    for key in _SUBSCHEMA:
        if isinstance(schema.get(key), (dict, bool)):
            yield schema[key]
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for sub in schema[key].values():
                if isinstance(sub, (dict, bool)):
                    yield sub
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for sub in schema[key]:
                yield sub


def _has_scheme(uri: str) -> bool:
    scheme, colon, _ = uri.partition(":")
    return bool(colon) and scheme[:1].isalpha() and all(ch.isalnum() or ch in "+-." for ch in scheme)


def _resolve_uri(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` as RFC 3986 (5.2) says for any scheme: urllib's urljoin()
    leaves a reference against a base it does not know as hierarchical (``urn:``, ``tag:``) as it is."""
    if ref.startswith("#"):
        return base.partition("#")[0] + ref
    if _has_scheme(ref) or not base:
        return ref
    base_parts, ref_parts = re.match(_URI_PARTS, base, re.S), re.match(_REF_PARTS, ref, re.S)
    assert base_parts is not None and ref_parts is not None  # (every part of both patterns is optional)
    scheme, authority, path, query = base_parts.groups()[:4]
    r_authority, r_path, r_query, fragment = ref_parts.groups()
    if r_authority is not None:
        authority, path, query = r_authority, _remove_dot_segments(r_path), r_query
    elif r_path:
        if not r_path.startswith("/"):  # merged (5.2.3) with the base's path up to its last "/"
            r_path = ("/" if authority is not None and not path else path[:path.rfind("/") + 1]) + r_path
        path, query = _remove_dot_segments(r_path), r_query
    elif r_query is not None:
        query = r_query
    return "".join((scheme + ":" if scheme is not None else "", "//" + authority if authority is not None else "",
                    path, "?" + query if query is not None else "", "#" + fragment if fragment is not None else ""))


# RFC 3986 appendix B: scheme, authority, path, query, fragment (a reference: no scheme)
_REF_PARTS = r"(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?"
_URI_PARTS = r"(?:([^:/?#]+):)?" + _REF_PARTS


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4, segment by segment (linear in the path's length)."""
    out: List[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    if path.startswith("/") and (not out or out[0]):
        out.insert(0, "")
    if path.endswith(("/.", "/..")):
        out.append("")
    return "/".join(out)


class _SchemaCompiler(object):
    """Indexes one schema document (its $id, $anchor and subschemas), then compiles nodes."""

    def __init__(self, root: Any, draft7: bool = False) -> None:
        self.resources: Dict[str, Any] = {"": root}  # absolute URI without fragment -> schema
        self.anchors: Dict[str, _Json] = {}  # URI#name -> schema
        # name -> {resource URI: schema with that $dynamicAnchor}
        self.dynamic_anchors: Dict[str, Dict[str, _Json]] = {}
        self.dynamic = False  # the document uses $dynamicRef: resources entered are tracked
        self.root = root
        self.bases: Dict[int, str] = {}  # id(schema) -> its base URI
        self.compiled: Dict[int, _Check] = {}  # id(schema) -> its check
        self.count = 0
        self.depth = 0  # nodes being compiled, one inside the other ($ref hops included)
        dialect = root.get("$schema") if isinstance(root, dict) else None
        self.ref_alone = any(d in dialect for d in _OLD_DRAFTS) if isinstance(dialect, str) else draft7
        self._index(root, "", 0)

    def _index(self, schema: Any, base: str, depth: int) -> None:
        self.count += 1
        if self.count > SCHEMA_MAX_NODES or depth > SCHEMA_MAX_DEPTH:
            raise _SchemaError("the schema has more than %d subschemas or more than %d levels"
                              % (SCHEMA_MAX_NODES, SCHEMA_MAX_DEPTH))
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise _SchemaError("a schema is an object or a boolean, not %s" % _short(schema))
        own = schema.get("$id")
        if isinstance(own, str) and not (self.ref_alone and "$ref" in schema):
            if own.startswith("#"):  # draft-07's plain-name anchor
                self.anchors.setdefault(base.partition("#")[0] + own, schema)
            else:
                base = _resolve_uri(base, own).partition("#")[0]
                self.resources.setdefault(base, schema)
        for key in ("$anchor", "$dynamicAnchor"):
            if isinstance(schema.get(key), str):
                self.anchors.setdefault(base + "#" + schema[key], schema)
        if isinstance(schema.get("$dynamicAnchor"), str):
            self.dynamic_anchors.setdefault(schema["$dynamicAnchor"], {}).setdefault(base, schema)
        self.dynamic = self.dynamic or "$dynamicRef" in schema
        self.bases[id(schema)] = base
        for sub in _subschemas(schema):
            self._index(sub, base, depth + 1)

    def target(self, ref: Any, base: str) -> Any:
        """The schema a $ref names, inside this document only."""
        if not isinstance(ref, str):
            raise _SchemaError("$ref must be a string, not %s" % _short(ref))
        uri = _resolve_uri(base, ref)
        where, _, fragment = uri.partition("#")
        if "%" in fragment:
            import urllib.parse
            fragment = urllib.parse.unquote(fragment)
        if where not in self.resources:
            raise _SchemaError("$ref %r points outside the schema (%s); mcp_min never fetches schemas"
                              % (_shorten(ref, _SHOWN_CHARS), _shorten(where, _SHOWN_CHARS)))
        if fragment and not fragment.startswith("/"):
            found = self.anchors.get(where + "#" + fragment)
            if found is None:
                raise _SchemaError("$ref %r: no $anchor %r in the schema" % (_shorten(ref, _SHOWN_CHARS), fragment))
            return found
        node = self.resources[where]
        for token in fragment.split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isascii() and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise _SchemaError("$ref %r: the schema has nothing there" % _shorten(ref, _SHOWN_CHARS))
        return node

    def node(self, schema: Any) -> _Check:
        """The check of one schema node, compiled once (a $ref cycle meets a forwarder)."""
        if schema is True:
            return _accept
        if schema is False:
            return _reject
        if not isinstance(schema, dict):
            raise _SchemaError("a schema is an object or a boolean, not %s" % _short(schema))
        done = self.compiled.get(id(schema))
        if done is not None:
            return done
        cell: List[_Check] = []
        self.compiled[id(schema)] = lambda value, ev, run, depth: cell[0](value, ev, run, depth)
        if id(schema) not in self.bases:  # reached by a $ref into a place the index did not walk
            self._index(schema, "", 0)
        self.depth += 1
        if self.depth > SCHEMA_MAX_DEPTH:  # (the index bounds the document's nesting; this, $ref hops too)
            raise _SchemaError("the schema nests more than %d levels, $ref hops included" % SCHEMA_MAX_DEPTH)
        check = self._build(schema)
        self.depth -= 1
        if self.dynamic and (schema is self.root or isinstance(schema.get("$id"), str)):
            check = _entering(self.bases[id(schema)], check)
        cell.append(check)
        self.compiled[id(schema)] = check
        return check

    def dynamic_ref(self, schema: _Json) -> _Check:
        """$dynamicRef: like $ref, unless its target has the $dynamicAnchor the reference names;
        then the outermost resource of the dynamic scope with that $dynamicAnchor wins."""
        ref = schema["$dynamicRef"]
        found = self.target(ref, self.bases[id(schema)])
        name = ref.partition("#")[2]
        static = _entering(self.bases.get(id(found), ""), self.node(found))
        if not isinstance(found, dict) or found.get("$dynamicAnchor") != name or not name:
            return static
        candidates = {uri: _entering(uri, self.node(sub)) for uri, sub in self.dynamic_anchors[name].items()}

        def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
            for uri in run.scope:
                if uri in candidates:
                    return candidates[uri](value, ev, run, depth)
            return static(value, ev, run, depth)
        return check

    def _build(self, schema: _Json) -> _Check:
        if "$recursiveRef" in schema:
            raise _SchemaError("$recursiveRef (2019-09) is not supported by mcp_min's validator")
        collected: List[_Check] = []  # the checks of $ref and of the keywords present, in order
        built: Set[object] = set()
        leaf = "$ref" not in schema and "$dynamicRef" not in schema and not any(True for _ in _subschemas(schema))
        if "$ref" in schema:
            target = self.target(schema["$ref"], self.bases[id(schema)])
            collected.append(_entering(self.bases.get(id(target), ""), self.node(target)) if self.dynamic
                             else self.node(target))
            if self.ref_alone:
                schema = {}
        if "$dynamicRef" in schema:
            collected.append(self.dynamic_ref(schema))
        typed = _kw_type(self, schema, schema["type"]) if "type" in schema else None
        fast = _passing_types(typed) if typed is not None else ()
        for key, build in _KEYWORDS:
            if key in schema and build not in built:
                built.add(build)
                check = build(self, schema, schema[key])
                if check is not None:
                    collected.append(check)
        late = tuple(_unevaluated(self, schema, schema[key], key == "unevaluatedItems")
                     for key in ("unevaluatedProperties", "unevaluatedItems") if key in schema)
        checks = tuple(collected)
        if leaf:
            # A leaf (no subschema, no $ref) cannot recurse: its caller counted the step.
            if not checks:
                return _accept if typed is None else typed  # (whose .fast its callers test themselves)
            if typed is None and len(checks) == 1:
                return checks[0]  # every keyword check passes values of other types itself

            def node(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
                if typed is not None and type(value) not in fast:
                    found = typed(value, ev, run, depth)
                    if found is not None:
                        return found
                for check in checks:
                    found = check(value, ev, run, depth)
                    if found is not None:
                        return found
                return None
            return node
        if late:
            def node(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
                run.steps -= 1
                if run.steps < 0 or depth > SCHEMA_MAX_DEPTH:
                    run.over(depth)
                if typed is not None and type(value) not in fast:
                    found = typed(value, ev, run, depth)
                    if found is not None:
                        return found
                own = _Evaluated()
                for check in checks + late:
                    found = check(value, own, run, depth + 1)
                    if found is not None:
                        return found
                if ev is not None:
                    ev.merge(own)
                return None
        else:
            def node(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
                run.steps -= 1
                if run.steps < 0 or depth > SCHEMA_MAX_DEPTH:
                    run.over(depth)
                if typed is not None and type(value) not in fast:
                    found = typed(value, ev, run, depth)
                    if found is not None:
                        return found
                for check in checks:
                    found = check(value, ev, run, depth + 1)
                    if found is not None:
                        return found
                return None
        return node


def _entering(uri: str, check: _Check) -> _Check:
    """``check``, with the resource ``uri`` on the dynamic scope while it runs."""
    def entered(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        run.scope.append(uri)
        try:
            return check(value, ev, run, depth)
        finally:
            run.scope.pop()
    return entered


def _count(value: Any, keyword: str) -> int:
    """A keyword's non-negative integer (2.0 counts as 2)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 \
            or value != int(_number(value, keyword)):
        raise _SchemaError("%s must be a non-negative integer, not %s" % (keyword, _short(value)))
    return int(value)


def _number(value: object, keyword: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _SchemaError("%s must be a number, not %s" % (keyword, _short(value)))
    if isinstance(value, float) and not math.isfinite(value):  # (1e400 is JSON; Python reads it as inf)
        raise _SchemaError("%s is %s, not a finite number: mcp_min cannot check with it" % (keyword, _short(value)))
    return value


def _kw_type(compiler: _SchemaCompiler, schema: _Json, value: Any) -> _Check:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(t, str) and t in _TYPE_NAMES for t in names):
        raise _SchemaError("type must be one of %s or a list of them, not %s" % (", ".join(sorted(_TYPE_NAMES)),
                                                                              _short(value)))
    allowed = frozenset(names) | ({"integer"} if "number" in names else frozenset())
    wanted = " or ".join(names)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if _json_type(value) in allowed:
            return None
        return _Mismatch(lambda: "%s is not of type %s" % (_short(value), wanted))
    # Values of these Python types pass at once: the node (or, for a schema that is only a type,
    # its caller: see _passing_types) tests them itself, and calls this for other types only.
    # (setattr: type checkers know no attributes of a function.)
    setattr(check, "fast", frozenset(t for name in names for t in _PYTHON_TYPES[name]))
    return check


_PYTHON_TYPES = {"string": (str,), "object": (dict,), "array": (list,), "boolean": (bool,), "null": (type(None),),
                 "integer": (int,), "number": (int, float)}  # (1.0 is an integer too: the slow path sees to it)


def _kw_const(compiler: _SchemaCompiler, schema: _Json, value: Any) -> _Check:
    key, wanted = _schema_key(value, "const"), _short(value)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if (value if type(value) is str else _json_key(value, run)) == key:  # (a str is its own key)
            return None
        return _Mismatch(lambda: "%s is not the const %s" % (_short(value), wanted))
    return check


def _kw_enum(compiler: _SchemaCompiler, schema: _Json, value: Any) -> _Check:
    if not isinstance(value, list):
        raise _SchemaError("enum must be a list, not %s" % _short(value))
    keys = frozenset(_schema_key(v, "enum") for v in value)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if (value if type(value) is str else _json_key(value, run)) in keys:
            return None
        return _Mismatch(lambda: "%s is not one of the enum's %d values" % (_short(value), len(keys)))
    return check


def _kw_numbers(compiler: _SchemaCompiler, schema: _Json, _: Any) -> _Check | None:
    bounds: Dict[str, float] = {}
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        if key in schema and not isinstance(schema[key], bool):  # (draft-04's boolean exclusives: ignored)
            bounds[key] = _number(schema[key], key)
    low, high = bounds.get("minimum"), bounds.get("maximum")
    above, below, step = bounds.get("exclusiveMinimum"), bounds.get("exclusiveMaximum"), bounds.get("multipleOf")
    if step is not None and step <= 0:
        raise _SchemaError("multipleOf must be more than 0, not %s" % _short(step))

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if type(value) is bool or not isinstance(value, (int, float)):
            return None
        if low is not None and value < low:
            return _Mismatch(lambda: "%s is less than %s" % (_short(value), _short(low)))
        if high is not None and value > high:
            return _Mismatch(lambda: "%s is more than %s" % (_short(value), _short(high)))
        if above is not None and value <= above:
            return _Mismatch(lambda: "%s is not more than %s" % (_short(value), _short(above)))
        if below is not None and value >= below:
            return _Mismatch(lambda: "%s is not less than %s" % (_short(value), _short(below)))
        if step is not None and not _is_multiple(value, step):
            return _Mismatch(lambda: "%s is not a multiple of %s" % (_short(value), _short(step)))
        return None
    return check if bounds else None


def _kw_strings(compiler: _SchemaCompiler, schema: _Json, _: Any) -> _Check:
    low = _count(schema["minLength"], "minLength") if "minLength" in schema else 0
    high = _count(schema["maxLength"], "maxLength") if "maxLength" in schema else None
    pattern = schema.get("pattern", "")  # (only read when it is there; _pattern_search refuses all but a string)
    search, longest, degree = _pattern_search(pattern) if "pattern" in schema else (None, 0, 0)  # (0, 0: unused)
    free = SCHEMA_SMALL * SCHEMA_VISIT_WORK if degree == 1 else -1  # (no work counted up to this length)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if not isinstance(value, str):
            return None
        if low and len(value) < low:
            return _Mismatch(lambda: "%s is shorter than %d characters" % (_short(value), low))
        if high is not None and len(value) > high:
            return _Mismatch(lambda: "%s is longer than %d characters" % (_short(value), high))
        if search is not None:
            n = len(value)
            if n > longest:
                return _Mismatch("a string of %d characters is too long to check against the pattern %r "
                                 "(mcp_min checks up to %d)" % (n, _shorten(pattern, _QUOTE_CHARS), longest))
            if n > free:
                run.spend(n ** degree)  # (the worst case: see _translate_pattern)
            if search(value) is None:
                return _Mismatch(lambda: "%s does not match the pattern %r" % (
                    _short(value), _shorten(pattern, _QUOTE_CHARS)))
        return None
    return check


def _subschema_map(compiler: _SchemaCompiler, value: Any, keyword: str) -> Dict[str, _Check]:
    if not isinstance(value, dict):
        raise _SchemaError("%s must be an object, not %s" % (keyword, _short(value)))
    return {key: compiler.node(sub) for key, sub in value.items()}


def _kw_object(compiler: _SchemaCompiler, schema: _Json, _: Any) -> _Check | None:
    """properties, patternProperties and additionalProperties, which depend on each other, and
    required (one call less per object)."""
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(v, str) for v in required):
        raise _SchemaError("required must be a list of strings, not %s" % _short(required))
    props = _subschema_map(compiler, schema.get("properties", {}), "properties")
    patterns = [_pattern_search(p) + (p, sub) for p, sub in
                _subschema_map(compiler, schema.get("patternProperties", {}), "patternProperties").items()]
    other = compiler.node(schema["additionalProperties"]) if "additionalProperties" in schema else None

    def unexpected(key: str, found: _Mismatch) -> _Mismatch:
        return _Mismatch("the property %r is not allowed" % _shorten(key, _QUOTE_CHARS)) if other is _reject else found

    table = {key: (sub, _passing_types(sub)) for key, sub in props.items()}  # for plain()
    otherwise = (other, _passing_types(other)) if other is not None else None
    required = tuple(required)
    visit, weight = SCHEMA_VISIT_WORK, len(required) * SCHEMA_VISIT_WORK  # (the work of a visit, see _Run)
    free = SCHEMA_SMALL if len(required) <= SCHEMA_SMALL else -1  # (no work counted up to this size)

    def missing(value: _Json) -> _Mismatch | None:
        for name in required:
            if name not in value:
                return _Mismatch("the required property %r is missing" % name)
        return None

    def plain(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:  # no patternProperties
        if not isinstance(value, dict):
            return None
        if len(value) > free:
            run.spend(len(value) * visit + weight)
        for name in required:  # (the loop of missing(), inline: no call when all are there)
            if name not in value:
                return missing(value)
        if not table and otherwise is None:
            return None
        for key, item in value.items():
            entry = table.get(key, otherwise)
            if entry is not None:
                if type(item) not in entry[1]:
                    found = entry[0](item, None, run, depth)
                    if found is not None:
                        found = found if key in props else unexpected(key, found)
                        found.parts.append(key)
                        return found
                if ev is not None:
                    ev.props.add(key)
        return None

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if not isinstance(value, dict):
            return None
        run.spend(len(value) * visit + weight)
        found = missing(value)
        if found is not None:
            return found
        for key, item in value.items():
            sub = props.get(key)
            matched = sub is not None
            found = sub(item, None, run, depth) if sub is not None else None
            for search, longest, degree, pattern, sub in patterns:
                if found is not None:
                    break
                if len(key) > longest:
                    found = _Mismatch("the property name is too long to check against the pattern %r"
                                      % _shorten(pattern, _QUOTE_CHARS))
                    break
                run.spend(len(key) ** degree)
                if search(key) is not None:
                    matched = True
                    found = sub(item, None, run, depth)
            if found is None and not matched and other is not None:
                found = other(item, None, run, depth)
                if found is not None:
                    found = unexpected(key, found)
                matched = True
            if found is not None:
                found.parts.append(key)
                return found
            if matched and ev is not None:
                ev.props.add(key)
        return None
    if not required and not table and otherwise is None and not patterns:
        return None
    return check if patterns else plain


def _kw_property_count(compiler: _SchemaCompiler, schema: _Json, _: Any) -> _Check:
    low = _count(schema["minProperties"], "minProperties") if "minProperties" in schema else 0
    high = _count(schema["maxProperties"], "maxProperties") if "maxProperties" in schema else None

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if isinstance(value, dict) and (len(value) < low or high is not None and len(value) > high):
            return _Mismatch("an object of %d properties is not within %d..%s" % (len(value), low, high))
        return None
    return check


def _kw_property_names(compiler: _SchemaCompiler, schema: _Json, value: Any) -> _Check:
    sub = compiler.node(value)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if isinstance(value, dict):
            run.spend(len(value) * SCHEMA_VISIT_WORK)
            for key in value:
                found = sub(key, None, run, depth)
                if found is not None:
                    found.message = "property name %r: %s" % (_shorten(key, _QUOTE_CHARS), found.message)
                    return found
        return None
    return check


def _kw_dependencies(compiler: _SchemaCompiler, schema: _Json, _: Any) -> _Check | None:
    """dependentRequired, dependentSchemas and draft-07's dependencies (either kind)."""
    needs: Dict[str, Tuple[str, ...]] = {}
    subs: Dict[str, List[_Check]] = {}
    for keyword in ("dependencies", "dependentRequired", "dependentSchemas"):
        table = schema.get(keyword)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise _SchemaError("%s must be an object, not %s" % (keyword, _short(table)))
        for name, then in table.items():
            if isinstance(then, list) and keyword != "dependentSchemas":
                if not all(isinstance(v, str) for v in then):
                    raise _SchemaError("%s of %r must list property names" % (keyword, name))
                needs[name] = tuple(then)
            elif keyword != "dependentRequired":
                subs.setdefault(name, []).append(compiler.node(then))
            else:
                raise _SchemaError("dependentRequired of %r must be a list of names, not %s" % (name, _short(then)))
    weight = (len(needs) + sum(map(len, needs.values())) + len(subs)) * SCHEMA_VISIT_WORK  # (see _Run)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if not isinstance(value, dict):
            return None
        run.spend(weight)
        for name, wanted in needs.items():
            if name in value:
                for other in wanted:
                    if other not in value:
                        return _Mismatch("the property %r is missing (required with %r)" % (other, name))
        for name, nodes in subs.items():
            if name in value:
                for sub in nodes:
                    found = sub(value, ev, run, depth)
                    if found is not None:
                        return found
        return None
    return check if needs or subs else None


def _kw_array(compiler: _SchemaCompiler, schema: _Json, _: Any) -> _Check | None:
    """prefixItems and items (or draft-07's array items and additionalItems), and the counts:
    minItems, maxItems, uniqueItems (one call less per array)."""
    low = _count(schema["minItems"], "minItems") if "minItems" in schema else 0
    high = _count(schema["maxItems"], "maxItems") if "maxItems" in schema else None
    unique = schema.get("uniqueItems") is True
    items = schema.get("items")
    if "prefixItems" in schema:
        firsts, others = schema["prefixItems"], items
    elif isinstance(items, list):
        firsts, others = items, schema.get("additionalItems")
    else:
        firsts, others = [], items
    if not isinstance(firsts, list):
        raise _SchemaError("prefixItems must be a list of schemas, not %s" % _short(firsts))
    prefix = tuple(compiler.node(sub) for sub in firsts)
    rest = compiler.node(others) if others is not None else None
    if not prefix and rest is None and not (low or high is not None or unique):
        return None

    def counted(value: List[Any] | Tuple[Any, ...], run: _Run) -> _Mismatch | None:
        if len(value) < low or high is not None and len(value) > high:
            return _Mismatch("an array of %d items is not within %d..%s" % (len(value), low, high))
        if unique and len({v if type(v) is str else _json_key(v, run) for v in value}) != len(value):
            seen: Dict[Hashable, int] = {}
            for i, item in enumerate(value):
                first = seen.setdefault(_json_key(item, run), i)
                if first != i:
                    try:
                        _dumps(item)
                    except ValueError:  # 1e400 and 1e401 both read as inf
                        raise _Unchecked("item %d holds a number past a float's range: whether it repeats item %d "
                                         "is lost" % (i, first))
                    found = _Mismatch("item %d repeats item %d (uniqueItems)" % (i, first))
                    found.parts.append(i)
                    return found
        return None
    bounded = low or high is not None or unique
    quick = _passing_types(rest)
    visit = SCHEMA_VISIT_WORK  # (the work of a visit, see _Run)

    def every(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:  # no prefix
        if not isinstance(value, (list, tuple)):
            return None
        run.spend(len(value) * visit)
        if bounded:
            found = counted(value, run)
            if found is not None:
                return found
        if rest is None:
            return None
        for i, item in enumerate(value):
            if type(item) in quick:
                continue
            found = rest(item, None, run, depth)
            if found is not None:
                found = _Mismatch("no item is allowed at index %d" % i) if rest is _reject else found
                found.parts.append(i)
                return found
        if ev is not None:
            ev.items.update(range(len(value)))
        return None

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if not isinstance(value, (list, tuple)):
            return None
        run.spend(len(value) * visit)
        if bounded:
            found = counted(value, run)
            if found is not None:
                return found
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else rest
            if sub is None:
                break
            found = sub(item, None, run, depth)
            if found is not None:
                if sub is _reject:
                    found = _Mismatch("no item is allowed at index %d" % i)
                found.parts.append(i)
                return found
        if ev is not None:
            ev.items.update(range(len(value) if rest is not None else min(len(prefix), len(value))))
        return None
    return check if prefix else every


def _kw_contains(compiler: _SchemaCompiler, schema: _Json, value: Any) -> _Check:
    sub = compiler.node(value)
    low = _count(schema["minContains"], "minContains") if "minContains" in schema else 1
    high = _count(schema["maxContains"], "maxContains") if "maxContains" in schema else None

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if not isinstance(value, (list, tuple)):
            return None
        run.spend(len(value) * SCHEMA_VISIT_WORK)
        count = 0
        for i, item in enumerate(value):
            if sub(item, None, run, depth) is None:
                count += 1
                if ev is not None:
                    ev.items.add(i)
                elif high is None and count >= low:
                    break
        if count < low:
            return _Mismatch("%d item(s) match contains, fewer than %d" % (count, low))
        if high is not None and count > high:
            return _Mismatch("%d items match contains, more than %d" % (count, high))
        return None
    return check


def _subschema_list(compiler: _SchemaCompiler, value: Any, keyword: str) -> Tuple[_Check, ...]:
    if not isinstance(value, list) or not value:
        raise _SchemaError("%s must be a non-empty list of schemas, not %s" % (keyword, _short(value)))
    return tuple(compiler.node(sub) for sub in value)


def _kw_all_of(compiler: _SchemaCompiler, schema: _Json, value: Any) -> _Check:
    subs = _subschema_list(compiler, value, "allOf")
    weight = len(subs) * SCHEMA_VISIT_WORK  # (see _Run: a leaf branch counts no step, so this counts them)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        run.spend(weight)
        for sub in subs:
            found = sub(value, ev, run, depth)
            if found is not None:
                return found
        return None
    return check


def _kw_any_of(compiler: _SchemaCompiler, schema: _Json, value: Any, keyword: str = "anyOf") -> _Check:
    """anyOf, and oneOf (``keyword``), which fails on a second passing branch."""
    subs = _subschema_list(compiler, value, keyword)
    weight = len(subs) * SCHEMA_VISIT_WORK
    one = keyword == "oneOf"

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        run.spend(weight)
        passed: List[Tuple[int, _Evaluated | None]] = []
        first: _Mismatch | None = None
        for i, sub in enumerate(subs):
            own = _Evaluated() if ev is not None else None
            found = sub(value, own, run, depth)
            if found is None:
                if one and passed:
                    return _Mismatch("matches oneOf schemas %d and %d; it must match exactly one"
                                     % (passed[0][0], i))
                if ev is None and not one:
                    return None
                passed.append((i, own))
            elif first is None:
                first = found
        if not passed:
            assert first is not None  # (subs is never empty, and none passed)
            return _Mismatch("matches none of the %d %s schemas (the first says: %s%s)"
                             % (len(subs), keyword, first.pointer() + ": " if first.parts else "", first.message))
        for _, own in passed:
            if ev is not None and own is not None:  # (own is made when ev is given)
                ev.merge(own)
        return None
    return check


def _kw_not(compiler: _SchemaCompiler, schema: _Json, value: Any) -> _Check:
    sub = compiler.node(value)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if sub(value, None, run, depth) is None:
            return _Mismatch(lambda: "%s matches the schema under not" % _short(value))
        return None
    return check


def _kw_if(compiler: _SchemaCompiler, schema: _Json, value: Any) -> _Check:
    test = compiler.node(value)
    then = compiler.node(schema["then"]) if "then" in schema else None
    other = compiler.node(schema["else"]) if "else" in schema else None
    if then is None and other is None:
        return _kw_if_alone(test)

    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        own = _Evaluated() if ev is not None else None
        if test(value, own, run, depth) is None:
            if ev is not None and own is not None:  # (own is made when ev is given)
                ev.merge(own)
            return then(value, ev, run, depth) if then is not None else None
        return other(value, ev, run, depth) if other is not None else None
    return check


def _kw_if_alone(test: _Check) -> _Check:
    """``if`` without then/else still counts for unevaluated*: its annotations when it passes."""
    def check(value: Any, ev: _Evaluated | None, run: _Run, depth: int) -> _Mismatch | None:
        if ev is not None:
            own = _Evaluated()
            if test(value, own, run, depth) is None:
                ev.merge(own)
        return None
    return check


def _unevaluated(compiler: _SchemaCompiler, schema: _Json, value: Any, items: bool = False) -> _LateCheck:
    """unevaluatedProperties, or unevaluatedItems (``items``)."""
    sub = compiler.node(value)

    def check(value: Any, own: _Evaluated, run: _Run, depth: int) -> _Mismatch | None:
        seen: Set[Any] = own.items if items else own.props
        if items and isinstance(value, (list, tuple)):
            members: Iterable[Tuple[Any, Any]] = enumerate(value)
        elif not items and isinstance(value, dict):
            members = value.items()
        else:
            return None
        run.spend(len(value) * SCHEMA_VISIT_WORK)
        for key, item in members:
            if key not in seen:
                found = sub(item, None, run, depth)
                if found is not None:
                    if sub is _reject:
                        found = _Mismatch("no item is allowed at index %d (unevaluated)" % key if items
                                          else "the property %r is not allowed (unevaluated)"
                                          % _shorten(str(key), _QUOTE_CHARS))
                    found.parts.append(key)
                    return found
        seen.update(range(len(value)) if items else value)
        return None
    return check


# Each builder runs once per schema node that has its keyword (the first of a group
# builds the whole group), in this order, after ``type`` (which the node tests itself):
# it is the order in which differences are found.
_KEYWORDS = (
    ("const", _kw_const), ("enum", _kw_enum),
    ("minimum", _kw_numbers), ("maximum", _kw_numbers), ("exclusiveMinimum", _kw_numbers),
    ("exclusiveMaximum", _kw_numbers), ("multipleOf", _kw_numbers),
    ("minLength", _kw_strings), ("maxLength", _kw_strings), ("pattern", _kw_strings),
    ("required", _kw_object), ("properties", _kw_object), ("patternProperties", _kw_object),
    ("additionalProperties", _kw_object), ("minProperties", _kw_property_count),
    ("maxProperties", _kw_property_count), ("propertyNames", _kw_property_names),
    ("dependentRequired", _kw_dependencies), ("dependentSchemas", _kw_dependencies), ("dependencies", _kw_dependencies),
    ("minItems", _kw_array), ("maxItems", _kw_array), ("uniqueItems", _kw_array),
    ("prefixItems", _kw_array), ("items", _kw_array), ("contains", _kw_contains),
    ("allOf", _kw_all_of), ("anyOf", _kw_any_of), ("oneOf", lambda c, s, v: _kw_any_of(c, s, v, "oneOf")),
    ("not", _kw_not), ("if", _kw_if),
)


def _compile_schema(schema: Any, draft7: bool = False, what: str = "a value") -> _ValueCheck:
    """Compile a schema once into ``check(value)``: None when the value matches, else
    (JSON pointer of the first difference, what is wrong there).  _SchemaError when the
    schema cannot be checked with (see this section's introduction).  ``draft7``: read a
    schema without ``$schema`` as draft-07 ($ref replaces its siblings); else as 2020-12.
    A check that can give no verdict (_Unchecked) passes, with a warning naming ``what``."""
    compiler = _SchemaCompiler(schema, draft7)
    try:
        root = compiler.node(schema)
    except RecursionError:  # (a safety net: SCHEMA_MAX_DEPTH should end every chain before)
        raise _SchemaError("the schema's $ref chains are nested too deeply")

    def check(value: Any) -> Tuple[str, str] | None:
        try:
            found = root(value, None, _Run(), 0)
        except (_TooCostly, RecursionError):  # (RecursionError: a value from a callback nested past Python's limit)
            return "", ("checking it takes more than %d steps or %d levels of nesting; mcp_min gives up"
                        % (SCHEMA_MAX_STEPS, SCHEMA_MAX_DEPTH))
        except _Unchecked as e:
            _log.warning("not checking %s: %s; it passes unchecked", what, e)
            return None
        except (ValueError, TypeError, LookupError, ArithmeticError) as e:
            # (What no rule here foresaw is no fault of the value's either.)
            _log.warning("not checking %s: %s: %s; it passes unchecked", what, type(e).__name__, e)
            return None
        return None if found is None else (found.pointer(), found.message)
    return check


def _schema_check(schema: Any, validate: bool | Callable[[Any, Any], object], what: str) -> _ValueCheck | None:
    """``check(value)`` as _compile_schema gives it, under the client's ``validate=`` option:
    None when nothing is checked (``validate=False``; a schema mcp_min cannot check with, which
    is logged).  A callable ``validate(instance, schema)`` raises on a mismatch."""
    if validate is False:
        return None
    if callable(validate):
        def check(value: Any) -> Tuple[str, str] | None:
            try:
                validate(value, schema)
            except Exception as e:  # whatever it raises is its verdict; jsonschema's errors say where
                where = getattr(e, "absolute_path", None)
                pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in where or ())
                return pointer, str(getattr(e, "message", None) or e)
            return None
        return check
    try:
        return _compile_schema(schema, what=what)
    except _SchemaError as e:
        _log.warning("not checking %s: %s", what, e)
    except (ValueError, TypeError, LookupError, ArithmeticError) as e:  # (a schema no rule here foresaw)
        _log.warning("not checking %s: mcp_min cannot read its schema (%s: %s)", what, type(e).__name__, e)
    return None


def _tool_checks(tools: Iterable[Any], validate: bool | Callable[[Any, Any], object],
                 previous: Mapping[str, Tuple[Any, _ValueCheck | None]]) -> Dict[str, Tuple[Any, _ValueCheck | None]]:
    """Tool name -> (outputSchema, its check) for the tools that have one; a schema equal to
    the one in ``previous`` (the last table) keeps its compiled check."""
    table: Dict[str, Tuple[Any, _ValueCheck | None]] = {}
    for tool in tools:
        schema = tool.get("outputSchema") if isinstance(tool, dict) else None
        name = tool.get("name") if schema is not None else None
        if not isinstance(name, str):
            continue
        old = previous.get(name)
        table[name] = old if old is not None and _same_json(old[0], schema) else (
            schema, _schema_check(schema, validate, "the output of tool %r" % name))
    return table


class _Validation(_Extension):
    """Output validation, as an add-on: a tool call's final result is checked against the
    tool's ``outputSchema`` (OutputValidationError), and an accepted form elicitation's
    content against its ``requestedSchema`` before we send it, under the Client's
    ``validate=`` option.  Only tools of a tools/list already read are checked: no list is
    fetched for this (that would cost every first call a round trip); the checks of the last
    list are kept whatever its ttlMs (the best knowledge we have), until tools/list_changed."""

    watches = ("tools/call", "elicitation/create", "tools/list", "notifications/tools/list_changed")

    def __init__(self, session: _Session) -> None:
        _Extension.__init__(self, session)
        # tool name -> (outputSchema, its check), see _tool_checks
        self._table: Dict[str, Tuple[Any, _ValueCheck | None]] = {}

    def check(self, method: str, params: _Json | None, result: Any) -> None:
        if method != "tools/call":
            self._check_form(params or {}, result)
            return
        name = (params or {}).get("name")
        if not isinstance(name, str):  # (a raw tools/call may name anything: only listed tools have checks)
            return
        entry = self._table.get(name)
        if entry is None or entry[1] is None or result.get("isError") is True:
            return
        structured = result.get("structuredContent")
        found = ("", "the result has none") if structured is None else entry[1](structured)
        if found is not None:
            raise OutputValidationError(name, found[0], found[1], result)

    def _check_form(self, params: _Json, answer: Any) -> None:
        """On a mismatch the server gets an error (never a made-up decline) and the log says why."""
        schema = params.get("requestedSchema")
        if not isinstance(answer, dict) or answer.get("action") != "accept" or not isinstance(schema, dict):
            return
        check = _schema_check(schema, self._session.inbox.validate, "an elicitation answer")
        found = check(answer.get("content")) if check is not None else None
        if found is None:
            return
        problem = "the elicitation answer's content%s does not match the requestedSchema: %s" % found
        _log.warning("not sending %s", problem)
        raise RequestError(INTERNAL_ERROR, problem)

    def listed(self, method: str, items: List[Any]) -> None:
        self._table = _tool_checks(items, self._session.inbox.validate, self._table)

    def notification(self, method: str, params: _Json) -> None:
        self._table = {}  # tools changed: no output is checked against an old schema


_EXTENSIONS.append(_Validation)


# ---------------------------------------------------------------------------
# Tasks: tool calls the server runs in the background (an add-on: _Tasks).
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

if TYPE_CHECKING:
    _TaskEnd = Union[_Json, McpError]  # how a task ended: its result, or the error it ended with

TASKS_EXTENSION = _META_PREFIX + "tasks"  # 2026-07-28 tasks; always declared: we follow any task
_TERMINAL = ("completed", "failed", "cancelled")


class _Expired(Exception):
    """Internal: following a task reached its deadline (the call's, or the wait's)."""


def _older(stamp: object, than: object) -> bool:
    """Whether ISO 8601 timestamp ``stamp`` is before ``than`` (both in the server's one format)."""
    return isinstance(stamp, str) and isinstance(than, str) and len(stamp) == len(than) and stamp < than


class _Follow(object):
    """The ``finish=`` of a Client's tools/call (``_Tasks.finish``): a result that announces a
    task is claimed and followed to the task's end (``_Tasks._followed``, on the waiting thread),
    then ``value`` (None: the result dict itself) makes the caller's value of the final result."""

    __slots__ = ("value",)

    def __init__(self, value: Callable[[_Json], Any] | None) -> None:
        self.value = value

    def __call__(self, fut: _Request, result: _Json) -> Any:
        return result if self.value is None else self.value(result)


def _as_it_is(fut: _Request, result: _Json) -> _Json:
    """A raw tools/call's task result: the caller's as it came (nothing followed or checked)."""
    return result


class _Tasks(_Extension):
    """A session's tasks: which tools want one (2025-11-25), the tasks being followed
    (for pushed status and progress), and the threads that follow submitted calls.

    As an add-on: it declares tasks, claims the tool call results that announce a task
    (and those of Client.start), ends a followed task when its call is withdrawn, and takes
    task status, task progress and tools/list (which tools want a task)."""

    watches = ("tools/call", "tools/list", "notifications/progress", "notifications/tasks/status",
               "notifications/tasks", "notifications/tools/list_changed")

    def __init__(self, session: _Session) -> None:
        _Extension.__init__(self, session)
        # finish= of Client.start(): the answer becomes a Task, not followed here (kept once, so that
        # claim() knows it by identity)
        self.handle: Callable[[_Request, _Json], Task] = self._handle
        self._lock = threading.Lock()
        self._by_id: weakref.WeakValueDictionary[str, Task] = weakref.WeakValueDictionary()  # task id -> Task
        # the call's Future -> the Task it became
        self._by_future: weakref.WeakKeyDictionary[_Request, Task] = weakref.WeakKeyDictionary()
        self._tokens: Dict[Any, Task] = {}  # progress token of a 2025-11-25 call that became a task -> Task
        self._support: Dict[str, Any] | None = None  # tool name -> execution.taskSupport (2025-11-25), from tools/list
        self.push: bool | None = None  # False once the server showed it pushes no task status (2026-07-28)

    # -- the add-on's hooks (see _Extension) -------------------------------------------
    def declare(self, caps: _Json, modern: bool, newest: bool) -> None:
        if modern:
            caps.setdefault("extensions", {})[TASKS_EXTENSION] = {}
        elif newest:
            caps["tasks"] = {}

    def claim(self, fut: _Request, result: _Json) -> Callable[[_Request, _Json], Any] | None:
        if fut._finish is self.handle:
            return self.handle  # (Client.start: a Task for whatever came)
        if "task" not in result and result.get("resultType") != "task":
            return None  # the usual case, decided cheaply
        return self._followed if isinstance(fut._finish, _Follow) else _as_it_is

    def withdraw(self, fut: _Request, error: McpError) -> bool:
        with self._lock:
            task = self._by_future.get(fut)
        return task is not None and task._abandon(error)

    def notification(self, method: str, params: _Json) -> None:
        if method == "notifications/tools/list_changed":
            self._support = None
            return
        # progress (a 2025-11-25 task's keeps its call's token), or status: notifications/tasks/status
        # (2025-11-25; it also reaches on_notification) or notifications/tasks (2026-07-28)
        progress = method == "notifications/progress"
        with self._lock:
            if progress:
                task = self._tokens.get(params.get("progressToken"))
            else:
                task_id = params.get("taskId")
                task = self._by_id.get(task_id) if isinstance(task_id, str) else None
        if task is not None and progress:
            task._on_progress(params)
        elif task is not None:
            task._push(params)

    def listed(self, method: str, items: List[Any]) -> None:
        self._support = {t["name"]: t["execution"].get("taskSupport") for t in items if isinstance(t, dict)
                         and isinstance(t.get("name"), str) and isinstance(t.get("execution"), dict)}

    def closed(self, error: ConnectionClosed) -> None:
        """The connection is gone: every task being followed ends its wait at once."""
        with self._lock:
            tasks = list(self._by_id.values())
        for task in tasks:
            task._end(_closed_error(error, "task %s ended" % task.id))

    # -- what Client reaches through the session (Client.start, Client.task) -------------
    def attach(self, task_id: str, progress: _Progress | None) -> Task:
        """The task with this id, to follow again."""
        return Task(self._session, task_id, None, progress)

    # -- asking for a task (2025-11-25) ---------------------------------------------
    def ask(self, params: _Json, start: bool, ttl: float | None) -> None:
        """Ask for a task in a tools/call's ``params`` where the tool wants one, or allows one
        and the caller ``start``s one (Client.start); kept ``ttl`` seconds when given."""
        support = self.support(params["name"])
        if support == "required" or support == "optional" and start:
            keep = _timeout_arg(ttl, None, "ttl")
            params["task"] = {} if keep is None else {"ttl": int(keep * 1000)}

    def support(self, name: str) -> Any:
        """A tool's execution.taskSupport, listing the tools first when not yet known; None
        when the server takes no task-augmented tools/call (then we never ask for one)."""
        session = self._session
        if session.era.modern:
            return None  # (2026-07-28: the server decides)
        caps = session.server_capabilities.get("tasks")
        requests = caps.get("requests") if isinstance(caps, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        if not isinstance(tools, dict) or "call" not in tools:
            return None
        if self._support is None:  # (listed once; again after tools/list_changed)
            session.list_tools(True)
        return (self._support or {}).get(name)

    # -- tasks made ---------------------------------------------------------------
    def made(self, fut: _Request, result: object) -> Task | None:
        """The Task a tools/call result announces, or None for an ordinary result."""
        if fut.method != "tools/call" or not isinstance(result, dict):
            return None
        state: _Json
        if self._session.modern:
            if result.get("resultType") != "task":
                return None
            state = {k: v for k, v in result.items() if k not in ("resultType", "_meta")}
        else:
            announced = result.get("task")
            if "task" not in (fut._params or ()) or not isinstance(announced, dict):
                return None
            state = announced
        if not isinstance(state.get("taskId"), str) or not isinstance(state.get("status"), str):
            raise McpError("%s answered with resultType 'task' but no valid task (taskId, status): %s"
                           % (fut.method, _shorten(_dumps_for_humans(result), _SHOWN_CHARS)))
        task = Task(self._session, state["taskId"], state, fut._progress)
        with self._lock:
            self._by_future[fut] = task
            if fut._progress is not None and not self._session.modern:
                self._tokens[fut.id] = task  # 2025-11-25: progress keeps using the call's token
        return task

    def intercept(self, fut: _Request, msg: _Json) -> bool:
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
        _start_thread(self._follow, "mcp_min-task-%s" % fut.id, (task, fut), "follow a task",
                      self._session.inbox.threads)
        return True

    def _follow(self, task: Task, fut: _Request) -> None:
        outcome = task._follow_call(fut)
        fut._put(outcome if isinstance(outcome, BaseException) else _response(fut.id, outcome))

    finish = _Follow  # finish(value): the finish= of a Client's tools/call

    def _followed(self, fut: _Request, result: _Json) -> Any:
        """The claim's finish: the call's value once its task (if it is one) ended, followed here."""
        task = self.made(fut, result)
        if task is not None:
            outcome = task._follow_call(fut)
            if fut._progress is not None:
                self._session.inbox.events.drain(fut._deadline)  # its status reports are seen before its end
            if isinstance(outcome, BaseException):
                raise outcome
            result = outcome
        return self._session.finished(fut, result)

    def _handle(self, fut: _Request, result: _Json) -> Task:
        """Client.start()'s value: a Task for what the call answered (one already done when the
        server answered at once), which checks its outcome against the tool's outputSchema."""
        task = self.made(fut, result) or Task(self._session, None, None, fut._progress, result)
        task._tool = (fut._params or {}).get("name")  # (a tools/call always has params)
        return task

    # -- the tasks being followed (what the server pushes is about them) ----------------
    def add(self, task_id: str, task: Task) -> None:
        with self._lock:
            self._by_id[task_id] = task

    def forget(self, task: Task) -> None:
        with self._lock:
            for token in [k for k, t in self._tokens.items() if t is task]:
                del self._tokens[token]


class Task(object):
    """A tool call the server runs in the background (MCP tasks, both eras).

    ``call()`` and ``submit()`` follow such calls on their own; a Task is for
    work that outlives one call: ``client.start(...)`` makes one and
    ``client.task(task_id)`` re-attaches to one by id, e.g. from a later
    process (when the server keeps its tasks that long).

    ``id`` is the server's task id; None when the server answered at once
    instead of making a task (the result is then already there).
    """

    id: str | None

    def __init__(self, session: _Session, task_id: str | None, state: Dict[str, Any] | None = None,
                 progress: Callable[[Any, Any, Any], object] | None = None,
                 outcome: Dict[str, Any] | McpError | None = None) -> None:
        self._session = session
        self.id = task_id
        self._modern = session.modern
        self._progress = progress
        self._numbers: Tuple[Any, Any] = (0, None)  # the latest progress/total, for status messages
        self._reported: str | None = None
        self._cond = threading.Condition()
        self._state: _Json | None = None  # the latest task fields seen (poll or push)
        self._fresh = False  # a pushed state arrived that the loop has not looked at
        self._following = False
        self._outcome: _TaskEnd | None = outcome  # the final result dict, or the McpError the task ended with
        self._tool: str | None = None  # the tool's name when this process started it: its outputSchema checks it
        self._answered: Set[str] = set()  # input request keys already answered (2026-07-28)
        self._sub: Subscription | None = None
        self._tasks = session.extension(_Tasks)
        if task_id is not None:
            self._tasks.add(task_id, self)
        if state is not None:
            self._update(state)

    def __repr__(self) -> str:
        return "<mcp_min.Task %s %s>" % (self.id, (self._state or {}).get("status"))

    # -- public ---------------------------------------------------------------
    def status(self, *, timeout: float | None = _DEFAULT) -> Dict[str, Any]:
        """The task's state now (``tasks/get``): a dict with ``status``
        (working, input_required, completed, failed, cancelled), ``statusMessage``,
        ``createdAt``, the suggested poll interval...  ``timeout`` as for ``Client.call``."""
        if self.id is None:
            return {"status": "failed" if isinstance(self._outcome, BaseException) else "completed"}
        wait = _timeout_arg(timeout, self._session.request_timeout)
        if wait == 0:
            raise RequestTimeout("no time left to ask for the status of task %s (timeout 0): nothing sent" % self.id)
        return dict(self._get(_deadline_after(wait)))

    def result(self, timeout: float | None = _DEFAULT) -> Any:
        """Wait for the outcome and return what ``call()`` would (ToolError when the tool
        failed, RequestError for a failed task, RequestCancelled for a cancelled one).

        While waiting, the task is followed: polled at the server's interval and its
        input requests answered with the client's callbacks.  ``timeout`` bounds this
        wait only (default: the client's timeout; None: no bound; 0 or less: the
        outcome only if already known, nothing sent); RequestTimeout then leaves the
        task running, to wait again or ``cancel()``."""
        wait = _timeout_arg(timeout, self._session.request_timeout)
        try:
            outcome = self._outcome
            if outcome is None and wait == 0:
                raise _Expired()
            if outcome is None:
                outcome = self._await(_deadline_after(wait))
        except _Expired:  # (so there was a wait: a number)
            raise RequestTimeout("task %s did not end within %.3g s (it goes on)" % (self.id, wait or 0.0))
        if isinstance(outcome, BaseException):
            raise outcome
        self._session.extensions.check("tools/call", {"name": self._tool}, outcome)  # (OutputValidationError)
        return _tool_value(outcome)

    def cancel(self) -> bool:
        """Cancel the task (``tasks/cancel``); ``result()`` then raises RequestCancelled.
        Returns False when the server says it had already ended."""
        if self.id is None:
            return False
        return self._abandon(RequestCancelled("task %s was cancelled by the client" % self.id), strict=True)

    # -- following ------------------------------------------------------------
    def _follow_call(self, fut: _Request) -> _TaskEnd:
        """Follow the task a tool call became, to its outcome (a result dict or an McpError);
        at the call's deadline, or on a failure of ours, the task is cancelled.  With
        reset_on_progress, the task's status changes (which reach its progress callback, the
        clock) move the call's deadline on."""
        clock = fut._progress if isinstance(fut._progress, _ProgressClock) else None
        if clock is not None:
            clock.following = fut
            clock.tick(fut)  # (becoming a task was progress)
        outcome: McpError
        try:
            while True:
                try:
                    return self._await(fut._deadline)
                except _Expired:
                    if _expired(fut._deadline):
                        raise
                    # postponed meanwhile (reset_on_progress): follow on
        except _Expired:  # (so the call had a deadline, and a timeout)
            outcome = RequestTimeout("no outcome of %s (task %s) within %.3g s; task cancelled"
                                     % (fut.method, self.id, fut._timeout or 0.0))
        except ConnectionClosed as e:
            return e
        except McpError as e:
            outcome = e  # (input we cannot give...): nobody will follow the task any more
        except Exception as e:  # never leave the caller waiting
            _log.exception("following task %s failed", self.id)
            outcome = McpError("following task %s failed: %r" % (self.id, e))
        finally:
            if clock is not None:
                clock.following = None  # no cycle (future -> clock -> future) outlives the call
        self._abandon(outcome, force=True)
        ended = self._outcome
        assert ended is not None  # _abandon(force=True) ended the task, unless it had ended already
        return ended

    def _await(self, deadline: float | None) -> _TaskEnd:
        """The outcome, following the task unless another thread already does (then wait for
        it); _Expired at ``deadline`` (None: none)."""
        with self._cond:
            while self._outcome is None and self._following:
                if _expired(deadline):
                    raise _Expired()
                self._cond.wait(_remaining(deadline))
            if self._outcome is not None:
                return self._outcome
            self._following = True
        try:
            return self._drive(deadline)
        finally:
            with self._cond:
                self._following = False
                self._cond.notify_all()

    def _drive(self, deadline: float | None) -> _TaskEnd:
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
                    outcome = self._step(state, deadline)
                    if outcome is not None:
                        return self._end(outcome)
                    wait = self._interval(state, backoff)
                    backoff = min(backoff * 2, TASK_POLL_BACKOFF)
                    left = _remaining(deadline)
                    with self._cond:
                        if not self._fresh and self._outcome is None and not _expired(deadline):
                            self._cond.wait(wait if left is None else min(wait, left))
                        if self._fresh or self._outcome is not None:
                            continue  # a pushed state: look at it before polling
                    self._check_push()
                if _expired(deadline):
                    raise _Expired()
                self._get(deadline)
        except RequestTimeout:
            if _expired(deadline):  # a request cut short by the deadline itself
                raise _Expired()
            raise
        finally:
            if self._sub is not None:
                self._sub.close()
                self._sub = None

    def _interval(self, state: _Json, backoff: float) -> float:
        hint = state.get("pollIntervalMs" if self._modern else "pollInterval")
        if isinstance(hint, (int, float)) and not isinstance(hint, bool) and hint == hint:
            return min(max(hint / 1000.0, TASK_POLL_FLOOR), TASK_POLL_CEILING)
        return backoff

    def _step(self, state: _Json, deadline: float | None) -> _TaskEnd | None:
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
                self._give_input(state.get("inputRequests"), deadline)
                return None
        elif status in ("completed", "failed", "input_required"):
            # tasks/result gives the outcome; while input is required it also brings the
            # server's requests (answered by the session's callbacks) and waits for the end.
            try:
                outcome: _Json = self._session.request("tasks/result", {"taskId": self.id}, self._timeout(
                    deadline, bounded=status != "input_required"))
                return outcome
            except RequestError as e:
                return type(e)(e.code, e.message, e.data, "tools/call")
        if status in ("working", "input_required"):
            return None
        return McpError("task %s has an unknown status %r" % (self.id, status))

    def _give_input(self, requests: object, deadline: float | None) -> None:
        """Answer the input requests not answered yet, with tasks/update (2026-07-28)."""
        if not isinstance(requests, dict):
            return
        responses: _Json = {}
        for key, ask in requests.items():
            if key in self._answered:  # (the server may list it until it has taken our answer)
                continue
            responses[key] = self._session.inbox.give_input("task %s" % self.id, ask)
        if responses:
            self._request("tasks/update", {"taskId": self.id, "inputResponses": responses}, deadline)
            self._answered.update(responses)

    def _get(self, deadline: float | None) -> _Json:
        result = self._request("tasks/get", {"taskId": self.id}, deadline)
        state = {k: v for k, v in result.items() if k not in ("resultType", "_meta")}
        if not isinstance(state.get("status"), str):
            raise McpError("tasks/get answered without a status: %s"
                           % _shorten(_dumps_for_humans(result), _EXCERPT_CHARS))
        self._update(state)
        return state

    def _request(self, method: str, params: _Json, deadline: float | None) -> Any:
        """One request about the task, with its own timeout (never past the deadline)."""
        return self._session.request(method, params, self._timeout(deadline))

    def _timeout(self, deadline: float | None, bounded: bool = True) -> float | None:
        """A request's timeout while following: what is left before ``deadline`` (None: no
        deadline), and when ``bounded`` no more than the client's timeout."""
        left = _remaining(deadline)
        ours = self._session.timeout if bounded else None
        if left is None:
            return ours
        left = max(left, _LEAST_TIMEOUT)  # (past it, the request times out at once; _drive reports _Expired)
        return left if ours is None else min(ours, left)

    # -- status -----------------------------------------------------------------
    def _update(self, state: _Json) -> None:
        with self._cond:
            old = self._state
            if old is not None and (old.get("status") in _TERMINAL and state.get("status") not in _TERMINAL
                                    or _older(state.get("lastUpdatedAt"), old.get("lastUpdatedAt"))):
                return  # a stale report (polls and pushes cross): an ended task stays ended
            self._state = state
        self._report(state)

    def _push(self, params: _Json) -> None:
        """notifications/tasks/status (2025-11-25) or notifications/tasks (2026-07-28)."""
        state = {k: v for k, v in params.items() if k != "_meta"}
        if not isinstance(state.get("status"), str):
            return
        self._update(state)
        with self._cond:
            self._fresh = True
            self._cond.notify_all()

    def _report(self, state: _Json) -> None:
        """Status changes go to the call's progress callback: (latest progress, total, message)."""
        text = "task %s" % state.get("status")
        if state.get("statusMessage"):
            text += ": %s" % state["statusMessage"]
        if self._progress is not None and text != self._reported:
            self._reported = text
            self._session.inbox.events.put(self._progress, self._numbers[0], self._numbers[1], text)

    def _on_progress(self, params: _Json) -> None:
        self._numbers = (params.get("progress"), params.get("total"))
        if self._progress is not None:  # (always: only a call with a progress callback has its token kept)
            self._session.inbox.events.put(self._progress, params.get("progress"), params.get("total"),
                                           params.get("message"))

    def _listen(self) -> None:
        """Ask for pushed status (2026-07-28) where the server has the extension; polling goes on."""
        session = self._session
        ext = session.server_capabilities.get("extensions")
        if self._tasks.push is False or not isinstance(ext, dict) or TASKS_EXTENSION not in ext:
            return
        sub = Subscription(session, None, False, False, False, ())
        try:
            session.listen(sub, {"taskIds": [self.id]})
        except McpError as e:
            _log.debug("no task status stream: %s", e)
            return
        self._sub = sub

    def _check_push(self) -> None:
        """Stop listening when the server does not push this task's status (and stop asking)."""
        sub = self._sub
        if sub is None:
            return
        ack = sub.acknowledged
        if sub.ended.is_set() or (ack is not None and self.id not in (
                ack.get("taskIds") or () if isinstance(ack, dict) else ())):
            self._tasks.push = False
            sub.close()
            self._sub = None

    # -- ending -----------------------------------------------------------------
    def _end(self, outcome: _TaskEnd) -> _TaskEnd:
        with self._cond:
            if self._outcome is None:
                self._outcome = outcome
            ended = self._outcome  # (the first outcome stays)
            self._cond.notify_all()
        self._tasks.forget(self)
        return ended

    def _abandon(self, error: McpError, strict: bool = False, force: bool = False) -> bool:
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


_EXTENSIONS.append(_Tasks)
_CAPABILITY_OF["tasks/"] = "tasks"  # a -32601 to tasks/* from a server without them says so


# ---------------------------------------------------------------------------
# Groups: every server of an mcpServers configuration at once (an add-on over Client)
# ---------------------------------------------------------------------------

# -- the one reader of server configurations (mcpServers files): Group and the CLI both use it

if TYPE_CHECKING:
    from typing import Match

    _ServerArg = Union[str, List[str]]  # a server as Client takes it: an http(s) URL or an argv list
    _Item = TypeVar("_Item")
    _Done = TypeVar("_Done")


class _UsageError(ValueError):
    """A bad command line or server configuration (the CLI's exit status 2); about a
    configuration, its message names the file and the entry."""


_HTTP_TYPES = ("http", "sse", "streamable-http", "streamablehttp", "streamable_http")
_JSONC = (r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', r'("(?:\\.|[^"\\])*")|,(?=\s*[]}])')  # comments; trailing commas


def _a_json(value: object) -> str:
    kind = _json_type(value) or type(value).__name__
    return kind if kind == "null" else ("an " if kind[0] in "aeiou" else "a ") + kind


def _read_servers_file(path: str) -> Any:
    """The JSON document in ``path``: UTF-8 with or without the BOM Windows editors write; JSON
    with comments and trailing commas (VS Code's files) too."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except (OSError, ValueError) as e:
        raise _UsageError("cannot read %s: %s" % (path, e))
    if not text.strip():
        raise _UsageError("cannot read %s: the file is empty" % (path,))
    try:
        return json.loads(text)
    except ValueError as e:
        error = e
    for pattern in _JSONC:
        text = re.sub(pattern, lambda m: m.group(1) or "", text, flags=re.S)
    try:
        return json.loads(text)
    except ValueError:
        raise _UsageError("cannot read %s: not JSON: %s" % (path, error))


def _server_table(doc: object, where: str, bare: bool = False) -> Dict[str, Tuple[str, Any]]:
    """{name: (its key, entry)} of a configuration document: its ``mcpServers`` table, else VS
    Code's ``servers``, and in ~/.claude.json the table of this directory's project too.  A
    document with neither is the table itself with ``bare`` (a file given by name), else one
    without servers (a host's settings file)."""
    if not isinstance(doc, dict):
        raise _UsageError("%s: the top level must be an object with an mcpServers object (name -> entry), not %s"
                          % (where, _a_json(doc)))
    key = "mcpServers" if "mcpServers" in doc else "servers"
    tables = [(key, doc[key])] if key in doc else []
    projects = doc.get("projects") if os.path.basename(where) == ".claude.json" else None
    if isinstance(projects, dict) and isinstance(projects.get(os.getcwd()), dict):
        tables.append(("projects.%s.mcpServers" % os.getcwd(), projects[os.getcwd()].get("mcpServers") or {}))
    out: Dict[str, Tuple[str, Any]] = {}
    for table_key, table in tables or ([("", doc)] if bare else []):
        if not isinstance(table, dict):
            raise _UsageError("%s: %s must be an object (name -> entry), not %s" % (where, table_key, _a_json(table)))
        for name, entry in table.items():
            out.setdefault(name, ("%s.%s" % (table_key, name) if table_key else name, entry))
    return out


def _expand(value: str, where: str, ask: Callable[[str, str], str] | None = None) -> str:
    """${env:NAME}, ${NAME}, ${NAME:-default}, ${userHome}, ${workspaceFolder} in a configuration
    value; ${input:ID} only through ``ask(ID, where)`` (the CLI asks on the terminal)."""
    def one(match: Match[str]) -> str:
        body = match.group(1)
        if body == "userHome":
            return os.path.expanduser("~")
        if body in ("workspaceFolder", "workspaceRoot"):
            return os.getcwd()
        if body.startswith("input:"):
            if not callable(ask):
                raise _UsageError("%s uses ${%s}, which only the command line asks for" % (where, body))
            return ask(body[6:], where)
        name, sep, default = body[4:].partition(":-") if body.startswith("env:") else body.partition(":-")
        if name in os.environ:
            return os.environ[name]
        if sep:
            return default
        raise _UsageError("%s uses ${%s}, but %s is not set" % (where, body, name))
    return re.sub(r"\$\{([^}]+)\}", one, value)


def _server_entry(entry: object, where: str, expand: Callable[[str, str], str] | None = None
                  ) -> Tuple[_ServerArg | None, Dict[str, Any]]:
    """Client's arguments for one server entry: (server, options), the server an argv list or
    an http(s) URL, options the entry's own ``env`` and ``cwd`` (stdio) or ``headers`` (HTTP);
    (None, {}) for an entry marked ``"disabled": true``, which is read no further.  ``where``
    names the entry in errors ("FILE: mcpServers.NAME"); ``expand(text, where)`` resolves each
    value (default: _expand, without ${input:}).  A bad entry is a _UsageError naming the key."""
    expand = expand or _expand
    if not isinstance(entry, dict):
        raise _UsageError("%s must be an object with a command or a url, not %s" % (where, _a_json(entry)))
    if not isinstance(entry.get("disabled", False), bool):
        raise _UsageError("%s.disabled must be true or false, not %s" % (where, _a_json(entry["disabled"])))
    if entry.get("disabled"):
        return None, {}

    def text(key: str, value: object) -> str:
        if not isinstance(value, str):
            raise _UsageError("%s.%s must be a string, not %s" % (where, key, _a_json(value)))
        return expand(value, "%s.%s" % (where, key))

    def strings(key: str) -> Dict[str, str]:
        value = entry.get(key)
        if value is not None and not isinstance(value, dict):
            raise _UsageError("%s.%s must be an object (name -> string), not %s" % (where, key, _a_json(value)))
        return {k: text("%s.%s" % (key, k), v) for k, v in (value or {}).items()}

    kind = entry.get("type", entry.get("transport"))
    if kind is not None and not isinstance(kind, str):
        raise _UsageError("%s.type must be a string, not %s" % (where, _a_json(kind)))
    url_key = next((k for k in ("url", "httpUrl", "serverUrl") if entry.get(k) is not None), None)
    if url_key is not None or str(kind).lower() in _HTTP_TYPES:
        if url_key is None:
            raise _UsageError("%s has type %s but no url" % (where, kind))
        url = text(url_key, entry[url_key])
        if url.split("://", 1)[0].lower() not in ("http", "https"):
            raise _UsageError("%s.%s: %s is not an http:// or https:// URL" % (where, url_key, url))
        headers = strings("headers")
        return url, {"headers": headers} if headers else {}
    command, args = entry.get("command"), entry.get("args")
    if command is None:
        raise _UsageError("%s has neither a command nor a url" % (where,))
    if isinstance(command, list) and command:
        argv = [text("command[%d]" % i, word) for i, word in enumerate(command)]
    elif isinstance(command, str) and command.strip():
        argv = [text("command", command)]
    else:
        raise _UsageError("%s.command must be a non-empty string or list of strings, not %s"
                          % (where, _a_json(command)))
    if args is not None and not isinstance(args, list):
        raise _UsageError("%s.args must be a list of strings, not %s" % (where, _a_json(args)))
    if isinstance(command, str) and any(c.isspace() for c in argv[0].strip()) and not os.path.exists(argv[0]):
        import shutil  # "npx -y server" in one string: what a shell would have run, when its first
        try:  # word is a program (else the name as written, and its own error)
            words = _split_command(argv[0])
        except ValueError:  # (an unclosed quote)
            words = []
        if words and (shutil.which(words[0]) or os.path.exists(words[0])):
            argv = words
    argv += [text("args[%d]" % i, arg) for i, arg in enumerate(args or [])]
    options: Dict[str, Any] = {"env": strings("env")}
    if entry.get("cwd") is not None:
        options["cwd"] = text("cwd", entry["cwd"])
    return argv, {k: v for k, v in options.items() if v != {}}


def _in_parallel(items: Mapping[str, _Item], fn: Callable[[str, _Item], _Done], what: str
                 ) -> Tuple[Dict[str, _Done], Dict[str, Exception]]:
    """``fn(name, item)`` for every item at once, one thread each: (name -> value, name -> error)."""
    done: Dict[str, _Done] = {}
    failed: Dict[str, Exception] = {}

    def run(name: str, item: _Item) -> None:
        try:
            done[name] = fn(name, item)
        except Exception as e:  # one server's failure is that server's, never the group's
            failed[name] = e
    threads = []
    for name, item in items.items():
        try:
            threads.append(_start_thread(run, "mcp_min-group-%s" % name, (name, item), what))
        except ConnectionClosed as e:
            failed[name] = e
    for thread in threads:
        thread.join()  # each Client call is bounded by its own timeout
    return done, failed


class Group(object):
    """Every server of an ``mcpServers`` configuration, connected in parallel; their tools
    under ``"<server><separator><tool>"`` names.

    Args:
        config: ``{"mcpServers": {name: entry}}`` (VS Code's ``{"servers": ...}``, or just
            ``{name: entry}``), or the path of such a JSON file.  An entry is read as the CLI
            reads it (``_server_entry``): ``{"command", "args", "env", "cwd"}`` (stdio) or
            ``{"url", "headers"}`` (HTTP), ``${env:NAME}`` expanded; ``"disabled": true``
            leaves it out.  A file that cannot be read raises ValueError; a bad entry is that
            server's error.
        separator: between server and tool names (default ``"__"``: it keeps a namespaced name
            valid for the model providers, ``^[a-zA-Z0-9_-]{1,64}$``, as ``"."`` would not).  A
            server is found by the longest name that matches, so tool names may contain it too;
            a listed name that would so read as another server's gets a digest added (logged).
        options: Client options for every server (``timeout=``, ``inherit_env=``, ``auth=``...).

    ``clients`` maps each server that connected to its Client; ``errors`` maps the others
    (and any whose ``list_tools()`` failed) to the exception that stopped them.  One server
    failing never fails the rest.  ``close()`` closes them all at once.
    """

    def __init__(self, config: str | os.PathLike[str] | Mapping[str, Any], *, separator: str = "__",
                 **options: Any) -> None:
        if not isinstance(separator, str) or not separator:
            raise ValueError("separator must be a non-empty string, not %r" % (separator,))
        where = "the server configuration"
        if isinstance(config, (str, os.PathLike)):
            where = os.fspath(config)
            config = _read_servers_file(where)
        servers: Dict[str, Tuple[_ServerArg, Dict[str, Any]]] = {}
        failed: Dict[str, Exception] = {}
        for name, (key, entry) in _server_table(config, where, bare=True).items():
            try:
                server, own = _server_entry(entry, "%s: %s" % (where, key))
            except ValueError as e:  # that server's error, never the group's
                failed[name] = e
                continue
            if server is not None:  # (not disabled)
                servers[name] = server, {k: dict(options.get(k) or {}, **v) if isinstance(v, dict) else v
                                         for k, v in own.items()}
        self.separator = separator
        # "tools"/"resources"/"prompts" -> a listed name _prefix() would misread -> (server, own name)
        self._moved: Dict[str, Dict[str, Tuple[str, str]]] = {}
        clients, errors = _in_parallel(servers, lambda name, s: Client(s[0], **dict(options, **s[1])),
                                       "connect to a server")
        errors.update(failed)
        self.clients: Dict[str, Client] = dict(sorted(clients.items()))
        self.errors: Dict[str, Exception] = dict(sorted(errors.items()))

    def list_tools(self, refresh: bool = False) -> List[Dict[str, Any]]:
        """Every connected server's tools (asked in parallel), each a copy named
        ``server + separator + tool``; a server that fails here moves to ``errors``."""
        return self._list_all(None, lambda c: c.list_tools(refresh), "name")

    def list_resources(self, refresh: bool = False) -> List[Dict[str, Any]]:
        """Every resource of the servers that offer resources, each a copy whose ``uri`` is
        ``server + separator + uri`` (what read_resource takes); a failing server moves to ``errors``."""
        return self._list_all("resources", lambda c: c.list_resources(refresh), "uri")

    def list_prompts(self, refresh: bool = False) -> List[Dict[str, Any]]:
        """Every prompt of the servers that offer prompts, each a copy named ``server + separator +
        prompt``; a failing server moves to ``errors``."""
        return self._list_all("prompts", lambda c: c.list_prompts(refresh), "name")

    def _list_all(self, capability: str | None, list_one: Callable[[Client], List[_Json]], key: str) -> List[_Json]:
        """One list from every server (that declares ``capability``), asked in parallel, ``key``
        of each item namespaced."""
        offering = {name: c for name, c in self.clients.items()
                    if capability is None or capability in c.server_capabilities}
        listed, errors = _in_parallel(offering, lambda name, c: list_one(c), "list a server's %s" % (
            capability or "tools"))
        for name, error in sorted(errors.items()):
            _log.warning("server %r of the group failed: %s", name, error)
            self.errors[name] = error
        kind = capability or "tools"
        found = [(name, item, str(item.get(key))) for name, server_items in sorted(listed.items())
                 for item in server_items if isinstance(item, dict)]
        # A name that reads back as its own (server, name) keeps it; every other one ("a" + "b__c"
        # reads as "a__b" + "c") is renamed: its full name, "_" and a digest of (server, name),
        # with a counter while that is taken (by a kept name or an earlier renamed one), in one
        # fixed order, so no two names are ever alike and each reaches its own tool.
        taken = {name + self.separator + own for name, _, own in found
                 if self._prefix(name + self.separator + own) == (name, own)}
        before = self._moved.get(kind, {})
        moved: Dict[str, Tuple[str, str]] = {}
        items: List[_Json] = []
        import hashlib
        for name, item, own in found:
            full = name + self.separator + own
            if full in taken and self._prefix(full) == (name, own):
                items.append(dict(item, **{key: full}))
                continue
            digest = hashlib.sha1(json.dumps([name, own]).encode("utf-8", "surrogatepass")).hexdigest()[:8]
            renamed = "%s_%s" % (full, digest)
            extra = 1
            while renamed in taken:
                extra += 1
                renamed = "%s_%s_%d" % (full, digest, extra)
            taken.add(renamed)
            if before.get(renamed) != (name, own):
                other, theirs = self._prefix(full)
                _log.warning("%s %r of server %r would be %r, which names %r of server %r: listed as %r",
                             key, own, name, full, theirs, other, renamed)
            moved[renamed] = name, own
            items.append(dict(item, **{key: renamed}))
        self._moved[kind] = moved
        return items

    def client(self, name: str) -> Client:
        """The Client of the server named ``name`` (McpError if it did not connect)."""
        if name in self.clients:
            return self.clients[name]
        why = self.errors.get(name)
        raise McpError("no connected server %r%s (connected: %s)" % (
            name, ": %s" % why if why is not None else "", ", ".join(self.clients) or "none"))

    def call(self, name: str, arguments: Mapping[str, Any] | None = None, /, *, timeout: float | None = _DEFAULT,
             progress: Callable[..., object] | None = None, **kwargs: Any) -> Any:
        """Call ``"server__tool"`` (with the group's separator); as Client.call otherwise."""
        server, tool = self._split(name)
        return self.client(server).call(tool, arguments, timeout=timeout, progress=progress, **kwargs)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, /, *,
                  timeout: float | None = _DEFAULT, progress: Callable[..., object] | None = None,
                  **kwargs: Any) -> Dict[str, Any]:
        """Call ``"server__tool"`` and return the raw CallToolResult dict; as Client.call_tool otherwise."""
        server, tool = self._split(name)
        return self.client(server).call_tool(tool, arguments, timeout=timeout, progress=progress, **kwargs)

    def submit(self, name: str, arguments: Mapping[str, Any] | None = None, /, *, timeout: float | None = _DEFAULT,
               progress: Callable[..., object] | None = None, **kwargs: Any) -> Future:
        """Start ``"server__tool"`` and return its Future at once; as Client.submit otherwise."""
        server, tool = self._split(name)
        return self.client(server).submit(tool, arguments, timeout=timeout, progress=progress, **kwargs)

    def read_resource(self, uri: str, *, timeout: float | None = _DEFAULT, refresh: bool = False) -> Dict[str, Any]:
        """Read ``"server__uri"`` (a ``uri`` of list_resources()); as Client.read_resource otherwise."""
        server, own = self._split(uri, "resources")
        return self.client(server).read_resource(own, timeout=timeout, refresh=refresh)

    def get_prompt(self, name: str, arguments: Mapping[str, Any] | None = None, /, *,
                   timeout: float | None = _DEFAULT, **kwargs: Any) -> Dict[str, Any]:
        """Get ``"server__prompt"``; as Client.get_prompt otherwise."""
        server, prompt = self._split(name, "prompts")
        return self.client(server).get_prompt(prompt, arguments, timeout=timeout, **kwargs)

    def tools_for(self, provider: str, *, strict: bool = False) -> List[Dict[str, Any]]:
        """Every connected server's tools (namespaced) as Client.tools_for gives them; a server
        that fails to list them moves to ``errors`` (and the log), the others' tools stay."""
        return _tools_for(self, provider, strict)

    def run_tool_calls(self, calls: Any, provider: str, *, timeout: float | None = _DEFAULT
                       ) -> List[Dict[str, Any]]:
        """As Client.run_tool_calls, each call sent to its server; a call to a server that is
        gone is answered with that server's error."""
        return _run_tool_calls(self, calls, provider, _timeout_arg(timeout, _DEFAULT))

    def _split(self, name: str, kind: str = "tools") -> Tuple[str, str]:
        if not isinstance(name, str):
            raise ValueError("a tool name is a string, not %r" % (name,))
        return self._moved.get(kind, {}).get(name) or self._prefix(name)

    def _prefix(self, name: str) -> Tuple[str, str]:
        """(server, its own name) of a namespaced name: the longest server name that prefixes it."""
        known = sorted(set(self.clients) | set(self.errors), key=len, reverse=True)
        for server in known:
            if name.startswith(server + self.separator):
                return server, name[len(server) + len(self.separator):]
        raise McpError("%r names no server of this group (servers: %s; separator %r)"
                       % (name, ", ".join(sorted(known)) or "none", self.separator))

    def close(self) -> None:
        """Close every client at once (idempotent)."""
        _in_parallel(self.clients, lambda name, c: c.close(), "close a server")

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<mcp_min.Group %d connected, %d failed>" % (len(self.clients), len(self.errors))


# ---------------------------------------------------------------------------
# Model tools: the servers' tools in a model provider's format, and the calls the model
# makes run (an add-on over Client and Group: each has two thin methods into it).
#   tools_for(provider) is the tools= list of the provider's API; run_tool_calls(calls,
#   provider) runs what the model asked for and returns what to append to the conversation.
#   Providers: "openai" (Chat Completions), "openai-responses" (the Responses API),
#   "anthropic" (Messages).  Their function names follow one rule, ^[a-zA-Z0-9_-]{1,64}$,
#   so one mapping of names serves all three.  Nothing here runs at import.
# ---------------------------------------------------------------------------

MODEL_PROVIDERS = ("openai", "openai-responses", "anthropic")
MODEL_NAME_CHARS = 64  # the longest function name all three APIs accept.
_MODEL_NAME = r"[a-zA-Z0-9_-]{1,64}\Z"
_NAME_DIGEST_CHARS = 8  # hex digits of the real name's SHA-1 that set a changed name apart (2**32 values).
STRICT_MAX_DEPTH = 10  # nested object and array levels OpenAI's strict mode accepts in a schema.
# OpenAI strict mode: the keywords it reads beside "type", by type; the string formats it knows.
_STRICT_KEYWORDS = {"string": ("pattern", "format"), "array": ("items", "minItems", "maxItems"),
                    "object": ("properties", "required", "additionalProperties"),
                    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")}
_STRICT_FORMATS = ("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")
# Keywords whose meaning strict mode cannot carry (dropping them would let the model build calls the
# tool refuses by design, not just by a bound): such a tool is sent without strict.
_STRICT_REFUSED = ("allOf", "not", "if", "then", "else", "dependentSchemas", "dependentRequired", "dependencies",
                   "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems",
                   "prefixItems", "contains")
# At the top of a tool's schema both vendors want a plain object: no combinators, no enum.
_TOP_REFUSED = ("anyOf", "oneOf", "allOf", "not", "if", "then", "else", "enum", "const")
_MODEL_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")  # what Anthropic and Responses show
# A Client or Group -> the tools of its last tools_for(), by the names the model saw (run_tool_calls maps back).
_MODEL_TOOLS: weakref.WeakKeyDictionary[object, _ModelTools] = weakref.WeakKeyDictionary()


def _model_names(names: Iterable[str]) -> Dict[str, str]:
    """Real tool name -> a name the providers accept, one to one.  A valid name stays as it is;
    another becomes its ASCII letters, digits, ``_`` and ``-`` (others as ``_``), and when that is
    taken or too long, a cut of it plus ``_`` and the first hex digits of the real name's SHA-1.
    Decided in one order (valid names first, then by name), so the same set of names always
    maps the same way, and a name keeps its mapping unless a clash forces the digest."""
    import hashlib
    import unicodedata
    wanted: Dict[str, Tuple[str, str]] = {}
    for name in set(names):
        if re.match(_MODEL_NAME, name):
            wanted[name] = (name, name)
            continue
        ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
        plain = re.sub(r"[^a-zA-Z0-9_-]", "_", ascii_name) or "tool"
        digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:_NAME_DIGEST_CHARS]
        wanted[name] = (plain, plain[:MODEL_NAME_CHARS - _NAME_DIGEST_CHARS - 1] + "_" + digest)
    out: Dict[str, str] = {}
    taken: Set[str] = set()
    for name in sorted(wanted, key=lambda n: (wanted[n][0] != n, n)):
        plain, hashed = wanted[name]
        choice = plain if len(plain) <= MODEL_NAME_CHARS and plain not in taken else hashed
        extra = 1
        while choice in taken:  # (two digests alike: a numbered suffix, in the same fixed order)
            extra += 1
            choice = hashed[:MODEL_NAME_CHARS - len(str(extra)) - 1] + "_%d" % extra
        taken.add(choice)
        out[name] = choice
    return out


def _top_schema(schema: Any) -> _Json:
    """A tool's input schema as both vendors take it (_plain_node below); at the top an object
    with properties (OpenAI refuses an object schema without them), no combinator or enum
    there: an anyOf/oneOf of objects there is merged into one (_merged_top)."""
    return _merged_top(schema)[0]


def _merged_top(schema: Any) -> Tuple[_Json, bool]:
    """(the top as _top_schema gives it, whether it means what ``schema`` means there).  The top's
    combinators become one object (_top_parts): allOf branches' properties and required added
    (required: any branch's); anyOf/oneOf branches' properties (one that branches give
    differently, an anyOf of them), required where every branch requires it; nested ones
    flattened the same way.  Exact when nothing was loosened: anyOf/oneOf branches all alike,
    allOf branches plain objects that do not give a property differently.  (Other top
    keywords, not, if, enum..., are dropped: a bound, no property, lost.)"""
    top = _plain_node(dict(schema) if isinstance(schema, dict) else {}, 0)
    properties, required, exact = _top_parts(top, top, 0)
    merged = any(key in top for key in ("allOf", "anyOf", "oneOf"))
    for key in _TOP_REFUSED:
        dropped = top.pop(key, None)
        if key in ("if", "then", "else") and isinstance(dropped, dict) and dropped.get("properties"):
            exact = False  # (properties that only a conditional names: lost, so not strict)
    top["type"] = "object"
    top["properties"] = properties
    if merged and any(name in required for name in properties):
        top["required"] = [name for name in properties if name in required]
    return top, exact


_TOP_PLAIN_KEYS = ("type", "properties", "required", "description", "title", "$comment")


def _top_parts(node: Any, root: _Json, depth: int) -> Tuple[Dict[str, Any], Set[str], bool]:
    """(properties, required names, exact) of an object schema ``node`` with its allOf/anyOf/oneOf
    merged in (see _merged_top); a local $ref is followed."""
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        node = _local_ref(root, node["$ref"])
    if not isinstance(node, dict) or depth > SCHEMA_MAX_DEPTH:
        return {}, set(), node is True or node == {}
    named = node.get("properties")
    properties: Dict[str, Any] = dict(named) if isinstance(named, dict) else {}
    required = {r for r in node.get("required") or () if isinstance(r, str)}
    exact = True
    all_of = node.get("allOf")
    if isinstance(all_of, list):
        for branch in all_of:
            props, need, same = _top_parts(branch, root, depth + 1)
            exact = exact and same and isinstance(branch, dict) and all(k in _TOP_PLAIN_KEYS for k in branch)
            for name, sub in props.items():
                if name in properties and properties[name] != sub:
                    exact = False
                    properties[name] = {"allOf": [properties[name], sub]}
                else:
                    properties.setdefault(name, sub)
            required |= need
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if not isinstance(branches, list) or not branches:
            continue
        parts = [_top_parts(b, root, depth + 1) for b in branches]
        exact = exact and all(p == parts[0] for p in parts) and all(p[2] for p in parts)
        given: Dict[str, List[Any]] = {}
        for props, _, _ in parts:
            for name, sub in props.items():
                if sub not in given.setdefault(name, []):
                    given[name].append(sub)
        for name, subs in given.items():
            sub = subs[0] if len(subs) == 1 else {"anyOf": subs}
            if name in properties and properties[name] != sub:
                exact = False
                properties[name] = {"allOf": [properties[name], sub]}
            else:
                properties.setdefault(name, sub)
        required |= set.intersection(*[p[1] for p in parts])
    return properties, required, exact


def _plain_node(node: Any, depth: int) -> Any:
    """``node`` in 2020-12 spelling (Anthropic reads input_schema as 2020-12): draft-04's boolean
    ``exclusiveMinimum``/``exclusiveMaximum`` as the bound itself, an array-form ``items`` (a
    tuple) as ``prefixItems`` (``additionalItems`` as ``items``); and every array with
    ``items`` (OpenAI refuses an array schema without it, strict or not)."""
    if not isinstance(node, dict) or depth > SCHEMA_MAX_DEPTH:
        return node
    out = dict(node)
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if isinstance(out.get(exclusive), bool) and out.pop(exclusive) and bound in out:
            out[exclusive] = out.pop(bound)
    extra = out.pop("additionalItems", None)
    if isinstance(out.get("items"), list):
        out["prefixItems"] = out.pop("items")
        if extra is not None:
            out["items"] = extra
    kinds = out.get("type")
    if "array" in (kinds if isinstance(kinds, list) else [kinds]) and "items" not in out:
        out["items"] = {}
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {k: _plain_node(v, depth + 1) for k, v in out[key].items()}
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_plain_node(v, depth + 1) for v in out[key]]
    for key in _SUBSCHEMA:
        if key in out:
            out[key] = _plain_node(out[key], depth + 1)
    return out


def _strict_schema(schema: Any) -> Tuple[_Json, str | None]:
    """(the schema under OpenAI's strict-mode rules, None) or (the plain schema, why strict mode
    cannot carry it).  Every object gets ``additionalProperties: false`` and all its properties
    required, the optional ones made nullable (what the model then sends as null,
    run_tool_calls drops); ``oneOf`` becomes ``anyOf``; bounds strict mode does not read
    (lengths, uniqueness, unknown formats) are dropped (the arguments are still checked against
    the tool's own schema before the call), a ``default`` goes into the description; what
    changes the shape of a valid value (``allOf``, ``not``, open maps...) makes the tool not
    strict-able."""
    top, exact = _merged_top(schema)
    if not exact:
        return top, "its top is an anyOf/oneOf of unlike objects or an allOf that merges only loosely (merged, without strict)"
    defs: Dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = top.pop(key, None)
        if isinstance(found, dict):
            defs.update(found)
    try:
        out = _strict_node(top, 0, defs)
        if defs:
            out["$defs"] = {k: _strict_node(v, 1, defs) for k, v in defs.items()}
    except ValueError as e:
        return _top_schema(schema), str(e)
    return out, None


def _strict_node(node: Any, depth: int, defs: Mapping[str, Any], inlined: FrozenSet[str] = frozenset()) -> _Json:
    """One part of a schema under strict mode (``depth`` 0: the top); ``defs``: the top's $defs,
    all a $ref may name; ``inlined``: the $defs being inlined around it.  ValueError says why
    strict mode cannot carry it."""
    top = depth == 0
    if depth > STRICT_MAX_DEPTH:
        raise ValueError("nested deeper than %d levels" % STRICT_MAX_DEPTH)
    if not isinstance(node, dict):  # (true, false: any value, no value)
        raise ValueError("a schema that is %s, not an object" % _a_json(node))
    refused = [k for k in _STRICT_REFUSED if k in node]
    all_of = node.get("allOf")
    if refused == ["allOf"] and isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        return _strict_node(dict({k: v for k, v in node.items() if k != "allOf"}, **all_of[0]), depth, defs,
                            inlined)
    if not top:  # (below the top these change what a $ref means)
        refused += [k for k in ("$defs", "definitions", "$id", "$anchor", "$dynamicRef", "$dynamicAnchor")
                    if k in node]
    if refused:
        raise ValueError("it uses %s" % ", ".join(refused))
    out: _Json = {}
    description = node.get("description")
    if "default" in node:
        description = "%s%s(default: %s)" % (description or "", " " if description else "", _to_json(node["default"]))
    if isinstance(description, str):
        out["description"] = description
    ref = node.get("$ref")
    if isinstance(ref, str) and top:
        raise ValueError("its top is a $ref, not the object itself")
    if isinstance(ref, str):
        import urllib.parse  # (a URI fragment: percent-encoded)
        ref = ref.replace("#/definitions/", "#/$defs/", 1)
        name = urllib.parse.unquote(ref[8:]).replace("~1", "/").replace("~0", "~")
        if ref != "#" and not (ref.startswith("#/$defs/") and name in defs):
            raise ValueError("it refers to %s, outside the schema's $defs" % ref)
        if not out:
            return {"$ref": ref}
        # Strict mode takes a $ref alone: with a description beside it, the schema it names comes
        # inline, both descriptions kept (a $ref back into itself cannot be inlined).
        if ref == "#" or name in inlined:
            raise ValueError("a recursive $ref (%s) has keywords beside it" % ref)
        target = defs[name]
        if not isinstance(target, dict):
            raise ValueError("a schema that is %s, not an object" % _a_json(target))
        said = [d for d in (out["description"], target.get("description")) if isinstance(d, str) and d]
        return _strict_node(dict(target, description=" ".join(dict.fromkeys(said))), depth, defs,
                            inlined | {name})
    for key in ("enum", "const"):
        if key in node:
            out[key] = node[key]
    branches = node.get("anyOf", node.get("oneOf"))
    if isinstance(branches, list):
        out["anyOf"] = [_strict_node(b, depth + 1, defs, inlined) for b in branches]
    kinds = node.get("type")
    if kinds is None:
        if not out.keys() & {"enum", "const", "anyOf"}:
            raise ValueError("a part of it accepts any value (no type)")
        return out
    out["type"] = kinds
    for kind in kinds if isinstance(kinds, list) else [kinds]:
        for key in _STRICT_KEYWORDS.get("number" if kind == "integer" else kind, ()):
            if key in node:
                out[key] = node[key]
    if out.get("format") not in _STRICT_FORMATS:
        out.pop("format", None)
    if "items" in out:
        out["items"] = _strict_node(out["items"], depth + 1, defs, inlined)
    if "object" in (kinds if isinstance(kinds, list) else [kinds]):
        extra = node.get("additionalProperties", False)
        properties = node.get("properties") or {}
        if extra is not False or not properties and not top:
            raise ValueError("an object takes keys it does not name")
        required = node.get("required") or []
        out["properties"] = {name: _strict_node(sub, depth + 1, defs, inlined) if name in required
                             else _nullable(_strict_node(sub, depth + 1, defs, inlined))
                             for name, sub in properties.items()}
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def _nullable(schema: _Json) -> _Json:
    """``schema`` that also takes null: how strict mode spells an optional property."""
    if _allows_null(schema, None):
        return schema
    kinds = schema.get("type")
    if isinstance(kinds, (str, list)) and "enum" not in schema and "const" not in schema:
        return dict(schema, type=(kinds if isinstance(kinds, list) else [kinds]) + ["null"])
    if isinstance(schema.get("anyOf"), list) and len(schema) == 1:
        return {"anyOf": schema["anyOf"] + [{"type": "null"}]}
    description = {"description": schema["description"]} if "description" in schema else {}
    return dict(description, anyOf=[{k: v for k, v in schema.items() if k != "description"}, {"type": "null"}])


def _allows_null(schema: Any, root: _Json | None, depth: int = 0) -> bool:
    """Whether ``schema`` (in the document ``root``) accepts null, as far as its type, enum,
    const, anyOf/oneOf and local $ref say: what decides whether a strict-mode null is dropped.
    Without ``root`` a $ref is taken to refuse null."""
    if depth > SCHEMA_MAX_DEPTH:
        return True  # (a $ref loop: leave the null to the tool)
    if not isinstance(schema, dict):
        return schema is not False
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return root is not None and _allows_null(_local_ref(root, ref), root, depth + 1)
    kinds = schema.get("type")
    if kinds is not None and "null" not in (kinds if isinstance(kinds, list) else [kinds]):
        return False
    if "enum" in schema and (not isinstance(schema["enum"], list) or None not in schema["enum"]):
        return False
    if "const" in schema and schema["const"] is not None:
        return False
    branches = [b for k in ("anyOf", "oneOf") for b in schema.get(k) or () if isinstance(schema.get(k), list)]
    return not branches or any(_allows_null(b, root, depth + 1) for b in branches)


def _local_ref(root: _Json, ref: str) -> Any:
    """The part of ``root`` a ``#/...`` JSON pointer names; True (anything) when it names none."""
    if not ref.startswith("#"):
        return True
    node: Any = root
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part, True) if isinstance(node, dict) else True
    return node


def _drop_nulls(value: Any, schema: Any, root: _Json, depth: int = 0) -> Any:
    """``value`` without the nulls a strict-mode model sends for the optional properties it
    leaves out, where the tool's schema does not take null (nested objects and arrays too)."""
    if depth > SCHEMA_MAX_DEPTH or not isinstance(schema, dict):
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _drop_nulls(value, _local_ref(root, ref), root, depth + 1)
    branches = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(value, dict) and isinstance(branches, list):  # the first branch that names every key
        for branch in branches:
            if isinstance(branch, dict) and "$ref" in branch:
                branch = _local_ref(root, branch["$ref"])
            named = branch.get("properties") if isinstance(branch, dict) else None
            if isinstance(named, dict) and set(value) <= set(named):
                return _drop_nulls(value, branch, root, depth + 1)
    if isinstance(value, dict):
        found = schema.get("properties")
        properties: _Json = found if isinstance(found, dict) else {}
        return {k: _drop_nulls(v, properties.get(k), root, depth + 1) for k, v in value.items()
                if v is not None or k not in properties or _allows_null(properties[k], root)}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_drop_nulls(v, schema["items"], root, depth + 1) for v in value]
    return value


def _tool_entry(provider: str, name: str, tool: _Json, strict: bool) -> _Json:
    """One tool as ``provider``'s API takes it (only the keys it knows: the APIs refuse others).
    Strict mode is OpenAI's: Anthropic's strict tool use reads a subset of JSON Schema of its own,
    which this does not model, so for Anthropic the tools go plain, without ``strict``."""
    strict = strict and provider != "anthropic"
    if strict:
        schema, problem = _strict_schema(tool.get("inputSchema"))
        if problem is not None:
            _log.warning("tool %r goes to the model without strict mode: %s", tool.get("name"), problem)
            strict = False
    else:
        schema = _top_schema(tool.get("inputSchema"))
    description = tool.get("description")
    if not isinstance(description, str):
        description = tool.get("title") if isinstance(tool.get("title"), str) else None
    real = tool.get("name")
    if isinstance(real, str) and name != real and not any(c.isascii() and c.isalnum() for c in real):
        description = "%s%s%s" % (real, ": " if description else "", description or "")  # (named tool_<digest>)
    said = {"description": description} if description else {}
    if provider == "anthropic":
        return dict({"name": name}, **said, input_schema=schema, **({"strict": True} if strict else {}))
    if provider == "openai":
        return {"type": "function", "function": dict({"name": name}, **said, parameters=schema,
                                                     **({"strict": True} if strict else {}))}
    # The Responses API reads a function tool without "strict" as strict: say it either way.
    return dict({"type": "function", "name": name}, **said, parameters=schema, strict=strict)


def _check_provider(provider: object) -> str:
    if provider not in MODEL_PROVIDERS:
        raise ValueError("provider must be one of %s, not %r" % (", ".join(repr(p) for p in MODEL_PROVIDERS),
                                                                  provider))
    return str(provider)


class _ModelTools(object):
    """The tools a model was shown, by the name it was shown: (real name, tool, its input check)."""

    def __init__(self, tools: Iterable[Any]) -> None:
        listed = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        names = _model_names(t["name"] for t in listed)
        self.tools: Dict[str, Tuple[str, _Json]] = {names[t["name"]]: (t["name"], t) for t in listed}
        self.checks: Dict[str, _ValueCheck | None] = {}

    def find(self, name: str) -> Tuple[str, _Json] | None:
        found = self.tools.get(name)
        if found is None:  # (a model that echoes a real name the mapping changed: it means that tool)
            found = next((v for v in self.tools.values() if v[0] == name), None)
        return found

    def check(self, name: str, schema: Any) -> _ValueCheck | None:
        if name not in self.checks:
            try:
                self.checks[name] = _compile_schema(schema, what="the arguments of tool %r" % name)
            except (ValueError, TypeError, LookupError, ArithmeticError) as e:  # (_SchemaError too)
                _log.warning("not checking the arguments of tool %r: %s", name, e)
                self.checks[name] = None
        return self.checks[name]


def _tools_for(owner: Client | Group, provider: str, strict: bool) -> List[Dict[str, Any]]:
    """Client.tools_for and Group.tools_for."""
    provider = _check_provider(provider)
    table = _ModelTools(owner.list_tools())
    _MODEL_TOOLS[owner] = table
    return [_tool_entry(provider, name, tool, bool(strict)) for name, (_, tool) in table.tools.items()]


def _plain(value: Any) -> Any:
    """A provider SDK's object as the dicts and lists it dumps to (``model_dump()``, pydantic's)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, (dict, list)):
        return dump()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _model_calls(calls: Any, provider: str) -> List[Tuple[str, str, Any]]:
    """(call id, tool name, arguments as sent) of every tool call in ``calls``: whatever shape of
    the model's answer the caller has (see run_tool_calls).  ValueError for a shape that is none."""
    calls = _plain(calls)
    _same_provider(calls, provider)
    if isinstance(calls, dict) and ("function" in calls or calls.get("type") in ("function_call", "tool_use")):
        calls = [calls]  # (one call alone)
    if isinstance(calls, dict):
        if provider == "openai" and isinstance(calls.get("choices"), list) and calls["choices"]:
            calls = _plain(calls["choices"][0]).get("message") or {}
        key = {"openai": "tool_calls", "openai-responses": "output", "anthropic": "content"}[provider]
        calls = _plain(calls.get(key) or [])
    if not isinstance(calls, list):
        raise ValueError("run_tool_calls(..., %r) takes the model's message, its %s or a list of them, not %s"
                         % (provider, "tool calls" if provider == "openai" else "content blocks"
                            if provider == "anthropic" else "output items", _a_json(calls)))
    items = [_plain(item) for item in calls]
    for item in items:
        _same_provider(item, provider)
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("a tool call is an object, not %s" % _a_json(item))
        if provider == "openai":
            given = item.get("function")
            function: _Json = given if isinstance(given, dict) else {}
            call = item.get("id"), function.get("name"), function.get("arguments")
        elif provider == "openai-responses":
            if item.get("type") != "function_call":
                continue  # (messages, reasoning: not calls)
            call = item.get("call_id"), item.get("name"), item.get("arguments")
        else:
            if item.get("type") != "tool_use":
                continue  # (text, thinking: not calls)
            call = item.get("id"), item.get("name"), item.get("input")
        if not isinstance(call[0], str) or not isinstance(call[1], str):
            raise ValueError("a tool call without a string id and name: %s" % _glimpse(item, _SHOWN_CHARS))
        out.append((call[0], call[1], call[2]))
    return out


def _same_provider(given: Any, provider: str) -> None:
    """ValueError when ``given`` (a model's answer, or one item of it) clearly has another
    provider's shape: the caller named the wrong provider, and nothing would run."""
    if not isinstance(given, dict):
        return
    content = given.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    looks = ("openai" if given.get("tool_calls") or "choices" in given or isinstance(given.get("function"), dict)
             else "openai-responses" if given.get("type") == "function_call" or isinstance(given.get("output"), list)
             else "anthropic" if given.get("type") == "tool_use" or any(b.get("type") == "tool_use" for b in blocks)
             else None)
    if looks is not None and looks != provider:
        raise ValueError("run_tool_calls(..., %r) was given what looks like %s's answer (%s): pass provider=%r"
                         % (provider, looks, _glimpse(given, _SHOWN_CHARS), looks))


def _start_call(owner: Client | Group, name: str, arguments: _Json, timeout: float | None) -> Future:
    """A Future of the raw CallToolResult (as call_tool would give it), sent at once."""
    if isinstance(owner, Group):
        server, name = owner._split(name)
        owner = owner.client(server)
    return owner._tool_future(name, arguments, {}, timeout, None, None, Future)


def _run_tool_calls(owner: Client | Group, calls: Any, provider: str, timeout: float | None
                    ) -> List[Dict[str, Any]]:
    """Client.run_tool_calls and Group.run_tool_calls."""
    provider = _check_provider(provider)
    wanted = _model_calls(calls, provider)
    if not wanted:
        return []
    table = _MODEL_TOOLS.get(owner)
    if table is None or any(table.find(name) is None for _, name, _ in wanted):
        table = _ModelTools(owner.list_tools())  # (not listed yet here, or changed since)
        _MODEL_TOOLS[owner] = table
    started: List[Tuple[str, str, Future | _Json]] = []
    for call_id, name, arguments in wanted:
        # Each step of one call fails that call alone (its answer to the model), never the batch:
        # arguments already parsed (Anthropic's input, a dict) may nest deeper than can be sent.
        try:
            prepared = _prepare_call(table, name, arguments)
        except (ValueError, TypeError, RecursionError) as e:
            prepared = _said("the arguments could not be read: %s" % e)
        if isinstance(prepared, tuple):
            try:
                started.append((call_id, name, _start_call(owner, prepared[0], prepared[1], timeout)))
            except McpError as e:  # (a server of the group that is gone)
                started.append((call_id, name, _said("the call failed: %s" % e)))
            except (ValueError, TypeError, RecursionError) as e:  # (not sendable: nested too deeply...)
                started.append((call_id, name, _said("the arguments could not be sent: %s" % e)))
        else:
            started.append((call_id, name, prepared))
    done: List[Tuple[str, str, _Json]] = []
    for call_id, name, outcome in started:
        if not isinstance(outcome, Future):
            done.append((call_id, name, outcome))
            continue
        try:
            result: _Json = outcome.result()
        except RequestTimeout as e:
            result = _said("the tool did not answer in time: %s" % e)
        except ToolError as e:  # (OutputValidationError: what it returned is not what it promised)
            result = dict(e.result, isError=True, content=[{"type": "text", "text": str(e)}])
        except McpError as e:
            result = _said("the call failed: %s" % e)
        except (ValueError, TypeError, RecursionError) as e:
            result = _said("the call failed: %s" % e)
        done.append((call_id, name, result))
    return _answers(provider, done)


def _said(text: str) -> _Json:
    """An answer for the model in the shape of a tool's error result."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _prepare_call(table: _ModelTools, name: str, arguments: Any) -> Tuple[str, _Json] | _Json:
    """(real tool name, arguments) to call, or the error result that tells the model what was wrong."""
    found = table.find(name)
    if found is None:
        return _said("unknown tool %r; the tools are: %s" % (name, ", ".join(sorted(table.tools)) or "none"))
    real, tool = found
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as e:  # (RecursionError: nested deeper than Python parses)
            return _said("the arguments are not JSON (%s): %s" % (e, _shorten(arguments, _EXCERPT_CHARS)))
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return _said("the arguments must be a JSON object, not %s" % _a_json(arguments))
    schema = tool.get("inputSchema")
    if isinstance(schema, dict):
        arguments = _drop_nulls(arguments, schema, schema)
        check = table.check(real, schema)
        try:
            wrong = check(arguments) if check is not None else None
        except RecursionError:
            wrong = ("", "nested too deeply to check")
        if wrong is not None:
            return _said("the arguments do not match the input schema of tool %r: at %s: %s"
                         % (name, wrong[0] or "the top", wrong[1]))
    return real, arguments


def _content_parts(result: _Json) -> List[_Json]:
    """A CallToolResult as text and image parts: text; images (base64) as they are; audio, links
    and embedded resources as text naming them; structuredContent as JSON text unless a text
    block already holds it."""
    parts: List[_Json] = []
    for block in result.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image" and isinstance(block.get("data"), str):
            parts.append({"type": "image", "mimeType": str(block.get("mimeType")), "data": block["data"]})
        elif kind == "resource_link":
            parts.append({"type": "text", "text": "resource link: %s <%s>%s%s" % (
                block.get("name"), block.get("uri"), " (%s)" % block["mimeType"] if block.get("mimeType") else "",
                ": %s" % block["description"] if block.get("description") else "")})
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            res = block["resource"]
            if isinstance(res.get("text"), str):
                parts.append({"type": "text", "text": "resource <%s>:\n%s" % (res.get("uri"), res["text"])})
            else:
                parts.append({"type": "text", "text": "resource <%s>: %s bytes of %s, not shown" % (
                    res.get("uri"), len(str(res.get("blob", ""))) * 3 // 4, res.get("mimeType") or "binary data")})
        else:  # (audio, and what later revisions add: named, so the model knows something came)
            parts.append({"type": "text", "text": "[%s content%s, not shown]" % (
                kind if isinstance(kind, str) else "unknown", " (%s)" % block["mimeType"]
                if isinstance(block.get("mimeType"), str) else "")})
    if "structuredContent" in result:
        shown = result["structuredContent"]
        alone = shown["result"] if isinstance(shown, dict) and list(shown) == ["result"] else shown  # (as call())
        if not any(p["type"] == "text" and (_json_equal(p["text"], shown) or _json_equal(p["text"], alone))
                   for p in parts):
            parts.append({"type": "text", "text": _to_json(shown)})
    return parts


def _json_equal(text: str, value: Any) -> bool:
    try:
        return _same_json(json.loads(text), value)
    except (ValueError, RecursionError):
        return False


def _answers(provider: str, done: List[Tuple[str, str, _Json]]) -> List[Dict[str, Any]]:
    """What to append to the conversation, in ``provider``'s shape, for every call's result."""
    blocks: List[_Json] = []
    for call_id, name, result in done:
        failed = result.get("isError") is True
        try:
            parts = _content_parts(result)
        except (ValueError, TypeError, RecursionError) as e:  # (one result not showable: that call's answer)
            failed, parts = True, [{"type": "text", "text": "the result could not be shown: %s" % e}]
        shown = []
        for part in parts:
            if part["type"] == "image" and (provider == "openai" or part["mimeType"] not in _MODEL_IMAGES):
                part = {"type": "text", "text": "[an image (%s, %d bytes) the tool returned: %s]" % (
                    part["mimeType"], len(part["data"]) * 3 // 4, "a tool message of the Chat Completions API "
                    "cannot carry images" if provider == "openai" else "not a type the model takes")}
            if part["type"] == "text" and not part["text"]:
                continue  # (Anthropic refuses an empty text block; it says nothing anyway)
            shown.append(part)
        if not shown:
            shown = [{"type": "text", "text": "(the tool failed, saying nothing)" if failed else "(no output)"}]
        text = "\n".join(p["text"] for p in shown if p["type"] == "text")
        images = [p for p in shown if p["type"] == "image"]
        if provider == "openai":
            blocks.append({"role": "tool", "tool_call_id": call_id,
                           "content": ("Error: " if failed else "") + text})
        elif provider == "openai-responses":
            output: Any = ("Error: " if failed else "") + text
            if images:
                output = [{"type": "input_text", "text": p["text"]} if p["type"] == "text" else
                          {"type": "input_image", "image_url": "data:%s;base64,%s" % (p["mimeType"], p["data"])}
                          for p in shown]
            blocks.append({"type": "function_call_output", "call_id": call_id, "output": output})
        else:
            content: Any = text
            if images:
                content = [{"type": "text", "text": p["text"]} if p["type"] == "text" else
                           {"type": "image", "source": {"type": "base64", "media_type": p["mimeType"],
                                                        "data": p["data"]}} for p in shown]
            blocks.append({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": failed})
    if provider == "anthropic":
        return [{"role": "user", "content": blocks}]
    return blocks


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
#   auth.use_tls(tls)  (optional)
#       Client passes its TLS settings (verify=, cert=, ssl_context=) before the first
#       request, for the plug-in's own HTTPS traffic.
# OAuth implements both: discovery (RFC 9728, RFC 8414, OpenID Connect), client
# registration (pre-registered, Client ID Metadata Documents, RFC 7591), grants
# (authorization code + PKCE with refresh and step-up; client_credentials with a
# secret or an ES256 private_key_jwt; RFC 7523 jwt-bearer for workload identity;
# cross-app access = RFC 8693 token exchange + jwt-bearer) and RFC 9449 DPoP.
# All its HTTP goes through OAuth._fetch: https only (plain http only to a loopback
# host), no credentials across origins on a redirect, a deadline on every exchange.
# ---------------------------------------------------------------------------

# OAuth request parameters whose values are secrets: logged as <redacted>.
_SECRET_PARAMS = ("client_secret", "code", "code_verifier", "refresh_token", "client_assertion", "assertion",
                  "subject_token", "access_token", "id_token")
_GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_GRANTS = ("authorization_code", "client_credentials", "cross_app_access", "jwt-bearer")

if TYPE_CHECKING:
    import http.client
    import socket

    _AuthHeaders = Union[Mapping[str, str], http.client.HTTPMessage]  # an HTTP answer's (or a plain dict)
    _PrivateKey = Union[str, bytes, int, _Json]  # PEM, raw 32 bytes, the scalar itself, or a JWK

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
_P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_P256_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
           0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)
_INFINITY = (1, 1, 0)  # Jacobian coordinates (X, Y, Z) stand for (X/Z², Y/Z³); Z = 0 is infinity

if TYPE_CHECKING:
    _Jacobian = Tuple[int, int, int]
    _Affine = Tuple[int, int]


def _ec_double(pt: _Jacobian) -> _Jacobian:
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


def _ec_add_affine(pt: _Jacobian, q: _Affine) -> _Jacobian:
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


def _ec_mul(k: int, point: _Affine) -> _Affine | None:
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


def _es256_sign(d: int, message: bytes) -> Tuple[int, int]:
    """Sign ``message`` with private scalar ``d``: returns (r, s), nonce per RFC 6979."""
    hashlib, hmac = _stdlib("hashlib", "ES256 signing (DPoP, private_key)"), _stdlib("hmac", "ES256 signing")
    n = _P256_N
    h = int.from_bytes(hashlib.sha256(message).digest(), "big")
    x = d.to_bytes(32, "big")
    h1 = (h % n).to_bytes(32, "big")
    v, key = b"\x01" * 32, b"\x00" * 32

    def mac(k: bytes, data: bytes) -> bytes:
        digest: bytes = hmac.new(k, data, hashlib.sha256).digest()
        return digest

    key = mac(key, v + b"\x00" + x + h1)
    v = mac(key, v)
    key = mac(key, v + b"\x01" + x + h1)
    v = mac(key, v)
    while True:
        v = mac(key, v)
        k = int.from_bytes(v, "big")
        if 1 <= k < n:
            padded = k + n if (k + n).bit_length() > 256 else k + 2 * n  # same point, always 257 bits
            point = _ec_mul(padded, _P256_G)
            r = point[0] % n if point is not None else 0  # (never infinity: 0 < k < n)
            s = pow(k, n - 2, n) * (h + r * d) % n
            if r and s:
                return r, s
        key = mac(key, v + b"\x00")
        v = mac(key, v)


def _der_items(data: bytes) -> List[Tuple[int, bytes]]:
    """The TLV items of a DER byte string: a list of (tag, value bytes)."""
    items: List[Tuple[int, bytes]] = []
    i = 0
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


def _ec_private_key(key: _PrivateKey) -> int:
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


def _jwt_es256(claims: _Json, private_key: _PrivateKey, header: _Json | None = None) -> str:
    """A compact JWS (ES256) over ``claims``."""
    head = dict({"alg": "ES256", "typ": "JWT"}, **(header or {}))
    signing_input = "%s.%s" % (_b64url(_dumps(head).encode("utf-8")), _b64url(_dumps(claims).encode("utf-8")))
    r, s = _es256_sign(_ec_private_key(private_key), signing_input.encode("ascii"))
    return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def _jwt_claims(jwt: str) -> _Json:
    """The claims of a compact JWT, unverified ({} when it is not one)."""
    try:
        part = jwt.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8"))
    except (AttributeError, IndexError, ValueError, TypeError):
        return {}
    return claims if isinstance(claims, dict) else {}


# -- URLs ----------------------------------------------------------------------------

def _htu(url: str) -> str:
    """The htu claim of a DPoP proof: the request URI without query and fragment (RFC 9449 4.2)."""
    parts = _split_url(url)[0]
    return _origin(url) + ((parts.path if parts else "") or "/")


def _check_url(url: object, what: str) -> None:
    if not isinstance(url, str) or not _secure_url(url):
        raise AuthError("OAuth: refusing to %s %s: authorization traffic must use https (plain http only to "
                        "a loopback host)" % (what, _plain_url(url) if isinstance(url, str) else repr(url)))


def _canonical_resource(url: str) -> str:
    """RFC 8707 resource URI of a server URL: lower-case scheme and host, no fragment."""
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    path = "" if parts.path == "/" else parts.path
    return urllib.parse.urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _resource_covers(resource: str, server_url: str) -> bool:
    """True when a protected resource identifier names ``server_url`` (same origin, path prefix)."""
    import urllib.parse
    a, b = urllib.parse.urlsplit(_canonical_resource(resource)), urllib.parse.urlsplit(
        _canonical_resource(server_url))
    if (a.scheme, a.hostname, a.port) != (b.scheme, b.hostname, b.port) or a.fragment:
        return False
    prefix = a.path.rstrip("/")
    return b.path == prefix or b.path.startswith(prefix + "/") or not prefix


def _header_of(headers: _AuthHeaders | None, name: str) -> str | None:
    """One header from an http.client message (case-insensitive) or a plain dict."""
    if headers is None:
        return None
    value = headers.get(name)
    if value is None and isinstance(headers, dict):
        value = next((v for k, v in headers.items() if str(k).lower() == name.lower()), None)
    return value


def _json_object(raw: bytes) -> _Json:
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _redacted(text: str, secrets: Iterable[object]) -> str:
    """``text`` with every secret we sent replaced (a server may echo them back)."""
    for secret in secrets:
        if isinstance(secret, str) and len(secret) >= 4:
            text = text.replace(secret, "<redacted>")
    return text


def _stripped(value: str | None) -> str | None:
    # Tokens and secrets often come from files, with a trailing newline.
    return value.strip() if isinstance(value, str) else value


class _DpopKey(object):
    """A DPoP (RFC 9449) key pair, ES256, and the latest DPoP-Nonce of each origin."""

    def __init__(self, d: int | None = None) -> None:
        secrets = _stdlib("secrets", "DPoP")
        self.d: int = d or secrets.randbelow(_P256_N - 1) + 1
        public = _ec_mul(self.d, _P256_G)
        assert public is not None  # 0 < d < n: d·G is never the point at infinity
        x, y = public
        self.jwk = {"kty": "EC", "crv": "P-256", "x": _b64url(x.to_bytes(32, "big")),
                    "y": _b64url(y.to_bytes(32, "big"))}
        self.nonces: Dict[str, str] = {}

    def __repr__(self) -> str:  # never the private half
        return "<DPoP key x=%s>" % self.jwk["x"]

    def proof(self, method: str, url: str, token: str | None = None) -> str:
        """A proof JWT for one request (RFC 9449 4.2): fresh jti, ath with a token, the nonce."""
        import hashlib
        claims: _Json = {"jti": _b64url(os.urandom(16)), "htm": method.upper(), "htu": _htu(url),
                         "iat": int(time.time())}
        if token:
            claims["ath"] = _b64url(hashlib.sha256(token.encode("utf-8")).digest())
        nonce = self.nonces.get(_origin(url))
        if nonce:
            claims["nonce"] = nonce
        return _jwt_es256(claims, self.d, {"typ": "dpop+jwt", "jwk": self.jwk})

    def keep_nonce(self, url: str, headers: _AuthHeaders | None) -> str:
        """Keep the DPoP-Nonce a response from ``url`` carries; returns it ("" for none)."""
        nonce = (_header_of(headers, "DPoP-Nonce") or "").strip()
        if nonce:
            self.nonces[_origin(url)] = nonce
        return nonce


# -- its parts: token records, scopes, client authentication, discovery, the store ------

def _read_store(path: str) -> _Json:
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
        out: _Json = {name: {k: v for k, v in (saved.get(name) or {}).items() if isinstance(v, dict)}
                      for name in ("resources", "clients")}
        d = _ec_private_key({"d": saved["dpop_key"]}) if saved.get("dpop_key") else 0
        if 0 < d < _P256_N:
            out["dpop_key"] = d
        return out
    except (OSError, ValueError, AttributeError, TypeError, KeyError) as e:
        _log.warning("OAuth: ignoring the unreadable token store %s (%s)", path, type(e).__name__)
        return {}


def _write_store(path: str, doc: _Json) -> None:
    """Replace the token store: a fresh, exclusive 0600 file beside it, then an atomic rename."""
    if TYPE_CHECKING:
        import tempfile
    else:
        tempfile = _stdlib("tempfile", "OAuth's token_store")
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


def _state_for(states: Dict[str, _Json], url: str, nearby: bool = True) -> _Json | None:
    """The record (in ``states``) of the resource ``url`` belongs to: the exact URL, else the longest
    resource covering it, else (``nearby``) the one record on its origin (the legacy
    SSE transport POSTs beside its stream URL).  None when there is none."""
    key = _canonical_resource(url)
    if key in states:
        return states[key]
    best: Tuple[str, _Json] | None = None
    for name, state in states.items():
        resource = state.get("resource") or name
        if isinstance(resource, str) and _resource_covers(resource, url) and (
                best is None or len(resource) > len(best[0])):
            best = (resource, state)
    if best is not None:
        return best[1]
    if not nearby:
        return None
    origin = _origin(url)
    same = [s for name, s in states.items() if _origin(name) == origin and s.get("tokens")]
    return same[0] if len(same) == 1 else None


def _keep_tokens(state: _Json, answer: _Json, scope: List[str], issuer: str, resource: str, client: _Json) -> None:
    """Keep in ``state`` what a token endpoint answered for its resource."""
    token = _stripped(answer.get("access_token"))
    if not isinstance(token, str) or not token or any(not "\x21" <= c <= "\x7e" for c in token):
        raise AuthError("OAuth: the token endpoint of %s answered without a usable access_token"
                        % _plain_url(issuer))
    kept: _Json = {"access_token": token,
                   "token_type": "DPoP" if str(answer.get("token_type", "")).lower() == "dpop" else "Bearer"}
    refresh = _stripped(answer.get("refresh_token"))
    if isinstance(refresh, str) and refresh:
        kept["refresh_token"] = refresh
    elif (state.get("tokens") or {}).get("refresh_token") and state.get("issuer") == issuer:
        kept["refresh_token"] = state["tokens"]["refresh_token"]  # refresh answers may omit it
    expires_in = answer.get("expires_in")
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and 0 <= expires_in < _MAX_EXPIRES_IN:
        kept["expires_at"] = time.time() + expires_in
    state.update(tokens=kept, issuer=issuer, resource=resource, scope=scope, client=client)


def _scopes(wanted: Iterable[str] | None, challenge: Mapping[str, str], prm: _Json | None, meta: _Json,
            offline: bool) -> List[str]:
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


def _authenticate(client: _Json, params: Dict[str, Any], headers: Dict[str, str], audience: str | None,
                  private_key: _PrivateKey | None) -> None:
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


def _read_assertion(assertion: str | None, path: str | None, provider: Callable[[], object] | None) -> str:
    """The workload's identity token for a jwt-bearer grant, fresh for each token request."""
    if provider is not None:
        value: object
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


def _authorization_response(redirect: str | None, state: str, issuer: str, meta: _Json) -> str:
    """The code from the redirect the user step ended with, after the state and RFC 9207 iss checks."""
    import urllib.parse
    answer = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect or "").query))
    if answer.get("state") != state:
        raise AuthError("OAuth: the authorization response's state does not match the request; "
                        "discarding it (a forged or stale redirect)")
    if "iss" in answer or meta.get("authorization_response_iss_parameter_supported"):
        if answer.get("iss") != issuer:
            raise AuthError("OAuth: the authorization response came from issuer %r, expected %r (RFC 9207); "
                            "discarding it" % (_shorten(str(answer.get("iss")), _SHOWN_CHARS), issuer))
    if answer.get("error"):
        raise AuthError("OAuth: authorization was refused: %s%s" % (
            _shorten(answer["error"], _SHOWN_CHARS), " (%s)" % _shorten(answer["error_description"], _EXCERPT_CHARS)
            if answer.get("error_description") else ""), answer["error"], answer.get("error_description"))
    if not answer.get("code"):
        raise AuthError("OAuth: the authorization response has no code")
    return answer["code"]


def _discover(get_json: Callable[[str], _Json | None], server_url: str, challenge: Mapping[str, str]
              ) -> Tuple[str, _Json | None, str, _Json]:
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
    url = candidates[0]  # (then the one the metadata came from)
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
                            % (_plain_url(url), _shorten(str(claimed), _SHOWN_CHARS), _plain_url(server_url)))
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
    same_party = prm is None and isinstance(named, str) and _origin(named) == _origin(origin)
    if not isinstance(named, str) or named != issuer and not same_party:
        raise AuthError("OAuth: the authorization server metadata for %s says issuer %r; refusing to use it "
                        "(RFC 8414 requires them to match)" % (_plain_url(issuer), _shorten(str(named), _SHOWN_CHARS)))
    return resource, prm, named, meta

def _as_metadata(get_json: Callable[[str], _Json | None], issuer: str) -> _Json | None:
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

    def __init__(self, port: int = 0) -> None:
        if TYPE_CHECKING:
            import http.server as http_server
        else:
            http_server = _stdlib("http.server", "OAuth's browser login (its redirect listener)")
        import urllib.parse
        listener = self
        self.redirect: str | None = None
        self.state: str | None = None  # the state the authorization URL carries; other redirects are ignored
        self.done = threading.Event()
        # connection being served -> its thread (None until started)
        self._open: Dict[socket.socket, threading.Thread | None] = {}
        self._lock = threading.Lock()

        class Handler(http_server.BaseHTTPRequestHandler):
            timeout = LOOPBACK_IDLE_TIMEOUT  # for reading the request; then the connection goes

            def do_GET(self) -> None:
                if not self.path.startswith("/callback"):
                    self.send_error(404)
                    return
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                if query.get("state", [None])[0] != listener.state:  # not our flow: keep waiting
                    self.send_error(400, "unexpected state")
                    return
                listener.redirect = "http://127.0.0.1:%d%s" % (listener.port, self.path)
                page = b"<html><body>Authorization finished; you can close this window.</body></html>"
                try:  # the page before done: the flow's close() right after it would cut the page off
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                finally:  # (a browser already gone still sent the redirect)
                    listener.done.set()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(http_server.ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False  # close() cuts connections instead of waiting for them

            # (``request`` is typed Any as in socketserver's stubs it may be a datagram: here it is
            # always a connected socket)
            def verify_request(self, request: Any, client_address: Any) -> bool:
                with listener._lock:
                    if len(listener._open) >= MAX_LOOPBACK_CONNECTIONS:
                        return False
                    listener._open[request] = None
                return True

            def shutdown_request(self, request: Any) -> None:
                with listener._lock:
                    listener._open.pop(request, None)
                http_server.ThreadingHTTPServer.shutdown_request(self, request)

            def process_request(self, request: Any, client_address: Any) -> None:  # one named thread per connection
                thread = _start_thread(self.process_request_thread, "mcp_min-oauth-connection",
                                       (request, client_address), "serve the login redirect")
                with listener._lock:
                    if request in listener._open:
                        listener._open[request] = thread

            def handle_error(self, request: Any, client_address: Any) -> None:  # a port scan's garbage: no traceback
                _log.debug("OAuth: the redirect listener dropped a connection", exc_info=True)

        self.server = Server(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.uri = "http://127.0.0.1:%d/callback" % self.port
        try:
            self.thread = _start_thread(self.server.serve_forever, "mcp_min-oauth-callback", (_LISTENER_POLL,),
                                        "catch the login redirect")
        except McpError:
            self.server.server_close()
            raise

    def wait(self, url: str, open_browser: bool, timeout: float) -> str | None:
        import urllib.parse
        self.state = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("state", [None])[0]
        _to_stderr("mcp_min: authorize in your browser: %s\n" % _visible(url))
        if open_browser:
            try:
                import webbrowser
            except ImportError:  # (a stripped Python: the line above is the way to the page)
                pass
            else:
                webbrowser.open(url)
        if not self.done.wait(timeout):
            raise AuthError("OAuth: no authorization redirect reached %s within %.0f s" % (self.uri, timeout))
        return self.redirect

    def close(self) -> None:
        """Stop listening and end every connection: idle ones (preconnects) are shut down, their
        threads (which then close them) waited for; whatever is still open after that is closed."""
        import socket
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(CLOSE_GRACE)
        with self._lock:
            still_open = list(self._open.items())
        for sock, _ in still_open:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        _join_all([thread for _, thread in still_open if thread is not None])
        with self._lock:
            stuck, self._open = list(self._open), {}
        for sock in stuck:
            sock.close()


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

    def __init__(self, client_id: str | None = None, client_secret: str | None = None,
                 client_metadata_url: str | None = None, scopes: str | Iterable[str] | None = None,
                 authorize: Callable[[str], str] | None = None, redirect_uri: str | None = None,
                 grant_type: str = "authorization_code", private_key: str | bytes | Dict[str, Any] | None = None,
                 token_store: str | None = None, client_name: str = "mcp_min", id_token: str | None = None,
                 idp_token_endpoint: str | None = None, idp_client_id: str | None = None,
                 idp_client_secret: str | None = None, token_endpoint_auth_method: str | None = None,
                 open_browser: bool = True, timeout: float = DEFAULT_TIMEOUT, dpop: bool | None = None,
                 assertion: str | None = None, assertion_file: str | None = None,
                 assertion_provider: Callable[[], str] | None = None) -> None:
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
        seconds = _client_timeout(timeout, "timeout")
        assert seconds is not None  # (without none_ok, a positive number or ValueError)
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
        self.open_browser, self.timeout = open_browser, float(seconds)
        self._lock = threading.RLock()
        self._local = threading.local()  # pairs challenge() with the headers() call of its repeat
        # canonical resource -> {"tokens", "issuer", "resource", "scope", "client", ...}
        self._state: Dict[str, _Json] = {}
        self._clients: Dict[str, _Json] = {}  # issuer -> registered client {"client_id", "client_secret", "method"}
        self._dpop: _DpopKey | None = None  # made on first use
        self._step_ups = 0
        self._engine: _HttpEngine | None = None  # the HTTP engine of its own requests, made on first use
        self._tls: _Tls | None = None  # the TLS settings of the client it serves (use_tls)
        if self.token_store:
            saved = _read_store(self.token_store)
            self._state, self._clients = saved.get("resources", {}), saved.get("clients", {})
            if saved.get("dpop_key"):
                self._dpop = _DpopKey(saved["dpop_key"])

    def __repr__(self) -> str:  # never the secrets, tokens or keys
        return "OAuth(grant_type=%r, client_id=%r)" % (self.grant_type, self.client_id)

    # -- the plug-in interface -----------------------------------------------------
    def headers(self, method: str, url: str) -> Dict[str, str]:
        """The credentials for one HTTP request to ``url``: {} while we hold none."""
        retry, self._local.retry = getattr(self._local, "retry", None), None
        # (depth, nonce retries) of the request in progress: a repeat follows its challenge
        self._local.depth = retry[2:] if retry and retry[:2] == (method, url) else (0, 0)
        if not _secure_url(url):
            return {}  # tokens never travel in clear text
        with self._lock:
            state = _state_for(self._state, url)
            tokens = (state or {}).get("tokens") or {}
            expires = tokens.get("expires_at")
            if state is not None and expires and time.time() > expires - TOKEN_EXPIRY_MARGIN and \
                    tokens.get("refresh_token"):
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

    def challenge(self, method: str, url: str, status: int, response_headers: Mapping[str, str],
                  sent_headers: Mapping[str, str]) -> bool:
        """``url`` answered ``status`` to a request that carried ``sent_headers``.

        Returns True when there is something new to send (a token, a refreshed or
        stepped-up token, a DPoP nonce): call headers() again and repeat."""
        if status not in (401, 403) or not _secure_url(url):
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

    def use_tls(self, tls: Any) -> None:
        """Called by Client with its TLS settings: OAuth's own HTTPS requests use them too."""
        with self._lock:
            self._tls = tls
            self._engine = None  # (made again, with these settings, on the next request)

    # -- behind the interface ------------------------------------------------------
    def _new_nonce(self, url: str, response_headers: _AuthHeaders | None, sent_proof: str | None) -> bool:
        """A use_dpop_nonce challenge: keep the nonce; True when a proof carrying it is new."""
        if not sent_proof:
            return False
        nonce = self._dpop_key().keep_nonce(url, response_headers)
        return bool(nonce) and _jwt_claims(sent_proof).get("nonce") != nonce  # the same one refused: give up

    def _refused(self, url: str, status: int, params: Dict[str, str], sent: str | None, depth: int) -> bool:
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
        step_up: List[str] | None = None
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

    def _dpop_key(self) -> _DpopKey:
        with self._lock:
            if self._dpop is None:
                self._dpop = _DpopKey()
            return self._dpop

    # -- HTTP --------------------------------------------------------------------------
    def _fetch(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None = None
               ) -> Tuple[int, _AuthHeaders, bytes]:
        """Every HTTP request OAuth makes, through the module's HTTP engine: (status, response headers,
        body bytes).  Only https (plain http only to a loopback host) is fetched, redirects included
        (GET only; credentials never follow one to another origin); the exchange ends within
        ``timeout`` (RequestTimeout); a non-2xx answer is an answer."""
        if self._engine is None:
            self._engine = _HttpEngine(keep_alive=False, tls=self._tls)
        _check_url(url, "fetch")
        _log.debug("OAuth: %s %s", method, _plain_url(url))
        h = {"Accept": "application/json", "User-Agent": "mcp_min/" + __version__}
        h.update(headers)
        try:
            answer = self._engine.request(method, url, h, body, _deadline_after(self.timeout), secure=True)
            with answer:
                data = answer.read(MAX_AUTH_RESPONSE_BYTES) if answer.status < 300 else answer.body
        except RequestTimeout:
            raise RequestTimeout("OAuth: no complete answer from %s within %.3g s"
                                 % (_plain_url(url), self.timeout))
        except McpError as e:
            raise AuthError("OAuth: cannot reach %s: %s" % (_plain_url(url), e))
        return answer.status, answer.headers, data

    def _get_json(self, url: str) -> _Json | None:
        """GET a metadata document: the dict, or None when absent (not 200) or not JSON."""
        status, _, body = self._fetch("GET", url, {"MCP-Protocol-Version": LEGACY_VERSIONS[0]})
        if status != 200:
            _log.debug("OAuth: %s answered %s", _plain_url(url), status)
            return None
        return _json_object(body) or None

    def _post_form(self, url: str, params: Mapping[str, Any], headers: Mapping[str, str], what: str,
                   dpop: bool = False) -> _Json:
        """POST a token request: the answer (a dict) or AuthError.  With DPoP, a
        use_dpop_nonce answer is repeated once, with the nonce given (RFC 9449 8)."""
        import urllib.parse
        params = {k: v for k, v in params.items() if v is not None}
        body = urllib.parse.urlencode(params).encode("utf-8")
        _log.debug("OAuth: %s to %s with %s", what, _plain_url(url), ", ".join(
            "%s=%s" % (k, "<redacted>" if k in _SECRET_PARAMS else v) for k, v in params.items()))
        retries = DPOP_NONCE_RETRIES
        while True:
            h = dict(headers, **{"Content-Type": "application/x-www-form-urlencoded"})
            if dpop:
                h["DPoP"] = self._dpop_key().proof("POST", url)
            status, answer_headers, raw = self._fetch("POST", url, h, body)
            doc = _json_object(raw)
            nonce = self._dpop_key().keep_nonce(url, answer_headers) if dpop else ""
            if not (nonce and status in (400, 401) and doc.get("error") == "use_dpop_nonce") or not retries:
                break
            retries -= 1
        if status != 200 or not doc:
            secrets = [v for k, v in params.items() if k in _SECRET_PARAMS] + list(headers.values())
            detail = doc.get("error") or _shorten(raw.decode("utf-8", "replace"), _SHOWN_CHARS)
            description = doc.get("error_description")
            description = _redacted(description, secrets) if isinstance(description, str) else None
            raise AuthError("OAuth: %s to %s failed with HTTP %s: %s%s" % (
                what, _plain_url(url), status, _redacted(str(detail), secrets),
                " (%s)" % _shorten(description, _EXCERPT_CHARS) if description else ""), doc.get("error"), description)
        return doc

    # -- the flows ---------------------------------------------------------------------
    def _authorize(self, server_url: str, state: _Json, challenge: Dict[str, str], step_up: List[str] | None
                   ) -> None:
        _check_url(server_url, "authorize for")
        resource, prm, issuer, meta = _discover(self._get_json, server_url, challenge)
        scope = _scopes(step_up or self.scopes, challenge, prm, meta, self.grant_type == "authorization_code")
        answer, client = self._grant(meta, issuer, resource, scope)
        _keep_tokens(state, answer, scope, issuer, resource, client)
        # Refreshing goes back to this same authorization server, never to a rediscovered one.
        state["as_metadata"] = meta

    def _grant(self, meta: _Json, issuer: str, resource: str, scope: List[str]) -> Tuple[_Json, _Json]:
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

    def _id_jag(self, issuer: str, resource: str, scope: List[str]) -> str:
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
        headers: Dict[str, str] = {}
        idp_client = {"client_id": self.idp_client_id or self.client_id, "client_secret": self.idp_client_secret,
                      "method": "client_secret_basic" if self.idp_client_secret else "none"}
        _authenticate(idp_client, params, headers, self.idp_token_endpoint, None)
        grant = self._post_form(self.idp_token_endpoint, params, headers, "token exchange")
        id_jag = grant.get("access_token")
        if not isinstance(id_jag, str) or not id_jag:
            raise AuthError("OAuth: the identity provider's token exchange at %s returned no ID-JAG"
                            % _plain_url(self.idp_token_endpoint))
        return id_jag

    def _preregistered(self, meta: _Json, client_id: str | None = None) -> _Json:
        """The record of the client we were given: {"client_id", "client_secret", "method"}."""
        return {"client_id": client_id or self.client_id, "client_secret": self.client_secret,
                "method": self._auth_method(meta.get("token_endpoint_auth_methods_supported"), self.client_secret)}

    def _client(self, meta: _Json, issuer: str, redirect_uri: str) -> _Json:
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
                   "application_type": "native" if _is_loopback(_split_url(redirect_uri)[1]) else "web"}
        _log.debug("OAuth: registering at %s", _plain_url(endpoint))  # RFC 7591 dynamic client registration
        status, _, body = self._fetch("POST", endpoint, {"Content-Type": "application/json"},
                                      _dumps(request).encode("utf-8"))
        doc = _json_object(body)
        if status not in (200, 201) or not isinstance(doc.get("client_id"), str) or not doc["client_id"].strip():
            raise AuthError("OAuth: dynamic client registration at %s failed with HTTP %s: %s; pass "
                            "OAuth(client_id=...) instead" % (_plain_url(endpoint), status, _shorten(
                                doc.get("error") or body.decode("utf-8", "replace"), _SHOWN_CHARS)))
        secret = _stripped(doc.get("client_secret")) if isinstance(doc.get("client_secret"), str) else None
        client = {"client_id": doc["client_id"].strip(), "client_secret": secret,
                  "method": doc.get("token_endpoint_auth_method") or self._auth_method(supported, secret)}
        self._clients[issuer] = client
        return client

    def _auth_method(self, supported: object, secret: object) -> str:
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

    def _token(self, meta: _Json, client: _Json, params: Dict[str, Any], issuer: str, what: str = "token request"
               ) -> _Json:
        headers: Dict[str, str] = {}
        _authenticate(client, params, headers, issuer, self.private_key)
        algs = meta.get("dpop_signing_alg_values_supported")
        dpop = self.dpop if self.dpop is not None else isinstance(algs, list) and "ES256" in algs
        return self._post_form(meta["token_endpoint"], params, headers, what, dpop)

    def _authorization_code(self, meta: _Json, issuer: str, resource: str, scope: List[str]) -> Tuple[_Json, _Json]:
        hashlib, secrets = _stdlib("hashlib", "OAuth (PKCE)"), _stdlib("secrets", "OAuth (PKCE)")
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
                assert self.authorize is not None  # (no listener: the caller's authorize= runs the user step)
                redirect = self.authorize(url)
        finally:
            if listener is not None:
                listener.close()
        code = _authorization_response(redirect, state_value, issuer, meta)
        params = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                  "code_verifier": verifier, "resource": resource}
        return self._token(meta, client, params, issuer), client

    def _refresh(self, state: _Json) -> None:
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
        _keep_tokens(state, answer, state.get("scope") or [], issuer, resource, client)
        self._save()

    def _save(self) -> None:
        if self.token_store:
            doc: _Json = {"resources": self._state, "clients": self._clients}
            if self._dpop is not None:  # tokens bound to the key are useless without it
                doc["dpop_key"] = _b64url(self._dpop.d.to_bytes(32, "big"))
            _write_store(self.token_store, doc)


# ---------------------------------------------------------------------------
# Command line: python mcp_min.py [options] COMMAND [ARGS] -- SERVER_ARGV...
# ---------------------------------------------------------------------------
# Everything below runs only for the command line: its imports (argparse, shlex, cmd,
# readline...) sit inside the functions, so a library user never pays for them.
if TYPE_CHECKING:
    import argparse
    import cmd

    # a command's words checked before connecting; then run(client, those, options) -> exit status
    _CliParse = Callable[[List[str]], Any]
    _CliRun = Callable[[Client, Any, argparse.Namespace], int]
    _FoundServer = Tuple[str, str, str, str, Any]  # (name, host label, file, its key there, entry)

_USAGE = """python mcp_min.py [options] COMMAND [ARGS] -- SERVER_ARGV...
       python mcp_min.py [options] --url URL COMMAND [ARGS]
       python mcp_min.py [options] --server NAME COMMAND [ARGS]   (from your MCP config files)

commands:
%s

exit status (the MCP Inspector CLI's table):
  0 ok   1 other error (the server refused a request, a protocol error)   2 usage
  3 authorization   4 no server reachable (it cannot be started or reached, gave no
  answer in time, or did not speak MCP while connecting)
  5 the tool reported an error   141 stdout closed early (like `| head`)"""

EXIT_OK = 0
EXIT_OTHER = 1        # the server refused a request, broke the protocol, or a bug of ours
EXIT_USAGE = 2        # a bad command line or config file: nothing was sent
EXIT_AUTH = 3         # 401/403, or OAuth failed
EXIT_UNREACHABLE = 4  # the server could not be started, reached, or did not answer in time
EXIT_TOOL_ERROR = 5   # the tool ran and reported failure (isError)
EXIT_BROKEN_PIPE = 141  # stdout was closed by its reader: 128 + SIGPIPE, what a Unix tool shows
HELP_WIDTH = 88  # characters of a line of command help: as wide as --help's usage lines above it
HELP_COLUMN = 28  # where --help's table starts a command's text (a longer command starts it on a new line)
SIGNATURE_ENUM_LIMIT = 6  # enum values shown in a one-line signature before "..."
SIGNATURE_MAX_DEPTH = 8  # types nested in a signature before "...": array[array[...]] (a line has no room for
#                          more, and an inputSchema may nest past Python's recursion limit)


class _CliError(Exception):
    """A failure the CLI explains itself: (exit status, one-line message)."""

    def __init__(self, status: int, message: str) -> None:
        Exception.__init__(self, message)
        self.status = status


def _cli_parser() -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:  # one line and status 2, like every other usage error
            raise _UsageError(message)

    usage = _USAGE % "\n".join(_command_help(name) for name in _COMMANDS)
    if not sys.argv[0].endswith(".py"):
        usage = usage.replace("python mcp_min.py", "mcp_min")  # (installed)
    elif __name__ == "__main__" and __spec__ is not None:  # (python -m mcp_min)
        usage = usage.replace("python mcp_min.py", "python -m mcp_min")
    p = Parser(prog="mcp_min", usage=usage, add_help=True)
    p.add_argument("command")
    p.add_argument("args", nargs="*")
    p.add_argument("--url", help="connect to a Streamable HTTP (or HTTP+SSE) server")
    p.add_argument("--header", action="append", default=[], metavar="K:V", help="HTTP header (repeatable)")
    p.add_argument("--transport", default="auto", choices=("auto", "streamable-http", "sse"),
                   help="HTTP transport (default: auto, Streamable HTTP falling back to HTTP+SSE)")
    p.add_argument("--cacert", metavar="PATH", help="https: trust the CA certificates in this file or directory")
    p.add_argument("--cert", metavar="PATH", help="https: client certificate (PEM, with its key unless --key)")
    p.add_argument("--key", metavar="PATH", help="https: the client certificate's private key")
    p.add_argument("--insecure", action="store_true", help="https: do not verify certificates (unsafe)")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="server environment variable")
    p.add_argument("--inherit-env", action="store_true", help="pass the whole environment to the server")
    p.add_argument("--timeout", default=str(DEFAULT_TIMEOUT), help="seconds (default %(default)s)")
    p.add_argument("--protocol-version", default="auto", help="pin a protocol version (default: auto)")
    p.add_argument("--config", help="a JSON file with an mcpServers (or VS Code servers) table")
    p.add_argument("--server", help="the server's name in --config, or in the usual MCP config files")
    p.add_argument("--args", dest="json_args", metavar="JSON", help="call/prompt: the arguments as a JSON object")
    p.add_argument("--task", action="store_true", help="call: run the tool as a task, showing its status")
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


def _json_arg(text: str, what: str) -> Any:
    """A command-line value as JSON; NaN, Infinity and overflowing numbers are refused."""
    def refuse(token: str) -> NoReturn:
        raise _UsageError("%s: %s is not JSON (quote it to send it as text)" % (what, token))

    def number(token: str) -> float:
        value = float(token)
        return value if math.isfinite(value) else refuse(token)
    return json.loads(text, parse_constant=refuse, parse_float=number)


def _split_pairs(pairs: Iterable[str]) -> List[Tuple[str, str]]:
    """[(key, text)] of key=value words; a repeated key is a usage error (which one would win?)."""
    seen: Set[str] = set()
    out: List[Tuple[str, str]] = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _UsageError("expected key=value, got %r" % pair)
        if key in seen:
            raise _UsageError("%s= is given twice" % key)
        seen.add(key)
        out.append((key, value))
    return out


def _call_words(words: Sequence[str]) -> List[str]:
    """A call's words checked before connecting: key=value pairs (no key twice) and JSON objects."""
    _split_pairs([w for w in words if not w.lstrip().startswith("{")])
    return list(words)


def _loose_json(text: str, what: str) -> Any:
    try:
        return _json_arg(text, what)
    except _UsageError:
        raise
    except ValueError:
        return text  # not JSON: the text itself


def _dict_or_empty(value: Any) -> _Json:
    """A JSON object from the server, or {} when it sent something else (or nothing); _list_or_empty alike."""
    return value if isinstance(value, dict) else {}


def _list_or_empty(value: Any) -> List[Any]:
    return value if isinstance(value, list) else []


def _schema_types(schema: Any) -> List[str]:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str):
        return [kind]
    return [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []


def _typed_value(text: str, schema: Any, what: str) -> Any:
    """A command-line word converted to what the schema says (string stays text: ``12345`` too);
    with no type to go by, JSON when it parses. _UsageError when it cannot be that type."""
    types = _schema_types(schema)
    if not types:
        return _loose_json(text, what)
    for kind in [k for k in types if k != "string"] + (["string"] if "string" in types else []):
        if kind == "string":
            return text
        if kind == "boolean" and text.lower() in ("true", "false", "yes", "no", "1", "0"):
            return text.lower() in ("true", "yes", "1")
        value = _loose_json(text, what)  # (not JSON: the text, which is no kind but string)
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)
        if _json_type(value) in (("integer", "number") if kind == "number" else (kind,)):
            return value
    raise _UsageError("%s: expected %s" % (what, " or ".join(types)))


def _schema_arguments(words: Iterable[str], json_text: str | None, schema: Any, what: str,
                      see: str | None = None) -> _Json:
    """The arguments of a call from key=value words and/or one JSON object, checked against the
    input schema before anything is sent: unknown, repeated and missing keys are usage errors.
    ``see``: the command that shows what ``what`` takes (default: ``tool <what>``)."""
    arguments: _Json = {}
    pairs: List[str] = []
    for word in words:
        if word.lstrip().startswith("{"):
            if json_text is not None:
                raise _UsageError("%s: give the arguments as one JSON object, not two" % what)
            json_text = word
        else:
            pairs.append(word)
    if json_text is not None:
        try:
            arguments = _json_arg(json_text, what)
        except _UsageError:
            raise
        except ValueError as e:
            raise _UsageError("%s: the arguments are not JSON: %s" % (what, e))
        if not isinstance(arguments, dict):
            raise _UsageError("%s: the arguments must be a JSON object" % what)
    props = schema.get("properties") if isinstance(schema, dict) else None
    props = props if isinstance(props, dict) else None
    # (a schema that allows more keys says so with additionalProperties: true or a schema)
    closed = props is not None and schema.get("additionalProperties") in (None, False)
    extra = schema.get("additionalProperties") if props is not None else None
    extra = extra if isinstance(extra, dict) else None
    for key, text in _split_pairs(pairs):
        if key in arguments:
            raise _UsageError("%s: %s is given twice" % (what, key))
        if props is None:
            arguments[key] = _loose_json(text, "%s=%s" % (key, text))
            continue
        if closed and key not in props:
            raise _UsageError("%s has no argument %r (it takes: %s)" % (what, key, ", ".join(props) or "none"))
        arguments[key] = _typed_value(text, props.get(key, extra), "%s=%s" % (key, text))
    required = schema.get("required") if isinstance(schema, dict) else None
    missing = [k for k in required if isinstance(k, str) and k not in arguments] if isinstance(required, list) else []
    if missing:
        raise _UsageError("%s needs %s (see: %s)" % (what, ", ".join(k + "=..." for k in missing),
                                                    see or "tool %s" % what))
    return arguments


# -- where servers come from: the command line, or the config files people already have

def _config_files(home: str | None = None, cwd: str | None = None, platform: str | None = None,
                  environ: Mapping[str, str] | None = None) -> List[Tuple[str, str, str]]:
    """[(label, path, table key)] of the MCP config files of common hosts, project files first."""
    environ = os.environ if environ is None else environ
    home = home or os.path.expanduser("~")
    cwd = cwd or os.getcwd()
    platform = platform or sys.platform
    if platform == "darwin":
        desktop = os.path.join(home, "Library", "Application Support", "Claude")
    elif platform.startswith("win"):
        desktop = os.path.join(environ.get("APPDATA") or os.path.join(home, "AppData", "Roaming"), "Claude")
    else:
        desktop = os.path.join(environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "Claude")
    return [
        ("Claude Code (project)", os.path.join(cwd, ".mcp.json"), "mcpServers"),
        ("Cursor (project)", os.path.join(cwd, ".cursor", "mcp.json"), "mcpServers"),
        ("VS Code (project)", os.path.join(cwd, ".vscode", "mcp.json"), "servers"),
        ("Gemini CLI (project)", os.path.join(cwd, ".gemini", "settings.json"), "mcpServers"),
        ("Claude Code", os.path.join(home, ".claude.json"), "mcpServers"),
        ("Claude Desktop", os.path.join(desktop, "claude_desktop_config.json"), "mcpServers"),
        ("Cursor", os.path.join(home, ".cursor", "mcp.json"), "mcpServers"),
        ("Gemini CLI", os.path.join(home, ".gemini", "settings.json"), "mcpServers"),
        ("Windsurf", os.path.join(home, ".codeium", "windsurf", "mcp_config.json"), "mcpServers"),
    ]


def _found_servers(files: Iterable[Tuple[str, str, str | None]]
                   ) -> Tuple[List[_FoundServer], List[_UsageError]]:
    """([(name, label, path, its key, entry)], [file error]) of the servers in these config files
    ((label, path, table key) each) that exist; a broken file never hides the others."""
    found: List[_FoundServer] = []
    problems: List[_UsageError] = []
    for label, path, _ in files:
        if label != "--config" and not os.path.isfile(path):
            continue
        try:
            tables = _server_table(_read_servers_file(path), path, bare=label == "--config")
        except _UsageError as e:
            problems.append(e)
            continue
        for name, (where, entry) in tables.items():
            found.append((name, label, path, where, entry))
    return found, problems


def _config_input(input_id: str, where: str, inputs: Iterable[Any]) -> str:
    """A VS Code ${input:ID}: asked on the terminal (a password without echo); refused without one."""
    spec = next((i for i in inputs if isinstance(i, dict) and i.get("id") == input_id), {})
    if not _on_terminal():
        raise _UsageError("%s asks for ${input:%s}; run on a terminal to type it, or give the value with --env"
                          % (where, input_id))
    question = "%s: " % (spec.get("description") or input_id)
    if spec.get("password"):
        import getpass
        return getpass.getpass(question, sys.stderr)
    return _ask(question) or ""  # (Ctrl-D: empty)


def _server_from_config(path: str, name: str | None) -> _Json:
    """{"server", "env", "headers", "cwd"} of one entry of an MCP config file (its only one
    without a name), read by _server_entry; errors name the file and the key."""
    doc = _read_servers_file(path)
    tables = _server_table(doc, path, bare=True)
    if name is None:
        if len(tables) != 1:
            raise _UsageError("%s lists %d servers; pick one with --server NAME (%s)"
                              % (path, len(tables), ", ".join(sorted(tables))))
        name = next(iter(tables))
    if name not in tables:
        raise _UsageError("no server %r in %s (it has: %s)" % (name, path, ", ".join(sorted(tables)) or "none"))
    where, entry = tables[name]
    where = "%s: %s" % (path, where)
    inputs = _list_or_empty(doc.get("inputs"))
    server, options = _server_entry(entry, where, lambda text, at: _expand(
        text, at, lambda input_id, asker: _config_input(input_id, asker, inputs)))
    if server is None:
        raise _UsageError('%s is disabled ("disabled": true); enable it there to use it' % (where,))
    return dict({"env": {}, "headers": {}, "cwd": None}, server=server, **options)


def _cli_url(text: str, what: str = "--url") -> str:
    """An http(s) URL, or a usage error that says what was probably meant."""
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in ("http", "https"):
        return text
    if scheme:
        raise _UsageError("%s: %s is not an http:// or https:// URL" % (what, text))
    meant = _url_meant(text)
    if meant:
        if what == "--url":
            raise _UsageError("--url needs a scheme: did you mean --url %s?" % meant)
        raise _UsageError("%s looks like a URL without its scheme, not a program: did you mean --url %s?"
                          % (text, meant))
    raise _UsageError("%s: %s is not a URL" % (what, text))


def _looks_like_url(argv: Sequence[str]) -> bool:
    """A lone server word that is a URL (or one without its scheme) and no program of that name."""
    if len(argv) != 1 or os.path.exists(argv[0]):
        return False
    import shutil
    return "://" in argv[0] or bool(re.match(_URL_LIKE, argv[0])) and "/" in argv[0] and shutil.which(argv[0]) is None


def _parse_cli(argv: List[str]) -> Tuple[argparse.Namespace, _Json | None, Any]:
    """The command line as (options, server dict, command arguments); _UsageError when bad."""
    server_argv: List[str] = []
    explicit_argv = "--" in argv
    if explicit_argv:
        cut = argv.index("--")
        argv, server_argv = argv[:cut], argv[cut + 1:]
    opts = _cli_parser().parse_intermixed_args(argv)  # (options between the words too: call --task NAME)
    env = dict(_split_pairs(opts.env))
    headers: Dict[str, str] = {}
    for h in opts.header:
        key, sep, value = h.partition(":")
        if not sep:
            raise _UsageError("expected --header K:V, got %r" % h)
        headers[key.strip()] = value.strip()
    try:
        opts.timeout = _client_timeout(float(opts.timeout), "--timeout")
    except ValueError:
        raise _UsageError("--timeout must be a positive finite number of seconds, not %r" % opts.timeout)
    if opts.protocol_version != "auto" and opts.protocol_version not in SUPPORTED_VERSIONS:
        raise _UsageError("--protocol-version must be auto or one of %s" % ", ".join(SUPPORTED_VERSIONS))
    if opts.command not in _COMMANDS:
        raise _UsageError("unknown command %r (see --help)" % opts.command)
    parsed = _command_words(opts.command, opts.args)
    if opts.command == "servers":
        return opts, None, parsed
    given = [what for what, there in (("--url", opts.url), ("--config", opts.config),
                                      ("-- SERVER_ARGV", explicit_argv)) if there]
    if len(given) > 1:
        raise _UsageError("give the server one way, not %s" % " and ".join(given))
    if explicit_argv and not server_argv:
        raise _UsageError("nothing after --: give the server's command line")
    server: _Json = {"env": {}, "headers": {}, "cwd": None}
    if opts.config:
        server = _server_from_config(opts.config, opts.server)
    elif opts.url:
        server["server"] = _cli_url(opts.url)
    elif server_argv:
        if _looks_like_url(server_argv):
            server["server"] = _cli_url(server_argv[0], "the server")  # a URL after --: understood, or explained
        else:
            server["server"] = server_argv
    elif opts.server:
        found, problems = _found_servers(_config_files())
        match = [f for f in found if f[0] == opts.server]
        if not match:
            raise _UsageError("no server %r in your MCP config files (%s); see: mcp_min servers%s" % (
                opts.server, ", ".join(sorted(set(f[0] for f in found))) or "none found",
                "".join("\n  (%s)" % e for e in problems)))
        server = _server_from_config(match[0][2], opts.server)  # (the first file naming it)
    else:
        raise _UsageError("say which server: -- SERVER_ARGV..., --url URL, --config FILE or --server NAME")
    if not isinstance(server["server"], str) and (opts.transport != "auto" or opts.cacert or opts.cert or opts.insecure):
        raise _UsageError("--transport, --cacert, --cert and --insecure are for an http(s) server (--url)")
    if opts.insecure and opts.cacert:
        raise _UsageError("--insecure and --cacert contradict each other")
    if opts.key and not opts.cert:
        raise _UsageError("--key needs --cert")
    server["env"], server["headers"] = dict(server["env"], **env), dict(server["headers"], **headers)
    return opts, server, parsed


# -- printing: every listing one line per item, in the server's words, never a traceback.
# Server text never drives the terminal (_visible): listings, errors and logs always show its
# control characters as escapes; content asked for (call, read, prompt, skill) does on a
# terminal and is exact when piped; JSON has them all as \u escapes.

def _print(value: Any, as_json: bool) -> None:
    if as_json or not isinstance(value, str):
        print(_dumps_for_humans_indented(value))
    else:
        _content(value)


def _out(text: str, lines: bool = False) -> None:
    """A line of a listing (with ``lines``: a block of lines) to stdout, made visible."""
    print(_visible(text, lines))


def _content(text: object, end: str = "\n") -> None:
    """What the user asked for to stdout: exact when piped, made visible on a terminal."""
    try:
        terminal = sys.stdout.isatty()
    except (AttributeError, ValueError):  # (None, or closed)
        terminal = False
    print(_visible(text, True) if terminal else str(text), end=end)


def _dumps_for_humans_indented(value: Any) -> str:
    try:
        return _visible(json.dumps(value, indent=2, ensure_ascii=False), as_json=True)
    except (ValueError, TypeError, RecursionError):  # (nested past the recursion limit: compact, then)
        return _visible(_glimpse(value), as_json=True)


def _first_line(text: Any) -> str:
    lines = (text if isinstance(text, str) else _dumps_for_humans(text) if text else "").strip().splitlines()
    return lines[0] if lines else ""


def _type_text(schema: Any, depth: int = 0) -> str:
    """A schema's type the way a signature shows it: number, "a"|"b", array[string], ..."""
    if not isinstance(schema, dict):
        return "any"
    if depth >= SIGNATURE_MAX_DEPTH:
        return "..."
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        shown = "|".join(_short(v) for v in enum[:SIGNATURE_ENUM_LIMIT])
        return shown + ("|..." if len(enum) > SIGNATURE_ENUM_LIMIT else "")
    types = _schema_types(schema)
    if "array" in types and isinstance(schema.get("items"), dict):
        types = [("array[%s]" % _type_text(schema["items"], depth + 1)) if t == "array" else t for t in types]
    if not types:
        for union in ("anyOf", "oneOf"):
            if isinstance(schema.get(union), list):
                return "|".join(_type_text(s, depth + 1) for s in schema[union])
    return "|".join(types) or "any"


def _signature(tool: _Json) -> str:
    """add(a: number, b: number, unit?: "m"|"km" = "m"): required first, optionals marked with ?."""
    schema = _dict_or_empty(tool.get("inputSchema"))
    props = _dict_or_empty(schema.get("properties"))
    required = _list_or_empty(schema.get("required"))
    params = []
    for key in sorted(props, key=lambda k: k not in required):
        prop = props[key] if isinstance(props[key], dict) else {}
        text = "%s%s: %s" % (key, "" if key in required else "?", _type_text(prop))
        if "default" in prop:
            text += " = " + _dumps_for_humans(prop["default"])
        params.append(text)
    out = "%s(%s)" % (tool.get("name"), ", ".join(params))
    output = tool.get("outputSchema")
    if isinstance(output, dict):
        fields = _dict_or_empty(output.get("properties"))
        out += " -> " + ("{%s}" % ", ".join("%s: %s" % (k, _type_text(v)) for k, v in fields.items())
                         if fields else _type_text(output))
    return out


def _item(item: Any, label: str) -> _Json:
    return item if isinstance(item, dict) else {label: item}


def _print_tool(tool: _Json, as_json: bool) -> None:
    """One tool in full: signature, description, each parameter, annotations, output schema."""
    if as_json:
        _print(tool, True)
        return
    _out(_signature(tool))
    if tool.get("description"):
        _out("\n" + str(tool["description"]).strip(), lines=True)
    schema = _dict_or_empty(tool.get("inputSchema"))
    props = _dict_or_empty(schema.get("properties"))
    required = _list_or_empty(schema.get("required"))
    if props:
        print("\nparameters:")
    for key, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        notes = ["required" if key in required else "optional"]
        if "default" in prop:
            notes.append("default " + _dumps_for_humans(prop["default"]))
        desc = _first_line(prop.get("description"))
        _out("  %s: %s (%s)%s" % (key, _type_text(prop), ", ".join(notes), "  - " + desc if desc else ""))
    for field in ("annotations", "execution", "outputSchema", "_meta"):
        if tool.get(field):
            _out("\n%s:\n%s" % (field, "\n".join("  " + line for line in
                                                 _dumps_for_humans_indented(tool[field]).splitlines())), lines=True)


def _find(items: Sequence[Any], name: str, what: str, key: str = "name") -> _Json:
    for item in items:
        if isinstance(item, dict) and item.get(key) == name:
            return item
    raise _CliError(EXIT_OTHER, "the server has no %s %r (it has: %s)" % (
        what, name, ", ".join(str(i.get(key)) for i in items if isinstance(i, dict)) or "none"))


def _run_info(client: Client, parsed: None, opts: argparse.Namespace) -> int:
    info = {"server": client.server_info, "protocol_version": client.protocol_version,
            "transport": client.transport, "capabilities": client.server_capabilities,
            "instructions": client.instructions}
    if opts.json:
        _print(info, True)
        return EXIT_OK
    _out("server: %s %s" % (client.server_info.get("name"), client.server_info.get("version")))
    _out("protocol: %s over %s" % (client.protocol_version, client.transport))
    _out("capabilities: %s" % ", ".join(sorted(map(str, client.server_capabilities))))
    if client.instructions:
        _out("instructions: %s" % client.instructions, lines=True)
    return EXIT_OK


def _run_tools(client: Client, names: List[str], opts: argparse.Namespace) -> int:
    tools = client.list_tools()
    if not names and opts.json:
        _print(tools, True)
    elif not names:
        for tool in tools:
            tool = _item(tool, "name")
            desc = _first_line(tool.get("description"))
            _out("%s%s" % (_signature(tool), "  - " + desc if desc else ""))
    for name in names:
        _print_tool(_find(tools, name, "tool"), opts.json)
    return EXIT_OK


def _listed(list_them: Callable[[], List[Any]], name: str) -> _Json:
    """The item named ``name`` of a listing (tools/list, prompts/list), whose schema converts and checks
    the arguments; {} when not listed (or the server cannot list): then JSON-when-it-parses, unchecked."""
    try:
        items = list_them()
    except RequestError:
        items = []
    return next((i for i in items if isinstance(i, dict) and i.get("name") == name), {})


def _run_call(client: Client, parsed: Tuple[str, List[str]], opts: argparse.Namespace) -> int:
    name, words = parsed
    arguments = _schema_arguments(words, opts.json_args, _listed(client.list_tools, name).get("inputSchema"), name)
    if opts.task:
        lines = _TaskLines()
        task = client.start(name, arguments, progress=lines.progress)
        named = None
        if task.id is not None:  # (a task outlives this command only where its server does: over HTTP)
            follow = " (follow it with: task %s)" % task.id if client.transport in ("streamable-http", "sse") else ""
            named = "mcp_min: task %s%s" % (task.id, follow)
        lines.named(named)
        try:
            value = task.result(opts.timeout)
        except ToolError as e:
            raise _CliError(EXIT_TOOL_ERROR, str(e))
        _print(value, opts.json)
        return EXIT_OK
    if opts.json:
        result = client.call_tool(name, arguments, progress=_show_progress)
        _print(result, True)
        return EXIT_TOOL_ERROR if result.get("isError") else EXIT_OK
    _print(client.call(name, arguments, progress=_show_progress), False)
    return EXIT_OK


def _stderr_line(text: str) -> None:
    """One line to stderr in one write: lines from two threads (the caller's, mcp_min-events) never mix.
    Made visible (_visible), newlines kept: it may carry server text (a message, an error)."""
    _to_stderr(_visible(text, True) + "\n")


def _show_progress(done: Any, total: Any, message: Any) -> None:
    if isinstance(message, str) and message.startswith("task ") and not done and total is None:
        _stderr_line("mcp_min: %s" % message)  # a task's status
        return
    _stderr_line("progress: %s%s%s" % (done, "/%s" % total if total is not None else "",
                                         " %s" % message if message else ""))


class _TaskLines(object):
    """``call --task``'s stderr lines in order: the task's status can arrive (on mcp_min-events)
    before ``start()`` returns the Task, so lines before the one naming it wait for that one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._early: List[Tuple[Any, Any, Any]] | None = []  # None once the task is named

    def progress(self, done: Any, total: Any, message: Any) -> None:
        with self._lock:
            if self._early is not None:
                self._early.append((done, total, message))
                return
        _show_progress(done, total, message)

    def named(self, line: str | None) -> None:
        """The line naming the task (None: no task was made), then what came before it."""
        with self._lock:  # (held while printing: a status arriving now waits, and comes after)
            if line is not None:
                _stderr_line(line)
            early, self._early = self._early or [], None
            for args in early:
                _show_progress(*args)


def _on_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty() and sys.stderr is not None and sys.stderr.isatty()


def _ask(question: str) -> str | None:
    """One answer typed on the terminal; the question goes to stderr (stdout is for results).
    EOF (Ctrl-D) is None."""
    sys.stderr.write(_visible(question))  # (one line: a newline in a server's label shows as \n)
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.rstrip("\r\n") if line else None


def _cli_url_elicitation(params: _Json) -> _Json:
    """URL-mode elicitation on the command line: show the URL; on a terminal, offer a browser."""
    import urllib.parse
    url = str(params.get("url", ""))
    host = urllib.parse.urlsplit(url).hostname or "?"
    _stderr_line("mcp_min: the server asks you to visit a URL: %s" % params.get("message", ""))
    _stderr_line("  %s\n  (site: %s%s)" % (_visible(url), _visible(host),
                                          "; an internationalized name, check it" if "xn--" in host else ""))
    if not _on_terminal():
        return {"action": "cancel"}  # nobody here to agree
    if (_ask("Open it in your browser? [y/N] ") or "").strip().lower() not in ("y", "yes"):
        return {"action": "decline"}
    try:
        import webbrowser
        webbrowser.open(url)
    except ImportError:  # (a stripped Python)
        _stderr_line("mcp_min: no browser to open from this Python: open the URL above yourself")
    _ask("Press Enter when you are done there... ")
    return {"action": "accept"}


def _cli_form_elicitation(params: _Json) -> _Json:
    """Form-mode elicitation: on a terminal, ask for each field of the requested schema (its type,
    default and choices), then accept, decline or cancel; without one, decline and say so."""
    message = _first_line(params.get("message")) or "(no message)"
    if not _on_terminal():
        _stderr_line("mcp_min: the server asks for input (%s); declined: no terminal to ask on" % message)
        return {"action": "decline"}
    schema = _dict_or_empty(params.get("requestedSchema"))
    props = _dict_or_empty(schema.get("properties"))
    required = _list_or_empty(schema.get("required"))
    _stderr_line("mcp_min: the server asks: %s" % params.get("message", ""))
    content: _Json = {}
    for key, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        choices = prop.get("enum") or [c.get("const") for c in prop.get("oneOf") or [] if isinstance(c, dict)]
        label = prop.get("title") or key
        hints = [_type_text(prop) if not choices else "one of: " + ", ".join(map(str, choices))]
        hints.append("required" if key in required else "optional")
        if "default" in prop:
            hints.append("default %s" % _dumps_for_humans(prop["default"]))
        if prop.get("description"):
            _stderr_line("  %s" % _first_line(prop["description"]))
        while True:
            answer = _ask("  %s (%s): " % (label, ", ".join(hints)))
            if answer is None:
                sys.stderr.write("\n")
                return {"action": "cancel"}
            if answer == "":
                if "default" in prop:
                    content[key] = prop["default"]
                    break
                if key not in required:
                    break
                sys.stderr.write("  (required)\n")
                continue
            try:
                value = _typed_value(answer, prop, key)
            except _UsageError as e:
                _stderr_line("  %s" % e)
                continue
            if choices and value not in choices:
                _stderr_line("  pick one of: %s" % ", ".join(map(str, choices)))
                continue
            content[key] = value
            break
    while True:
        answer = _ask("Send this? [a]ccept / [d]ecline / [c]ancel: ")
        choice = (answer or "c").strip().lower()[:1]
        if choice in ("a", "y"):
            return {"action": "accept", "content": content}
        if choice in ("d", "n"):
            return {"action": "decline"}
        if choice == "c":
            return {"action": "cancel"}


def _run_task(client: Client, task_id: str, opts: argparse.Namespace) -> int:
    task = client.task(task_id, progress=_show_progress)
    try:
        value = task.status() if opts.json else task.result()
    except ToolError as e:
        raise _CliError(EXIT_TOOL_ERROR, str(e))
    _print(value, opts.json)
    return EXIT_OK


def _run_resources(client: Client, parsed: None, opts: argparse.Namespace) -> int:
    offers = client.server_capabilities.get("resources") is not None
    if opts.json:
        _print({"resources": client.list_resources(),
                "resourceTemplates": client.list_resource_templates() if offers else []}, True)
        return EXIT_OK
    for item in client.list_resources():
        item = _item(item, "uri")
        desc = _first_line(item.get("description") or item.get("title") or item.get("name"))
        _out("%s%s" % (item.get("uri"), "  - " + desc if desc else ""))
    templates = client.list_resource_templates() if offers else []
    if templates:
        print("resource templates:")
    for item in templates:
        item = _item(item, "uriTemplate")
        desc = _first_line(item.get("description") or item.get("title") or item.get("name"))
        _out("  %s%s" % (item.get("uriTemplate"), "  - " + desc if desc else ""))
    return EXIT_OK


def _run_read(client: Client, uri: str, opts: argparse.Namespace) -> int:
    result = client.read_resource(uri)
    if opts.json:
        _print(result, True)
        return EXIT_OK
    for part in _field(result, "contents", list, "resources/read", []):
        part = part if isinstance(part, dict) else {"text": _dumps_for_humans(part)}
        if "text" in part:
            _content(part["text"])
        else:
            _out("<%s: %d characters of base64>" % (part.get("mimeType", "binary"), len(str(part.get("blob", "")))))
    return EXIT_OK


def _prompt_signature(prompt: _Json) -> str:
    args = _list_or_empty(prompt.get("arguments"))
    shown = ["%s%s" % (a.get("name"), "" if a.get("required") else "?") for a in args if isinstance(a, dict)]
    return "%s(%s)" % (prompt.get("name"), ", ".join(shown))


def _run_prompts(client: Client, parsed: None, opts: argparse.Namespace) -> int:
    prompts = client.list_prompts()
    if opts.json:
        _print(prompts, True)
        return EXIT_OK
    for prompt in prompts:
        prompt = _item(prompt, "name")
        desc = _first_line(prompt.get("description"))
        _out("%s%s" % (_prompt_signature(prompt), "  - " + desc if desc else ""))
    return EXIT_OK


def _run_prompt(client: Client, parsed: Tuple[str, List[str]], opts: argparse.Namespace) -> int:
    name, words = parsed
    prompt = _listed(client.list_prompts, name)
    declared = prompt.get("arguments") if isinstance(prompt.get("arguments"), list) else None
    schema = None
    if declared is not None:  # prompt arguments are strings; the same checks as a tool's
        schema = {"type": "object", "properties": {a.get("name"): {"type": "string"} for a in declared
                                                   if isinstance(a, dict) and isinstance(a.get("name"), str)},
                  "required": [a.get("name") for a in declared if isinstance(a, dict) and a.get("required")]}
    arguments = _schema_arguments(words, opts.json_args, schema or {"type": "object"}, name, "prompts")
    if schema is None:
        arguments = {k: v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
    result = client.get_prompt(name, arguments)
    if opts.json:
        _print(result, True)
        return EXIT_OK
    for m in _field(result, "messages", list, "prompts/get", []):
        m = m if isinstance(m, dict) else {}
        content = _dict_or_empty(m.get("content"))
        _content("%s: %s" % (m.get("role"), content.get("text", _dumps_for_humans(content))))
    return EXIT_OK


def _run_complete(client: Client, parsed: Tuple[str, List[str]], opts: argparse.Namespace) -> int:
    ref, words = parsed
    pairs = _split_pairs(words)
    if not pairs:
        raise _UsageError("complete %s needs ARG=PREFIX (the argument to complete)" % ref)
    (name, prefix), context = pairs[-1], dict(pairs[:-1])
    values = client.complete(ref, (name, prefix), context or None)
    if opts.json:
        _print(values, True)
    for value in [] if opts.json else values:
        _out(value)
    return EXIT_OK


def _run_skills(client: Client, parsed: None, opts: argparse.Namespace) -> int:
    skills = client.list_skills()
    if opts.json:
        _print(skills, True)
        return EXIT_OK
    for entry in skills:
        fm = _dict_or_empty(entry.get("frontmatter"))
        desc = _first_line(fm.get("description"))
        _out("%s%s  (%s)" % (fm.get("name"), "  - " + desc if desc else "", entry.get("uri")))
    return EXIT_OK


def _run_skill(client: Client, name: str, opts: argparse.Namespace) -> int:
    skill = client.read_skill(name)
    if not opts.json:
        _content(skill["text"], end="" if skill["text"].endswith("\n") else "\n")
        return EXIT_OK
    files: Dict[str, _Json] = {}
    for uri, data in skill["files"].items():
        try:
            files[uri] = {"size": len(data), "text": data.decode("utf-8")}
        except UnicodeDecodeError:
            files[uri] = {"size": len(data), "blob": base64.b64encode(data).decode("ascii")}
    _print(dict(skill, files=files), True)
    return EXIT_OK


def _run_ping(client: Client, parsed: None, opts: argparse.Namespace) -> int:
    client.ping()
    print("ok")
    return EXIT_OK


def _raw_args(args: List[str]) -> Tuple[str, _Json | None]:
    try:
        params = _json_arg(args[1], "raw params") if len(args) > 1 else None
    except _UsageError:
        raise
    except ValueError as e:
        raise _UsageError("raw: the params are not JSON: %s" % e)
    if params is not None and not isinstance(params, dict):
        raise _UsageError("raw: the params must be a JSON object")
    return args[0], params


def _run_raw(client: Client, parsed: Tuple[str, _Json | None], opts: argparse.Namespace) -> int:
    _print(client.request(*parsed), True)
    return EXIT_OK


def _run_servers(opts: argparse.Namespace) -> int:
    """The servers of the MCP config files found here (or of --config FILE): name, what it runs
    (as written) or "(disabled)", and where it is written.  A broken file or entry is reported in
    one line (exit 2); the others are still listed."""
    found, problems = _found_servers([("--config", opts.config, None)] if opts.config else _config_files())
    if not found and not problems:
        _stderr_line("mcp_min: %s" % ("no servers in %s" % opts.config if opts.config else "no MCP config file "
                     "here (looked for: %s)" % ", ".join(p for _, p, _ in _config_files())))
        return EXIT_OK
    rows: List[_Json] = []
    for name, label, path, where, entry in found:
        row: _Json = {"name": name, "host": label, "file": path, "entry": entry}
        try:
            server, _ = _server_entry(entry, "%s: %s" % (path, where), lambda text, at: text)  # (as written)
            row["disabled"] = server is None
            row["what"] = "(disabled)" if server is None else server if isinstance(server, str) else " ".join(server)
        except _UsageError as e:
            problems.append(e)
            row["error"] = str(e)
        rows.append(row)
    if opts.json:
        _print([{k: v for k, v in row.items() if k != "what"} for row in rows], True)
    else:
        for row in (row for row in rows if "what" in row):
            _out("%s  %s  (%s: %s)" % (row["name"], _shorten(row["what"], _COLUMN_CHARS), row["host"], row["file"]))
    for problem in problems:  # (a project's config file comes with its repository: shown as server text)
        _stderr_line("mcp_min: error: %s" % problem)
    return EXIT_USAGE if problems else EXIT_OK


def _shell_class() -> Callable[[Client, argparse.Namespace], cmd.Cmd]:
    import cmd

    class Shell(cmd.Cmd):
        """An interactive shell on one server: the CLI's commands (do_NAME, made from _COMMANDS
        below), tab completion, history."""
        prompt = "mcp> "

        def __init__(self, client: Client, opts: argparse.Namespace) -> None:
            cmd.Cmd.__init__(self)
            self.client, self.opts = client, opts
            self.intro = _visible("connected to %s; type help, or quit (Ctrl-D)"
                                  % (client.server_info.get("name") or "the server"))
            self.trace_handler: logging.Handler | None = None

        def onecmd(self, line: str) -> bool:
            try:
                return cmd.Cmd.onecmd(self, line)
            except (_UsageError, _CliError, McpError, ValueError) as e:
                _stderr_line("error: %s" % e)
            except KeyboardInterrupt:
                _stderr_line("(interrupted)")
            return False

        def emptyline(self) -> bool:
            return False  # not cmd's default: repeat the last command

        def default(self, line: str) -> None:  # (cmd's own says "*** Unknown syntax")
            _stderr_line("error: no command %r here (help lists them)" % line.split()[0])

        def do_trace(self, line: str) -> None:
            """trace on|off: show every JSON-RPC message on stderr"""
            on = line.strip().lower() in ("on", "1", "yes")
            if on and self.trace_handler is None:
                self.trace_handler = _trace_on()
            elif not on and self.trace_handler is not None:
                _log.removeHandler(self.trace_handler)
                _log.setLevel(logging.WARNING)
                _log.propagate = True
                self.trace_handler = None
            print("trace %s" % ("on" if on else "off"))

        def do_history(self, line: str) -> None:
            """history: the commands typed so far"""
            try:
                import readline
            except (ImportError, OSError):  # (OSError: see _run_shell)
                print("(no readline here: no history)")
                return
            for i in range(1, readline.get_current_history_length() + 1):
                print("%4d  %s" % (i, readline.get_history_item(i)))

        def do_quit(self, line: str) -> bool:
            """quit: leave the shell (also: exit, Ctrl-D)"""
            return True

        do_exit = do_quit

        def do_EOF(self, line: str) -> bool:
            """EOF (Ctrl-D): leave the shell"""
            if self.prompt:  # (on a terminal: end the prompt's line)
                print()
            return True

        def complete(self, text: str, state: int) -> str | None:  # type: ignore[override]  # typeshed: list[str]|None
            # cmd.Cmd.complete, made to work with PyPy 3.9's readline (pyrepl), where it silently
            # completes nothing: there get_line_buffer() gives bytes, and get_begidx/get_endidx
            # raise NameError (Python 2's xrange).  The word being completed is `text`; without the
            # bounds, the cursor is taken to be at the end of the line, where it is while typing.
            if state == 0:
                import readline
                buffer: str | bytes = readline.get_line_buffer()  # (bytes under pyrepl, whatever typeshed says)
                if isinstance(buffer, bytes):
                    buffer = buffer.decode("utf-8", "replace")
                try:
                    end = readline.get_endidx()
                except NameError:
                    end = len(buffer)
                line = buffer.lstrip()
                end -= len(buffer) - len(line)
                begin = end - len(text)
                if begin > 0:
                    command = self.parseline(line)[0]
                    find = getattr(self, "complete_" + command, self.completedefault) if command else self.completedefault
                else:
                    find = self.completenames
                self.completion_matches = find(text, line, begin, end)
            try:
                return (self.completion_matches or [])[state]  # (set at state 0, which readline asks first)
            except IndexError:
                return None

        def names(self, items: Iterable[Any], key: str, text: str) -> List[str]:
            # readline shows the matches raw: a name with a terminal control is left out (an escaped
            # one would name nothing); `tools` still lists it, made visible
            return [str(i.get(key)) for i in items if isinstance(i, dict) and str(i.get(key)).startswith(text)
                    and _visible(i.get(key)) == str(i.get(key))]

        def complete_call(self, text: str, line: str, begidx: int, endidx: int) -> List[str]:
            words = line[:begidx].split()
            tools = self.client.list_tools()
            if len(words) <= 1:  # (readline adds no space after a match: the name is then complete)
                return [name + " " for name in self.names(tools, "name", text)]
            tool: _Json = next((t for t in tools if isinstance(t, dict) and t.get("name") == words[1]), {})
            schema = _dict_or_empty(tool.get("inputSchema"))
            props = _dict_or_empty(schema.get("properties"))
            given = set(w.split("=", 1)[0] for w in words[2:])
            return [k + "=" for k in props if k.startswith(text) and k not in given and _visible(k) == k]

        def complete_tools(self, text: str, line: str, begidx: int, endidx: int) -> List[str]:
            return self.names(self.client.list_tools(), "name", text)

        complete_tool = complete_tools

        def complete_prompt(self, text: str, line: str, begidx: int, endidx: int) -> List[str]:
            return self.names(self.client.list_prompts(), "name", text) if len(line[:begidx].split()) <= 1 else []

        def complete_read(self, text: str, line: str, begidx: int, endidx: int) -> List[str]:
            return self.names(self.client.list_resources(), "uri", text)

    def command(name: str) -> Callable[[Shell, str], None]:
        def run(self: Shell, line: str) -> None:
            import shlex
            _COMMANDS[name][2](self.client, _command_words(name, shlex.split(line)), self.opts)
        run.__doc__ = _command_help(name, True)  # (what cmd's help prints)
        return run

    for name in _COMMANDS:  # every command, but these two: it would need no server, or is this shell
        if name not in ("servers", "shell"):
            setattr(Shell, "do_" + name, command(name))
    return Shell


def _run_shell(client: Client, parsed: None, opts: argparse.Namespace) -> int:
    try:
        import readline  # line editing, history and tab completion, where the platform has it
        readline.set_completer_delims(" \t\n")
        readline.parse_and_bind("tab: complete")
    except (ImportError, OSError):  # (OSError: PyPy's readline, pyrepl, on a closed descriptor 0)
        pass
    shell = _shell_class()(client, opts)
    if not _on_terminal():  # commands from a pipe or file: only their output, no banner or prompts
        shell.intro, shell.prompt = None, ""
    if sys.stdin is None or sys.stdout is None:  # (pythonw.exe, a service): cmd would call None
        import io  # no commands to read, as from an empty pipe; cmd's own output (help) to nowhere, as print()'s
        shell.stdin, shell.use_rawinput = sys.stdin or io.StringIO(), False
        shell.stdout = sys.stdout or io.StringIO()
    shell.cmdloop()
    return EXIT_OK


_COMMANDS: Dict[str, Tuple[int, _CliParse, _CliRun, str, str]] = {
    # name: (arguments needed, parse(args) before connecting, run(client, parsed, opts) -> exit status,
    #        its arguments and what it does: the help of --help and of the shell)
    "info": (0, lambda args: None, _run_info, "", "server name, version, protocol, capabilities"),
    "tools": (0, lambda args: list(args), _run_tools, "[NAME]",
              "list tools as signatures; with NAME, that tool in full"),
    "tool": (1, lambda args: list(args), _run_tools, "NAME",
             "one tool in full: parameters, annotations, output schema"),
    "call": (1, lambda args: (args[0], _call_words(args[1:])), _run_call, "NAME [key=value ...] [JSON]",
             "call a tool; values are converted by the tool's input schema (a whole JSON object, or --args "
             "JSON, also works)"),
    "resources": (0, lambda args: None, _run_resources, "", "list resources, then resource templates"),
    "read": (1, lambda args: args[0], _run_read, "URI", "read a resource"),
    "prompts": (0, lambda args: None, _run_prompts, "", "list prompts with their arguments"),
    "prompt": (1, lambda args: (args[0], args[1:]), _run_prompt, "NAME [key=value ...]", "get a prompt"),
    "complete": (2, lambda args: (args[0], args[1:]), _run_complete, "REF ARG=PREFIX",
                 "completions of a prompt's (REF = its name) or a resource template's (REF = the template) "
                 "argument"),
    "skills": (0, lambda args: None, _run_skills, "", "list skills (the io.modelcontextprotocol/skills extension)"),
    "skill": (1, lambda args: args[0], _run_skill, "NAME|URI",
              "read a skill, verified against its entry; print its SKILL.md"),
    "ping": (0, lambda args: None, _run_ping, "", "check the server answers"),
    "raw": (1, _raw_args, _run_raw, "METHOD [JSON]", "send any request, print the raw result"),
    "task": (1, lambda args: args[0], _run_task, "ID",
             "wait (up to --timeout) for a task and print its value; with --json print its status now"),
    "servers": (0, lambda args: None, lambda client, parsed, opts: _run_servers(opts),  # (_main runs it unconnected)
                "", "list the servers in your MCP config files or --config FILE"),
    "shell": (0, lambda args: None, _run_shell, "", "an interactive shell on the server (tab completion, history)"),
}


def _command_words(command: str, args: List[str]) -> Any:
    """A command's arguments, checked and parsed (before connecting) by its row of _COMMANDS."""
    needs, parse = _COMMANDS[command][:2]
    if len(args) < needs:
        raise _UsageError("%s needs an argument" % command)
    return parse(args)


def _command_help(name: str, shell: bool = False) -> str:
    """A command's help from _COMMANDS: a row of --help's table, or (``shell``) the shell's ``help NAME``."""
    import textwrap
    words = (name + " " + _COMMANDS[name][3]).rstrip()
    text = _COMMANDS[name][4]
    if shell:
        # (no indent on its second line: cmd prints a docstring as it is before Python 3.13 and dedented
        # from 3.13 on, so only an unindented text reads the same on every version)
        return textwrap.fill("%s: %s" % (words, text), HELP_WIDTH)
    column = " " * HELP_COLUMN
    if len(words) > HELP_COLUMN - 4:  # (at least two spaces between the command and its text)
        return "  %s\n%s" % (words, textwrap.fill(text, HELP_WIDTH, initial_indent=column, subsequent_indent=column))
    return textwrap.fill(text, HELP_WIDTH, initial_indent="  %-*s" % (HELP_COLUMN - 2, words),
                         subsequent_indent=column)


class _VisibleFormatter(logging.Formatter):
    """The command line's log lines, made visible: they carry server text (its log messages, a
    warning quoting what it sent, the JSON-RPC trace)."""

    def format(self, record: logging.LogRecord) -> str:
        return _visible(logging.Formatter.format(self, record), True)


def _trace_on() -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_VisibleFormatter("%(asctime)s %(name)s %(message)s"))
    _log.addHandler(handler)
    _log.setLevel(logging.DEBUG)
    _log.propagate = False  # (the shell's warnings handler on the root logger would print each line again)
    return handler


def _error_status(error: Exception, connected: bool) -> int:
    """The exit status of an exception, by the one table in _USAGE."""
    if isinstance(error, _MissingModule):  # (this Python, not the server: "other")
        return EXIT_OTHER
    if isinstance(error, (AuthRequired, AuthError)) or isinstance(error, HttpError) and error.status in (401, 403):
        return EXIT_AUTH
    if isinstance(error, ToolError):
        return EXIT_TOOL_ERROR
    if isinstance(error, (ConnectionClosed, RequestTimeout, HttpError)) or not connected:
        return EXIT_UNREACHABLE  # (an HTML page, a 5xx or a malformed answer while connecting as well)
    return EXIT_OTHER


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never raises, never prints a traceback)."""
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show a character must not crash us
        reconfigure = getattr(stream, "reconfigure", None)  # (a TextIOWrapper's; not every stream has it)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        # the reader went away (`| head -1`): stop quietly, like any Unix tool, and keep the
        # interpreter's last flush from complaining on the closed pipe
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_BROKEN_PIPE


def _main(argv: List[str]) -> int:
    try:
        opts, server, parsed = _parse_cli(argv)
        if server is None:
            return _run_servers(opts)
    except _UsageError as e:
        _stderr_line("mcp_min: error: %s" % e)
        return EXIT_USAGE
    if opts.trace:
        _trace_on()
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_VisibleFormatter("mcp_min: %(message)s"))
        logging.basicConfig(level=logging.WARNING, handlers=[handler])
    client: Client | None = None
    try:
        auth = None
        if opts.oauth or opts.client_id or opts.assertion_file or opts.dpop:
            grant = {"grant_type": "jwt-bearer", "assertion_file": opts.assertion_file} if opts.assertion_file else {}
            auth = OAuth(client_id=opts.client_id, client_secret=opts.client_secret, dpop=opts.dpop or None, **grant)
        tls: _Json = {}
        if isinstance(server["server"], str):  # (a URL: the HTTP options apply)
            tls = {"transport": opts.transport, "verify": False if opts.insecure else opts.cacert or True,
                   "cert": (opts.cert, opts.key) if opts.key else opts.cert}
            if opts.insecure:
                _stderr_line("mcp_min: WARNING: --insecure: TLS certificates are NOT verified; anyone on the "
                             "network can read and change this traffic, credentials included")
        try:
            client = Client(server["server"], timeout=opts.timeout, protocol_version=opts.protocol_version,
                            env=server["env"], inherit_env=opts.inherit_env, cwd=server["cwd"],
                            headers=server["headers"], auth=auth,
                            elicitation=_cli_form_elicitation, url_elicitation=_cli_url_elicitation, **tls)
        except McpError as e:
            raise _CliError(_error_status(e, False), str(e))  # (the hint is in the message: see _connect_hint)
        with client:
            status = _COMMANDS[opts.command][2](client, parsed, opts)
            if sys.stdout is not None:  # (None: pythonw.exe, a service; print() wrote nothing)
                sys.stdout.flush()  # here, so a closed pipe is met inside the try
            return status
    except BrokenPipeError:
        raise
    except _CliError as e:
        status, message = e.status, str(e)
    except _UsageError as e:
        status, message = EXIT_USAGE, "error: %s" % e
    except McpError as e:
        status, message = _error_status(e, True), str(e)  # (with its hint: see _hinted)
    except ValueError as e:  # arguments the client refused (a header, the environment...)
        status, message = EXIT_USAGE, "error: %s" % e
    except ImportError as e:  # an embedded Python without subprocess, select, signal...
        status, message = EXIT_OTHER, "this Python has no %r module, which %s needs" % (
            e.name or str(e), "running a stdio server" if isinstance(server["server"], list) else "this command")
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug of ours: still one line, never a traceback
        status, message = EXIT_OTHER, "internal error (%s): %s" % (type(e).__name__, e)
    _stderr_line("mcp_min: %s" % message)
    return status


if __name__ == "__main__":
    sys.exit(main())
