"""A stdio server that starts a child, as launchers do (npx -> node), then serves examples/calc.py
and exits at stdin EOF.  The child ignores EOF and would live for CHILD_LIFE seconds; it either
inherits the server's pipes (``inherit``) or gets none (``detached``).  The server writes
"<server pid> <child pid>" to the file named by its first argument before it answers anything.

    python tree_server.py PIDFILE inherit|detached
"""
import os
import runpy
import subprocess
import sys

CHILD_LIFE = 600  # far longer than any test: the child ends only if close() ends it

HERE = os.path.dirname(os.path.abspath(__file__))
pidfile, mode = sys.argv[1], sys.argv[2]
pipes = {} if mode == "inherit" else {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
                                      "stderr": subprocess.DEVNULL}
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(%d)" % CHILD_LIFE], **pipes)
with open(pidfile, "w", encoding="utf-8") as f:
    f.write("%d %d" % (os.getpid(), child.pid))
sys.argv = [os.path.join(os.path.dirname(HERE), "examples", "calc.py")]
runpy.run_path(sys.argv[0], run_name="__main__")
