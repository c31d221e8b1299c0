"""--reply-format: requests under a JSON schema, in the dialect the server takes, and replies read as ever."""

import json
import logging

import pytest

from explorer.config.run_config import RunConfig
from explorer.model.client import LLMError, LLMSettings, complete_prompt
from explorer.model.dialects import STRICT_REFUSED, bounded, strict
from explorer.model.reply_format import ReplyFormat
from explorer.model.schemas import decision_schema, directives_schema, goal_schema, vision_schema
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from explorer.run.stop import RunFailed
from explorer.testing.chat_server import ChatServer, error
from nodes.interfaces import StopRun

MODEL = "openai/test-model"
SCHEMA = decision_schema(["forward", "look_left"], ["Agent2"])
REFUSED_DIALECT = "1 validation error: response_format.type: Input should be 'text' or 'json_object'"


def settings(server, requested="auto"):
    return LLMSettings(MODEL, api_base=server.api_base, max_retries=0, reply_format=ReplyFormat(requested, MODEL))


def run_under_json(server, tmp_path, embedder, agents, steps):
    """A run's summary, its agents asking the server under --reply-format json."""
    config = RunConfig.of(
        agents=agents,
        steps=steps,
        model=MODEL,
        api_base=server.api_base,
        reply_format="json",
        run_dir=tmp_path / "run",
        verbosity=-1,
    )
    return ExplorationRun(config, embedder=embedder).execute()


def formats_sent(server):
    return [(record.body.get("response_format") or {}).get("type") for record in server.records]


def test_a_decision_is_asked_under_a_schema_whose_choices_come_first():
    properties = list(SCHEMA["properties"])
    assert properties[:2] == ["action", "message_to"] and SCHEMA["required"] == properties
    assert SCHEMA["properties"]["action"]["enum"] == ["forward", "look_left"]
    assert SCHEMA["properties"]["message_to"]["enum"] == ["Agent2", "all"]
    assert all("maxLength" in SCHEMA["properties"][name] for name in ("message_to_others", "reason"))


def test_the_schema_goes_in_the_first_dialect_the_server_takes():
    with ChatServer(
        lambda request: '{"action": "forward", "message_to": "all", "message_to_others": "", "reason": ""}'
    ) as server:
        reply = complete_prompt(settings(server), "go", SCHEMA)
    assert formats_sent(server) == ["json_schema"]
    sent = server.records[0].body["response_format"]["json_schema"]
    assert sent["strict"] is True and sent["schema"] == strict(SCHEMA)
    assert reply.format == "json" and reply.record("decision").format == "json"


def test_a_refused_dialect_is_followed_by_the_next_and_the_agent_remembers():
    def answer(request):
        if request.get("response_format", {}).get("type") == "json_schema":
            return error(422, REFUSED_DIALECT)
        return '{"action": "forward", "message_to": "all", "message_to_others": "", "reason": ""}'

    with ChatServer(answer) as server:
        agent = settings(server)
        first = complete_prompt(agent, "go", SCHEMA)
        second = complete_prompt(agent, "go again", SCHEMA)
    assert formats_sent(server) == ["json_schema", "json_object", "json_object"]
    assert server.records[1].body["response_format"]["schema"] == SCHEMA
    assert (first.format, second.format, first.retries) == ("json", "json", 0)


def test_a_server_that_takes_no_schema_is_asked_without_one_and_the_log_says_so(caplog):
    def answer(request):
        return error(400, "response_format is not supported") if "response_format" in request else "action: forward"

    with ChatServer(answer) as server, caplog.at_level(logging.INFO, logger="explorer"):
        agent = settings(server)
        replies = [complete_prompt(agent, "go", SCHEMA) for _ in range(2)]
    assert formats_sent(server) == ["json_schema", "json_object", None, None]
    assert [reply.format for reply in replies] == ["yaml", "yaml"]
    assert "takes no JSON schema: its replies are asked for and read as YAML" in caplog.text


