"""The sweep's progress bar: on a terminal, the runs done of those to run and the time left, below the line of
each finished run; into a file or a pipe, only the lines."""

from __future__ import annotations

import io
import re

from rich.console import Console

from explorer.sweep.console import SweepConsole

SUMMARY = {"objects_discovered": ["chair"], "total_objects": 4}


def shown(terminal: bool) -> str:
    console = SweepConsole()
    console.console = Console(file=io.StringIO(), force_terminal=terminal, color_system=None, width=100)
    with console.progress(3):
        console.finished(1, 3, "seed=1", "completed", None, SUMMARY)
        console.console.file.write("\n-- one finished --\n")
        console.console.print()  # the bar is drawn again below what was printed
    return console.console.file.getvalue()


def test_a_terminal_shows_a_bar_of_the_runs_done_and_the_time_left():
    text = shown(terminal=True)
    assert "[1/3] seed=1: completed, 1 of 4 objects" in text
    bar = text.split("-- one finished --")[1]
    # The time elapsed, then the time left (-:--:-- until rich has a rate to reckon it from).
    assert re.search(r"runs ━+ +1/3 0:00:\d\d (-:--:--|\d:\d\d:\d\d)", bar)


def test_a_file_or_a_pipe_gets_the_lines_and_no_bar():
    text = shown(terminal=False)
    assert text.splitlines()[0] == "[1/3] seed=1: completed, 1 of 4 objects"
    assert "1/3 " not in text.split("-- one finished --")[1]
