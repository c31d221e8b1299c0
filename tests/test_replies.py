import json
import subprocess
import sys

import pytest
import yaml

from explorer.model.reading import ReplyError
from explorer.model.reply_format import ReplyFormat
from explorer.model.schemas import decision_schema
from explorer.policies.replies import parse_decision, parse_goal_decision, resolve_recipient
from nodes.interfaces import Decision
from perception.actions import ACTIONS
from tests.support.paths import ROOT


def parse(text):
    return parse_decision(text, ACTIONS)


def test_fenced_yaml_block():
    reply = """```yaml
thinking: "I see a sofa"
action: forward
reason: "explore"
message_to_others: "sofa at (1, 2, 0)"
```"""
    assert parse(reply) == Decision("forward", "I see a sofa", "explore", "sofa at (1, 2, 0)", "all")


def test_bare_yaml():
    decision = parse("thinking: hm\naction: look_left\nreason: scan\nmessage_to: Agent2\nmessage_to_others: hi\n")
    assert (decision.action, decision.message_to, decision.message_to_others) == ("look_left", "Agent2", "hi")


def test_a_recipient_without_a_message_is_the_whole_team():
    """What the planner adds to a message with no words of the model's is news for all, not a call to one."""
    decision = parse("action: look_left\nmessage_to: Agent2\n")
    assert (decision.message_to, decision.message_to_others) == ("all", "")


def test_prose_around_a_fenced_block():
    reply = "Sure! Here is my decision.\n```yml\naction: move_up\nreason: shelves\n```\nGood luck, team!"
    assert parse(reply).action == "move_up"


def test_prose_around_bare_yaml():
    reply = "Let me think about it.\nthinking: the hall is empty\naction: backward\nreason: dead end\nThat is all."
    decision = parse(reply)
    assert (decision.action, decision.reason) == ("backward", "dead end")


def test_action_is_normalised_for_case_and_spaces():
    assert parse("action: '  Forward '").action == "forward"


def test_message_to_defaults_to_all():
    assert parse("action: forward\nmessage_to_others: hi").message_to == "all"


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("action: [unclosed", "not valid YAML"),
        ("thinking: nothing to do\nreason: none", "no `action`"),
        ("action: fly", "unknown action 'fly'"),
        ("", "no `action`"),
        ("just prose, no decision", "no `action`"),
        ("action: 42", "no `action`"),
        ("- forward\n- backward", "no `action`"),
    ],
)
def test_invalid_replies_say_what_is_wrong(reply, problem):
    with pytest.raises(ReplyError, match=problem):
        parse(reply)


def test_yaml_tags_never_execute():
    with pytest.raises(ReplyError):
        parse("action: !!python/object/apply:os.system ['echo pwned']")


def test_action_outside_the_available_ones_is_refused():
    with pytest.raises(ReplyError, match="unknown action 'move_up'"):
        parse_decision("action: move_up", ("forward", "look_left"))


def test_decision_round_trips_through_yaml():
    decision = Decision("look_up", "tall shelves: 'check'", "see the top", "lamp: on shelf", "Agent3")
    assert parse(yaml.safe_dump(decision.to_dict())) == decision


@pytest.mark.parametrize(
    "phrase, action",
    [
        ("Move Forward", "forward"),
        ("move forward.", "forward"),
        ("`forward`", "forward"),
        ("turn left", "look_left"),
        ("Turn_Right", "look_right"),
        ("go back", "backward"),
        ("strafe left", "move_left"),
        ("LOOK UP", "look_up"),
        ("look-down", "look_down"),
        ("ascend", "move_up"),
    ],
)
def test_common_phrasings_name_their_action(phrase, action):
    assert parse(f"action: {phrase}").action == action


def test_reasoning_tags_are_dropped_before_reading():
    reply = "<think>\nmaybe action: backward? no.\n</think>\n```yaml\naction: look_up\n```"
    assert parse(reply).action == "look_up"
    with pytest.raises(ReplyError):
        parse("<think>action: forward")  # an unclosed thought holds no decision


def test_json_instead_of_yaml():
    assert parse('{"thinking": "x", "action": "move_right", "reason": "y"}').action == "move_right"
    assert parse('Sure:\n```json\n{"action": "backward"}\n```').action == "backward"


def test_tab_indentation_is_read():
    assert parse("action: forward\nthinking: |\n\tline one\n\tline two").thinking == "line one\nline two"


def test_oversized_fields_are_cut():
    decision = parse(f"action: forward\nthinking: {'x' * 5000}\nmessage_to_others: {'y' * 5000}")
    assert len(decision.thinking) == 1000 and decision.thinking.endswith("…")
    assert len(decision.message_to_others) == 300


