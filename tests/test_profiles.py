import json
import re
from dataclasses import fields

import pytest

from explorer.config.options import declarations
from explorer.config.profiles import Profile, ProfileError, ProfileKey, load_profiles
from explorer.config.run_config import RunConfig
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from tests.support.in_process import main_here
from tests.support.paths import ROOT
from tests.test_cli import assert_one_line_error


def write(tmp_path, text):
    path = tmp_path / "profiles.yaml"
    path.write_text(text)
    return path


def test_profiles_come_in_agent_order_and_fall_back_to_the_default(tmp_path):
    path = write(
        tmp_path,
        "default: {persona: Be thorough., temperature: 0.1}\n"
        "agents:\n  - {role: scout, model: random, temperature: 0.9}\n  - {role: mapper}\n",
    )
    scout, mapper, third = load_profiles(path, 3, "offline")
    assert scout == Profile(role="scout", persona="Be thorough.", model="random", temperature=0.9)
    assert mapper == Profile(role="mapper", persona="Be thorough.", model="offline", temperature=0.1)
    assert third == Profile(role="explorer", persona="Be thorough.", model="offline", temperature=0.1)


def test_the_default_profile_is_the_spec_explorer():
    assert "Explore new ground" in Profile().persona_text()


@pytest.mark.parametrize(
    "text, problem",
    [
        ("agents: [{role: a}, {role: b}, {role: c}]", "3 agent profiles for 2 agents"),
        ("agents: {role: a}", "must be a list"),
        ("agents: [{colour: red}]", "unknown key 'colour'"),
        ("agents: [{temperature: hot}]", "temperature must be a number"),
        ("agents: [{temperature: 3}]", "temperature must be a number"),
        ("default: {model: ''}", "model must be non-empty"),
        ("- a list", "must be a mapping"),
        ("colour: red", "expected a mapping with `default`"),
        ("default: [unclosed", "invalid YAML"),
        # Below the clock's resolution every tick lands at t = 0: one agent ticks for ever, the others starve.
        ("agents: [{tick_interval: 1.0e-300}]", "tick_interval 1e-300 is below the clock's resolution"),
        ("agents: [{act_delay: 0.0000001}]", "act_delay 1e-07 is below the clock's resolution"),
        ("default: {msg_delay: 0.0000005}", "msg_delay 5e-07 is below the clock's resolution"),
    ],
)
def test_bad_profiles_files_are_one_line_errors(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(ProfileError, match=problem):
        load_profiles(path, 2, "offline")
    assert_one_line_error(main_here("--profiles", str(path), "--run-dir", str(tmp_path / "run")), str(path), problem)


def test_a_missing_profiles_file_is_a_usage_error(tmp_path):
    assert_one_line_error(main_here("--profiles", str(tmp_path / "nope.yaml")), "profiles file not found")


def test_each_agent_runs_with_its_own_role_persona_and_model(tmp_path, embedder):
    path = write(
        tmp_path,
        "agents:\n  - {role: scout, persona: Hurry to the far rooms., model: random}\n  - {role: cartographer}\n",
    )
    config = RunConfig.of(agents=2, steps=2, profiles=path, run_dir=tmp_path / "run", verbosity=-1)
    ExplorationRun(config, embedder=embedder).execute()
    first, second = list(TraceLines(tmp_path / "run" / "trace.jsonl"))[:2]
    assert (
        "You are Agent1, the scout." in first["prompt"]
        and "one of 2 agents" in first["prompt"]
        and "Hurry to the far rooms." in first["prompt"]
    )
    assert "You are Agent2, the cartographer." in second["prompt"] and "Explore new ground" in second["prompt"]
    assert (first["policy"], second["policy"]) == ("random", "offline")
    # What each agent ran with is on record, as resolved.
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    clock = {"tick_interval": 1.0, "obs_delay": 0.0, "act_delay": 0.0, "msg_delay": 0.0, "think_time": 0.0}
    assert summary["per_agent"]["Agent1"]["profile"] == {
        "role": "scout",
        "model": "random",
        "temperature": 0.2,
        "reply_format": "auto",
        **clock,
    }
    assert summary["per_agent"]["Agent2"]["profile"] == {
        "role": "cartographer",
        "model": "offline",
        "temperature": 0.2,
        "reply_format": "auto",
        **clock,
    }
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["agent_profiles"]["Agent1"]["persona"] == "Hurry to the far rooms."
    assert (
        "Agent1 as scout with random, Agent2 as cartographer with offline" in (tmp_path / "run" / "run.log").read_text()
    )


def _key_table(doc, heading):
    """The rows of the first table of profile keys under `heading` in docs/`doc`, each as its cells."""
    section = (ROOT / "docs" / doc).read_text(encoding="utf-8").split(heading, 1)[1]
    return [
        tuple(cell.strip() for cell in row.strip("|").split(" | "))
        for row in re.search(r"\n(\| `.*?)\n\n", section, re.S).group(1).splitlines()
    ]


def _shown(default):
    return f"{default:g}" if isinstance(default, float) else f"`{default}`"


def test_the_docs_table_of_profile_keys_is_the_declared_keys_with_their_defaults_and_help():
    declared = [
        (f"`{key.name}`", spec.default or _shown(key.default), spec.help)
        for key, spec in declarations(Profile, ProfileKey)
    ]
    assert _key_table("models.md", "### Agent profiles") == declared


def test_the_docs_table_of_timings_is_a_profiles_timings():
    timings = [f"`{timing.name}`" for timing in fields(Profile().timing())]
    assert [row[0] for row in _key_table("time-and-hierarchy.md", "**The event-driven schedule.**")] == timings
