"""docs/live.png, the live page of `--serve` mid-run: `python docs/live_screenshot.py` (needs chromium and
chromium-driver, as the browser tests do).

Three paced agents (the built-in explorer with a pause before each decision, harness/paced_policy.py)
explore the office world with `--serve 0`; headless Chromium opens the page and takes the picture once
every agent has taken STEPS steps; then Ctrl-C ends the run.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.live_run import PACED, LiveRun  # noqa: E402
from tests.support.browser import headless_chromium  # noqa: E402

STEPS = 12
PICTURE = ROOT / "docs" / "live.png"
SHOWN_STEPS = (
    "return Math.min(...[...document.querySelectorAll('#agents tbody tr')].map(r => Number(r.cells[1].textContent)))"
)


def main() -> None:
    browser = headless_chromium(1280, 1500)
    try:
        with tempfile.TemporaryDirectory() as folder:
            args = ("--agents", "3", "--world", "office", "--steps", "40", "--model", PACED, "--seed", "3")
            with LiveRun(*args, "--run-dir", str(Path(folder) / "run"), "-q") as run:
                browser.get(run.url)
                deadline = time.monotonic() + 240
                while (browser.execute_script(SHOWN_STEPS) or 0) < STEPS:
                    if time.monotonic() > deadline:
                        raise SystemExit("the page did not reach the step in 240 s")
                    time.sleep(0.2)
                browser.save_screenshot(str(PICTURE))
    finally:
        browser.quit()
    print(f"Wrote {PICTURE}")


if __name__ == "__main__":
    main()
