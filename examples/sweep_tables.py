"""A sweep's results as pandas tables (the `data` extra): the objects found per condition, and the cells seen by
step with and without messages. Give it a sweep's directory, e.g. the README's: runs/sweep-comm."""

import sys

from explorer.api import load_sweep

data = load_sweep(sys.argv[1])
figures = ["comm", "world", "objects_found", "objects_found_low", "objects_found_high"]
print(data.conditions[figures].to_string(index=False))

# Each step's row joined with its run's options: the mean cells seen by step, with messages and without.
steps = data.steps.merge(data.runs[["run_dir", "comm"]], on="run_dir")
print(steps.groupby(["step", "comm"])["cells_seen"].mean().unstack().to_string())
