import threading

import pytest

from explorer.lockstep import Lockstep, RunStopped
from explorer.store import BadRecipient, SharedStore


def team(*agent_ids):
    store = SharedStore()
    for agent_id in agent_ids:
        store.register_agent(agent_id, {"position": [0, 0, 0]})
    return store


def texts(messages):
    return [m.message for m in messages]


def test_direct_message_reaches_only_its_recipient():
    store = team("Agent1", "Agent2", "Agent3")
    store.send_message("Agent1", "Agent2", "hello two")
    assert texts(store.read_mailbox("Agent2")) == ["hello two"]
    assert store.read_mailbox("Agent3") == []
    assert store.read_mailbox("Agent1") == []


def test_broadcast_reaches_every_other_agent_but_not_the_sender():
    store = team("Agent1", "Agent2", "Agent3")
    store.send_message("Agent2", "all", "found a lamp")
    assert texts(store.read_mailbox("Agent1")) == ["found a lamp"]
    assert texts(store.read_mailbox("Agent3")) == ["found a lamp"]
    assert store.read_mailbox("Agent2") == []


def test_reading_returns_messages_in_order_and_empties_the_mailbox():
    store = team("Agent1", "Agent2")
    for i in range(3):
        store.send_message("Agent1", "Agent2", f"m{i}")
    assert texts(store.read_mailbox("Agent2")) == ["m0", "m1", "m2"]
    assert store.read_mailbox("Agent2") == []


def test_history_keeps_every_message_after_reading():
    store = team("Agent1", "Agent2")
    store.send_message("Agent1", "all", "a")
    store.send_message("Agent2", "Agent1", "b")
    store.read_mailbox("Agent1")
    store.read_mailbox("Agent2")
    assert [(m.sender, m.recipient, m.message) for m in store.history()] == [
        ("Agent1", "all", "a"),
        ("Agent2", "Agent1", "b"),
    ]


def test_message_to_unknown_agent_is_a_recorded_error_and_delivers_nothing():
    store = team("Agent1", "Agent2")
    with pytest.raises(BadRecipient):
        store.send_message("Agent1", "Agent9", "hi", step=4)
    assert store.errors() == [
        {"sender": "Agent1", "recipient": "Agent9", "step": 4, "error": "recipient 'Agent9' is not in the team"}
    ]
    assert store.history() == []
    assert store.read_mailbox("Agent2") == []


def test_a_message_to_oneself_is_a_recorded_error():
    store = team("Agent1", "Agent2")
    with pytest.raises(BadRecipient, match="is the sender"):
        store.send_message("Agent1", "Agent1", "note to self")
    assert store.read_mailbox("Agent1") == [] and store.history() == []
    assert len(store.errors()) == 1


def test_objects_only_grow_and_remember_the_first_finder():
    store = team("Agent1", "Agent2")
    assert store.add_objects(["lamp", "sofa"], "Agent1", 1) == ["lamp", "sofa"]
    assert store.add_objects(["sofa", "bed"], "Agent2", 2) == ["bed"]
    assert store.objects() == ["lamp", "sofa", "bed"]
    assert store.discoveries()["sofa"] == {"finder": "Agent1", "step": 1}


def test_positions_are_kept_per_agent():
    store = team("Agent1", "Agent2")
    store.update_position("Agent2", {"position": [3, 4, 0]})
    assert store.positions()["Agent2"] == {"position": [3, 4, 0]}
    assert store.positions()["Agent1"] == {"position": [0, 0, 0]}


def test_many_threads_lose_and_duplicate_no_message():
    agents = [f"Agent{i}" for i in range(1, 9)]
    store = team(*agents)
    per_sender = 300
    received = {agent: [] for agent in agents}
    done = threading.Event()

    def send(sender):
        for i in range(per_sender):
            store.send_message(sender, "all" if i % 2 else agents[(agents.index(sender) + 1) % len(agents)], f"{sender}:{i}")

    def read(agent):
        while not done.is_set():
            received[agent].extend(texts(store.read_mailbox(agent)))
        received[agent].extend(texts(store.read_mailbox(agent)))

    readers = [threading.Thread(target=read, args=(a,)) for a in agents]
    senders = [threading.Thread(target=send, args=(a,)) for a in agents]
    for thread in readers + senders:
        thread.start()
    for thread in senders:
        thread.join()
    done.set()
    for thread in readers:
        thread.join()

    # Each agent gets every broadcast of the 7 others, plus the direct
    # messages of the agent before it, each exactly once and in send order.
    for index, agent in enumerate(agents):
        previous = agents[index - 1]
        expected = sorted(
            f"{s}:{i}" for s in agents if s != agent for i in range(per_sender) if i % 2 or s == previous
        )
        assert sorted(received[agent]) == expected
        for sender in agents:
            from_sender = [int(m.split(":")[1]) for m in received[agent] if m.startswith(sender + ":")]
            assert from_sender == sorted(from_sender)
    assert len(store.history()) == len(agents) * per_sender


def test_lockstep_commits_each_step_once_in_agent_order_whatever_the_arrival_order():
    agents = ["Agent1", "Agent2", "Agent3"]
    commits = []
    lockstep = Lockstep(agents, lambda reports: commits.append(list(reports)))

    def agent(agent_id, delays):
        for step, delay in enumerate(delays, start=1):
            threading.Event().wait(delay)
            lockstep.finish_step(agent_id, (agent_id, step))

    threads = [
        threading.Thread(target=agent, args=("Agent1", [0.03, 0.0, 0.02])),
        threading.Thread(target=agent, args=("Agent2", [0.0, 0.03, 0.0])),
        threading.Thread(target=agent, args=("Agent3", [0.01, 0.01, 0.03])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert commits == [[(a, step) for a in agents] for step in (1, 2, 3)]


def test_lockstep_stop_commits_the_finished_steps_and_releases_the_waiting():
    commits = []
    lockstep = Lockstep(["Agent1", "Agent2"], lambda reports: commits.append(list(reports)))
    outcome = []

    def first():
        try:
            lockstep.finish_step("Agent1", "a1")
        except RunStopped:
            outcome.append("stopped")

    thread = threading.Thread(target=first)
    thread.start()
    while not commits and thread.is_alive() and not lockstep._pending:
        threading.Event().wait(0.01)
    lockstep.stop()
    thread.join(2)
    assert outcome == ["stopped"]
    assert commits == [["a1"]]
    with pytest.raises(RunStopped):
        lockstep.finish_step("Agent2", "a2")
