"""What a run readies before anything slow starts: its team's run id and store, the embedding model and
the model client."""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from explorer.config.profiles import Profile
from explorer.config.run_config import RunConfig, option_fields
from explorer.model.client import has_price, missing_api_keys
from explorer.model.client import load as load_model_client
from explorer.model.preflight import preflight, unreachable
from explorer.policies.built_in import decides_in_code
from explorer.policies.grid_arrays import load_scipy
from explorer.records.errors import ConfigError
from explorer.records.secrets import redact_url
from explorer.run.roster import Roster
from explorer.run.stop import RunFailed
from explorer.team.split import NotJoined, SplitTeam
from memory import onnx_export
from memory.embedder import SentenceEmbedder
from nodes.interfaces import StopRun

log = logging.getLogger("explorer")


def settle_config(config: RunConfig, embedder: SentenceEmbedder | None) -> RunConfig:
    """The config as the run really runs it: a run id for a team on Redis, the backend of a given embedder. The
    first step of a run: scipy is loaded here too, before any of the run's threads starts."""
    load_scipy()
    if config.team.store and not config.team.run_id:
        config = config.with_options(run_id=new_run_id())  # one process runs the whole team: a run of its own
    if embedder is not None:  # the summary and config.json say which backend the run really used
        config = config.with_options(embedder=embedder.backend)
    return config


def new_run_id() -> str:
    """A run id for a team on a Redis store that did not name one: the time and a random tail."""
    return time.strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()


def split_team(config: RunConfig, roster: Roster) -> SplitTeam:
    """This process's part of a team on a Redis store; the server is reached now."""
    from explorer.team.redis_store import RedisRun  # imports redis: only for a team on a Redis store

    store, run_id = config.team.store, config.team.run_id
    assert store and run_id  # called for a team on a Redis store, which settle_config has given a run id
    return SplitTeam(RedisRun(store, run_id), list(roster.members), roster.local)


def start_embedder(config: RunConfig, given: SentenceEmbedder | None) -> SentenceEmbedder:
    """The embedding model, `given` or loading in the background while the run is set up and its first
    step perceives and decides; the first memory written waits for it."""
    if given is None and config.memory.embedder == "onnx" and config.output.verbosity >= 0:
        _announce_export(config.memory.embedder_cache)
    return given or SentenceEmbedder(config.memory.embedder, config.memory.embedder_cache)


def _announce_export(cache_dir: Path | None) -> None:
    """The first run on a machine exports the model (seconds): say so before the pause."""
    cache_dir = cache_dir or onnx_export.default_cache_dir()
    if not onnx_export.is_exported(cache_dir):
        print(onnx_export.exporting_message(cache_dir), file=sys.stderr, flush=True)


def prepare_model_client(config: RunConfig, agent_ids: list[str], profiles: list[Profile]) -> None:
    """For a run with models: litellm loaded now, while the embedding model loads, each model's API key
    checked (unless --api-base names a server), so that a missing one is refused at start, not at its first
    call, each model's price known where --max-cost must count it, and each model asked once for a token
    (unless --no-preflight), so that a server or a model that is not there is refused before the run starts."""
    models = [(agent_id, p.model) for agent_id, p in zip(agent_ids, profiles) if not decides_in_code(p.model)]
    if not models:
        if config.episode.mode == "mock":  # a game's screenshots are read by a model whoever decides
            _warn_of_idle_budgets(config, [p.model for p in profiles])
        return
    if config.calls.preflight and config.calls.api_base:
        _server_reachable(config.calls.api_base)
    load_model_client()
    for agent_id, model in models if not config.calls.api_base else ():
        missing = missing_api_keys(model)
        if missing:
            raise ConfigError(
                f"{agent_id}'s model {model!r} needs {' or '.join(missing)} in the environment: "
                "set it, or give --api-base URL for a local server"
            )
    _check_prices(config, [model for _, model in models])
    if config.calls.preflight:
        _preflight(config, [model for _, model in models])


def _check_prices(config: RunConfig, models: list[str]) -> None:
    """--max-cost counts dollars: refused where no model's price is known and it is the only budget."""
    if config.calls.max_cost is None or config.calls.price_in is not None or config.calls.price_out is not None:
        return
    unpriced = sorted({model for model in models if not has_price(model)})
    if not unpriced:
        return
    if config.calls.max_calls is None and config.calls.max_tokens is None:
        raise ConfigError(
            f"--max-cost: the price of {', '.join(unpriced)} is unknown, so its cost cannot be counted: "
            "give --price-in and --price-out (dollars per million tokens), or --max-calls or --max-tokens"
        )
    log.warning("--max-cost does not count the calls of %s: its price is unknown", ", ".join(unpriced))


def _warn_of_idle_budgets(config: RunConfig, policies: list[str]) -> None:
    """Budgets on a run that makes no model call bound nothing: said, not refused, since a sweep may vary
    the model under one budget, and its runs without a model are as they were asked."""
    flags = {field.name: spec.flag for field, spec in option_fields()}
    given = [flags[name] for name, limit in asdict(config.calls.limits()).items() if limit is not None]
    if given:
        log.warning(
            "%s bound nothing: this run's policies (%s) make no model calls it counts",
            " and ".join(given),
            ", ".join(dict.fromkeys(policies)),
        )


def _server_reachable(api_base: str) -> None:
    problem = unreachable(api_base)
    if problem is not None:
        raise ConfigError(
            f"the model check before the run failed: --api-base {redact_url(api_base)}: {problem} "
            "(check --api-base, or skip the check with --no-preflight)"
        )


def _preflight(config: RunConfig, models: list[str]) -> None:
    refused = preflight(models, config.calls.api_base)
    if refused is not None:
        raise ConfigError(
            f"the model check before the run failed: {refused} (check --model and --api-base, "
            "or skip the check with --no-preflight)"
        )


def join_team(team: SplitTeam, join_timeout: float, local: list[str]) -> None:
    """Wait for the rest of the team; raises RunFailed where it does not come."""
    try:
        team.join(join_timeout, log.warning)
    except (NotJoined, StopRun) as error:
        raise RunFailed(str(error)) from None
    log.info("The team has joined run %r: %s here", team.run.run_id, ", ".join(local))


def claim_team(team: SplitTeam | None, config: RunConfig, roster: Roster) -> None:
    """A split team's agents of this process claimed in its run, with the arguments every process must share."""
    if team:
        team.claim(team_arguments(config, roster.resolved_profiles()))


def team_arguments(config: RunConfig, profiles: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What every process of a team must share: what shapes the team's steps, the files by their content."""
    settings = config.to_dict()
    shared = {
        name: settings[name]
        for name in ("mode", "agents", "steps", "seed", "model", "comm", "decide", "schedule", "coordinator", "vision")
    }
    shared["world"] = _digest(config.episode.world) if config.episode.mode == "mock" else None
    shared["profiles"] = _digest(config.team.profiles) if config.team.profiles else None
    shared["resolved_profiles"] = profiles
    return shared


def _digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]
