"""Search tasks (issue 30): a world's `task: {find: [...]}` and --find, the run's end once every target is
found, the summary's search block, the semantic prior, goals that name their room, targets placed by room kind."""

import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from explorer.config.run_config import RunConfig
from explorer.policies.semantic_prior import SemanticPrior, kind_weights
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.run.perception_setup import MockSetup
from explorer.run.runner import ExplorationRun
from explorer.sweep.sweep_file import load_sweep
from explorer.testing.chat_server import ChatServer
from perception.families.generate import open_world
from perception.room_sight import room_sight
from perception.world import WorldError, load_world
from tests.support.paths import ROOT
from tests.test_prompt_budget import context as prompt_context

# A kitchen (west) and a bathroom (east) with a door between them at (4, 2); a sofa in neither's way.
TWO_ROOMS = {
    "name": "two rooms",
    "size": [9, 5],
    "walls": [[4, 0], [4, 1], [4, 3], [4, 4]],
    "objects": [
        {"name": "toothbrush", "position": [7, 1], "category": "bathroom_item"},
        {"name": "kettle", "position": [1, 3]},
        {"name": "sofa", "position": [2, 0]},
        {"name": "towel", "position": [8, 4]},
    ],
    "rooms": [{"name": "kitchen", "rect": [[0, 0], [3, 4]]}, {"name": "bathroom", "rect": [[5, 0], [8, 4]]}],
    "agents": [{"position": [1, 1], "facing": "north"}],
    "task": {"find": ["toothbrush"]},
    "max_steps": 60,
}


def world_file(tmp_path, **changes):
    path = tmp_path / "two_rooms.yaml"
    path.write_text(yaml.safe_dump({**TWO_ROOMS, **changes}))
    return path


def run(tmp_path, embedder, name="run", **settings):
    if "world" not in settings:
        settings["world"] = world_file(tmp_path)
    config = RunConfig.of(agents=1, run_dir=tmp_path / name, verbosity=-1, **settings).check()
    summary = ExplorationRun(config, embedder=embedder).execute()
    return summary, list(TraceLines(tmp_path / name / "trace.jsonl"))


def test_a_world_file_gives_targets_and_find_overrides_them(tmp_path):
    path = world_file(tmp_path)
    world = load_world(path)
    assert world.targets == ("toothbrush",) and world.categories == {"toothbrush": "bathroom_item"}
    assert open_world(path, None, ("kettle", "sofa")).targets == ("kettle", "sofa")
    config = RunConfig.of(world=path, find=("kettle",)).check()
    assert MockSetup(config).world.targets == ("kettle",)


def test_an_unknown_target_is_refused_in_one_line(tmp_path):
    path = world_file(tmp_path)
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--world", str(path), "--find", "toothbrush,banana"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "unknown target 'banana'" in result.stderr
    with pytest.raises(WorldError, match="unknown target 'laptop'"):
        load_world(world_file(tmp_path, task={"find": ["laptop"]}))
    with pytest.raises(ConfigError, match="unknown target 'banana': a generated world holds no such thing"):
        RunConfig.of(world=Path("gen:house"), world_seed=1, find=("banana",)).check()
    # Issue 50: the error names the world and the targets as the user wrote them, not a name made of both.
    with pytest.raises(ConfigError) as raised:
        RunConfig.of(world=Path("gen:house?find=bed"), find=("toilet",)).check()
    assert str(raised.value).startswith(
        "gen:house?find=bed with --find toilet: unknown target 'toilet': a generated world holds no such thing "
        "(it may hold air_conditioner, alarm_clock, "
    )


def test_the_refusal_lists_the_world_s_names_bounded(tmp_path):
    many = [{"name": f"thing{number:03d}", "position": [number % 9, 2]} for number in range(300)]
    with pytest.raises(WorldError) as raised:
        load_world(world_file(tmp_path, size=[9, 5], objects=many, task={"find": ["laptop"]}))
    message = str(raised.value)
    assert "(it holds thing000, thing001, " in message and message.endswith(" more)") and len(message) < 400
    with pytest.raises(WorldError, match=r"it holds kettle, sofa, toothbrush, towel\)$"):
        load_world(world_file(tmp_path, task={"find": ["laptop"]}))
    with pytest.raises(ConfigError, match=r"it may hold .* and [0-9]+ more\)$"):
        RunConfig.of(world=Path("gen:maze"), find=("banana",)).check()


