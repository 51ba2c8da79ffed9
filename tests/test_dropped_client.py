"""A dropped one-liner client still ends its server (issue 11 item 23, the PyPy part).


`Client(argv).call(...)` keeps no reference to the Client. CPython frees it at the end of the
statement (once no reference cycle holds it) and its weakref.finalize closes the server; PyPy has
no reference counting, so that happens at the next garbage collection, and at the latest when the
interpreter exits (weakref.finalize runs remaining finalizers at exit). The server used here
ignores stdin EOF, so only mcp_min's own close (stdin EOF, then a signal) can end it; it proves it
is alive by touching a file every 0.1 s. Runs under whatever interpreter runs the tests.
"""
import os
import subprocess
import sys
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A stdio server (handshake era) that stays up after stdin EOF and beats while alive.
STUBBORN = textwrap.dedent(r'''
    import json, sys, threading, time
    base = sys.argv[1]
    def beat():
        while True:
            with open(base + ".alive", "w") as f:
                f.write("%.3f" % time.time())
            time.sleep(0.1)
    threading.Thread(target=beat, daemon=True).start()
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if msg.get("method") == "initialize":
            out = {"result": {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                              "serverInfo": {"name": "stubborn", "version": "1"}}}
        elif msg.get("method") == "tools/call":
            a = msg["params"]["arguments"]
            out = {"result": {"content": [{"type": "text", "text": str(a["a"] + a["b"])}]}}
        else:
            out = {"error": {"code": -32601, "message": "unknown method"}}
        out.update(jsonrpc="2.0", id=msg["id"])
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    open(base + ".eof", "w").close()
    time.sleep(120)  # stdin EOF alone does not end this server
''')


def _wait_for(condition, bound):
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _alive(base):
    try:
        with open(base + ".alive") as f:
            return time.time() - float(f.read() or 0) < 1.5
    except (OSError, ValueError):
        return True  # not written yet


def _child(tmp_path, body):
    server = tmp_path / "stubborn.py"
    server.write_text(STUBBORN, encoding="utf-8")
    base = str(tmp_path / "server")
    code = textwrap.dedent('''
        import gc, os, sys, time
        sys.path.insert(0, {root!r})
        from mcp_min import Client
        value = Client([sys.executable, {server!r}, {base!r}]).call("add", a=1, b=2)
        assert str(value) == "3", value
    ''').format(root=ROOT, server=str(server), base=base) + textwrap.dedent(body).format(base=base)
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120)
    return base, done


def test_a_dropped_one_liner_closes_its_server_when_collected(tmp_path):
    # CPython: at the end of the statement. PyPy: at the next collection, forced here.
    base, done = _child(tmp_path, '''
        if sys.implementation.name != "cpython":
            gc.collect()
        deadline = time.monotonic() + 10
        while not os.path.exists({base!r} + ".eof") and time.monotonic() < deadline:
            time.sleep(0.05)
        print("EOF seen" if os.path.exists({base!r} + ".eof") else "server still has its stdin")
    ''')
    assert done.returncode == 0 and "EOF seen" in done.stdout, done.stdout
    assert _wait_for(lambda: not _alive(base), 20), "the server outlived its closed client"


def test_a_dropped_one_liner_is_reaped_at_interpreter_exit(tmp_path):
    # No collection at all before the interpreter exits (gc disabled right after the call).
    base, done = _child(tmp_path, '''
        gc.disable()
        print("exiting")
    ''')
    assert done.returncode == 0 and "exiting" in done.stdout, done.stdout
    assert _wait_for(lambda: os.path.exists(base + ".eof"), 20), "the server never got stdin EOF"
    assert _wait_for(lambda: not _alive(base), 20), "the server outlived the interpreter"
