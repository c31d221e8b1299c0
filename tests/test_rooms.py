"""Room labels named in the observation and the prompt, kept in the trace, and drawn on the report's map;
worlds without rooms exactly as before."""

import hashlib
import json
from dataclasses import replace

import pytest
import yaml

from explorer.config.run_config import RunConfig
from explorer.report.room_marks import outline_path
from explorer.run.runner import ExplorationRun
from explorer.team.store import InProcessStore
from nodes.decision_context import render_prompt
from nodes.flow import build_agent_flow
from nodes.interfaces import Decision, DecisionOutcome
from nodes.record import StepRecord
from nodes.state import new_agent_state
from perception.base import Pose
from perception.families.generate import open_world
from perception.mock import MockPerception
from perception.room_sight import MAX_DOORS, door_sides, room_sight
from perception.world import DEFAULT_WORLD, load_world, world_from_mapping
from tests.test_prompt_budget import context as prompt_context

pytest_plugins = ("tests.support.browser",)

#   y4  k k k # w w w      k: the kitchen, w: the washroom (a bathroom)
#   y3  k k k D w w w      D: doors, one between the rooms, one out of the kitchen
#   y2  k k k # w w w
#   y1  # D # # # # #
#   y0  . . . . . . .      a corridor, in no room
ROOMS_WORLD = {
    "name": "rooms",
    "size": [7, 5],
    "walls": [[3, 4], [3, 2], [0, 1], [2, 1], [3, 1], [4, 1], [5, 1], [6, 1]],
    "objects": [{"name": "kettle", "position": [0, 4]}, {"name": "towel", "position": [6, 3]}],
    "rooms": [
        {"name": "kitchen", "rect": [[0, 2], [2, 4]]},
        {"name": "washroom", "kind": "bathroom", "rect": [[4, 2], [6, 4]]},
    ],
    "agents": [{"position": [1, 3], "facing": "east"}, {"position": [5, 0], "facing": "west"}],
}
# The trace lines (but their timings and prompts) of six steps on worlds without rooms, as the code before
# rooms were named wrote them: a change here changes what runs on such worlds record. A prompt is checked to
# say no room, not pinned: its text and layout have changed since (laid out for a server's prefix reuse).
BEFORE_ROOMS_WITHOUT_PROMPTS = {
    "apartment": "aea1c944ae549c66bc76641900924190cfc37df72ca457fb8b9a70b9314b487d",
    "gen:maze": "045d6987090bca11ad9cb3438545ed698c14bdb41bea9a19947dd0335f2d11b3",
    "gen:corridor": "fe70f1dc8ce5e3878b1ef4efbc873f60c0682e4da203c0f6ec3964b567162bb8",
}


class RememberingMemory:
    def __init__(self):
        self.texts = []

    def search(self, query, top_k):
        return [(text, 0.5) for text in self.texts[-top_k:]]

    def embed_later(self, text, searched_soon):
        return len(text)

    def add(self, text, rows):
        self.texts.append(text)


class Actions:
    """A policy taking the given actions in turn, saying what step it is."""

    name = "walk"
    reads_memories = True

    def __init__(self, actions):
        self.actions, self.taken = actions, 0

    def decide(self, prompt, context):
        self.taken += 1
        action = self.actions[self.taken % len(self.actions)]
        return DecisionOutcome(Decision(action, "t", "r", f"msg {self.taken}", "all"))


class Steps:
    def __init__(self, steps):
        self.steps, self.reports = steps, []

    def hand_in(self, report):
        self.reports.append(report)
        report.remember()
        return report.step < self.steps


def trace_lines(world, actions, steps):
    """Agent1's trace lines, without their timings, over `steps` steps of the flow on `world`."""
    store = InProcessStore()
    perception = MockPerception(world, store, ["Agent1", "Agent2"], seed=3)
    for agent_id in ("Agent1", "Agent2"):
        store.register_agent(agent_id, perception.get_agent_state(agent_id).to_dict())
    schedule = Steps(steps)
    state = new_agent_state(
        agent_id="Agent1",
        team=["Agent1", "Agent2"],
        shared_memory=store,
        perception=perception,
        environment=perception.get_environment_info(),
        role="scout",
        persona="Be quick.",
        policy=Actions(actions),
        schedule=schedule,
        comm_enabled=True,
        coordinator=None,
        max_steps=steps,
        memory_index=RememberingMemory(),
    )
    build_agent_flow().run(state)
    lines = [report.record.to_dict() for report in schedule.reports]
    for line in lines:
        del line["timings"]
    return lines


def test_the_prompt_names_the_room_the_agent_is_in_and_where_the_doors_it_sees_lead():
    world = world_from_mapping(ROOMS_WORLD, "rooms")
    first, second = trace_lines(world, ["look_right"], steps=2)  # facing east, then south
    assert first["room"] == second["room"] == "kitchen"
    assert (
        "## What you see\nI see nothing notable.\nYou are in the kitchen.\nYou see into washroom (bathroom).\n"
        "A door to the east, at (3, 3), leads to washroom (bathroom), not yet entered.\n\n## What you remember"
    ) in first["prompt"]
    assert "You are in the kitchen.\nA door to the south, at (1, 1), leads out of this room.\n" in second["prompt"]
    assert "washroom" not in second["prompt"]


