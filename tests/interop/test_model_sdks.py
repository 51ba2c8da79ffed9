"""End to end with the real provider SDKs: openai (Chat Completions and the Responses API) and
anthropic (Messages), each pointed (base_url=) at a stand-in model server on 127.0.0.1 that checks
every request's tools and tool results against the providers' documented rules and answers with
scripted tool calls, until the loop ends with a final answer.  Over stdio (tests/model_server.py)
and over a Group of two servers (it and examples/tour.py), with and without strict mode.

The SDKs are test-only peers in .cache/venv (tests/interop/requirements-peers.txt); the loop runs
there, in tests/interop/model_sdk_loop.py, and says what the model read.
"""
import json
import os
import subprocess

import pytest

import peers

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "model_sdk_loop.py")
SDK_MISSING = 77  # model_sdk_loop.py's exit status when the venv has no openai or anthropic


PROVIDERS = ["openai", "openai-responses", "anthropic"]
LOOPS = [(mode, strict) for mode in ("stdio", "group") for strict in ("loose", "strict")]
_LOOPS_RUN = {}  # provider: (the process's result, {"MODE STRICT": its loop's JSON line})


def loops_of(provider):
    """Every loop of one provider, run once per test process in one venv process: importing the SDKs
    takes seconds of CPU, so a process per loop cost four times as much."""
    if provider not in _LOOPS_RUN:
        words = [w for mode, strict in LOOPS for w in (provider, mode, strict)]
        done = subprocess.run([peers.VENV_PYTHON, LOOP] + words, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=240)
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"loop"')]
        _LOOPS_RUN[provider] = (done, {line["loop"].split(" ", 1)[1]: line for line in lines})
    return _LOOPS_RUN[provider]


@pytest.mark.parametrize("strict", ["loose", "strict"])
@pytest.mark.parametrize("mode", ["stdio", "group"])
@pytest.mark.parametrize("provider", [pytest.param(p, marks=pytest.mark.xdist_group("test_model_sdks-" + p))
                                      for p in PROVIDERS])
def test_a_real_sdk_loop_ends_with_a_final_answer(provider, mode, strict):
    missing = peers.venv_missing()
    if missing:
        pytest.skip(missing)
    done, loops = loops_of(provider)
    if done.returncode == SDK_MISSING:
        pytest.skip("the provider SDKs are not in .cache/venv (%s; %s)" % (done.stdout.strip(), peers.INSTALL_HINT))
    assert "%s %s" % (mode, strict) in loops, "exit %s; stderr:\n%s" % (done.returncode, done.stderr)
    out = loops["%s %s" % (mode, strict)]
    assert "error" not in out, out["error"]
    assert out["problems"] == []
    answers = out["answers"]
    error = "ERROR " if provider == "anthropic" else "Error: "
    assert json.loads(answers["c_echo"]) == {"text": "hi"}  # (strict: the nulls were dropped before the call)
    assert answers["c_unknown"].startswith(error + "unknown tool 'no_such_tool'")
    assert answers["c_bad"].startswith(error + ("the arguments do not match" if provider == "anthropic"
                                                else "the arguments are not JSON"))
    assert answers["c_fail"] == error + "it broke"
    assert answers["c_picture"] == "a red dot\n" + {
        "openai": "[an image (image/png, 72 bytes) the tool returned: a tool message of the Chat Completions "
                  "API cannot carry images]", "openai-responses": "<input_image>", "anthropic": "<image>"}[provider]
    if mode == "group":
        assert answers["c_add"] == "5"
    assert out["final"] == "done: %d answers read" % len(answers)


PEERS = {  # name: (why it cannot run, its stdio argv)
    "server-everything": (peers.npm_missing, peers.everything_stdio_argv),
    "sdk-server": (peers.venv_missing, peers.sdk_stdio_argv),
    "fastmcp-tasks": (peers.fastmcp_tasks_missing, peers.fastmcp_tasks_stdio_argv),
}


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_every_tool_of_the_interop_servers_follows_the_providers_rules(peer):
    """tools_for() over every tool of the peers (names, schemas), each provider, strict or not."""
    import sys
    sys.path.insert(0, os.path.dirname(HERE))
    from model_rules import tool_problems
    from mcp_min import Client
    missing, argv = PEERS[peer]
    if missing():
        pytest.skip(missing())
    with Client(argv(), timeout=60) as client:
        listed = client.list_tools()
        assert listed
        strict_ones = 0
        for provider in ("openai", "openai-responses", "anthropic"):
            for strict in (False, True):
                tools = client.tools_for(provider, strict=strict)
                assert tool_problems(provider, tools) == [], (provider, strict)
                assert len(tools) == len(listed)
                strict_ones += sum(1 for t in tools if t.get("function", t).get("strict") is True)
        assert strict_ones > 0 or peer == "fastmcp-tasks"  # (most are strict-able; that one not checked here)
