"""A stdio MCP server whose tools and answers come from a JSON file (argv[1]):
{"tools": [...], "answers": {tool name: text}}.  For tests of a Group whose namespaced names clash."""
import json
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    SPEC = json.load(f)


def answer(message):
    method = message.get("method")
    if method == "initialize":
        return {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "clash", "version": "1"}}
    if method == "tools/list":
        return {"tools": SPEC["tools"]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": SPEC["answers"][message["params"]["name"]]}]}
    if method == "ping":
        return {}
    return None


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    result = answer(message)
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    if result is None:
        reply["error"] = {"code": -32601, "message": "no method %s" % message.get("method")}
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
