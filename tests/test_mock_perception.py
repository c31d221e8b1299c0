"""The mock perception backend: actions, sight and placement."""

import pytest

from perception.actions import ACTIONS
from perception.base import FACINGS, EnvironmentInfo, Pose
from perception.mock import MockPerception
from perception.world import World, load_world
from tests.support.paths import WORLDS


def make_world(objects=(), walls=(), size=(7, 7, 1), starts=(), view_distance=3):
    width, depth, height = size
    return World("test", width, depth, height, frozenset(walls), dict(objects), tuple(starts), view_distance, 10)


def agent_at(pose, **world):
    """A backend with one agent, "a", standing at `pose`."""
    return MockPerception(make_world(starts=[pose], **world), None, ["a"], seed=0)


def visible(perception):
    return perception.get_visible_objects("a")


# Actions

ACTION_EFFECTS = {
    "forward": ("moved", {"y": 4}),
    "backward": ("moved", {"y": 2}),
    "move_left": ("moved", {"x": 2}),
    "move_right": ("moved", {"x": 4}),
    "move_up": ("moved", {"z": 2}),
    "move_down": ("moved", {"z": 0}),
    "look_left": ("turned", {"facing": "west"}),
    "look_right": ("turned", {"facing": "east"}),
    "look_up": ("turned", {"pitch": 1}),
    "look_down": ("turned", {"pitch": -1}),
    "tilt_left": ("turned", {"roll": -1}),
    "tilt_right": ("turned", {"roll": 1}),
}


def test_every_action_has_an_expected_effect():
    assert set(ACTION_EFFECTS) == set(ACTIONS)


@pytest.mark.parametrize("action", ACTIONS)
def test_action_effect_from_the_middle_facing_north(action):
    start = Pose(3, 3, 1, "north")
    perception = agent_at(start, size=(7, 7, 3))
    outcome, changes = ACTION_EFFECTS[action]
    result = perception.execute_action("a", action)
    assert (result.action, result.outcome) == (action, outcome)
    assert result.pose == start.moved(**changes)
    assert perception.get_agent_state("a") == result.pose


def test_move_detail_names_the_new_cell():
    result = agent_at(Pose(3, 3)).execute_action("a", "forward")
    assert result.detail == "moved to (3, 4, 0)"


@pytest.mark.parametrize(
    "facing, action, cell",
    [
        ("east", "forward", (4, 3)),
        ("east", "backward", (2, 3)),
        ("east", "move_left", (3, 4)),
        ("east", "move_right", (3, 2)),
        ("south", "forward", (3, 2)),
        ("south", "move_left", (4, 3)),
        ("west", "forward", (2, 3)),
        ("west", "move_right", (3, 4)),
    ],
)
def test_moves_follow_the_facing(facing, action, cell):
    result = agent_at(Pose(3, 3, 0, facing)).execute_action("a", action)
    assert (result.pose.x, result.pose.y) == cell
    assert result.pose.facing == facing


def test_turning_left_from_north_faces_west_and_four_right_turns_come_back():
    perception = agent_at(Pose(3, 3, 0, "north"))
    assert perception.execute_action("a", "look_left").pose.facing == "west"
    assert perception.execute_action("a", "look_left").pose.facing == "south"
    facings = [perception.execute_action("a", "look_right").pose.facing for _ in range(4)]
    assert facings == ["west", "north", "east", "south"]


def test_move_into_a_wall_is_blocked():
    start = Pose(3, 0, 0, "north")
    perception = agent_at(start, walls=[(3, 1)])
    result = perception.execute_action("a", "forward")
    assert (result.outcome, result.detail) == ("blocked", "blocked by a wall at (3, 1)")
    assert result.pose == start == perception.get_agent_state("a")


