"""The summary's team metrics, computed from the trace lines as the commit hands them over."""

from explorer.config.run_config import RunConfig
from explorer.records.summary import RunStats, build_summary
from explorer.run.run_records import summary_settings
from perception.base import EnvironmentInfo, Pose
from perception.geometry import apply_action
from perception.world import world_from_mapping


def line(agent_id, step, cells, message=None, calls=0):
    return {
        "agent_id": agent_id,
        "step": step,
        "policy": "offline",
        "seen_cells": cells,
        "new_objects": [],
        "message_out": {"recipient": "all", "message": message} if message else None,
        "llm": {
            "calls": [{"prompt_tokens": 1, "completion_tokens": 1, "retries": 0, "latency": 0.1, "cost_usd": None}]
            * calls
        },
    }


def test_coverage_overlap_and_rates_are_counted_over_the_team():
    stats = RunStats(["Agent1", "Agent2"])
    stats.add(line("Agent1", 1, [[0, 0, 0], [0, 1, 0]], message="lamp at (0, 1)"))
    stats.add(line("Agent2", 1, [[0, 1, 0], [5, 5, 0]], calls=2))
    stats.step_completed(1, 1)
    stats.add(line("Agent1", 2, [[1, 1, 0]]))
    stats.add(line("Agent2", 2, [[5, 5, 0], [6, 5, 0], [7, 5, 0]]))
    stats.step_completed(2, 2)

    team = stats.team_block(total_objects=2, total_cells=12)
    assert team["cells_seen"] == 6
    assert team["coverage_curve"] == [[1, round(3 / 12, 4)], [2, 0.5]]
    assert team["cells_curve"] == [[1, 3], [2, 6]] and team["messages_curve"] == [[1, 1], [2, 1]]
    assert team["steps_to_cells"] == {"50%": 2, "90%": None, "99%": None, "100%": None}
    assert team["steps_to_objects"] == {"50%": 1, "90%": 2, "99%": 2, "100%": 2}
    assert team["overlap_ratio"] == round(1 / 6, 4)  # only (0, 1, 0) was seen by both
    assert team["messages_per_agent_step"] == 0.25
    assert team["message_chars_per_agent_step"] == len("lamp at (0, 1)") / 4
    assert team["model_calls_per_agent_step"] == 0.5


def test_without_a_known_world_the_shares_are_left_out():
    stats = RunStats(["Agent1"])
    stats.add(line("Agent1", 1, []))
    stats.step_completed(1, 0)
    team = stats.team_block(total_objects=None, total_cells=None)
    assert team["coverage_curve"] is None and team["steps_to_cells"] is None and team["steps_to_objects"] is None
    assert team["overlap_ratio"] is None and team["messages_per_agent_step"] == 0.0


def moving(agent_id, step, cells, outcome, position=(0, 0, 0)):
    """A trace line whose action had `outcome` (moved, turned, blocked, pending), from `position`."""
    return {
        **line(agent_id, step, cells),
        "pose": {"position": list(position), "facing": "north"},
        "result": {"action": "forward", "outcome": outcome},
    }


def two_agents_three_steps():
    """Agent1 moves, turns, moves; Agent2 moves once and is blocked twice. Cells as (x, 0, 0), by step."""
    stats = RunStats(["Agent1", "Agent2"])
    rounds = [
        [("Agent1", [0, 1], "moved"), ("Agent2", [1, 2], "moved")],  # (1,) is seen by both: Agent1's, first in order
        [("Agent1", [2], "turned"), ("Agent2", [3, 4, 5], "blocked")],
        [("Agent1", [6, 7], "moved"), ("Agent2", [7, 8], "blocked")],
    ]
    for step, committed in enumerate(rounds, 1):
        for agent_id, xs, outcome in committed:
            stats.add(moving(agent_id, step, [[x, 0, 0] for x in xs], outcome))
        stats.step_completed(step, 0)
    return stats


