import pytest

from explorer.replies import Decision, ReplyError, parse_decision
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


def test_decision_round_trips_through_its_own_yaml():
    decision = Decision("look_up", "tall shelves: 'check'", "see the top", "lamp: on shelf", "Agent3")
    assert parse(decision.to_yaml()) == decision
