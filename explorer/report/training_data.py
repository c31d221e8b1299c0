"""`--export-sft RUN_DIR... --out FILE.jsonl`: each decision of earlier runs as a chat example, to fine-tune on.

One JSON line per decision: `messages`, the prompt as the run sent it (one user message: the runs send no
system message) and the decision as the assistant's reply, in the JSON of the schema it was asked under;
`schema`, that schema (as JSON text, so every line has the same columns); and where it came from (`run`,
`agent`, `step`, `policy`, `decide`). The trace records every prompt with the decision that followed, for a
model's steps and for the built-in explorer's alike (its prompt rendered from the same templates, and under
`--decide goals` its choice of goal: explorer/policies/explorer_goals.py). A decision that needed a
re-prompt is exported with its first prompt. The schema is rebuilt from what the prompt offered (its
actions, its goals, whether messages are on) through explorer/model/schemas.py's declaration; the reply's
free texts are cut to the schema's bounds (a message at its last whole sentence within them). Only a reply
that is an instance of its schema is written: one that names an action, a goal or a recipient the prompt did
not offer is skipped, counted and named; a prompt without the section its schema is rebuilt from is refused.

The traces are streamed, and each agent holds back one example only: the one whose goal is still being
walked to, until the agent next decides (`--only-found-new` needs to know what that walk found).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from explorer.config.call_options import GOALS
from explorer.model.conformance import is_instance
from explorer.model.schemas import (
    GOAL_REASON_CHARS,
    MESSAGE_CHARS,
    REASON_CHARS,
    JsonSchema,
    decision_schema,
    goal_schema,
)
from explorer.policies.echoes import ECHOED_FIELDS, repeats_instructions
from explorer.records.errors import ConfigError
from explorer.records.run_files import TRACE_LINE, TraceLines, read_run_json
from explorer.records.run_lock import run_in_use
from explorer.records.shapes import both, count, flag, list_of, nullable, record, text
from explorer.records.summary import THRESHOLDS
from explorer.records.trace import write_file
from nodes.interfaces import DIRECTIVE, FALLBACK, PLANNER, cut_text
from prompts import instruction_text, render

REACHED_SHARE = 90  # --only-reached: runs whose team found this share of the objects (one of THRESHOLDS)
_DECISION = record({"action": text, "reason": text, "message_to_others": text}, {"message_to": text})
_LINE = both(
    TRACE_LINE,
    record(
        {"policy": text, "prompt": text, "notes": list_of(text), "decision": nullable(_DECISION)},
        {"parse_failure": flag},
    ),
)
_CONFIG = record({"agent_ids": list_of(text, least=1)}, {"decide": text})
_REACHED = {f"{share}%": nullable(count) for share in THRESHOLDS}
_SUMMARY = record({"team": record({"steps_to_objects": nullable(record(optional=_REACHED))})})
SKIPPED_NAMED = 10  # of the examples skipped, those the console names


@dataclass(frozen=True)
class _Section:
    """A list a prompt offers its choices in (prompts/decision.md's actions, prompts/reply_goals.md's goals)."""

    title: str
    listed: re.Pattern[str]  # the section, its items in group 1
    item: re.Pattern[str]  # an item's name


_ACTIONS = _Section(
    "## Available actions",
    re.compile(r"^## Available actions\n((?:- .*\n?)+)", re.MULTILINE),
    re.compile(r"^- ([^:\s]+):", re.MULTILINE),
)
_GOALS = _Section(
    "## Goals you can walk to",
    re.compile(r"^## Goals you can walk to.*\n((?:- .*\n?)+)", re.MULTILINE),
    re.compile(r"^- (G\d+): ", re.MULTILINE),
)
_CHOSE = re.compile(r"; chose (G\d+)$")  # explorer/policies/goals.py's note on a goal chosen
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
NOT_THE_POLICYS = (PLANNER, DIRECTIVE, FALLBACK)  # steps decided by someone else than the agent's policy


@dataclass(frozen=True)
class ExportFilter:
    """Which decisions are exported: all, or only those whose goal found something new, or only from the runs
    that reached REACHED_SHARE% of the objects."""

    only_found_new: bool = False
    only_reached: bool = False


@dataclass
class ExportCount:
    runs: int = 0  # read
    runs_left_out: int = 0  # by --only-reached
    examples: int = 0  # written
    left_out: int = 0  # decisions left out by --only-found-new
    skipped: int = 0  # decisions whose reply is no instance of the schema their prompt gives
    echoes_left_out: int = 0  # messages and reasons left out for giving back their prompt's instructions
    skipped_named: list[str] = field(default_factory=list)  # the first SKIPPED_NAMED: "RUN AGENT step N"

    def skip(self, run: str, agent: str, step: int) -> None:
        """Count a decision skipped, naming it among the first."""
        self.skipped += 1
        if len(self.skipped_named) < SKIPPED_NAMED:
            self.skipped_named.append(f"{run} {agent} step {step}")

    def skipped_note(self) -> str | None:
        """The console's line on the decisions skipped, naming the first; None where none were."""
        if not self.skipped:
            return None
        more = self.skipped - len(self.skipped_named)
        named = ", ".join(self.skipped_named) + (f" and {more} more" if more else "")
        return (
            f"--export-sft skipped {self.skipped} decisions whose reply is not an instance of the schema their "
            f"prompt gives (an action, goal or recipient it did not offer): {named}"
        )