def test_distance_counts_the_cells_moved_and_the_coverage_curve_runs_by_it():
    stats = two_agents_three_steps()
    assert (stats.distance["Agent1"], stats.distance["Agent2"]) == (2, 1)  # two moves and a turn; one move
    team = stats.team_block(total_objects=None, total_cells=10)
    assert team["distance"] == 3
    # The cells seen by each step, at the team's distance when it began: its own moves come after its sight.
    assert team["cells_by_distance"] == [[0, 3], [2, 6], [2, 9]]
    assert team["coverage_by_distance"] == [[0, 0.3], [2, 0.6], [2, 0.9]]
    assert team["cells_curve"] == [[1, 3], [2, 6], [3, 9]]
    assert team["steps_to_cells"] == {"50%": 2, "90%": 3, "99%": None, "100%": None}
    assert team["distance_to_cells"] == {"50%": 2, "90%": 2, "99%": None, "100%": None}


def test_each_agent_s_share_of_the_cells_it_saw_first():
    stats = two_agents_three_steps()
    summary = build_summary(
        summary_settings(RunConfig.of(agents=2, steps=3)),
        EnvironmentInfo("line", total_cells=10),
        stats,
        0.0,
        "completed",
    )
    agents = summary["per_agent"]
    # Agent1 saw 0, 1, 6 and 7 first (1 in the same commit as Agent2, before it in agent order; 7 in the same
    # commit too); Agent2 2 (at step 1, before Agent1 at step 2), 3, 4, 5 and 8. Nine cells in all.
    assert (agents["Agent1"]["first_seen_share"], agents["Agent2"]["first_seen_share"]) == (0.4444, 0.5556)
    assert (agents["Agent1"]["distance"], agents["Agent2"]["distance"]) == (2, 1)
    assert summary["team"]["distance"] == 3 and summary["search"] is None


def test_a_director_moves_no_one_and_sees_first_nothing():
    stats = RunStats(["Agent1", "Coordinator"], coordinator="Coordinator")
    stats.add(moving("Agent1", 1, [[0, 0, 0]], "moved"))
    stats.add({**moving("Coordinator", 1, [], "moved"), "result": None})
    stats.add(moving("Agent1", 2, [[1, 0, 0]], "pending"))  # an act_delay's: it lands later, unknown here
    stats.step_completed(1, 0)
    settings = summary_settings(RunConfig.of(agents=1, steps=2))
    summary = build_summary(settings, EnvironmentInfo("w", total_cells=4), stats, 0.0, "completed")
    assert summary["team"]["distance"] == 1 and summary["team"]["late_actions"] == 1
    assert summary["per_agent"]["Coordinator"]["distance"] is None
    assert summary["per_agent"]["Coordinator"]["first_seen_share"] is None
    assert summary["per_agent"]["Agent1"]["first_seen_share"] == 1.0


# A wall at x = 1 from y = 0 to 3: from (0, 0) the way to the toothbrush at (2, 0) goes round its end at y = 4.
# Seen at view distance 1 from (2, 1), (3, 0) or (3, 1): the nearest, (2, 1), is 4 + 2 + 3 = 9 cells away.
DETOUR = {
    "name": "detour",
    "size": [5, 5],
    "view_distance": 1,
    "walls": [[1, 0], [1, 1], [1, 2], [1, 3]],
    "objects": [{"name": "toothbrush", "position": [2, 0]}, {"name": "laptop", "position": [4, 4]}],
}
# Agent1 from (0, 0) facing north: up to (0, 4), east to (3, 4) (it sees the laptop there, at 7 cells moved),
# south to (3, 1), from where it sees the toothbrush at 10 cells moved: one more than the shortest path.
LONG_WAY = ["forward"] * 4 + ["look_right"] + ["forward"] * 3 + ["look_right"] + ["forward"] * 3 + ["look_left"]


