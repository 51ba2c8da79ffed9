"""A tool-calling loop with a real provider SDK (openai or anthropic) against a stand-in model
server on 127.0.0.1, for tests/interop/test_model_sdks.py (run by the .cache/venv interpreter,
where the SDKs are installed; exit status 77 when the SDK is not there).

    python model_sdk_loop.py PROVIDER stdio|group strict|loose [PROVIDER MODE STRICT ...]

PROVIDER is "openai" (Chat Completions), "openai-responses" or "anthropic".  Several loops run one
after another in this one process (importing the SDKs costs seconds; the tests run four a process).  The servers:
tests/model_server.py over stdio, or a Group of it ("model") and examples/tour.py ("tour").
The stand-in model checks every request's tools against the providers' documented rules
(tests/model_rules.py) and, on its second turn, the tool results against the API's rules;
its first turn asks for several calls at once: echo with the nulls strict mode sends, a tool
that does not exist, arguments that are not JSON (Anthropic: of the wrong type), a tool that
fails, one that returns an image (and in a group, one on the second server).  Prints one JSON
line per loop: {"loop": "PROVIDER MODE STRICT", "answers": {call id: what the model read},
"problems": [...], "final": text} (or "error": its traceback).
"""
import json
import os
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(TESTS)
sys.path.insert(0, ROOT)
sys.path.insert(0, TESTS)
from model_rules import tool_problems  # noqa: E402
from mcp_min import Client, Group  # noqa: E402

PROVIDER, MODE, STRICT = "", "", False  # the loop running now (main() sets them)
try:
    import anthropic
    import openai
except ImportError as e:
    print("missing: %s" % e)
    sys.exit(77)

PREFIX = ""
PROBLEMS = []
ANSWERS = {}


def first_turn_calls():
    """(call id, tool name, arguments as JSON text) the model asks for at once."""
    calls = [("c_echo", PREFIX + "echo", json.dumps({"text": "hi", "times": None, "tag": None} if STRICT
                                                    else {"text": "hi"})),
             ("c_unknown", "no_such_tool", "{}"),
             ("c_bad", PREFIX + "echo", '{"text": ' if PROVIDER != "anthropic" else '{"text": 5}'),
             ("c_fail", PREFIX + "fail", "{}"),
             ("c_picture", PREFIX + "picture", "{}")]
    if MODE == "group":
        calls.append(("c_add", "tour__add", '{"a": 2, "b": 3}'))
    return calls


def check_tools(body):
    tools = body.get("tools") or []
    PROBLEMS.extend(tool_problems(PROVIDER, tools))
    names = {t.get("function", t).get("name") for t in tools}
    for _, name, _ in first_turn_calls():
        if name != "no_such_tool" and name not in names:
            PROBLEMS.append("tool %s not offered" % name)
    if STRICT and PROVIDER != "anthropic":
        strict = [t.get("function", t).get("strict") for t in tools]
        if True not in strict:
            PROBLEMS.append("strict asked for, no tool strict")


def text_of(content):
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "<%s>" % p.get("type")) for p in content)


def read_results(body):
    """The tool results of the second turn, checked against the API's rules; None on the first turn."""
    wanted = {c[0] for c in first_turn_calls()}
    if PROVIDER == "openai":
        results = [m for m in body["messages"] if m.get("role") == "tool"]
        for m in results:
            if not isinstance(m.get("content"), str) and any(p.get("type") != "text" for p in m["content"]):
                PROBLEMS.append("a Chat tool message with a part that is not text")
            ANSWERS[m["tool_call_id"]] = text_of(m["content"])
    elif PROVIDER == "openai-responses":
        results = [i for i in body["input"] if i.get("type") == "function_call_output"]
        for i in results:
            output = i["output"]
            if not isinstance(output, str) and any(p.get("type") not in ("input_text", "input_image") for p in output):
                PROBLEMS.append("a function_call_output part of an unknown type")
            if not isinstance(output, str) and any(p["type"] == "input_image" and
                                                   not p["image_url"].startswith("data:image/") for p in output):
                PROBLEMS.append("an input_image that is no data URL")
            ANSWERS[i["call_id"]] = text_of(output)
    else:
        users = [m for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)]
        if not users:
            return None
        blocks = users[-1]["content"]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if blocks[:len(results)] != results:
            PROBLEMS.append("tool_result blocks not first in their user message")
        for b in results:
            parts = b["content"] if isinstance(b["content"], list) else [{"type": "text", "text": b["content"]}]
            if any(p["type"] == "text" and not p["text"] for p in parts):
                PROBLEMS.append("an empty text block")
            if any(p["type"] == "image" and p["source"].get("type") != "base64" for p in parts):
                PROBLEMS.append("an image block that is not base64")
            ANSWERS[b["tool_use_id"]] = ("ERROR " if b.get("is_error") else "") + text_of(parts)
    if not results:
        return None
    if {a for a in ANSWERS} != wanted:
        PROBLEMS.append("answers for %s, calls were %s" % (sorted(ANSWERS), sorted(wanted)))
    return ANSWERS