@dataclass
class _Pending:
    """An example held back until its agent next decides: what its walk found is known then."""

    line: dict[str, Any]
    found_new: bool


@dataclass
class _RunExport:
    """One run's examples, written as each agent's next decision shows what the one before found."""

    run: str
    decide: str
    team: list[str]
    write: Callable[[dict[str, Any]], None]
    only_found_new: bool
    count: ExportCount
    pending: dict[str, _Pending] = field(default_factory=dict)

    def add(self, line: dict[str, Any]) -> None:
        agent = line["agent_id"]
        if agent not in self.team:
            return  # a coordinator: its directives are not an explorer's decision
        held = self.pending.get(agent)
        if line["policy"] == PLANNER and held:
            held.found_new = held.found_new or bool(line["new_objects"])
            return
        self._flush(agent)
        if (
            line["prompt"]
            and line["decision"]
            and not line.get("parse_failure")
            and line["policy"] not in NOT_THE_POLICYS
        ):
            self.pending[agent] = _Pending(line, bool(line["new_objects"]))

    def finish(self) -> None:
        for agent in list(self.pending):
            self._flush(agent)

    def _flush(self, agent: str) -> None:
        held = self.pending.pop(agent, None)
        if held is None:
            return
        if self.only_found_new and not held.found_new:
            self.count.left_out += 1
            return
        example = self._example(held.line)
        if example is not None:
            self.write(example)
            self.count.examples += 1

    def _example(self, line: dict[str, Any]) -> dict[str, Any] | None:
        """The line's chat example; None, counted as skipped, where its reply is no instance of the schema
        rebuilt from its prompt: an action, goal or recipient the prompt did not offer, or under --decide goals
        an action taken instead of a goal (a reply in YAML may give one)."""
        prompt, decision, agent = line["prompt"], line["decision"], line["agent_id"]
        said = self._own_words(decision, prompt)
        reply: dict[str, str]
        if self.decide == GOALS:
            chosen = next(filter(None, (_CHOSE.search(note) for note in line["notes"])), None)
            schema = goal_schema(self._offered(_GOALS, line))
            reply = {"goal": chosen.group(1)} if chosen else {"action": decision["action"]}
            reply["reason"] = cut_text(said["reason"], GOAL_REASON_CHARS)
        else:
            recipients = [a for a in self.team if a != agent] if _messages_on(prompt) else None
            schema = decision_schema(self._offered(_ACTIONS, line), recipients)
            reply = {"action": decision["action"]}
            if recipients is not None:
                reply["message_to"] = decision.get("message_to", "all") if said["message_to_others"] else "all"
                reply["message_to_others"] = _whole_sentences(said["message_to_others"], MESSAGE_CHARS)
            reply["reason"] = cut_text(said["reason"], REASON_CHARS)
        if not is_instance(reply, schema):
            self.count.skip(self.run, agent, line["step"])
            return None
        return {
            "messages": [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": json.dumps(_ordered(reply, schema), ensure_ascii=False)},
            ],
            "schema": json.dumps(schema),
            "run": self.run,
            "agent": agent,
            "step": line["step"],
            "policy": line["policy"],
            "decide": self.decide,
        }

    def _own_words(self, decision: dict[str, str], prompt: str) -> dict[str, str]:
        """The decision's message and reason, each left out (and counted) where it gives back the prompt's own
        instructions: a run before such texts were left out as the reply was read may hold them."""
        instructions = instruction_text(prompt)
        said = {}
        for name in ECHOED_FIELDS:
            echoed = repeats_instructions(decision[name], instructions)
            self.count.echoes_left_out += echoed
            said[name] = "" if echoed else decision[name]
        return said

    def _offered(self, section: _Section, line: dict[str, Any]) -> list[str]:
        """What the line's prompt offers in `section`; ConfigError where it has no such section: no schema can
        be rebuilt from it (it would offer nothing), so the trace is in doubt."""
        listed = section.listed.search(line["prompt"])
        if listed is None:
            raise ConfigError(
                f"--export-sft: {self.run}: the prompt of {line['agent_id']} at step {line['step']} has no "
                f"'{section.title}' section: no schema can be rebuilt from it"
            )
        return section.item.findall(listed.group(1))


