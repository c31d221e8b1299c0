"""The benches' own reckoning: every figure the README quotes against a target comes through these.

The reference team's steps on a world whose answer is known by hand, the families table's geometric
means and bounds, the run-on figure and issue 27's checks, what a search run that failed counts for,
the search stub's choice of room, the known-map limit's map, and the alone limit's blindness to teammates.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench import (
    baselines,
    coordination,
    exploration,
    families,
    neighbours,
    real_model,
    scale,
    search,
    split_team,
    telemetry,
    topology,
)
from bench.alone import AloneExplorer
from bench.full_knowledge import full_knowledge_curve
from bench.known_map import KnownMapExplorer
from bench.output import figures_text
from explorer.policies.offline import OfflineExplorer
from explorer.team.store import InProcessStore
from nodes.decision_context import AgentSetup, DecisionContext, TeamContext, TeammatePoses, Teammates, View
from perception.base import Pose
from perception.mock import MockPerception
from perception.world import world_from_mapping
from tests.test_offline_explorer import context_for, world_file


def corridor(objects, view_distance=1, agents=({"position": [0, 0], "facing": "east"},)):
    """A 7 x 1 corridor with an agent at its west end."""
    return world_from_mapping(
        {
            "name": "bench-corridor",
            "size": [7, 1],
            "walls": [],
            "objects": [{"name": name, "position": list(cell)} for name, cell in objects.items()],
            "agents": list(agents),
            "view_distance": view_distance,
        },
        "bench-corridor",
    )


def test_the_full_knowledge_team_counts_each_object_at_the_first_step_whose_view_shows_it():
    # Seeing one cell ahead, the agent shows (3, 0) from (2, 0), two moves on (step 3: step 1 is the start's
    # view), and (6, 0) from (5, 0), five moves on.
    world = corridor({"chair": (3, 0), "lamp": (6, 0)})

    assert full_knowledge_curve(world, 1, 1, (50, 100)) == {50: 3, 100: 6}


def test_the_full_knowledge_team_splits_the_objects_between_its_agents():
    # From both ends at once, each object is one move from one agent: step 2 for both.
    agents = ({"position": [0, 0], "facing": "east"}, {"position": [6, 0], "facing": "west"})
    world = corridor({"chair": (2, 0), "lamp": (4, 0)}, agents=agents)

    assert full_knowledge_curve(world, 1, 1, (100,)) == {100: 4}
    assert full_knowledge_curve(world, 2, 1, (100,)) == {100: 2}


def test_the_full_knowledge_team_rounds_a_share_up_to_whole_objects():
    # 90% of 3 objects is all 3 of them.
    world = corridor({"chair": (2, 0), "lamp": (4, 0), "rug": (6, 0)})

    assert full_knowledge_curve(world, 1, 1, (90, 100)) == {90: 6, 100: 6}


def run(steps, reached, reference=10, messages=0.2):
    """A condition's figures as families.run_figures writes them, for steps to 90% (None: not within `reached`)."""
    return {
        "steps": {"90%": steps},
        "ratio": {"90%": round((steps or reached + 1) / reference, 3)},
        "reached": {"90%": steps is not None},
        "messages_per_agent_step": messages,
        "message_chars_per_agent_step": 20.0,
        "overlap_ratio": 0.1,
    }


SHARES = ("50%", "90%", "100%")


def row(family, offline, no_comm, run_on=None, world=None, agents=2):
    figures = {"family": family, "variant": families.VARIANTS[family][0], "agents": agents}
    figures["world"] = world or f"gen:{family}"
    figures.update(full_knowledge={"90%": 10}, offline=offline, **{"no-comm": no_comm})
    if run_on:
        figures[families.RUN_ON] = run_on
    return figures


def test_the_families_table_marks_a_figure_with_a_run_cut_off_as_a_bound_and_runs_it_on():
    rows = [
        row("hall", run(12, 25), run(18, 25)),
        row("hall", run(None, 25), run(None, 25), run_on=run(40, 400)),
    ]

    figures = families.group_figures(rows, ["offline", "no-comm"])

    offline = figures["offline"]
    assert offline["90%"] == {"ratio": round((1.2 * 2.6) ** 0.5, 3), "bound": True}
    assert offline["90% run on"]["ratio"] == round((1.2 * 4.0) ** 0.5, 3)
    assert offline["90% run on"]["bound"] is False
    # --no-comm against offline only where offline got there: otherwise both are bounds.
    assert figures["no-comm"]["against_offline"] == 1.5
    assert figures["no-comm"]["against_offline_worlds"] == "1 of 2"


