"""A team split across processes (`--store redis://... --run-id NAME --local-agents ...`).

Every process runs the team's whole schedule, but the flows of its own
agents only. Each of its agents' finished steps is published to the team
before it is handed in here; for each agent of another process, a relay
thread hands in that agent's steps as they are published. So every process
commits every step, from the same steps in the same agent order, and writes
the same trace and summary as one process running the whole team: the
schedule (lock-step or event) does not know the team is split.

A heartbeat tells the team each process is alive; a process that falls
silent, a Redis server that stops answering, a failure or a Ctrl-C in any
process stops the whole team, each process keeping every step it committed.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from explorer.team.codec import decode_step, encode_step
from nodes.interfaces import StepReport, StopRun
from perception.base import Message

if TYPE_CHECKING:
    from explorer.team.redis_store import RedisRun  # imports redis: only for a team on a Redis store

log = logging.getLogger("explorer")
BEAT_SECONDS = 0.5  # how often a process says it is alive, and looks at the others
SILENT_SECONDS = 5.0  # a process not heard from for this long has stopped (a busy one still beats in time)
EXPIRY_REFRESH_SECONDS = 10.0  # keys made since the last refresh have no expiry yet
RELAY_WAIT_SECONDS = 0.5  # a relay looks up from its wait this often, to see whether the run stopped


class TeamTurns(Protocol):
    """The schedule a split team's wraps: lock-step or event (explorer/schedule/turns.py's TurnTaking)."""

    @property
    def never_delivered(self) -> list[Message]: ...

    def hand_in(self, report: StepReport) -> bool: ...

    def stop(self) -> None: ...

    def finish(self) -> None: ...


class NotJoined(RuntimeError):
    """The team did not come together: not every agent joined within --join-timeout, or one stopped first."""


def process_name() -> str:
    """Which process this is, for the team's records and its messages: host, pid and a random tail."""
    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(3).hex()}"