def alias_bomb():
    """About 600 bytes of YAML whose `top` is 9**9 strings once its aliases are expanded."""
    lines = ['b0: &b0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join(lines) + "\n", "*b8"


def merge_bomb():
    """`<<` merges of aliases: PyYAML's safe_load itself flattens them into 9**8 entries."""
    lines = ["m0: &m0 {k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8}"]
    lines += [f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 9)}]}}" for i in range(1, 9)]
    return "\n".join(lines) + "\n", "*m8"


DECISION = {"thinking": "t", "action": "forward", "reason": "r", "message_to_others": "m", "message_to": "all"}


def decision_with(bombed):
    """A decision's reply, with {} for the field `bombed`."""
    return "".join(f"{name}: {'{}' if name == bombed else value}\n" for name, value in DECISION.items())


# (reply kind, the field given the bomb, the reply with {} where the bomb goes)
BOMBED_FIELDS = [
    *[("decision", name, decision_with(name)) for name in DECISION],
    *[("goal", name, decision_with(name)) for name in DECISION],
    ("goal", "goal", "goal: {}\nreason: r\n"),
    ("directives", "directives", "directives: {}\n"),
    ("directives", "entry", "directives:\n  Agent1: {}\n"),
    ("directives", "goal", "directives:\n  Agent1: {{goal: {}}}\n"),
    ("directives", "facing", "directives:\n  Agent1: {{goal: [1, 1, 0], facing: {}}}\n"),
    ("directives", "action", "directives:\n  Agent1: {{action: {}}}\n"),
    ("vision", "caption", "caption: {}\nobjects: [sofa]\n"),
    ("vision", "objects", "caption: a hall\nobjects: {}\n"),
    ("vision objects", "list", "{}\n"),
    ("vision objects", "objects", "objects: {}\n"),
]


def read_bombed_field(kind, template, bomb, folder):
    """What the reader makes of the reply: "refused: why", or "read: what"."""
    from explorer.model import vision
    from explorer.model.client import LLMError, LLMSettings, Reply
    from explorer.policies.replies import parse_directives, parse_goal_decision

    definitions, top = bomb
    text = definitions + template.format(top)
    vision.complete = lambda settings, messages, schema=None: Reply(
        text, "stub"
    )  # the child's own module: no model asked
    image = folder / "view.png"
    image.write_bytes(b"not read")
    readers = {
        "decision": lambda: parse(text),
        "goal": lambda: parse_goal_decision(text, ACTIONS, 3),
        "directives": lambda: parse_directives(text, ["Agent1"], ACTIONS, (5, 5, 1)),
        "vision": lambda: vision.describe_image(LLMSettings(model="stub"), image),
        "vision objects": lambda: vision.extract_objects_from_image(LLMSettings(model="stub"), image),
    }
    try:
        return f"read: {readers[kind]()!r:.200}"
    except ReplyError as refused:
        return f"refused: {refused}"
    except LLMError as refused:
        return f"refused: {refused.kind}"


def read_every_bombed_field(folder):
    """{(bomb, kind, field): outcome}, run in a child process with bounded memory."""
    bombs = {"aliases": alias_bomb(), "merges": merge_bomb()}
    return {
        f"{bomb} in {kind} {field}": read_bombed_field(kind, template, bombs[bomb], folder)
        for bomb in bombs
        for kind, field, template in BOMBED_FIELDS
    }


CHILD = """
import json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (512 * 2**20, 512 * 2**20))
from tests.test_replies import read_every_bombed_field
print(json.dumps(read_every_bombed_field(Path(sys.argv[1]))))
"""


def test_an_alias_bomb_in_any_field_of_any_reply_is_refused_in_bounded_memory(tmp_path):
    """A few hundred bytes of YAML aliases (or `<<` merges of them) in a decision's, a goal's, a
    directive's or a vision reply's field took gigabytes; every reply with one is refused."""
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0, child.stderr[-2000:]
    outcomes = json.loads(child.stdout)
    assert len(outcomes) == 2 * len(BOMBED_FIELDS)
    for case, outcome in outcomes.items():
        assert outcome.startswith("refused"), f"{case}: {outcome}"
        assert "aliases" in outcome or outcome == "refused: bad_response", f"{case}: {outcome}"


@pytest.mark.parametrize(
    "reply",
    [
        "action: forward\nthinking:\n" + " [\n" * 3000 + " ]\n" * 3000,
        "action: forward\nthinking:\n" + "".join(" " * i + "- \n" for i in range(1, 1500, 2)) + " " * 1500 + "- x",
        '{"action": "forward", "thinking": ' + "[" * 30 + "]" * 30 + "}",  # JSON is read the same way
    ],
)
def test_deep_nesting_is_refused_not_a_recursion_error(reply):
    with pytest.raises(ReplyError, match="nests more than 20 levels deep"):
        parse(reply)


