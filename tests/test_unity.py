"""Unity mode end to end: main.py drives the stand-in game on Xvfb, seeing through a local "vision" server."""

import base64
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.records.run_files import TraceLines

pytest.importorskip("Xlib", reason="python-xlib comes with pyautogui on Linux only")

from PIL import Image

from explorer.cli.main import main
from explorer.model.dialects import bounded
from explorer.model.schemas import vision_schema
from explorer.testing.chat_server import ChatServer
from explorer.testing.schema_stub import sent_schema
from perception.keymap import FrameFeedback
from tests.support.paths import KEYMAPS, ROOT
from tests.support.plain_windows import other_window

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import itertools

from harness.stand_in_game import OBJECTS, pose_changed_between

pytest_plugins = ("tests.support.xvfb", "tests.support.redis_server")  # x_display, start_game; redis_server, run_id
pytestmark = pytest.mark.usefixtures("x_display")

RIGHT_KEYMAP = ROOT / "tests" / "keymaps" / "split_right.yaml"
MIN_PIXELS = 30  # fewer pixels of an object's colour are not a sighting
MODEL = "openai/colour-vision"  # a model litellm does not know: allowed, with a warning


def colour_vision(script):
    """A server answer: names the stand-in game's objects by their colours in an image;
    to a decision prompt, answers `script[(agent_id, step)]`. Under a schema, in JSON with its fields."""

    def answer(request):
        content = request["messages"][-1]["content"]
        schema = sent_schema(request)
        if isinstance(content, list):
            url = next(part["image_url"]["url"] for part in content if part["type"] == "image_url")
            image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")
            counts = {colour: n for n, colour in image.getcolors(maxcolors=1 << 20)}
            seen = [name for name, colour, *_ in OBJECTS if counts.get(colour, 0) >= MIN_PIXELS]
            caption = f"A plain field under a blue sky with {', '.join(seen) or 'nothing'} in view."
            if schema:
                fields = {"caption": caption, "objects": seen}
                return json.dumps({name: fields[name] for name in schema["properties"]})
            prompt = next(part["text"] for part in content if part["type"] == "text")
            if "`caption`" in prompt:  # the combined call
                return f"```yaml\ncaption: {json.dumps(caption)}\nobjects: {json.dumps(seen)}\n```"
            if "List the distinct physical objects" in prompt:  # --vision split, second call
                return f"```yaml\n{json.dumps(seen)}\n```"
            return caption
        agent_id = re.search(r"You are (Agent\d+)", content).group(1)
        step = int(re.search(r"## Step (\d+) of", content).group(1))
        action = script[(agent_id, step)]
        if schema:
            fields = {"action": action, "message_to": "all"}
            return json.dumps({name: fields.get(name, "scripted") for name in schema["properties"]})
        return f"```yaml\nthinking: test\naction: {action}\nreason: scripted\n```"

    return answer


def run_unity(tmp_path, server, *args):
    """main.py --mode unity in a subprocess, as a user runs it; returns (process, run_dir)."""
    run_dir = tmp_path / "run"
    process = subprocess.run(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "--mode",
            "unity",
            "--model",
            MODEL,
            "--api-base",
            server.api_base,
            "--run-dir",
            str(run_dir),
            "-v",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OPENAI_API_KEY="test-key"),
    )
    return process, run_dir


def frame_files(agent_id, steps):
    """The names of the frames kept before and after each action, sorted."""
    return sorted(f"{agent_id}_step{n:03d}_{kind}.png" for n in range(1, steps + 1) for kind in ("before", "after"))


def read_pose(path):
    return json.loads(path.read_text())


def settled_pose(path, seconds=0.5):
    """The pose once the game has drawn the frames after the last key release."""
    time.sleep(seconds)
    return read_pose(path)


