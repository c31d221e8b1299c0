"""report.html for a team under a coordinator (issue 52, part 3), read in headless Chromium: each directive with
its reason, each message by its real route under --comm star, and a page that filters by member and shows
each step on one line until it is opened."""

import pytest

from explorer.config.run_config import RunConfig
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from tests.support.paths import WORLDS

pytest_plugins = ("tests.support.browser",)


@pytest.fixture(scope="module")
def star_run(tmp_path_factory, embedder):
    run_dir = tmp_path_factory.mktemp("star") / "run"
    config = RunConfig.of(
        agents=4,
        steps=12,
        world=WORLDS / "office.yaml",
        run_dir=run_dir,
        verbosity=-1,
        coordinator="offline",
        comm="star",
    )
    ExplorationRun(config.check(), embedder=embedder).execute()
    return run_dir


def shown_rows(browser, selector):
    """The text of each row the page shows (a filtered-out row's text is "")."""
    from selenium.webdriver.common.by import By

    return [row.text for row in browser.find_elements(By.CSS_SELECTOR, selector) if row.is_displayed()]


def test_the_report_shows_each_directives_reason_and_each_messages_route(star_run, browser):
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    trace = list(TraceLines(star_run / "trace.jsonl"))
    page = PageVisit(browser, star_run / "report.html")
    assert page.console_errors == [] and page.requests == []
    browser.find_element(By.ID, "collapse-steps").click()  # each step whole
    browser.find_element(By.CSS_SELECTOR, "#decisions-Coordinator > summary").click()
    ticks = " ".join(shown_rows(browser, "#decisions-Coordinator tr.decision"))
    sent = [d for line in trace if line["agent_id"] == "Coordinator" for d in line["directives"]]
    assert sent, "the coordinator sent directives"
    for directive in sent:
        assert f"to {directive['to']}: {directive['message']} Why: {directive['reason']}" in ticks
    # The messages table: up to the coordinator, then on from it to whom it concerned; never "all".
    messages = shown_rows(browser, "#messages tbody tr")
    said = next(line for line in trace if line["message_out"])
    assert f"{said['step']} {said['agent_id']} Coordinator {said['message_out']['message']}" in messages
    relayed = next(r for line in trace if line["agent_id"] == "Coordinator" for r in line.get("relayed", ()))
    passed_on = f"{relayed['sender']} via Coordinator {', '.join(relayed['to'])} {relayed['message']}"
    assert any(passed_on in row for row in messages)
    assert not any(" all " in f" {row} " for row in messages)
    # A step with no message names no recipient.
    quiet = {line["step"] for line in trace if line["agent_id"] == "Agent1" and not line["message_out"]}
    rows = shown_rows(browser, "#decisions-Agent1 tr.decision")
    assert quiet and all("message_to" not in rows[step - 1] for step in quiet)


def test_the_report_filters_by_member_and_collapses_each_step_to_a_line(star_run, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from tests.support.browser import PageVisit

    PageVisit(browser, star_run / "report.html")
    first = browser.find_elements(By.CSS_SELECTOR, "#decisions-Agent1 tr.decision")[0]
    line_height = first.size["height"]
    collapsed = [row.size["height"] for row in browser.find_elements(By.CSS_SELECTOR, "#decisions-Agent1 tr.decision")]
    assert max(collapsed) == line_height  # one line each, however much a step says
    first.click()  # opens that step alone
    assert first.size["height"] > 2 * line_height and "open" in first.get_attribute("class")
    browser.find_element(By.ID, "collapse-steps").click()
    whole = [row.size["height"] for row in browser.find_elements(By.CSS_SELECTOR, "#decisions-Agent1 tr.decision")]
    assert sum(whole) > 2 * sum(collapsed)
    # Filtered to Agent2: its decisions, its row, and the messages it sent or was sent (or relayed to it).
    Select(browser.find_element(By.ID, "member-filter")).select_by_value("Agent2")
    assert not browser.find_element(By.ID, "decisions-Agent1").is_displayed()
    assert browser.find_element(By.ID, "decisions-Agent2").is_displayed()
    messages = shown_rows(browser, "#messages tbody tr")
    every = browser.find_elements(By.CSS_SELECTOR, "#messages tbody tr")
    assert messages and len(messages) < len(every) and all("Agent2" in row for row in messages)
    panel = shown_rows(browser, "#panel tbody tr")
    assert panel and all(row.startswith("Agent2") for row in panel)
    Select(browser.find_element(By.ID, "member-filter")).select_by_value("")
    assert len(shown_rows(browser, "#messages tbody tr")) == len(every)
