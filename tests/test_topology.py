"""Communication topologies (--comm all|star|tree|none) and the system agent above the coordinators."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import explorer.policies.sentences as sentences
from explorer.config.command_line import RunParser, config_from
from explorer.config.keywords import make_config
from explorer.config.run_config import RunConfig
from explorer.policies.coordinator import OfflineCoordinator, Post
from explorer.policies.directed import DirectedPolicy
from explorer.policies.offline import OfflineExplorer
from explorer.policies.system_agent import SystemAgent
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.run.recover import recover_summary
from explorer.run.runner import ExplorationRun
from explorer.team.hierarchy import RoutedStore, group_sentence, initial_groups, read_group
from explorer.team.store import InProcessStore
from explorer.testing.hash_embedder import HashEmbedder
from nodes.decision_context import CoordinatorContext, SightReport, TeamContext
from nodes.interfaces import StepReport
from nodes.record import StepRecord
from perception.base import Message
from perception.mock import MockPerception
from tests.support.paths import WORLDS
from tests.test_offline_explorer import context_for, with_messages, world_file

ROOT = Path(__file__).resolve().parent.parent
EXPLORERS = ("Agent1", "Agent2", "Agent3")


def run(tmp_path, name="run", **settings):
    settings = {"agents": 3, "steps": 16, "world": WORLDS / "office.yaml", **settings}
    config = RunConfig.of(run_dir=tmp_path / name, verbosity=-1, **settings).check()
    summary = ExplorationRun(config, embedder=HashEmbedder()).execute()
    return list(TraceLines(tmp_path / name / "trace.jsonl")), summary


def pose(x, y):
    return {"position": [x, y, 0], "facing": "north", "pitch": 0, "roll": 0}


def report(sender, x, y, said="", step=1):
    return SightReport(sender, step, pose(x, y), pose(x, y), said=said)


def coordinator_context(agent_id, members, reports=(), messages=(), positions=None, step=1):
    team = TeamContext(agent_id, tuple(members), step, 50, "w", (40, 40, 1), 3, {})
    heard = tuple({"sender": s, "recipient": agent_id, "message": m} for s, m in messages)
    return CoordinatorContext(team, tuple(reports), ("forward",), heard, positions or {})


# ---- the option ---------------------------------------------------------------------------------


def test_comm_none_is_no_comm():
    parse = RunParser().parse_args
    as_none, as_no_comm = config_from(parse(["--comm", "none"])), config_from(parse(["--no-comm"]))
    assert as_none == as_no_comm and as_none.to_dict() == as_no_comm.to_dict()
    assert as_none.team.comm == "none" and not as_none.team.topology.messages
    assert config_from(parse([])).team.comm == "all" and config_from(parse([])).team.topology.messages
    assert make_config(comm=False).to_dict() == as_none.to_dict() and make_config(comm=True).team.comm == "all"


def test_a_config_json_written_with_comm_and_comm_topology_apart_reads_as_one_setting():
    # As config.json held them before they were one option: --no-comm as comm false, --comm as comm_topology.
    assert RunConfig.from_dict({"comm": False, "comm_topology": "all"}).team.comm == "none"
    assert RunConfig.from_dict({"comm": True, "comm_topology": "star"}).team.comm == "star"
    assert (
        RunConfig.from_dict({"comm": True}).team.comm == "all"
        and RunConfig.from_dict({"comm": "tree"}).team.comm == "tree"
    )


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({"comm": "star"}, "--comm star needs --coordinator"),
        ({"comm": "tree", "coordinator": "offline"}, "--comm tree routes through the system agent"),
        ({"coordinators": 2}, "--coordinators needs --coordinator"),
        ({"coordinators": 4, "coordinator": "offline"}, "more than the 3 explorers"),
        ({"comm": "none", "coordinator": "offline"}, "drop --no-comm"),
    ],
)
def test_a_topology_without_its_hierarchy_is_refused(settings, problem):
    with pytest.raises(ConfigError, match=problem):
        RunConfig.of(agents=3, **settings).check()


def test_star_without_a_coordinator_is_refused_in_one_line_with_exit_code_2(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--comm", "star", "--run-dir", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "--comm star needs --coordinator" in done.stderr


# ---- star -----------------------------------------------------------------------------------------


def test_under_star_the_coordinator_passes_a_message_on_only_to_the_explorer_it_concerns():
    coordinator = OfflineCoordinator(Post(relaying=True))
    said = "Heading to (6, 6, 0) facing north."
    context = coordinator_context(
        "Coordinator", EXPLORERS, [report("Agent1", 5, 5, said), report("Agent2", 8, 8), report("Agent3", 35, 35)]
    )
    relayed = coordinator.direct(context).relayed
    assert relayed == (Message("Agent1", "Agent2", said, 1),)  # as Agent1 wrote it; Agent3 is far away


def test_under_star_an_explorers_message_reaches_the_coordinator_only(tmp_path):
    trace, _ = run(tmp_path, comm="star", coordinator="offline")
    explorers = [line for line in trace if line["agent_id"] in EXPLORERS]
    said = {
        (line["agent_id"], line["step"]): line["message_out"]["message"] for line in explorers if line["message_out"]
    }
    assert said, "the explorers said something"
    heard = [(line, m) for line in explorers for m in line["messages_in"] if m["sender"] != "Coordinator"]
    assert heard, "the coordinator passed messages on"
    for line, message in heard:
        # Not a broadcast: the coordinator passed it on, to this explorer, a round later than a direct message.
        assert (
            message["recipient"] == line["agent_id"]
            and message["message"] == said[(message["sender"], message["step"])]
        )
        assert line["step"] >= message["step"] + 2
    ticks = [line for line in trace if line["agent_id"] == "Coordinator"]
    assert [line["time"] for line in ticks] == list(range(16))  # under star it ticks with its explorers
    # The trace shows the real route: up to the coordinator, then on to those it passed it to.
    assert {line["message_out"]["recipient"] for line in explorers if line["message_out"]} == {"Coordinator"}
    passed = {(r["sender"], r["message"], to) for line in ticks for r in line.get("relayed", ()) for to in r["to"]}
    assert {(m["sender"], m["message"], line["agent_id"]) for line, m in heard} <= passed


# ---- the system agent and tree ------------------------------------------------------------------


def test_groups_are_said_and_read_back_and_route_the_reports():
    groups = initial_groups(["Agent1", "Agent2", "Agent3"], ["Coordinator1", "Coordinator2"])
    assert groups == {"Agent1": "Coordinator1", "Agent2": "Coordinator1", "Agent3": "Coordinator2"}
    said = group_sentence(["Agent1", "Agent3"], (0, 19, 0, 39))
    assert read_group(said) == (["Agent1", "Agent3"], (0, 19, 0, 39)) and read_group("Heading to (1, 2, 0).") is None
    inner = InProcessStore()
    store = RoutedStore(inner, groups, "System")
    store.send_report("Coordinator", report("Agent1", 1, 1))
    store.send_message(Message("System", "Coordinator2", said))  # Agent1 moves to Coordinator2's group
    store.send_report("Coordinator", report("Agent1", 2, 2))
    assert [r.pose["position"][0] for r in inner.read_reports("Coordinator1")] == [1]
    assert [r.pose["position"][0] for r in inner.read_reports("Coordinator2")] == [2]
    assert store.read_mailbox("Coordinator2")[0].message == said and store.read_mailbox("Coordinator2") == []


def test_under_tree_a_message_goes_up_and_down_to_the_groups_it_concerns():
    said = "Heading to (5, 21, 0) facing east."  # near the border of the two halves of a 40 x 40 world
    left = OfflineCoordinator(Post(members=("Agent1", "Agent2"), relaying=True, system="System"))
    words = [("System", group_sentence(["Agent1", "Agent2"], (0, 39, 0, 19)))]  # the lower half
    context = coordinator_context("Coordinator1", EXPLORERS, [report("Agent1", 5, 18, said)], words)
    up = [m for m in left.direct(context).relayed if m.recipient == "System"]
    assert up == [Message("Agent1", "System", said, 1)]
    system = SystemAgent(
        "System", ["Coordinator1", "Coordinator2"], {"Agent1": "Coordinator1", "Agent3": "Coordinator2"}, True
    )
    system.direct(
        coordinator_context("System", ("Agent1", "Agent3"), positions={"Agent1": pose(5, 18), "Agent3": pose(5, 30)})
    )
    down = system.direct(coordinator_context("System", ("Agent1", "Agent3"), messages=[("Agent1", said)], step=2))
    assert [m for m in down.relayed if m.sender == "Agent1"] == [Message("Agent1", "Coordinator2", said, 2)]
    right = OfflineCoordinator(Post(members=("Agent3",), relaying=True, system="System"))
    context = coordinator_context("Coordinator2", EXPLORERS, [report("Agent3", 6, 24)], [("Agent1", said)])
    assert Message("Agent1", "Agent3", said, 1) in right.direct(context).relayed


def test_the_system_agent_moves_an_explorer_to_the_group_with_the_most_ground_left():
    system = SystemAgent("System", ["Coordinator1", "Coordinator2"], dict.fromkeys(EXPLORERS, "Coordinator1"), False)
    positions = {"Agent1": pose(2, 2), "Agent2": pose(5, 2), "Agent3": pose(5, 30)}
    first = system.direct(coordinator_context("System", EXPLORERS, positions=positions))
    # The world in two halves, y 0-19 and y 20-39; the explorers to the nearest half with room (two each).
    assert {m.recipient: read_group(m.message) for m in first.relayed} == {
        "Coordinator1": (["Agent1", "Agent2"], (0, 39, 0, 19)),
        "Coordinator2": (["Agent3"], (0, 39, 20, 39)),
    }
    covered = [("Agent1", "Covered x 0-39, y 0-19, level 0.")]  # the lower half is all seen
    moved = system.direct(coordinator_context("System", EXPLORERS, messages=covered, positions=positions, step=2))
    (directive,) = moved.directives
    assert directive["to"] == "Agent2" and directive["target"][1] >= 20  # to the unseen half
    assert directive["reason"].startswith("moved from Coordinator1's group to Coordinator2's")
    assert sentences.read_directive(directive["message"])[0] == directive["id"]
    assert {m.recipient: read_group(m.message)[0] for m in moved.relayed} == {
        "Coordinator1": ["Agent1"],
        "Coordinator2": ["Agent2", "Agent3"],
    }


def test_the_system_agents_directive_takes_priority_over_a_coordinators(tmp_path):
    world = world_file(
        tmp_path,
        "name: w\nsize: [6, 6]\nobjects: [{name: cup, position: [5, 5]}]\n"
        "agents: [{position: [0, 0], facing: north}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    policy = DirectedPolicy(OfflineExplorer(), "Coordinator1", ["System"], ["Coordinator1", "Coordinator2"])

    def step(number, sender=None, text=None):
        context = with_messages(
            context_for(perception, "Agent1", number),
            [{"sender": sender, "recipient": "Agent1", "message": text}] if text else [],
        )
        outcome = policy.decide("", context)
        perception.execute_action("Agent1", outcome.decision.action)
        return outcome

    assert step(1, "System", sentences.directive(1, (0, 4, 0, None))).directive["id"] == 1
    held = step(2, "Coordinator1", sentences.directive(1_000_001, (4, 0, 0, None)))
    assert held.directive["id"] == 1 and held.directive["status"] == "followed"  # the system agent's still
    number = 3
    while perception.get_agent_state("Agent1").cell != (0, 4, 0):
        assert step(number).directive["id"] == 1
        number += 1
        assert number < 12, "it never arrived"
    step(number)  # done: the explorer is free again
    taken = step(number + 1, "Coordinator2", sentences.directive(2_000_001, (4, 0, 0, None)))
    assert taken.directive["id"] == 2_000_001  # a coordinator's is taken once the system agent's is done


def test_a_tree_run_routes_along_the_hierarchy(tmp_path):
    trace, summary = run(tmp_path, agents=4, comm="tree", coordinator="offline", coordinators=2)
    members = {line["agent_id"] for line in trace}
    assert {"Coordinator1", "Coordinator2", "System"} <= members
    told = [m for line in trace if line["agent_id"].startswith("Coordinator") for m in line["messages_in"]]
    assert any(m["sender"] == "System" and read_group(m["message"]) for m in told)
    for line in trace:
        if line["agent_id"].startswith("Agent"):
            assert all(m["recipient"] == line["agent_id"] for m in line["messages_in"])  # no broadcast
    assert summary["decisions"] == 4 * 16  # the directors' ticks are no agent-steps
    said_up = {line["message_out"]["recipient"] for line in trace if line["message_out"]}
    assert said_up and said_up <= {"Coordinator1", "Coordinator2"}  # up to its group's coordinator
    relays = {line["agent_id"] for line in trace if line.get("relayed")}
    assert {"Coordinator1", "Coordinator2"} <= relays  # which pass the messages on, and say to whom
    assert set(summary["coordinator"]["ticks_by_member"]) == {"Coordinator1", "Coordinator2", "System"}


def test_under_tree_a_message_sent_up_names_the_coordinator_of_the_group_it_is_in_now():
    store = RoutedStore(InProcessStore(), {"Agent1": "Coordinator1", "Agent2": "Coordinator2"}, "System")
    store.send_message(Message("System", "Coordinator2", group_sentence(["Agent1"], (0, 9, 0, 9)), 3))
    record = StepRecord("Agent1", 4)
    record.message_out = {"recipient": "Coordinator1", "message": "Heading to (1, 1, 0) facing north."}
    store.commit_step([StepReport("Agent1", 4, record, [])])
    assert record.message_out["recipient"] == "Coordinator2"


# ---- what reading costs -------------------------------------------------------------------------


def test_the_summary_counts_the_messages_read_and_their_characters_per_agent_step(tmp_path):
    for topology in ("all", "none"):
        trace, summary = run(tmp_path, topology, comm=topology)
        explorers = [line for line in trace if line["agent_id"] in EXPLORERS]
        read = [m for line in explorers for m in line["messages_in"]]
        team = summary["team"]
        assert team["messages_read_per_agent_step"] == pytest.approx(len(read) / len(explorers), abs=1e-4)
        assert team["message_chars_read_per_agent_step"] == pytest.approx(
            sum(len(m["message"]) for m in read) / len(explorers), 3
        )
        assert (len(read) > 0) == (topology == "all")


# ---- recovering a realtime run ------------------------------------------------------------------


def test_recovering_a_realtime_run_replays_its_commit_order(tmp_path):
    _, summary = run(tmp_path, schedule="realtime", steps=10)
    (tmp_path / "run" / "summary.json").unlink()
    recovered = recover_summary(tmp_path / "run").summary
    for key in ("steps_to_objects", "steps_to_cells", "seconds_curve"):
        assert recovered["team"][key] == summary["team"][key]
    assert recovered["objects_discovered"] == summary["objects_discovered"]
