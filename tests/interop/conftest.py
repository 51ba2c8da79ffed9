"""pytest setup for the interop tier: the ``interop`` marker and the peer fixtures."""

import os

import pytest

import peers


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "interop: runs mcp_min against real MCP peers (installed by .ci/install-peers)")


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if str(item.fspath).startswith(here + os.sep):
            item.add_marker(pytest.mark.interop)


def _require(reason):
    if reason:
        pytest.skip(reason)


def _serve(tmp_path_factory, name, missing, start):
    """Start an HTTP peer with its log in a fresh temp folder; yield its URL; stop it."""
    _require(missing)
    peer, url = start(str(tmp_path_factory.mktemp(name) / "server.log"))
    try:
        yield url
    finally:
        peer.stop()


@pytest.fixture(scope="module")
def sdk_http_url(tmp_path_factory):
    """The SDK test server over Streamable HTTP on a free 127.0.0.1 port (one per module)."""
    yield from _serve(tmp_path_factory, "sdk-http", peers.venv_missing(), peers.start_sdk_http)


@pytest.fixture(scope="module")
def everything_http_url(tmp_path_factory):
    """server-everything over Streamable HTTP (one per module)."""
    yield from _serve(tmp_path_factory, "everything-http", peers.npm_missing(),
                      lambda log: peers.start_everything("streamableHttp", log))


@pytest.fixture(scope="module")
def everything_sse_url(tmp_path_factory):
    """server-everything over the legacy HTTP+SSE transport (one per module)."""
    yield from _serve(tmp_path_factory, "everything-sse", peers.npm_missing(),
                      lambda log: peers.start_everything("sse", log))


@pytest.fixture(scope="module")
def fastmcp_tasks_http_url(tmp_path_factory):
    """The FastMCP 4.1.4 + fastmcp-tasks server over Streamable HTTP (one per module)."""
    yield from _serve(tmp_path_factory, "fastmcp-tasks-http", peers.fastmcp_tasks_missing(),
                      peers.start_fastmcp_tasks_http)