def test_issue_27s_checks_read_the_run_on_figure_and_each_target_the_right_way_round():
    rows = [
        row("hall", run(12, 25), run(14, 25)),
        row("maze", run(None, 25, messages=0.6), run(30, 25), run_on=run(25, 400)),
    ]
    summary = families.summarise(rows, ["offline", "no-comm"])
    checks = summary["targets"]

    assert checks["offline_overall_90"]["value"] == round((1.2 * 2.5) ** 0.5, 3)
    assert checks["offline_overall_90"]["met"] is False  # 1.73x: over the 1.4x
    assert checks["hall: offline 90"]["met"] is True  # 1.2x, within 2x
    assert checks["maze: offline 90"]["met"] is False  # 2.5x run on
    assert checks["hall: no-comm over offline"] == {"value": 1.167, "target": ">= 1.15", "met": True}
    assert "maze: no-comm over offline" not in checks  # the offline team never got there within the budget
    assert checks["maze: messages"]["met"] is False  # 0.6 a step, over the 0.5


def test_the_families_interval_resamples_worlds_and_holds_their_geometric_mean():
    rows = [
        row("hall", run(steps, 40), run(steps + 3, 40), world=f"gen:hall?seed={seed}", agents=agents)
        for seed, steps in enumerate((11, 14, 19, 26))
        for agents in (2, 4)
    ]

    figures = families.group_figures(rows, ["offline", "no-comm"])

    low, high = figures["offline"]["90% run on"]["95%"]
    assert low < figures["offline"]["90% run on"]["ratio"] < high
    assert low >= 1.1 and high <= 2.6  # within the worlds' own ratios
    low, high = figures["no-comm"]["against_offline_95"]
    assert low < figures["no-comm"]["against_offline"] < high
    # One world is one draw, however many team sizes ran on it: no interval from a single world.
    one_world = families.group_figures(rows[:2], ["offline"])
    assert one_world["offline"]["90% run on"]["95%"] is None


def test_no_comm_over_shared_sight_counts_only_the_worlds_where_the_shared_sight_team_got_there():
    rows = [
        row("hall", run(12, 25), run(18, 25), world="gen:hall?seed=1"),
        row("hall", run(14, 25), run(21, 25), world="gen:hall?seed=2"),
        row("hall", run(None, 25), run(None, 25), world="gen:hall?seed=3"),
    ]
    for figures, steps in zip(rows, (12, 15, None)):
        figures[families.SHARED_SIGHT] = run(steps, 25)

    no_comm = families.group_figures(rows, ["offline", "no-comm", families.SHARED_SIGHT])["no-comm"]

    assert no_comm["against_shared_sight"] == round((1.5 * 1.4) ** 0.5, 3)
    assert no_comm["against_shared_sight_worlds"] == "2 of 3"
    low, high = no_comm["against_shared_sight_95"]
    assert 1.4 <= low < high <= 1.5


def test_the_alone_team_is_set_against_the_no_comm_team_and_shown_in_the_table():
    def every_share(steps):
        figures = run(steps, 25)
        return {**figures, **{key: dict.fromkeys(SHARES, figures[key]["90%"]) for key in ("steps", "ratio", "reached")}}

    rows = [
        row("hall", every_share(12), every_share(15), world="gen:hall?seed=1"),
        row("hall", every_share(14), every_share(14), world="gen:hall?seed=2"),
    ]
    for figures, steps in zip(rows, (30, 21)):
        figures[families.ALONE] = every_share(steps)
    conditions = ["offline", "no-comm", families.ALONE]

    summary = families.summarise(rows, conditions)

    alone = summary["overall"][families.ALONE]
    assert alone["against_no_comm"] == round((2.0 * 1.5) ** 0.5, 3) and alone["against_no_comm_worlds"] == "2 of 2"
    assert alone["against_offline"] == round((30 / 12 * 21 / 14) ** 0.5, 3)
    header, _, *lines = families.family_table(summary).splitlines()
    assert header.endswith("| alone 90% | alone / offline | alone / no-comm [95%] |")
    assert lines[-1].split(" | ")[-1].startswith(f"{alone['against_no_comm']:.2f}x [")