def test_json_asked_of_a_server_that_takes_no_schema_stops_the_run_in_one_line():
    with (
        ChatServer(lambda request: error(422, "response_format: unsupported")) as server,
        pytest.raises(StopRun, match=r"^--reply-format json: openai/test-model takes a JSON schema in no dialect"),
    ):
        complete_prompt(settings(server, "json"), "go", SCHEMA)


def test_a_server_that_accepts_a_schema_and_ignores_it_is_not_taken_for_constrained(caplog):
    with ChatServer(lambda request: "action: forward") as server, caplog.at_level(logging.WARNING, logger="explorer"):
        agent = settings(server)
        replies = [complete_prompt(agent, "go", SCHEMA) for _ in range(2)]
    assert formats_sent(server) == ["json_schema", None]
    assert [reply.format for reply in replies] == ["json", "yaml"]
    assert "accepted response_format json_schema but did not follow it" in caplog.text


def test_yaml_sends_no_schema():
    with ChatServer(lambda request: "action: forward") as server:
        complete_prompt(settings(server, "yaml"), "go", SCHEMA)
    assert formats_sent(server) == [None]


def test_a_run_under_json_reads_enum_replies_and_counts_its_calls_per_format(tmp_path, embedder):
    def answer(request):
        schema = request["response_format"]["json_schema"]["schema"]
        action = schema["properties"]["action"]["enum"][-1]  # a choice only the schema offered
        return json.dumps({"action": action, "message_to": "all", "message_to_others": "", "reason": "enum"})

    with ChatServer(answer) as server:
        summary = run_under_json(server, tmp_path, embedder, agents=2, steps=3)
    trace = list(TraceLines(tmp_path / "run" / "trace.jsonl"))
    assert all(line["decision"]["action"] == line["action"] for line in trace)
    assert {call["format"] for line in trace for call in line["llm"]["calls"]} == {"json"}
    assert (summary["llm"]["json_calls"], summary["llm"]["yaml_calls"], summary["llm"]["parse_failures"]) == (6, 0, 0)
    # The run's model is served at its --api-base: its schemas went with their bounds.
    sent = server.records[0].body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["reason"]["maxLength"] == SCHEMA["properties"]["reason"]["maxLength"]
    assert json.loads((tmp_path / "run" / "config.json").read_text())["reply_format"] == "json"


def test_a_reply_cut_short_inside_its_json_object_keeps_the_schema():
    # A constrained reply the token limit or the server broke off begins as a JSON object: no proof
    # that the schema was ignored, so the next call is still asked under it.
    whole = '{"action": "forward", "message_to": "all", "message_to_others": "", "reason": ""}'
    cut = iter(['{ "action": "forward", "message_to": "all", "message_to_oth', whole])
    with ChatServer(lambda request: next(cut)) as server:
        agent = settings(server, "json")
        replies = [complete_prompt(agent, "go", SCHEMA) for _ in range(2)]
    assert formats_sent(server) == ["json_schema", "json_schema"]
    assert [reply.format for reply in replies] == ["json", "json"]


def test_a_call_that_fails_under_a_schema_is_recorded_in_the_format_it_was_asked_in(tmp_path, embedder):
    with ChatServer(lambda request: error(400, "the server cannot do that")) as server:
        with pytest.raises(LLMError) as failed:
            complete_prompt(settings(server, "json"), "go", SCHEMA)
        assert failed.value.record("decision").format == "json"
        config = RunConfig.of(
            agents=1,
            steps=2,
            model=MODEL,
            api_base=server.api_base,
            reply_format="json",
            run_dir=tmp_path / "run",
            verbosity=-1,
        )
        with pytest.raises(RunFailed, match="every model call of the run failed"):
            ExplorationRun(config, embedder=embedder).execute()
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    calls = [call for line in list(TraceLines(tmp_path / "run" / "trace.jsonl")) for call in line["llm"]["calls"]]
    assert [(call["format"], call["error"]) for call in calls] == [("json", "bad_request")] * 2
    assert (summary["llm"]["json_calls"], summary["llm"]["yaml_calls"]) == (2, 0)