def test_one_agent_moves_the_game_and_records_what_it_sees(start_game, tmp_path):
    _, _, pose_file = start_game("Stand-in Game (one agent)")
    actions = ["forward", "look_right", "forward", "move_left", "look_up"]
    with ChatServer(colour_vision({("Agent1", n): a for n, a in enumerate(actions, 1)})) as server:
        process, run_dir = run_unity(
            tmp_path, server, "--agents", "1", "--steps", "5", "--window-title", r"^Stand-in Game \(one"
        )
    assert process.returncode == 0, process.stderr
    pose = settled_pose(pose_file)
    # Each held key moved the game as its action says: forward along +y, a right turn, a left strafe, a look up.
    assert pose["y"] > 0.5
    assert 10 < pose["yaw"] < 45
    assert 10 < pose["pitch"] < 45
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    assert [record["action"] for record in trace] == actions
    assert all(record["result"]["outcome"] in ("moved", "turned") for record in trace)
    assert trace[0]["result"]["detail"].startswith("held w for 0.25 s")
    # The dead-reckoned pose the agent was told follows the same actions.
    assert trace[-1]["result"]["pose"] == {"position": [1, 2, 0], "facing": "east", "pitch": 1, "roll": 0}
    assert "dead-reckoned" in trace[0]["prompt"]
    # The first view is grabbed; each later one is the after-frame of the action before it.
    screenshots = sorted(path.name for path in (run_dir / "screenshots").iterdir())
    assert screenshots == ["Agent1_step001.png"] + frame_files("Agent1", 5)
    assert [Path(r["image_path"]).name for r in trace] == ["Agent1_step001.png"] + [
        f"Agent1_step{n:03d}_after.png" for n in range(1, 5)
    ]
    assert Image.open(run_dir / "screenshots" / "Agent1_step001.png").size == (640, 360)
    assert all(r["result"]["view_change"] >= FrameFeedback().changed_share for r in trace)
    assert trace[0]["visible_objects"] and trace[0]["visible_objects"][0] == "red cube"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert "red cube" in summary["objects_discovered"] and summary["total_objects"] is None
    # A vision call and a decision call per step, both accounted.
    assert summary["llm"]["calls"] == 10 and summary["llm"]["errors"] == 0
    assert [call["purpose"] for call in trace[0]["llm"]["calls"]] == ["vision", "decision"]
    # Every call under its schema, vision too, in strict mode's shape with its bounds (the model is served at its
    # --api-base): every reply read as JSON at the first try.
    assert {call["format"] for record in trace for call in record["llm"]["calls"]} == {"json"}
    vision_schemas = [
        sent_schema(request) for request in server.requests if isinstance(request["messages"][-1]["content"], list)
    ]
    assert vision_schemas == [bounded(vision_schema())] * 5
    assert summary["llm"]["parse_failures"] == 0
    assert "litellm does not know whether 'openai/colour-vision' can read images" in (run_dir / "run.log").read_text()
    # The report shows the run as a filmstrip of what the agent saw, with each action's frames.
    report = (run_dir / "report.html").read_text()
    assert report.count('src="data:image/jpeg;base64,') == 5 * 3
    assert report.count('alt="before the action"') == 5 and "did: forward (scripted): moved, " in report


