"""A model with MCP tools, the whole loop: python examples/agent.py

The tools come from examples/tour.py; the model here is a scripted stand-in (no network, no API
key) that answers as a Chat Completions model would: first with tool calls, then, once it has
read the results, with its final answer.  With the real OpenAI SDK (pip install openai, and
OPENAI_API_KEY set), three lines change, each marked "real:" below: the import, the model, the call.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from mcp_min import Client  # noqa: E402

# real: import openai


class ScriptedModel(object):
    """Answers like a Chat Completions model, from a script instead of a network."""

    def answer(self, messages, tools):
        offered = [t["function"]["name"] for t in tools]
        if messages[-1]["role"] == "user":  # the question: call three tools at once (one will fail)
            calls = [("add", {"a": 2, "b": 3}), ("multiply", {"a": 6, "b": 7}), ("divide", {"a": 1, "b": 0})]
            assert all(name in offered for name, _ in calls)
            return {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_%d" % i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(calls)]}
        results = [m["content"].splitlines()[0] for m in messages if m["role"] == "tool"]  # what it read
        return {"role": "assistant", "content": "2 + 3 = %s, 6 * 7 = %s, and 1 / 0 gave: %s" % tuple(results)}


model = ScriptedModel()  # real: model = openai.OpenAI()

with Client([sys.executable, os.path.join(HERE, "tour.py")], timeout=30) as server:
    tools = server.tools_for("openai")  # the server's tools, as Chat Completions takes them
    messages = [{"role": "user", "content": "What are 2 + 3 and 6 * 7, and what is 1 / 0?"}]
    while True:
        # real: reply = model.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools
        #                                             ).choices[0].message.model_dump(exclude_none=True)
        reply = model.answer(messages, tools)
        messages.append(reply)
        if not reply.get("tool_calls"):
            break
        for call in reply["tool_calls"]:
            print("model calls %s(%s)" % (call["function"]["name"], call["function"]["arguments"]))
        messages.extend(server.run_tool_calls(reply, "openai"))  # run them all at once; append the answers
    print(reply["content"])

# Anthropic instead: tools_for("anthropic"), reply = client.messages.create(..., tools=tools).model_dump(),
# loop while reply["stop_reason"] == "tool_use", appending {"role": "assistant", "content": reply["content"]}
# and then run_tool_calls(reply, "anthropic").  The Responses API: tools_for("openai-responses"),
# run_tool_calls(response.output, "openai-responses"), whose items go into the next input.
