"""explorer/model/client.py and vision.py through the real litellm path, against a local OpenAI-compatible server."""

import base64
import os
import socket
import subprocess
import sys
import threading
import time
import warnings

import pytest
from PIL import Image

from explorer.model import client as llm
from explorer.model import vision
from explorer.model.client import AuthenticationFailed, LLMError, LLMSettings
from explorer.testing.chat_server import (
    ChatServer,
    Scripted,
    chat_completion,
    error,
    in_turn,
)
from tests.support.paths import ROOT

FAKE_KEY = "placeholder-not-a-key-NeverShown-0123"


@pytest.fixture(autouse=True)
def no_api_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def settings_for(server, **changes):
    fields = {"model": "openai/test-model", "api_base": server.api_base, "timeout": 5.0, **changes}
    return LLMSettings(**fields)


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def png(tmp_path):
    path = tmp_path / "view.png"
    Image.new("RGB", (4, 3), (200, 30, 30)).save(path)
    return path


# ---- a good call ----------------------------------------------------------------------------------


def test_a_good_call_carries_the_prompt_and_returns_text_and_tokens():
    with ChatServer(lambda request: "  hello there  ") as server:
        reply = llm.complete_prompt(settings_for(server, temperature=0.7, max_tokens=55), "Where is the lamp?")
    [record] = server.records
    assert record.body["messages"] == [{"role": "user", "content": "Where is the lamp?"}]
    assert record.body["model"] == "test-model"
    assert (record.body["temperature"], record.body["max_tokens"]) == (0.7, 55)
    assert record.headers["Authorization"] == "Bearer not-needed"  # no key set: a local server gets a placeholder
    assert reply.text == "  hello there  "
    assert (reply.model, reply.prompt_tokens, reply.completion_tokens) == ("openai/test-model", 100, 20)
    assert reply.latency > 0 and reply.retries == 0
    assert reply.cost_usd is None  # litellm has no price for test-model, and the settings give none


def test_complete_sends_the_whole_conversation():
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    with ChatServer(lambda request: "ok") as server:
        llm.complete(settings_for(server), messages)
    assert server.requests[0]["messages"] == messages


def test_a_reasoning_model_is_sent_no_temperature_it_would_refuse():
    with ChatServer(lambda request: "ok") as server:
        reply = llm.complete_prompt(LLMSettings(model="openai/o3-mini", api_base=server.api_base), "hi")
    assert reply.text == "ok"
    assert "temperature" not in server.requests[0]


def test_prices_in_the_settings_give_the_cost_of_an_unknown_model():
    with ChatServer(lambda request: "ok") as server:
        reply = llm.complete_prompt(settings_for(server, price_in=1.0, price_out=2.0), "hi")
    assert reply.cost_usd == pytest.approx((100 * 1.0 + 20 * 2.0) / 1e6)


def test_a_model_litellm_knows_is_priced_by_litellm():
    prices = llm._litellm().model_cost["gpt-4o-mini"]
    expected = 100 * prices["input_cost_per_token"] + 20 * prices["output_cost_per_token"]
    with ChatServer(lambda request: "ok") as server:
        # The server answers with the model it was asked for, "gpt-4o-mini", which litellm prices;
        # litellm's own price wins over the settings'.
        settings = LLMSettings(model="openai/gpt-4o-mini", api_base=server.api_base, price_in=1000.0)
        reply = llm.complete_prompt(settings, "hi")
    assert expected > 0
    assert reply.cost_usd == pytest.approx(expected)


def test_litellm_is_imported_without_touching_the_network():
    # In a fresh process, every host lookup and connection is counted and refused.
    # (Without the settings, litellm looks up raw.githubusercontent.com here.)
    script = """
import socket
attempts = []
def refuse(*args):
    attempts.append(args)
    raise OSError("no network in tests")
socket.getaddrinfo = refuse  # a fetch looks up its host first
socket.socket.connect = refuse
from explorer.model import client as llm
assert llm._litellm().model_cost  # the local price table
print(len(attempts))
"""
    env = {key: value for key, value in os.environ.items() if not key.startswith("LITELLM_")}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"