def test_a_json_reply_nested_deeper_than_the_parser_goes_is_no_json_object():
    reply_format = ReplyFormat("auto", "stub")
    asked = reply_format.constrained(decision_schema(["forward"], None), "reply")
    reply_format.answered(asked, "[" * 100_000 + "]" * 100_000)  # json.loads raises RecursionError
    assert reply_format.dialect is None  # the schema was not followed: YAML from now on


def test_fields_are_kept_as_bounded_text():
    decision = parse("action: forward\nthinking: [one, 2, true]\nreason: {nested: map}\nmessage_to_others: [[a]]")
    assert (decision.thinking, decision.reason, decision.message_to_others) == ("one; 2; True", "", "")


@pytest.mark.parametrize(
    "reply",
    [
        None,
        "",
        "   ",
        "\x00\x01\x02",
        "I'm sorry, I can't help with that.",
        "action:",
        "action: null",
        "action: []",
        "action: {go: forward}",
        "action: forward: now",
        "[action, forward]",
        "42",
        "~",
        "```yaml\n```",
        "```\naction: [\n```",
        "action: 'forward",
        "!!binary AAAA",
        "action: !!python/name:os.system",
        "action: fly\nthinking: up up and away",
        "a" * 100_000,
        "action: forward" + "\n" * 50_000 + "junk: [",
        "---\naction: forward\n---\naction: backward",
        "\ufeffaction: teleport",
        "action: forward\taction: backward",
        "```yaml\n" * 5000,
        "<think>" * 3000,
        "key: `" * 5000,
    ],
)
def test_no_reply_raises_anything_but_a_reply_error(reply):
    try:
        decision = parse(reply)
    except ReplyError:
        return
    assert decision.action in ACTIONS


@pytest.mark.parametrize(
    "message_to, recipient, noted",
    [
        ("Agent2", "Agent2", False),
        ("agent2", "Agent2", False),
        ("all", "all", False),
        ("Everyone", "all", False),
        ("the team", "all", True),
        ("Agent9", "all", True),
        ("Agent1", "all", True),  # oneself
        ("", "all", False),
    ],
)
def test_recipients_are_resolved_to_a_teammate_or_all(message_to, recipient, noted):
    resolved, note = resolve_recipient(message_to, "Agent1", ["Agent1", "Agent2", "Agent3"])
    assert resolved == recipient
    assert bool(note) == noted


def test_a_json_reply_whose_strings_hold_newlines_and_fences_is_read_as_json():
    """SmolLM2 under llama-cpp-python's json_object schema wrote this (bench/real_model.py, office, seed 2)."""
    reply = (
        '{ "goal" : "G1", "message_to": "Agent1", "message_to_others": "optional: something useful for the team, '
        'or one agent id, or all }\n```\nYou may send one short message per step to a teammate or to all." ,'
        '"reason" :", and they will leave that ground to you.\nReply with YAML only, in one fenced block:\n'
        '```yaml\nthinking: " } '
    )
    decision, goal = parse_goal_decision(reply, ACTIONS, 3)
    assert goal == 1 and decision.message_to_others.startswith("optional: something useful for the team")
    assert decision.reason.startswith(", and they will leave that ground to you.\nReply with YAML only")


@pytest.mark.parametrize("indent", [None, 2], ids=["one-line", "pretty-printed"])
def test_a_json_reply_with_a_long_string_is_read_whole(indent):
    # Each of its lines fits in the 20,000 characters a reply is read to, but one is longer than 2,000.
    fields = {"action": "forward", "message_to": "all", "message_to_others": "door", "reason": "r" * 3_000}
    decision = parse(json.dumps(fields, indent=indent))
    assert (decision.action, decision.message_to_others) == ("forward", "door")
    assert len(decision.reason) == 500 and decision.reason.startswith("rrr")  # cut as every reason is


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ('{"action": "move_left", "message_to": "all", "message_to_others": "meet me at the', ""),
        ('{\n  "action": "move_left",\n  "message_to_others": "kitchen",\n  "reason": "the hall is', "kitchen"),
        ('{"action": "move_left", "message_to_others": "", "thinking": "' + "t" * 30_000 + '"}', ""),
    ],
    ids=["cut-by-the-token-limit", "pretty-printed", "longer-than-a-reply-is-read"],
)
def test_a_json_reply_cut_short_after_its_action_keeps_its_complete_fields(reply, message):
    decision = parse(reply)
    assert (decision.action, decision.message_to_others) == ("move_left", message)


def test_a_json_reply_cut_short_inside_its_action_is_still_refused():
    with pytest.raises(ReplyError):
        parse('{"message_to": "all", "action": "move_le')