def test_the_families_bench_sums_up_a_figures_file_again_from_its_rows(tmp_path, monkeypatch):
    rows = [row("hall", run(12, 25), run(14, 25), world="gen:hall?seed=1"), row("maze", run(20, 25), run(30, 25))]
    stale = {"targets": {"offline_overall_90": {"value": 9.9}}, "seeds": [1], "held_out": True}
    stored = tmp_path / "families.json"
    stored.write_text(json.dumps({"rows": rows, "conditions": ["offline", "no-comm"], **stale}))
    monkeypatch.setattr("sys.argv", ["families.py", "--summarise", str(stored)])

    again = families.summarised_again(families._arguments().stored)

    assert again["seeds"] == [1] and again["held_out"] is True  # what only the run knew is kept
    assert again["targets"]["offline_overall_90"]["value"] == round((1.2 * 2.0) ** 0.5, 3)  # worked out anew


def test_the_families_bench_sums_up_a_figures_file_into_out_where_given_and_leaves_the_file_as_it_was(
    tmp_path, monkeypatch
):
    stored, out = tmp_path / "families.json", tmp_path / "again.json"
    figures = json.loads((families.ROOT / "bench" / "families.json").read_text())
    stored.write_text(json.dumps({**figures, "targets": {}}))  # a stale summary
    before = stored.read_text()
    monkeypatch.setattr("sys.argv", ["families.py", "--summarise", str(stored), "--out", str(out)])

    families.main()

    assert stored.read_text() == before
    assert json.loads(out.read_text())["targets"] == figures["targets"]


@pytest.mark.parametrize(
    "arguments",
    [
        ["--summarise", "README.md"],
        ["--conditions", "no-comm"],
        ["--seeds", "3", "--out", "x.json"],
        ["--seeds", "1020"],
        ["--quick"],
    ],
)
def test_the_families_bench_refuses_arguments_it_cannot_run(monkeypatch, arguments):
    monkeypatch.setattr("sys.argv", ["families.py", *arguments])
    with pytest.raises(SystemExit) as refused:
        families._arguments()
    assert refused.value.code == 2


@pytest.mark.parametrize(
    ("bench", "arguments"),
    [
        (exploration, ["--worlds", "nosuch"]),
        (coordination, ["--worlds", "nosuch"]),
        (topology, ["--world", "bench/worlds/maze.yaml"]),
        (topology, ["--world", "gen:office?size=4x4"]),
    ],
)
def test_a_bench_refuses_a_world_it_cannot_run_before_it_runs_anything(monkeypatch, capsys, bench, arguments):
    monkeypatch.setattr("sys.argv", ["bench.py", *arguments])
    with pytest.raises(SystemExit) as refused:
        bench.main()
    assert refused.value.code == 2
    assert "--world" in capsys.readouterr().err.splitlines()[-1]


@pytest.mark.parametrize(
    "bench", [exploration, coordination, topology, search, families, split_team, scale, neighbours, telemetry]
)
@pytest.mark.parametrize("where", ["no/such/folder/figures.json", "."])
def test_a_bench_refuses_a_figures_file_it_could_not_write_before_it_runs_anything(
    monkeypatch, capsys, tmp_path, bench, where
):
    monkeypatch.setattr("sys.argv", ["bench.py", "--out", str(tmp_path / where)])
    with pytest.raises(SystemExit) as refused:
        bench.main()
    assert refused.value.code == 2
    assert "--out" in capsys.readouterr().err.splitlines()[-1]


def test_the_random_team_runs_twice_the_offline_teams_steps_and_one_more():
    assert families.random_budget(30, run(20, 30)) == 41
    assert families.random_budget(50, run(20, 50)) == 50
    assert families.random_budget(30, run(None, 30)) == 30


def test_messages_and_overlap_count_only_the_steps_until_the_team_had_every_object(tmp_path):
    trace = tmp_path / "trace.jsonl"
    lines = [
        {"agent_id": "Agent1", "step": 1, "message_out": {"message": "Found."}, "seen_cells": [[0, 0, 0], [1, 0, 0]]},
        {"agent_id": "Agent2", "step": 1, "message_out": None, "seen_cells": [[1, 0, 0]]},
        {"agent_id": "Agent1", "step": 2, "message_out": {"message": "Later."}, "seen_cells": [[0, 0, 0]]},
        {"event": "run_end"},
    ]
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))

    figures = families.exploring_figures(trace, until=1)

    assert figures == {"messages_per_agent_step": 0.5, "message_chars_per_agent_step": 3.0, "overlap_ratio": 0.5}


def test_a_search_run_that_did_not_find_both_counts_its_budget_and_one_more():
    assert search.counted({"steps": 30, "budget": 80}) == 30
    assert search.counted({"steps": None, "budget": 80}) == 81