# ---- retries --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [error(500), error(503), error(429), Scripted(drop=True), Scripted(body="{not json")],
    ids=["500", "503", "429", "dropped-connection", "malformed-json"],
)
def test_a_passing_failure_is_retried(failure):
    sleeps = []
    with ChatServer(in_turn(failure, "fine now")) as server:
        reply = llm.complete_prompt(settings_for(server), "hi", sleep=sleeps.append)
    assert reply.text == "fine now" and reply.retries == 1
    assert len(server.requests) == 2
    assert len(sleeps) == 1 and 0 <= sleeps[0] <= llm.BACKOFF_BASE


def test_retries_back_off_and_give_up_after_max_retries():
    sleeps = []
    with ChatServer(lambda request: error(500, "overloaded")) as server, pytest.raises(LLMError) as caught:
        llm.complete_prompt(settings_for(server, max_retries=3), "hi", sleep=sleeps.append)
    assert (caught.value.kind, caught.value.status, caught.value.retries) == ("server", 500, 3)
    assert len(server.requests) == 4
    # Full jitter under a ceiling that doubles: 0.5, 1, 2 seconds.
    assert len(sleeps) == 3 and all(0 <= s <= llm.BACKOFF_BASE * 2**i for i, s in enumerate(sleeps))
    assert "after 3 retries" in str(caught.value) and "overloaded" in str(caught.value)


def test_retry_after_is_honoured_and_capped():
    sleeps = []
    answers = in_turn(error(429, headers={"Retry-After": "3"}), error(429, headers={"Retry-After": "600"}), "ok")
    with ChatServer(answers) as server:
        reply = llm.complete_prompt(settings_for(server), "hi", sleep=sleeps.append)
    assert reply.retries == 2
    assert sleeps == [3.0, llm.RETRY_AFTER_CAP]


def test_the_wait_counts_in_the_latency():
    with ChatServer(in_turn(error(500), "ok")) as server:
        reply = llm.complete_prompt(settings_for(server), "hi", sleep=lambda seconds: time.sleep(0.3))
    assert reply.latency >= 0.3


def test_a_stall_is_cut_off_at_the_timeout_and_retried():
    with ChatServer(in_turn(Scripted(text="too late", delay=2.0), "in time")) as server:
        start = time.perf_counter()
        reply = llm.complete_prompt(settings_for(server, timeout=0.5), "hi", sleep=lambda seconds: None)
        elapsed = time.perf_counter() - start
    assert reply.text == "in time" and reply.retries == 1
    assert len(server.requests) == 2
    assert elapsed < 1.8  # did not wait for the stalled answer


def test_a_server_that_keeps_stalling_gives_a_timeout_error_quickly():
    sleeps = []
    with ChatServer(lambda request: Scripted(text="too late", delay=2.0)) as server:
        start = time.perf_counter()
        with pytest.raises(LLMError) as caught:
            llm.complete_prompt(settings_for(server, timeout=0.5, max_retries=1), "hi", sleep=sleeps.append)
        elapsed = time.perf_counter() - start
    assert (caught.value.kind, caught.value.retries) == ("timeout", 1)
    assert len(server.requests) == 2 and len(sleeps) == 1
    assert elapsed < 3.0


def test_the_timeout_bounds_the_whole_call_not_each_read():
    # One byte every 0.2 s: no read waits long, but the whole reply would take a minute.
    with ChatServer(lambda request: Scripted(text="slowly", trickle=0.2)) as server:
        start = time.perf_counter()
        with pytest.raises(LLMError) as caught:
            llm.complete_prompt(settings_for(server, timeout=1.0, max_retries=0), "hi")
        elapsed = time.perf_counter() - start
    assert caught.value.kind == "timeout" and "no whole reply within 1 s" in str(caught.value)
    assert elapsed < 10  # far from the minute the reply takes


