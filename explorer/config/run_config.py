"""A run's settings, checked before anything is loaded."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from explorer.model.client import redact_url
from memory.embedder import BACKENDS
from perception.keymap import SHIPPED_KEYMAPS
from perception.world import DEFAULT_WORLD, SHIPPED_WORLDS
from perception.yaml_files import shipped_names

MODES = ("mock", "unity")
MAX_AGENTS = 1000  # a thread each
VISION_CALLS = ("combined", "split")  # one call for caption and objects, or the spec's two


DECIDE_LEVELS = ("actions", "goals")
COORDINATOR = "Coordinator"  # the coordinator's id: the team's last member, after Agent1..N
SCHEDULES = ("lockstep", "event")
STORE_SCHEMES = ("redis://", "rediss://")
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class ConfigError(ValueError):
    """A user's mistake in the arguments; the message is one line."""


@dataclass(frozen=True)
class RunConfig:
    mode: str = "mock"
    agents: int = 2
    steps: int | None = None  # None: the world's max_steps
    world: Path = DEFAULT_WORLD
    seed: int = 42
    model: str = "offline"
    api_base: str | None = None
    comm: bool = True
    decide: str = "actions"  # what a model chooses: each step's action, or goals the planner walks to
    schedule: str = "lockstep"  # or "event": a simulated clock with each agent's timing
    coordinator: str | None = None  # the Coordinator's model, when there is one
    run_dir: Path | None = None  # None: runs/<timestamp>/
    profiles: Path | None = None
    resume_memory: Path | None = None  # a run directory whose agents' memories this run starts from
    replay_replies: Path | None = None  # a run directory whose recorded model replies answer this run's calls
    timeout: float = 60.0  # seconds per model call
    max_concurrency: int = 32  # model calls in flight at once, over all agents
    price_in: float | None = None  # dollars per million prompt tokens, for models litellm cannot price
    price_out: float | None = None
    verbosity: int = 0  # -1 quiet, 0 normal, 1 verbose
    # Unity mode: each given once for all agents, or once per agent in order.
    window_titles: tuple[str, ...] = ()  # regular expressions
    keymaps: tuple[Path, ...] = ()  # none: perception.keymap.DEFAULT_KEYMAP
    regions: tuple[tuple[int, int, int, int], ...] = ()  # x, y, width, height inside the window
    vision: str = "combined"
    pause_key: str | None = None  # Unity mode: pressed before the model is asked and again before the action
    # A team split across processes: the Redis store they share, the team's run id, this process's agents.
    store: str | None = None  # None: the in-process store
    run_id: str | None = None
    local_agents: tuple[str, ...] = ()  # none: every member of the team
    join_timeout: float = 120.0  # seconds to wait for the other processes' agents
    embedder: str = "onnx"  # or "torch": the backend the embedding model runs on
    embedder_cache: Path | None = None  # where the ONNX export is kept; None: the user's cache directory

    def check(self):
        if self.mode not in MODES:
            raise ConfigError(f"unknown mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if not 1 <= self.agents <= MAX_AGENTS:
            raise ConfigError(f"--agents must be from 1 to {MAX_AGENTS}, not {self.agents}")
        if self.mode == "unity":
            self._check_unity()
        elif self.window_titles or self.keymaps or self.regions or self.vision != "combined" or self.pause_key:
            raise ConfigError("--window-title, --keymap, --region, --vision and --pause-key are for --mode unity")
        if self.decide not in DECIDE_LEVELS:
            raise ConfigError(f"unknown --decide {self.decide!r}: choose one of {', '.join(DECIDE_LEVELS)}")
        if self.decide == "goals" and self.mode != "mock":
            raise ConfigError("--decide goals needs --mode mock: goals come from the grid map a mock world gives")
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"unknown --schedule {self.schedule!r}: choose one of {', '.join(SCHEDULES)}")
        if self.schedule == "event" and self.mode != "mock":
            raise ConfigError("--schedule event needs --mode mock: a game keeps its own time")
        if self.coordinator is not None:
            self._check_coordinator()
        if self.steps is not None and self.steps < 1:
            raise ConfigError(f"--steps must be at least 1, not {self.steps}")
        if self.world.is_dir():
            raise ConfigError(f"--world {self.world} is a directory, not a world file")
        if not self.world.is_file():
            raise ConfigError(
                f"world file not found: {self.world} (shipped worlds: {', '.join(shipped_names(SHIPPED_WORLDS))})"
            )
        if not self.model.strip():
            raise ConfigError("--model must not be empty")
        if self.resume_memory is not None and not self.resume_memory.is_dir():
            raise ConfigError(f"--resume-memory: no such directory: {self.resume_memory}")
        if self.replay_replies is not None and not (self.replay_replies / "trace.jsonl").is_file():
            raise ConfigError(f"--replay-replies: {self.replay_replies} holds no run (no trace.jsonl there)")
        if self.profiles is not None and not self.profiles.is_file():
            raise ConfigError(f"profiles file not found: {self.profiles}")
        if self.embedder not in BACKENDS:
            raise ConfigError(f"unknown --embedder {self.embedder!r}: choose one of {', '.join(BACKENDS)}")
        if self.embedder_cache is not None:
            self._check_embedder_cache()
        if self.max_concurrency < 1:
            raise ConfigError(f"--max-concurrency must be at least 1, not {self.max_concurrency}")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ConfigError(f"--timeout must be a number of seconds more than 0, not {self.timeout}")
        for flag, price in (("--price-in", self.price_in), ("--price-out", self.price_out)):
            if price is not None and not (math.isfinite(price) and price >= 0):
                raise ConfigError(f"{flag} must be a number of dollars, 0 or more, not {price}")
        if self.run_dir is not None:
            self._check_run_dir()
        self._check_split()
        return self

    def _check_split(self):
        if self.store is None:
            if self.run_id is not None or self.local_agents:
                raise ConfigError("--run-id and --local-agents split a team over processes: they need --store redis://HOST:PORT/DB")
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
                raise ConfigError(f"--local-agents: {agent_id!r} is not in this team ({explorers[0]} to {explorers[-1]})")
        if len(set(self.local_agents)) != len(self.local_agents):
            raise ConfigError("--local-agents names an agent twice")
        if len(self.local_agents) not in (0, len(explorers)) and self.run_id is None:
            raise ConfigError("--local-agents runs part of the team here: give every process the same --run-id NAME")
        if not (math.isfinite(self.join_timeout) and self.join_timeout > 0):
            raise ConfigError(f"--join-timeout must be a number of seconds more than 0, not {self.join_timeout}")

    def members(self):
        """Every member of the team: the explorers, then the coordinator where there is one."""
        return self.agent_ids() + ([COORDINATOR] if self.coordinator else [])

    def local_members(self):
        """The members this process runs: --local-agents (all when not given), and the coordinator with Agent1."""
        local = set(self.local_agents or self.agent_ids())
        if "Agent1" in local:
            local.add(COORDINATOR)
        return [member for member in self.members() if member in local]

    def _check_coordinator(self):
        if not self.coordinator.strip() or self.coordinator == "random":
            raise ConfigError("--coordinator must be offline or a model's name")
        if self.mode != "mock":
            raise ConfigError("--coordinator needs --mode mock: it plans over the ground the explorers report")
        if not self.comm:
            raise ConfigError("--coordinator sends its directives as messages: drop --no-comm")

    def _check_embedder_cache(self):
        """A cache path that cannot be a folder is the user's to fix: said now, not when the model loads."""
        existing = next(p for p in (self.embedder_cache, *self.embedder_cache.parents) if p.exists())
        if not existing.is_dir():
            raise ConfigError(f"--embedder-cache {self.embedder_cache}: {existing} is a file, not a folder")

    def _check_run_dir(self):
        """An early check that a given directory holds no run; explorer/run/run_dir.py claims it, atomically,
        once the run's checks have passed, and says what is wrong with a path that cannot be one."""
        try:
            taken = self.run_dir.is_dir() and any(self.run_dir.iterdir())
        except OSError:
            taken = False  # unreadable: the claim says why
        if taken:
            raise ConfigError(f"run directory {self.run_dir} is not empty; choose another --run-dir")

    def _check_unity(self):
        if not self.window_titles:
            raise ConfigError("--mode unity needs --window-title REGEX, matching the game window's title")
        for title in self.window_titles:
            try:
                re.compile(title)
            except re.error as error:
                raise ConfigError(f"--window-title {title!r} is not a valid regular expression: {error}") from None
        for flag, values in (("--window-title", self.window_titles), ("--keymap", self.keymaps), ("--region", self.regions)):
            if len(values) not in (0, 1, self.agents):
                raise ConfigError(
                    f"{flag} is given {len(values)} times for {self.agents} agents: give it once for all, or once per agent"
                )
        for keymap in self.keymaps:
            if not keymap.is_file():
                raise ConfigError(
                    f"key map file not found: {keymap} (shipped key maps: {', '.join(shipped_names(SHIPPED_KEYMAPS))})"
                )
        if self.vision not in VISION_CALLS:
            raise ConfigError(f"unknown --vision {self.vision!r}: choose one of {', '.join(VISION_CALLS)}")

    def per_agent(self, values, default=None):
        """A once-or-per-agent option as one value per agent."""
        values = values or (default,)
        return list(values) * self.agents if len(values) == 1 else list(values)

    def agent_ids(self):
        return [f"Agent{i}" for i in range(1, self.agents + 1)]

    def to_dict(self):
        return {
            "mode": self.mode,
            "agents": self.agents,
            "steps": self.steps,
            "world": str(self.world),
            "seed": self.seed,
            "model": self.model,
            "api_base": redact_url(self.api_base) if self.api_base else None,
            "comm": self.comm,
            "decide": self.decide,
            "schedule": self.schedule,
            "coordinator": self.coordinator,
            "profiles": str(self.profiles) if self.profiles else None,
            "resume_memory": str(self.resume_memory) if self.resume_memory else None,
            "replay_replies": str(self.replay_replies) if self.replay_replies else None,
            "timeout": self.timeout,
            "max_concurrency": self.max_concurrency,
            "price_in": self.price_in,
            "price_out": self.price_out,
            "window_titles": list(self.window_titles),
            "keymaps": [str(path) for path in self.keymaps],
            "regions": [list(region) for region in self.regions],
            "vision": self.vision,
            "pause_key": self.pause_key,
            "store": redact_url(self.store) if self.store else None,
            "run_id": self.run_id,
            "local_agents": list(self.local_agents),
            "join_timeout": self.join_timeout,
            "embedder": self.embedder,
            "embedder_cache": str(self.embedder_cache) if self.embedder_cache else None,
        }
