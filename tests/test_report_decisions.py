"""report.html's decisions, read in headless Chromium (issue 29, item 4): for each member at each step the
reply's fields, the goal chosen or the directive followed, each refused reply with why, and the prompt
behind a fold; and a run on a clock drawn against its seconds as well as its steps (issue 28, item 2)."""

import json
import threading

import pytest

from explorer.config.run_config import RunConfig
from explorer.records.run_files import TraceLines
from explorer.report.decisions import MAX_DECISIONS, MAX_PROMPTS, PROMPT_CHARS, Decisions, Refusal, decision_row
from explorer.run.runner import ExplorationRun
from explorer.testing.chat_server import ChatServer
from tests.support.paths import WORLDS

pytest_plugins = ("tests.support.browser",)

REFUSED = "I will not pick one. <script>document.title = 'pwned'</script>"
GOAL = '{"thinking": "G1 <b>looks</b> open", "goal": "G1", "reason": "unseen ground to the north"}'
DIRECTIVES = "```yaml\nthinking: split the floor\ndirectives:\n  Agent1: {goal: [1, 1, 0]}\n```"


def scripted():
    """Agent1's first reply is refused (and re-prompted), Agent2's first two (no usable reply that step)."""
    refusals, lock = {"Agent1": 1, "Agent2": 2}, threading.Lock()

    def answer(request):
        prompt = request["messages"][-1]["content"]
        if prompt.startswith("You are the Coordinator"):
            return DIRECTIVES
        agent = "Agent1" if "You are Agent1," in prompt else "Agent2"
        with lock:
            refusals[agent] -= 1
            return REFUSED if refusals[agent] >= 0 else GOAL

    return answer


@pytest.fixture(scope="module")
def decided_run(tmp_path_factory, embedder):
    run_dir = tmp_path_factory.mktemp("decisions") / "run"
    with ChatServer(scripted()) as server:
        config = RunConfig.of(
            agents=2,
            steps=6,
            world=WORLDS / "office.yaml",
            seed=3,
            run_dir=run_dir,
            verbosity=-1,
            model="openai/test-model",
            api_base=server.api_base,
            decide="goals",
            coordinator="openai/coordinator-model",
        )
        ExplorationRun(config.check(), embedder=embedder).execute()
    return run_dir


def cells(row):
    from selenium.webdriver.common.by import By

    return row.find_elements(By.XPATH, "./td")


def test_the_report_shows_each_decision_its_reasons_refusals_and_prompt(decided_run, browser):
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    trace = list(TraceLines(decided_run / "trace.jsonl"))
    page = PageVisit(browser, decided_run / "report.html")
    assert page.console_errors == [] and page.requests == []
    assert browser.title != "pwned"  # a reply's script is shown as text, never run
    browser.find_element(By.ID, "collapse-steps").click()  # each step whole, not one line
    first = browser.find_elements(By.CSS_SELECTOR, "#decisions-Agent1 tr.decision")[0]
    step, decided_by, action, fields, choice, refused, folds = (cell.text for cell in cells(first))
    line = next(r for r in trace if r["agent_id"] == "Agent1" and r["step"] == 1)
    assert step == "1" and decided_by == "openai/test-model" and action == line["action"]
    assert "thinking\nG1 <b>looks</b> open" in fields and "reason\nunseen ground to the north" in fields
    assert "chose G1" in choice  # the goal chosen, and why the model was asked
    refusal = line["llm"]["calls"][0]["reply_error"]
    assert refused.startswith(f"decision reply refused: {refusal}") and REFUSED in refused
    # The prompt is behind a fold, shut until clicked.
    fold = first.find_element(By.CSS_SELECTOR, "details.prompt")
    prompt = fold.find_element(By.TAG_NAME, "pre")
    assert folds.startswith("prompt") and not prompt.is_displayed()
    fold.find_element(By.TAG_NAME, "summary").click()
    assert prompt.is_displayed() and prompt.text == line["prompt"].strip()
    # Agent2's first step had no usable reply; later, Agent1 followed the coordinator's directive.
    browser.find_element(By.CSS_SELECTOR, "#decisions-Agent2 > summary").click()
    agent2 = cells(browser.find_elements(By.CSS_SELECTOR, "#decisions-Agent2 tr.decision")[0])
    assert agent2[5].text.count("decision reply refused") == 2 and "no usable reply" in agent2[5].text
    browser.find_element(By.CSS_SELECTOR, "#decisions-Agent1 > summary").click()  # shut it again: still there
    followed = next(r for r in trace if r["agent_id"] == "Agent1" and r["directive"])
    shown = browser.execute_script(
        "return [...document.querySelectorAll('#decisions-Agent1 tr.decision')].map(r => r.textContent)"
    )
    assert any(f"directive {followed['directive']['id']} (goal" in row and ": followed" in row for row in shown)
    # The coordinator's ticks: the directives it sent, and its reply behind a fold.
    browser.find_element(By.CSS_SELECTOR, "#decisions-Coordinator > summary").click()
    tick = cells(browser.find_elements(By.CSS_SELECTOR, "#decisions-Coordinator tr.decision")[0])
    assert "to Agent1: Directive 1: go to (1, 1, 0)." in tick[4].text
    tick[6].find_element(By.CSS_SELECTOR, "details.reply > summary").click()
    assert "thinking: split the floor" in tick[6].text
    assert "discovery-seconds" not in (decided_run / "report.html").read_text()  # lock-step: steps only


