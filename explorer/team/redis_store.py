"""The team on a Redis server (`--store redis://HOST:PORT/DB`): the only module that imports `redis`.

Every key of a run starts with `explorer:<run id>:`, so runs never mix:

- the team store: `agents` (list, in team order), `found` (list of object
  names in discovery order), `objects` (hash: name -> {finder, step, cell}),
  `positions` (hash: agent -> pose), `mailbox:<agent>` (a stream per agent),
  `history` (a stream of every message delivered), `inbox:<coordinator>`
  (list of sight reports), `applied` and `results` (the change counter, below);
- the team's channels: `config` (the run's arguments, which every process
  must share), `members` (hash: agent -> the process running it), `state`
  (running, ended), `steps:<agent>` (a stream of the agent's finished steps),
  `alive:<process>` (a heartbeat that expires), `done:<process>` and `stop`
  (why the team stopped, set once).

Every process of a team commits every step itself, from the same steps in
the same order (explorer/team/split.py), so each makes the same changes to
the store in the same order. Each change is numbered in that order, and
applied by the first process to reach it, in a transaction on `applied`; the
others get its result from `results`. So a change is made once, whichever
process gets there first.
"""

from __future__ import annotations

import functools
import itertools
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast
from urllib.parse import urlsplit

import redis

from explorer.records.errors import ConfigError
from explorer.team.codec import (
    decode_message,
    decode_sight,
    encode_message,
    encode_sight,
)
from explorer.team.store import TeamStore
from nodes.decision_context import Cell, Discovery, MapNews, PoseDict, SightReport, Wall
from nodes.interfaces import StepReport, StopRun
from perception.base import BROADCAST, Message

KEY_TTL = 24 * 3600  # seconds every key of a run lives after the last process of its team has stopped
CONNECT_TIMEOUT = 3.0  # seconds


class _Served(Protocol):
    url: str  # the server, for messages


Served = TypeVar("Served", bound=_Served)
Params = ParamSpec("Params")
Result = TypeVar("Result")

# The client decodes every reply (decode_responses=True), which redis-py's types (bytes | str) cannot
# know: the casts below name the replies' real types. Streams read as RESP2 gives them: [(id, fields)].
_StreamEntries = list[tuple[str, dict[str, str]]]


class StoreLost(StopRun):
    """The Redis server stopped answering during the run."""


