"""The team's store, the memory the agents share: discoveries, positions, mailboxes, the message history.

`TeamStore` is the seam: the nodes read it during a step (through
nodes/interfaces.TeamView and their mailbox), and only the step commit
changes it. `InProcessStore` is the one for agents that share a process; it
owns its lock, and its methods are the only way in, so no caller can see a
half-made change.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence

from nodes.decision_context import Cell, Discovery, MapNews, PoseDict, SightReport, TeamMap, Wall
from nodes.interfaces import StepReport
from perception.base import BROADCAST, Message


class TeamStore(ABC):
    @abstractmethod
    def register_agent(self, agent_id: str, pose: PoseDict | None = None) -> None:
        """Give an agent a mailbox and a position; done for every agent before any starts."""

    @abstractmethod
    def read_mailbox(self, agent_id: str) -> list[Message]:
        """The agent's messages in arrival order; reading empties the mailbox."""

    @abstractmethod
    def commit_step(self, reports: Sequence[StepReport]) -> list[list[str]]:
        """Apply finished steps in the order given, at once: deliver their messages, add the objects
        they saw, move their agents. Returns, per report, the objects the team had not seen before."""

    @abstractmethod
    def send_message(self, message: Message) -> None:
        """Deliver a message now, to one mailbox or, for "all", to every other agent's (a message
        that arrives late, on a clock with delays).

        The Decision node only ever names a teammate or "all", so anything else is a bug, and
        raises ValueError.
        """

    @abstractmethod
    def send_report(self, recipient: str, report: SightReport) -> None:
        """Put an explorer's sight report in its coordinator's inbox."""

    @abstractmethod
    def read_reports(self, agent_id: str) -> list[SightReport]:
        """The reports that reached the coordinator `agent_id`, in arrival order; reading empties its inbox."""

    @abstractmethod
    def objects(self) -> list[str]:
        """Discovered object names in the order they were found."""

    @abstractmethod
    def discoveries(self) -> dict[str, Discovery]:
        """{name: {finder, step, cell}}, in discovery order; cell is [x, y, level], or None where unknown."""

    @abstractmethod
    def positions(self) -> dict[str, PoseDict | None]:
        """{agent_id: its pose}, None where it was registered without one."""

    @abstractmethod
    def history(self) -> list[Message]:
        """Every message delivered, in order."""

    @abstractmethod
    def map_news(self, since: tuple[int, int]) -> MapNews:
        """The team's map: the free cells and walls its committed steps saw, each once in the order first seen,
        after the first `since` (cells, walls)."""


MAP_END = (2**62, 2**62)  # a read of the team's map from past its end: no news, and how much it holds


def map_as_held(news: MapNews, since: tuple[int, int], held: tuple[int, int]) -> MapNews:
    """`news` read from `since`, cut to what the team's map held at an earlier moment (`held`: its cells and
    walls then): the map as a step that began then saw it."""
    cells, walls = (max(then - read, 0) for then, read in zip(held, since))
    return MapNews(news.cells[:cells], news.walls[:walls], (max(held[0], since[0]), max(held[1], since[1])))


class HeldMap:
    """A team's map as it was when `held` was read from it (a TeamMap)."""

    def __init__(self, team_map: TeamMap, held: tuple[int, int]) -> None:
        self.team_map, self.held = team_map, held

    def map_news(self, since: tuple[int, int]) -> MapNews:
        return map_as_held(self.team_map.map_news(since), since, self.held)


class TeamMapLog:
    """The team's map as two logs, each cell and wall once: it holds no more than the world has, however long
    the run. Not locked: its store's lock guards it."""

    def __init__(self) -> None:
        self.cells: list[Cell] = []
        self.walls: list[Wall] = []
        self._cells: set[Cell] = set()
        self._walls: set[Wall] = set()

    def add(self, report: StepReport) -> None:
        for cell in report.seen_cells:
            if cell not in self._cells:
                self._cells.add(cell)
                self.cells.append(cell)
        for wall in report.seen_walls:
            if wall not in self._walls:
                self._walls.add(wall)
                self.walls.append(wall)

    def news(self, since: tuple[int, int]) -> MapNews:
        cells, walls = since
        return MapNews(tuple(self.cells[cells:]), tuple(self.walls[walls:]), (len(self.cells), len(self.walls)))


class InProcessStore(TeamStore):
    def __init__(self) -> None:
        self._lock = threading.RLock()  # a commit holds it across its parts
        # name -> (finder, step, cell or None), in discovery order
        self._objects: dict[str, tuple[str | None, int | None, list[int] | None]] = {}
        self._positions: dict[str, PoseDict | None] = {}
        self._mailboxes: dict[str, list[Message]] = {}
        self._history: list[Message] = []
        self._reports: dict[str, list[SightReport]] = {}  # coordinator -> its reports not yet read
        self._map = TeamMapLog()

    def register_agent(self, agent_id: str, pose: PoseDict | None = None) -> None:
        with self._lock:
            self._mailboxes.setdefault(agent_id, [])
            self._positions[agent_id] = pose

    def commit_step(self, reports: Sequence[StepReport]) -> list[list[str]]:
        with self._lock:
            new_objects = []
            for report in reports:
                for message in report.outgoing:
                    self.send_message(message)
                new_objects.append(
                    self.add_objects(report.seen_objects, report.agent_id, report.step, report.object_cells)
                )
                if report.pose:  # a coordinator has none
                    self._positions[report.agent_id] = report.pose
                self._map.add(report)
            return new_objects

    def send_report(self, recipient: str, report: SightReport) -> None:
        with self._lock:
            self._reports.setdefault(recipient, []).append(report)

    def read_reports(self, agent_id: str) -> list[SightReport]:
        with self._lock:
            return self._reports.pop(agent_id, [])

    def send_message(self, message: Message) -> None:
        with self._lock:
            if message.recipient == BROADCAST:
                targets = [a for a in self._mailboxes if a != message.sender]
            elif message.recipient in self._mailboxes and message.recipient != message.sender:
                targets = [message.recipient]
            else:
                raise ValueError(f"{message.sender} sent a message to {message.recipient!r}, not a teammate")
            for target in targets:
                self._mailboxes[target].append(message)
            self._history.append(message)

    def add_objects(
        self,
        names: Iterable[str],
        finder: str | None = None,
        step: int | None = None,
        cells: Mapping[str, Sequence[int]] | None = None,
    ) -> list[str]:
        """Record discoveries, with their cells where known; returns the names the team had not seen before."""
        new = []
        with self._lock:
            for name in names:
                if name not in self._objects:
                    cell = (cells or {}).get(name)
                    self._objects[name] = (finder, step, list(cell) if cell else None)
                    new.append(name)
        return new

    def read_mailbox(self, agent_id: str) -> list[Message]:
        with self._lock:
            if agent_id not in self._mailboxes:
                return []  # a member with no mailbox (a coordinator): no one writes to it
            messages = self._mailboxes[agent_id]
            self._mailboxes[agent_id] = []
        return messages

    def objects(self) -> list[str]:
        with self._lock:
            return list(self._objects)

    def discoveries(self) -> dict[str, Discovery]:
        with self._lock:
            return {name: {"finder": f, "step": s, "cell": c} for name, (f, s, c) in self._objects.items()}

    def positions(self) -> dict[str, PoseDict | None]:
        with self._lock:
            return dict(self._positions)

    def history(self) -> list[Message]:
        with self._lock:
            return list(self._history)

    def map_news(self, since: tuple[int, int]) -> MapNews:
        with self._lock:
            return self._map.news(since)