def test_a_stopping_run_abandons_its_calls_in_flight():
    gate = llm.CallGate(4)
    with ChatServer(lambda request: Scripted(text="too late", delay=30)) as server:
        threading.Timer(0.5, gate.cancel).start()
        start = time.perf_counter()
        with pytest.raises(LLMError) as caught:
            llm.complete_prompt(settings_for(server, timeout=60.0, gate=gate), "hi")
        elapsed = time.perf_counter() - start
    assert caught.value.kind == "cancelled" and caught.value.retries == 0
    assert elapsed < 10  # not the 30 s the server takes, nor the 60 s timeout


def test_a_refused_connection_is_retried_then_reported_on_one_line():
    sleeps = []
    settings = LLMSettings(
        model="openai/test-model", api_base=f"http://127.0.0.1:{closed_port()}/v1", timeout=2.0, max_retries=2
    )
    with pytest.raises(LLMError) as caught:
        llm.complete_prompt(settings, "hi", sleep=sleeps.append)
    assert caught.value.kind == "connection"  # litellm says InternalServerError 500; the cause says otherwise
    assert caught.value.status is None and caught.value.retries == 2
    assert len(sleeps) == 2
    assert "\n" not in str(caught.value) and "openai/test-model" in str(caught.value)


@pytest.mark.parametrize("kind", ["no-content", "blank-content", "no-choices"])
def test_a_reply_without_text_is_a_bad_response_asked_again_once(kind):
    body = chat_completion("   ")
    if kind == "no-content":
        body["choices"][0]["message"]["content"] = None
    if kind == "no-choices":
        body["choices"] = []
    sleeps = []
    with ChatServer(lambda request: Scripted(body=body)) as server, pytest.raises(LLMError) as caught:
        llm.complete_prompt(settings_for(server, max_retries=4), "hi", sleep=sleeps.append)
    assert (caught.value.kind, caught.value.retries) == ("bad_response", 1)
    assert len(server.requests) == 2


def with_usage(prompt_tokens, completion_tokens=20):
    body = chat_completion("action: forward")
    body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    return Scripted(body=body)


def test_usage_that_is_not_whole_numbers_is_a_bad_response_in_one_line_with_no_warnings():
    # litellm refuses such a reply whole, with a traceback in its message; pydantic warns on stderr each time.
    with (
        ChatServer(lambda request: with_usage("abc", 1.5)) as server,
        warnings.catch_warnings(record=True) as warned,
        pytest.raises(LLMError) as caught,
    ):
        warnings.simplefilter("always")
        llm.complete_prompt(settings_for(server, max_retries=4), "hi", sleep=lambda seconds: None)
    assert (caught.value.kind, caught.value.retries, len(server.requests)) == ("bad_response", 1, 2)
    message = str(caught.value)
    assert "the reply's token usage is not whole numbers" in message and "prompt_tokens 'abc'" in message
    assert "Traceback" not in message and "\n" not in message
    assert [str(warning.message) for warning in warned] == []