def display_url(url: str) -> str:
    """The URL without a password, for messages: redis://host:port/db."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path or '/0'}"


def _answering(
    method: Callable[Concatenate[Served, Params], Result],
) -> Callable[Concatenate[Served, Params], Result]:
    """A Redis error during the run stops it with one line naming the server."""

    @functools.wraps(method)
    def guarded(self: Served, *args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            return method(self, *args, **kwargs)
        except redis.RedisError as error:
            raise StoreLost(f"lost the team store at {self.url}: {_reason(error)}") from None

    return guarded


def _reason(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


class RedisRun:
    """One run's keys on a server: opened at start, where an unreachable server is the user's to fix."""

    def __init__(self, url: str, run_id: str) -> None:
        self.url = display_url(url)
        self.run_id = run_id
        self.prefix = f"explorer:{run_id}:"
        try:
            self.client = redis.Redis.from_url(
                url,
                socket_connect_timeout=CONNECT_TIMEOUT,
                socket_timeout=10,
                decode_responses=True,
            )
            self.client.ping()
        except (redis.RedisError, ValueError) as error:
            raise ConfigError(f"--store {self.url}: cannot reach Redis there: {_reason(error)}") from None

    def key(self, name: str) -> str:
        return self.prefix + name

    def store(self) -> RedisStore:
        return RedisStore(self)

    # Joining

    @_answering
    def claim(self, process: str, agent_ids: Iterable[str], arguments: Mapping[str, Any]) -> None:
        """Join the team as `process`, running `agent_ids`; raises ConfigError where it cannot."""
        state = cast("str | None", self.client.get(self.key("state")))
        if state is not None:
            raise ConfigError(
                f"run {self.run_id!r} on {self.url} has {'already ended' if state == 'ended' else 'already started'}: "
                "give this team a new --run-id"
            )
        self.client.set(self.key("config"), json.dumps(arguments, sort_keys=True), nx=True)
        team_arguments = json.loads(cast(str, self.client.get(self.key("config"))))  # set just above
        differing = next((name for name in sorted(arguments) if arguments[name] != team_arguments.get(name)), None)
        if differing:
            raise ConfigError(
                f"this process's {differing} is {arguments[differing]!r}, but run {self.run_id!r} has "
                f"{team_arguments.get(differing)!r}: every process of a team takes the same run arguments"
            )
        for agent_id in agent_ids:
            if not self.client.hsetnx(self.key("members"), agent_id, process):
                holder = cast("str | None", self.client.hget(self.key("members"), agent_id))
                if holder != process:
                    raise ConfigError(
                        f"{agent_id} has already joined run {self.run_id!r} from another process ({holder}): "
                        "give each process its own --local-agents"
                    )
        self.expire()

    @_answering
    def release(self, process: str) -> None:
        """Remove this process's claims (a process that stops before the run begins)."""
        members = self.client.hgetall(self.key("members"))
        mine = [agent_id for agent_id, holder in members.items() if holder == process]
        if mine:
            self.client.hdel(self.key("members"), *mine)

    @_answering
    def members(self) -> dict[str, str]:
        """{agent_id: the process running it} of those that have joined."""
        return cast("dict[str, str]", self.client.hgetall(self.key("members")))

    @_answering
    def begin(self) -> None:
        self.client.set(self.key("state"), "running")

    @_answering
    def end(self, process: str) -> None:
        self.client.set(self.key("state"), "ended")
        self.client.set(self.key(f"done:{process}"), 1)
        self.expire()

    @_answering
    def expire(self) -> None:
        """Every key of the run expires KEY_TTL after this (a heartbeat keeps its own, short life)."""
        heartbeats = self.key("alive:")
        for name in self.client.scan_iter(match=self.prefix + "*", count=500):
            if not name.startswith(heartbeats):
                self.client.expire(name, KEY_TTL)

    @_answering
    def team_trace(self, proposed: str) -> str:
        """The trace context the team's telemetry shares (a W3C traceparent): the first process's proposal,
        which every later one reads back (--telemetry)."""
        self.client.set(self.key("traceparent"), proposed, nx=True)
        return cast(str, self.client.get(self.key("traceparent")))

    # Liveness

    @_answering
    def beat(self, process: str, ttl: float) -> None:
        self.client.set(self.key(f"alive:{process}"), 1, px=int(ttl * 1000))

    @_answering
    def silent(self, processes: Sequence[str]) -> list[str]:
        """Those of `processes` that have neither a heartbeat nor finished."""
        with self.client.pipeline(transaction=False) as pipe:
            for process in processes:
                pipe.exists(self.key(f"alive:{process}"), self.key(f"done:{process}"))
            return [process for process, alive in zip(processes, pipe.execute()) if not alive]

    @_answering
    def stop(self, reason: str, kind: str = "failed") -> None:
        """Tell the team to stop, and why (`kind`: failed or interrupted); the first word given stands."""
        self.client.set(self.key("stop"), json.dumps({"reason": reason, "kind": kind}), nx=True)

    @_answering
    def stop_reason(self) -> tuple[str, str] | None:
        """(reason, kind) of the team's stop, or None while it goes on."""
        word = self.client.get(self.key("stop"))
        return (json.loads(word)["reason"], json.loads(word)["kind"]) if word else None

    # Finished steps

    @_answering
    def publish_step(self, agent_id: str, text: str) -> None:
        self.client.xadd(self.key(f"steps:{agent_id}"), {"step": text})

    @_answering
    def next_step(self, agent_id: str, after: str, wait: float) -> tuple[str, str] | None:
        """(stream id, the step) of the agent's first finished step after `after` ("0" for its first), or None
        after `wait` seconds."""
        answer = cast(
            "list[tuple[str, _StreamEntries]]",
            self.client.xread({self.key(f"steps:{agent_id}"): after}, count=1, block=int(wait * 1000)),
        )
        if not answer:
            return None
        entry_id, fields = answer[0][1][0]
        return entry_id, fields["step"]