def test_walking_into_the_fence_is_seen_as_blocked_and_the_next_prompt_says_so(start_game, tmp_path):
    log = tmp_path / "positions.jsonl"
    _, _, pose_file = start_game("Arena Game", "--arena", "2", "--pose-log", str(log))
    actions = ["forward"] * 10 + ["look_right"]
    with ChatServer(colour_vision({("Agent1", n): a for n, a in enumerate(actions, 1)})) as server:
        process, run_dir = run_unity(
            tmp_path, server, "--agents", "1", "--steps", "11", "--window-title", "^Arena Game$"
        )
    assert process.returncode == 0, process.stderr
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    outcomes = [r["result"]["outcome"] for r in trace]
    # Walks of about 0.5 reach the fence's stop at y = 1.5 within four; the rest change nothing.
    assert settled_pose(pose_file)["y"] == 1.5
    assert outcomes[:3] == ["moved"] * 3 and outcomes[5:] == ["blocked"] * 5 + ["turned"]
    # Against the game's own log, at least 90% of the forward moves are read right.
    truth = [pose_changed_between(log, *r["result"]["frames"]["at"]) for r in trace[:10]]
    assert sum(moved == (outcome == "moved") for moved, outcome in zip(truth, outcomes)) >= 9, (truth, outcomes)
    # A blocked move leaves the dead-reckoned pose where it was, and the agent is told why.
    first_blocked = outcomes.index("blocked")
    poses = [r["result"]["pose"]["position"] for r in trace[first_blocked - 1 : 10]]
    assert poses == [poses[0]] * len(poses)
    assert trace[first_blocked]["result"]["detail"].startswith("the view did not change")
    assert all(r["result"]["view_change"] == 0 for r in trace[first_blocked:10])
    assert (
        f"step {first_blocked + 1}: forward -> blocked: the view did not change" in trace[first_blocked + 1]["prompt"]
    )


def test_a_pause_key_pauses_the_game_while_the_model_is_asked(start_game, tmp_path):
    log = tmp_path / "positions.jsonl"
    start_game("Pause Game", "--pose-log", str(log))
    answer = colour_vision({("Agent1", n): "forward" for n in range(1, 4)})
    asked = []  # when each model call arrived, vision and decisions alike

    def timed(request):
        asked.append(time.time())
        return answer(request)

    with ChatServer(timed) as server:
        process, run_dir = run_unity(
            tmp_path, server, "--agents", "1", "--steps", "3", "--window-title", "^Pause Game$", "--pause-key", "p"
        )
    assert process.returncode == 0, process.stderr
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    # Paused once per step, and resumed once, before the step's action.
    toggles = [entry["paused"] for before, entry in itertools.pairwise(entries) if entry["paused"] != before["paused"]]
    assert toggles == [True, False] * 3
    assert len(asked) == 6 and all([e for e in entries if e["t"] <= t][-1]["paused"] for t in asked)
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    assert [r["result"]["outcome"] for r in trace] == ["moved"] * 3  # no key fell into a pause
    assert "PAUSED" not in trace[0]["visible_caption"]


def test_two_agents_on_a_split_screen_with_two_key_maps(start_game, tmp_path):
    _, _game, pose_file = start_game("Split Game", "--split", "--size", "640x360")
    script = {("Agent1", n): "forward" for n in range(1, 4)} | {("Agent2", n): "forward" for n in range(1, 4)}
    with ChatServer(colour_vision(script)) as server:
        process, run_dir = run_unity(
            tmp_path,
            server,
            "--agents",
            "2",
            "--steps",
            "3",
            "--window-title",
            "^Split Game$",
            "--region",
            "0,0,320,360",
            "--region",
            "320,0,320,360",
            "--keymap",
            str(KEYMAPS / "unity_fps.yaml"),
            "--keymap",
            str(RIGHT_KEYMAP),
            "--vision",
            "split",
        )
    assert process.returncode == 0, process.stderr
    pose = settled_pose(pose_file)
    assert pose["left"]["y"] > 1.0  # three holds of w
    assert pose["right"]["y"] < -1.0  # three holds of i; the right viewport faces -y
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    seen = {
        agent: {o for r in trace if r["agent_id"] == agent for o in r["visible_objects"]}
        for agent in ("Agent1", "Agent2")
    }
    assert "red cube" in seen["Agent1"] and "magenta sphere" not in seen["Agent1"]
    assert seen["Agent2"] == {"magenta sphere"}  # each agent sees only its half
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["per_agent"]["Agent2"]["found_first"] == ["magenta sphere"]
    assert Image.open(run_dir / "screenshots" / "Agent2_step001.png").size == (320, 360)
    # --vision split: a caption call and an objects call, then the decision.
    assert [call["purpose"] for call in trace[0]["llm"]["calls"]] == ["vision", "vision", "decision"]
    vision_schemas = [
        sent_schema(request) for request in server.requests if isinstance(request["messages"][-1]["content"], list)
    ]
    caption_only, objects_only = bounded(vision_schema(["caption"])), bounded(vision_schema(["objects"]))
    assert vision_schemas.count(caption_only) == vision_schemas.count(objects_only) == len(vision_schemas) // 2 == 6
    assert {call["format"] for record in trace for call in record["llm"]["calls"]} == {"json"}
    assert trace[0]["visible_caption"].startswith("A plain field under a blue sky with red cube")
    # The right viewport cannot turn: its key map leaves the turns out, so the model is not offered them.
    agent2_prompt = next(r["prompt"] for r in trace if r["agent_id"] == "Agent2")
    assert "- forward:" in agent2_prompt and "- look_left:" not in agent2_prompt


