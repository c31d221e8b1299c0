"""The coordinator: directives down, sight reports up, and explorers that follow them."""

import json
import re

import pytest

import explorer.policies.sentences as sentences
from explorer.config.run_config import RunConfig
from explorer.model.reading import ReplyError
from explorer.policies.coordinator import NO_REASON
from explorer.policies.directed import DirectedPolicy
from explorer.policies.offline import OfflineExplorer
from explorer.policies.replies import parse_directives
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from explorer.team.store import InProcessStore
from explorer.testing.chat_server import ChatServer, in_turn
from nodes.interfaces import DIRECTIVE
from perception.mock import MockPerception
from tests.support.paths import WORLDS
from tests.test_offline_explorer import context_for, with_messages, world_file

TEAM = ["Agent1", "Agent2", "Agent3"]
ACTIONS = ["forward", "look_left", "look_right"]


def run(tmp_path, embedder, name="run", **settings):
    settings = {"agents": 3, "steps": 24, "world": WORLDS / "office.yaml", "coordinator": "offline", **settings}
    config = RunConfig.of(run_dir=tmp_path / name, verbosity=-1, **settings).check()
    summary = ExplorationRun(config, embedder=embedder).execute()
    return list(TraceLines(tmp_path / name / "trace.jsonl")), summary


# ---- the directives' sentences and a model's reply ----------------------------------------------


def test_directive_sentences_are_read_back():
    for number, target, action in ((3, (5, 2, 0, "east"), None), (4, (5, 2, 0, None), None), (5, None, "look_left")):
        assert sentences.read_directive(sentences.directive(number, target, action)) == (number, target, action)
    assert sentences.read_directive("Coordinator here. Directive 7: go to (1, 2).") == (7, (1, 2, 0, None), None)
    assert sentences.read_directive("Heading to (1, 2, 0) facing north.") is None


def test_a_coordinators_reply_gives_one_directive_per_explorer():
    reply = (
        "```yaml\ndirectives:\n  agent2: {goal: [4, 1], facing: East}\n  Agent1: {action: Move Forward}\n  Agent3:\n```"
    )
    assert parse_directives(reply, TEAM, ACTIONS, (10, 10, 1)) == [
        ("Agent1", None, "forward", ""),
        ("Agent2", (4, 1, 0, "east"), None, ""),
    ]
    reasoned = "directives:\n  Agent1: {goal: [1, 1], reason: the north wing is unseen}\n"
    assert parse_directives(reasoned, TEAM, ACTIONS, (10, 10, 1)) == [
        ("Agent1", (1, 1, 0, None), None, "the north wing is unseen")
    ]
    for bad, problem in (
        ("I would send them north.", "no `directives`"),
        ("directives:\n  Agent9: {action: forward}\n", "'Agent9' is not one of the explorers"),
        ("directives:\n  Agent1: {goal: [40, 1, 0]}\n", "outside the world"),
        ("directives:\n  Agent1: {goal: here}\n", r"a cell \[x, y, level\]"),
        ("directives:\n  Agent1: {action: fly}\n", "unknown action 'fly'"),
        ("directives:\n  Agent1: {goal: [1, 1], facing: up}\n", "not north, east, south or west"),
    ):
        with pytest.raises(ReplyError, match=problem):
            parse_directives(bad, TEAM, ACTIONS, (10, 10, 1))


# ---- following directives -----------------------------------------------------------------------


