"""A stdio server that records the arguments it was started with, then serves examples/calc.py:
"python argv_server.py OUTFILE ARG..." writes the ARGs, as a JSON list, to OUTFILE first."""
import json
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(sys.argv[2:], f)
sys.argv = [os.path.join(os.path.dirname(HERE), "examples", "calc.py")]
runpy.run_path(sys.argv[0], run_name="__main__")