def test_in_a_doorway_or_outside_the_rooms_the_prompt_says_so():
    world = world_from_mapping(ROOMS_WORLD, "rooms")

    def rooms_text(pose):
        _, cells, _ = world.view(pose)
        sight = room_sight(world, pose.x, pose.y, cells)
        prompt = render_prompt(_context(pose, sight))
        return prompt.split("## What you see\ncaption")[1].split("\n\n## What you remember")[0]

    assert (
        rooms_text(Pose(3, 3, 0, "east")) == "\nYou stand in the doorway between the kitchen and washroom (bathroom)."
    )
    assert rooms_text(Pose(2, 0, 0, "north")) == (
        "\nYou see into the kitchen.\nA door to the north-west, at (1, 1), leads to the kitchen, not yet entered."
    )
    assert rooms_text(Pose(5, 0, 0, "west")) == ""  # in no room and no door in sight: nothing said


def _context(pose, sight):
    base = prompt_context(1, objects=0, messages=0, memory_chars=10, caption_chars=0)
    return replace(base, view=replace(base.view, pose=pose, caption="caption", rooms=sight))


def test_at_most_a_few_doors_are_told_of_nearest_first():
    # A hall over a wall with a door every other cell, a corridor beyond.
    walls = [[x, 1] for x in range(0, 9, 2)]
    world = world_from_mapping(
        {
            "name": "doors",
            "size": [9, 5],
            "walls": walls,
            "objects": [{"name": "lamp", "position": [0, 4]}],
            "rooms": [{"name": "hall", "rect": [[0, 2], [8, 4]]}],
        },
        "doors",
    )
    everything = [(x, y, 0) for x in range(9) for y in range(5) if [x, y] not in walls]
    sight = room_sight(world, 4, 3, everything)
    assert [(door.cell, door.direction) for door in sight.doors] == [
        ((3, 1), "south"),
        ((5, 1), "south"),
        ((1, 1), "west"),  # more west than south
    ]
    assert len(sight.doors) == MAX_DOORS and all(door.leads_to is None for door in sight.doors)


def test_worlds_without_rooms_give_the_same_observations_and_traces_as_before():
    actions = ["forward", "look_left", "forward", "look_right", "forward", "forward"]
    for name, expected in BEFORE_ROOMS_WITHOUT_PROMPTS.items():
        # From the generator's start poses, as before a run's seed placed the team (perception/starts.py).
        world = (
            replace(open_world(name, 2), starts_by_seed=False) if name.startswith("gen:") else load_world(DEFAULT_WORLD)
        )
        assert not world.rooms
        lines = trace_lines(world, actions, steps=6)
        assert all("room" not in line for line in lines)
        assert not any("You are in" in line["prompt"] or "A door to" in line["prompt"] for line in lines)
        without_prompts = [{key: value for key, value in line.items() if key != "prompt"} for line in lines]
        digest = hashlib.sha256(json.dumps(without_prompts, sort_keys=True).encode()).hexdigest()
        assert digest == expected, name


def test_a_step_record_keeps_its_room_through_its_line_and_has_none_without_one():
    record = StepRecord("Agent1", 3, room="kitchen")
    assert StepRecord.from_dict(record.to_dict()).room == "kitchen"
    line = StepRecord("Agent1", 3).to_dict()
    assert "room" not in line and StepRecord.from_dict(line).room is None


@pytest.mark.parametrize("family", ["house", "office"])
def test_every_closed_room_of_a_generated_world_has_a_door_out(family):
    for seed in range(5):
        world = open_world(f"gen:{family}", seed)
        sides = [door_sides(world, cell[:2]) for cell in world.free_cells()]
        joined = {room.name for pair in sides if pair for room in pair if room}
        closed = {room.name for room in world.rooms if room.kind != "open office"}  # open to their corridor
        assert closed <= joined, (seed, closed - joined)


def test_a_rooms_outline_follows_its_outer_edges():
    # An L: (0, 0), (1, 0), (0, 1).
    assert outline_path(frozenset({(0, 0), (1, 0), (0, 1)})) == (
        "M-0.5,-0.5H1.5M0.5,0.5H1.5M-0.5,1.5H0.5M-0.5,-0.5V1.5M0.5,0.5V1.5M1.5,-0.5V0.5"
    )


MARKUP = "<b>den</b>&<img src=x onerror=alert(1)>"  # within the map label's 40 characters


def test_the_report_outlines_the_rooms_and_shows_their_names_as_written(tmp_path, embedder, browser):
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    rooms = [{**ROOMS_WORLD["rooms"][0], "name": MARKUP, "kind": "kitchen"}, ROOMS_WORLD["rooms"][1]]
    world_file = tmp_path / "rooms.yaml"
    world_file.write_text(yaml.safe_dump({**ROOMS_WORLD, "rooms": rooms}))
    run_dir = tmp_path / "run"
    config = RunConfig.of(agents=1, steps=3, world=world_file, seed=1, run_dir=run_dir, verbosity=-1)
    ExplorationRun(config.check(), embedder=embedder).execute()
    html = (run_dir / "report.html").read_text()
    assert "Dotted lines outline the world's rooms" in html and "<b>den" not in html

    page = PageVisit(browser, run_dir / "report.html")
    assert page.console_errors == []
    labels = browser.execute_script(
        "return [...document.querySelectorAll('#map .annotation-text')].map(e => e.textContent)"
    )
    assert labels == [MARKUP, "washroom"]  # shown as written, not read as markup
    assert browser.execute_script("return document.querySelectorAll('#map image').length") == 1  # the heatmap's
    assert not browser.find_elements(By.CSS_SELECTOR, "#map .annotation-text [style*='bold']")
    outlines = browser.execute_script(
        "return document.getElementById('map').layout.shapes.filter(s => s.type === 'path').length"
    )
    assert outlines == 2
    looked_from = browser.find_element(By.CSS_SELECTOR, "#panel tbody tr td:nth-child(2)").text
    assert looked_from == f"(1, 3, 0) east in {MARKUP}"
