"""The decision prompt stays within its budget however long the run and large the team's findings."""

from dataclasses import replace

from nodes.decision_context import (
    AgentSetup,
    DecisionContext,
    TeamContext,
    TeammatePoses,
    Teammates,
    View,
    render_prompt,
)
from perception.actions import ACTIONS
from perception.base import Pose


def context(step, objects, messages, memory_chars, caption_chars):
    return DecisionContext(
        team=TeamContext(
            agent_id="Agent1",
            members=("Agent1", "Agent2"),
            step=step,
            max_steps=300,
            world="test",
            size=(20, 20, 1),
            view_distance=4,
            discoveries={
                f"object number {n}": {"finder": "Agent1", "step": 1, "cell": [n, 0, 0]} for n in range(objects)
            },
        ),
        setup=AgentSetup(role="explorer", persona="You explore.", comm_enabled=True, coordinator=None),
        view=View(
            pose=Pose(1, 2, 0, "north"),
            dead_reckoned=False,
            visible_objects=(),
            object_cells={},
            caption="c" * caption_chars,
            seen_cells=(),
            seen_walls=(),
            actions_unseen=(),
        ),
        teammates=Teammates(
            messages=tuple(
                {"sender": "Agent2", "recipient": "all", "message": f"found thing {n} " + "x" * 280}
                for n in range(messages)
            ),
            positions=TeammatePoses.of({"Agent2": Pose(3, 4, 0, "east")}),
        ),
        memories=(("m" * memory_chars, 0.5),) * 3,
        recent_actions=tuple(
            {"step": n, "action": "forward", "outcome": "moved", "detail": "moved to (1, 2, 0)", "message": ""}
            for n in range(5)
        ),
        available_actions=ACTIONS,
    )


def test_the_prompt_at_step_200_is_about_the_size_of_the_one_at_step_10():
    early = render_prompt(context(10, objects=25, messages=1, memory_chars=250, caption_chars=200))
    late = render_prompt(context(200, objects=2000, messages=40, memory_chars=5000, caption_chars=5000))
    assert len(late) <= 1.2 * len(early) + 2000  # fixed caps, whatever grows
    assert "object number 1999" in late and "object number 0," not in late  # the latest finds are kept
    assert "(and 1970 found earlier)" in late
    assert "(34 older messages this step not shown)" in late and "found thing 39" in late


def test_short_contexts_are_not_cut():
    prompt = render_prompt(context(3, objects=2, messages=1, memory_chars=50, caption_chars=40))
    assert (
        "object number 0 at (0, 0, 0), object number 1 at (1, 0, 0)" in prompt
        and "c" * 40 in prompt
        and "not shown" not in prompt
    )


def test_a_large_team_shows_its_nearest_teammates_and_counts_the_rest():
    small = context(10, objects=5, messages=1, memory_chars=100, caption_chars=100)
    large = replace(
        small,
        team=replace(small.team, members=tuple(f"Agent{n}" for n in range(1, 1001))),
        teammates=replace(
            small.teammates, positions=TeammatePoses.of({f"Agent{n}": Pose(n, 0, 0, "east") for n in range(2, 1001)})
        ),
    )
    prompt = render_prompt(large)
    assert len(prompt) <= len(render_prompt(small)) + 1000
    assert "- Agent2: (2, 0, 0)" in prompt and "- Agent9: (9, 0, 0)" in prompt and "Agent10:" not in prompt
    assert "(991 more teammates farther away)" in prompt
