"""mcp_min against @cyanheads/git-mcp-server@2.15.3, a third-party server (handshake era only).

Over stdio and Streamable HTTP, with ``protocol_version="auto"``: it connects at 2025-11-25,
lists the server's 28 tools, runs git_status on a repository made here (in a temp folder, the
server's GIT_BASE_DIR), keeps the session's working directory between calls, and close()
leaves no process (stdio) and no server session (HTTP) behind.

Over HTTP this server answers the ``server/discover`` probe with **500** and a JSON-RPC error
whose id is null (``-32603 "Error in httpTransport: "``).  mcp_min used to take that 500 for an
outage and fail to connect; the era policy (``_era_verdict``) now reads any JSON-RPC error as
a handshake-era server, whatever the status.  ``test_http_discover_answer`` pins the answer, so
that the HTTP column keeps testing that path.  Over stdio the probe gets -32601.

The server writes nothing outside the test's temp folders: its HOME, TMPDIR and working
directory (where its dotenv would read a .env) are temp folders, LOGS_DIR is unset (pino then
logs to stderr only: the HTTP server's stderr goes to its log file in a temp folder, the stdio
server's to mcp_min's ``Client.stderr``).  One client per transport, shared by the module (one
xdist group, so one process starts each server once); the last test closes it.
"""

import json
import os
import subprocess
import threading
import types
import urllib.error
import urllib.request

import pytest

import peers
import mcp_min
from testsupport import processes

pytestmark = [pytest.mark.skipif(bool(peers.git_server_missing()), reason=peers.git_server_missing() or ""),
              pytest.mark.xdist_group("test_git_server")]

TRANSPORTS = ["stdio", "streamable-http"]
SERVER_INFO = {"name": "@cyanheads/git-mcp-server", "version": "2.15.3"}
TOOLS = {
    "git_add", "git_blame", "git_branch", "git_changelog_analyze", "git_checkout", "git_cherry_pick",
    "git_clean", "git_clear_working_dir", "git_clone", "git_commit", "git_diff", "git_fetch", "git_init",
    "git_log", "git_merge", "git_pull", "git_push", "git_rebase", "git_reflog", "git_remote", "git_reset",
    "git_set_working_dir", "git_show", "git_stash", "git_status", "git_tag", "git_worktree",
    "git_wrapup_instructions",
}
READ_ONLY_TOOLS = {"git_blame", "git_changelog_analyze", "git_diff", "git_log", "git_reflog", "git_show",
                   "git_status", "git_wrapup_instructions"}
# git_status of the repository the `repo` fixture makes.
STATUS = {
    "success": True, "currentBranch": "main", "isClean": False,
    "stagedChanges": {"added": ["staged.txt"]}, "unstagedChanges": {"modified": ["tracked.txt"]},
    "untrackedFiles": ["untracked.txt"], "conflictedFiles": [],
}


def _git(repo, home, *args):
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "Interop", "GIT_AUTHOR_EMAIL": "interop@example.com",
           "GIT_COMMITTER_NAME": "Interop", "GIT_COMMITTER_EMAIL": "interop@example.com"}
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"] + list(args),
                   cwd=repo, env=env, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=30)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """A git repository in a temp folder: one commit on main, then a staged new file, an
    unstaged change and an untracked file; plus a HOME for each server."""
    base = tmp_path_factory.mktemp("git-server")
    path, home = base / "repo", base / "home-setup"
    path.mkdir()
    home.mkdir()
    _git(str(path), str(home), "init", "-q")
    (path / "tracked.txt").write_text("one\n")
    _git(str(path), str(home), "add", "tracked.txt")
    _git(str(path), str(home), "commit", "-q", "-m", "first commit")
    (path / "tracked.txt").write_text("two\n")
    (path / "staged.txt").write_text("staged\n")
    _git(str(path), str(home), "add", "staged.txt")
    (path / "untracked.txt").write_text("untracked\n")
    homes = {}
    for kind in TRANSPORTS:
        homes[kind] = base / ("home-" + kind)
        homes[kind].mkdir()
    return types.SimpleNamespace(path=str(path), homes={k: str(v) for k, v in homes.items()})


@pytest.fixture(scope="module")
def git_http(tmp_path_factory, repo):
    """The server over Streamable HTTP on a free 127.0.0.1 port (one per module)."""
    log_path = str(tmp_path_factory.mktemp("git-server-http") / "server.log")
    peer, url = peers.start_git_server_http(repo.path, repo.homes["streamable-http"], log_path)
    try:
        yield types.SimpleNamespace(url=url, log_path=log_path)
    finally:
        peer.stop()


def _children():
    """pid -> process group of this process's children, from /proc."""
    return _procs(lambda ppid, pgrp: ppid == os.getpid())


