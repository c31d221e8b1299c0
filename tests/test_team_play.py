"""Playing as a team: the sentences teammates exchange, claims, the no-comm ablation, and goal-level decisions."""

from dataclasses import replace

import pytest

import explorer.policies.sentences as sentences
from explorer.model.client import Reply
from explorer.policies.goals import AROUND, REASK_STEPS, GoalPolicy
from explorer.policies.offline import OfflineExplorer
from explorer.policies.replies import ReplyError, parse_goal_decision
from explorer.team.store import InProcessStore
from nodes.decision_context import TeammatePoses
from nodes.interfaces import PLANNER
from perception.base import Pose
from perception.mock import MockPerception
from tests.test_offline_explorer import context_for, with_messages, world_file

ACTIONS = ["forward", "look_left"]


# ---- the sentences ------------------------------------------------------------------------------


def test_a_heading_reads_back_as_the_pose_it_names():
    text = sentences.heading((9, 2, 0, "east", 0))
    assert text == "Heading to (9, 2, 0) facing east."
    assert sentences.read_heading(text) == (9, 2, 0, "east")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I'm heading towards (4, 7) now", (4, 7, 0, None)),
        ("Found a lamp. heading to ( 3 , 1 , 2 ), looking NORTH", (3, 1, 2, "north")),
        ("Heading to (1, 1, 0). Then heading to (5, 5, 0) facing west.", (5, 5, 0, "west")),
        ("I am going somewhere", None),
    ],
)
def test_headings_written_by_a_model_are_read_too(text, expected):
    assert sentences.read_heading(text) == expected


def test_covered_ground_is_said_as_whole_rectangles_and_never_more():
    seen = {(x, y, 0) for x in range(6) for y in range(3)} | {(0, 3, 0), (1, 3, 0)} | {(9, 9, 0)}
    text, cells = sentences.covered(seen)
    assert text.startswith("Covered x 0-5, y 0-2, level 0.")
    read = set()
    for x0, x1, y0, y1, level in sentences.read_covered(text):
        read |= {(x, y, level) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
    assert read == cells and read <= seen  # a reader never takes unseen ground for covered
    assert sentences.covered({(9, 9, 0)}) == ("", set())  # too small to be worth the words


def test_walls_are_said_as_rectangles_single_walls_too_and_read_back():
    met = {(3, y) for y in range(5)} | {(9, 9)}
    text, cells = sentences.walls(met)
    assert text == "Walls x 3-3, y 0-4. Walls x 9-9, y 9-9."
    assert cells == met and list(sentences.read_walls(text)) == [(3, 3, 0, 4), (9, 9, 9, 9)]
    assert list(sentences.read_walls("A wall x 4 to 2, y 7-7 here")) == [(2, 4, 7, 7)]
    assert list(sentences.read_walls("I saw a wall x 2 to 4, y 7.")) == []  # a box needs both ranges


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Kitchen at x 3-7, y 0-4: no laptop.", [(3, 7, 0, 4, None)]),
        ("bathroom at x 9 to 8, y 1-2: No toothbrush, no soap", [(8, 9, 1, 2, None)]),
        ("Kitchen at x 3-7, y 0-4: the laptop is here.", []),  # not searched out: nothing covered
    ],
)
def test_a_room_a_model_says_it_searched_reads_as_covered_on_every_level(text, expected):
    assert list(sentences.read_covered(text)) == expected


def test_a_number_no_grid_could_hold_is_read_as_nothing_not_an_error():
    huge = "9" * 5000  # int() refuses a string of more than 4,300 digits
    assert list(sentences.read_covered(f"Covered x {huge}-1, y 0-1. Kitchen at x 0-{huge}, y 0-1: no cup.")) == []
    assert sentences.read_heading(f"Heading to ({huge}, 1, 0).") is None
    assert list(sentences.read_walls(f"Walls x 0-0, y {huge}-1.")) == []
    assert sentences.read_directive(f"Directive {huge}: go to (1, 1, 0).") is None


# ---- claims and the no-comm ablation ----------------------------------------------------------

CROSSROADS = """\
    name: w
    size: [15, 1]
    objects: [{name: cup, position: [14, 0]}]
    agents: [{position: [7, 0], facing: north}, {position: [7, 0], facing: north}]
    """


