"""report.html as a person sees it: opened in headless Chromium, offline, with a replay that moves."""

import json
import shutil
import subprocess
import sys

import pytest

from explorer.config.run_config import RunConfig
from explorer.report.run_report import write_report
from explorer.run.runner import ExplorationRun
from tests.support.old_traces import as_version_1, rewrite_trace
from tests.support.paths import ROOT, WORLDS

pytest_plugins = ("tests.support.browser",)
MAIN = str(ROOT / "main.py")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, embedder):
    run_dir = tmp_path_factory.mktemp("report") / "run"
    config = RunConfig.of(agents=2, steps=8, world=WORLDS / "office.yaml", seed=3, run_dir=run_dir, verbosity=-1)
    ExplorationRun(config.check(), embedder=embedder).execute()
    return run_dir


def agent_marker_x(browser, agent):
    return browser.execute_script(
        "return document.getElementById('map').data.find(t => t.name === arguments[0]).x", agent
    )


def test_the_report_opens_offline_draws_the_map_and_charts_and_the_slider_moves_the_agents(
    finished_run, browser, tmp_path
):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    page = PageVisit(browser, finished_run / "report.html")
    assert page.console_errors == [] and page.requests == []
    assert "office (completed)" in browser.find_element(By.TAG_NAME, "h1").text
    # The map: the ground seen (a heatmap image), the walls, the agents; and both charts.
    assert browser.execute_script("return document.querySelectorAll('#map image').length") == 1
    assert browser.execute_script("return document.getElementById('map').layout.shapes.length") > 10
    for chart in ("discovery", "coverage", "coverage-distance"):
        assert browser.find_elements(By.CSS_SELECTOR, f"#{chart} .scatterlayer .trace")
    panel = browser.find_element(By.CSS_SELECTOR, "#panel tbody")
    assert panel.get_attribute("data-step") == "1" and len(panel.find_elements(By.TAG_NAME, "tr")) == 2
    browser.save_screenshot(str(tmp_path / "report-step-1.png"))
    before = {agent: agent_marker_x(browser, agent) for agent in ("Agent1", "Agent2")}
    # Drag the slider's handle to the far end, as a person would.
    grip = browser.find_element(By.CSS_SELECTOR, "#map .slider-grip-rect")
    rail = browser.find_element(By.CSS_SELECTOR, "#map .slider-rail-rect")
    ActionChains(browser).click_and_hold(grip).move_by_offset(rail.size["width"], 0).release().perform()
    browser.implicitly_wait(0)
    assert panel.get_attribute("data-step") == "8"
    after = {agent: agent_marker_x(browser, agent) for agent in ("Agent1", "Agent2")}
    assert after != before  # the agents moved over the run
    trace = [json.loads(line) for line in (finished_run / "trace.jsonl").read_text().splitlines()]
    last = {r["agent_id"]: r["pose"]["position"][0] for r in trace if r["step"] == 8}
    assert after == {agent: [x] for agent, x in last.items()}  # where the trace says they looked from at step 8
    did = [row.find_elements(By.TAG_NAME, "td")[3].text for row in panel.find_elements(By.TAG_NAME, "tr")]
    assert did == [f"{r['action']}: {r['result']['outcome']}" for r in trace if r["step"] == 8]
    browser.save_screenshot(str(tmp_path / "report-step-8.png"))


def test_the_report_says_what_the_team_found_and_said(finished_run):
    html = (finished_run / "report.html").read_text()
    summary = json.loads((finished_run / "summary.json").read_text())
    found = len(summary["objects_discovered"])
    assert f"found {found} of {summary['total_objects']}" in html
    trace = [json.loads(line) for line in (finished_run / "trace.jsonl").read_text().splitlines()]
    said = next(r["message_out"]["message"] for r in trace if r["message_out"])
    assert said.replace("'", "&#39;") in html  # the message timeline, escaped
    assert "<script src=" not in html and "<link" not in html  # nothing to fetch (the browser test checks it too)