class RedisStore(TeamStore):
    """The team store in Redis: each change made once for the team, whatever process makes it."""

    def __init__(self, run: RedisRun) -> None:
        self.url, self._client, self._key = run.url, run.client, run.key
        self._changes = itertools.count(1)  # this process's count of changes, the same in every process
        self._lock = threading.Lock()  # a change's number and its transaction go together
        self._read_up_to: dict[str, str] = {}  # agent_id -> the last message id its mailbox gave

    def _once(self, change: Callable[[redis.client.Pipeline], Result]) -> Result:
        """Apply `change(pipe)` unless a teammate's process has already applied it; its result either way.

        `change` reads through the pipe, then calls `pipe.multi()` and queues its writes.
        """
        applied, results = self._key("applied"), self._key("results")

        def attempt(pipe):
            if int(pipe.get(applied) or 0) >= number:
                done = pipe.hget(results, number)
                return json.loads(done) if done else None
            result = change(pipe)
            pipe.set(applied, number)
            if result is not None:
                pipe.hset(results, number, json.dumps(result))
            return result

        with self._lock:
            number = next(self._changes)
            # With value_from_callable, the reply is attempt's own (redis-py's types do not tell the two apart).
            return cast(Result, self._client.transaction(attempt, applied, value_from_callable=True))

    @_answering
    def register_agent(self, agent_id: str, pose: PoseDict | None = None) -> None:
        def change(pipe):
            known = agent_id in pipe.lrange(self._key("agents"), 0, -1)
            pipe.multi()
            if not known:
                pipe.rpush(self._key("agents"), agent_id)
            pipe.hset(self._key("positions"), agent_id, json.dumps(pose))

        self._once(change)

    @_answering
    def commit_step(self, reports: Sequence[StepReport]) -> list[list[str]]:
        def change(pipe):
            team = pipe.lrange(self._key("agents"), 0, -1)
            known = set(pipe.lrange(self._key("found"), 0, -1))
            deliveries = [(m, self._targets(m, team)) for report in reports for m in report.outgoing]
            map_gains = self._map_gains(pipe, reports)
            pipe.multi()
            self._add_to_map(pipe, map_gains)
            for message, targets in deliveries:
                self._deliver(pipe, message, targets)
            new_objects = []
            for report in reports:
                new = [name for name in dict.fromkeys(report.seen_objects) if name not in known]
                known.update(new)
                for name in new:
                    cell = report.object_cells.get(name)
                    found = {"finder": report.agent_id, "step": report.step, "cell": list(cell) if cell else None}
                    pipe.hset(self._key("objects"), name, json.dumps(found))
                    pipe.rpush(self._key("found"), name)
                if report.pose:  # a coordinator has none
                    pipe.hset(self._key("positions"), report.agent_id, json.dumps(report.pose))
                new_objects.append(new)
            return new_objects

        return self._once(change)

    def _map_gains(self, pipe: redis.client.Pipeline, reports: Sequence[StepReport]) -> tuple[list[str], list[str]]:
        """The cells and walls ("x,y,z", "x,y") the reports saw that the team's map does not hold yet, each once."""
        gains = []
        for kind, seen in (
            ("cells", [c for r in reports for c in r.seen_cells]),
            ("walls", [w for r in reports for w in r.seen_walls]),
        ):
            named = list(dict.fromkeys(",".join(map(str, place)) for place in seen))
            held = pipe.smismember(self._key(f"map:{kind}:set"), named) if named else []
            gains.append([name for name, there in zip(named, held) if not there])
        return gains[0], gains[1]

    def _add_to_map(self, pipe: redis.client.Pipeline, gains: tuple[list[str], list[str]]) -> None:
        for kind, names in zip(("cells", "walls"), gains):
            if names:
                pipe.sadd(self._key(f"map:{kind}:set"), *names)
                pipe.rpush(self._key(f"map:{kind}"), *names)

    @_answering
    def map_news(self, since: tuple[int, int]) -> MapNews:
        with self._client.pipeline() as pipe:  # MULTI: both logs as one commit left them
            for kind, start in zip(("cells", "walls"), since):
                pipe.lrange(self._key(f"map:{kind}"), start, -1)
                pipe.llen(self._key(f"map:{kind}"))
            cells, held_cells, walls, held_walls = pipe.execute()
        return MapNews(
            tuple(cast(Cell, tuple(map(int, text.split(",")))) for text in cells),
            tuple(cast(Wall, tuple(map(int, text.split(",")))) for text in walls),
            (held_cells, held_walls),
        )

    @_answering
    def send_message(self, message: Message) -> None:
        def change(pipe):
            targets = self._targets(message, pipe.lrange(self._key("agents"), 0, -1))
            pipe.multi()
            self._deliver(pipe, message, targets)

        self._once(change)

    def _targets(self, message: Message, team: Sequence[str]) -> list[str]:
        if message.recipient == BROADCAST:
            return [a for a in team if a != message.sender]
        if message.recipient in team and message.recipient != message.sender:
            return [message.recipient]
        raise ValueError(f"{message.sender} sent a message to {message.recipient!r}, not a teammate")

    def _deliver(self, pipe: redis.client.Pipeline, message: Message, targets: Iterable[str]) -> None:
        text = encode_message(message)
        for target in targets:
            pipe.xadd(self._key(f"mailbox:{target}"), {"message": text})
        pipe.xadd(self._key("history"), {"message": text})

    @_answering
    def send_report(self, recipient: str, report: SightReport) -> None:
        def change(pipe):
            pipe.multi()
            pipe.rpush(self._key(f"inbox:{recipient}"), encode_sight(report))

        self._once(change)

    @_answering
    def read_reports(self, agent_id: str) -> list[SightReport]:
        with self._client.pipeline() as pipe:  # MULTI: read and empty at once
            pipe.lrange(self._key(f"inbox:{agent_id}"), 0, -1)
            pipe.delete(self._key(f"inbox:{agent_id}"))
            reports, _ = pipe.execute()
        return [decode_sight(text) for text in reports]

    @_answering
    def read_mailbox(self, agent_id: str) -> list[Message]:
        after = self._read_up_to.get(agent_id)
        entries = cast(
            _StreamEntries, self._client.xrange(self._key(f"mailbox:{agent_id}"), min=f"({after}" if after else "-")
        )
        if entries:
            self._read_up_to[agent_id] = entries[-1][0]
        return [decode_message(fields["message"]) for _, fields in entries]

    @_answering
    def objects(self) -> list[str]:
        return cast("list[str]", self._client.lrange(self._key("found"), 0, -1))

    @_answering
    def discoveries(self) -> dict[str, Discovery]:
        names = cast("list[str]", self._client.lrange(self._key("found"), 0, -1))
        # Each found name's entry is written in the same transaction as the name.
        found = cast("list[str]", self._client.hmget(self._key("objects"), names)) if names else []
        return {name: json.loads(text) for name, text in zip(names, found)}

    @_answering
    def positions(self) -> dict[str, PoseDict | None]:
        team = cast("list[str]", self._client.lrange(self._key("agents"), 0, -1))
        poses = cast("list[str | None]", self._client.hmget(self._key("positions"), team)) if team else []
        return {agent_id: json.loads(pose) for agent_id, pose in zip(team, poses) if pose is not None}

    @_answering
    def history(self) -> list[Message]:
        entries = cast(_StreamEntries, self._client.xrange(self._key("history")))
        return [decode_message(fields["message"]) for _, fields in entries]
