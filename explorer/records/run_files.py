"""An earlier run's files, read from a run directory that may come from elsewhere (a tarball, a copy).

Each file must be a regular file, is read no further than a bound (perception/files.py), and is checked
for the shape its readers rely on (explorer/records/shapes.py): a problem is one ConfigError line naming the
file. The trace is read line by line as it is used, never whole; a damaged line is skipped and counted,
and the lines after it are kept.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from explorer.records.clock import CLOCK_RESOLUTION
from explorer.records.errors import ConfigError
from explorer.records.shapes import (
    Shape,
    anything,
    at_least,
    both,
    count,
    list_of,
    mapping_of,
    nullable,
    number,
    record,
    text,
    whole,
)
from explorer.records.trace import MAX_LINE_BYTES
from explorer.records.trace_versions import DamagedLine, TraceVersionError, current_line
from perception.families.generate import open_world
from perception.families.names import is_generated
from perception.files import FileTooLarge, NotARegularFile, file_kind, open_regular_file, read_regular_file
from perception.world import SHIPPED_WORLDS, World, WorldError
from perception.yaml_files import shipped_file

MAX_JSON_BYTES = 64_000_000  # config.json, summary.json: a summary of 100,000 steps is a few MB
_DISCARD_BYTES = 1_000_000  # an overlong line is read past in pieces this large

_CELL = list_of(whole, least=2, most=3)  # [x, y] or [x, y, level]
_POSE = record({"position": list_of(number, 3, 3), "facing": text})
_CALL = record(
    {"prompt_tokens": count, "completion_tokens": count, "retries": count, "latency": number},
    {"cost_usd": nullable(number), "error": nullable(text), "format": text, "echoed": list_of(text)},
)
_MESSAGE_IN = both(
    record(optional={"sent_at": nullable(number), "delivered_at": nullable(number), "step": nullable(whole)}),
    lambda message: message.get("delivered_at") is None or message.get("sent_at") is not None,
)
_DIRECTIVE_FOLLOWED = record({"status": text, "id": whole}, {"replaced": list_of(whole)})
_SENT = record({"message": text})
_RESULT = record(
    optional={
        "pose": nullable(_POSE),
        "frames": nullable(record(optional={"before": nullable(text), "after": nullable(text)})),
        "view_change": nullable(number),
    }
)
# What rebuilding memories and the report read of a trace line; recovering a summary reads its policy as well.
TRACE_LINE = record(
    {"agent_id": text, "step": count},
    {
        "time": nullable(at_least(0)),
        "pose": nullable(_POSE),
        "visible_objects": list_of(text),
        "object_cells": mapping_of(_CELL),
        "visible_caption": text,
        "image_path": nullable(text),
        "seen_cells": list_of(_CELL),
        "room": nullable(text),
        "llm": nullable(record(optional={"calls": list_of(_CALL)})),
        "messages_in": list_of(_MESSAGE_IN),
        "decision": nullable(record()),
        "directive": nullable(_DIRECTIVE_FOLLOWED),
        "directives": nullable(list_of(both(_SENT, record({"to": text}, {"reason": text})))),
        "relayed": list_of(both(_SENT, record({"sender": text, "to": list_of(text)}))),
        "action": nullable(text),
        "result": nullable(_RESULT),
        "message_out": nullable(both(_SENT, record({"recipient": text}))),
        "memory_text": text,
        "errors": list_of(anything),
        "new_objects": list_of(text),
    },
)
RECOVERABLE_LINE = both(TRACE_LINE, record({"policy": text}))
_PROFILE = record(optional={"tick_interval": at_least(CLOCK_RESOLUTION), "msg_delay": at_least(0)})
# What the report reads of config.json; recovering a summary needs the team and the steps as well.
RUN_CONFIG = record(
    optional={
        "agent_ids": list_of(text),
        "agent_profiles": nullable(mapping_of(nullable(_PROFILE))),
        "mode": text,
        "world": nullable(text),
        "find": nullable(list_of(text)),
        "window_titles": nullable(list_of(text)),
        "schedule": text,
    }
)
RECOVERABLE_CONFIG = both(RUN_CONFIG, record({"agent_ids": list_of(text, least=1), "steps": at_least(1)}))
_SHOWN = anything  # a value the report only shows
_AGENT_NUMBERS = record(
    {
        "policy": _SHOWN,
        "steps": _SHOWN,
        "messages_sent": _SHOWN,
        "found_first": list_of(text),
        "llm": record(
            {
                "prompt_tokens": number,
                "completion_tokens": number,
                "cost_usd": nullable(number),
                **dict.fromkeys(("calls", "parse_failures", "errors"), _SHOWN),
            }
        ),
    },
    {"distance": nullable(count), "first_seen_share": nullable(number)},
)
_BY_SHARE = nullable(mapping_of(nullable(number)))  # {"50%": a step, a distance or None, ...}
_BY_TARGET = nullable(mapping_of(nullable(number)))
_TEAM_NUMBERS = record(
    optional={
        "distance": nullable(count),
        "late_actions": count,
        "steps_to_cells": _BY_SHARE,
        "distance_to_cells": _BY_SHARE,
    }
)
_SEARCH_NUMBERS = record(
    optional={
        "spl": nullable(number),
        **dict.fromkeys(("spl_by_target", "shortest_path_to_target", "distance_to_target"), _BY_TARGET),
    }
)
# What the report reads of summary.json.
RUN_SUMMARY = record(
    {
        "agents": list_of(text),
        "status": text,
        "world": _SHOWN,
        "model": _SHOWN,
        "steps": mapping_of(number),
        "objects_discovered": list_of(anything),
        "total_objects": nullable(count),
        "discovery_curve": list_of(list_of(number, 2, 2)),
        "discoveries": mapping_of(record({"step": nullable(number)}, {"finder": nullable(text)})),
        "per_agent": mapping_of(_AGENT_NUMBERS),
    },
    {"team": _TEAM_NUMBERS, "search": nullable(_SEARCH_NUMBERS)},
)


def read_run_json(path: Path, shape: Shape, what: str) -> dict[str, Any]:
    """The JSON object in the run file at `path`, of `shape` (`what` names it: "a run's settings");
    ConfigError where it cannot be read or is not what it should be."""
    try:
        data = json.loads(read_regular_file(path, MAX_JSON_BYTES))
    except FileTooLarge:
        raise ConfigError(f"{path} is larger than {MAX_JSON_BYTES:,} bytes: it is not {what}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror or error}") from None
    except (ValueError, RecursionError) as error:  # not UTF-8, not JSON, nested past Python's depth
        raise ConfigError(f"{path} is not {what}: it is not JSON ({error})") from None
    if not shape(data):
        raise ConfigError(f"{path} is not {what}: a field it needs is missing or of the wrong kind")
    return data


def world_of(config: dict[str, Any], config_path: Path) -> World | None:
    """The world file config.json names, as it is now; None where there is none or it is no longer a
    world (moved or edited since: the caller makes do with the trace). ConfigError where it names
    something that is not a file at all (a device, a FIFO): no run writes that."""
    path = config.get("world")
    if path is None:
        return None
    targets = tuple(config.get("find") or ())  # --find: a generated world places them, so they make it too
    if is_generated(str(path)):  # made again from its name, seed and targets: the same world
        try:
            seed = config.get("world_seed")
            return open_world(str(path), seed if isinstance(seed, int) else None, targets)
        except WorldError:
            return None
    path = shipped_file(path, SHIPPED_WORLDS) or path  # a shipped world is recorded by its name
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # gone (ValueError: a name with a NUL in it)
        return None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ConfigError(f"{config_path}: its world, {path}, is not a regular file ({file_kind(mode)})")
    try:
        return open_world(path, targets=targets)
    except WorldError:
        return None


class TraceLines:
    """A run's trace.jsonl, read line by line as it is iterated (again from the start each time).

    Each line comes as this version writes it (an older trace's are converted). A damaged line (not
    JSON, not an object, missing a field its reader needs (`shape`), longer than MAX_LINE_BYTES, or of an agent not
    in `members`) is skipped and counted in `skipped`, with the rest kept; a last line a kill cut short
    is such a line. ConfigError where the trace is no regular file, none of its lines can be read, or a
    line is of a version this program does not know.
    """

    def __init__(self, path: Path, members: Collection[str] | None = None, shape: Shape = TRACE_LINE) -> None:
        self.path = path
        self.members = members
        self.shape = shape  # what its reader needs of a line
        self.skipped = 0
        self.first_skipped: int | None = None  # its line number

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.skipped, self.first_skipped, kept = 0, None, 0
        try:
            with open_regular_file(self.path) as (file, size):
                for number, line in enumerate(_lines(file, size), 1):
                    if line is not None and not line.strip():
                        continue  # a blank line holds nothing to lose
                    record = self._record(line)
                    if record is None:
                        self.skipped += 1
                        self.first_skipped = self.first_skipped or number
                    else:
                        kept += 1
                        yield record
        except NotARegularFile as problem:
            raise ConfigError(f"{self.path} {problem}, not a run's trace") from None
        except OSError as error:
            raise ConfigError(f"{self.path}: cannot read it: {error.strerror or error}") from None
        if self.skipped and not kept:
            raise ConfigError(f"{self.path}: none of its lines is a trace line: it is not a run's trace.jsonl")

    def _record(self, line: bytes | None) -> dict[str, Any] | None:
        """The line's record; None for a damaged line."""
        try:
            record = json.loads(line) if line is not None else None
        except (ValueError, RecursionError):  # not UTF-8, not JSON, nested past Python's depth
            return None
        if not isinstance(record, dict):
            return None
        try:
            record = current_line(record)
        except DamagedLine:
            return None
        except TraceVersionError as error:  # a later version's trace: no line of it can be trusted
            raise ConfigError(f"{self.path}: {error}") from None
        if not self.shape(record):
            return None
        return record if self.members is None or record["agent_id"] in self.members else None

    def note(self) -> str | None:
        """What was skipped, in one line for the console and the page; None when nothing was."""
        if not self.skipped:
            return None
        if self.skipped == 1:
            return f"1 damaged line of {self.path} was skipped (line {self.first_skipped})"
        return f"{self.skipped} damaged lines of {self.path} were skipped (the first: line {self.first_skipped})"


def _lines(file: BinaryIO, size: int) -> Iterator[bytes | None]:
    """Each line of `file` (None for one over MAX_LINE_BYTES, read past in pieces), up to the `size` bytes
    it had when opened: a file that grows while it is read is not followed."""
    left = size
    while left > 0:
        line = file.readline(min(left, MAX_LINE_BYTES + 1))
        if not line:
            return  # cut shorter since it was opened
        left -= len(line)
        if len(line) <= MAX_LINE_BYTES:
            yield line
            continue
        while left > 0 and not line.endswith(b"\n"):
            line = file.readline(min(left, _DISCARD_BYTES))
            left -= len(line)
            if not line:
                break
        yield None