def walked(world, walks):
    """The RunStats of agents taking their actions in `world` ({agent: (start pose, actions)}), committed in
    rounds in agent order, each line with what the team found new, as the commit gives it."""
    stats, found = RunStats(list(walks)), set()
    poses = {agent: start for agent, (start, _) in walks.items()}
    for step in range(1, max(len(actions) for _, actions in walks.values()) + 1):
        for agent, (_, actions) in walks.items():
            pose, action = poses[agent], (actions[step - 1 :] or ["look_left"])[0]
            objects, cells, _ = world.view(pose)
            poses[agent], outcome, _ = apply_action(pose, action, world.size, world.walls)
            new = [name for name in objects if name not in found]
            found.update(new)
            seen = {"visible_objects": list(objects), "object_cells": {n: list(world.objects[n]) for n in objects}}
            result = {"result": {"action": action, "outcome": outcome}, "pose": pose.to_dict()}
            stats.add({**line(agent, step, [list(c) for c in cells]), **seen, **result, "new_objects": new})
        stats.step_completed(step, len(found))
    return stats


def search_summary(world, stats, targets, known=True):
    environment = EnvironmentInfo(world.name, total_cells=world.free_cell_count, targets=targets)
    settings = summary_settings(RunConfig.of(agents=len(stats.steps), steps=max(stats.steps.values())))
    return build_summary(settings, environment, stats, 0.0, "completed", world=world if known else None)["search"]


def test_spl_is_the_shortest_path_over_the_path_taken():
    world = world_from_mapping(DETOUR, "detour")
    stats = walked(world, {"Agent1": (Pose(0, 0, 0, "north"), LONG_WAY)})
    search = search_summary(world, stats, ("toothbrush",))
    assert search["steps_to_target"] == {"toothbrush": 13}
    assert search["shortest_path_to_target"] == {"toothbrush": 9} and search["distance_to_target"] == {"toothbrush": 10}
    assert search["spl_by_target"] == {"toothbrush": 0.9} and search["spl"] == 0.9
    # Two targets: the laptop on a shortest path (7 of 7); for both, the longest shortest path over the longest taken.
    search = search_summary(world, stats, ("toothbrush", "laptop"))
    assert search["shortest_path_to_target"] == {"toothbrush": 9, "laptop": 7}
    assert search["spl_by_target"] == {"toothbrush": 0.9, "laptop": 1.0} and search["spl"] == 0.9
    # A game run (no true world) has no SPL.
    assert search_summary(world, stats, ("toothbrush",), known=False)["spl"] is None


def test_spl_measures_from_the_team_s_nearest_start_and_counts_a_target_missed_as_zero():
    world = world_from_mapping(DETOUR, "detour")
    # Agent2 stands at (4, 4), 4 cells from (3, 1), turning only: it sees the laptop from its start.
    stats = walked(world, {"Agent1": (Pose(0, 0, 0, "north"), LONG_WAY), "Agent2": (Pose(4, 4, 0, "west"), [])})
    search = search_summary(world, stats, ("toothbrush", "laptop"))
    assert search["shortest_path_to_target"] == {"toothbrush": 4, "laptop": 0}
    assert search["distance_to_target"] == {"toothbrush": 10, "laptop": 0}
    assert search["spl_by_target"] == {"toothbrush": 0.4, "laptop": 1.0} and search["spl"] == 0.4
    # Stopped before the toothbrush was seen: it counts 0, and so does the task.
    stats = walked(world, {"Agent1": (Pose(0, 0, 0, "north"), LONG_WAY[:9])})
    search = search_summary(world, stats, ("toothbrush", "laptop"))
    assert search["targets_found"] == ["laptop"] and search["distance_to_target"] == {"toothbrush": None, "laptop": 7}
    assert search["spl_by_target"] == {"toothbrush": 0.0, "laptop": 1.0} and search["spl"] == 0.0