def test_the_decisions_are_bounded_and_keep_a_damaged_line_as_text():
    decisions = Decisions(["Agent1"], clocked=False)
    line = {"agent_id": "Agent1", "prompt": "p" * 50_000, "decision": {"action": "forward", "reason": ["x"]}}
    for step in range(1, MAX_DECISIONS + 6):
        decisions.add({**line, "step": step, "notes": {"not": "a list"}, "llm": {"calls": ["junk"]}})
    member = decisions.members["Agent1"]
    assert len(member.rows) == MAX_DECISIONS and member.steps == MAX_DECISIONS + 5
    assert decisions.note() == (
        f"The decisions show the first {MAX_DECISIONS:,} of the run's {MAX_DECISIONS + 5:,} agent-steps, "
        f"the prompts of the first {MAX_PROMPTS}; trace.jsonl has them all."
    )
    row = member.rows[0]
    assert len(row.prompt) < PROMPT_CHARS + 40 and row.prompt.endswith("[50,000 characters in all]")
    # A 16-agent, 100-step run's steps are all there; past the first MAX_PROMPTS, without their prompts.
    assert MAX_DECISIONS >= 16 * 100 + 100 and member.rows[MAX_PROMPTS].prompt == ""
    assert row.fields == [("reason", '["x"]')] and row.choices == [] and row.refusals == []
    failed = {"error": "connection", "error_message": "Connection error.", "reply": None}
    row = decision_row({"agent_id": "Agent1", "step": 1, "llm": {"calls": [failed]}, "parse_failure": True}, False)
    assert row.refusals == [Refusal("decision", "call failed", "connection: Connection error.", "")]
    assert row.problems == ["no usable reply, after its re-prompts"]


@pytest.fixture(scope="module")
def clocked_run(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("clocked")
    profiles = folder / "profiles.yaml"
    profiles.write_text("agents: [{tick_interval: 1}, {tick_interval: 1.5}]\n")  # Agent2 ticks at 1.5, 3, 4.5...
    config = RunConfig.of(
        agents=2,
        steps=8,
        world=WORLDS / "office.yaml",
        seed=3,
        run_dir=folder / "run",
        verbosity=-1,
        schedule="event",
        profiles=profiles,
    )
    ExplorationRun(config.check(), embedder=embedder).execute()
    return folder / "run"


def test_a_run_on_the_clock_draws_objects_and_ground_against_its_seconds(clocked_run, browser):
    from tests.support.browser import PageVisit

    summary = json.loads((clocked_run / "summary.json").read_text())
    curve = summary["team"]["seconds_curve"]
    page = PageVisit(browser, clocked_run / "report.html")
    assert page.console_errors == []
    for chart, column in (("discovery-seconds", 1), ("coverage-seconds", 2)):
        figure = browser.execute_script(
            "const d = document.getElementById(arguments[0]); return {data: d.data, x: d.layout.xaxis.title.text}",
            chart,
        )
        assert figure["x"] == "simulated seconds"
        team = next(trace for trace in figure["data"] if trace["name"] == "team")
        assert team["x"][-1] == curve[-1][0] and team["y"][-1] == curve[-1][column]
        assert any(x != int(x) for x in team["x"])  # seconds (1.5, 4.5, ...), not steps
        assert {"Agent1 saw", "Agent2 saw"} <= {trace["name"] for trace in figure["data"]}
    # The steps' charts are still there.
    assert browser.execute_script("return !!document.getElementById('discovery')")


def test_a_step_without_a_message_names_no_recipient():
    from nodes.interfaces import Decision

    assert "message_to" not in Decision("forward", reason="r").to_dict()
    assert Decision("forward", message_to_others="door", message_to="Agent2").to_dict()["message_to"] == "Agent2"
    # An earlier run's lines named "all" on every step: the page shows a recipient only beside a message.
    quiet = {"action": "forward", "reason": "r", "message_to_others": "", "message_to": "all"}
    row = decision_row({"agent_id": "Agent1", "step": 1, "decision": quiet}, False)
    assert row.fields == [("reason", "r")]