def directed(tmp_path):
    world = world_file(
        tmp_path,
        "name: w\nsize: [6, 6]\nwalls: [[3, 0], [3, 1], [3, 2], [3, 3], [3, 4], [3, 5]]\n"
        "objects: [{name: cup, position: [5, 5]}]\nagents: [{position: [0, 0], facing: north}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    return perception, DirectedPolicy(OfflineExplorer(), "Coordinator")


def step(perception, policy, number, text=None):
    """One step of the explorer; the directive's sentence, if given, is a message from its coordinator."""
    context = context_for(perception, "Agent1", number)
    context = with_messages(
        context, [{"sender": "Coordinator", "recipient": "Agent1", "message": text}] if text else []
    )
    outcome = policy.decide("", context)
    perception.execute_action("Agent1", outcome.decision.action)
    return outcome


def test_an_explorer_walks_to_its_goal_directive_then_decides_on_its_own(tmp_path):
    perception, policy = directed(tmp_path)
    first = step(perception, policy, 1, sentences.directive(1, (0, 3, 0, None)))
    assert first.decided_by == DIRECTIVE and first.prompt == ""
    assert first.directive == {"id": 1, "kind": "goal", "target": [0, 3, 0, None], "replaced": [], "status": "followed"}
    number = 2
    while perception.get_agent_state("Agent1").cell != (0, 3, 0):
        assert step(perception, policy, number).directive["status"] == "followed"
        number += 1
        assert number < 10, "it never arrived"
    arrived = step(perception, policy, number)
    assert arrived.directive["status"] == "done" and arrived.decided_by is None  # its own choice again
    assert step(perception, policy, number + 1).directive is None  # ended: no directive any more


def test_a_directive_is_replaced_by_a_newer_one_and_dropped_when_unreachable(tmp_path):
    perception, policy = directed(tmp_path)
    step(perception, policy, 1, sentences.directive(1, (0, 5, 0, None)))
    replaced = step(perception, policy, 2, sentences.directive(2, (1, 0, 0, None)))
    assert replaced.directive["id"] == 2 and replaced.directive["replaced"] == [1]
    # Behind a wall it has seen from end to end: no way there.
    for y in range(6):
        policy.planner.map.add_wall((3, y))
    walled_off = step(perception, policy, 3, sentences.directive(3, (5, 5, 0, None)))
    assert walled_off.directive["status"] == "unreachable" and walled_off.decided_by is None


def test_a_goal_to_look_from_is_outdated_once_its_view_is_seen(tmp_path):
    # With message delays the coordinator's picture is old: a teammate may have covered the ground since.
    directive = sentences.directive(1, (1, 2, 0, "north"))
    perception, policy = directed(tmp_path)
    assert step(perception, policy, 1, directive).directive["status"] == "followed"
    perception, policy = directed(tmp_path)
    context = with_messages(
        context_for(perception, "Agent1", 1),
        [
            {"sender": "Agent2", "recipient": None, "message": "Covered x 0-5, y 0-5, level 0."},
            {"sender": "Coordinator", "recipient": "Agent1", "message": directive},
        ],
    )
    outcome = policy.decide("", context)
    assert outcome.directive["status"] == "outdated" and outcome.decided_by is None  # its own choice
    perception.execute_action("Agent1", outcome.decision.action)
    assert step(perception, policy, 2).directive is None  # ended


def test_an_action_directive_is_carried_out_at_once_as_it_stands(tmp_path):
    perception, policy = directed(tmp_path)
    outcome = step(perception, policy, 1, sentences.directive(4, action="look_right"))
    assert outcome.decision.action == "look_right" and outcome.directive["status"] == "followed"
    assert step(perception, policy, 2).directive is None  # once


# ---- whole runs ---------------------------------------------------------------------------------


def test_an_offline_coordinator_directs_explorers_in_lockstep(tmp_path, embedder):
    trace, summary = run(tmp_path, embedder, agents=4)  # 3 explorers split the office without its word
    lines = [r for r in trace if r["agent_id"] == "Coordinator"]
    assert [r["time"] for r in lines] == [0, 5, 10, 15, 20]  # every tick_interval (5) rounds
    sent = [d for r in lines for d in r["directives"]]
    assert sent and all(d["message"] == sentences.directive(d["id"], d["target"]) for d in sent)
    # Each says why, as an explorer's decision does: the unseen ground there and the way to it.
    assert all(re.search(r"about \d+ unseen cells, \d+ steps? away", d["reason"]) for d in sent)
    # Each directive reaches its explorer the round after it is sent, as a message from the Coordinator.
    for directive in sent:
        sent_at = next(r["time"] for r in lines if directive in r["directives"])
        read = [
            r
            for r in trace
            if r["agent_id"] == directive["to"] and any(m["message"] == directive["message"] for m in r["messages_in"])
        ]
        assert read and read[0]["time"] == sent_at + 1
    followed = [r for r in trace if r["directive"] and r["directive"]["status"] == "followed"]
    assert followed and all(r["policy"] == DIRECTIVE for r in followed)
    block = summary["coordinator"]
    assert block["ticks"] == 5 and block["directives_sent"] == len(sent)
    assert block["steps_directed"] == len(followed)
    ended = {r["directive"]["id"] for r in trace if r["directive"] and r["directive"]["status"] in ("followed", "done")}
    assert 0 < block["followed"] == len(ended) <= len(sent)
    assert summary["steps"]["Coordinator"] == 5 and summary["decisions"] == 4 * 24  # its ticks are no agent-steps


def test_a_coordinators_directives_arrive_after_its_message_delay(tmp_path, embedder):
    profiles = tmp_path / "p.yaml"
    profiles.write_text("coordinator: {tick_interval: 4, msg_delay: 3}\n")
    trace, summary = run(tmp_path, embedder, schedule="event", profiles=profiles)
    lines = [r for r in trace if r["agent_id"] == "Coordinator"]
    assert [r["time"] for r in lines] == [0, 4, 8, 12, 16, 20]
    reads = [(r["time"], m) for r in trace for m in r["messages_in"] if m["sender"] == "Coordinator"]
    assert reads and all(m["delivered_at"] == m["sent_at"] + 3 and t > m["delivered_at"] for t, m in reads)
    assert summary["per_agent"]["Coordinator"]["profile"]["msg_delay"] == 3.0
    # Late directives whose view the explorers had seen by then are dropped, and counted once each.
    outdated = {r["directive"]["id"] for r in trace if r["directive"] and r["directive"]["status"] == "outdated"}
    assert outdated and summary["coordinator"]["outdated"] == len(outdated)


def test_a_model_coordinator_is_asked_through_litellm_and_a_bad_reply_sends_nothing(tmp_path, embedder, monkeypatch):
    good = "```yaml\ndirectives:\n  Agent1: {goal: [1, 1, 0], reason: nobody is near the door}\n  Agent2: {action: look_left}\n```"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ChatServer(in_turn("no idea", "still no idea", good)) as server:
        trace, summary = run(
            tmp_path, embedder, coordinator="openai/coordinator-model", api_base=server.api_base, steps=10
        )
    lines = [r for r in trace if r["agent_id"] == "Coordinator"]
    assert len(server.requests) == 3 == summary["per_agent"]["Coordinator"]["llm"]["calls"]
    assert "You are the Coordinator of a team of 3 explorers" in server.requests[0]["messages"][-1]["content"]
    first, second = lines
    assert first["parse_failure"] and first["directives"] == [] and len(first["llm"]["calls"]) == 2
    assert [(d["to"], d["kind"], d["target"], d["reason"]) for d in second["directives"]] == [
        ("Agent1", "goal", [1, 1, 0, None], "nobody is near the door"),
        ("Agent2", "action", "look_left", NO_REASON),
    ]
    agent2 = next(r for r in trace if r["agent_id"] == "Agent2" and r["time"] == 6)
    assert agent2["action"] == "look_left" and agent2["directive"]["status"] == "followed"
    assert json.loads((tmp_path / "run" / "config.json").read_text())["coordinator"] == "openai/coordinator-model"


def test_a_model_coordinator_is_told_the_search_task(tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ChatServer(in_turn("directives: {}")) as server:
        settings = {"world": "gen:house", "world_seed": 3, "find": ("toothbrush",), "steps": 2}
        run(tmp_path, embedder, coordinator="openai/coordinator-model", api_base=server.api_base, **settings)
    prompt = server.requests[0]["messages"][-1]["content"]
    assert "The team's task is to find: toothbrush." in prompt and "as many distinct objects" not in prompt


def test_a_coordinator_is_checked(tmp_path):
    for settings, problem in (
        ({"coordinator": "offline", "comm": "none"}, "drop --no-comm"),
        ({"coordinator": "random"}, "offline or a model"),
        ({"coordinator": "offline", "mode": "unity", "window_titles": ("Game",)}, "needs --mode mock"),
    ):
        with pytest.raises(ConfigError, match=problem):
            RunConfig.of(**settings).check()
