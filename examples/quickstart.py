"""The smallest useful mcp_min programs: run with  python examples/quickstart.py"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mcp_min import Client, ToolError  # noqa: E402

CALC = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "calc.py")]

# The one-liner: spawn the server, shake hands, call a tool, clean up.
print(Client(CALC).call("add", a=1, b=2))

# A longer session in a with block.
with Client(CALC) as calc:
    print("connected to", calc.server_info["name"], "speaking", calc.protocol_version)
    for tool in calc.list_tools():
        print("  tool:", tool["name"], "-", tool.get("description", ""))
    print("6 * 7 =", calc.call("multiply", a=6, b=7))
    try:
        calc.call("divide", a=1, b=0)
    except ToolError as e:
        print("divide failed as expected:", e)
