import pytest
import yaml

from explorer.model.reading import ReplyError
from explorer.policies.replies import parse_decision, resolve_recipient
from nodes.interfaces import Decision
from perception.actions import ACTIONS


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
    decision = parse("thinking: hm\naction: look_left\nreason: scan\nmessage_to: Agent2\n")
    assert (decision.action, decision.message_to, decision.message_to_others) == ("look_left", "Agent2", "")


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


def test_an_alias_bomb_is_harmless():
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, 9):
        bomb += f"{chr(97 + i)}: &{chr(97 + i)} [{', '.join(['*' + chr(96 + i)] * 9)}]\n"
    decision = parse(bomb + "action: forward\nthinking: *i\nreason: [one, two]")
    assert decision.action == "forward" and decision.thinking == "" and decision.reason == "one; two"


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
