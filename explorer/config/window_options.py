"""The game window's options (unity mode): each given once for all agents, or once per agent in order."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

from explorer.config.options import PATHS, RECTANGLES, TEXTS, OneOf, option
from explorer.records.errors import ConfigError
from perception.keymap import DEFAULT_KEYMAP, SHIPPED_KEYMAPS
from perception.yaml_files import shipped_names, shipped_or_given

VISION_CALLS = ("combined", "split")  # one call for caption and objects, or two (caption, then objects)


def _shipped_keymap(text: str) -> Path:
    return shipped_or_given(text, SHIPPED_KEYMAPS)


def _region(text: str) -> tuple[int, int, int, int]:
    try:
        x, y, width, height = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not X,Y,W,H (four whole numbers of pixels)") from None
    if x < 0 or y < 0 or width < 2 or height < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: X and Y must not be negative, W and H must be at least 2")
    return (x, y, width, height)


@dataclass(frozen=True)
class WindowOptions:
    """Which window each agent sees, through which key map and part of it, and how it is read."""

    window_titles: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "--window-title",
            "the game window, by its title",
            metavar="REGEX",
            repeat=True,
            group="unity",
            record=TEXTS,
        ),
    )
    keymaps: tuple[Path, ...] = field(
        default=(),
        metadata=option(  # none: perception.keymap.DEFAULT_KEYMAP
            "--keymap",
            f"key map file, or a shipped key map's name (default {DEFAULT_KEYMAP.stem})",
            type=_shipped_keymap,
            metavar="PATH",
            repeat=True,
            group="unity",
            record=PATHS,
        ),
    )
    regions: tuple[tuple[int, int, int, int], ...] = field(
        default=(),
        metadata=option(
            "--region",
            "the part of the window an agent sees, in window pixels (split screen)",
            type=_region,
            metavar="X,Y,W,H",
            repeat=True,
            group="unity",
            record=RECTANGLES,
        ),
    )
    vision: str = field(
        default="combined",
        metadata=option(
            "--vision",
            f"vision calls per step: {' or '.join(VISION_CALLS)} (combined: one call gives caption and objects)",
            group="unity",
            check=OneOf(VISION_CALLS),
        ),
    )
    pause_key: str | None = field(
        default=None,
        metadata=option(
            "--pause-key",
            "a key that pauses the game: pressed before the model is asked and again before the action",
            metavar="KEY",
            group="unity",
        ),
    )

    def given(self) -> bool:
        """Whether any of them was set."""
        return bool(self.window_titles or self.keymaps or self.regions or self.vision != "combined" or self.pause_key)

    def check(self, agents: int) -> None:
        """A window to find, by titles that are regular expressions; each option once or once per agent; key
        map files that are there."""
        if not self.window_titles:
            raise ConfigError("--mode unity needs --window-title REGEX, matching the game window's title")
        for title in self.window_titles:
            try:
                re.compile(title)
            except re.error as error:
                raise ConfigError(f"--window-title {title!r} is not a valid regular expression: {error}") from None
        for flag, values in (
            ("--window-title", self.window_titles),
            ("--keymap", self.keymaps),
            ("--region", self.regions),
        ):
            if len(values) not in (0, 1, agents):
                raise ConfigError(
                    f"{flag} is given {len(values)} times for {agents} agents: give it once for all, or once per agent"
                )
        for keymap in self.keymaps:
            if not keymap.is_file():
                raise ConfigError(
                    f"key map file not found: {keymap} (shipped key maps: {', '.join(shipped_names(SHIPPED_KEYMAPS))})"
                )
