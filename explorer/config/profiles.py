"""Agent profiles: a role and persona for each agent's prompt, and its own model and temperature.

    default:                      # optional: for every agent the list does not cover
      role: explorer
      persona: "You map rooms carefully and report what you find."
      model: gpt-4o-mini
      reply_format: auto  # or json, yaml: overrides --reply-format
      temperature: 0.2
      msg_delay: 1                # simulated seconds; see below
      think_time: measured        # or seconds; see below
    agents:                       # optional: in agent order, Agent1 first
      - {role: scout, persona: "You move fast and look far.", temperature: 0.7}
      - {role: cartographer, model: "openai/qwen2.5-7b-instruct", tick_interval: 2}
    coordinator:                  # optional: the --coordinator's timing (tick_interval 5 unless given)
      tick_interval: 10
    system:                       # optional: the system agent's (--coordinators K; tick_interval 10 unless given)
      tick_interval: 20

Fields left out come from `default`, then from the command line (--model)
and the built-in explorer persona (prompts/explorer_persona.md).

The timing fields are for `--schedule event` (explorer/schedule/event.py), in
simulated seconds: `tick_interval` (1: one step a second), `obs_delay` (a view
shows the world as it was that long ago), `act_delay` (an action takes effect
that long after it is chosen) and `msg_delay` (a message reaches its mailbox
that long after it is sent).

`think_time` (default 0: deciding takes no time) makes a decision take
simulated time: `measured` (the step's model calls' latency, as the trace
records it, so --replay-replies gives it again; a step that asked no model,
the built-in policies' too, its own decision's measured time) or a number of
seconds. The action lands that long after the tick (act_delay after that),
its message leaves then, and the agent's next tick waits for it.

Each key is declared once, on its Profile field (`profile_key`): its type and default are the field's, and
the declaration gives its check, with the one-line error a bad value gets, and its help, which
docs/models.md's table of profile keys gives (tests/test_profiles.py checks the table).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from explorer.config.options import DECLARATION, Check, declarations
from explorer.model.reply_format import REPLY_FORMATS
from explorer.records.clock import CLOCK_RESOLUTION
from explorer.schedule.timed_perception import MEASURED, Timing
from perception.yaml_files import FileProblem, load_mapping
from prompts import render

COORDINATOR_TICK_INTERVAL = 5.0  # a coordinator thinks slower than its explorers act
SYSTEM_TICK_INTERVAL = 10.0  # and the system agent above the coordinators slower still
MAX_TIME = 1_000_000.0  # simulated seconds: any timing beyond is a typo


class ProfileError(FileProblem):
    """A profiles file that cannot be used; the message is one line naming the file."""


class ValueCheck(Check, Protocol):
    """A run option's kind of check, which also says how a value that passed is held: YAML gives the value
    itself, where the command line's parser gives it from text."""

    def read(self, value: Any) -> Any:
        """A value that passed the check, as its Profile field holds it."""
        ...


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))  # YAML's true is an int to Python


@dataclass(frozen=True)
class Text:
    """Text with more than white space in it, kept without the white space around it."""

    def problem(self, flag: str, value: Any) -> str | None:
        return None if isinstance(value, str) and value.strip() else f"{flag} must be non-empty text"

    def read(self, value: Any) -> Any:
        return value.strip()


@dataclass(frozen=True)
class Number:
    """A number from `least` to `most`."""

    least: float
    most: float

    def problem(self, flag: str, value: Any) -> str | None:
        if _number(value) and self.least <= value <= self.most:
            return None
        return f"{flag} must be a number from {self.least:g} to {self.most:g}, not {value!r}"

    def read(self, value: Any) -> Any:
        return float(value)


@dataclass(frozen=True)
class Choice:
    """One of a few names, or null: left to the command line, as leaving the key out does."""

    choices: tuple[str, ...]

    def problem(self, flag: str, value: Any) -> str | None:
        if value is None or value in self.choices:
            return None
        return f"{flag} must be one of {', '.join(self.choices)}, not {value!r}"

    def read(self, value: Any) -> Any:
        return value


@dataclass(frozen=True)
class SimulatedSeconds:
    """A timing: simulated seconds up to MAX_TIME, more than 0 where `positive`, and not below the clock's
    resolution, where every tick would land at once; MEASURED too where `or_measured`."""

    positive: bool = False
    or_measured: bool = False

    def problem(self, flag: str, value: Any) -> str | None:
        if self.or_measured and value == MEASURED:
            return None
        least = "more than 0" if self.positive else "0 or more"
        if not _number(value) or not ((value > 0 if self.positive else value >= 0) and value <= MAX_TIME):
            or_else = f"{MEASURED!r} or " if self.or_measured else ""
            return f"{flag} must be {or_else}a number of simulated seconds, {least} and at most {MAX_TIME:,.0f}, not {value!r}"
        if 0 < value < CLOCK_RESOLUTION:
            return f"{flag} {value!r} is below the clock's resolution ({CLOCK_RESOLUTION:g} simulated seconds)"
        return None

    def read(self, value: Any) -> Any:
        return value if value == MEASURED else float(value)


@dataclass(frozen=True)
class ProfileKey:
    """A Profile field as a key of a profiles file; see `profile_key`."""

    check: ValueCheck
    help: str
    default: str | None = None  # in words, where the field's own default is not what a file gets