def test_the_search_table_sets_each_condition_against_the_frontier_only_where_the_frontier_ran():
    rows = [
        {"seed": 1, "frontier": {"steps": 40, "budget": 80}, "prior": {"steps": 20, "budget": 80}},
        {"seed": 2, "frontier": {"steps": 30, "budget": 80}, "prior": {"steps": None, "budget": 80}},
    ]
    with_frontier = search.markdown_table(search.summarise(rows, ["frontier", "prior"]), len(rows))
    assert "| prior | >50.5 " in with_frontier and "| >1.16x [" in with_frontier  # sqrt(20 / 40 x 81 / 30)
    alone = search.markdown_table(search.summarise(rows, ["prior"]), len(rows))
    assert alone.splitlines()[-1].endswith("| 1/2 |  |")


def goals_prompt(missing, *goals):
    lines = "\n".join(f"- G{number}: {text}" for number, text in enumerate(goals, 1))
    return {"messages": [{"role": "user", "content": f"Still to find: {missing}.\nYour goals:\n{lines}\n"}]}


KITCHEN = "enter the kitchen through the door at (5, 3, 0): look north from (5, 4, 0), 4 steps away"
BEDROOM = "enter the bedroom through the door at (2, 7, 0): look west from (1, 7, 0), 6 steps away"
BATHROOM = "enter the bathroom through the door at (9, 1, 0): look east from (10, 1, 0), 9 steps away"


@pytest.mark.parametrize(
    ("missing", "goals", "chosen"),
    [
        # The bathroom is the toothbrush's first room; the bedroom only the laptop's second.
        ("toothbrush, laptop", (KITCHEN, BEDROOM, BATHROOM), "G3"),
        ("laptop", (KITCHEN, BEDROOM, BATHROOM), "G2"),
        # Where no goal leads to a room it wants, the first.
        ("toothbrush", ("look east from (1, 0, 0), 1 steps away", KITCHEN), "G1"),
    ],
)
def test_the_search_stub_picks_the_goal_into_the_room_its_table_gives_for_what_is_left(missing, goals, chosen):
    assert json.loads(search.stub_answer(goals_prompt(missing, *goals)))["goal"] == chosen


def test_the_known_map_limit_knows_every_wall_before_its_first_move():
    world = world_from_mapping(
        {
            "name": "walled",
            "size": [6, 4],
            "walls": [[3, 0], [3, 1], [3, 3]],
            "objects": [{"name": "chair", "position": [5, 3]}],
            "agents": [{"position": [0, 0], "facing": "north"}],
        },
        "walled",
    )
    explorer = KnownMapExplorer(world)
    pose = Pose(0, 0, 0, "north")
    _, cells, walls = world.view(pose)

    explorer.observe(context(world.size, pose, cells, walls))

    assert explorer.map.walls == set(world.walls)
    assert explorer.map.open == {cell[:2] for cell in world.free_cells()}
    assert (5, 3, 0) not in explorer.map.seen  # told the map, not what is on it


def context(size, pose, cells, walls):
    team = TeamContext("Agent1", ("Agent1",), 1, 20, "walled", size, 3, {})
    view = View(pose, False, (), {}, "", tuple(cells), tuple(walls), ())
    setup = AgentSetup("explorer", "", False, None)
    return DecisionContext(
        team, setup, view, Teammates((), TeammatePoses({})), (), (), ("forward", "look_left", "look_right")
    )


def test_the_alone_limit_leaves_no_ground_to_a_teammate_it_is_not_told_of(tmp_path):
    # Agent1 stands to the west: the explorer that knows it turns east, the one alone to the west first.
    text = """\
        name: w
        size: [15, 1]
        objects: [{name: cup, position: [14, 0]}]
        agents: [{position: [3, 0], facing: north}, {position: [7, 0], facing: north}]
        """
    perception = MockPerception(world_file(tmp_path, text), InProcessStore(), ["Agent1", "Agent2"], seed=1)
    context = context_for(perception, "Agent2", 1, comm=False)
    assert OfflineExplorer().choose(context).action == "look_right"
    assert AloneExplorer().decide("", context).decision.action == "look_left"


@pytest.mark.parametrize("path", sorted((families.ROOT / "bench").glob("*.json")), ids=lambda path: path.name)
def test_every_figures_file_is_as_write_figures_writes_it(path):
    text = path.read_text()
    assert figures_text(json.loads(text)) == text  # compact, whole: not pretty-printed, not pasted together


