"""Prompts laid out for a server to reuse: what is the same all run first, then the team's finds, the agent, the
step; the reply described in the syntax it is asked in, with no value to copy; Anthropic told where to cache."""

import json
import re
from dataclasses import replace

import pytest

from explorer.model.client import LLMSettings, complete_prompt
from explorer.model.schemas import decision_schema, goal_schema
from explorer.policies.goals import goal_choice
from explorer.policies.model_policy import recipients
from explorer.testing.chat_server import ChatServer
from nodes.decision_context import action_choice, render_prompt
from prompts import JSON, YAML, instruction_text, split_shared, syntax_of
from tests.support.anthropic_stub_server import AnthropicServer
from tests.test_prompt_budget import context

GOALS = "- G1: look east from (4, 6, 0), north-east, 4 steps away: about 12 unseen cells; no teammate near"


def prompts_of_a_run(choose):
    """Prompts of two agents at two steps, with different finds, messages and memories: `choose(context)` is
    what each asks for."""
    early, late = context(3, 2, 0, 50, 40), context(9, 12, 3, 250, 200)
    agents = [replace(c, team=replace(c.team, agent_id=agent)) for c in (early, late) for agent in ("Agent1", "Agent2")]
    return [render_prompt(c, choose(c)) for c in agents]


@pytest.mark.parametrize(
    "choose",
    [lambda c: action_choice(c, JSON), lambda c: action_choice(c, YAML), lambda c: goal_choice(c, JSON, GOALS)],
    ids=["actions json", "actions yaml", "goals json"],
)
def test_every_prompt_of_a_run_begins_with_the_same_part_and_the_step_comes_last(choose):
    prompts = prompts_of_a_run(choose)
    shared = {split_shared(prompt)[0] for prompt in prompts}
    assert len(shared) == 1  # a server that keeps the prompt before reuses all of it, for any agent
    (run_part,) = shared
    assert "Agent1" not in run_part and "Agent2" not in run_part and "Step" not in run_part
    for prompt in prompts:
        headings = re.findall(r"^## (.+)$", prompt, re.MULTILINE)
        found, you = headings.index("Found by the team so far"), headings.index("You")
        step = next(at for at, heading in enumerate(headings) if heading.startswith("Step "))
        assert headings.index("Your reply") < found < you < step  # the run's, the team's, the agent's, the step's


def test_the_reply_is_described_in_the_syntax_it_is_asked_in_and_shows_no_value_to_copy():
    base = context(3, 2, 0, 50, 40)
    cases = [
        (action_choice(base, JSON), JSON, decision_schema(base.available_actions, recipients(base))),
        (action_choice(base, YAML), YAML, decision_schema(base.available_actions, recipients(base))),
        (goal_choice(base, JSON, GOALS), JSON, goal_schema(["G1"])),
    ]
    for choice, syntax, schema in cases:
        prompt = render_prompt(base, choice)
        assert syntax_of(prompt) == syntax
        assert ("YAML" in choice.reply) == (syntax == YAML) and ("JSON" in choice.reply) == (syntax == JSON)
        fields = re.findall(r"^- `(\w+)`:", choice.reply, re.MULTILINE)
        assert fields == list(schema["properties"])  # in the order the schema has them, as a decoder writes them
        assert not re.search(r'^\w+: "|": "|```', choice.reply, re.MULTILINE)  # no example reply to give back
    goals = goal_choice(base, JSON, GOALS)
    assert "## Available actions" not in goals.rules  # a goal is all a schema of goals lets it give
    assert "## Available actions" in goal_choice(base, YAML, GOALS).rules  # YAML may give an action instead


def test_instruction_text_is_what_the_prompt_says_of_its_own_in_either_layout():
    prompt = render_prompt(context(9, 12, 3, 250, 200), action_choice(context(9, 12, 3, 250, 200), JSON))
    said = instruction_text(prompt)
    assert "## Your reply" in said and "You are Agent1, the explorer." in said
    assert "object number" not in said and "found thing" not in said  # the team's finds, its messages: reported
    older = (
        'You are Agent1, the explorer in a team of 2.\n\n## Step 3 of 9\nI see a lamp.\n\n## Messages from other agents\n- Agent2: "hi"'
        '\n\n## Your reply\nReply with YAML only:\nreason: "why this action"\n'
    )
    assert instruction_text(older) == (
        'You are Agent1, the explorer in a team of 2.\n\n## Your reply\nReply with YAML only:\nreason: "why this action"\n'
    )


def test_a_claude_model_is_told_where_the_prompt_stops_being_the_same(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    base = context(3, 2, 0, 50, 40)
    prompt = render_prompt(base, action_choice(base, JSON))
    shared, varying = split_shared(prompt)
    with AnthropicServer(lambda request: json.dumps({"action": "forward"})) as server:
        reply = complete_prompt(LLMSettings("anthropic/claude-3-5-haiku-latest", api_base=server.api_base), prompt)
    [request] = server.requests
    assert reply.text == '{"action": "forward"}'
    assert request["messages"][-1]["content"] == [
        {"type": "text", "text": shared, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": varying},
    ]


def test_other_models_get_the_prompt_as_it_is():
    base = context(3, 2, 0, 50, 40)
    prompt = render_prompt(base, action_choice(base, JSON))
    with ChatServer(lambda request: "action: forward") as server:
        complete_prompt(LLMSettings("openai/test-model", api_base=server.api_base, max_retries=0), prompt)
    assert server.requests[0]["messages"] == [{"role": "user", "content": prompt}]
