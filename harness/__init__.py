"""What the tests and the benches share: the program run as a user runs it, and the processes around it.

`sweeps` (`main.py --sweep`), `live_run` (`main.py --serve` with a paced plug-in, `paced_policy`),
`redis_process` (a redis-server on a free port), `display` (Xvfb) and `stand_in_game` (a first-person game
window for Unity mode). Neither the product nor its users import it; what a user may want as well (a stub
model server, a local model's server) is in explorer/testing/.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout: main.py, bench/, tests/
MAIN = str(ROOT / "main.py")