def test_a_run_on_a_server_whose_usage_is_text_says_so_in_lines_of_its_own(tmp_path):
    with ChatServer(lambda request: with_usage("abc"), preflight=lambda request: with_usage("abc")) as server:
        result = subprocess.run(
            [sys.executable, str(ROOT / "main.py"), "--model", "openai/test-model", "--api-base", server.api_base]
            + ["--agents", "2", "--steps", "2", "--timeout", "5", "--run-dir", str(tmp_path / "run")],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 1 and "every model call of the run failed" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout and "Pydantic" not in result.stderr
    log = (tmp_path / "run" / "run.log").read_text()
    assert "the reply's token usage is not whole numbers (prompt_tokens 'abc')" in log and "Traceback" not in log


# ---- failures that are never retried ----------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])  # litellm raises a bare APIError for 403
def test_refused_credentials_stop_at_once(status, capsys):
    sleeps = []
    with (
        ChatServer(lambda request: error(status, "invalid api key")) as server,
        pytest.raises(AuthenticationFailed) as caught,
    ):
        llm.complete_prompt(settings_for(server), "hi", sleep=sleeps.append)
    assert (caught.value.kind, caught.value.status, caught.value.retries) == ("auth", status, 0)
    assert len(server.requests) == 1 and sleeps == []
    assert capsys.readouterr().out == ""  # litellm's "Give Feedback" banner would break the live view


@pytest.mark.parametrize("status, kind", [(400, "bad_request"), (404, "not_found"), (422, "bad_request")])
def test_client_errors_are_raised_at_once(status, kind):
    sleeps = []
    with ChatServer(lambda request: error(status, "no such thing")) as server, pytest.raises(LLMError) as caught:
        llm.complete_prompt(settings_for(server), "hi", sleep=sleeps.append)
    assert not isinstance(caught.value, AuthenticationFailed)
    assert (caught.value.kind, caught.value.status) == (kind, status)
    assert len(server.requests) == 1 and sleeps == []


def test_a_missing_key_is_an_authentication_failure_before_any_request():
    # Without the openai/ prefix there is no placeholder key, and the OpenAI client refuses to start.
    with ChatServer(lambda request: "never") as server, pytest.raises(AuthenticationFailed) as caught:
        llm.complete_prompt(LLMSettings(model="gpt-4o-mini", api_base=server.api_base), "hi", sleep=lambda s: None)
    assert server.requests == [] and caught.value.retries == 0


# ---- secrets --------------------------------------------------------------------------------------


def test_the_api_key_never_appears_in_an_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)

    def echo_the_key(request):
        return error(401, f"Incorrect API key provided: {server.records[-1].headers['Authorization']}")

    with ChatServer(echo_the_key) as server, pytest.raises(AuthenticationFailed) as caught:
        llm.complete_prompt(settings_for(server), "hi")
    assert server.records[0].headers["Authorization"] == f"Bearer {FAKE_KEY}"  # the key was sent and echoed
    assert FAKE_KEY not in str(caught.value) and FAKE_KEY not in repr(caught.value)
    assert "Bearer ***" in str(caught.value)
    assert caught.value.__context__ is None or FAKE_KEY not in str(caught.value.__context__)


def test_redact_hides_every_key_and_token(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "anthropic-secret-1")
    monkeypatch.setenv("HF_TOKEN", "hf_secret_2")
    monkeypatch.setenv("LOOKS_LIKE_A_KEY", "plain-secret-3")
    monkeypatch.setenv("EMPTY_KEY", "")
    monkeypatch.setenv("DISPLAY_NAME", "visible-4")
    text = "a anthropic-secret-1 b hf_secret_2 c plain-secret-3 d visible-4"
    assert llm.redact(text) == "a *** b *** c *** d visible-4"


