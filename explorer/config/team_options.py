"""The team's options: how many explorers, who directs them, who hears whom, their profiles, and a team split
across processes."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from explorer.config.options import PATH, SECRET_URL, TEXTS, Count, OneOf, Seconds, Spelling, option
from explorer.policies.built_in import not_a_coordinator
from explorer.records.errors import ConfigError
from explorer.records.secrets import redact_url
from explorer.team.topologies import SILENT, TOPOLOGIES, CommTopology

MAX_AGENTS = 1000  # a thread each
COORDINATOR = "Coordinator"  # the coordinator's id: the team's last member, after Agent1..N
SYSTEM = "System"  # the system agent's id, above two coordinators or more (--coordinators K)
STORE_SCHEMES = ("redis://", "rediss://")
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
T = TypeVar("T")


def _agent_list(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of agents such as Agent1,Agent2")
    return names


@dataclass(frozen=True)
class TeamOptions:
    """The explorers, their directors and profiles, who hears whom, and which of them this process runs."""

    agents: int = field(
        default=2,
        metadata=option(
            "--agents",
            "number of agents (default %(default)s)",
            type=int,
            check=Count(1, MAX_AGENTS),
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
    profiles: Path | None = field(
        default=None,
        metadata=option(
            "--profiles",
            "YAML file of agent profiles: role, persona, model, temperature",
            type=Path,
            record=PATH,
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

    @property
    def topology(self) -> CommTopology:
        """--comm's traits (explorer/team/topologies.py): --no-comm is its `none`."""
        return TOPOLOGIES[self.comm]

    def agent_ids(self) -> list[str]:
        return [f"Agent{i}" for i in range(1, self.agents + 1)]

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

    def members(self) -> list[str]:
        """Every member of the team: the explorers, then the coordinators and the system agent where there are."""
        return self.agent_ids() + self.directors()

    def local_members(self) -> list[str]:
        """The members this process runs: --local-agents (all when not given), and the directors with Agent1."""
        local = set(self.local_agents or self.agent_ids())
        if "Agent1" in local:
            local.update(self.directors())
        return [member for member in self.members() if member in local]

    def per_agent(self, values: Sequence[T], default: T | None = None) -> list[T | None]:
        """A once-or-per-agent option as one value per agent."""
        given: Sequence[T | None] = values or (default,)
        return list(given) * self.agents if len(given) == 1 else list(given)

    def check(self) -> None:
        """The directors and the routes through them; the profiles file; a team split over processes."""
        if self.coordinator is not None and (not self.coordinator.strip() or not_a_coordinator(self.coordinator)):
            raise ConfigError("--coordinator must be offline or a model's name")
        if self.coordinator is not None and not self.topology.messages:
            raise ConfigError("--coordinator sends its directives as messages: drop --no-comm")
        self._check_topology()
        if self.profiles is not None and not self.profiles.is_file():
            raise ConfigError(f"profiles file not found: {self.profiles}")
        self._check_split()

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
        self._check_local_agents()

    def _check_local_agents(self) -> None:
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
