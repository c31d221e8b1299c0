"""RunConfig as a record of typed parts: every option in exactly one part, named the same everywhere, and read,
written and listed as when they were one flat record."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from explorer.config.command_line import HELP_ORDER, RunParser, config_from, in_help_order
from explorer.config.keywords import make_config
from explorer.config.run_config import RunConfig, option_fields
from explorer.config.team_options import TeamOptions
from explorer.records.errors import ConfigError


def test_each_option_is_held_by_one_part_under_one_name():
    names = Counter(field.name for field, _ in option_fields())
    assert [name for name, count in names.items() if count > 1] == []
    assert set(RunConfig().parts()) == {"episode", "team", "calls", "timing", "memory", "output", "window"}


def test_help_lists_every_option_once_in_its_order():
    assert sorted(HELP_ORDER) == sorted(spec.flag for _, spec in option_fields())
    assert [spec.flag for _, spec in in_help_order(option_fields())] == list(HELP_ORDER)
    usage = RunParser().format_help()
    assert [usage.index(f"  {flag} ") for flag in ("--mode", "--agents", "--model", "--telemetry")] == sorted(
        usage.index(f"  {flag} ") for flag in ("--mode", "--agents", "--model", "--telemetry")
    )


def test_options_named_as_their_fields_reach_the_part_that_holds_them():
    config = RunConfig.of(agents=3, model="offline", schedule="event", embedder="torch", verbosity=-1)
    assert (config.team.agents, config.calls.model, config.timing.schedule) == (3, "offline", "event")
    assert (config.memory.embedder, config.output.verbosity) == ("torch", -1)
    assert config.with_options(agents=4).team == TeamOptions(agents=4)
    with pytest.raises(TypeError, match="no option stepz"):
        RunConfig.of(stepz=3)


def test_config_json_is_flat_and_reads_back_into_the_parts(tmp_path):
    config = make_config(world="office", agents=3, comm="none", max_cost=0.5, find="printer", run_dir=tmp_path / "r")
    recorded = config.to_dict()
    assert {"world": "office", "agents": 3, "comm": "none", "max_cost": 0.5, "find": ["printer"]}.items() <= (
        recorded.items()
    )
    assert "run_dir" not in recorded and "episode" not in recorded
    assert RunConfig.from_dict(recorded) == config.with_options(run_dir=None, verbosity=0)
    assert RunConfig.from_dict({"agents": 5}, seed=9).team.agents == 5
    assert RunConfig.from_dict({}, seed=9).episode.seed == 9


def test_checks_across_parts_still_refuse_in_one_line():
    parse = RunParser().parse_args
    with pytest.raises(ConfigError, match="--decide goals needs --mode mock"):
        config_from(parse(["--mode", "unity", "--window-title", "Game", "--decide", "goals"]))
    with pytest.raises(ConfigError, match="--coordinator needs --mode mock"):
        config_from(parse(["--mode", "unity", "--window-title", "Game", "--coordinator", "offline"]))
    with pytest.raises(ConfigError, match="are for --mode unity"):
        make_config(vision="split")
    with pytest.raises(ConfigError, match="not for a team split over processes"):
        make_config(store="redis://127.0.0.1:1/0", run_id="a", local_agents="Agent1", max_calls=3)
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        make_config(embedder_cache=Path(__file__) / "cache")