def test_find_takes_a_list_or_a_comma_text_in_world_and_sweep_files(tmp_path):
    assert load_world(world_file(tmp_path, task={"find": "toothbrush,kettle"})).targets == ("toothbrush", "kettle")
    with pytest.raises(WorldError, match="'find' must be a list of objects' names"):
        load_world(world_file(tmp_path, task={"find": 3}))
    (tmp_path / "sweep.yaml").write_text(
        "grid:\n  seed: [1]\n  find: [[toothbrush, laptop], mug]\nfixed: {world: gen:house, steps: 5}\n"
    )
    runs = load_sweep(tmp_path / "sweep.yaml").runs
    assert [run.settings["find"] for run in runs] == [["toothbrush", "laptop"], ["mug"]]
    assert [run.name for run in runs] == ["seed=1,find=toothbrush,laptop", "seed=1,find=mug"]
    (tmp_path / "fixed.yaml").write_text("grid: {seed: [1]}\nfixed: {world: gen:house, find: [toothbrush, laptop]}\n")
    assert load_sweep(tmp_path / "fixed.yaml").runs[0].arguments[-1] == "--find=toothbrush,laptop"


def test_the_run_ends_once_every_target_is_found_and_the_summary_says_when(tmp_path, embedder):
    summary, trace = run(tmp_path, embedder, steps=60)
    search = summary["search"]
    assert summary["ended_by"] == "targets-found" and summary["status"] == "completed"
    assert search["targets_found"] == ["toothbrush"] and search["all_found"]
    found_at = next(line["step"] for line in trace if "toothbrush" in line["new_objects"])
    assert search["steps_to_target"] == {"toothbrush": found_at} and search["steps_to_all"] == found_at
    assert trace[-1]["step"] == found_at < 60  # no step after the last target


def test_a_target_not_found_is_counted_as_such(tmp_path, embedder):
    summary, _ = run(tmp_path, embedder, steps=2, find=("toothbrush", "towel"))
    assert summary["ended_by"] == "steps"
    assert summary["search"]["steps_to_all"] is None and summary["search"]["all_found"] is False
    assert summary["search"]["steps_to_target"] == {"toothbrush": None, "towel": None}
    assert run(tmp_path, embedder, "plain", steps=2, world=world_file(tmp_path, task=None))[0]["search"] is None


def test_the_prompt_says_what_to_find_and_where_the_doors_lead(tmp_path, embedder):
    _, trace = run(tmp_path, embedder, steps=3, model="random", seed=3)
    prompt = trace[0]["prompt"]
    assert "The team's task is to find: toothbrush." in prompt and "Still to find: toothbrush." in prompt
    assert "You are in the kitchen." in prompt
    assert "say which rooms you have searched" in prompt  # and the plain exploration's prompt does not say it
    _, plain = run(tmp_path, embedder, "plain", steps=1, model="random", world=world_file(tmp_path, task=None))
    assert "say which rooms" not in plain[0]["prompt"]


def test_the_prior_ranks_a_bathroom_over_a_kitchen_for_a_toothbrush(embedder):
    table = kind_weights(embedder.encode, ["toothbrush"], ["bathroom", "kitchen", "bedroom", "office"])
    weights = table["toothbrush"]
    assert weights["bathroom"] > 1 > weights["kitchen"]
    assert kind_weights(embedder.encode, ["toothbrush"], ["kitchen", "bathroom", "office", "bedroom"]) == table