def test_reply_text_is_redacted_too(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-777-secret")
    with ChatServer(lambda request: "the token is tok-777-secret") as server:
        reply = llm.complete_prompt(settings_for(server), "hi")
    assert reply.text == "the token is ***"


# ---- vision ---------------------------------------------------------------------------------------


def image_url_of(request):
    [message] = request["messages"]
    [url] = [part["image_url"]["url"] for part in message["content"] if part["type"] == "image_url"]
    return url


def prompt_of(request):
    [message] = request["messages"]
    return " ".join(part["text"] for part in message["content"] if part["type"] == "text")


def test_an_image_goes_as_a_data_url_with_the_prompt(png):
    with ChatServer(lambda request: "  A red wall.\n") as server:
        caption, reply = vision.caption_image(settings_for(server), png)
    assert caption == "A red wall." and reply.prompt_tokens == 100
    [request] = server.requests
    assert request["messages"][0]["role"] == "user"
    url = image_url_of(request)
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png.read_bytes()
    assert "Describe what this image shows" in prompt_of(request)


def test_a_jpeg_is_sent_as_image_jpeg(tmp_path):
    path = tmp_path / "view.JPG"
    Image.new("RGB", (4, 3), (0, 90, 0)).save(path, format="JPEG")
    with ChatServer(lambda request: "green") as server:
        vision.caption_image(settings_for(server), path)
    assert image_url_of(server.requests[0]).startswith("data:image/jpeg;base64,")


def test_describe_image_gets_caption_and_objects_in_one_call(png):
    many = ", ".join(f"thing{i}" for i in range(40))
    answer = (
        f'```yaml\ncaption: "A kitchen with a red kettle."\nobjects: [Kettle, " mug ", kettle, 42, null, {many}]\n```'
    )
    with ChatServer(lambda request: answer) as server:
        caption, objects, reply = vision.describe_image(settings_for(server), png)
    assert len(server.requests) == 1
    assert "caption" in prompt_of(server.requests[0]) and "objects" in prompt_of(server.requests[0])
    assert caption == "A kitchen with a red kettle."
    assert objects[:3] == ["kettle", "mug", "thing0"]  # lower-case, stripped, once each, non-strings dropped
    assert len(objects) == vision.MAX_OBJECTS
    assert reply.completion_tokens == 20


def test_describe_image_reads_bare_yaml_without_objects(png):
    with ChatServer(lambda request: "caption: An empty hall.\nobjects: []") as server:
        caption, objects, _ = vision.describe_image(settings_for(server), png)
    assert (caption, objects) == ("An empty hall.", [])


def test_extract_objects_reads_a_fenced_list_inside_prose(png):
    answer = "Sure! Here is what I see:\n\n```yaml\n- Sofa\n- floor lamp\n- sofa\n```\n\nLet me know if you need more."
    with ChatServer(lambda request: answer) as server:
        objects, _ = vision.extract_objects_from_image(settings_for(server), png)
    assert objects == ["sofa", "floor lamp"]
    assert "JSON object" in prompt_of(server.requests[0])


@pytest.mark.parametrize(
    "reply_text", ["I see a chair: and: a table: [", "caption: [unclosed", "objects: [sofa]", "A sofa."]
)
def test_an_unparseable_vision_reply_is_a_bad_response(png, reply_text):
    with ChatServer(lambda request: reply_text) as server, pytest.raises(LLMError) as caught:
        vision.describe_image(settings_for(server), png)
    assert caught.value.kind == "bad_response"
    assert reply_text in str(caught.value)


def test_a_long_unparseable_reply_is_cut_to_200_characters_in_the_error(png):
    reply_text = "".join(f"word{i} " for i in range(100))
    with ChatServer(lambda request: reply_text) as server, pytest.raises(LLMError) as caught:
        vision.describe_image(settings_for(server), png)
    message = str(caught.value)
    assert reply_text[: llm.RAW_REPLY_LIMIT] in message
    assert reply_text[: llm.RAW_REPLY_LIMIT + 1] not in message


def test_extract_objects_refuses_a_reply_that_is_not_a_list(png):
    with ChatServer(lambda request: "A sofa and a lamp.") as server, pytest.raises(LLMError) as caught:
        vision.extract_objects_from_image(settings_for(server), png)
    assert caught.value.kind == "bad_response" and "A sofa and a lamp." in str(caught.value)


def test_a_missing_image_is_a_bad_request_and_sends_nothing(tmp_path):
    missing = tmp_path / "nowhere.png"
    with ChatServer(lambda request: "never") as server, pytest.raises(LLMError) as caught:
        vision.describe_image(settings_for(server), missing)
    assert caught.value.kind == "bad_request"
    assert str(caught.value) == f"image file not found: {missing}"
    assert server.requests == []