# ---- the schema each dialect is sent ------------------------------------------------------------

EVERY_SCHEMA = {
    "decision": SCHEMA,
    "goal": goal_schema(["G1", "G2"]),
    "directives": directives_schema(["Agent1", "Agent2"], ["forward", "look_left"], (10, 8, 2)),
    "vision": vision_schema(),
}


def parts_of(schema):
    """`schema` and every schema inside it."""
    inside = [*schema.get("properties", {}).values(), *schema.get("anyOf", [])]
    inside += [schema["items"]] if "items" in schema else []
    return [schema, *(part for child in inside for part in parts_of(child))]


def objects_in(schema):
    return [part for part in parts_of(schema) if part.get("type") == "object"]


def keywords_in(schema):
    return {key for part in parts_of(schema) for key in part}


@pytest.mark.parametrize("name", EVERY_SCHEMA)
def test_strict_mode_is_sent_only_what_it_takes(name):
    shaped = strict(EVERY_SCHEMA[name])
    assert not keywords_in(shaped) & STRICT_REFUSED
    for part in objects_in(shaped):
        assert part["additionalProperties"] is False and part["required"] == list(part["properties"])


def test_strict_mode_makes_what_may_be_left_out_nullable_and_drops_the_bounds():
    shaped = strict(EVERY_SCHEMA["directives"])
    agent = shaped["properties"]["directives"]["properties"]["Agent1"]
    directive, null = agent["anyOf"]
    assert null == {"type": "null"} and directive["required"] == ["goal", "facing", "action", "reason"]
    assert directive["properties"]["goal"] == {
        "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]
    }
    assert strict(SCHEMA)["properties"]["reason"] == {"type": "string"}
    vision = strict(EVERY_SCHEMA["vision"])["properties"]["objects"]
    assert vision == {"type": "array", "items": {"type": "string"}}


def test_a_server_that_refuses_strict_mode_is_sent_the_whole_schema_with_its_bounds():
    def answer(request):
        if request.get("response_format", {}).get("type") == "json_schema":
            return error(422, REFUSED_DIALECT)
        return json.dumps({"directives": {"Agent1": {"action": "forward"}}})

    schema = EVERY_SCHEMA["directives"]
    with ChatServer(answer) as server:
        complete_prompt(settings(server), "direct", schema)
    assert server.records[1].body["response_format"] == {"type": "json_object", "schema": schema}
    cell = server.records[1].body["response_format"]["schema"]["properties"]["directives"]["properties"]["Agent1"]
    assert cell["properties"]["goal"]["maxItems"] == 3 and cell["properties"]["goal"]["items"]["maximum"] == 9


def test_a_server_of_ones_own_is_sent_strict_modes_form_with_the_bounds_then_without_them():
    refused_bounds = "response_format: Invalid schema: 'maxLength' is not permitted"

    def answer(request):
        if "maxLength" in json.dumps(request.get("response_format", {})):
            return error(400, refused_bounds)
        return '{"action": "forward", "message_to": "all", "message_to_others": "", "reason": ""}'

    own = ReplyFormat("json", MODEL, own_server=True)
    with ChatServer(answer) as server:
        reply = complete_prompt(
            LLMSettings(MODEL, api_base=server.api_base, max_retries=0, reply_format=own), "go", SCHEMA
        )
    sent = [record.body["response_format"]["json_schema"] for record in server.records]
    assert [part["schema"] for part in sent] == [bounded(SCHEMA), strict(SCHEMA)] and reply.format == "json"
    assert bounded(SCHEMA)["properties"]["reason"]["maxLength"] == SCHEMA["properties"]["reason"]["maxLength"]
    assert bounded(SCHEMA)["additionalProperties"] is False


