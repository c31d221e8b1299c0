"""A team's steps cost each agent the same whatever the team's size: what was made cheaper must decide the same.

The built-in explorer reckons with its teammates each step (where they stand and look, where they said they
are heading); the schedule takes every agent's hand-in; the prompt shows the nearest teammates. Those were
made cheaper in a large team without changing a decision: a team's decisions are pinned here
as they were before, for an explorer that reckons with every teammate. In a team larger than NEIGHBOURS + 1 it
reckons with its NEIGHBOURS nearest only, and decides as if the others were not there.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import replace

import pytest

from explorer.config.run_config import RunConfig
from explorer.policies import offline
from explorer.policies.grid_map import GridMap, cell_distance
from explorer.policies.offline import NEIGHBOURS, OfflineExplorer
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from explorer.team.store import InProcessStore
from explorer.testing.hash_embedder import HashEmbedder
from nodes.decision_context import TeammatePoses
from perception.base import FACINGS, Pose
from perception.families.generate import generated_mapping
from perception.geometry import ViewCone
from perception.mock import MockPerception
from perception.world import world_from_mapping
from tests.test_offline_explorer import context_for, with_messages

DECIDED = ("agent_id", "step", "pose", "action", "message_out")  # what a step decided, whatever the trace's form
# The decisions of 24 offline agents, 6 steps, on a cluttered 30 x 30 hall, as the explorer made them before its
# per-agent costs were made flat: each agent's step, pose, action and message.
PINNED = "701ce25ed6db2781ec63a22bf0b304bdc5dfb674981b4c601c524de687388bb2"


def decisions(trace):
    return [[line[field] for field in DECIDED] for line in trace]


def test_a_large_teams_decisions_are_as_they_were_before_its_per_agent_costs_were_made_flat(tmp_path, monkeypatch):
    monkeypatch.setattr(offline, "NEIGHBOURS", 23)  # every teammate, as before the explorer's neighbours
    config = RunConfig.of(
        world="gen:hall?size=30x30", agents=24, steps=6, seed=3, run_dir=tmp_path / "run", verbosity=-1
    )
    ExplorationRun(config.check(), embedder=HashEmbedder()).execute()
    steps = decisions(TraceLines(tmp_path / "run" / "trace.jsonl"))
    assert len(steps) == 24 * 6
    assert sum(1 for step in steps if step[-1]) > 10  # the teammates talk: their claims count
    assert hashlib.sha256(json.dumps(steps, sort_keys=True).encode()).hexdigest() == PINNED


@pytest.mark.parametrize("view_distance", [1, 3, 6])
def test_a_pose_with_no_wall_near_sees_what_tracing_its_rays_shows_and_no_wall_farther_matters(view_distance):
    cone, size = ViewCone(view_distance), (20, 15, 2)
    for facing in FACINGS:
        assert max(max(abs(dx), abs(dy)) for dx, dy in cone.walls_that_matter(facing)) <= view_distance
        for x, y, pitch in [(0, 0, 0), (10, 7, 0), (19, 14, 1), (3, 12, -1), (5, 5, 1)]:
            pose = Pose(x, y, 0, facing, pitch)
            assert cone.open_sight(pose, size) == cone.sight(pose, size, frozenset())[0]


def test_the_maps_sight_is_the_traced_one_with_walls_near_and_far_and_a_teammates_pose_is_not_kept():
    rng = random.Random(5)
    grid = GridMap()
    grid.learn_view((40, 30, 1), 3, Pose(0, 0, 0, "east"), [(0, 0, 0)], [])
    for _ in range(60):
        grid.add_wall((rng.randrange(15), rng.randrange(30)))  # the east half has none near: no ray traced
    for _ in range(300):
        pose = (rng.randrange(40), rng.randrange(30), 0, rng.choice(FACINGS), 0)
        traced = frozenset(grid.cone.sight(Pose(*pose), grid.size, grid.walls)[0])
        kept = pose in grid._sights
        assert grid.sight(pose, kept=False) == traced
        assert (pose in grid._sights) == kept  # a teammate's pose costs no memory
        assert list(grid.sight(pose)) == list(traced)  # the same cells in the same order: sums over them agree


def test_a_teammates_sight_is_worked_out_once_for_the_team_from_the_walls_that_hide_part_of_it():
    size, maps = (40, 30, 1), [GridMap(), GridMap(), GridMap()]
    for grid in maps:
        grid.learn_view(size, 3, Pose(0, 0, 0, "east"), [(0, 0, 0)], [])
    for grid in maps[:2]:
        grid.add_wall((20, 10))  # in the square of walls near every pose below: the first, coarse test passes
    maps[1].add_wall((2, 2))  # far off: it changes no sight below
    for x, y, facing in [(20, 14, "north"), (17, 10, "west"), (23, 12, "east"), (24, 11, "south")]:
        pose = (x, y, 0, facing, 0)
        assert (20 - x, 10 - y) not in maps[0].cone.walls_that_matter(facing)  # the wall hides nothing here
        sights = [grid.sight(pose, kept=False) for grid in maps]
        assert sights[0] is sights[1] is sights[2]  # one set for the team, not one for each teammate reckoning
        assert list(sights[0]) == list(frozenset(maps[0].cone.sight(Pose(*pose), size, maps[0].walls)[0]))
    behind = (20, 12, 0, "south", 0)  # looks through the wall: its rays traced, the cells behind it hidden
    sights = [grid.sight(behind, kept=False) for grid in maps]
    assert sights[0] is sights[1]  # the maps that know the wall share the traced sight
    assert list(sights[1]) == list(frozenset(maps[1].cone.sight(Pose(*behind), size, maps[1].walls)[0]))
    assert (20, 9, 0) not in sights[0] and (20, 9, 0) in sights[2]  # the map that does not know it sees past


def test_in_a_team_larger_than_its_neighbours_an_agent_reckons_with_its_nearest_as_if_alone_with_them(monkeypatch):
    name = "gen:hall?size=40x40"
    world = world_from_mapping(generated_mapping(name), name)
    team = [f"Agent{n}" for n in range(1, NEIGHBOURS + 9)]
    perception = MockPerception(world, InProcessStore(), team, seed=2, random_starts=True)
    whole = context_for(perception, "Agent1", 1)
    here, poses = whole.view.pose.cell, whole.teammates.positions
    nearest = poses.nearest(here, NEIGHBOURS)
    far = [a for a in team[1:] if a not in nearest]
    assert len(nearest) == NEIGHBOURS and far
    assert max(cell_distance(poses[a].cell, here) for a in nearest) <= min(
        cell_distance(poses[a].cell, here) for a in far
    )
    # Every far teammate says it covered the whole hall, and heads for where Agent1 stands.
    x, y, z = here
    said = f"Covered x 0-39, y 0-39, level 0. Heading to ({x}, {y}, {z}) facing east."
    whole = with_messages(whole, [{"sender": a, "recipient": "all", "message": said} for a in far])
    alone_with_nearest = replace(
        whole,
        team=replace(whole.team, members=tuple(a for a in team if a not in far)),
        teammates=replace(whole.teammates, messages=(), positions=TeammatePoses.of({a: poses[a] for a in nearest})),
    )
    assert _best_goals(whole) == _best_goals(alone_with_nearest)
    monkeypatch.setattr(offline, "NEIGHBOURS", len(team))  # reckoning with all, the far teammates' word counts
    assert _best_goals(whole) != _best_goals(alone_with_nearest)


def _best_goals(context):
    explorer = OfflineExplorer()
    pose = explorer.observe(context)
    goals, _ = explorer.ranked_goals(context, pose, limit=3)
    return [(goal.pose, goal.gain) for goal in goals]