def profile_key(check: ValueCheck, help: str, default: str | None = None) -> dict[str, ProfileKey]:
    """A field's metadata that makes it a key of a profiles file, named as the field, its default the field's.

    `check` is what a value given in the file must pass (its one-line problem names the section and the key)
    and how it is then held; `help` is its meaning, and `default` what leaving it out gives in words, where
    the field's own default is not that, as docs/models.md's table of profile keys gives them."""
    return {DECLARATION: ProfileKey(check, help, default)}


@dataclass(frozen=True)
class Profile:
    """An agent's profile; each field is a key of a profiles file, declared on it."""

    role: str = field(default="explorer", metadata=profile_key(Text(), "the agent's role, named in its prompt"))
    persona: str = field(
        default="",
        metadata=profile_key(
            Text(), "text added to the agent's prompt", "the built-in explorer persona (`prompts/explorer_persona.md`)"
        ),
    )
    # Every profile loaded has a model: the file's, else --model.
    model: str = field(
        default="", metadata=profile_key(Text(), "the agent's model, any that `--model` takes", "`--model`")
    )
    temperature: float = field(
        default=0.2, metadata=profile_key(Number(0, 2), "the temperature its model is called with, from 0 to 2")
    )
    reply_format: str | None = field(
        default=None,
        metadata=profile_key(
            Choice(REPLY_FORMATS), "how its model is asked to reply, as `--reply-format`", "`--reply-format`"
        ),
    )
    tick_interval: float = field(
        default=1.0,
        metadata=profile_key(
            SimulatedSeconds(positive=True),
            "simulated seconds between its ticks",
            f"1; a coordinator's {COORDINATOR_TICK_INTERVAL:g} (1 under `--comm star` or `tree`), "
            f"the system agent's {SYSTEM_TICK_INTERVAL:g}",
        ),
    )
    obs_delay: float = field(
        default=0.0, metadata=profile_key(SimulatedSeconds(), "how many simulated seconds old its views are")
    )
    act_delay: float = field(
        default=0.0,
        metadata=profile_key(SimulatedSeconds(), "simulated seconds from choosing an action to its effect"),
    )
    msg_delay: float = field(
        default=0.0,
        metadata=profile_key(
            SimulatedSeconds(), "simulated seconds from sending a message to its reaching the mailbox"
        ),
    )
    think_time: float | str = field(
        default=0.0,
        metadata=profile_key(
            SimulatedSeconds(or_measured=True),
            "simulated seconds a decision takes, or `measured`: its model calls' latency",
        ),
    )

    def persona_text(self) -> str:
        return self.persona or render("explorer_persona")

    def timing(self) -> Timing:
        return Timing(self.tick_interval, self.obs_delay, self.act_delay, self.msg_delay, self.think_time)

    def timed(self) -> bool:
        """True when a timing differs from the default: only `--schedule event` keeps time."""
        return self.timing() != Timing()


PROFILE_SPECS = {key.name: spec for key, spec in declarations(Profile, ProfileKey)}
PROFILE_KEYS = tuple(PROFILE_SPECS)


def default_profiles(count: int, model: str) -> list[Profile]:
    return [Profile(model=model)] * count


def load_profiles(path: Path, count: int, model: str) -> list[Profile]:
    """One profile per agent from the file at `path`, falling back to `model` for the model."""
    data, base = _load(path, model)
    entries = data.get("agents") or []
    if not isinstance(entries, list):
        raise ProfileError(path, "`agents` must be a list, in agent order")
    if len(entries) > count:
        raise ProfileError(path, f"{len(entries)} agent profiles for {count} agents; use --agents {len(entries)}")
    profiles = [_profile(path, entry, base, f"agent {i}") for i, entry in enumerate(entries, start=1)]
    return profiles + [base] * (count - len(profiles))


def coordinator_profile(
    path: Path | None, model: str, section: str = "coordinator", interval: float | None = None
) -> Profile:
    """The coordinator's profile: the file's `coordinator` section over its `default`, `model` its model,
    ticking every `interval` (COORDINATOR_TICK_INTERVAL when None) unless the file says; the system
    agent's (`section` "system") likewise, every SYSTEM_TICK_INTERVAL."""
    data, base = _load(path, model) if path else ({}, Profile())
    if interval is None:
        interval = SYSTEM_TICK_INTERVAL if section == "system" else COORDINATOR_TICK_INTERVAL
    base = replace(base, model=model, tick_interval=interval)
    return replace(_profile(path, data.get(section) or {}, base, section), model=model)


def _load(path, model):
    data = load_mapping(path, ProfileError, "a profiles file")
    if not set(data) <= {"default", "agents", "coordinator", "system"}:
        raise ProfileError(path, "expected a mapping with `default`, `agents`, `coordinator` and/or `system`")
    return data, _profile(path, data.get("default") or {}, Profile(model=model), "default")


def _profile(path: Path | None, entry: Any, base: Profile, what: str) -> Profile:
    if not isinstance(entry, dict):
        raise ProfileError(path, f"{what} must be a mapping of {', '.join(PROFILE_KEYS)}")
    unknown = sorted(map(str, set(entry) - set(PROFILE_KEYS)))
    if unknown:
        raise ProfileError(path, f"{what} has an unknown key {unknown[0]!r} (allowed: {', '.join(PROFILE_KEYS)})")
    given = {}
    for key, spec in PROFILE_SPECS.items():  # in declaration order: the first key wrong is the one named
        if key in entry:
            problem = spec.check.problem(f"{what} {key}", entry[key])
            if problem:
                raise ProfileError(path, problem)
            given[key] = spec.check.read(entry[key])
    return replace(base, **given)
