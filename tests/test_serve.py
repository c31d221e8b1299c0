"""`--serve`: a run watched live on a web page, in headless Chromium and over its event stream."""

import json
import socket
import subprocess
import sys
import urllib.request

import pytest

from explorer.cli.live_view import StepChannel
from harness.live_run import MAIN, PACED, LiveRun
from tests.support.paths import ROOT

pytest_plugins = ("tests.support.browser", "tests.support.redis_server")


def test_the_channel_keeps_the_latest_commits_within_its_bound_and_counts_the_lines_it_dropped():
    channel = StepChannel(capacity=3)
    for step in range(1, 6):  # no one reads: the run must not wait, nor the channel grow
        channel.put([{"step": step, "agent_id": "Agent1"}, {"step": step, "agent_id": "Agent2"}])
    assert [lines[0]["step"] for lines in channel.take()] == [3, 4, 5]
    assert channel.dropped == 4
    assert channel.take() == []
    channel.put([{"step": 6}])
    assert channel.take() == [[{"step": 6}]] and channel.dropped == 4


def events(url, hold=None):
    """The states the page is sent, read as a browser's EventSource would, to the end of the run; `hold`
    (the paced agents wait for it) is made once a state mid-run has been read."""
    states = []
    with urllib.request.urlopen(url + "events", timeout=120) as stream:
        for raw in stream:
            line = raw.decode()
            if line.startswith("data: "):
                update = json.loads(line[len("data: ") :])
                if update is not None:
                    states.append(update)
                    if hold and any(row["step"] >= 2 for row in update["state"]["agents"]):
                        hold.touch()
                    if update["state"]["ended"]:
                        return states
    return states


def page_state(browser):
    """What the page shows now: the members' steps, the messages listed, the ground the map shows seen."""
    return browser.execute_script(
        """
        const map = document.getElementById('map');
        const seen = map.data ? map.data[0].z.flat().filter(step => step !== null).length : 0;
        return {
            steps: [...document.querySelectorAll('#agents tbody tr')].map(row => Number(row.cells[1].textContent)),
            messages: document.querySelectorAll('#messages tbody tr').length,
            seen: seen,
            status: document.getElementById('status').textContent,
        };
        """
    )


def wait_until(browser, test, seconds=180):
    from selenium.webdriver.support.ui import WebDriverWait

    def passed(driver):
        state = page_state(driver)
        return state if test(state) else None

    return WebDriverWait(browser, seconds, poll_frequency=0.2).until(passed)


def test_the_page_shows_the_map_and_the_messages_as_the_run_goes_and_links_the_report_at_its_end(browser, tmp_path):
    from selenium.webdriver.common.by import By

    run_dir, hold = tmp_path / "run", tmp_path / "go on"
    args = ("--agents", "3", "--steps", "30", "--model", PACED, "--run-dir", str(run_dir), "-q")
    with LiveRun(*args, hold=hold) as run:
        browser.get_log("browser")
        browser.get(run.url)
        # The agents wait at step 3 until the file is there: the page shows the run mid-way.
        early = wait_until(browser, lambda state: min(state["steps"], default=0) >= 2 and state["messages"] >= 1)
        assert early["seen"] > 0 and "Running: step 2" in early["status"] and early["steps"] == [2, 2, 2]
        hold.touch()
        ended = wait_until(browser, lambda state: "ended" in state["status"])
        assert "The run has ended (completed)" in ended["status"] and ended["steps"] == [30, 30, 30]
        assert ended["messages"] > early["messages"] and ended["seen"] > early["seen"]
        link = browser.find_element(By.ID, "report").get_attribute("href")
        assert link == run.url + "report.html"
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
        browser.get(link)
        assert "run report" in browser.title
        run.wait_for("until Ctrl-C")
    assert run.returncode == 0  # the run's own; Ctrl-C only ended the serving
    assert (run_dir / "report.html").is_file()


@pytest.mark.parametrize("schedule", ["event", "realtime"])
def test_every_schedule_sends_its_steps_and_messages_as_they_are_committed_then_the_end(schedule, tmp_path):
    hold = tmp_path / "go on"
    args = ("--agents", "2", "--steps", "12", "--model", PACED, "--schedule", schedule, "--run-dir", str(tmp_path))
    with LiveRun(*args, "-q", hold=hold) as run:
        states = events(run.url, hold)
        with urllib.request.urlopen(run.url + "report.html", timeout=60) as report:
            assert b"run report" in report.read()
    assert run.returncode == 0
    progress = [max(row["step"] for row in state["state"]["agents"]) for state in states]
    messages = [state["state"]["sent"] for state in states]
    assert progress == sorted(progress) and 2 in progress and progress[-1] == 12  # seen mid-run, not only at the end
    assert messages[-1] > messages[0] and states[-1]["map"]["traces"]["data"]
    assert states[-1]["state"]["ended"] == {"status": "completed", "report": True}


