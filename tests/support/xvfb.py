"""A real X server for tests: Xvfb, and the stand-in game shown on it.

A test module that uses them loads this file as a plugin:
`pytest_plugins = ("tests.support.xvfb",)`. Importing the fixtures instead would give
each importing module its own "session" fixture, so its own Xvfb, and
pyautogui, bound at import to the first one, would type into the wrong server.
Without Xvfb the tests skip, except in CI (CI=true), where they must run.
"""

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from harness.display import GAME, virtual_display

WINDOW_WAIT_SECONDS = 10


@pytest.fixture(scope="session")
def x_display():
    """Starts Xvfb for the session; sets DISPLAY and XAUTHORITY and yields the display."""
    if shutil.which("Xvfb") is None:
        reason = "Xvfb is not installed: apt-get install xvfb"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    with virtual_display() as display:
        yield display


@pytest.fixture
def start_game(x_display, tmp_path):
    """start_game(title, *options) runs the stand-in game; returns (process, window, pose_file).

    Every game started is stopped when the test ends.
    """
    from perception.x11 import list_shown_windows

    games = []

    def start(title, *options):
        pose_file = tmp_path / f"pose-{len(games)}.json"
        log_file = tmp_path / f"game-{len(games)}.log"
        environment = dict(os.environ, SDL_AUDIODRIVER="dummy", PYGAME_HIDE_SUPPORT_PROMPT="1")
        with open(log_file, "w") as log:  # a file, not a pipe: a full pipe would stall the game
            process = subprocess.Popen(
                [sys.executable, str(GAME), title, str(pose_file), *options],
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        games.append(process)
        deadline = time.monotonic() + WINDOW_WAIT_SECONDS
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"the stand-in game exited with code {process.returncode}: " + log_file.read_text())
            shown = [w for w in list_shown_windows() if re.fullmatch(re.escape(title), w.title)]
            if shown and pose_file.exists():
                return process, shown[0], pose_file
            time.sleep(0.05)
        pytest.fail(f"the stand-in game's window '{title}' did not appear within {WINDOW_WAIT_SECONDS} s")

    yield start
    for process in games:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
