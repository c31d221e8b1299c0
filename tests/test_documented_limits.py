"""docs/options.md's Limits and the README's state the bounds a user can meet (issue 50), as the code sets them:
a bound changed in the code and not in the docs fails here."""

from __future__ import annotations

from explorer.config.options import Seconds
from explorer.config.profiles import MAX_TIME
from explorer.config.team_options import MAX_AGENTS
from explorer.model.reading import MAX_DEPTH, MAX_REPLY_CHARS
from explorer.records.run_files import MAX_JSON_BYTES, MAX_LINE_BYTES
from explorer.schedule.event import MAX_TICK_RATE
from explorer.sweep.sweep_file import MAX_NAME_CHARS, MAX_RUNS
from nodes.decision_context import CAPTION_CHARS, MEMORY_CHARS, MESSAGE_CHARS, PROMPT_MESSAGES
from nodes.interfaces import DECISION_TEXT_LIMITS
from nodes.update_memory import CONTEXT_CHARS
from perception.keymap import MAX_HOLD_SECONDS
from perception.rooms import MAX_ROOMS
from perception.targets import MAX_TARGETS
from perception.world import MAX_CELLS, MAX_OBJECTS, MAX_VIEW_DISTANCE
from perception.yaml_files import MAX_FILE_BYTES, MAX_VALUES
from tests.support.paths import ROOT


def section(path: str, heading: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end > 0 else None]


def test_the_options_page_states_every_bound():
    limits = " ".join(section("docs/options.md", "## Limits").split())
    for stated in (
        f"`--agents` | 1 to {MAX_AGENTS:,}",
        f"at most {Seconds().most:,.0f} (a day)",
        f"at most {MAX_TIME:,.0f} simulated seconds",
        f"at most {MAX_TICK_RATE} ticks per member per simulated second",
        f"at most {MAX_TARGETS} targets",
        f"at most {MAX_FILE_BYTES // 1_000_000} MB, {MAX_VALUES:,} values",
        f"at most {MAX_CELLS:,} cells (width x depth x height), {MAX_OBJECTS:,} objects, {MAX_ROOMS:,} rooms "
        f"and a view distance of {MAX_VIEW_DISTANCE}",
        f"`view` 1 to {MAX_VIEW_DISTANCE}",
        f"a key held at most {MAX_HOLD_SECONDS:g} seconds",
        f"at most {MAX_RUNS:,} runs; a run's directory name is cut at {MAX_NAME_CHARS} characters",
        f"read from its first {MAX_REPLY_CHARS:,} characters, nesting at most {MAX_DEPTH} levels",
        f"a message at most {DECISION_TEXT_LIMITS['message_to_others']} characters, "
        f"its reason {DECISION_TEXT_LIMITS['reason']}, its thinking {DECISION_TEXT_LIMITS['thinking']:,}, "
        f"`message_to` {DECISION_TEXT_LIMITS['message_to']}",
        f"the {PROMPT_MESSAGES} newest messages, {MESSAGE_CHARS} characters each",
        f"3 memories, {MEMORY_CHARS} characters each; the caption's {CAPTION_CHARS} characters",
        f"{CONTEXT_CHARS} characters of the messages read",
        f"at most {MAX_JSON_BYTES // 1_000_000} MB, a trace line at most {MAX_LINE_BYTES // 1_000_000} MB",
    ):
        assert stated in limits, stated


def test_the_readme_states_the_bounds_most_met():
    limits = " ".join(section("README.md", "## Limits").split())
    for stated in (
        f"{MAX_FILE_BYTES // 1_000_000} MB",
        f"{MAX_CELLS:,} cells, {MAX_OBJECTS:,} objects, {MAX_ROOMS:,} rooms and a view distance of {MAX_VIEW_DISTANCE}",
        f"at most {MAX_TARGETS} targets",
        f"at most {MAX_AGENTS:,} agents",
        f"at most {MAX_RUNS:,} runs",
        f"at most {MAX_TIME:,.0f} simulated seconds",
        f"first {MAX_REPLY_CHARS:,} characters",
        f"cut at {MESSAGE_CHARS} characters",
        "docs/options.md#limits",
    ):
        assert stated in limits, stated


def test_the_options_page_names_every_option_main_py_knows():
    from explorer.cli.main import build_parser

    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    flags = [
        flag for action in build_parser()._actions for flag in action.option_strings if flag not in ("-h", "--help")
    ]
    assert flags and [flag for flag in flags if flag.startswith("--") and f"`{flag}`" not in text] == []
    assert [flag for flag in flags if not flag.startswith("--") and f"`{flag}`" not in text] == []