def test_a_strict_directive_left_null_is_no_directive():
    from explorer.policies.replies import parse_directives

    reply = {"directives": {"Agent1": {"goal": None, "facing": None, "action": None}, "Agent2": None}}
    assert parse_directives(json.dumps(reply), ["Agent1", "Agent2"], ["forward"], (10, 8, 2)) == []


# ---- a schema ignored, known by the replies -----------------------------------------------------


def test_a_json_reply_the_schema_does_not_allow_shows_the_schema_was_ignored(caplog):
    # It begins as a JSON object, but no decoder held to the schema could write an action it does not offer.
    unconstrained = '{"action": "walk to the kitchen", "message_to": "all", "message_to_others": "", "reason": ""}'
    with ChatServer(lambda request: unconstrained) as server, caplog.at_level(logging.WARNING, logger="explorer"):
        agent = settings(server)
        [complete_prompt(agent, "go", SCHEMA) for _ in range(2)]
    assert formats_sent(server) == ["json_schema", None]
    assert "accepted response_format json_schema but did not follow it" in caplog.text


def test_a_bound_the_dialect_was_not_sent_is_no_sign_of_an_ignored_schema():
    # Strict mode is sent no maxLength: a longer reason is what a decoder under it may write.
    long_reason = json.dumps({"action": "forward", "message_to": "all", "message_to_others": "", "reason": "x" * 500})
    with ChatServer(lambda request: long_reason) as server:
        agent = settings(server)
        [complete_prompt(agent, "go", SCHEMA) for _ in range(2)]
    assert formats_sent(server) == ["json_schema", "json_schema"]


def test_a_reply_cut_short_with_a_member_the_schema_does_not_have_shows_it_was_ignored():
    with ChatServer(lambda request: '{"action": "forward", "thinking": "first I will", "rea') as server:
        agent = settings(server)
        [complete_prompt(agent, "go", SCHEMA) for _ in range(2)]
    assert formats_sent(server) == ["json_schema", None]


# ---- --reply-format json keeps asking for JSON --------------------------------------------------


def test_json_keeps_a_server_that_ignores_the_schema_under_it_and_marks_each_reply_off_it(caplog):
    with ChatServer(lambda request: "action: forward") as server, caplog.at_level(logging.WARNING, logger="explorer"):
        agent = settings(server, "json")
        replies = [complete_prompt(agent, "go", SCHEMA) for _ in range(3)]
    assert formats_sent(server) == ["json_schema"] * 3
    assert [(reply.format, reply.off_schema) for reply in replies] == [("json", True)] * 3
    assert "read as YAML" not in caplog.text


def test_a_run_under_json_counts_replies_off_the_schema_as_parse_failures(tmp_path, embedder):
    # Each reply is good YAML naming a good action; under json it is still not what was asked for.
    with ChatServer(lambda request: "action: forward\nreason: yaml all the same") as server:
        summary = run_under_json(server, tmp_path, embedder, agents=1, steps=2)
    assert formats_sent(server) == ["json_schema"] * len(server.records)
    assert summary["llm"]["parse_failures"] == 2
    trace = list(TraceLines(tmp_path / "run" / "trace.jsonl"))
    errors = {call["reply_error"] for line in trace for call in line["llm"]["calls"]}
    assert errors == {"the reply is not an instance of the JSON schema it was asked under"}


def test_a_vision_reply_off_its_schema_under_json_is_a_bad_response(tmp_path):
    from PIL import Image

    from explorer.model import vision

    png = tmp_path / "view.png"
    Image.new("RGB", (4, 3), (200, 30, 30)).save(png)
    with ChatServer(lambda request: "A kitchen with a kettle.") as server, pytest.raises(LLMError) as caught:
        vision.caption_image(settings(server, "json"), png)
    assert caught.value.kind == "bad_response"
    assert "not an instance of the JSON schema it was asked under" in str(caught.value)
    assert formats_sent(server) == ["json_schema"]