@pytest.mark.parametrize(
    "pose, action",
    [
        (Pose(0, 0, 0, "south"), "forward"),
        (Pose(0, 0, 0, "north"), "backward"),
        (Pose(0, 3, 0, "north"), "move_left"),
        (Pose(6, 3, 0, "north"), "move_right"),
        (Pose(3, 6, 0, "north"), "forward"),
        (Pose(3, 3, 0, "north"), "move_down"),
        (Pose(3, 3, 1, "north"), "move_up"),
    ],
)
def test_move_off_the_grid_is_blocked(pose, action):
    perception = agent_at(pose, size=(7, 7, 2))
    result = perception.execute_action("a", action)
    assert (result.outcome, result.detail) == ("blocked", "blocked: edge of the world")
    assert perception.get_agent_state("a") == pose


def test_moving_up_and_down_between_levels():
    perception = agent_at(Pose(3, 3), size=(7, 7, 3))
    assert [perception.execute_action("a", "move_up").outcome for _ in range(3)] == [
        "moved",
        "moved",
        "blocked",
    ]
    assert perception.get_agent_state("a").z == 2
    assert perception.execute_action("a", "move_down").pose.z == 1


@pytest.mark.parametrize(
    "action, angle, limit, detail",
    [
        ("look_up", "pitch", 1, "already looking fully up"),
        ("look_down", "pitch", -1, "already looking fully down"),
        ("tilt_left", "roll", -1, "already tilted fully left"),
        ("tilt_right", "roll", 1, "already tilted fully right"),
    ],
)
def test_head_movements_are_clamped(action, angle, limit, detail):
    perception = agent_at(Pose(3, 3))
    first = perception.execute_action("a", action)
    assert first.outcome == "turned" and getattr(first.pose, angle) == limit
    second = perception.execute_action("a", action)
    assert (second.outcome, second.detail) == ("blocked", detail)
    assert second.pose == first.pose == perception.get_agent_state("a")


def test_looking_back_level_after_looking_up():
    perception = agent_at(Pose(3, 3))
    perception.execute_action("a", "look_up")
    assert perception.execute_action("a", "look_down").pose.pitch == 0


@pytest.mark.parametrize("action", ["jump", "", None, "FORWARD"])
def test_unknown_action_is_unavailable_and_changes_nothing(action):
    start = Pose(3, 3)
    perception = agent_at(start)
    result = perception.execute_action("a", action)
    assert result.outcome == "unavailable"
    assert result.pose == start == perception.get_agent_state("a")


def test_unknown_agent_raises_key_error():
    perception = agent_at(Pose(3, 3))
    with pytest.raises(KeyError):
        perception.execute_action("nobody", "forward")
    with pytest.raises(KeyError):
        perception.get_agent_state("nobody")
    with pytest.raises(KeyError):
        perception.observe("nobody")


def test_agents_do_not_block_each_other():
    world = make_world(starts=[Pose(3, 3), Pose(3, 4)])
    perception = MockPerception(world, None, ["a", "b"], seed=0)
    assert perception.execute_action("a", "forward").pose.cell == (3, 4, 0)
    assert perception.get_agent_state("b").cell == (3, 4, 0)


# Sight (agent at (3, 1) facing north, view distance 3)

SEER = Pose(3, 1, 0, "north")


def test_object_two_cells_ahead_is_visible():
    assert visible(agent_at(SEER, objects={"lamp": (3, 3, 0)})) == ["lamp"]


def test_object_behind_is_not_visible():
    assert visible(agent_at(SEER, objects={"lamp": (3, 0, 0)})) == []


def test_object_outside_the_cone_is_not_visible():
    objects = {"inside": (4, 2, 0), "outside": (5, 2, 0), "beside": (2, 1, 0)}
    assert visible(agent_at(SEER, objects=objects)) == ["inside"]


def test_object_beyond_view_distance_is_not_visible():
    objects = {"near": (3, 4, 0), "far": (3, 5, 0)}
    assert visible(agent_at(SEER, objects=objects)) == ["near"]
    assert visible(agent_at(SEER, objects=objects, view_distance=4)) == ["near", "far"]


