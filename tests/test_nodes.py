"""The nodes on their own: a per-agent state built by nodes/state.py, with stand-ins for what lies above them."""

import threading
import time

import pytest

from explorer.team.store import InProcessStore
from nodes.decision import DecisionNode
from nodes.flow import build_agent_flow
from nodes.interfaces import DECISION_TEXT_LIMITS, Decision, DecisionOutcome, RunStopped, StopRun
from nodes.state import AgentState, new_agent_state
from nodes.update_memory import CONTEXT_CHARS, context_from
from perception.mock import MockPerception
from perception.world import DEFAULT_WORLD, load_world


class RememberingMemory:
    """A stand-in for VectorMemory: no embeddings, only what was added, and what it was asked."""

    def __init__(self):
        self.texts, self.queries, self.searched_soon = [], [], []

    def search(self, query, top_k):
        self.queries.append(query)
        return [(text, 0.5) for text in self.texts[-top_k:]]

    def embed_later(self, text, searched_soon):
        self.searched_soon.append(searched_soon)
        return len(text)

    def add(self, text, vector):
        self.texts.append(text)


class FixedPolicy:
    name = "fixed"

    def __init__(self, outcome, reads_memories=True):
        self.outcome, self.reads_memories = outcome, reads_memories

    def decide(self, prompt, context):
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


class CountingSchedule:
    """Commits `steps` steps as the run's commit would (keeping the reports), then ends the flow."""

    def __init__(self, steps):
        self.steps, self.reports = steps, []

    def hand_in(self, report):
        self.reports.append(report)
        report.remember()
        return report.step < self.steps


def agent_state(policy, schedule):
    store = InProcessStore()
    perception = MockPerception(load_world(DEFAULT_WORLD), store, ["Agent1", "Agent2"], seed=3)
    for agent_id in ("Agent1", "Agent2"):
        store.register_agent(agent_id, perception.get_agent_state(agent_id).to_dict())
    state = new_agent_state(
        agent_id="Agent1",
        team=["Agent1", "Agent2"],
        shared_memory=store,
        perception=perception,
        environment=perception.get_environment_info(),
        role="scout",
        persona="Be quick.",
        policy=policy,
        schedule=schedule,
        comm_enabled=True,
        coordinator=None,
        max_steps=2,
        memory_index=RememberingMemory(),
    )
    return state, store


def test_a_flow_fills_every_part_of_each_step_record_and_ends_when_the_schedule_says():
    decision = Decision("look_left", "thinking", "scan", "lamp ahead", "Agent2")
    schedule = CountingSchedule(steps=2)
    state, _ = agent_state(FixedPolicy(DecisionOutcome(decision)), schedule)
    build_agent_flow().run(state)

    assert [r.step for r in schedule.reports] == [1, 2]
    first = schedule.reports[0]
    line = first.record.to_dict()
    assert line["pose"] and line["memory_query"].startswith("What do I know about position")
    assert line["policy"] == "fixed" and line["decision"] == decision.to_dict() and line["llm"] == {"calls": []}
    assert line["action"] == "look_left" and line["result"]["outcome"] == "turned"
    assert line["message_out"] == {"recipient": "Agent2", "message": "lamp ahead"}
    assert line["memory_text"].endswith("Reason: scan")
    assert set(line["timings"]) == {
        "perception",
        "retrieve_memory",
        "communication",
        "decision",
        "execution",
        "update_memory",
    }
    assert [(m.sender, m.recipient, m.message, m.step) for m in first.outgoing] == [
        ("Agent1", "Agent2", "lamp ahead", 1)
    ]
    assert first.pose == line["result"]["pose"]
    # The second step remembers the first, and each step has its own record.
    assert schedule.reports[1].record is not first.record
    assert schedule.reports[1].record.retrieved_memories == [[line["memory_text"], 0.5]]
    # A step's memory is added only when the step is committed.
    memory = state["memory_index"]
    assert memory.texts == [r.record.memory_text for r in schedule.reports]
    # The flow writes no key the schema does not have.
    assert set(state) == set(AgentState.__annotations__)
    assert state["step_count"] == 2 and len(state["action_history"]) == 2


def test_a_policy_that_reads_no_memories_has_none_retrieved_and_its_memories_embedded_later():
    schedule = CountingSchedule(steps=3)
    state, _ = agent_state(FixedPolicy(DecisionOutcome(Decision("look_left")), reads_memories=False), schedule)
    build_agent_flow().run(state)
    memory = state["memory_index"]
    assert memory.queries == []  # no query embedded, nothing searched
    lines = [report.record.to_dict() for report in schedule.reports]
    assert [(line["memory_query"], line["retrieved_memories"]) for line in lines] == [("", [])] * 3
    assert "retrieve_memory" in lines[0]["timings"]
    # Its memories are kept all the same, their embeddings left to be made in a batch.
    assert memory.texts == [line["memory_text"] for line in lines] and memory.searched_soon == [False] * 3
    # A policy that reads them has them searched each step, its memory embedded for the next search.
    reader = CountingSchedule(steps=2)
    state, _ = agent_state(FixedPolicy(DecisionOutcome(Decision("look_left"))), reader)
    build_agent_flow().run(state)
    assert len(state["memory_index"].queries) == 2 and state["memory_index"].searched_soon == [True] * 2