def reply(body):
    """The model's answer in the API's shape: the calls first, then (results read) the final text."""
    check_tools(body)
    done = read_results(body) is not None
    calls = [] if done else first_turn_calls()
    final = "done: %d answers read" % len(ANSWERS)
    if PROVIDER == "openai":
        message = {"role": "assistant", "content": final if done else None}
        if calls:
            message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                     for i, n, a in calls]
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "stand-in",
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}
    if PROVIDER == "openai-responses":
        output = [{"type": "function_call", "id": "fc_" + i, "call_id": i, "name": n, "arguments": a,
                   "status": "completed"} for i, n, a in calls] or [
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": final, "annotations": []}]}]
        return {"id": "resp_1", "object": "response", "created_at": 0, "model": "stand-in", "status": "completed",
                "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    content = [{"type": "tool_use", "id": i, "name": n, "input": json.loads(a)} for i, n, a in calls] or [
        {"type": "text", "text": final}]
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "stand-in", "content": content,
            "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps(reply(body)).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def run_loop(server, base):
    tools = server.tools_for(PROVIDER, strict=STRICT)
    question = "Use the tools."
    if PROVIDER == "anthropic":
        llm = anthropic.Anthropic(api_key="none", base_url=base, max_retries=0)
        messages = [{"role": "user", "content": question}]
        for _ in range(5):
            response = llm.messages.create(model="stand-in", max_tokens=100, messages=messages, tools=tools)
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                              for b in response.content]})
            if response.stop_reason != "tool_use":
                return response.content[0].text
            messages.extend(server.run_tool_calls(response, "anthropic"))
    elif PROVIDER == "openai-responses":
        llm = openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)
        items = [{"role": "user", "content": question}]
        for _ in range(5):
            response = llm.responses.create(model="stand-in", input=items, tools=tools)
            items.extend(item.model_dump(exclude_none=True) for item in response.output)
            answers = server.run_tool_calls(response, "openai-responses")
            if not answers:
                return response.output_text
            items.extend(answers)
    else:
        llm = openai.OpenAI(api_key="none", base_url=base + "/v1", max_retries=0)
        messages = [{"role": "user", "content": question}]
        for _ in range(5):
            message = llm.chat.completions.create(model="stand-in", messages=messages, tools=tools).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            messages.extend(server.run_tool_calls(message, "openai"))
    return "no final answer in 5 turns"


def main():
    global PROVIDER, MODE, STRICT, PREFIX, PROBLEMS, ANSWERS
    words = sys.argv[1:]
    for at in range(0, len(words), 3):
        PROVIDER, MODE, STRICT = words[at], words[at + 1], words[at + 2] == "strict"
        PREFIX = "model__" if MODE == "group" else ""
        PROBLEMS, ANSWERS = [], {}
        line = {"loop": " ".join(words[at:at + 3])}
        try:
            line["final"] = one_loop()
        except Exception:  # this loop's line says so; the next loops still run
            line["error"] = traceback.format_exc()
        line.update(answers=ANSWERS, problems=PROBLEMS)
        print(json.dumps(line), flush=True)


def one_loop():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    base = "http://127.0.0.1:%d" % httpd.server_address[1]
    model = [sys.executable, os.path.join(TESTS, "model_server.py")]
    try:
        if MODE == "group":
            config = {"mcpServers": {"model": {"command": model[0], "args": model[1:]},
                                     "tour": {"command": sys.executable,
                                              "args": [os.path.join(ROOT, "examples", "tour.py")]}}}
            with Group(config, timeout=30) as group:
                final = run_loop(group, base)
        else:
            with Client(model, timeout=30) as client:
                final = run_loop(client, base)
    finally:
        httpd.shutdown()
        httpd.server_close()
    return final


if __name__ == "__main__":
    main()
