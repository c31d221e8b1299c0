"""The summary's team metrics, computed from the trace lines as the commit hands them over."""

from explorer.records.summary import RunStats


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
