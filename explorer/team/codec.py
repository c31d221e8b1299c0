"""What crosses between a team's processes, as JSON: finished steps, messages, sight reports.

A decoded value equals the one encoded (tuples come back as tuples), so a
step handed in by another process commits exactly as one handed in here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from nodes.decision_context import Cell, SightReport
from nodes.interfaces import StepReport
from nodes.record import StepRecord
from perception.base import Message


def encode_message(message: Message) -> str:
    return json.dumps(message.to_dict())


def decode_message(text: str) -> Message:
    return Message(**json.loads(text))


def encode_sight(report: SightReport) -> str:
    return json.dumps(_sight_dict(report))


def decode_sight(text: str) -> SightReport:
    return _sight(json.loads(text))


def encode_step(report: StepReport) -> str:
    """A finished step without its memory write, which stays with the agent's own process."""
    return json.dumps(
        {
            "agent_id": report.agent_id,
            "step": report.step,
            "record": report.record.to_dict() if report.record is not None else None,
            "seen_objects": report.seen_objects,
            "outgoing": [m.to_dict() for m in report.outgoing],
            "pose": report.pose,
            "object_cells": report.object_cells,
            "upward": _sight_dict(report.upward) if report.upward else None,
            "seen_cells": report.seen_cells,
            "seen_walls": report.seen_walls,
        }
    )


def decode_step(text: str) -> StepReport:
    data = json.loads(text)
    record = data["record"]
    return StepReport(
        agent_id=data["agent_id"],
        step=data["step"],
        record=StepRecord.from_dict(record) if record is not None else None,
        seen_objects=data["seen_objects"],
        outgoing=[Message(**m) for m in data["outgoing"]],
        pose=data["pose"],
        object_cells=_cells(data["object_cells"]),
        upward=_sight(data["upward"]) if data["upward"] else None,
        seen_cells=tuple(map(tuple, data.get("seen_cells", ()))),
        seen_walls=tuple(map(tuple, data.get("seen_walls", ()))),
    )


def _sight_dict(report: SightReport) -> dict[str, Any]:
    return {
        "sender": report.sender,
        "step": report.step,
        "seen_from": report.seen_from,
        "pose": report.pose,
        "seen_cells": report.seen_cells,
        "seen_walls": report.seen_walls,
        "object_cells": report.object_cells,
        "said": report.said,
        "sent_at": report.sent_at,
        "delivered_at": report.delivered_at,
    }


def _sight(data: dict[str, Any]) -> SightReport:
    return SightReport(
        **{
            **data,
            "seen_cells": tuple(map(tuple, data["seen_cells"])),
            "seen_walls": tuple(map(tuple, data["seen_walls"])),
            "object_cells": _cells(data["object_cells"]),
        }
    )


def _cells(cells: Mapping[str, Sequence[int]]) -> dict[str, Cell]:
    return {name: (x, y, z) for name, (x, y, z) in cells.items()}