def test_own_cell_is_visible():
    perception = agent_at(SEER, objects={"rug": (3, 1, 0)})
    assert visible(perception) == ["rug"]
    assert (3, 1, 0) in perception.observe("a").seen_cells


def test_seen_cells_form_a_cone():
    perception = agent_at(SEER, view_distance=1)
    observation = perception.observe("a")
    assert observation.seen_cells == ((2, 2, 0), (3, 1, 0), (3, 2, 0), (4, 2, 0))
    assert len(agent_at(Pose(3, 3), view_distance=3).observe("a").seen_cells) == 1 + 3 + 5 + 7


def test_object_hidden_behind_a_wall_is_seen_after_walking_around():
    perception = agent_at(SEER, objects={"lamp": (3, 3, 0)}, walls=[(3, 2)])
    observation = perception.observe("a")
    assert observation.visible_objects == ()
    assert observation.seen_walls == ((3, 2),)
    assert (3, 3, 0) not in observation.seen_cells
    for action in ("move_right", "forward", "forward", "look_left"):
        assert perception.execute_action("a", action).outcome in ("moved", "turned")
    assert perception.get_agent_state("a") == Pose(4, 3, 0, "west")
    assert visible(perception) == ["lamp"]


def test_wall_is_never_a_seen_cell_and_hides_walls_behind_it():
    observation = agent_at(SEER, walls=[(3, 2), (3, 3)]).observe("a")
    assert observation.seen_walls == ((3, 2),)
    assert not {(3, 2, 0), (3, 3, 0), (3, 4, 0)} & set(observation.seen_cells)


def test_diagonal_sight_past_a_wall_corner():
    # A wall beside the agent does not hide the diagonal; two walls meeting
    # at the corner do.
    objects = {"lamp": (4, 2, 0)}
    assert visible(agent_at(SEER, objects=objects, walls=[(4, 1)])) == ["lamp"]
    assert visible(agent_at(SEER, objects=objects, walls=[(4, 1), (3, 2)])) == []


def test_objects_are_ordered_by_distance_then_name():
    objects = {"far": (3, 4, 0), "zebra": (4, 2, 0), "apple": (2, 2, 0), "near": (3, 2, 0)}
    assert visible(agent_at(SEER, objects=objects)) == ["near", "apple", "zebra", "far"]


def test_object_one_level_up_needs_looking_up_or_moving_up():
    perception = agent_at(SEER, objects={"box": (3, 3, 1)}, size=(7, 7, 2))
    assert visible(perception) == []
    perception.execute_action("a", "look_up")
    assert visible(perception) == ["box"]
    perception.execute_action("a", "look_down")
    perception.execute_action("a", "move_up")
    assert visible(perception) == ["box"]
    perception.execute_action("a", "look_down")
    assert visible(perception) == []


def test_looking_off_the_levels_sees_nothing():
    perception = agent_at(SEER, objects={"rug": (3, 1, 0)}, walls=[(3, 2)])
    perception.execute_action("a", "look_down")
    observation = perception.observe("a")
    assert (observation.visible_objects, observation.seen_cells, observation.seen_walls) == ((), (), ())
    assert observation.caption == "I see nothing notable."


def test_roll_does_not_change_what_is_seen():
    perception = agent_at(SEER, objects={"lamp": (3, 3, 0), "rug": (4, 2, 0)}, walls=[(2, 3)])

    def sight():
        observation = perception.observe("a")
        return observation.visible_objects, observation.seen_cells, observation.seen_walls

    level = sight()
    assert level[0] == ("rug", "lamp") and level[2] == ((2, 3),)
    assert perception.execute_action("a", "tilt_left").pose.roll == -1
    assert sight() == level
    perception.execute_action("a", "tilt_right")
    assert perception.execute_action("a", "tilt_right").pose.roll == 1
    assert sight() == level


def test_visible_objects_from_a_given_pose():
    perception = agent_at(SEER, objects={"lamp": (3, 0, 0)})
    assert perception.get_visible_objects("a") == []
    assert perception.get_visible_objects("a", Pose(3, 1, 0, "south")) == ["lamp"]
    assert perception.get_agent_state("a") == SEER


