"""The decision prompt stays within its budget however long the run and large the team's findings."""

from nodes.decision_context import render_prompt
from perception.actions import ACTIONS


def context(step, objects, messages, memory_chars, caption_chars):
    return {
        "agent_id": "Agent1",
        "role": "explorer",
        "persona": "You explore.",
        "team": ["Agent1", "Agent2"],
        "step": step,
        "max_steps": 300,
        "world": "test",
        "size": (20, 20, 1),
        "view_distance": 4,
        "dead_reckoned": False,
        "pose": {"position": [1, 2, 0], "facing": "north", "pitch": 0, "roll": 0},
        "caption": "c" * caption_chars,
        "memories": [("m" * memory_chars, 0.5)] * 3,
        "messages": [{"sender": "Agent2", "message": f"found thing {n} " + "x" * 280} for n in range(messages)],
        "team_objects": {f"object number {n}": {"finder": "Agent1", "step": 1, "cell": [n, 0, 0]} for n in range(objects)},
        "other_agents": {"Agent2": {"position": [3, 4, 0], "facing": "east", "pitch": 0, "roll": 0}},
        "recent_actions": [{"step": n, "action": "forward", "outcome": "moved", "detail": "moved to (1, 2, 0)"} for n in range(5)],
        "available_actions": list(ACTIONS),
        "comm_enabled": True,
    }


def test_the_prompt_at_step_200_is_about_the_size_of_the_one_at_step_10():
    early = render_prompt(context(10, objects=25, messages=1, memory_chars=250, caption_chars=200))
    late = render_prompt(context(200, objects=2000, messages=40, memory_chars=5000, caption_chars=5000))
    assert len(late) <= 1.2 * len(early) + 2000  # fixed caps, whatever grows
    assert "object number 1999" in late and "object number 0," not in late  # the latest finds are kept
    assert "(and 1970 found earlier)" in late
    assert "(34 older messages this step not shown)" in late and "found thing 39" in late


def test_short_contexts_are_not_cut():
    prompt = render_prompt(context(3, objects=2, messages=1, memory_chars=50, caption_chars=40))
    assert "object number 0 at (0, 0, 0), object number 1 at (1, 0, 0)" in prompt and "c" * 40 in prompt and "not shown" not in prompt


def test_a_large_team_shows_its_nearest_teammates_and_counts_the_rest():
    small = context(10, objects=5, messages=1, memory_chars=100, caption_chars=100)
    large = dict(small)
    large["team"] = [f"Agent{n}" for n in range(1, 1001)]
    large["other_agents"] = {
        f"Agent{n}": {"position": [n, 0, 0], "facing": "east", "pitch": 0, "roll": 0} for n in range(2, 1001)
    }
    prompt = render_prompt(large)
    assert len(prompt) <= len(render_prompt(small)) + 1000
    assert "- Agent2: (2, 0, 0)" in prompt and "- Agent9: (9, 0, 0)" in prompt and "Agent10:" not in prompt
    assert "(991 more teammates farther away)" in prompt