def test_figures_text_is_the_same_json_a_key_and_a_row_a_line():
    figures = {"seeds": [1, 2], "rows": [{"seed": 1, "steps": None}, {"seed": 2, "steps": 30}], "overall": {"a": 1.5}}

    text = figures_text(figures)

    assert json.loads(text) == figures
    assert text.splitlines()[3] == '{"seed":1,"steps":null},'


def run_scale(tmp_path, *arguments):
    """bench/scale.py at a tiny size, in a subprocess (it runs teams as processes of their own): its figures."""
    out, plot = tmp_path / "scale.json", tmp_path / "scale.html"
    command = [sys.executable, str(families.ROOT / "bench" / "scale.py"), "--world", "gen:hall?size=12x12"]
    command += ["--steps", "2", "--out", str(out), "--plot", str(plot), *arguments]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return json.loads(out.read_text()), plot.read_text()


def test_the_scale_bench_writes_each_teams_cost_memory_and_ratios_and_its_plot(tmp_path):
    figures, page = run_scale(tmp_path, "--teams", "2,3")

    small, large = figures["teams"]
    assert (small["agents"], large["agents"]) == (2, 3)
    assert small["times_smallest"] == 1.0
    assert large["times_smallest"] == round(large["ms_per_agent_step"] / small["ms_per_agent_step"], 2)
    assert min(figures["base_rss_mb"], small["peak_rss_mb"]) > 100  # a whole interpreter and model, measured
    assert abs(small["mb_per_agent"] - (small["peak_rss_mb"] - figures["base_rss_mb"])) <= 1  # beyond the base
    floor = figures["embedding_floor"]
    assert floor["agents"] == 2 and floor["floor_ms_per_agent_step"] > 0
    ratio = small["ms_per_agent_step"] / floor["floor_ms_per_agent_step"]
    assert abs(floor["times_floor"] - ratio) <= 0.02  # worked out before the figures were rounded
    assert "| 3 | " in scale.markdown_table(figures)
    assert page.count('class="plotly-graph-div"') == 2
    assert '<script src="plotly.min.js">' in page and (tmp_path / "plotly.min.js").is_file()  # one copy, beside it


def test_the_scale_bench_stops_a_team_past_its_memory_cap_and_says_so(tmp_path):
    figures, _ = run_scale(tmp_path, "--teams", "2", "--max-rss-gb", "0.01")

    (row,) = figures["teams"]
    assert row["stopped"].startswith("its RSS passed 0.01 GB after")
    assert "ms_per_agent_step" not in row and figures["embedding_floor"] is None
    assert "| 2 | stopped: its RSS passed 0.01 GB" in scale.markdown_table(figures)


def test_the_distillation_bench_trains_on_seeds_apart_from_the_held_out_ones_and_only_on_replies(tmp_path):
    from bench import distill

    with pytest.raises(SystemExit, match="held out"):
        distill.teacher_runs(["apartment"], [2, 11], tmp_path, embedder=None)
    examples = tmp_path / "goals.jsonl"
    lines = [
        {"messages": [{"role": "user", "content": f"prompt {n}"}, {"role": "assistant", "content": f"reply {n}"}]}
        for n in range(5)
    ]
    examples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    pairs = distill.training_slice(examples, 3, seed=0)
    assert len(pairs) == 3 and len({pair["prompt"][0]["content"] for pair in pairs}) == 3
    # The prompt is what the model reads; the loss falls on the completion, the teacher's reply, alone.
    for pair in pairs:
        number = pair["prompt"][0]["content"].split()[-1]
        assert pair["completion"] == [{"role": "assistant", "content": f"reply {number}"}]
    assert len(distill.training_slice(examples, None, seed=0)) == 5


def test_the_real_model_bench_fills_the_steps_column_and_sets_each_condition_against_the_explorer(embedder):
    # The random team never sees 90% of the apartment's objects in 40 steps: its Kaplan-Meier median is not
    # reached, each run censored at its last step, and its paired difference from the explorer counts it there.
    result = real_model.measure(["offline", "random"], ["apartment"], [1, 2], 40, embedder, None)
    offline, random_team = result["rows"]
    assert offline["steps_to_share"]["censored"] == 0 and 1 < offline["steps_to_share"]["mean"] < 40
    assert offline["reached_share"] == "2 of 2" and offline["steps_vs_offline"] is None
    assert random_team["steps_to_share"]["mean"] is None and random_team["steps_to_share"]["beyond"] == 40
    assert random_team["reached_share"] == "0 of 2" and random_team["pairs_with_offline"] == 2
    assert 0 < random_team["steps_vs_offline"]["mean"] < 40 - 1  # the explorer's steps, taken from 40
    assert random_team["objects_found"]["mean"] < offline["objects_found"]["mean"]
    assert "> 40 (2 censored)" in real_model.markdown_table(result)