def test_report_rebuilds_an_earlier_runs_page_and_refuses_a_directory_with_no_run(finished_run, tmp_path):
    (finished_run / "report.html").unlink()
    result = subprocess.run(
        [sys.executable, MAIN, "--report", str(finished_run)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert (finished_run / "report.html").stat().st_size > 1_000_000  # plotly's script is in it
    result = subprocess.run(
        [sys.executable, MAIN, "--report", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"main.py: error: --report: {tmp_path} has no config.json or trace.jsonl or summary.json"
    ]


def test_a_run_that_took_no_step_still_gets_its_report(finished_run, tmp_path):
    """A process stopped before its agents' first step (a split team's, say) has an empty trace."""
    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    (run_dir / "trace.jsonl").write_text("")
    write_report(run_dir)
    page = (run_dir / "report.html").read_text()
    assert "<h2>Decisions</h2>" not in page and "<h2>Decisions</h2>" in (finished_run / "report.html").read_text()


def test_report_reads_a_version_1_trace_and_refuses_one_of_an_unknown_version(finished_run, tmp_path):
    old, future = tmp_path / "old", tmp_path / "future"
    for run_dir, change in ((old, as_version_1), (future, lambda line: {**line, "trace_version": 99})):
        shutil.copytree(finished_run, run_dir)
        (run_dir / "report.html").unlink(missing_ok=True)
        rewrite_trace(run_dir, change)
    result = subprocess.run([sys.executable, MAIN, "--report", str(old)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (old / "report.html").stat().st_size > 1_000_000
    result = subprocess.run(
        [sys.executable, MAIN, "--report", str(future)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and not (future / "report.html").exists()
    assert result.stderr.strip().splitlines() == [
        f"main.py: error: {future / 'trace.jsonl'}: trace_version 99 is not one this program reads (versions 1 to 2)"
    ]


def test_a_game_run_is_shown_as_a_filmstrip_of_its_screenshots(tmp_path):
    from PIL import Image

    run_dir = tmp_path / "run"
    (run_dir / "screenshots").mkdir(parents=True)
    Image.new("RGB", (640, 360), (200, 30, 30)).save(run_dir / "screenshots" / "Agent1_step001.png")
    (run_dir / "config.json").write_text(json.dumps({"mode": "unity", "agent_ids": ["Agent1"]}))
    pose = {"position": [0, 1, 0], "facing": "north", "pitch": 0, "roll": 0}
    record = {
        "agent_id": "Agent1",
        "step": 1,
        "time": 0,
        "pose": pose,
        "visible_objects": ["red cube"],
        "visible_caption": "A red cube ahead.",
        "image_path": str(run_dir / "screenshots" / "Agent1_step001.png"),
        "action": "forward",
        "decision": {"action": "forward", "reason": "go see it"},
        "result": {"outcome": "moved", "pose": pose},
        "message_out": None,
        "new_objects": ["red cube"],
    }
    (run_dir / "trace.jsonl").write_text(json.dumps(record) + "\n")
    llm = {"calls": 2, "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": None, "parse_failures": 0, "errors": 0}
    (run_dir / "summary.json").write_text(
        json.dumps(
            {
                "status": "completed",
                "world": "Stand-in Game",
                "model": "gpt-4o-mini",
                "agents": ["Agent1"],
                "steps": {"Agent1": 1},
                "objects_discovered": ["red cube"],
                "total_objects": None,
                "first_full_discovery_step": None,
                "discovery_curve": [[1, 1]],
                "discoveries": {},
                "per_agent": {
                    "Agent1": {
                        "policy": "gpt-4o-mini",
                        "steps": 1,
                        "found_first": ["red cube"],
                        "messages_sent": 0,
                        "llm": llm,
                    }
                },
            }
        )
    )
    html = write_report(run_dir).path.read_text()
    assert html.count('src="data:image/jpeg;base64,') == 1  # embedded: the page travels alone
    assert "A red cube ahead." in html and "go see it" in html and "(0, 1, 0) facing north" in html


def test_the_report_shows_the_distance_travelled_and_the_ground_seen_by_it(finished_run):
    html = (finished_run / "report.html").read_text()
    summary = json.loads((finished_run / "summary.json").read_text())
    assert 'id="coverage-distance"' in html and "Ground seen, by distance" in html
    team = summary["team"]
    assert f"<th>Distance travelled (cells moved by the explorers)</th><td>{team['distance']}</td>" in html
    for share in ("50%", "90%", "99%"):
        steps, walked = (team[figure][share] for figure in ("steps_to_cells", "distance_to_cells"))
        shown = "not reached" if steps is None else f"{steps} steps, {walked} cells moved"
        assert f"<th>Steps, and cells moved, to {share} of the cells</th><td>{shown}</td>" in html
    assert team["distance_to_cells"]["50%"] is None or team["distance_to_cells"]["50%"] <= team["distance"]
    for agent, numbers in summary["per_agent"].items():
        share = f"{numbers['first_seen_share']:.1%}"
        assert f'<td class="num">{numbers["distance"]}</td>\n      <td class="num">{share}</td>' in html, agent
    assert "SPL" not in html  # no search task


def test_a_search_run_s_report_gives_its_spl(tmp_path, embedder):
    run_dir = tmp_path / "run"
    config = RunConfig.of(
        agents=2, steps=40, world="gen:house?size=24x14", world_seed=3, find=("toothbrush",), run_dir=run_dir
    )
    ExplorationRun(config.check(), embedder=embedder).execute()
    summary = json.loads((run_dir / "summary.json").read_text())
    search, team = summary["search"], summary["team"]
    assert search["all_found"] and 0 < search["spl"] <= 1
    html = (run_dir / "report.html").read_text()
    steps, walked = team["steps_to_cells"]["50%"], team["distance_to_cells"]["50%"]
    assert steps is not None and f"<td>{steps} steps, {walked} cells moved</td>" in html
    assert f"<th>SPL, every target (success weighted by path length)</th><td>{search['spl']:g}</td>" in html
    shortest, taken = search["shortest_path_to_target"]["toothbrush"], search["distance_to_target"]["toothbrush"]
    assert f"(shortest path {shortest}, the finder&#39;s {taken})" in html
