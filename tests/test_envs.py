"""The mock worlds as environments (explorer/envs/): PettingZoo's own API test, the spaces, the rewards, and the
same episode as the app's for the same seed and actions.

They need the optional extra `envs` (tests/support/optional.py).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from explorer.api import make_config, run
from explorer.records.errors import ConfigError
from perception.actions import ACTIONS
from tests.support.optional import needs


@pytest.fixture
def pettingzoo_env():
    needs("pettingzoo")
    from explorer.envs import pettingzoo_env

    return pettingzoo_env


@pytest.fixture
def gymnasium_env():
    needs("gymnasium")
    from explorer.envs import gymnasium_env

    return gymnasium_env


@pytest.mark.parametrize(
    "settings",
    [dict(world="apartment", agents=2), dict(world="gen:house", world_seed=3, agents=3, steps=25, comm=False)],
)
def test_pettingzoos_parallel_api_test_passes(pettingzoo_env, settings):
    from pettingzoo.test import parallel_api_test

    env = pettingzoo_env.ExplorationParallelEnv(**settings)
    parallel_api_test(env, num_cycles=100)
    assert env.agents == []  # the episode ran to its end: every agent truncated


def test_observations_are_in_their_spaces_and_show_the_view(pettingzoo_env):
    from explorer.envs.spaces import FREE, OBJECT, OFF_GRID

    env = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2)
    observations, infos = env.reset()
    for agent in env.agents:
        assert env.observation_space(agent).contains(observations[agent])
    first = observations["Agent1"]
    # The apartment puts Agent1 at (3, 1) facing north; the coffee table stands at (2, 2), one row up, one left.
    reach = env.world.view_distance
    assert list(first["pose"]) == [3, 1, 0, 0, 0, 0]
    assert first["view"][reach, reach] == FREE
    assert first["view"][reach - 1, reach - 1] == OBJECT
    assert (first["view"][reach + 2] == OFF_GRID).all()  # y = -1 is outside the world
    assert first["caption"].startswith("I see coffee_table at (2, 2, 0)")
    assert infos["Agent1"]["new_objects"] == ["coffee_table", "tv", "bookshelf"]


# Issue 49, part 2: reset(seed=...) gave identical starts on a generated world.
def test_reset_seeds_place_the_team_on_a_generated_world(pettingzoo_env):
    env = pettingzoo_env.ExplorationParallelEnv(world="gen:house", world_seed=3, agents=2)

    def starts(seed):
        observations, _ = env.reset(seed=seed)
        return tuple(tuple(observation["pose"]) for observation in observations.values())

    assert len({starts(seed) for seed in (1, 2, 3)}) == 3
    assert starts(2) == starts(2)


def test_a_message_reaches_the_team_at_the_next_step(pettingzoo_env):
    env = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=3)
    env.reset()
    turn = ACTIONS.index("look_right")
    actions = {agent: {"action": turn, "message": ""} for agent in env.agents}
    actions["Agent1"]["message"] = "sofa ahead"
    observations, *_ = env.step(actions)
    assert observations["Agent2"]["messages"] == observations["Agent3"]["messages"] == 'Agent1: "sofa ahead"'
    assert observations["Agent1"]["messages"] == ""
    observations, *_ = env.step({agent: {"action": turn, "message": ""} for agent in env.agents})
    assert observations["Agent2"]["messages"] == ""  # read once


def test_the_reward_is_new_objects_and_cells_at_the_documented_weights(pettingzoo_env):
    from explorer.envs.episode import Rewards

    plain = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2, seed=3)
    weighted = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2, seed=3, rewards=Rewards(5.0, 0.0))
    plain.reset()
    weighted.reset()
    objects = cells = 0
    choose = random.Random(1)
    while plain.agents:
        actions = {agent: {"action": choose.randrange(len(ACTIONS)), "message": ""} for agent in plain.agents}
        _, rewards, _, _, infos = plain.step(actions)
        _, weighted_rewards, _, _, _ = weighted.step(actions)
        for agent, info in infos.items():
            assert rewards[agent] == pytest.approx(1.0 * len(info["new_objects"]) + 0.1 * info["new_cells"])
            assert weighted_rewards[agent] == pytest.approx(5.0 * len(info["new_objects"]))
            objects += len(info["new_objects"])
            cells += info["new_cells"]
    assert objects > 0 and cells > 0


def test_a_bad_action_or_world_is_refused_in_one_line(pettingzoo_env):
    env = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2)
    env.reset()
    with pytest.raises(ValueError, match="index of one of the 12 ACTIONS"):
        env.step({"Agent1": 12, "Agent2": 0})
    with pytest.raises(ValueError, match="no action for Agent2"):
        env.step({"Agent1": 0})
    # Issue 50: True was taken as the action 1, and any seed was taken.
    with pytest.raises(ValueError, match="index of one of the 12 ACTIONS, not True"):
        env.step({"Agent1": True, "Agent2": 0})
    with pytest.raises(ValueError, match="a message is text, not 5"):
        env.step({"Agent1": {"action": 0, "message": 5}, "Agent2": 0})
    for seed in ("abc", 1.5, True):
        with pytest.raises(ValueError, match=f"seed must be a whole number or None, not {seed!r}"):
            env.reset(seed=seed)
    assert env.reset(seed=np.int64(3))[0].keys() == {"Agent1", "Agent2"}
    with pytest.raises(ConfigError, match="unknown world family 'castle'"):
        pettingzoo_env.ExplorationParallelEnv(world="gen:castle")


def test_the_gymnasium_view_passes_gymnasiums_checks(gymnasium_env):
    from gymnasium.utils.env_checker import check_env

    env = gymnasium_env.ExplorationEnv(world="gen:maze", world_seed=2, steps=30)
    with pytest.warns(UserWarning):  # the checker's notes: a single-level world's z is always 0, no render modes
        check_env(env)
    observation, _ = env.reset(seed=5)
    assert set(observation) == {"view", "pose", "caption"} and env.action_space.n == len(ACTIONS)
    truncated, steps = False, 0
    while not truncated:
        observation, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps += 1
        assert not terminated and env.observation_space.contains(observation)
    assert steps == 30
    with pytest.raises(ValueError, match="seed must be a whole number or None, not 'abc'"):
        env.reset(seed="abc")
    with pytest.raises(ValueError, match="not True"):
        env.step(True)


def trace_steps(run_dir: Path) -> dict[tuple[str, int], dict]:
    lines = (json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines())
    return {(line["agent_id"], line["step"]): line for line in lines}


@pytest.mark.parametrize(
    ("model", "world"),
    [("offline", dict(world="apartment")), ("random", dict(world="gen:house", world_seed=4))],
)
def test_the_same_seed_and_actions_give_the_apps_episode(pettingzoo_env, tmp_path, embedder, model, world):
    steps, agents = 12, 3
    config = make_config(model=model, seed=11, steps=steps, agents=agents, run_dir=tmp_path / "run", **world)
    trace = trace_steps(run(config, embedder=embedder).run_dir)
    env = pettingzoo_env.ExplorationParallelEnv(agents=agents, seed=11, steps=steps, **world)
    observations, infos = env.reset()
    for step in range(1, steps + 1):
        # After the reset, and after each step, the env shows what the app's next step began with.
        for agent in env.possible_agents:
            line = trace[(agent, step)]
            assert infos[agent]["pose"] == line["pose"], (agent, step)
            assert infos[agent]["new_objects"] == line["new_objects"], (agent, step)
            heard = "\n".join(f'{m["sender"]}: "{m["message"]}"' for m in line["messages_in"])
            assert observations[agent]["messages"] == heard, (agent, step)
        actions = {agent: action_of(trace[(agent, step)]) for agent in env.agents}
        observations, _, _, truncations, infos = env.step(actions)
        for agent in env.possible_agents:
            assert infos[agent]["pose"] == trace[(agent, step)]["result"]["pose"], (agent, step)
    assert all(truncations.values()) and env.agents == []
    sent = [line["message_out"] for line in trace.values() if line["message_out"]]
    assert model == "random" or sent  # the offline explorers talk: their messages were compared too


def action_of(line: dict) -> dict:
    message = line["message_out"]["message"] if line["message_out"] else ""
    return {"action": ACTIONS.index(line["action"]), "message": message}
