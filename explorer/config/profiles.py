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
that long after it is sent). The defaults are 1, 0, 0, 0.

`think_time` (default 0: deciding takes no time) makes a decision take
simulated time: `measured` (the step's model calls' latency, as the trace
records it, so --replay-replies gives it again; a step that asked no model,
the built-in policies' too, its own decision's measured time) or a number of
seconds. The action lands that long after the tick (act_delay after that),
its message leaves then, and the agent's next tick waits for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from explorer.model.reply_format import REPLY_FORMATS
from explorer.records.clock import CLOCK_RESOLUTION
from explorer.schedule.timed_perception import MEASURED, Timing
from perception.yaml_files import FileProblem, load_mapping
from prompts import render

TIMING_KEYS = ("tick_interval", "obs_delay", "act_delay", "msg_delay")
PROFILE_KEYS = ("role", "persona", "model", "temperature", "reply_format", *TIMING_KEYS, "think_time")
DEFAULT_TEMPERATURE = 0.2
COORDINATOR_TICK_INTERVAL = 5.0  # a coordinator thinks slower than its explorers act
SYSTEM_TICK_INTERVAL = 10.0  # and the system agent above the coordinators slower still
MAX_TIME = 1_000_000.0  # simulated seconds: any timing beyond is a typo


class ProfileError(FileProblem):
    """A profiles file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class Profile:
    role: str = "explorer"
    persona: str = ""  # empty: the built-in explorer persona
    model: str = ""  # every profile loaded has one: the file's, else --model
    temperature: float = DEFAULT_TEMPERATURE
    reply_format: str | None = None  # None: --reply-format
    tick_interval: float = 1.0
    obs_delay: float = 0.0
    act_delay: float = 0.0
    msg_delay: float = 0.0
    think_time: float | str = 0.0  # seconds, or "measured"

    def persona_text(self) -> str:
        return self.persona or render("explorer_persona")

    def timing(self) -> Timing:
        return Timing(self.tick_interval, self.obs_delay, self.act_delay, self.msg_delay, self.think_time)

    def timed(self) -> bool:
        """True when a timing differs from the default: only `--schedule event` keeps time."""
        return self.timing() != Timing()


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


def _profile(path, entry, base, what):
    if not isinstance(entry, dict):
        raise ProfileError(path, f"{what} must be a mapping of {', '.join(PROFILE_KEYS)}")
    unknown = sorted(map(str, set(entry) - set(PROFILE_KEYS)))
    if unknown:
        raise ProfileError(path, f"{what} has an unknown key {unknown[0]!r} (allowed: {', '.join(PROFILE_KEYS)})")
    for key in ("role", "persona", "model"):
        if key in entry and (not isinstance(entry[key], str) or not entry[key].strip()):
            raise ProfileError(path, f"{what} {key} must be non-empty text")
    temperature = entry.get("temperature", base.temperature)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        raise ProfileError(path, f"{what} temperature must be a number from 0 to 2, not {temperature!r}")
    reply_format = entry.get("reply_format", base.reply_format)
    if reply_format is not None and reply_format not in REPLY_FORMATS:
        raise ProfileError(path, f"{what} reply_format must be one of {', '.join(REPLY_FORMATS)}, not {reply_format!r}")
    timing = {key: _seconds(path, what, key, entry.get(key, getattr(base, key))) for key in TIMING_KEYS}
    think_time = entry.get("think_time", base.think_time)
    if think_time != MEASURED:
        think_time = _seconds(path, what, "think_time", think_time, f"{MEASURED!r} or ")
    return replace(
        base,
        **{k: entry[k].strip() for k in ("role", "persona", "model") if k in entry},
        temperature=float(temperature),
        reply_format=reply_format,
        think_time=think_time,
        **timing,
    )


def _seconds(path: Path | None, what: str, key: str, value: object, or_else: str = "") -> float:
    """A timing's value in simulated seconds; ProfileError, naming `key`, for anything else."""
    least = "more than 0" if key == "tick_interval" else "0 or more"
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not ((value > 0 if key == "tick_interval" else value >= 0) and value <= MAX_TIME)
    ):
        raise ProfileError(path, f"{what} {key} must be {or_else}a number of simulated seconds, {least}, not {value!r}")
    if 0 < value < CLOCK_RESOLUTION:
        raise ProfileError(
            path, f"{what} {key} {value!r} is below the clock's resolution ({CLOCK_RESOLUTION:g} simulated seconds)"
        )
    return float(value)