def split_team_arguments(redis_url, run_id):
    """main.py's arguments for the split-screen team whose halves two processes share through Redis."""
    return [
        "--mode",
        "unity",
        "--model",
        MODEL,
        "--agents",
        "2",
        "--steps",
        "3",
        "--window-title",
        "^Team Game$",
        "--region",
        "0,0,320,360",
        "--region",
        "320,0,320,360",
        "--keymap",
        str(KEYMAPS / "unity_fps.yaml"),
        "--keymap",
        str(RIGHT_KEYMAP),
        "--store",
        redis_url,
        "--run-id",
        run_id,
        "-q",
    ]


def run_one_process_per_agent(team, api_base, tmp_path):
    """main.py once per agent, at once, each running only its own agent into tmp_path/<agent>; both must succeed."""
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "main.py"),
                *team,
                "--api-base",
                api_base,
                "--local-agents",
                agent,
                "--run-dir",
                str(tmp_path / agent),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, OPENAI_API_KEY="test-key"),
        )
        for agent in ("Agent1", "Agent2")
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr


def test_a_team_split_over_two_processes_plays_one_game_each_from_its_own_half(
    start_game, tmp_path, redis_server, run_id
):
    """Two processes, as two machines would run them: each drives its own agent's part of the game."""
    _, _, pose_file = start_game("Team Game", "--split", "--size", "640x360")
    script = {("Agent1", n): "forward" for n in range(1, 4)} | {("Agent2", n): "forward" for n in range(1, 4)}
    with ChatServer(colour_vision(script)) as server:
        run_one_process_per_agent(split_team_arguments(redis_server.url, run_id), server.api_base, tmp_path)
    pose = settled_pose(pose_file)
    assert pose["left"]["y"] > 1.0 and pose["right"]["y"] < -1.0  # each process held its own agent's keys
    traces = [
        [{k: v for k, v in r.items() if k != "timings"} for r in list(TraceLines(tmp_path / a / "trace.jsonl"))]
        for a in ("Agent1", "Agent2")
    ]
    assert traces[0] == traces[1] and len(traces[0]) == 6  # each process holds the whole team's trace
    seen = {
        agent: {o for r in traces[0] if r["agent_id"] == agent for o in r["visible_objects"]}
        for agent in ("Agent1", "Agent2")
    }
    assert "red cube" in seen["Agent1"] and seen["Agent2"] == {"magenta sphere"}
    # Each machine keeps the screenshots of the agent it runs.
    assert sorted(p.name for p in (tmp_path / "Agent2" / "screenshots").iterdir()) == [
        "Agent2_step001.png"
    ] + frame_files("Agent2", 3)


