"""The live console's team map: what the team knows, each agent where it is, in an 80x24 terminal."""

import pytest
from rich.console import Console

from explorer.cli.console import RunConsole
from explorer.report.text_map import TextMap
from explorer.team.store import InProcessStore
from perception.mock import MockPerception
from perception.world import SHIPPED_WORLDS, load_world

AGENTS = [f"Agent{i}" for i in range(1, 5)]


def committed_step(perception, agent_id, step, action="forward"):
    """A trace line as the commit hands it to the console: what the agent saw, and where its action took it."""
    observation = perception.observe(agent_id)
    result = perception.execute_action(agent_id, action)
    return {
        "agent_id": agent_id,
        "step": step,
        "seen_cells": [list(c) for c in observation.seen_cells],
        "seen_walls": [list(c) for c in observation.seen_walls],
        "object_cells": dict(observation.object_cells),
        "new_objects": list(observation.visible_objects),
        "action": action,
        "result": {"outcome": result.outcome, "pose": result.pose.to_dict()},
    }


def screen(console_view):
    console = Console(width=80, height=24, markup=False, force_terminal=False)
    with console.capture() as captured:
        console.print(console_view)
    return captured.get().splitlines()


@pytest.mark.parametrize("world_file", sorted(SHIPPED_WORLDS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_world_fits_an_80x24_terminal_beside_the_table(world_file):
    world = load_world(world_file)
    perception = MockPerception(world, InProcessStore(), AGENTS, seed=3)
    console = RunConsole(AGENTS, 10, len(world.objects), 0, world.size[:2])
    console.console = Console(width=80, height=24, markup=False, force_terminal=False)
    for step in range(1, 4):
        console.step_committed([committed_step(perception, a, step) for a in AGENTS], [], True)
    lines = screen(console._view())
    assert max(len(line) for line in lines) <= 80 and len(lines) <= 24
    assert "Team map" in lines[0]  # beside the table, not below it
    for index, agent_id in enumerate(AGENTS, 1):
        pose = perception.get_agent_state(agent_id)
        assert f"{index}{'^>v<'[['north', 'east', 'south', 'west'].index(pose.facing)]}" in "\n".join(lines)


def test_the_map_draws_what_was_seen_met_and_found_and_crops_around_the_team():
    live = TextMap(30, 20, ["Agent1", "Agent2"])
    live.add(
        {
            "agent_id": "Agent1",
            "seen_cells": [[20, 10, 0], [21, 10, 0]],
            "seen_walls": [[22, 10]],
            "new_objects": ["lamp"],
            "object_cells": {"lamp": [21, 10, 0]},
            "result": {"pose": {"position": [20, 11, 0], "facing": "east"}},
        }
    )
    live.add(
        {
            "agent_id": "Agent2",
            "seen_cells": [],
            "seen_walls": [],
            "result": {"pose": {"position": [22, 12, 0], "facing": "west"}},
        }
    )
    rows = live.render(columns=10, rows=5).plain.split("\n")
    assert len(rows) == 5 and all(len(row) == 20 for row in rows)  # cropped: 10 cells of 2 characters
    # x 16-25 and y 13 down to 9, around the team: y=12 holds Agent2, y=11 Agent1, y=10 the ground, find and wall.
    assert rows[1] == " " * 12 + "2<" + " " * 6
    assert rows[2] == " " * 8 + "1>" + " " * 10
    assert rows[3] == " " * 8 + ". * ##" + " " * 6
    assert rows[0].strip() == rows[4].strip() == ""


def test_without_a_map_the_table_gives_the_whole_pose():
    console = RunConsole(["Agent1"], 5, None, 0)  # game mode: no grid to draw
    pose = {"position": [1, 2, 0], "facing": "east", "pitch": 1, "roll": 0}
    console.step_committed(
        [{"agent_id": "Agent1", "step": 1, "action": "look_up", "result": {"outcome": "turned", "pose": pose}}],
        [],
        True,
    )
    text = "\n".join(screen(console._view()))
    assert "(1, 2, 0) facing east, pitch +1" in text and "Team map" not in text
