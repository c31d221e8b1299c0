"""Agent profiles: a role and persona for each agent's prompt, and its own model and temperature.

    default:                      # optional: for every agent the list does not cover
      role: explorer
      persona: "You map rooms carefully and report what you find."
      model: gpt-4o-mini
      temperature: 0.2
    agents:                       # optional: in agent order, Agent1 first
      - {role: scout, persona: "You move fast and look far.", temperature: 0.7}
      - {role: cartographer, model: "openai/qwen2.5-7b-instruct"}

Fields left out come from `default`, then from the command line (--model)
and the built-in explorer persona (prompts/explorer_persona.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from perception.yaml_files import FileProblem, load_mapping
from prompts import render

PROFILE_KEYS = ("role", "persona", "model", "temperature")
DEFAULT_TEMPERATURE = 0.2


class ProfileError(FileProblem):
    """A profiles file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class Profile:
    role: str = "explorer"
    persona: str = ""  # empty: the built-in explorer persona
    model: str | None = None  # None: --model
    temperature: float = DEFAULT_TEMPERATURE

    def persona_text(self):
        return self.persona or render("explorer_persona")


def default_profiles(count, model):
    return [Profile(model=model)] * count


def load_profiles(path, count, model) -> list[Profile]:
    """One profile per agent from the file at `path`, falling back to `model` for the model."""
    data = load_mapping(path, ProfileError, "a profiles file")
    if not set(data) <= {"default", "agents"}:
        raise ProfileError(path, "expected a mapping with `default` and/or `agents`")
    base = _profile(path, data.get("default") or {}, Profile(model=model), "default")
    entries = data.get("agents") or []
    if not isinstance(entries, list):
        raise ProfileError(path, "`agents` must be a list, in agent order")
    if len(entries) > count:
        raise ProfileError(path, f"{len(entries)} agent profiles for {count} agents; use --agents {len(entries)}")
    profiles = [_profile(path, entry, base, f"agent {i}") for i, entry in enumerate(entries, start=1)]
    return profiles + [base] * (count - len(profiles))


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
    return replace(base, **{k: entry[k].strip() for k in ("role", "persona", "model") if k in entry}, temperature=float(temperature))
