"""What each member decided at each step, and why, for the run's report: the reply's fields, the goal chosen
or the directive followed (a coordinator's directives sent), each reply refused with why, and the prompt.

Gathered line by line as the trace is read, like the views of explorer/report/trace_views.py, and bounded
the same way: the first MAX_DECISIONS agent-steps are shown (the prompts of the first MAX_PROMPTS), each text
cut (a prompt at PROMPT_CHARS), and every member's counts cover the whole run. The texts come from models and from a trace that may come from
elsewhere: they are kept as plain text, which the page escapes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from nodes.record import excerpt

MAX_DECISIONS = 2_000  # agent-steps shown (a 16-agent, 100-step run's and its coordinator's); a longer run's report says how many it left out
MAX_PROMPTS = 300  # of them with their prompt: a prompt is most of a row's size
PROMPT_CHARS = 5_000  # of each prompt (a step's is about 3,000)
REPLY_CHARS = 1_500  # of each reply shown, refused or used
FIELD_CHARS = 1_000  # of each field of a decision, each note and each error
MAX_LISTED = 12  # fields, notes and directives shown per step: a step has a handful
MAX_CALLS = 6  # model calls shown per step: a decision and its re-prompt, and two vision calls, at most

Record = dict[str, Any]  # a trace line, as explorer/records/run_files.py checked it


@dataclass(frozen=True)
class Refusal:
    """A model call whose reply was not used: why, and the reply ("" where none came)."""

    purpose: str  # "decision" or "vision"
    what: str  # "reply refused" (a re-prompt followed), or "call failed"
    why: str
    reply: str


@dataclass(frozen=True)
class DecisionRow:
    """One agent-step's decision, as the page shows it."""

    step: int
    time: str  # when on the run's clock ("2.5 s"); "" for a run on lock-step
    policy: str  # who decided: a model's name, "planner", "directive", "offline", ...
    action: str
    fields: list[tuple[str, str]]  # the decision's fields but its action: thinking, reason, message...
    choices: list[str]  # the goal chosen and why the model was asked, the directive followed or those sent
    refusals: list[Refusal]
    problems: list[str]  # no usable reply, a failed call: what became of the step
    reply: str  # the reply used
    prompt: str


@dataclass
class MemberDecisions:
    """A member's rows shown, and its counts over the whole run."""

    rows: list[DecisionRow] = field(default_factory=list)
    steps: int = 0
    asked: int = 0  # steps that asked a model
    refused: int = 0  # replies refused or calls failed


class Decisions:
    """Each member's decisions, the first MAX_DECISIONS agent-steps of the run in all."""

    def __init__(self, members: list[str], clocked: bool) -> None:
        self.members = {member: MemberDecisions() for member in members}
        self.clocked = clocked  # the run has a clock (--schedule event or realtime): its times are shown
        self.shown = 0
        self.left_out = 0

    def add(self, record: Record) -> None:
        member = self.members.get(record["agent_id"])
        if member is None:
            return
        row = decision_row(record, self.clocked, with_prompt=self.shown < MAX_PROMPTS)
        member.steps += 1
        member.asked += any(_call_purpose(call) == "decision" for call in _calls(record))
        member.refused += len(row.refusals)
        if self.shown < MAX_DECISIONS:
            member.rows.append(row)
            self.shown += 1
        else:
            self.left_out += 1

    def note(self) -> str | None:
        """What the bound left out, for the page."""
        prompts = f", the prompts of the first {MAX_PROMPTS:,}" if self.shown > MAX_PROMPTS else ""
        if not self.left_out:
            return f"The decisions show every agent-step{prompts}; trace.jsonl has them all." if prompts else None
        return (
            f"The decisions show the first {self.shown:,} of the run's {self.shown + self.left_out:,} agent-steps"
            f"{prompts}; trace.jsonl has them all."
        )