def export_sft(run_dirs: Sequence[Path], out: Path, only: ExportFilter) -> ExportCount:
    """Write the examples of `run_dirs` to `out` (whole or not at all: a damaged run leaves no file);
    ConfigError, one line, for a directory that is not a run's or a trace with a damaged line."""
    count = ExportCount()

    def write_all(file: BinaryIO) -> None:
        def write(example: dict[str, Any]) -> None:
            file.write((json.dumps(example, ensure_ascii=False) + "\n").encode("utf-8"))

        for run_dir in run_dirs:
            _export_run(Path(run_dir), write, only, count)

    write_file(out, write_all)
    return count


def _export_run(run_dir: Path, write: Callable[[dict[str, Any]], None], only: ExportFilter, count: ExportCount) -> None:
    missing = [name for name in ("config.json", "trace.jsonl") if not (run_dir / name).is_file()]
    if missing:
        raise ConfigError(f"--export-sft: {run_dir} is not a run directory: it has no {' or '.join(missing)}")
    if run_in_use(run_dir):
        raise ConfigError(f"--export-sft: {run_dir} is a run still going: export it once it has ended")
    config = read_run_json(run_dir / "config.json", _CONFIG, "a run's settings")
    count.runs += 1
    if only.only_reached and not _reached(run_dir):
        count.runs_left_out += 1
        return
    export = _RunExport(
        str(run_dir), config.get("decide", "actions"), config["agent_ids"], write, only.only_found_new, count
    )
    trace = TraceLines(run_dir / "trace.jsonl", shape=_LINE)
    for line in _lines(trace):
        export.add(line)
    export.finish()


def _lines(trace: TraceLines) -> Iterator[dict[str, Any]]:
    """The trace's lines; ConfigError at the first damaged one: no example is made of a trace in doubt."""
    for line in trace:
        if trace.skipped:
            break
        yield line
    if trace.skipped:
        raise ConfigError(
            f"--export-sft: {trace.path} is damaged at line {trace.first_skipped}: not a trace line this program reads"
        )


def _reached(run_dir: Path) -> bool:
    path = run_dir / "summary.json"
    if not path.is_file():
        raise ConfigError(
            f"--export-sft --only-reached: {run_dir} has no summary.json (a killed run: write it with --recover)"
        )
    steps_to = read_run_json(path, _SUMMARY, "a run's summary")["team"]["steps_to_objects"] or {}
    return steps_to.get(f"{REACHED_SHARE}%") is not None


def _messages_on(prompt: str) -> bool:
    """Whether the prompt let the agent write to its team (explorer/policies/model_policy.py's recipients)."""
    return render("comm_off").strip() not in prompt


def _whole_sentences(message: str, limit: int) -> str:
    """`message` within `limit` characters: its whole sentences that fit (the team reads them one by one),
    else cut."""
    if len(message) <= limit:
        return message
    ends = [end.end() for end in _SENTENCE_END.finditer(message) if end.end() <= limit]
    return message[: ends[-1]] if ends else cut_text(message, limit)


def _ordered(reply: dict[str, str], schema: JsonSchema) -> dict[str, str]:
    """The reply's fields in the schema's order, as a constrained decoder writes them."""
    return {name: reply[name] for name in schema["properties"]}