def test_the_real_model_benchs_held_out_seeds_were_never_tuned_on_nor_trained_on():
    from bench import distill

    held_out = set(real_model.SEEDS)
    assert not held_out & (set(real_model.PILOT_SEEDS) | set(distill.TRAIN_SEEDS))
    assert set(distill.HELD_OUT) <= held_out


def test_the_baselines_table_reads_the_distance_at_the_step_the_team_got_there_and_bounds_a_run_that_did_not():
    team = {
        "steps_to_objects": {"90%": 3},
        "cells_curve": [[1, 5], [2, 9], [3, 12], [4, 14]],
        "cells_by_distance": [[0, 5], [2, 9], [3, 12], [5, 14]],
        "distance": 5,
    }
    assert baselines.steps_and_distance({"team": team, "steps": {"Agent1": 4}}) == (3, 3, True)
    short = {**team, "steps_to_objects": {"90%": None}}
    assert baselines.steps_and_distance({"team": short, "steps": {"Agent1": 4, "Agent2": 4}}) == (4, 5, False)


def test_the_baselines_table_takes_geometric_means_over_layouts_drawn_by_family():
    runs = [
        {"family": "house", "steps_ratio": 2.0},
        {"family": "house", "steps_ratio": 8.0},
        {"family": "maze", "steps_ratio": 4.0},
    ]
    mean, low, high = baselines.geometric_interval(runs, "steps_ratio")
    assert mean == 4.0  # (2 x 8 x 4) ** (1/3)
    assert low < mean < high


def test_the_reuse_limit_counts_what_follows_the_longest_beginning_shared_with_one_or_any_prompt_before():
    from bench.prompt_reuse_limit import reuse_limits

    prompts = ["rules A\n## Step 1 x", "rules B\n## Step 1 y", "rules A\n## Step 2 z"]
    limits = reuse_limits(prompts, list)  # a character a token
    sent = sum(len(p) for p in prompts)
    # The second shares "rules " with the first; the third "rules " with the second, "rules A\n## Step " with the first.
    assert limits["one_state"] == round((len(prompts[0]) + 2 * (len(prompts[0]) - 6)) / sent, 3)
    assert limits["every_state"] == round((len(prompts[0]) + len(prompts[1]) - 6 + 3) / sent, 3)
    assert limits["step_part"] == round(3 * len("\n## Step 1 x") / sent, 3)


LLAMA_SERVER_LOG = """\
0.05.001 I slot   operator(): id  3 | task 0 | new prompt, n_ctx_slot = 8192, n_keep = 0, task.n_tokens = 578
0.05.002 I slot   operator(): id  2 | task 2 | new prompt, n_ctx_slot = 8192, n_keep = 0, task.n_tokens = 607
0.36.166 I slot print_timing: id  3 | task 0 | prompt eval time =    4406.36 ms /   578 tokens (7.62 ms per token)
0.36.166 I slot print_timing: id  3 | task 0 |        eval time =    5001.52 ms /    31 tokens (166.72 ms per token)
0.36.236 I slot print_timing: id  2 | task 2 | prompt eval time =    4009.94 ms /   207 tokens (6.61 ms per token)
"""
LLAMA_SERVER_LOG_ON = """\
0.36.166 I slot print_timing: id  3 | task 0 |       total time =    9407.87 ms /   609 tokens
0.36.236 I slot print_timing: id  2 | task 2 |        eval time =    1060.86 ms /    29 tokens (35.36 ms per token)
0.36.236 I slot print_timing: id  2 | task 2 |       total time =    5070.80 ms /   236 tokens
"""


def test_the_local_model_bench_reads_llama_servers_interleaved_tasks_each_by_its_id(tmp_path):
    from bench.local_model import ServedCall, SlotLog

    path = tmp_path / "server.log"
    path.write_text(LLAMA_SERVER_LOG)
    log = SlotLog(path, lag=0)
    assert log.calls() == []  # no call is whole before its total
    with open(path, "a") as more:
        more.write(LLAMA_SERVER_LOG_ON)
    assert log.calls() == [ServedCall(578, 578, 31, 9.40787), ServedCall(607, 207, 29, 5.0708)]
