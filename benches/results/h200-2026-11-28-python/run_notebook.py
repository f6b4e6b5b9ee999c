"""Runs a notebook's code cells top to bottom as one script (magics skipped, Agg backend)."""
import json
import sys

import matplotlib
matplotlib.use("Agg")

cells = json.load(open(sys.argv[1]))["cells"]
source = "\n".join(
    "".join(line for line in cell["source"] if not line.lstrip().startswith("%"))
    for cell in cells if cell["cell_type"] == "code"
)
exec(compile(source, sys.argv[1], "exec"), {"__name__": "__main__"})
import matplotlib.pyplot as plt
if len(sys.argv) > 2:
    plt.savefig(sys.argv[2], dpi=80)
