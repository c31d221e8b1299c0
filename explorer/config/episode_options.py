"""The episode's options: which world, seen how, for how long, with which seed, and what the team must find."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from explorer.config.options import FILE_PATH, TEXTS, Count, OneOf, Record, option
from explorer.records.errors import ConfigError
from perception.families.catalogue import FAMILIES
from perception.families.generate import open_world
from perception.families.names import is_generated
from perception.targets import target_names
from perception.world import DEFAULT_WORLD, SHIPPED_WORLDS, WorldError
from perception.yaml_files import shipped_file, shipped_name, shipped_names, shipped_or_given

MODES = ("mock", "unity")
ALL_FOUND = "all-found"
STOP_WHEN = ("steps", ALL_FOUND)  # what ends a run for the team: its step budget, or every object found


def _shipped_world(text: str) -> Path:
    return Path(text) if is_generated(text) else shipped_or_given(text, SHIPPED_WORLDS)


def recorded_world(path: str | Path) -> str:
    """A world as config.json records it: a shipped world by its name (`office`), so a run's settings are the
    same from every checkout or install of this version (a sweep compares them); another file by its absolute
    path; a generated world as given. Of a world an earlier version recorded, how this one records it."""
    return shipped_name(path, SHIPPED_WORLDS) or FILE_PATH.write(path)


def _world_read_back(text: str | None) -> Path | None:
    """The world a config.json records: a shipped world's name, its file here."""
    return None if text is None else shipped_file(text, SHIPPED_WORLDS) or Path(text)


WORLD_RECORD = Record(recorded_world, _world_read_back)


def _target_list(text: str) -> tuple[str, ...]:
    try:
        return target_names(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of objects such as toothbrush,laptop") from None


@dataclass(frozen=True)
class EpisodeOptions:
    """Which world the team explores and how it is seen, for how long, placed by which seed, searching for what."""

    mode: str = field(
        default="mock",
        metadata=option(
            "--mode",
            f"perception backend: {' or '.join(MODES)} (default %(default)s)",
            check=OneOf(MODES, label="mode"),
        ),
    )
    steps: int | None = field(
        default=None,
        metadata=option(
            "--steps",
            "steps per agent (default: the world's max_steps)",
            type=int,
            check=Count(1),
        ),
    )
    world: Path = field(
        default=DEFAULT_WORLD,
        metadata=option(
            "--world",
            "world file for mock mode, a shipped world's name: apartment (default), office, warehouse, garden, "
            f"or a generated world: gen:FAMILY ({', '.join(FAMILIES)}), "
            "with parameters as in gen:house?size=40x30&seed=7",
            type=_shipped_world,
            record=WORLD_RECORD,
        ),
    )
    world_seed: int | None = field(
        default=None,
        metadata=option(
            "--world-seed",
            "the seed of a generated world (--world gen:FAMILY): the same seed makes the same world (default 0)",
            metavar="N",
            type=int,
            check=Count(0),
        ),
    )
    seed: int = field(
        default=42,
        metadata=option(
            "--seed",
            "seed for placement and the built-in backends",
            type=int,
        ),
    )
    random_starts: bool = field(
        default=False,
        metadata=option(
            "--random-starts",
            "place every agent on free ground chosen by --seed, even where the world gives start poses "
            "(so that seeds vary the run; mock mode)",
            switch_on=True,
        ),
    )
    stop_when: str = field(
        default="steps",
        metadata=option(
            "--stop-when",
            "steps (default): the run ends when the steps are spent; all-found: it also ends, completed, once "
            "the team has found every object, so that the team's figures measure the work (mock mode)",
            check=OneOf(STOP_WHEN, in_parser=True),
        ),
    )
    find: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "--find",
            "a search task: the objects the team must find, as in toothbrush,laptop (instead of the world's "
            "task); the run ends once all are found (mock mode; a generated world places them by the kind of room)",
            type=_target_list,
            metavar="NAME,NAME",
            record=TEXTS,
        ),
    )
    prior: bool = field(
        default=True,
        metadata=option(
            "--no-prior",
            "under a search task, the built-in explorer does not weight ground by how its rooms go with the targets",
            switch_off=True,
        ),
    )

    @property
    def mock(self) -> bool:
        """A world read from a file (or generated), not a game's window."""
        return self.mode == "mock"

    def check(self) -> None:
        """What the mock world's options need, and the world: one that can be made, or a file that is there."""
        if (self.random_starts or self.stop_when == ALL_FOUND) and not self.mock:
            raise ConfigError("--random-starts and --stop-when all-found need --mode mock: a game places and counts")
        if self.find and not self.mock:
            raise ConfigError("--find needs --mode mock: a game does not say which objects are where")
        self._check_world()

    def _check_world(self) -> None:
        if is_generated(str(self.world)):
            try:
                open_world(str(self.world), self.world_seed, self.find)
            except WorldError as error:
                raise ConfigError(str(error)) from None
            return
        if self.world_seed is not None:
            raise ConfigError("--world-seed is the seed of a generated world: give --world gen:FAMILY too")
        if self.find and self.world.is_file():
            try:
                open_world(self.world, None, self.find)
            except WorldError as error:
                raise ConfigError(str(error)) from None
        if self.world.is_dir():
            raise ConfigError(f"--world {self.world} is a directory, not a world file")
        if not self.world.is_file():
            raise ConfigError(
                f"world file not found: {self.world} (shipped worlds: {', '.join(shipped_names(SHIPPED_WORLDS))})"
            )
