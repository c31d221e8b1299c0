"""A perception backend over a grid world: no screen and no model, the same interface."""

from __future__ import annotations

import random
import threading

from perception.base import (
    FACING_VECTORS,
    FACINGS,
    ActionResult,
    EnvironmentInfo,
    Observation,
    PerceptionInterface,
    Pose,
    objects_text,
)
from perception.geometry import apply_action
from perception.room_sight import room_sight
from perception.starts import team_starts


def _starts(world, seed, agents, random_starts):
    """The start poses a run takes before any placed by its seed alone: none with random starts, a team's
    drawn by the seed on a generated world, the world file's otherwise."""
    if random_starts:
        return ()
    return team_starts(world, seed, agents) if world.starts_by_seed else world.agent_starts


class MockPerception(PerceptionInterface):
    """Agents moving through a World, each seeing what its pose allows.

    Agents never block each other. Each agent's thread moves only that agent,
    but the poses are shared, so a lock guards them.
    """

    def __init__(self, world, store, agent_ids, seed, random_starts=False):
        super().__init__(store)
        self.world = world
        self._lock = threading.Lock()
        self._poses = self._place_agents(list(agent_ids), seed, _starts(world, seed, len(agent_ids), random_starts))

    def _place_agents(self, agent_ids, seed, starts):
        """The given `starts` first, then seeded free ground cells, kept apart while cells last."""
        rng = random.Random(f"{seed}:placement")
        free = None  # listed only if an agent has no start pose: it costs the grid's area
        poses = {}
        for index, agent_id in enumerate(agent_ids):
            if index < len(starts):
                poses[agent_id] = starts[index]
                continue
            free = free or self.world.free_cells()
            taken = {pose.cell for pose in poses.values()}
            x, y, z = rng.choice([cell for cell in free if cell not in taken] or free)
            poses[agent_id] = Pose(x, y, z, rng.choice(FACINGS))
        return poses

    def get_agent_state(self, agent_id) -> Pose:
        with self._lock:
            return self._poses[agent_id]

    def get_visible_objects(self, agent_id, position=None) -> list[str]:
        """What the agent sees now, or from `position` when that is a Pose."""
        pose = self.get_agent_state(agent_id)
        if isinstance(position, Pose):
            pose = position
        objects, _, _ = self.world.view(pose)
        return list(objects)

    def observe(self, agent_id, step=None) -> Observation:
        return self.observe_from(self.get_agent_state(agent_id))

    def observe_from(self, pose) -> Observation:
        """What `pose` shows: the world is still, so a pose the agent once had shows what it showed then."""
        objects, cells, walls = self.world.view(pose)
        object_cells = {name: self.world.objects[name] for name in objects}
        caption = self._caption(pose, objects, object_cells, walls)
        rooms = room_sight(self.world, pose.x, pose.y, cells)
        return Observation(pose, objects, caption, cells, walls, object_cells, rooms=rooms)

    def _caption(self, pose, objects, object_cells, seen_walls):
        caption = f"I see {objects_text(objects, object_cells)}." if objects else "I see nothing notable."
        forward_x, forward_y = FACING_VECTORS[pose.facing]
        for ahead in range(1, self.world.view_distance + 1):
            if (pose.x + ahead * forward_x, pose.y + ahead * forward_y) in seen_walls:
                cells = "cell" if ahead == 1 else "cells"
                return f"{caption} A wall is {ahead} {cells} ahead."
        return caption

    def execute_action(self, agent_id, action, params=None) -> ActionResult:
        """Carry out one action; `params` is unused, every action is one fixed step."""
        with self._lock:
            pose, outcome, detail = apply_action(self._poses[agent_id], action, self.world.size, self.world.walls)
            self._poses[agent_id] = pose
            return ActionResult(action, outcome, pose, detail)

    def get_environment_info(self) -> EnvironmentInfo:
        world = self.world
        return EnvironmentInfo(
            name=world.name,
            size=world.size,
            view_distance=world.view_distance,
            max_steps=world.max_steps,
            total_objects=len(world.objects),
            total_cells=world.free_cell_count,
            targets=world.targets,
        )
