"""The mock worlds as environments (explorer/envs/): PettingZoo's own API test, the spaces, the rewards, and the
same episode as the app's for the same seed and actions.

They need the optional extra `envs` (tests/support/optional.py).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
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
    with pytest.warns(UserWarning):  # the checker's note: a single-level world's z is always 0
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


# ---- issue 52: one policy in every harness ---------------------------------------------------


def app_episode(tmp_path, embedder, model, **options):
    """The trace of a lock-step run of `model` (12 steps, 3 agents, seed 11) with `options`."""
    config = make_config(model=model, seed=11, steps=12, agents=3, run_dir=tmp_path / "run", **options)
    return trace_steps(run(config, embedder=embedder).run_dir)


@pytest.mark.parametrize(
    ("model", "world"),
    [
        ("offline", dict(world="apartment")),
        ("offline", dict(world="gen:house", world_seed=4)),
        ("offline", dict(world="apartment", random_starts=True)),
        ("random", dict(world="gen:maze", world_seed=2)),
        ("tests.support.space_policies:TurnAndWalk", dict(world="office")),
        # The classical explorers share the team's map through the store: the environment's holds it as a run's.
        ("nearest-frontier", dict(world="apartment")),
        ("utility-frontier", dict(world="gen:house", world_seed=4)),
        ("hungarian-frontier", dict(world="gen:maze", world_seed=2)),
        ("voronoi-frontier", dict(world="gen:office", world_seed=5)),
        ("mtsp-frontier", dict(world="office")),
    ],
)
def test_an_apps_policy_in_the_environment_plays_the_apps_episode(pettingzoo_env, tmp_path, embedder, model, world):
    from explorer.envs.app_policies import AppPolicies
    from nodes.decision_context import render_prompt

    trace = app_episode(tmp_path, embedder, model, **world)
    env = pettingzoo_env.ExplorationParallelEnv(agents=3, seed=11, steps=12, **world)
    team = AppPolicies(env, model)
    env.reset()
    for step in range(1, 13):
        for agent in env.agents:
            # The context a policy decides on is the run's: its prompt, made from it, is the trace's.
            assert render_prompt(env.episode.context(agent)) == trace[(agent, step)]["prompt"], (agent, step)
        actions = team.actions()
        assert actions == {agent: action_of(trace[(agent, step)]) for agent in env.agents}, step
        env.step(actions)
    assert env.agents == [] and team.actions() == {}


def test_a_search_task_in_the_environment_plays_the_apps_episode_and_ends_when_the_targets_are_found(
    pettingzoo_env, gymnasium_env, tmp_path, embedder
):
    from explorer.envs.app_policies import AppPolicies
    from explorer.envs.episode import Rewards

    world = dict(world="gen:house?find=toothbrush,laptop", world_seed=3)
    config = make_config(model="offline", seed=11, steps=200, agents=3, run_dir=tmp_path / "run", **world)
    trace = trace_steps(run(config, embedder=embedder).run_dir)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    last = max(step for _, step in trace)
    assert summary["ended_by"] == "targets-found" and last < 200
    env = pettingzoo_env.ExplorationParallelEnv(agents=3, seed=11, steps=200, rewards=Rewards(per_target=5), **world)
    team = AppPolicies(env, "offline", embedder=embedder)  # the built-in explorer with the app's semantic prior
    env.reset()
    step, target_rewards = 0, 0.0
    while env.agents:
        step += 1
        actions = team.actions()
        assert actions == {agent: action_of(trace[(agent, step)]) for agent in env.agents}, step
        _, rewards, terminations, truncations, infos = env.step(actions)
        found = {
            agent: [name for name in info["new_objects"] if name in ("toothbrush", "laptop")]
            for agent, info in infos.items()
        }
        target_rewards += sum(5 * len(names) for names in found.values())
        assert all(rewards[agent] >= 6 * len(found[agent]) for agent in rewards)  # 1 an object, 5 a target
        assert set(terminations.values()) == {step == last} and not any(truncations.values())
    assert step == last and target_rewards == 10 and env.episode.done
    with pytest.raises(RuntimeError, match="its targets were found"):
        env.episode.step(dict.fromkeys(env.possible_agents, ("scan", "")))
    single = gymnasium_env.ExplorationEnv(world="gen:house", world_seed=3, find=["toothbrush"], seed=2, steps=400)
    single.reset()
    explorer = AppPolicies(single, "offline", embedder=embedder)
    terminated = truncated = False
    while not (terminated or truncated):
        _, _, terminated, truncated, _ = single.step(explorer.action())
    assert terminated and not truncated and single.episode.done


def test_a_policy_in_the_environment_starts_afresh_with_each_episode(pettingzoo_env):
    from explorer.envs.app_policies import AppPolicies

    env = pettingzoo_env.ExplorationParallelEnv(world="gen:house", world_seed=3, agents=2, seed=5, steps=15)
    team = AppPolicies(env, "offline")

    def episode(seed):
        env.reset(seed=seed)
        played = []
        while env.agents:
            actions = team.actions()
            played.append(actions)
            env.step(actions)
        return played

    first = episode(5)
    assert episode(6) != first
    assert episode(5) == first  # the built-in explorer's map is not carried over from the earlier episodes


def test_the_explorer_passes_pettingzoos_parallel_api_test_among_the_environments_agents(pettingzoo_env):
    from pettingzoo.test import parallel_api_test

    env = pettingzoo_env.ExplorationParallelEnv(world="gen:house", world_seed=3, agents=3, steps=40)
    team = pettingzoo_env.AppTeammates(env, "offline", ["Agent2", "Agent3"])
    assert team.possible_agents == ["Agent1"]
    parallel_api_test(team, num_cycles=100)
    assert team.agents == [] and env.episode.taken == 40
    found = [name for name, seen in env.episode.store.discoveries().items() if seen["finder"] in ("Agent2", "Agent3")]
    assert len(found) >= 4  # the explorer played them: they found 8 objects here, random teammates none


def test_a_policy_of_the_spaces_sees_the_environments_observation(pettingzoo_env):
    from explorer.envs.space_policy import observation_from
    from explorer.policies.plugin import PolicySetup
    from tests.support.space_policies import TurnAndWalk

    env = pettingzoo_env.ExplorationParallelEnv(world="gen:house", world_seed=3, agents=2, steps=8)
    observations, _ = env.reset()
    policy = TurnAndWalk(PolicySetup("Agent1", 1))
    for _ in range(8):
        for agent in env.agents:
            seen = observation_from(env.episode.context(agent), "tests")
            assert seen.keys() == observations[agent].keys()
            assert (seen["view"] == observations[agent]["view"]).all() and (
                seen["pose"] == observations[agent]["pose"]
            ).all()
            assert (seen["caption"], seen["messages"]) == (
                observations[agent]["caption"],
                observations[agent]["messages"],
            )
        observations, *_ = env.step({agent: policy.act(observations[agent]) for agent in env.agents})
    assert policy.name == "turn-and-walk"


@pytest.mark.parametrize(
    ("policy", "returned"),
    [
        ("Stray", "act returned 12: an action is the index of one of the 12 ACTIONS, not 12 (see "),
        (
            "Junk",
            "act returned array([[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0...: an action is the index",
        ),
    ],
)
def test_a_policy_of_the_spaces_that_answers_outside_them_stops_the_run_in_one_line(tmp_path, policy, returned):
    needs("gymnasium")
    from tests.support.paths import ROOT

    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "--model",
            f"tests.support.space_policies:{policy}",
            "--steps",
            "3",
            "--run-dir",
            str(tmp_path / "run"),
            "-q",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"main.py: error: --model tests.support.space_policies:{policy}: {returned}")
    assert "Traceback" not in result.stderr


# ---- issue 63: actions as the ecosystem writes them --------------------------------------------

AS_WRITTEN = {  # the action 3 as RL libraries give it: each one the action space's `contains` takes, but the
    "0-d array": np.array(3),  # Stable-Baselines3's predict
    "array of one": np.array([3]),  # array of one, a vectorised environment's, which Gymnasium's Discrete does not
    "numpy integer": np.int64(3),
    "unsigned": np.uint8(3),
}
NOT_ACTIONS = {  # none of them an action: each refused in one line
    "float array": np.array(3.0),
    "two actions": np.array([3, 4]),
    "a grid": np.zeros((30, 30), dtype=np.int64),
    "a bool array": np.array([True]),
}


@pytest.mark.parametrize("written", AS_WRITTEN.values(), ids=AS_WRITTEN)
def test_an_action_as_the_ecosystem_writes_it_is_the_action(pettingzoo_env, gymnasium_env, written):
    paths = []
    for form in (3, written):
        env = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2, seed=4)
        env.reset()
        actions = {"Agent1": {"action": form, "message": "hi"}, "Agent2": {"action": form, "message": ""}}
        paths.append([{a: list(o["pose"]) for a, o in env.step(actions)[0].items()} for _ in range(3)])
        single = gymnasium_env.ExplorationEnv(world="apartment", seed=4)
        single.reset()
        assert single.action_space.contains(written) or written.shape == (1,)
        paths.append([list(single.step(form)[0]["pose"]) for _ in range(3)])
    assert paths[:2] == paths[2:]


@pytest.mark.parametrize("junk", NOT_ACTIONS.values(), ids=NOT_ACTIONS)
def test_anything_else_is_refused_in_one_line(pettingzoo_env, gymnasium_env, junk):
    env = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2, comm=False)
    env.reset()
    single = gymnasium_env.ExplorationEnv(world="apartment")
    single.reset()
    for step in (lambda: env.step({"Agent1": junk, "Agent2": 0}), lambda: single.step(junk)):
        with pytest.raises(ValueError, match="an action is the index of one of the 12 ACTIONS, not ") as refused:
            step()
        assert "\n" not in str(refused.value) and len(str(refused.value)) < 200


def test_a_policy_of_the_spaces_may_answer_as_an_rl_library_writes_actions(tmp_path, embedder):
    needs("gymnasium")
    from tests.support.space_policies import AsPredicted, TurnAndWalk

    played = []
    for policy in (TurnAndWalk, AsPredicted):
        config = make_config(seed=5, steps=6, agents=2, world="apartment", run_dir=tmp_path / policy.__name__)
        result = run(config, policy=policy, embedder=embedder)
        assert result.summary["status"] == "completed"
        played.append({step: line["action"] for step, line in trace_steps(result.run_dir).items()})
    assert played[0] == played[1]


# ---- issue 52: environments as their users expect ----------------------------------------------


def test_render_modes_draw_the_teams_map(pettingzoo_env):
    from explorer.envs.render import AGENT_COLOURS, FOUND, SEEN, UNSEEN

    assert pettingzoo_env.ExplorationParallelEnv.metadata["render_modes"] == ["ansi", "rgb_array"]
    text = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2, render_mode="ansi")
    text.reset()
    lines = text.render().splitlines()
    # The apartment puts Agent1 at (3, 1) facing north and Agent2 at (4, 1) facing east; the coffee table,
    # found, at (2, 2). Two characters a cell, north up: y = 1 is the line second from the bottom.
    depth = text.world.depth
    assert lines[depth - 2][6:10] == "1^2>" and lines[depth - 3][4:6] == "* "
    assert lines[-1].startswith("1 Agent1  2 Agent2")
    image_env = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2, render_mode="rgb_array")
    image_env.reset()
    image = image_env.render()
    world = image_env.world
    assert image.dtype == np.uint8 and image.shape == (world.depth * 8, world.width * 8, 3)
    cell = lambda x, y: image[(world.depth - 1 - y) * 8 + 4, x * 8 + 4]  # noqa: E731 (the middle of a cell)
    assert tuple(cell(3, 1)) == AGENT_COLOURS[0] and tuple(cell(4, 1)) == AGENT_COLOURS[1]
    assert tuple(cell(3, 2)) == SEEN and tuple(cell(2, 2)) == FOUND
    assert tuple(cell(world.width - 1, world.depth - 1)) == UNSEEN
    assert pettingzoo_env.ExplorationParallelEnv(world="apartment").render() is None


def test_gymnasium_make_gives_the_single_agent_view_with_its_options(gymnasium_env):
    import gymnasium

    env = gymnasium.make(gymnasium_env.ENV_ID, world="gen:house?size=40x30", render_mode="rgb_array", steps=5)
    observation, _ = env.reset(seed=2)
    assert env.unwrapped.episode.world.width == 40 and env.unwrapped.episode.world.depth == 30
    assert env.render().shape == (30 * 8, 40 * 8, 3)
    assert env.observation_space.contains(observation)


def test_random_starts_and_seeds_place_the_agents(pettingzoo_env, gymnasium_env):
    def starts(env, seed):
        observations, _ = env.reset(seed=seed)
        return tuple(tuple(observation["pose"]) for observation in observations.values())

    fixed = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2)
    assert starts(fixed, 1) == starts(fixed, 2)  # the world file's starts
    drawn = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2, random_starts=True)
    assert len({starts(drawn, seed) for seed in (1, 2, 3)}) == 3 and starts(drawn, 2) == starts(drawn, 2)
    alone = gymnasium_env.ExplorationEnv(world="apartment", random_starts=True)
    assert len({tuple(alone.reset(seed=seed)[0]["pose"]) for seed in (1, 2, 3, 4)}) > 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(random_starts="yes"), "random_starts must be True or False, not 'yes'"),
        (dict(render_mode="human"), "render_mode must be one of 'ansi', 'rgb_array' or None, not 'human'"),
        (dict(agents=0), "--agents"),
        (dict(world="gen:house?size=4x3"), "size 4x3 is too small for a house"),
        (dict(world_seed="x"), "--world-seed"),
    ],
)
def test_a_bad_keyword_is_refused_in_one_line(pettingzoo_env, options, message):
    with pytest.raises(ConfigError) as refused:
        pettingzoo_env.ExplorationParallelEnv(**options)
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_the_apps_policies_refuse_a_bad_model_or_agent_in_one_line(pettingzoo_env):
    from explorer.envs.app_policies import AppPolicies

    env = pettingzoo_env.ExplorationParallelEnv(world="apartment", agents=2)
    with pytest.raises(ConfigError, match="cannot import no_such_module"):
        AppPolicies(env, "no_such_module:Policy")
    with pytest.raises(ConfigError, match="agents must name some of Agent1, Agent2, not \\['Agent9'\\]"):
        AppPolicies(env, "offline", ["Agent9"])
    with pytest.raises(ConfigError, match="at least one agent"):
        pettingzoo_env.AppTeammates(env, "offline", ["Agent1", "Agent2"])
