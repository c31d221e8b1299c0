"""What every step node shares: its `exec` time goes into the step's timings."""

import time

from pocketflow import Node


class StepNode(Node):
    timing_key = ""

    def _run(self, shared):
        # PocketFlow's own _run, with exec timed; exec itself stays pure.
        prep_res = self.prep(shared)
        start = time.perf_counter()
        exec_res = self._exec(prep_res)
        shared["timings"][self.timing_key] = round(time.perf_counter() - start, 4)
        return self.post(shared, prep_res, exec_res)