def test_it_does_not_head_for_ground_a_teammate_has_claimed(tmp_path):
    # Two agents on the same cell of a corridor; Agent1 (first in the team's order) says it is
    # heading west, so Agent2 takes the east, whichever way it would have turned on its own.
    perception = MockPerception(world_file(tmp_path, CROSSROADS), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    turns = {}
    for claim, heading in (("west", (3, 0, 0, "west", 0)), ("east", (11, 0, 0, "east", 0))):
        said = [("Agent1", sentences.heading(heading))]
        turns[claim] = OfflineExplorer().choose(context_for(perception, "Agent2", 2, messages=said)).action
    assert turns == {"west": "look_right", "east": "look_left"}


BEHIND = """\
    name: w
    size: [12, 3]
    walls: [[1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [6, 1], [7, 1], [8, 1], [9, 1], [10, 1], [11, 1]]
    objects: [{name: cup, position: [3, 2]}]
    agents: [{position: [0, 0], facing: east}, {position: [1, 0], facing: east}]
    """


@pytest.mark.parametrize("comm", [True, False])
def test_it_does_not_follow_a_teammate_for_what_the_teammate_stands_looking_at(tmp_path, comm):
    # Agent2 stands one cell ahead in the corridor, looking down it: Agent1 looks through the door beside it.
    perception = MockPerception(world_file(tmp_path, BEHIND), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    assert OfflineExplorer().choose(context_for(perception, "Agent1", 1, comm=comm)).action == "look_left"


@pytest.mark.parametrize("shown_by", ["view", "heading"])
@pytest.mark.parametrize(("me", "teammate", "keeps"), [("Agent1", "Agent2", True), ("Agent2", "Agent1", False)])
def test_of_two_teammates_the_one_after_in_the_teams_order_gives_way(tmp_path, me, teammate, keeps, shown_by):
    # Mid-corridor, it turns to one end; then the teammate, on its cell, already looks that way (its pose in
    # the store) or says it heads there. The first in the team's order keeps its goal and the other gives
    # way, in what it leaves the teammate and in the split of the ground, so that they never both turn.
    perception = MockPerception(world_file(tmp_path, CROSSROADS), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    explorer = OfflineExplorer()
    alone = context_for(perception, me, 1)
    first = explorer.choose(replace(alone, teammates=replace(alone.teammates, positions=TeammatePoses({})))).action
    east = first == "look_right"
    if shown_by == "view":
        later = context_for(perception, me, 2)
        later = replace(
            later,
            teammates=replace(
                later.teammates, positions=TeammatePoses.of({teammate: Pose(7, 0, 0, "east" if east else "west")})
            ),
        )
    else:
        heading = (10, 0, 0, "east", 0) if east else (4, 0, 0, "west", 0)
        later = context_for(perception, me, 2, messages=[(teammate, sentences.heading(heading))])
    then = explorer.choose(later).action
    assert {first, then} <= {"look_left", "look_right"}
    assert (then == first) == keeps


def test_it_learns_ground_a_teammate_reports_as_covered(tmp_path):
    perception = MockPerception(world_file(tmp_path, CROSSROADS), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    explorer = OfflineExplorer()
    explorer.choose(context_for(perception, "Agent2", 2, messages=[("Agent1", "Covered x 0-6, y 0-0, level 0.")]))
    assert {(x, 0, 0) for x in range(7)} <= explorer.map.teammates_ground.cells()
    assert explorer.choose(context_for(perception, "Agent2", 2)).action == "look_right"  # east is what is left


def test_it_leaves_a_room_a_model_teammate_says_it_searched(tmp_path):
    perception = MockPerception(world_file(tmp_path, CROSSROADS), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    explorer = OfflineExplorer()
    said = [("Agent1", "Storeroom at x 0-6, y 0-0: no cup.")]
    explorer.choose(context_for(perception, "Agent2", 2, messages=said))
    assert {(x, 0, 0) for x in range(7)} <= explorer.map.teammates_ground.cells()
    assert explorer.choose(context_for(perception, "Agent2", 2)).action == "look_right"  # east is what is left


def test_a_goal_a_teammate_gives_up_is_not_taken_for_covered(tmp_path):
    # Agent1 heads west, then says it heads east instead: it may never have looked west (its goal may have
    # been behind a wall), so the west is still ground to see.
    perception = MockPerception(world_file(tmp_path, CROSSROADS), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    explorer = OfflineExplorer()
    for step, heading in ((2, (3, 0, 0, "west", 0)), (3, (11, 0, 0, "east", 0))):
        explorer.choose(context_for(perception, "Agent2", step, messages=[("Agent1", sentences.heading(heading))]))
    assert explorer.map.teammates_ground.cells() == set()
    assert explorer.claims == {"Agent1": (11, 0, 0, "east", 0)}


def test_it_learns_walls_a_teammate_met_but_not_over_ground_it_saw_open(tmp_path):
    perception = MockPerception(world_file(tmp_path, CROSSROADS), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    explorer = OfflineExplorer()
    explorer.choose(context_for(perception, "Agent2", 2, messages=[("Agent1", "Walls x -5-99, y 0-0.")]))
    assert (0, 0) in explorer.map.walls and (7, 0) not in explorer.map.walls  # it stands on (7, 0)


def test_it_says_the_walls_it_met_but_not_those_a_teammate_said(tmp_path):
    world = world_file(
        tmp_path,
        """\
        name: w
        size: [9, 3]
        walls: [[2, 0], [2, 2], [5, 0], [5, 1], [5, 2]]
        objects: [{name: cup, position: [8, 2]}]
        agents: [{position: [0, 1], facing: east}, {position: [8, 0], facing: west}]
        """,
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1", "Agent2"], seed=1)
    said = OfflineExplorer().choose(context_for(perception, "Agent1", 1)).message_to_others
    assert list(sentences.read_walls(said)) == [(2, 2, 0, 0), (2, 2, 2, 2)]
    heard = [("Agent2", "Walls x 2-2, y 0-0.")]
    said = OfflineExplorer().choose(context_for(perception, "Agent1", 1, messages=heard)).message_to_others
    assert list(sentences.read_walls(said)) == [(2, 2, 2, 2)]


def test_without_messages_claims_change_nothing(tmp_path):
    # --no-comm: the Communication node hands the decision no messages, and the explorer sends none.
    perception = MockPerception(world_file(tmp_path, CROSSROADS), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    alone = OfflineExplorer().choose(context_for(perception, "Agent2", 2, comm=False))
    assert alone.message_to_others == ""
    # Positions stay shared without messages: a teammate standing west still sends Agent2 east.
    perception = MockPerception(
        world_file(
            tmp_path, CROSSROADS.replace("{position: [7, 0], facing: north}]", "{position: [4, 0], facing: west}]")
        ),
        InProcessStore(),
        ["Agent2", "Agent1"],
        seed=1,
    )
    assert OfflineExplorer().choose(context_for(perception, "Agent2", 2, comm=False)).action == "look_right"


def test_it_announces_a_new_goal_once_with_the_ground_it_covered(tmp_path):
    world = world_file(
        tmp_path,
        "name: w\nsize: [9, 9]\nobjects: [{name: cup, position: [8, 8]}]\nagents: [{position: [0, 0], facing: east}, {position: [8, 0]}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1", "Agent2"], seed=1)
    explorer = OfflineExplorer()
    first = explorer.choose(context_for(perception, "Agent1", 1)).message_to_others
    assert sentences.read_heading(first) and sentences.read_covered(first)
    perception.execute_action("Agent1", explorer.choose(context_for(perception, "Agent1", 1)).action)
    assert sentences.read_heading(explorer.choose(context_for(perception, "Agent1", 2)).message_to_others) is None


# ---- goal-level decisions ---------------------------------------------------------------------


def test_a_reply_names_a_goal_or_an_action_which_overrides_it():
    decision, goal = parse_goal_decision("```yaml\ngoal: G3\nreason: the far room\n```", ACTIONS, 4)
    assert goal == 3 and decision.reason == "the far room" and decision.action == ""
    assert parse_goal_decision("goal: 2", ACTIONS, 4)[1] == 2
    decision, goal = parse_goal_decision("goal: G1\naction: Move Forward", ACTIONS, 4)
    assert goal is None and decision.action == "forward"


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("goal: G5", "unknown goal 'G5'"),
        ("goal: the kitchen", "unknown goal"),
        ("thinking: hmm", "neither a `goal` nor an `action`"),
    ],
)
def test_a_goal_that_does_not_exist_is_a_rejected_reply(reply, problem):
    with pytest.raises(ReplyError, match=problem):
        parse_goal_decision(reply, ACTIONS, 4)


class ScriptedModel:
    """The model as GoalPolicy sees it: answers in turn, keeping each prompt."""

    def __init__(self, *answers):
        self.answers, self.prompts = list(answers), []

    def __call__(self, prompt):
        self.prompts.append(prompt)
        text = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return Reply(text=text, model="scripted")


def walk(perception, policy, steps, agent_id="Agent1", messages=None):
    """Lock-step for one agent with the given policy; returns each step's outcome."""
    outcomes, history = [], []
    for step in range(1, steps + 1):
        context = context_for(perception, agent_id, step, history, messages=(messages or {}).get(step, ()))
        heard = context.teammates.messages
        context = with_messages(
            context, [dict(m, recipient=agent_id) if m["message"].startswith("@") else m for m in heard]
        )
        outcome = policy.decide("unused", context)
        action = outcome.decision.action if outcome.decision else "look_right"
        result = perception.execute_action(agent_id, action)
        history.append({"step": step, "action": action, "outcome": result.outcome, "detail": ""})
        outcomes.append(outcome)
    return outcomes


OPEN_ROOM = (
    "name: w\nsize: [12, 12]\nobjects: [{name: cup, position: [11, 11]}]\nagents: [{position: [0, 0], facing: east}]\n"
)


def test_the_planner_walks_to_the_chosen_goal_and_asks_again_when_it_is_reached(tmp_path):
    perception = MockPerception(world_file(tmp_path, OPEN_ROOM), InProcessStore(), ["Agent1"], seed=1)
    model = ScriptedModel("goal: G1")
    policy = GoalPolicy("scripted", model)
    outcomes = walk(perception, policy, 12)
    asked = [o for o in outcomes if o.decided_by != PLANNER]
    walked = [o for o in outcomes if o.decided_by == PLANNER]
    assert len(asked) == len(model.prompts) and walked
    assert "- G1: look" in model.prompts[0] and "steps away" in model.prompts[0] and "`goal`:" in model.prompts[0]
    for outcome in walked:
        assert outcome.prompt == "" and outcome.model_calls == () and outcome.decision.action
    # Asked again only once the goal was reached (or had little left to show), or REASK_STEPS steps on:
    # each call's notes say why.
    reasons = [note for o in asked[1:] for note in o.notes]
    expected = ("goal reached", "goal no longer worth", f"{REASK_STEPS} steps since")
    assert reasons and all(note.startswith(expected) for note in reasons), reasons


def test_an_object_coming_into_sight_does_not_wake_the_model(tmp_path):
    world = world_file(
        tmp_path,
        "name: w\nsize: [12, 3]\nobjects: [{name: cup, position: [6, 1]}]\nagents: [{position: [0, 1], facing: east}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    model = ScriptedModel("goal: G1")
    policy = GoalPolicy("scripted", model)
    outcomes = walk(perception, policy, 8)
    assert (6, 1, 0) in policy.explorer.map.seen  # the cup came into sight on the way
    reasons = [note.split("; chose")[0] for o in outcomes for note in o.notes]
    assert reasons and set(reasons) <= {"no goal", "goal reached, and looked around there"}, reasons


def test_an_unreachable_goal_is_dropped_and_the_model_asked_again(tmp_path):
    # The goal lies behind a wall not yet seen: once met, the planner finds no way and asks.
    world = world_file(
        tmp_path,
        "name: w\nsize: [7, 3]\nwalls: [[3, 0], [3, 1], [3, 2]]\nobjects: [{name: cup, position: [0, 2]}]\nagents: [{position: [1, 1], facing: west}]\n",
    )
    perception = MockPerception(world, InProcessStore(), ["Agent1"], seed=1)
    policy = GoalPolicy("scripted", ScriptedModel("goal: G1"))
    context = context_for(perception, "Agent1", 1)
    policy.decide("unused", context)
    policy.goal = (5, 1, 0, "east", 0)  # chosen while the wall was unknown
    policy.explorer.map.add_wall((3, 0)), policy.explorer.map.add_wall((3, 1)), policy.explorer.map.add_wall((3, 2))
    outcome = policy.decide("unused", context_for(perception, "Agent1", 2))
    assert outcome.decided_by != PLANNER and any("goal unreachable" in note for note in outcome.notes)


def test_a_teammate_writing_to_the_agent_or_ten_steps_ask_the_model_again(tmp_path):
    perception = MockPerception(
        world_file(tmp_path, OPEN_ROOM.replace("[12, 12]", "[40, 40]")), InProcessStore(), ["Agent1"], seed=1
    )
    model = ScriptedModel("goal: G1")
    outcomes = walk(perception, GoalPolicy("scripted", model), 3, messages={3: [("Agent2", "@Agent1 come north")]})
    assert any("Agent2 wrote to me" in note for note in outcomes[2].notes)
    # The agent stands still with a goal far off: the planner walks on, until REASK_STEPS have passed.
    policy = GoalPolicy("scripted", ScriptedModel("goal: G1"))
    policy.decide("unused", context_for(perception, "Agent1", 1))
    assert policy.goal != (0, 0, 0, "east", 0)  # it stands where it started: the goal is still ahead
    assert policy.decide("unused", context_for(perception, "Agent1", REASK_STEPS)).decided_by == PLANNER
    woken = policy.decide("unused", context_for(perception, "Agent1", REASK_STEPS + 1))
    assert any(f"{REASK_STEPS} steps since I was last asked" in note for note in woken.notes)


def test_a_bad_goal_is_re_asked_once_then_the_agent_scans(tmp_path):
    perception = MockPerception(world_file(tmp_path, OPEN_ROOM), InProcessStore(), ["Agent1"], seed=1)
    model = ScriptedModel("goal: G9")
    outcome = GoalPolicy("scripted", model).decide("unused", context_for(perception, "Agent1", 1))
    assert outcome.decision is None and outcome.parse_failure and len(model.prompts) == 2
    assert "unknown goal 'G9'" in model.prompts[1] and "a `goal` that is one of G1" in model.prompts[1]


def test_at_its_goal_the_agent_looks_around_before_asking_again(tmp_path):
    perception = MockPerception(world_file(tmp_path, OPEN_ROOM), InProcessStore(), ["Agent1"], seed=1)
    model = ScriptedModel("goal: G1")
    policy = GoalPolicy("scripted", model)
    policy.decide("unused", context_for(perception, "Agent1", 1))
    policy.goal = (0, 0, 0, "east", 0)  # where it stands: reached, with unseen ground just around it
    outcome = policy.decide("unused", context_for(perception, "Agent1", 2))
    assert outcome.decided_by == PLANNER and len(model.prompts) == 1
    assert policy.goal is not None and sum(abs(a - b) for a, b in zip(policy.goal[:3], (0, 0, 0))) <= AROUND


def test_of_two_teammates_heading_for_the_same_ground_one_is_asked_again_once(tmp_path):
    """The one nearer the goal keeps it, the first by name where both are as near: here Agent1."""
    both_at_the_corner = OPEN_ROOM.replace("agents: [", "agents: [{position: [0, 0], facing: east}, ")
    perception = MockPerception(world_file(tmp_path, both_at_the_corner), InProcessStore(), ["Agent1", "Agent2"], 1)
    policies = {agent: GoalPolicy("scripted", ScriptedModel("goal: G1")) for agent in ("Agent1", "Agent2")}
    for agent, policy in policies.items():
        policy.decide("unused", context_for(perception, agent, 1))
    assert policies["Agent1"].goal == policies["Agent2"].goal
    heard = {"Agent1": [("Agent2", sentences.heading(policies["Agent2"].goal))]}
    heard["Agent2"] = [("Agent1", sentences.heading(policies["Agent1"].goal))]
    kept = policies["Agent1"].decide("unused", context_for(perception, "Agent1", 2, messages=heard["Agent1"]))
    woken = policies["Agent2"].decide("unused", context_for(perception, "Agent2", 2, messages=heard["Agent2"]))
    assert kept.decided_by == PLANNER
    assert woken.decided_by != PLANNER and any("Agent1 is heading for my goal" in note for note in woken.notes)
    later = policies["Agent2"].decide("unused", context_for(perception, "Agent2", 3))
    assert not any("heading for my goal" in note for note in later.notes)
