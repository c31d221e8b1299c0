"""Ollama's dialect: through litellm's ollama_chat/ provider, the JSON schema travels as Ollama's `format`."""

import json
import logging

from PIL import Image

from explorer.config.run_config import RunConfig
from explorer.model import vision
from explorer.model.client import LLMSettings, complete_prompt
from explorer.model.reply_format import ReplyFormat
from explorer.model.schemas import decision_schema, vision_schema
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from explorer.testing.chat_server import error
from tests.support.ollama_stub_server import OllamaServer

MODEL = "ollama_chat/smollm2"
SCHEMA = decision_schema(["forward", "look_left"], None)
FORWARD = json.dumps({"action": "forward", "reason": "open ground"})


def settings(server, requested="auto"):
    return LLMSettings(MODEL, api_base=server.api_base, max_retries=0, reply_format=ReplyFormat(requested, MODEL))


def test_the_whole_schema_travels_as_ollamas_format():
    with OllamaServer(lambda request: FORWARD) as server:
        reply = complete_prompt(settings(server), "go", SCHEMA)
    [request] = server.requests
    assert request["format"] == SCHEMA  # its bounds too: Ollama's grammar takes them
    assert request["format"]["properties"]["reason"]["maxLength"] == 160
    assert "response_format" not in request and request["stream"] is False
    assert (reply.text, reply.format, reply.prompt_tokens) == (FORWARD, "json", 100)


def test_yaml_sends_ollama_no_format():
    with OllamaServer(lambda request: "action: forward") as server:
        complete_prompt(settings(server, "yaml"), "go", SCHEMA)
    assert "format" not in server.requests[0]


def test_an_ollama_that_refuses_the_format_is_asked_without_one(caplog):
    def answer(request):
        return error(400, 'invalid format: expected "json" or a JSON schema') if "format" in request else FORWARD

    with OllamaServer(answer) as server, caplog.at_level(logging.INFO, logger="explorer"):
        agent = settings(server)
        replies = [complete_prompt(agent, "go", SCHEMA) for _ in range(2)]
    assert ["format" in request for request in server.requests] == [True, False, False]
    assert [reply.format for reply in replies] == ["yaml", "yaml"]
    assert "takes no JSON schema" in caplog.text


def test_a_vision_call_sends_the_image_and_the_vision_schema(tmp_path):
    png = tmp_path / "view.png"
    Image.new("RGB", (4, 3), (200, 30, 30)).save(png)
    answer = json.dumps({"caption": "A red wall.", "objects": ["Wall Lamp", "rug"]})
    with OllamaServer(lambda request: answer) as server:
        caption, objects, reply = vision.describe_image(settings(server), png)
    [request] = server.requests
    assert request["format"] == vision_schema() and len(request["messages"][0]["images"]) == 1
    assert (caption, objects, reply.format) == ("A red wall.", ["wall lamp", "rug"], "json")


def test_a_team_runs_on_ollama_under_its_format(tmp_path, embedder):
    def answer(request):
        action = request["format"]["properties"]["action"]["enum"][-1]  # a choice only the schema offered
        return json.dumps({"action": action, "message_to": "all", "message_to_others": "", "reason": "enum"})

    with OllamaServer(answer) as server:
        config = RunConfig.of(
            agents=2,
            steps=3,
            model=MODEL,
            api_base=server.api_base,
            reply_format="json",
            run_dir=tmp_path / "run",
            verbosity=-1,
        )
        summary = ExplorationRun(config, embedder=embedder).execute()
    assert len(server.preflights) == 1 and server.preflights[0]["options"]["num_predict"] == 1
    trace = list(TraceLines(tmp_path / "run" / "trace.jsonl"))
    assert all(line["decision"]["action"] == line["action"] for line in trace)
    assert (summary["llm"]["json_calls"], summary["llm"]["yaml_calls"], summary["llm"]["parse_failures"]) == (6, 0, 0)
