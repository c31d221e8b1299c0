"""The team's hierarchy as the messages find it: which coordinator each explorer reports to, and the
mailboxes of the members that direct (--coordinators K).

The system agent divides the explorers between the coordinators and tells each coordinator its group in a
sentence ("Group: Agent1, Agent4. Region x 0-29, y 0-59."). `RoutedStore` reads those sentences as it
delivers them: from then on the group's explorers report to that coordinator, so that a coordinator gets an
explorer's reports from the moment it hears the explorer is its own, on every schedule and after any delay.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from explorer.team.store import TeamStore
from nodes.decision_context import Discovery, MapNews, PoseDict, SightReport
from nodes.interfaces import StepReport
from perception.base import Message

Region = tuple[int, int, int, int]  # (x0, x1, y0, y1), inclusive: the ground a coordinator's group works
_GROUP = re.compile(r"group:\s*((?:[A-Za-z]+\d*\s*,?\s*)+)\.", re.I)
_REGION = re.compile(r"region x\s*(-?\d+)\s*-\s*(-?\d+)\s*,\s*y\s*(-?\d+)\s*-\s*(-?\d+)", re.I)


def initial_groups(explorers: Sequence[str], coordinators: Sequence[str]) -> dict[str, str]:
    """{explorer: its coordinator} before the system agent's first word: the explorers in order, in
    contiguous groups as even as can be."""
    size, extra = divmod(len(explorers), len(coordinators))
    groups, start = {}, 0
    for k, coordinator in enumerate(coordinators):
        end = start + size + (k < extra)
        groups.update(dict.fromkeys(explorers[start:end], coordinator))
        start = end
    return groups


def group_sentence(members: Sequence[str], region: Region | None) -> str:
    """'Group: Agent1, Agent4. Region x 0-29, y 0-59.': what the system agent tells a coordinator."""
    said = f"Group: {', '.join(members)}."
    if region:
        x0, x1, y0, y1 = region
        said += f" Region x {x0}-{x1}, y {y0}-{y1}."
    return said


def read_group(text: str) -> tuple[list[str], Region | None] | None:
    """(the members, the region or None) a group sentence gives, or None for any other text."""
    match = _GROUP.search(text)
    if not match:
        return None
    members = [name for name in re.split(r"[\s,]+", match.group(1)) if name]
    region = _REGION.search(text)
    return members, tuple(int(v) for v in region.groups()) if region else None  # type: ignore[return-value]


class RoutedStore(TeamStore):
    """The team's store with the hierarchy's routing: each explorer's report goes to its group's
    coordinator, a coordinator's report up to the system agent, and the directing members have
    mailboxes (for the system agent's word, and for messages passed up) that are not teammates' places."""

    def __init__(self, store: TeamStore, groups: dict[str, str], system: str) -> None:
        self.store = store
        self.system = system
        self._lock = threading.Lock()
        self._groups = dict(groups)  # explorer -> the coordinator it reports to
        self._mailboxes: dict[str, list[Message]] = {d: [] for d in [*dict.fromkeys(groups.values()), system]}

    def send_report(self, recipient: str, report: SightReport) -> None:
        # The commit addresses every report to "the coordinator": the group says which, and above it the system.
        with self._lock:
            to = self._groups.get(report.sender, self.system)
        self.store.send_report(to, report)

    def send_message(self, message: Message) -> None:
        with self._lock:
            mailbox = self._mailboxes.get(message.recipient)
            if mailbox is None:
                return self.store.send_message(message)
            mailbox.append(message)
            group = read_group(message.message) if message.sender == self.system else None
            if group:
                for explorer in group[0]:
                    if explorer in self._groups:
                        self._groups[explorer] = message.recipient

    def read_mailbox(self, agent_id: str) -> list[Message]:
        with self._lock:
            if agent_id in self._mailboxes:
                messages, self._mailboxes[agent_id] = self._mailboxes[agent_id], []
                return messages
        return self.store.read_mailbox(agent_id)

    def commit_step(self, reports: Sequence[StepReport]) -> list[list[str]]:
        with self._lock:
            messages = [m for r in reports for m in r.outgoing if m.recipient in self._mailboxes]
            for report in reports:
                self._address_up(report)
        for message in messages:  # lock-step delivers as it commits: the directors' mail first, then the rest
            self.send_message(message)
        kept = [_without(report, messages) for report in reports]
        return self.store.commit_step(kept)

    def _address_up(self, report: StepReport) -> None:
        """An explorer's message that went up (its step's trace names its coordinator) names the coordinator
        of the group it is in now: the system agent may have moved it since its run began."""
        said = report.record.message_out if report.record else None
        if said and said["recipient"] in self._mailboxes and report.agent_id in self._groups:
            said["recipient"] = self._groups[report.agent_id]

    def register_agent(self, agent_id: str, pose: PoseDict | None = None) -> None:
        self.store.register_agent(agent_id, pose)

    def read_reports(self, agent_id: str) -> list[SightReport]:
        return self.store.read_reports(agent_id)

    def objects(self) -> list[str]:
        return self.store.objects()

    def discoveries(self) -> dict[str, Discovery]:
        return self.store.discoveries()

    def positions(self) -> dict[str, PoseDict | None]:
        return self.store.positions()

    def history(self) -> list[Message]:
        return self.store.history()

    def map_news(self, since: tuple[int, int]) -> MapNews:
        return self.store.map_news(since)


def _without(report: StepReport, delivered: Sequence[Message]) -> StepReport:
    """The report without the messages already delivered to the directors' mailboxes."""
    if not any(m in delivered for m in report.outgoing):
        return report
    kept = [m for m in report.outgoing if m not in delivered]
    return StepReport(**{**report.__dict__, "outgoing": kept})