class SplitTeam:
    """This process's part of a team on a RedisRun (explorer/team/redis_store.py)."""

    def __init__(self, run: RedisRun, members: Iterable[str], local: Iterable[str], process: str | None = None) -> None:
        self.run, self.members, self.local = run, list(members), list(local)
        self.process = process or process_name()
        self._quiet = threading.Event()  # set when this process has left: its heartbeat ends
        self._heart: threading.Thread | None = None

    def claim(self, arguments: Mapping[str, Any]) -> None:
        """Claim the local agents in the team's run; raises ConfigError where this process cannot."""
        self.run.claim(self.process, self.local, arguments)

    def release(self) -> None:
        """Give the claimed agents back, for a process that stops before its run begins."""
        try:
            self.run.release(self.process)
        except StopRun as error:
            log.debug("could not give back the claimed agents: %s", error)

    def join(self, timeout: float, say: Callable[[str], None]) -> None:
        """Wait until every member has joined; `say(text)` tells the user why it waits.

        Raises NotJoined after `timeout` seconds, or when a process of the team stops meanwhile."""
        self._heart = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self._heart.start()
        deadline, said = time.monotonic() + timeout, None
        while True:
            word = self.run.stop_reason()
            if word:
                self.leave()
                raise NotJoined(f"the team stopped before its run began: {word[0]}")
            missing = [member for member in self.members if member not in self.run.members()]
            if not missing:
                self.run.begin()
                return
            if time.monotonic() > deadline:
                reason = f"{', '.join(missing)} did not join run {self.run.run_id!r} within {timeout:g} s"
                self.run.stop(reason, "failed")
                self.leave()
                raise NotJoined(reason)
            if missing != said:
                say(
                    f"Waiting for {', '.join(missing)} to join run {self.run.run_id!r} on {self.run.url} "
                    f"(start them with --run-id {self.run.run_id} --local-agents {','.join(missing)})"
                )
                said = missing
            time.sleep(0.2)

    def _beat(self) -> None:
        refreshed = time.monotonic()
        while not self._quiet.is_set():
            try:
                self.run.beat(self.process, SILENT_SECONDS)
                if time.monotonic() - refreshed > EXPIRY_REFRESH_SECONDS:
                    self.run.expire()
                    refreshed = time.monotonic()
            except StopRun:  # the server is gone: the watch says so, and stops the run
                pass
            self._quiet.wait(BEAT_SECONDS)

    def schedule(self, inner: TeamTurns) -> SplitSchedule:
        return SplitSchedule(inner, self.run, self.local, [m for m in self.members if m not in self.local])

    def watch(self, stop: Callable[[str, str], None]) -> threading.Thread:
        """Until the run ends, look for a reason to stop the team here: `stop(reason, kind)` is called once with it."""
        members = self.run.members()
        others = sorted({members[agent] for agent in self.members if agent not in self.local})
        names = {process: [agent for agent in self.members if members[agent] == process] for process in others}

        # A process that has claimed its agents but not yet begun to beat (it is still starting: its telemetry,
        # its world) has the same SILENT_SECONDS from now as one that stopped beating.
        heard_from = time.monotonic()

        def look() -> None:
            while not self._quiet.wait(BEAT_SECONDS):
                try:
                    word = self.run.stop_reason()
                    silent = self.run.silent(others) if time.monotonic() - heard_from >= SILENT_SECONDS else []
                except StopRun as error:  # the store is gone
                    stop(str(error), "failed")
                    return
                if word:
                    stop(*word)
                    return
                if silent:
                    agents = [a for p in silent for a in names[p]]
                    reason = (
                        f"{', '.join(agents)} went silent: {'its' if len(agents) == 1 else 'their'} process "
                        f"sent no heartbeat for {SILENT_SECONDS:g} s"
                    )
                    self.tell(reason, "failed")
                    stop(reason, "failed")
                    return

        watcher = threading.Thread(target=look, name="team-watch", daemon=True)
        watcher.start()
        return watcher

    def tell(self, reason: str, kind: str) -> None:
        """Tell the other processes to stop, and why (the first word given stands)."""
        try:
            self.run.stop(reason, kind)
        except StopRun as error:
            log.debug("could not tell the team to stop: %s", error)

    def leave(self) -> None:
        """This process is done: its heartbeat ends, and the run's keys start to expire."""
        self._quiet.set()
        if self._heart is not None:
            self._heart.join()
        try:
            self.run.end(self.process)
        except StopRun as error:
            log.debug("could not mark the run ended: %s", error)


class SplitSchedule:
    """The `Schedule` of a split team: local steps are published, then handed in; the others' are relayed."""

    def __init__(self, inner: TeamTurns, run: RedisRun, local: Iterable[str], remote: Iterable[str]) -> None:
        self.inner, self.run = inner, run
        self.local, self.remote = list(local), list(remote)
        self._stopped = threading.Event()

    @property
    def never_delivered(self) -> list[Message]:
        return self.inner.never_delivered

    def hand_in(self, report: StepReport) -> bool:
        text = encode_step(report)
        self.run.publish_step(report.agent_id, text)
        step = decode_step(text)  # what the other processes commit, committed here too
        step.remember = report.remember
        return self.inner.hand_in(step)

    def stop(self) -> None:
        self._stopped.set()
        self.inner.stop()

    def finish(self) -> None:
        self.inner.finish()

    def relays(self) -> list[tuple[str, Callable[[], None]]]:
        """(agent_id, work) for each agent of another process: hands in its steps as they are published."""
        return [(agent_id, self._relay_for(agent_id)) for agent_id in self.remote]

    def _relay_for(self, agent_id: str) -> Callable[[], None]:
        def relay() -> None:
            after = "0"
            while not self._stopped.is_set():
                published = self.run.next_step(agent_id, after, RELAY_WAIT_SECONDS)
                if published is None:
                    continue
                after, text = published
                if not self.inner.hand_in(decode_step(text)):
                    return

        return relay