def decision_row(record: Record, clocked: bool, with_prompt: bool = True) -> DecisionRow:
    given = record.get("decision")
    decision = given if isinstance(given, dict) else {}
    calls = _calls(record)
    used = [call for call in calls if not call.get("reply_error") and not call.get("error")]
    time = record.get("time")
    return DecisionRow(
        step=record["step"],
        time=f"{time:g} s" if clocked and time is not None else "",
        policy=shown(record.get("policy"), FIELD_CHARS),
        action=shown(record.get("action"), FIELD_CHARS),
        fields=[
            (shown(key, 100), shown(value, FIELD_CHARS))
            for key, value in list(decision.items())[:MAX_LISTED]
            if key != "action"
            and value not in ("", None)
            and (key != "message_to" or decision.get("message_to_others"))
        ],
        choices=_choices(record),
        refusals=[refusal for call in calls if (refusal := _refusal(call))],
        problems=_problems(record),
        reply=shown(used[-1].get("reply"), REPLY_CHARS) if used else "",
        prompt=shown(record.get("prompt"), PROMPT_CHARS) if with_prompt else "",
    )


def shown(value: Any, limit: int) -> str:
    """`value` as text of at most about `limit` characters (a text as it is, anything else as JSON)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return excerpt(text, limit)


def _calls(record: Record) -> list[dict[str, Any]]:
    calls = (record.get("llm") or {}).get("calls") or []
    return [call for call in calls[:MAX_CALLS] if isinstance(call, dict)]


def _call_purpose(call: dict[str, Any]) -> str:
    return shown(call.get("purpose") or "decision", 40)


def _refusal(call: dict[str, Any]) -> Refusal | None:
    """The call's reply refused (a re-prompt followed), or the call failed; None for a reply used."""
    if call.get("reply_error"):
        what, why = "reply refused", shown(call["reply_error"], FIELD_CHARS)
    elif call.get("error"):
        failure = f"{call['error']}: {shown(call.get('error_message'), FIELD_CHARS)}".rstrip(": ")
        what, why = "call failed", shown(failure, FIELD_CHARS)
    else:
        return None
    return Refusal(_call_purpose(call), what, why, shown(call.get("reply"), REPLY_CHARS))


def _choices(record: Record) -> list[str]:
    """The goal chosen and why the model was asked (the notes), the directive followed, the directives sent."""
    given = record.get("notes")
    notes = given if isinstance(given, list) else []
    choices = [shown(note, FIELD_CHARS) for note in notes[:MAX_LISTED]]
    followed = record.get("directive")
    if followed:
        replaced = ", ".join(map(str, (followed.get("replaced") or [])[:MAX_LISTED]))
        kind, target, status = shown(followed.get("kind"), 40), _target(followed.get("target")), followed["status"]
        choices.append(
            f"directive {followed['id']} ({kind} {target}): {shown(status, 100)}"
            + (f", replacing {replaced}" if replaced else "")
        )
    for directive in (record.get("directives") or [])[:MAX_LISTED]:
        why = f" Why: {shown(directive['reason'], FIELD_CHARS)}" if directive.get("reason") else ""
        choices.append(f"to {shown(directive['to'], 100)}: {shown(directive['message'], FIELD_CHARS)}{why}")
    return choices


def _target(target: Any) -> str:
    """A directive's target as the page says it: a goal's cell "(1, 1, 0)" (and its facing), or an action."""
    if isinstance(target, list) and 3 <= len(target) <= 4:
        facing = f" facing {shown(target[3], 40)}" if len(target) == 4 and target[3] else ""
        return f"({', '.join(shown(value, 40) for value in target[:3])}){facing}"
    return shown(target, 200)


def _problems(record: Record) -> list[str]:
    problems = ["no usable reply, after its re-prompts"] if record.get("parse_failure") else []
    errors = record.get("errors") or []
    return problems + [shown(error, FIELD_CHARS) for error in errors[:MAX_LISTED]]