# Observations


def test_observation_carries_pose_objects_and_caption():
    perception = agent_at(SEER, objects={"sofa": (3, 3, 0), "lamp": (3, 2, 0)})
    observation = perception.observe("a")
    assert observation.pose == SEER
    assert observation.visible_objects == ("lamp", "sofa")
    assert observation.caption == "I see lamp at (3, 2, 0), sofa at (3, 3, 0)."
    assert observation.object_cells == {"lamp": (3, 2, 0), "sofa": (3, 3, 0)}


@pytest.mark.parametrize(
    "wall, caption",
    [
        ((3, 2), "I see nothing notable. A wall is 1 cell ahead."),
        ((3, 3), "I see nothing notable. A wall is 2 cells ahead."),
        ((3, 5), "I see nothing notable."),  # beyond view distance
        ((4, 3), "I see nothing notable."),  # not straight ahead
    ],
)
def test_caption_tells_a_wall_straight_ahead(wall, caption):
    assert agent_at(SEER, walls=[wall]).observe("a").caption == caption


def test_caption_with_objects_and_a_wall():
    perception = agent_at(SEER, objects={"lamp": (3, 2, 0)}, walls=[(3, 4)])
    assert perception.observe("a").caption == "I see lamp at (3, 2, 0). A wall is 3 cells ahead."


# Placement and world facts


def office():
    return load_world(WORLDS / "office.yaml")


def poses(perception, agent_ids):
    return tuple(perception.get_agent_state(agent_id) for agent_id in agent_ids)


def test_placement_is_deterministic_per_seed():
    agents = ["a", "b", "c"]
    first = poses(MockPerception(office(), None, agents, seed=5), agents)
    again = poses(MockPerception(office(), None, agents, seed=5), agents)
    assert first == again
    placements = {poses(MockPerception(office(), None, agents, seed), agents) for seed in range(10)}
    assert len(placements) >= 8


def test_placed_agents_stand_apart_on_free_ground():
    world = office()
    agents = [f"agent_{n}" for n in range(6)]
    placed = poses(MockPerception(world, None, agents, seed=1), agents)
    cells = [pose.cell for pose in placed]
    assert len(set(cells)) == len(cells)
    assert all(world.is_free(*cell) and cell[2] == 0 for cell in cells)
    assert all(pose.facing in FACINGS and (pose.pitch, pose.roll) == (0, 0) for pose in placed)


def test_given_starts_come_first_then_the_seed_places_the_rest():
    world = load_world(WORLDS / "apartment.yaml")
    agents = ["a", "b", "c"]
    placed = poses(MockPerception(world, None, agents, seed=3), agents)
    assert placed[:2] == world.agent_starts
    assert placed[2].cell not in {start.cell for start in world.agent_starts}
    assert world.is_free(*placed[2].cell)


def test_placed_agents_take_the_last_free_cells():
    world = make_world(size=(3, 1, 1))
    agents = ["a", "b", "c"]
    for seed in range(10):
        cells = {pose.cell for pose in poses(MockPerception(world, None, agents, seed), agents)}
        assert cells == {(0, 0, 0), (1, 0, 0), (2, 0, 0)}


def test_more_agents_than_free_cells_share_cells():
    world = make_world(size=(2, 1, 1))
    agents = ["a", "b", "c", "d"]
    cells = [pose.cell for pose in poses(MockPerception(world, None, agents, seed=0), agents)]
    assert set(cells) == {(0, 0, 0), (1, 0, 0)}


def test_environment_info_and_store():
    store = object()
    perception = MockPerception(load_world(WORLDS / "apartment.yaml"), store, ["a"], seed=0)
    assert perception.store is store
    assert perception.get_environment_info() == EnvironmentInfo(
        name="apartment", size=(12, 9, 1), view_distance=3, max_steps=40, total_objects=12, total_cells=12 * 9 - 17
    )
    assert perception.available_actions("a") == ACTIONS
