"""The model check before a run (issue 29, item 5): one request for one token per distinct model, so that a
server that is not there, a model it does not know or refused credentials end the run in one line, exit
code 2, before the run directory exists; --no-preflight skips it, and a replay or a built-in policy makes none."""

import socket
import subprocess
import sys

import pytest

from explorer.config.run_config import RunConfig
from explorer.model.preflight import unreachable
from explorer.records.errors import ConfigError
from explorer.run.runner import ExplorationRun
from explorer.testing.chat_server import ChatServer, error
from tests.support.paths import ROOT

GOOD = "```yaml\nthinking: look around\naction: look_left\nreason: scan\nmessage_to_others: ''\n```"


def closed_port_base():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"  # nothing listens once the with-block ends


def main(*args):
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--agents", "1", "--steps", "2", "-q", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def run(run_dir, embedder, **settings):
    config = RunConfig.of(run_dir=run_dir, verbosity=-1, **{"agents": 2, "steps": 2, **settings}).check()
    return ExplorationRun(config, embedder=embedder).execute()


def test_an_unreachable_server_ends_the_run_in_one_line_before_its_directory_exists(tmp_path):
    run_dir = tmp_path / "run"
    result = main("--model", "openai/test-model", "--api-base", closed_port_base(), "--run-dir", str(run_dir))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    # A plain connection tells it before litellm is even imported.
    assert lines[0].startswith("main.py: error: the model check before the run failed: --api-base http://127.0.0.1:")
    assert "cannot connect to 127.0.0.1:" in lines[0] and "--no-preflight" in lines[0]
    assert not run_dir.exists()


# Issue 50, defect 15: a port that is no port printed a traceback from urllib, exit 1.
@pytest.mark.parametrize(
    "api_base",
    [
        "http://127.0.0.1:99999/v1",
        "http://127.0.0.1:abc/v1",
        "http://[::1/v1",
        "http://127.0.0.1:0/v1",
        "127.0.0.1:8000",
    ],
)
def test_an_api_base_that_is_no_server_url_is_one_line_before_anything_runs(tmp_path, in_process, api_base):
    run_dir = tmp_path / "run"
    for skip in ([], ["--no-preflight"]):
        result = in_process.run(
            "--model", "openai/test-model", "--api-base", api_base, "--run-dir", str(run_dir), *skip
        )
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == (
            "main.py: error: --api-base must be an http or https URL with a host (and a port from 1 to 65535), "
            f"such as http://127.0.0.1:8000/v1, not {api_base!r}\n"
        )
        assert not run_dir.exists()


def test_an_api_base_that_does_not_parse_keeps_its_credentials_hidden():
    with pytest.raises(ConfigError) as raised:
        RunConfig.of(model="openai/test-model", api_base="http://me:s3cret@[::1/v1?api_key=k3y").check()
    assert "s3cret" not in str(raised.value) and "k3y" not in str(raised.value)
    assert str(raised.value).endswith("not 'http://***@[::1/v1?***'")


def test_the_connection_check_tells_a_closed_port_and_an_unknown_host_from_a_listening_server():
    assert "cannot connect to 127.0.0.1:" in unreachable(closed_port_base())
    assert "cannot connect to no-such-host.invalid:80" in unreachable("http://no-such-host.invalid/v1")
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        assert unreachable(f"http://127.0.0.1:{listening.getsockname()[1]}/v1") is None


@pytest.mark.parametrize(
    "refusal, kind",
    [
        (error(404, "The model `test-model` does not exist."), "not_found error (HTTP 404)"),
        (error(401, "Incorrect API key provided"), "auth error (HTTP 401)"),
        (error(400, "model 'test-model' not found, try pulling it first"), "bad_request error (HTTP 400)"),
    ],
)
def test_an_unknown_model_or_refused_key_ends_the_run_before_its_directory_exists(tmp_path, embedder, refusal, kind):
    failed = pytest.raises(ConfigError, match="the model check before the run failed")
    with ChatServer(lambda request: GOOD, preflight=refusal) as server, failed as refused:
        run(tmp_path / "run", embedder, model="openai/test-model", api_base=server.api_base)
    assert kind in str(refused.value) and "--no-preflight" in str(refused.value)
    assert not (tmp_path / "run").exists()
    assert server.records == []  # no step asked anything
    assert [(p["model"], p["max_tokens"]) for p in server.preflights] == [("test-model", 1)]


def test_a_slow_or_busy_server_is_warned_of_and_the_run_goes_on(tmp_path, embedder):
    with ChatServer(lambda request: GOOD, preflight=error(503, "loading the model")) as server:
        summary = run(tmp_path / "run", embedder, model="openai/test-model", api_base=server.api_base)
    assert summary["status"] == "completed" and len(server.preflights) == 1


def test_no_preflight_skips_the_check(tmp_path, in_process):
    run_dir = tmp_path / "run"
    with ChatServer(lambda request: GOOD, preflight=error(404, "no such model")) as server:
        arguments = ["--model", "openai/test-model", "--api-base", server.api_base, "--no-preflight"]
        result = in_process.run(*arguments, "--agents", "1", "--steps", "2", "--run-dir", str(run_dir), "-q")
    assert result.returncode == 0 and server.preflights == [] and len(server.records) == 2
    assert (run_dir / "summary.json").exists()


def test_each_distinct_model_is_checked_once_and_no_budget_counts_the_check(tmp_path, embedder):
    with ChatServer(lambda request: GOOD) as server:
        summary = run(
            tmp_path / "run",
            embedder,
            model="openai/explorer",
            coordinator="openai/coordinator",
            api_base=server.api_base,
            steps=4,
            max_calls=2,
        )
    assert sorted(p["model"] for p in server.preflights) == ["coordinator", "explorer"]
    assert summary["status"] == "budget_exhausted"
    assert len(server.records) == 2 == summary["llm"]["calls"]  # the run's own calls, as --max-calls 2 allows


def test_a_replay_and_the_built_in_policies_make_no_request(tmp_path, embedder):
    with ChatServer(lambda request: GOOD) as server:
        run(tmp_path / "recorded", embedder, model="openai/test-model", api_base=server.api_base)
    unreachable = closed_port_base()  # a check would be refused here: none is made
    replayed = run(
        tmp_path / "replay",
        embedder,
        model="openai/test-model",
        api_base=unreachable,
        replay_replies=tmp_path / "recorded",
    )
    assert replayed["status"] == "completed" and len(server.preflights) == 1  # the recorded run's own
    for policy in ("offline", "random"):
        assert run(tmp_path / policy, embedder, model=policy, api_base=unreachable)["status"] == "completed"
