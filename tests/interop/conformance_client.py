"""Client under test for the MCP conformance suite (@modelcontextprotocol/conformance).

The suite starts a mock server per scenario and runs this file with the mock's URL
appended as the last argument.  It names the scenario in MCP_CONFORMANCE_SCENARIO,
may pass scenario data as JSON in MCP_CONFORMANCE_CONTEXT, and (0.2.0 only) the spec
revision in MCP_CONFORMANCE_PROTOCOL_VERSION.  Only mcp_min's public API is used.

    python tests/interop/conformance_client.py http://localhost:PORT/mcp

Exit status: 0 when the scenario's steps ran, 1 when mcp_min raised, 2 on bad usage.
MCP_MIN_TRACE=1 logs every message mcp_min sends and receives to stderr.
"""

import json
import logging
import os
import sys
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_min  # noqa: E402


def _accept(content):
    """An elicitation handler that accepts with ``content`` (mcp_min fills in schema defaults)."""

    def handler(params):
        return {"action": "accept", "content": dict(content)}

    return handler


def _connect(url, **kwargs):
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "auto"
    return mcp_min.Client(url, protocol_version=version, timeout=20, **kwargs)


def scenario_initialize(url, ctx):
    with _connect(url) as client:
        client.list_tools()


def scenario_tools_call(url, ctx):
    with _connect(url) as client:
        names = [t["name"] for t in client.list_tools()]
        if "add_numbers" not in names:
            raise SystemExit("add_numbers not listed: %s" % names)
        value = client.call("add_numbers", a=2, b=3)
        if "5" not in str(value):
            raise SystemExit("unexpected add_numbers result: %r" % (value,))


def scenario_elicitation_defaults(url, ctx):
    # Accept with no content at all: every field must come from its schema default.
    with _connect(url, elicitation=_accept({})) as client:
        client.list_tools()
        client.call("test_client_elicitation_defaults")


def scenario_sse_retry(url, ctx):
    with _connect(url) as client:
        client.list_tools()
        client.call("test_reconnection")


def scenario_request_metadata(url, ctx):
    with _connect(url, roots=["/tmp"], elicitation=_accept({}),
                  sampling=lambda params: {"role": "assistant", "model": "none",
                                           "content": {"type": "text", "text": ""}}) as client:
        client.list_tools()
        client.ping()


def scenario_request_state(url, ctx):
    with _connect(url, elicitation=_accept({"confirmed": True})) as client:
        client.list_tools()
        # Let the first answer (input_required) arrive, make an unrelated call, and only
        # then let mcp_min finish the first call's input round.
        pending = client.submit("test_mrtr_echo_state")
        deadline = time.monotonic() + 10
        while not pending.done() and time.monotonic() < deadline:
            time.sleep(0.01)
        client.call("test_mrtr_unrelated")
        pending.result()
        client.call("test_mrtr_no_state")
        client.call("test_mrtr_no_result_type")


def scenario_standard_headers(url, ctx):
    with _connect(url) as client:
        tools = [t["name"] for t in client.list_tools()]
        for name in tools:
            client.call_tool(name, {})
        for res in client.list_resources():
            client.read_resource(res["uri"])
        for prompt in client.list_prompts():
            client.get_prompt(prompt["name"])


def scenario_custom_headers(url, ctx):
    with _connect(url) as client:
        client.list_tools()
        for call in ctx.get("toolCalls") or ():
            client.call_tool(call["name"], call.get("arguments") or {})


def scenario_invalid_tool_headers(url, ctx):
    with _connect(url) as client:
        listed = {t["name"] for t in client.list_tools()}
        # mcp_min hides tools whose x-mcp-header markings are invalid; call what is left.
        for name in sorted(listed):
            client.call_tool(name, {"region": "us-west1"} if name == "valid_tool" else {})


def scenario_ref_no_deref(url, ctx):
    with _connect(url) as client:
        client.list_tools()


def scenario_schema_preservation(url, ctx):
    with _connect(url) as client:
        tools = {t["name"]: t for t in client.list_tools()}
        schema = tools["json_schema_2020_12_tool"]["inputSchema"]
        client.call_tool("json_schema_echo", {"schema": schema})


def scenario_skills_no_prefetch(url, ctx):
    # Connecting and listing must not fetch any skill file.
    with _connect(url) as client:
        if not client.list_skills():
            raise SystemExit("skills/list returned no skills")


def scenario_skills_verify(url, ctx):
    # The mock's SKILL.md contradicts its entry (digest, size or frontmatter): loading the
    # skill must fail verification before any other file of it is fetched.
    with _connect(url) as client:
        entry = client.list_skills()[0]
        try:
            client.read_skill(entry)
        except mcp_min.SkillVerificationError as e:
            wanted = os.environ.get("MCP_CONFORMANCE_SCENARIO", "").rsplit("-", 1)[-1]  # digest, size, frontmatter
            if e.problem != wanted:
                raise SystemExit("refused, but for %s rather than %s: %s" % (e.problem, wanted, e))
            print("conformance_client: refused as expected: %s" % e, file=sys.stderr)
            return
        raise SystemExit("the skill was loaded although it does not match its entry")


def scenario_auth(url, ctx):
    # The OAuth flows (headless authorization, client credentials, CIMD) live in the
    # auth driver beside this file; it reads the same argv and environment.
    import conformance_auth
    if conformance_auth.main() != 0:
        raise SystemExit(1)


SCENARIOS = {
    "initialize": scenario_initialize,
    "tools_call": scenario_tools_call,
    "elicitation-sep1034-client-defaults": scenario_elicitation_defaults,
    "sse-retry": scenario_sse_retry,
    "request-metadata": scenario_request_metadata,
    "sep-2322-client-request-state": scenario_request_state,
    "http-standard-headers": scenario_standard_headers,
    "http-custom-headers": scenario_custom_headers,
    "http-invalid-tool-headers": scenario_invalid_tool_headers,
    "json-schema-ref-no-deref": scenario_ref_no_deref,
    "json-schema-2020-12-preservation": scenario_schema_preservation,
    "sep-2640-client-no-prefetch": scenario_skills_no_prefetch,
    "sep-2640-client-verify-digest": scenario_skills_verify,
    "sep-2640-client-verify-size": scenario_skills_verify,
    "sep-2640-client-verify-frontmatter": scenario_skills_verify,
}


def main(argv):
    if len(argv) < 2:
        print("usage: conformance_client.py URL (scenario in MCP_CONFORMANCE_SCENARIO)", file=sys.stderr)
        return 2
    url = argv[-1]
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if os.environ.get("MCP_MIN_TRACE"):
        logging.basicConfig(stream=sys.stderr, level=logging.DEBUG,
                            format="%(relativeCreated)6d %(threadName)s %(name)s %(message)s")
    run = SCENARIOS.get(name) or (scenario_auth if name.startswith("auth/") else None)
    if run is None:
        print("conformance_client: unknown scenario %r" % name, file=sys.stderr)
        return 2
    try:
        run(url, ctx)
    except mcp_min.McpError as e:
        print("conformance_client: %s: %s: %s" % (name, type(e).__name__, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
