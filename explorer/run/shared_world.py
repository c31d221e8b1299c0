"""The world a run's agents act in: the team store, the perception behind it, and the bound on model calls."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from explorer.config.run_config import RunConfig
from explorer.model.budget import Budget
from explorer.model.client import CallGate
from explorer.run.perception_setup import MockSetup, UnitySetup
from explorer.run.roster import Roster
from explorer.run.stop import RunFailed
from explorer.team.hierarchy import RoutedStore, initial_groups
from explorer.team.split import SplitTeam
from explorer.team.store import InProcessStore, TeamStore
from memory.embedder import SentenceEmbedder, usable_cores
from nodes.interfaces import StopRun
from perception.base import EnvironmentInfo, PerceptionInterface
from perception.world import World as MockWorld


@dataclass(frozen=True)
class SharedWorld:
    """What the agents share: they read the store and perceive and act through the perception."""

    store: TeamStore
    gate: CallGate  # one bound on model calls in flight, for decisions and vision alike; cancelled when the run stops
    perception: PerceptionInterface  # as the schedule wraps it (explorer/schedule/catalogue.py)
    environment: EnvironmentInfo
    # One slot a core, held while a built-in policy decides (nodes/decision.py): a thousand agents' searches
    # taking turns on the cores rather than all at once, each holding its arrays, contending for the GIL.
    cpu_slots: threading.BoundedSemaphore
    mock_world: MockWorld | None = None  # its walls, rooms and objects, for a live map (mock mode)
    team: SplitTeam | None = None  # a team split across processes: what they share on its Redis run
    embedder: SentenceEmbedder | None = None  # the embedding service every local agent's memory encodes with


def start_world(
    config: RunConfig,
    setup: MockSetup | UnitySetup,
    roster: Roster,
    run_dir: Path,
    team: SplitTeam | None,
    embedder: SentenceEmbedder | None = None,
) -> SharedWorld:
    """The team store (the Redis one of a split team, else one in this process) with every explorer
    registered in it, and the perception started on it; raises RunFailed where the store is gone."""
    store: TeamStore = team.run.store() if team else InProcessStore()
    if roster.system:  # the hierarchy's routing: each explorer's reports to its group's coordinator
        store = RoutedStore(store, initial_groups(roster.agent_ids, roster.coordinator_ids), roster.system)
    limits = config.calls.limits()
    gate = CallGate(config.calls.max_concurrency, Budget(limits) if limits else None)
    perception = setup.start(store, roster.agent_ids, run_dir, gate)
    try:
        for agent_id in roster.agent_ids:
            store.register_agent(agent_id, perception.get_agent_state(agent_id).to_dict())
    except StopRun as error:  # a Redis store that went away since the start-up check
        raise RunFailed(str(error)) from None
    mock_world = setup.world if isinstance(setup, MockSetup) else None
    slots = threading.BoundedSemaphore(usable_cores())
    return SharedWorld(store, gate, perception, perception.get_environment_info(), slots, mock_world, team, embedder)
