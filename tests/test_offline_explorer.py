"""The built-in explorer on its own: small worlds, contexts built as the Decision node builds them."""

import textwrap
from dataclasses import replace

import pytest

import explorer.policies.sentences as sentences
from explorer.policies.grid_map import GridMap
from explorer.policies.offline import OfflineExplorer
from explorer.team.store import InProcessStore
from nodes.decision_context import AgentSetup, DecisionContext, TeamContext, TeammatePoses, Teammates, View
from perception.actions import ACTIONS
from perception.base import Pose
from perception.mock import MockPerception
from perception.world import load_world


def world_file(tmp_path, text):
    path = tmp_path / "world.yaml"
    path.write_text(textwrap.dedent(text))
    return load_world(path)


def context_for(perception, agent_id, step, history=(), team_objects=(), comm=True, messages=()):
    world = perception.world
    observation = perception.observe(agent_id)
    return DecisionContext(
        team=TeamContext(
            agent_id=agent_id,
            members=tuple(perception._poses),
            step=step,
            max_steps=50,
            world=world.name,
            size=world.size,
            view_distance=world.view_distance,
            discoveries={name: {"finder": "Agent1", "step": 1, "cell": None} for name in team_objects},
        ),
        setup=AgentSetup(role="explorer", persona="", comm_enabled=comm, coordinator=None),
        view=View(
            pose=observation.pose,
            dead_reckoned=False,
            visible_objects=tuple(observation.visible_objects),
            object_cells=dict(observation.object_cells),
            caption=observation.caption,
            seen_cells=observation.seen_cells,
            seen_walls=observation.seen_walls,
            actions_unseen=tuple(observation.actions_unseen),
        ),
        teammates=Teammates(
            messages=tuple({"sender": sender, "recipient": "all", "message": text} for sender, text in messages),
            positions=TeammatePoses.of(
                {other: perception.get_agent_state(other) for other in perception._poses if other != agent_id}
            ),
        ),
        memories=(),
        recent_actions=tuple(history)[-5:],
        available_actions=ACTIONS,
    )


def with_messages(context, messages):
    """The context with these messages read ({sender, recipient, message}), in place of its own."""
    return replace(context, teammates=replace(context.teammates, messages=tuple(messages)))


def explore(perception, explorers, steps):
    """Run the explorers in lock-step; returns the step at which each object was first seen."""
    found, history = {}, {agent_id: [] for agent_id in explorers}
    for step in range(1, steps + 1):
        contexts = {a: context_for(perception, a, step, history[a], found) for a in explorers}
        for agent_id, explorer in explorers.items():
            for name in contexts[agent_id].view.visible_objects:
                found.setdefault(name, step)
            decision = explorer.choose(contexts[agent_id])
            result = perception.execute_action(agent_id, decision.action)
            history[agent_id].append({"step": step, "action": decision.action, "outcome": result.outcome, "detail": ""})
    return found