def test_a_port_in_use_or_a_host_not_here_stops_the_command_in_one_line_before_the_run(in_process, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        busy = in_process.run("--serve", str(port), "--steps", "2", "--run-dir", str(tmp_path / "busy"))
    assert busy.returncode == 2 and busy.stderr == f"main.py: error: --serve 127.0.0.1:{port}: Address already in use\n"
    away = in_process.run("--serve", "192.0.2.1:8000", "--steps", "2", "--run-dir", str(tmp_path / "away"))
    assert away.returncode == 2 and away.stderr.startswith("main.py: error: --serve 192.0.2.1:8000: ")
    assert away.stderr.count("\n") == 1
    assert not (tmp_path / "busy").exists() and not (tmp_path / "away").exists()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--serve", "http://x"], "is not [HOST:]PORT"),
        (["--serve", "70000"], "is not [HOST:]PORT"),
        (["--serve", "8000", "--report", "somewhere"], "--serve watches a run: it does not go with --report"),
    ],
)
def test_a_bad_serve_value_is_refused_in_one_line(in_process, args, problem):
    refused = in_process.run(*args)
    assert refused.returncode == 2 and problem in refused.stderr and refused.stderr.count("\n") == 1


def test_a_split_team_is_watched_on_the_process_that_serves(tmp_path, redis_server, run_id):
    team = ["--agents", "2", "--steps", "8", "--model", PACED, "--store", redis_server.url, "--run-id", run_id]
    other = subprocess.Popen(
        [sys.executable, MAIN, *team, "--local-agents", "Agent2", "--run-dir", str(tmp_path / "second"), "-q"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    with LiveRun(*team, "--local-agents", "Agent1", "--run-dir", str(tmp_path / "first"), "-q") as run:
        states = events(run.url)
    assert run.returncode == 0 and other.wait(timeout=240) == 0, other.stderr.read() if other.stderr else ""
    last = states[-1]["state"]
    # Each process commits the whole team's steps (the other's relayed through the store): all are shown.
    assert {row["agent"]: row["step"] for row in last["agents"]} == {"Agent1": 8, "Agent2": 8}
    assert last["ended"] == {"status": "completed", "report": True}


def test_ctrl_c_during_the_run_stops_the_run_and_the_page_at_once(tmp_path):
    with LiveRun("--agents", "2", "--steps", "400", "--model", PACED, "--run-dir", str(tmp_path / "run")) as run:
        with urllib.request.urlopen(run.url + "events", timeout=120) as stream:
            for raw in stream:  # the run is under way
                if raw.startswith(b"data: {"):
                    break
        code = run.stop()
    assert code == 130 and any("Run summary" in line for line in run.printed)
    assert not any("until Ctrl-C" in line for line in run.printed)
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "interrupted"


def test_the_options_page_states_the_live_pages_bounds():
    from explorer.cli.live_view import CHANNEL_BATCHES
    from explorer.cli.web_server import REFRESH_SECONDS
    from explorer.report.live import LIVE_MESSAGES
    from explorer.report.trace_views import MAX_TRAIL

    limits = " ".join((ROOT / "docs" / "options.md").read_text().split())
    assert (
        f"the latest {LIVE_MESSAGES} messages, trails of the latest {MAX_TRAIL} cells; at most {CHANNEL_BATCHES:,} "
        f"commits wait" in limits
    )
    assert f"redrawn at most every {REFRESH_SECONDS:g} s" in limits


def test_the_live_map_is_the_reports_map_at_one_moment(tmp_path, embedder):
    from explorer.config.run_config import RunConfig
    from explorer.report.charts import _map_figure
    from explorer.report.live import LiveTeam
    from explorer.report.trace_views import map_ground
    from explorer.run.runner import ExplorationRun
    from perception.world import load_world
    from tests.support.paths import WORLDS

    run_dir = tmp_path / "run"
    config = RunConfig.of(agents=2, steps=6, world=WORLDS / "office.yaml", run_dir=run_dir, verbosity=-1)
    ExplorationRun(config.check(), embedder=embedder).execute()
    team = LiveTeam(["Agent1", "Agent2"], load_world(WORLDS / "office.yaml"))
    for line in (run_dir / "trace.jsonl").read_text().splitlines():
        team.add(json.loads(line))
    shown = json.loads(team.snapshot())
    frame = {
        "label": "now",
        "poses": team.poses,
        "trails": {agent: ([x for x, _ in trail], [y for _, y in trail]) for agent, trail in team.trails.items()},
        "found": set(team.discoveries),
    }
    ground = map_ground(team.world, team.first_seen, team.object_cells, team.discoveries)
    drawn = json.loads(
        _map_figure(ground, frame, ["Agent1", "Agent2"])[0].to_json()
    )  # the report's, as plotly checks it
    assert shown["map"]["traces"]["data"] == drawn["data"]
    assert shown["map"]["layout"]["shapes"] == drawn["layout"]["shapes"]
    assert shown["state"]["agents"][0]["step"] == 6 and shown["state"]["sent"] > 0
