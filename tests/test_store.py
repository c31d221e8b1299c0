import threading

import pytest

from explorer.schedule.lockstep import LockstepSchedule
from explorer.team.redis_store import RedisRun
from explorer.team.store import InProcessStore
from nodes.interfaces import RunStopped, SightReport, StepReport
from perception.base import Message

pytest_plugins = ("tests.support.redis_server",)


@pytest.fixture(params=["in-process", "redis"])
def team(request):
    """A store with these agents registered: one suite for both stores."""
    if request.param == "redis":
        run = RedisRun(request.getfixturevalue("redis_server").url, request.getfixturevalue("run_id"))
        make = run.store
    else:
        make = InProcessStore

    def registered(*agent_ids):
        store = make()
        for agent_id in agent_ids:
            store.register_agent(agent_id, {"position": [0, 0, 0]})
        return store

    return registered


def texts(messages):
    return [m.message for m in messages]


def test_direct_message_reaches_only_its_recipient(team):
    store = team("Agent1", "Agent2", "Agent3")
    store.send_message(Message("Agent1", "Agent2", "hello two"))
    assert texts(store.read_mailbox("Agent2")) == ["hello two"]
    assert store.read_mailbox("Agent3") == []
    assert store.read_mailbox("Agent1") == []


def test_broadcast_reaches_every_other_agent_but_not_the_sender(team):
    store = team("Agent1", "Agent2", "Agent3")
    store.send_message(Message("Agent2", "all", "found a lamp"))
    assert texts(store.read_mailbox("Agent1")) == ["found a lamp"]
    assert texts(store.read_mailbox("Agent3")) == ["found a lamp"]
    assert store.read_mailbox("Agent2") == []


def test_reading_returns_messages_in_order_and_empties_the_mailbox(team):
    store = team("Agent1", "Agent2")
    for i in range(3):
        store.send_message(Message("Agent1", "Agent2", f"m{i}"))
    assert texts(store.read_mailbox("Agent2")) == ["m0", "m1", "m2"]
    assert store.read_mailbox("Agent2") == []


def test_history_keeps_every_message_after_reading(team):
    store = team("Agent1", "Agent2")
    store.send_message(Message("Agent1", "all", "a"))
    store.send_message(Message("Agent2", "Agent1", "b"))
    store.read_mailbox("Agent1")
    store.read_mailbox("Agent2")
    assert [(m.sender, m.recipient, m.message) for m in store.history()] == [
        ("Agent1", "all", "a"),
        ("Agent2", "Agent1", "b"),
    ]


@pytest.mark.parametrize("recipient", ["Agent9", "Agent1"])
def test_a_message_to_no_teammate_is_refused_and_delivers_nothing(team, recipient):
    store = team("Agent1", "Agent2")
    with pytest.raises(ValueError, match="not a teammate"):
        store.send_message(Message("Agent1", recipient, "hi", 4))
    assert store.history() == []
    assert store.read_mailbox("Agent1") == [] and store.read_mailbox("Agent2") == []


def test_a_step_commit_delivers_adds_and_moves_in_report_order(team):
    store = team("Agent1", "Agent2")
    first = StepReport(
        "Agent1",
        1,
        None,
        ["lamp", "sofa"],
        [Message("Agent1", "all", "lamp here", 1)],
        {"position": [1, 0, 0]},
        object_cells={"sofa": (3, 4, 0)},
    )
    second = StepReport("Agent2", 1, None, ["sofa", "bed"], [], {"position": [2, 0, 0]})
    assert store.commit_step([first, second]) == [["lamp", "sofa"], ["bed"]]
    assert store.discoveries()["sofa"] == {"finder": "Agent1", "step": 1, "cell": [3, 4, 0]}
    assert texts(store.read_mailbox("Agent2")) == ["lamp here"]
    assert store.positions() == {"Agent1": {"position": [1, 0, 0]}, "Agent2": {"position": [2, 0, 0]}}


def test_objects_only_grow_and_remember_the_first_finder(team):
    store = team("Agent1", "Agent2")
    assert store.commit_step([StepReport("Agent1", 1, None, ["lamp", "sofa"])]) == [["lamp", "sofa"]]
    assert store.commit_step([StepReport("Agent2", 2, None, ["sofa", "bed", "bed"])]) == [["bed"]]
    assert store.objects() == ["lamp", "sofa", "bed"]
    assert store.discoveries()["sofa"] == {"finder": "Agent1", "step": 1, "cell": None}


