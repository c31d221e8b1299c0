"""A run's settings, each option declared once on its field (explorer/config/options.py), checked before
anything is loaded."""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from explorer.config.options import (
    FILE_PATH,
    PATH,
    PATHS,
    RECTANGLES,
    SECRET_URL,
    TEXTS,
    Count,
    Dollars,
    NotBlank,
    OneOf,
    Record,
    Seconds,
    ServerUrl,
    Spelling,
    first_problem,
    option,
    read_back,
    recorded,
)
from explorer.model.budget import Limits
from explorer.model.reply_format import REPLY_FORMATS
from explorer.policies.built_in import model_help, not_a_coordinator
from explorer.records.errors import ConfigError
from explorer.records.run_lock import run_in_use
from explorer.records.secrets import redact_url
from explorer.records.telemetry import NO_TELEMETRY, TELEMETRY_KINDS, telemetry_unavailable
from explorer.schedule.catalogue import LOCKSTEP, SCHEDULES, ScheduleKind, schedules_help
from explorer.team.topologies import SILENT, TOPOLOGIES, CommTopology
from memory.embedder import BACKENDS
from memory.onnx_export import CACHE_ENV
from perception.families.catalogue import FAMILIES
from perception.families.generate import open_world
from perception.families.names import is_generated
from perception.keymap import DEFAULT_KEYMAP, SHIPPED_KEYMAPS
from perception.targets import target_names
from perception.world import DEFAULT_WORLD, SHIPPED_WORLDS, WorldError
from perception.yaml_files import shipped_file, shipped_name, shipped_names, shipped_or_given

MODES = ("mock", "unity")
MAX_AGENTS = 1000  # a thread each
VISION_CALLS = ("combined", "split")  # one call for caption and objects, or two (caption, then objects)


GOALS = "goals"  # --decide goals: a goal the planner walks to
DECIDE_LEVELS = ("actions", GOALS)
COORDINATOR = "Coordinator"  # the coordinator's id: the team's last member, after Agent1..N
SYSTEM = "System"  # the system agent's id, above two coordinators or more (--coordinators K)
OFFLINE_FALLBACK = "offline"  # the built-in explorer decides a step no model decided
FALLBACKS = ("scan", OFFLINE_FALLBACK)
ALL_FOUND = "all-found"
STOP_WHEN = ("steps", ALL_FOUND)  # what ends a run for the team: its step budget, or every object found
STORE_SCHEMES = ("redis://", "rediss://")
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
T = TypeVar("T")


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


