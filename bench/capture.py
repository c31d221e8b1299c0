"""Game mode's screen capture and action feedback: `python bench/capture.py` (about a minute; needs Xvfb).

On a virtual display with the stand-in game (harness/stand_in_game.py, 640x360, in a fenced arena):
1. a region grab with mss against Pillow's ImageGrab, and comparing two frames;
2. for each settle time, how many of the actions' outcomes (moved, turned or blocked, from the
   frames) agree with the game's own position log, over walks into the fence and turns.
Writes bench/capture.json.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402

from bench.output import write_figures  # noqa: E402
from perception.keyboard import Keyboard  # noqa: E402
from perception.keymap import DEFAULT_KEYMAP, load_keymap  # noqa: E402
from perception.screenshots import ScreenGrabber, view_change  # noqa: E402
from perception.unity import AgentView, Sight, UnityPyAutoGUIPerception  # noqa: E402
from perception.windows import find_window  # noqa: E402

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # before pygame is imported
from harness.display import GAME, virtual_display  # noqa: E402
from harness.stand_in_game import pose_changed_between  # noqa: E402

GRABS = 100
SETTLES = (0.0, 0.05, 0.1, 0.2)
# Walks into the fence, along it and away from it, with turns between: about half the walks are blocked.
SCRIPT = (["forward"] * 6 + ["look_right"] + ["forward"] * 6 + ["look_right"] * 2 + ["forward"] * 4) * 2

console = Console()


def grab_times(grabber, bbox, display):
    times = []
    for _ in range(GRABS):
        started = time.perf_counter()
        grabber.grab(bbox, display)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 2)


def feedback_accuracy(window, log, settle, workdir):
    keyboard = Keyboard()
    keymap = load_keymap(DEFAULT_KEYMAP, keyboard.is_valid_key)
    view = AgentView(window, replace(keymap, feedback=replace(keymap.feedback, settle_seconds=settle)))
    perception = UnityPyAutoGUIPerception(
        None, {"Agent1": view}, keyboard, {"Agent1": lambda path: Sight("", ())}, workdir
    )
    agree = blocked = 0
    for step, action in enumerate(SCRIPT, 1):
        perception.observe("Agent1", step)
        result = perception.execute_action("Agent1", action)
        time.sleep(0.05)  # the log's last line for the after-frame is written by then
        agree += pose_changed_between(log, *result.frames["at"]) == (result.outcome != "blocked")
        blocked += result.outcome == "blocked"
    return {
        "settle_seconds": settle,
        "actions": len(SCRIPT),
        "agree": agree,
        "blocked": blocked,
        "accuracy": round(agree / len(SCRIPT), 3),
    }


def main():
    results = {}
    with virtual_display() as display, tempfile.TemporaryDirectory(prefix="capture-") as workdir:
        for settle in SETTLES:
            log = Path(workdir) / f"positions-{settle}.jsonl"
            game = subprocess.Popen(
                [
                    sys.executable,
                    str(GAME),
                    f"Capture Bench {settle}",
                    str(log) + ".pose",
                    "--arena",
                    "2",
                    "--pose-log",
                    str(log),
                ],
                env=dict(os.environ, SDL_AUDIODRIVER="dummy", PYGAME_HIDE_SUPPORT_PROMPT="1"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                time.sleep(3)
                window = find_window(f"^Capture Bench {settle}$", display)
                if "grab_ms" not in results:
                    mss_grabber, pillow_grabber = ScreenGrabber(), ScreenGrabber(use_mss=False)
                    frames = [mss_grabber.grab(window.bbox, display) for _ in range(2)]
                    started = time.perf_counter()
                    for _ in range(GRABS):
                        view_change(*frames, 8)
                    results["grab_ms"] = {
                        "region": f"{window.width}x{window.height}",
                        "mss": grab_times(mss_grabber, window.bbox, display),
                        "pillow": grab_times(pillow_grabber, window.bbox, display),
                        "compare": round((time.perf_counter() - started) / GRABS * 1000, 2),
                    }
                    console.log(f"grab: {results['grab_ms']}")
                results.setdefault("feedback", []).append(feedback_accuracy(window, log, settle, Path(workdir)))
                console.log(f"feedback: {results['feedback'][-1]}")
            finally:
                game.kill()
                game.wait()
    write_figures(ROOT / "bench" / "capture.json", results)
    console.print(results)


if __name__ == "__main__":
    main()