def test_it_answers_a_decision_that_costs_no_model_call(tmp_path):
    world = world_file(
        tmp_path, "name: w\nsize: [5, 5]\nobjects: [{name: cup, position: [4, 4]}]\nagents: [{position: [2, 2]}]\n"
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    outcome = OfflineExplorer().decide("prompt", context_for(perception, "Agent1", 1))
    assert outcome.decision.action in ACTIONS and outcome.decision.thinking
    assert outcome.model_calls == () and not outcome.parse_failure


def test_it_turns_to_scan_before_walking_off(tmp_path):
    # In the middle of an open room, turning shows more than walking ahead.
    world = world_file(
        tmp_path, "name: w\nsize: [9, 9]\nobjects: [{name: cup, position: [0, 0]}]\nagents: [{position: [4, 4]}]\n"
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    decision = OfflineExplorer().choose(context_for(perception, "Agent1", 1))
    assert decision.action in ("look_left", "look_right")


def test_it_never_tilts_for_nothing(tmp_path):
    world = world_file(
        tmp_path, "name: w\nsize: [6, 6]\nobjects: [{name: cup, position: [5, 5]}]\nagents: [{position: [0, 0]}]\n"
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=3)
    explorer = OfflineExplorer()
    history = []
    for step in range(1, 25):
        decision = explorer.choose(context_for(perception, "Agent1", step, history))
        assert decision.action not in ("tilt_left", "tilt_right")
        result = perception.execute_action("Agent1", decision.action)
        history.append({"step": step, "action": decision.action, "outcome": result.outcome, "detail": ""})


def test_ground_never_seen_counts_for_the_odds_that_it_is_free():
    # One free column and three walls seen: a column never seen is free at odds (1 + 1) / (1 + 3 + 2). Looking
    # a level up, the cell over the free column counts in full, the others at those odds.
    grid = GridMap()
    grid.learn_view((4, 3, 2), 3, Pose(0, 1, 0, "east"), [(0, 1, 0)], [(0, 0), (0, 2), (1, 0)])
    assert grid.free_odds == pytest.approx(1 / 3)
    worth, new = grid.gain((0, 1, 0, "east", 1))
    assert new > 1 and worth == pytest.approx(1 + (new - 1) / 3)


def test_it_heads_for_ground_it_has_not_seen(tmp_path):
    # A corridor: after looking west, the east end is what is left.
    world = world_file(
        tmp_path,
        "name: w\nsize: [15, 1]\nobjects: [{name: cup, position: [14, 0]}]\nagents: [{position: [7, 0], facing: west}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    found = explore(perception, {"Agent1": OfflineExplorer()}, steps=12)
    assert "cup" in found


@pytest.mark.parametrize(
    "teammate_x, teammate_facing, expected", [(3, "west", "look_right"), (11, "east", "look_left")]
)
def test_it_leaves_to_a_teammate_the_side_the_teammate_stands_in(tmp_path, teammate_x, teammate_facing, expected):
    # A corridor: the teammate stands in one half (its position is in the team's store), so Agent1 turns to the other.
    world = world_file(
        tmp_path,
        f"""\
        name: w
        size: [15, 1]
        objects: [{{name: cup, position: [14, 0]}}]
        agents: [{{position: [7, 0], facing: north}}, {{position: [{teammate_x}, 0], facing: {teammate_facing}}}]
        """,
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1", "Agent2"], seed=1)
    decision = OfflineExplorer().choose(context_for(perception, "Agent1", 1))
    assert decision.action == expected


def test_it_looks_up_where_the_world_has_height(tmp_path):
    world = world_file(
        tmp_path,
        "name: w\nsize: [3, 3, 2]\nobjects: [{name: kite, position: [1, 2, 1]}]\nagents: [{position: [1, 0], facing: north}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    found = explore(perception, {"Agent1": OfflineExplorer()}, steps=4)
    assert "kite" in found


def test_it_learns_walls_it_bumps_into(tmp_path):
    world = world_file(
        tmp_path, "name: w\nsize: [3, 3]\nobjects: [{name: cup, position: [2, 2]}]\nagents: [{position: [0, 0]}]\n"
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    explorer = OfflineExplorer()
    context = context_for(
        perception, "Agent1", 2, [{"step": 1, "action": "backward", "outcome": "blocked", "detail": ""}]
    )
    explorer.choose(context)
    assert explorer.map.walls == set()  # off the grid is not a wall
    explorer.choose(
        context_for(perception, "Agent1", 3, [{"step": 2, "action": "forward", "outcome": "blocked", "detail": ""}])
    )
    assert explorer.map.walls == set()  # a cell it has seen is free: something else blocked it
    walled = world_file(
        tmp_path,
        "name: w\nsize: [3, 3]\nwalls: [[1, 0]]\nobjects: [{name: cup, position: [2, 2]}]\n"
        "agents: [{position: [0, 0], facing: north}]\n",
    )
    perception = MockPerception(walled, InProcessStore(), ["Agent1"], seed=1)
    context = context_for(
        perception, "Agent1", 2, [{"step": 1, "action": "move_right", "outcome": "blocked", "detail": ""}]
    )
    assert (1, 0) not in context.view.seen_walls  # beside it, out of sight
    explorer = OfflineExplorer()
    explorer.choose(context)
    assert (1, 0) in explorer.map.walls


def test_it_leaves_what_it_found_to_the_teams_store(tmp_path):
    world = world_file(
        tmp_path,
        "name: w\nsize: [5, 5]\nobjects: [{name: cup, position: [2, 2]}, {name: pen, position: [2, 3]}]\nagents: [{position: [2, 0]}, {position: [0, 4]}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1", "Agent2"], seed=1)
    news = OfflineExplorer().choose(context_for(perception, "Agent1", 1)).message_to_others
    # Teammates see the team's finds, with their cells, in the store: a message would only repeat them.
    assert "cup" not in news and sentences.read_heading(news)
    assert OfflineExplorer().choose(context_for(perception, "Agent1", 1, comm=False)).message_to_others == ""


def test_asking_twice_gives_the_same_answer(tmp_path):
    world = world_file(
        tmp_path,
        "name: w\nsize: [7, 7]\nwalls: [[3, 3]]\nobjects: [{name: cup, position: [6, 6]}]\nagents: [{position: [0, 0]}, {position: [6, 0]}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1", "Agent2"], seed=1)
    explorer = OfflineExplorer()
    context = context_for(perception, "Agent1", 3)
    assert explorer.choose(context) == explorer.choose(context)
    assert OfflineExplorer().choose(context) == explorer.choose(context)


def play(perception, explorers, steps, comm=True):
    """A team in lock-step, as a run plays it: every agent decides on the same state, and reads what the
    others said at the step before. Returns what they said: [(step, sender, message)]."""
    found, history, said = {}, {agent_id: [] for agent_id in explorers}, []
    for step in range(1, steps + 1):
        heard = [(sender, text) for at, sender, text in said if at == step - 1]
        contexts = {
            agent_id: context_for(
                perception, agent_id, step, history[agent_id], found, comm, [h for h in heard if h[0] != agent_id]
            )
            for agent_id in explorers
        }
        decisions = {agent_id: explorer.choose(contexts[agent_id]) for agent_id, explorer in explorers.items()}
        for agent_id, decision in decisions.items():
            for name in contexts[agent_id].view.visible_objects:
                found.setdefault(name, step)
            if decision.message_to_others:
                said.append((step, agent_id, decision.message_to_others))
            result = perception.execute_action(agent_id, decision.action)
            history[agent_id].append({"step": step, "action": decision.action, "outcome": result.outcome, "detail": ""})
    return said


ROOMS = """\
    name: w
    size: [11, 9]
    walls: [[3, 0], [3, 1], [3, 2], [3, 4], [3, 5], [3, 6], [3, 8], [7, 0], [7, 1], [7, 3], [7, 4], [7, 5], [7, 7],
            [7, 8], [4, 4], [5, 4], [8, 4], [10, 4]]
    objects: [{name: cup, position: [9, 8]}, {name: pen, position: [5, 1]}, {name: key, position: [1, 7]}]
    agents: [{position: [0, 0], facing: north}, {position: [1, 0], facing: north}]
    """


def test_it_says_each_wall_once_and_talks_only_with_news(tmp_path):
    perception = MockPerception(world_file(tmp_path, ROOMS), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    said = play(perception, {"Agent1": OfflineExplorer(), "Agent2": OfflineExplorer()}, steps=30)
    for agent_id in ("Agent1", "Agent2"):
        walls = [
            (x, y)
            for _, sender, text in said
            if sender == agent_id
            for x0, x1, y0, y1 in sentences.read_walls(text)
            for x in range(x0, x1 + 1)
            for y in range(y0, y1 + 1)
        ]
        assert walls and len(walls) == len(set(walls))  # each wall it met said once, not each time it sees it
    assert len(said) <= 30  # of 60 agent-steps: news, not a running commentary
    assert not any(text.startswith("Found") for _, _, text in said)  # the team's store tells what was found