def _target_list(text: str) -> tuple[str, ...]:
    try:
        return target_names(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of objects such as toothbrush,laptop") from None


def _agent_list(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of agents such as Agent1,Agent2")
    return names


@dataclass(frozen=True)
class RunConfig:
    """A run's settings. A field that is a run option declares it in its metadata: flag, help, default, check
    and place in config.json. `check` adds what involves several options."""

    mode: str = field(
        default="mock",
        metadata=option(
            "--mode",
            f"perception backend: {' or '.join(MODES)} (default %(default)s)",
            check=OneOf(MODES, label="mode"),
        ),
    )
    agents: int = field(
        default=2,
        metadata=option(
            "--agents",
            "number of agents (default %(default)s)",
            type=int,
            check=Count(1, MAX_AGENTS),
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
    model: str = field(
        default="offline",
        metadata=option(
            "--model",
            model_help(),
            check=NotBlank(),
        ),
    )
    api_base: str | None = field(
        default=None,
        metadata=option(
            "--api-base",
            "base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1",
            check=ServerUrl(),
            record=SECRET_URL,
        ),
    )
    # The code reads it as one typed value, `topology` (explorer/team/topologies.py).
    comm: str = field(
        default="all",
        metadata=option(
            "--comm",
            "who an explorer's messages reach: all (default: every teammate); star: the coordinator only, "
            "which passes on to each explorer what concerns it (needs --coordinator); tree: along the "
            "hierarchy of --coordinators K, explorer to coordinator to system agent and down; none: --no-comm",
            check=OneOf(tuple(TOPOLOGIES), in_parser=True),
            spelling=Spelling("--no-comm", SILENT, "turn off all messages between agents"),
        ),
    )
    decide: str = field(
        default="actions",
        metadata=option(
            "--decide",
            "what a model chooses: each step's action (default), or a goal the planner walks to (mock mode)",
            check=OneOf(DECIDE_LEVELS, in_parser=True),
        ),
    )
    reply_format: str = field(
        default="auto",
        metadata=option(
            "--reply-format",
            "how a model is asked to reply: auto (default: under a JSON schema where the server takes one, "
            "else YAML), json (always under a schema), or yaml (no schema)",
            check=OneOf(REPLY_FORMATS, in_parser=True),
        ),
    )
    schedule: str = field(
        default=LOCKSTEP,
        metadata=option(
            "--schedule",
            schedules_help(),
            check=OneOf(tuple(SCHEDULES), in_parser=True),
        ),
    )
    coordinator: str | None = field(
        default=None,
        metadata=option(
            "--coordinator",
            "add a Coordinator that directs the explorers: offline, or a model (mock mode)",
            metavar="MODEL",
        ),
    )
    coordinators: int = field(
        default=1,
        metadata=option(
            "--coordinators",
            "split the explorers among K coordinators, under a system agent that divides the world between "
            "them and moves explorers between groups (needs --coordinator)",
            metavar="K",
            type=int,
            check=Count(1),
        ),
    )
    run_dir: Path | None = field(
        default=None,
        metadata=option(
            "--run-dir",
            "where to write the run (default runs/<timestamp>/ here)",
            type=Path,
            record=None,
        ),
    )
    profiles: Path | None = field(
        default=None,
        metadata=option(
            "--profiles",
            "YAML file of agent profiles: role, persona, model, temperature",
            type=Path,
            record=PATH,
        ),
    )
    resume_memory: Path | None = field(
        default=None,
        metadata=option(
            "--resume-memory",
            "start each agent with the memory it saved in an earlier run",
            type=Path,
            metavar="RUN_DIR",
            record=PATH,
        ),
    )
    replay_replies: Path | None = field(
        default=None,
        metadata=option(
            "--replay-replies",
            "answer each model call with the reply recorded in an earlier run's trace, instead of calling the model",
            type=Path,
            metavar="RUN_DIR",
            record=PATH,
        ),
    )
    timeout: float = field(
        default=60.0,
        metadata=option(
            "--timeout",
            "seconds before a model call, or a plug-in's decide, is cut off (default %(default)g)",
            type=float,
            check=Seconds(),
        ),
    )
    preflight: bool = field(
        default=True,
        metadata=option(
            "--no-preflight",
            "skip the check before the run that asks each model for one token (so that a server or a model "
            "that is not there is refused at once, before the run directory is made)",
            switch_off=True,
        ),
    )
    max_concurrency: int = field(
        default=32,
        metadata=option(
            "--max-concurrency",
            "model calls in flight at once, over all agents (default %(default)s)",
            type=int,
            check=Count(1),
        ),
    )
    price_in: float | None = field(
        default=None,
        metadata=option(
            "--price-in",
            "dollars per million prompt tokens, for models litellm cannot price",
            type=float,
            check=Dollars(),
        ),
    )
    price_out: float | None = field(
        default=None,
        metadata=option(
            "--price-out",
            "dollars per million completion tokens, likewise",
            type=float,
            check=Dollars(),
        ),
    )
    max_cost: float | None = field(
        default=None,
        metadata=option(
            "--max-cost",
            "stop the run cleanly once its model calls have cost this many dollars",
            metavar="USD",
            type=float,
            check=Dollars(),
        ),
    )
    max_calls: int | None = field(
        default=None,
        metadata=option(
            "--max-calls",
            "stop the run cleanly once it has made this many model requests (retries included)",
            metavar="N",
            type=int,
            check=Count(1),
        ),
    )
    max_tokens: int | None = field(
        default=None,
        metadata=option(
            "--max-tokens",
            "stop the run cleanly once its model calls have used this many tokens (prompt and completion)",
            metavar="N",
            type=int,
            check=Count(1),
        ),
    )
    fallback: str = field(
        default="scan",
        metadata=option(
            "--fallback",
            "what a step with no usable model decision does: scan (default), or offline (the built-in "
            "explorer decides it, and the trace says so)",
            check=OneOf(FALLBACKS, in_parser=True),
        ),
    )
    telemetry: str = field(
        default=NO_TELEMETRY,
        metadata=option(
            "--telemetry",
            "otlp: send OpenTelemetry spans of the run (GenAI conventions) to the collector that "
            "OTEL_EXPORTER_OTLP_ENDPOINT names (default http://localhost:4318; the telemetry extra); "
            "none (default): send nothing (docs/telemetry.md)",
            check=OneOf(TELEMETRY_KINDS, in_parser=True),
        ),
    )
    verbosity: int = 0  # -1 quiet, 0 normal, 1 verbose: the command line's -q and -v
    # Unity mode: each given once for all agents, or once per agent in order.
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
    # A team split across processes: the Redis store they share, the team's run id, this process's agents.
    store: str | None = field(
        default=None,
        metadata=option(
            "--store",
            "the team store: redis://HOST:PORT/DB (default: in this process)",
            metavar="URL",
            group="team",
            record=SECRET_URL,
        ),
    )
    run_id: str | None = field(
        default=None,
        metadata=option(
            "--run-id",
            "the run the processes share (with --store)",
            metavar="NAME",
            group="team",
        ),
    )
    local_agents: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "--local-agents",
            "the agents this process runs (default all; the Coordinator runs with Agent1)",
            type=_agent_list,
            metavar="Agent1,Agent2",
            group="team",
            record=TEXTS,
        ),
    )
    join_timeout: float = field(
        default=120.0,
        metadata=option(
            "--join-timeout",
            "how long to wait for the other processes' agents to join (default %(default)g)",
            type=float,
            metavar="SECONDS",
            group="team",
            check=Seconds(),
        ),
    )
    embedder: str = field(
        default="onnx",
        metadata=option(
            "--embedder",
            "onnx (default): ONNX Runtime on a one-time export, quick to start; torch: sentence-transformers",
            group="embedding",
            check=OneOf(BACKENDS, in_parser=True),
        ),
    )
    embedder_cache: Path | None = field(
        default=None,
        metadata=option(
            "--embedder-cache",
            f"where the ONNX export is kept (default ${CACHE_ENV}, else ~/.cache/multi-agent-explorer)",
            type=Path,
            metavar="DIR",
            group="embedding",
            record=PATH,
        ),
    )

    def check(self) -> RunConfig:
        """This config, if its options make a run; else ConfigError, one line saying what is wrong."""
        problem = first_problem(self)
        if problem:
            raise ConfigError(problem)
        if self.mode == "unity":
            self._check_unity()
        elif self.window_titles or self.keymaps or self.regions or self.vision != "combined" or self.pause_key:
            raise ConfigError("--window-title, --keymap, --region, --vision and --pause-key are for --mode unity")
        if (self.random_starts or self.stop_when == ALL_FOUND) and self.mode != "mock":
            raise ConfigError("--random-starts and --stop-when all-found need --mode mock: a game places and counts")
        if self.find and self.mode != "mock":
            raise ConfigError("--find needs --mode mock: a game does not say which objects are where")
        if self.decide == "goals" and self.mode != "mock":
            raise ConfigError("--decide goals needs --mode mock: goals come from the grid map a mock world gives")
        if self.schedule_kind.mock_only and self.mode != "mock":
            raise ConfigError(f"--schedule {self.schedule} needs --mode mock: a game keeps its own time")
        if self.schedule_kind.one_process and (self.coordinator is not None or self.store is not None):
            raise ConfigError(
                f"--schedule {self.schedule} runs a team of explorers in one process: not with --coordinator or --store"
            )
        if self.coordinator is not None:
            self._check_coordinator(self.coordinator)
        self._check_topology()
        self._check_files()
        if self.run_dir is not None:
            self._check_run_dir(self.run_dir)
        self._check_split()
        unavailable = telemetry_unavailable(self.telemetry)
        if unavailable:
            raise ConfigError(unavailable)
        if self.local_agents and self.limits():
            raise ConfigError(
                "--max-cost, --max-calls and --max-tokens bound one process's model calls: "
                "not for a team split over processes (--local-agents)"
            )
        return self

    def _check_files(self) -> None:
        """The files and directories the options name: there, and of the right kind."""
        self._check_world()
        if self.resume_memory is not None and not self.resume_memory.is_dir():
            raise ConfigError(f"--resume-memory: no such directory: {self.resume_memory}")
        if self.replay_replies is not None and not (self.replay_replies / "trace.jsonl").is_file():
            raise ConfigError(f"--replay-replies: {self.replay_replies} holds no run (no trace.jsonl there)")
        if self.replay_replies is not None and run_in_use(self.replay_replies):
            raise ConfigError(
                f"--replay-replies: {self.replay_replies} is a run still going: replay it once it has ended"
            )
        if self.profiles is not None and not self.profiles.is_file():
            raise ConfigError(f"profiles file not found: {self.profiles}")
        if self.embedder_cache is not None:
            self._check_embedder_cache(self.embedder_cache)

    def _check_world(self) -> None:
        """A generated world that can be made, or a world file that is there."""
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

    def _check_split(self) -> None:
        if self.store is None:
            if self.run_id is not None or self.local_agents:
                raise ConfigError(
                    "--run-id and --local-agents split a team over processes: they need --store redis://HOST:PORT/DB"
                )
            return
        if not self.store.startswith(STORE_SCHEMES):
            raise ConfigError(f"--store must be a Redis URL, redis://HOST:PORT/DB, not {redact_url(self.store)!r}")
        if self.run_id is not None and not RUN_ID.fullmatch(self.run_id):
            raise ConfigError(f"--run-id must be letters, digits, '.', '_' or '-' (at most 64), not {self.run_id!r}")
        explorers = self.agent_ids()
        for agent_id in self.local_agents:
            if agent_id == COORDINATOR:
                raise ConfigError("--local-agents: the Coordinator runs in Agent1's process; name explorers only")
            if agent_id not in explorers:
                raise ConfigError(
                    f"--local-agents: {agent_id!r} is not in this team ({explorers[0]} to {explorers[-1]})"
                )
        if len(set(self.local_agents)) != len(self.local_agents):
            raise ConfigError("--local-agents names an agent twice")
        if len(self.local_agents) not in (0, len(explorers)) and self.run_id is None:
            raise ConfigError("--local-agents runs part of the team here: give every process the same --run-id NAME")

    def members(self) -> list[str]:
        """Every member of the team: the explorers, then the coordinators and the system agent where there are."""
        return self.agent_ids() + self.directors()

    def coordinator_ids(self) -> list[str]:
        """The coordinators' ids: Coordinator alone, or Coordinator1..K under a system agent."""
        if not self.coordinator:
            return []
        if self.coordinators == 1:
            return [COORDINATOR]
        return [f"{COORDINATOR}{k}" for k in range(1, self.coordinators + 1)]

    def directors(self) -> list[str]:
        """The members that direct and neither see nor move: the coordinators, then the system agent."""
        return self.coordinator_ids() + ([SYSTEM] if self.coordinators > 1 and self.coordinator else [])

    def local_members(self) -> list[str]:
        """The members this process runs: --local-agents (all when not given), and the directors with Agent1."""
        local = set(self.local_agents or self.agent_ids())
        if "Agent1" in local:
            local.update(self.directors())
        return [member for member in self.members() if member in local]

    def _check_topology(self) -> None:
        """--comm star and tree, and --coordinators, against the team they route through."""
        topology = self.topology
        if topology.through_directors and self.coordinator is None:
            raise ConfigError(f"--comm {topology.name} needs --coordinator: the explorers' messages go through it")
        if topology.system_agent and self.coordinators < 2:
            raise ConfigError(f"--comm {topology.name} routes through the system agent: give --coordinators 2 or more")
        if self.coordinators > 1:
            if self.coordinator is None:
                raise ConfigError("--coordinators needs --coordinator MODEL: the coordinators' policy")
            if self.coordinators > self.agents:
                raise ConfigError(f"--coordinators {self.coordinators} is more than the {self.agents} explorers")
            if self.store is not None:
                raise ConfigError("--coordinators 2 or more runs the team in one process: not with --store")

    def _check_coordinator(self, coordinator: str) -> None:
        if not coordinator.strip() or not_a_coordinator(coordinator):
            raise ConfigError("--coordinator must be offline or a model's name")
        if self.mode != "mock":
            raise ConfigError("--coordinator needs --mode mock: it plans over the ground the explorers report")
        if not self.topology.messages:
            raise ConfigError("--coordinator sends its directives as messages: drop --no-comm")

    @staticmethod
    def _check_embedder_cache(cache: Path) -> None:
        """A cache path that cannot be a folder is the user's to fix: said now, not when the model loads."""
        existing = next(p for p in (cache, *cache.parents) if p.exists())
        if not existing.is_dir():
            raise ConfigError(f"--embedder-cache {cache}: {existing} is a file, not a folder")

    @staticmethod
    def _check_run_dir(run_dir: Path) -> None:
        """An early check that a given directory holds no run; explorer/run/run_dir.py claims it, atomically,
        once the run's checks have passed, and says what is wrong with a path that cannot be one."""
        try:
            taken = run_dir.is_dir() and any(run_dir.iterdir())
        except OSError:
            taken = False  # unreadable: the claim says why
        if taken:
            raise ConfigError(f"run directory {run_dir} is not empty; choose another --run-dir")

    def _check_unity(self) -> None:
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
            if len(values) not in (0, 1, self.agents):
                raise ConfigError(
                    f"{flag} is given {len(values)} times for {self.agents} agents: give it once for all, or once per agent"
                )
        for keymap in self.keymaps:
            if not keymap.is_file():
                raise ConfigError(
                    f"key map file not found: {keymap} (shipped key maps: {', '.join(shipped_names(SHIPPED_KEYMAPS))})"
                )

    def per_agent(self, values: Sequence[T], default: T | None = None) -> list[T | None]:
        """A once-or-per-agent option as one value per agent."""
        given: Sequence[T | None] = values or (default,)
        return list(given) * self.agents if len(given) == 1 else list(given)

    def limits(self) -> Limits:
        """The run's budgets."""
        return Limits(self.max_cost, self.max_calls, self.max_tokens)

    def agent_ids(self) -> list[str]:
        return [f"Agent{i}" for i in range(1, self.agents + 1)]

    @property
    def topology(self) -> CommTopology:
        """--comm's traits (explorer/team/topologies.py): --no-comm is its `none`."""
        return TOPOLOGIES[self.comm]

    @property
    def schedule_kind(self) -> ScheduleKind:
        """--schedule's factory and traits (explorer/schedule/catalogue.py)."""
        return SCHEDULES[self.schedule]

    def to_dict(self) -> dict[str, Any]:
        """The options as config.json records them (paths as text, URLs redacted), in field order."""
        return recorded(self)

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any], **missing: Any) -> RunConfig:
        """The config a config.json records, unchecked: `missing` gives what it does not hold (a run from before
        an option existed), else RunConfig's defaults."""
        return cls(**{**missing, **read_back(cls, _one_comm(settings))})


def _one_comm(settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """A config.json's settings with communication as one name: one written before `comm` was, held `comm`
    (false for --no-comm) and `comm_topology` (--comm) apart."""
    if not isinstance(settings.get("comm", ""), bool):
        return settings
    old = {name: value for name, value in settings.items() if name != "comm_topology"}
    return {**old, "comm": settings.get("comm_topology", "all") if settings["comm"] else SILENT}