def test_the_run_stops_with_one_line_when_the_window_goes(start_game, tmp_path):
    game, _, _ = start_game("Vanishing Game")
    script = {("Agent1", n): "look_left" for n in range(1, 200)}
    answer = colour_vision(script)

    def closing(request):
        if "## Step 3 of" in str(request["messages"][-1]["content"]):
            game.terminate()
            game.wait()
        return answer(request)

    with ChatServer(closing) as server:
        process, run_dir = run_unity(tmp_path, server, "--agents", "1", "--steps", "50", "--window-title", "Vanishing")
    assert process.returncode == 1
    assert process.stderr.strip().splitlines() == [
        f"main.py: error: the game window 'Vanishing Game' is gone: the run stops (see {run_dir / 'run.log'})"
    ]
    assert len(list(TraceLines(run_dir / "trace.jsonl"))) == 2  # the finished steps are kept
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "failed"


@pytest.fixture
def start_up_error(capsys, tmp_path):
    """start_up_error(*args): main.py's exit code and one stderr line for a Unity run that must not start."""

    def run(*args):
        code = main(["--mode", "unity", "--model", MODEL, "--run-dir", str(tmp_path / "run"), *args])
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1, lines
        assert not (tmp_path / "run").exists()  # nothing started
        return code, lines[0]

    return run


def test_no_matching_window_lists_the_titles_there_are(start_game, start_up_error):
    start_game("Some Other Game")
    code, line = start_up_error("--window-title", "Unity Scene")
    assert code == 2
    assert line.startswith("main.py: error: no shown window's title matches 'Unity Scene'; the titles are: ")
    assert "'Some Other Game'" in line


def test_two_matching_windows_are_an_error(start_game, start_up_error):
    start_game("Twin Game 1")
    start_game("Twin Game 2")
    code, line = start_up_error("--window-title", "Twin Game")
    assert code == 2 and "2 shown windows match 'Twin Game'" in line


def test_minimized_and_zero_sized_windows_are_errors(start_up_error):
    with other_window("Iconified Game", shown=False, minimized=True):
        assert start_up_error("--window-title", "Iconified") == (
            2,
            "main.py: error: the window 'Iconified Game' is minimized: restore it first",
        )
    with other_window("Tiny Game", size=(1, 1)):
        assert start_up_error("--window-title", "Tiny") == (
            2,
            "main.py: error: the window 'Tiny Game' is 1x1: it shows nothing",
        )


def test_no_display_is_an_error(start_up_error, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":999")
    code, line = start_up_error("--window-title", "Game")
    assert code == 2 and line.startswith("main.py: error: no display: cannot open X display ':999'")


def test_a_key_map_with_an_unknown_key_is_an_error(start_game, start_up_error, tmp_path):
    start_game("Keyed Game")
    keymap = tmp_path / "bad.yaml"
    keymap.write_text("actions:\n  forward: spacebar\n")  # pyautogui calls it space
    code, line = start_up_error("--window-title", "Keyed Game", "--keymap", str(keymap))
    assert code == 2 and line == f"main.py: error: {keymap}: 'forward': unknown key name 'spacebar'"


def test_an_unknown_pause_key_is_an_error(start_game, start_up_error):
    start_game("Pausable Game")
    code, line = start_up_error("--window-title", "Pausable Game", "--pause-key", "pause-button")
    assert code == 2 and line.startswith("main.py: error: --pause-key: unknown key name 'pause-button'")


def test_a_region_outside_the_window_is_an_error(start_game, start_up_error):
    start_game("Small Game", "--size", "320x200")
    code, line = start_up_error("--window-title", "Small Game", "--region", "200,0,200,200")
    assert code == 2 and "does not fit in the window 'Small Game', which is 320x200" in line


@pytest.mark.parametrize(
    "model, message",
    [
        ("offline", "Agent1's model 'offline' cannot see the game: Unity mode needs a vision model"),
        ("random", "Agent1's model 'random' cannot see the game"),
        ("gpt-3.5-turbo", "Agent1's model 'gpt-3.5-turbo' cannot read images, as litellm's model table says"),
    ],
)
def test_a_model_that_cannot_see_is_an_error(start_up_error, model, message):
    code, line = start_up_error("--window-title", "Game", "--model", model)
    assert code == 2 and line.startswith(f"main.py: error: {message}")
