"""The team as each agent perceived it, under --schedule realtime (explorer/schedule/realtime.py).

Steps are committed while others are under way, so an agent that read the
team's store as it went would see it change between looking and deciding,
and a replay could not show it the same. So when an agent perceives, the
schedule has it read, at once and under the schedule's lock: its view, its
mailbox, and the team's finds and places. Its step reads those only:
`RealtimePerception` gives its view and messages, and `TeamAsPerceived` (the
store its nodes are given) the finds and places. An agent's step runs on its
own thread, from perceiving to deciding (explorer/run/workers.py), so the
store view keeps each thread's own.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from explorer.schedule.realtime import RealtimeSchedule
from explorer.schedule.wrapped import WrappedPerception
from explorer.team.store import MAP_END, TeamStore, map_as_held
from nodes.decision_context import Discovery, MapNews, PoseDict, SightReport
from nodes.interfaces import StepReport
from perception.base import ActionResult, Message, Observation, PerceptionInterface


@dataclass(frozen=True)
class TeamSeen:
    """What one step read when it perceived: its view, at `time`, its messages, the team's finds and places."""

    step: int
    time: float
    observation: Observation
    messages: list[Message]
    discoveries: dict[str, Discovery]
    positions: dict[str, PoseDict | None]
    map_held: tuple[int, int] = (0, 0)  # the cells and walls the team's map held then (TeamStore.map_news)


class TeamAsPerceived(TeamStore):
    """The team's store as the agents' steps read it: the finds and places as each step perceived them
    (the store itself for a thread that has not perceived). Writes go to the store."""

    def __init__(self, store: TeamStore) -> None:
        self.store = store
        self._seen = threading.local()  # .team: the TeamSeen of the step on this thread

    def saw(self, seen: TeamSeen) -> None:
        """What the step on this thread perceived."""
        self._seen.team = seen

    def _team(self) -> TeamSeen | None:
        return getattr(self._seen, "team", None)

    def objects(self) -> list[str]:
        return list(self.discoveries())

    def discoveries(self) -> dict[str, Discovery]:
        seen = self._team()
        return dict(seen.discoveries) if seen else self.store.discoveries()

    def positions(self) -> dict[str, PoseDict | None]:
        seen = self._team()
        return dict(seen.positions) if seen else self.store.positions()

    def map_news(self, since: tuple[int, int]) -> MapNews:
        """The team's map as the step perceived it: what it held then, not what was committed since."""
        news, seen = self.store.map_news(since), self._team()
        return map_as_held(news, since, seen.map_held) if seen else news

    # The rest is the store's.

    def register_agent(self, agent_id: str, pose: PoseDict | None = None) -> None:
        self.store.register_agent(agent_id, pose)

    def read_mailbox(self, agent_id: str) -> list[Message]:
        return self.store.read_mailbox(agent_id)

    def commit_step(self, reports: Sequence[StepReport]) -> list[list[str]]:
        return self.store.commit_step(reports)

    def send_message(self, message: Message) -> None:
        self.store.send_message(message)

    def send_report(self, recipient: str, report: SightReport) -> None:
        self.store.send_report(recipient, report)

    def read_reports(self, agent_id: str) -> list[SightReport]:
        return self.store.read_reports(agent_id)

    def history(self) -> list[Message]:
        return self.store.history()


class RealtimePerception(WrappedPerception):
    """The backend as agents on the wall clock meet it: each view taken with the team as it then was."""

    def __init__(self, backend: PerceptionInterface, schedule: RealtimeSchedule, team: TeamAsPerceived) -> None:
        super().__init__(backend)
        self.store = team.store  # the team as this step perceived it
        self.schedule, self.team = schedule, team
        self._lock = threading.Lock()
        self._seen: dict[str, TeamSeen] = {}  # each agent's step under way
        self._unread: dict[str, list[Message]] = {}  # its messages, until its Communication node reads them

    def observe(self, agent_id: str, step: int | None = None) -> Observation:
        """The view of the step `step`, taken when the schedule lets it (the same again if asked again)."""
        step = step or 0
        with self._lock:
            seen = self._seen.get(agent_id)
        if seen is None or seen.step != step:
            seen = self.schedule.perceive(agent_id, step, lambda at: self._look(agent_id, step, at))
            with self._lock:
                self._seen[agent_id], self._unread[agent_id] = seen, list(seen.messages)
        self.team.saw(seen)
        return replace(seen.observation, time=seen.time, observed_time=seen.time)

    def _look(self, agent_id: str, step: int, at: float) -> TeamSeen:
        store = self.team.store
        observation = self.backend.observe(agent_id, step)
        held = store.map_news(MAP_END).read  # how much the team's map holds, and none of it copied
        return TeamSeen(
            step, at, observation, store.read_mailbox(agent_id), store.discoveries(), store.positions(), held
        )

    def poll_messages(self, agent_id: str) -> list[Message]:
        """The messages in its mailbox when its step perceived; reading empties it."""
        with self._lock:
            return self._unread.pop(agent_id, [])

    # The rest is the backend's

    def execute_action(self, agent_id: str, action: str, params: Mapping[str, object] | None = None) -> ActionResult:
        return self.backend.execute_action(agent_id, action)