def test_sight_reports_reach_the_coordinator_once_and_whole(team):
    store = team("Agent1", "Coordinator")
    sight = SightReport(
        "Agent1",
        3,
        {"position": [0, 0, 0]},
        {"position": [0, 1, 0]},
        ((0, 1, 0), (0, 2, 0)),
        ((1, 1),),
        {"lamp": (0, 2, 0)},
        "lamp ahead",
        2.0,
        3.0,
    )
    store.send_report("Coordinator", sight)
    assert store.read_reports("Coordinator") == [sight]
    assert store.read_reports("Coordinator") == []


def test_many_threads_lose_and_duplicate_no_message(team):
    agents = [f"Agent{i}" for i in range(1, 9)]
    store = team(*agents)
    per_sender = 100
    received = {agent: [] for agent in agents}
    done = threading.Event()

    def send(sender):
        for i in range(per_sender):
            recipient = "all" if i % 2 else agents[(agents.index(sender) + 1) % len(agents)]
            store.send_message(Message(sender, recipient, f"{sender}:{i}"))

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
        expected = sorted(f"{s}:{i}" for s in agents if s != agent for i in range(per_sender) if i % 2 or s == previous)
        assert sorted(received[agent]) == expected
        for sender in agents:
            from_sender = [int(m.split(":")[1]) for m in received[agent] if m.startswith(sender + ":")]
            assert from_sender == sorted(from_sender)
    assert len(store.history()) == len(agents) * per_sender


def test_lockstep_commits_each_step_once_in_agent_order_whatever_the_arrival_order():
    agents = ["Agent1", "Agent2", "Agent3"]
    commits = []
    schedule = LockstepSchedule(
        agents, 3, lambda reports, at, complete: commits.append([(r.agent_id, r.step) for r in reports])
    )
    goes_on = []

    def agent(agent_id, delays):
        for step, delay in enumerate(delays, start=1):
            threading.Event().wait(delay)
            goes_on.append((agent_id, step, schedule.hand_in(StepReport(agent_id, step, None, []))))

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
    # The step budget ends each agent's flow after its third step.
    assert sorted(goes_on) == [(a, step, step < 3) for a in agents for step in (1, 2, 3)]


def test_an_agent_every_n_rounds_takes_part_in_those_rounds_only():
    commits = []
    schedule = LockstepSchedule(
        ["Agent1", "Coordinator"],
        5,
        lambda reports, at, complete: commits.append((at, [r.agent_id for r in reports])),
        every={"Coordinator": 2},
    )
    ticks = {"Agent1": [], "Coordinator": []}

    def member(agent_id):
        step, going = 1, True
        while going:
            ticks[agent_id].append(step)
            going = schedule.hand_in(StepReport(agent_id, step, None, []))
            step += 1

    threads = [threading.Thread(target=member, args=(a,)) for a in ticks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert ticks == {"Agent1": [1, 2, 3, 4, 5], "Coordinator": [1, 2, 3]}
    assert commits == [
        (0, ["Agent1", "Coordinator"]),
        (1, ["Agent1"]),
        (2, ["Agent1", "Coordinator"]),
        (3, ["Agent1"]),
        (4, ["Agent1", "Coordinator"]),
    ]


def test_lockstep_stop_commits_the_finished_steps_and_releases_the_waiting():
    commits = []
    schedule = LockstepSchedule(
        ["Agent1", "Agent2"], 5, lambda reports, at, complete: commits.append(([r.agent_id for r in reports], complete))
    )
    outcome = []

    def first():
        try:
            schedule.hand_in(StepReport("Agent1", 1, None, []))
        except RunStopped:
            outcome.append("stopped")

    thread = threading.Thread(target=first)
    thread.start()
    while not commits and thread.is_alive() and not schedule._pending:
        threading.Event().wait(0.01)
    schedule.stop()
    thread.join(2)
    assert outcome == ["stopped"]
    assert commits == [(["Agent1"], False)]  # a partial round: not one for the team's curves
    with pytest.raises(RunStopped):
        schedule.hand_in(StepReport("Agent2", 1, None, []))
