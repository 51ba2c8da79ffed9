"""Stdio framing with a real server process: what the line splitter's rules mean end to end.

The rules themselves are tested on bytes in tests/test_core.py (_LineSplitter)."""
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mcp_min import Client  # noqa: E402

# Answers initialize, then the one tools/call with its last line left without a line end, and exits.
SERVER = textwrap.dedent('''
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "no-final-newline", "version": "1"}}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\r\\n\\n")
        elif msg.get("method") == "server/discover":
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                         "error": {"code": -32601, "message": "no"}}) + "\\n")
        elif msg.get("method") == "tools/call":
            result = {"content": [{"type": "text", "text": "last"}], "structuredContent": {"v": "last"}}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
            sys.stdout.flush()
            sys.exit(0)
        sys.stdout.flush()
''')


def test_an_answer_without_a_final_line_end_is_delivered_at_eof(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    with Client([sys.executable, str(script)], timeout=10) as client:
        assert client.call("last", {}) == {"v": "last"}