def test_the_prior_weighs_the_ground_of_the_rooms_it_knows(tmp_path, embedder):
    world = load_world(world_file(tmp_path))
    prior = SemanticPrior(kind_weights(embedder.encode, ["toothbrush"], ["bathroom", "kitchen"]))
    base = prompt_context(1, objects=0, messages=0, memory_chars=10, caption_chars=0)
    pose = world.agent_starts[0]
    _, cells, _ = world.view(pose)
    assert prior.weights().get((6, 2), 1.0) == 1.0  # no room known yet: the average
    context = replace(
        base,
        team=replace(base.team, targets=("toothbrush",), discoveries={}),
        view=replace(base.view, pose=pose, rooms=room_sight(world, pose.x, pose.y, [(4, 2, 0), *cells])),
    )
    prior.learn(context)
    assert (
        prior.weights().get((6, 2), 1.0) > 1.0 > prior.weights().get((2, 2), 1.0)
    )  # the bathroom behind the door, the kitchen here
    found = replace(context, team=replace(context.team, discoveries={"toothbrush": {}}))
    prior.learn(found)
    assert prior.weights().get((6, 2), 1.0) == prior.weights().get((2, 2), 1.0) == 1.0  # nothing left to find


def actions_of(trace):
    return [(line["agent_id"], line["step"], line["action"], line["pose"]) for line in trace]


def test_the_prior_is_deterministic_and_no_prior_gives_back_the_plain_explorer(tmp_path, embedder):
    house = {"world": Path("gen:house"), "world_seed": 3, "find": ("toothbrush", "laptop")}
    settings = {**house, "agents": 2, "run_dir": None, "verbosity": -1}
    traces = {}
    for name, extra in {"prior": {}, "again": {}, "off": {"prior": False}}.items():
        config = RunConfig.of(**{**settings, "run_dir": tmp_path / name, **extra}).check()
        ExplorationRun(config, embedder=embedder).execute()
        traces[name] = actions_of(list(TraceLines(tmp_path / name / "trace.jsonl")))
    plain = RunConfig.of(**{**settings, "find": (), "run_dir": tmp_path / "plain"}).check()
    ExplorationRun(plain, embedder=embedder).execute()
    today = actions_of(list(TraceLines(tmp_path / "plain" / "trace.jsonl")))
    assert traces["prior"] == traces["again"]
    assert traces["off"] == today[: len(traces["off"])]  # the same steps, up to the last target's
    assert traces["prior"] != traces["off"]


def test_goals_name_the_room_they_lead_into(tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ChatServer(lambda request: "goal: G1") as server:
        settings = {"model": "openai/stub", "decide": "goals", "api_base": server.api_base, "reply_format": "yaml"}
        run(tmp_path, embedder, steps=8, **settings)
        prompts = [record.body["messages"][-1]["content"] for record in server.records]
    goal_lines = [line for prompt in prompts for line in prompt.splitlines() if line.startswith("- G")]
    assert any(
        line.startswith("- G") and "enter the bathroom through the door at (4, 2, 0): look" in line
        for line in goal_lines
    )
    assert any("look around the kitchen, the room you are in: look" in line for line in goal_lines)


def test_generated_targets_are_placed_by_room_kind_deterministically():
    kinds = Counter()
    for seed in range(30):
        world = open_world("gen:house", seed, ("toothbrush",))
        again = open_world(f"gen:house?find=toothbrush&seed={seed}")
        assert (world.name, world.objects, world.targets) == (again.name, again.objects, ("toothbrush",))
        assert [name for name in world.objects if name.startswith("toothbrush")] == ["toothbrush"]
        assert world.categories["toothbrush"] == "bathroom_item"
        kinds[world.room_at(*world.objects["toothbrush"][:2]).kind] += 1
    assert kinds["bathroom"] >= 20 and sum(kinds.values()) - kinds["bathroom"] >= 2  # most, not all
    assert open_world("gen:house", 4).targets == ()  # without a task, no target is placed


def test_the_console_summary_names_each_target_and_when_it_was_found(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--world", str(world_file(tmp_path)), "--find", "toothbrush,towel"]
        + ["--steps", "60", "-q", "--run-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    search = yaml.safe_load((tmp_path / "run" / "summary.json").read_text())["search"]
    steps, printed = search["steps_to_target"], " ".join(result.stdout.split())
    assert f"Targets: toothbrush (step {steps['toothbrush']})" in printed
    assert f"; SPL {search['spl']:g}" in printed and search["spl"] is not None