def _group(pgid):
    """The pids of the processes in the process group ``pgid``, from /proc."""
    return set(_procs(lambda ppid, pgrp: pgrp == pgid))


def _procs(wanted):
    return {pid: pgrp for pid, (_, ppid, pgrp) in processes().items() if wanted(ppid, pgrp)}


def _mcp_min_threads():
    return {t for t in threading.enumerate() if t.name.startswith("mcp_min")}


@pytest.fixture(scope="module", params=TRANSPORTS)
def client(request, repo):
    http = request.getfixturevalue("git_http") if request.param == "streamable-http" else None
    children, threads = _children(), _mcp_min_threads()  # (the HTTP server's process among them)
    if http is None:
        home = repo.homes["stdio"]
        c = mcp_min.Client(peers.git_server_stdio_argv(), protocol_version="auto", timeout=30,
                           env=peers.git_server_env(repo.path, home), cwd=home)
    else:
        c = mcp_min.Client(http.url, protocol_version="auto", timeout=30)
        c.http_log = http.log_path
    c.kind, c.repo, c.children_before, c.threads_before = request.param, repo, children, threads
    c.started = {pid: pgrp for pid, pgrp in _children().items() if pid not in children}
    try:
        yield c
    finally:
        c.close()


def test_http_discover_answer(git_http):
    """The answer that made mcp_min fail to connect: server/discover -> 500 and a JSON-RPC error."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "interop-probe", "version": "0"}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    req = urllib.request.Request(git_http.url, data=json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10).close()
    with info.value as answer:
        assert answer.code == 500
        assert answer.headers.get_content_type() == "application/json"
        assert "mcp-session-id" not in answer.headers
        assert json.loads(answer.read()) == {
            "jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "Error in httpTransport: "}}


def test_connects_at_2025_11_25(client):
    assert client.transport == client.kind
    assert client.protocol_version == "2025-11-25"  # auto: server/discover fails (stdio -32601, HTTP 500)
    assert client.server_info == SERVER_INFO
    assert client.server_capabilities == {"logging": {}, "resources": {"listChanged": True},
                                          "tools": {"listChanged": True}, "prompts": {"listChanged": True}}
    if client.kind == "stdio":
        assert len(client.started) == 1  # the server, in a process group of its own
        ((pid, pgrp),) = client.started.items()
        assert pgrp == pid
    else:
        assert client.started == {}


def test_lists_its_tools(client):
    tools = {t["name"]: t for t in client.list_tools()}
    assert set(tools) == TOOLS
    assert {name for name, t in tools.items() if t["annotations"].get("readOnlyHint")} == READ_ONLY_TOOLS
    status = tools["git_status"]
    assert status["title"] == "Git Status"
    assert set(status["inputSchema"]["properties"]) == {"path", "includeUntracked"}
    assert status["outputSchema"]["type"] == "object"


def test_git_status(client):
    result = client.call_tool("git_status", {"path": client.repo.path})
    assert not result.get("isError")
    assert result["structuredContent"] == STATUS
    (part,) = result["content"]
    assert part["type"] == "text" and json.loads(part["text"]) == STATUS
    # call() gives the structured content, checked against the tool's outputSchema
    assert client.call("git_status", path=client.repo.path, includeUntracked=False) == dict(
        STATUS, untrackedFiles=[])


def test_session_working_directory(client):
    """Session state kept between calls (over HTTP: the Mcp-Session-Id mcp_min sends back)."""
    with pytest.raises(mcp_min.ToolError) as info:
        client.call("git_status")
    assert "No session working directory set" in str(info.value)
    answer = client.call("git_set_working_dir", path=client.repo.path)
    assert answer["success"] is True and answer["path"] == client.repo.path
    assert answer["repository"]["status"]["branch"] == "main"
    assert client.call("git_status") == STATUS


def test_close_leaves_nothing_behind(client):
    client.close()
    assert peers.wait_for(lambda: set(_children()) <= set(client.children_before))
    for pgid in client.started:  # the stdio server's group: git children included
        assert peers.wait_for(lambda pgid=pgid: not _group(pgid)), _group(pgid)
    assert peers.wait_for(lambda: _mcp_min_threads() <= client.threads_before), _mcp_min_threads()
    if client.kind == "streamable-http":  # close() ended the server's session (DELETE)
        def terminated():
            with open(client.http_log) as f:
                return [json.loads(line) for line in f if '"Session explicitly terminated"' in line]
        lines = peers.wait_for(terminated)
        assert [line["remainingSessions"] for line in lines] == [0]
    home = client.repo.homes[client.kind]
    assert os.listdir(home) == ["tmp"] and os.listdir(os.path.join(home, "tmp")) == []  # nothing written
