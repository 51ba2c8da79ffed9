"""What each request carries besides its params: the client-wide log level and the W3C trace
context (SEP-414), in both eras.  The server is tests/inproc_server.py over Client.over();
every request is checked against the official schema of its version."""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from inproc_server import Server, serve_in_thread  # noqa: E402
from mcp_min import Client  # noqa: E402

LEVEL = "io.modelcontextprotocol/logLevel"
PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def requests_of(server):
    return [m for _, m in server.received if "id" in m and "method" in m]


def valid(version, msgs):
    import jsonschema
    with open(os.path.join(HERE, "schema", version, "schema.json"), encoding="utf-8") as f:
        root = json.load(f)
    defs = "$defs" if "$defs" in root else "definitions"
    validator = jsonschema.validators.validator_for(root)(dict(root, **{"$ref": "#/%s/ClientRequest" % defs}))
    for msg in msgs:
        errors = list(validator.iter_errors(msg))
        assert not errors, "%s is not a valid ClientRequest: %s" % (msg, errors[0].message)
    return True


def connect(server, **options):
    reader, writer, _ = serve_in_thread(server)
    return Client.over(reader, writer, **options)


def test_log_level_on_every_stateless_request_and_a_request_may_say_otherwise():
    server = Server()
    with connect(server, log_level="warning") as c:
        c.list_tools()
        c.call("add", a=1, b=2)
        c.request("tools/list", {"_meta": {LEVEL: "debug"}})
    sent = requests_of(server)
    assert [m["params"]["_meta"][LEVEL] for m in sent] == ["warning", "warning", "warning", "debug"]
    assert [m["method"] for m in sent] == ["server/discover", "tools/list", "tools/call", "tools/list"]
    assert valid("2026-07-28", sent)


def test_log_level_in_the_handshake_era_is_one_set_level():
    server = Server()
    with connect(server, log_level="error", protocol_version="2025-11-25") as c:
        c.call("add", a=1, b=2)
    sent = requests_of(server)
    assert [m["method"] for m in sent] == ["initialize", "logging/setLevel", "tools/call"]
    assert sent[1]["params"] == {"level": "error"}
    assert all(LEVEL not in (m.get("params") or {}).get("_meta", {}) for m in sent)
    quiet = Server(legacy_logging=False)  # no logging capability: nothing asked
    with connect(quiet, log_level="error", protocol_version="2025-11-25"):
        pass
    assert [m["method"] for m in requests_of(quiet)] == ["initialize"]


def test_no_log_level_no_key():
    server = Server()
    with connect(server) as c:
        c.list_tools()
    assert all(LEVEL not in m["params"]["_meta"] for m in requests_of(server))


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
def test_trace_context_goes_into_each_request(version):
    spans = iter(range(100))

    def current():
        return {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-%016x-01" % (next(spans) + 1),
                "tracestate": "congo=t61rcWkgMzE"}
    server = Server()
    with connect(server, trace_context=current, protocol_version=version) as c:
        c.call("add", a=1, b=2, progress=lambda *a: None)
        c.request("tools/list", {"_meta": {"traceparent": PARENT}})  # a request's own wins
    sent = requests_of(server)
    metas = [m["params"]["_meta"] for m in sent]
    assert all(meta["tracestate"] == "congo=t61rcWkgMzE" for meta in metas)
    assert [meta["traceparent"][-19:-3] for meta in metas[:-1]] == ["%016x" % (i + 1) for i in range(len(metas) - 1)]
    assert metas[-1]["traceparent"] == PARENT
    assert "progressToken" in metas[-2]  # beside the others
    assert valid("2026-07-28" if version == "auto" else version, sent)


def test_no_trace_means_no_keys_and_bad_hooks_are_clear():
    server = Server()
    answers = iter([None, {}, {"traceparent": "not-one"}, {"traceid": "x"}, {"traceparent": 5}])
    with connect(server, trace_context=lambda: next(answers)) as c:  # None, {}: discover, then tools/list
        c.list_tools()
        for _ in range(3):
            with pytest.raises(ValueError, match="trace_context"):
                c.call("add", a=1, b=2)
    assert all("traceparent" not in m["params"]["_meta"] for m in requests_of(server))


@pytest.mark.parametrize("options, says", [({"log_level": "loud"}, "log_level"), ({"trace_context": "x"}, "callable")])
def test_bad_options(options, says):
    with pytest.raises(ValueError, match=says):
        Client(["/nonexistent/never-started"], **options)