def test_a_step_that_is_never_committed_is_not_remembered():
    class StoppedSchedule:
        def hand_in(self, report):
            raise RunStopped()

    state, _ = agent_state(FixedPolicy(DecisionOutcome(Decision("forward"))), StoppedSchedule())
    with pytest.raises(RunStopped):
        build_agent_flow().run(state)
    assert state["memory_index"].texts == [] and state["step_count"] == 1


def test_the_decision_node_scans_when_the_policy_fails_and_records_why():
    state, _ = agent_state(FixedPolicy(RuntimeError("bug in a policy")), CountingSchedule(steps=1))
    build_agent_flow().run(state)
    record = state["step_record"].to_dict()
    assert record["action"] == "look_right" and record["decision"] is None
    assert record["errors"] == ["decision failed: RuntimeError('bug in a policy')"]


def test_a_policys_decision_is_kept_bounded_whatever_it_holds():
    # A policy of the user's own is not read as a model's reply is: its texts are cut where they leave it.
    runaway = Decision("look_left", "t" * 100_000, "r" * 100_000, "m" * 100_000, "Agent2" * 100)
    schedule = CountingSchedule(steps=1)
    state, _ = agent_state(FixedPolicy(DecisionOutcome(runaway)), schedule)
    build_agent_flow().run(state)
    decision = schedule.reports[0].record.to_dict()["decision"]
    assert {name: len(decision[name]) for name in DECISION_TEXT_LIMITS} == DECISION_TEXT_LIMITS
    assert decision["reason"].startswith("rrr") and decision["reason"].endswith("…")
    assert [len(m.message) for m in schedule.reports[0].outgoing] == [DECISION_TEXT_LIMITS["message_to_others"]]


class SlotCheckingPolicy(FixedPolicy):
    """Says whether the run's one slot on the cores was held while it decided."""

    def __init__(self, outcome, slots):
        super().__init__(outcome, reads_memories=False)
        self.slots, self.held = slots, []

    def decide(self, prompt, context):
        free = self.slots.acquire(blocking=False)
        if free:
            self.slots.release()
        self.held.append(not free)
        return super().decide(prompt, context)


def test_a_policy_given_the_cpu_slots_decides_holding_one_and_its_wait_is_timed_apart():
    slots = threading.BoundedSemaphore(1)
    schedule = CountingSchedule(steps=1)
    policy = SlotCheckingPolicy(DecisionOutcome(Decision("look_left", "", "scan")), slots)
    state, _ = agent_state(policy, schedule)
    state["cpu_slots"] = slots
    slots.acquire()  # another agent's search holds the only core
    flow = threading.Thread(target=build_agent_flow().run, args=(state,))
    flow.start()
    time.sleep(0.3)
    assert not schedule.reports  # it waits for the slot
    slots.release()
    flow.join(10)
    timings = schedule.reports[0].record.to_dict()["timings"]
    assert policy.held == [True]
    assert timings["decision_wait"] >= 0.25 and timings["decision"] < 0.25  # the wait is not the decision's


def test_a_stop_run_from_the_policy_is_not_swallowed():
    node = DecisionNode()
    with pytest.raises(StopRun, match="refused"):
        node.exec_fallback(None, StopRun("refused", users_mistake=True))


def test_a_memory_keeps_what_fits_of_the_messages_read_and_counts_the_rest():
    messages = [
        {"sender": f"Agent{i}", "message": f"Covered x 1-4, y {i}-10, level 0. Heading to ({i}, 4, 0)."}
        for i in range(2, 33)
    ]
    context = context_from(messages)
    kept = context.split(" (and ")[0].split("; ")
    assert kept == [f'{m["sender"]}: "{m["message"]}"' for m in messages[: len(kept)]]
    assert len(context.split(" (and ")[0]) <= CONTEXT_CHARS
    assert context.endswith(f" (and {len(messages) - len(kept)} more)") and len(kept) >= 2
    assert context_from(messages[:1]) == f'Agent2: "{messages[0]["message"]}"'
    long = context_from([{"sender": "Agent2", "message": "x" * 1000}])
    assert len(long) == CONTEXT_CHARS and long.endswith('..."')  # cut inside its quotes
