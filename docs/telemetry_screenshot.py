"""docs/telemetry.png, a run in Arize Phoenix: `python docs/telemetry_screenshot.py` (needs Phoenix as the README's
Telemetry section installs it, and chromium with chromium-driver, as the browser tests do).

Two agents ask a model (the tests' local stub server, explorer/testing/chat_server.py) for STEPS steps with
`--telemetry otlp` to a Phoenix started here on a free port; headless Chromium opens the run's trace in Phoenix,
with the first agent-step's model call selected, and takes the picture.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer.testing.chat_server import ChatServer  # noqa: E402
from harness.phoenix_server import PhoenixServer, phoenix_command  # noqa: E402
from tests.support.browser import headless_chromium  # noqa: E402

STEPS = 3
PICTURE = ROOT / "docs" / "telemetry.png"
REPLY = "```yaml\naction: forward\nreason: the hall ahead is unexplored\nmessage_to_others: taking the hall\n```"
PROJECT = "multi-agent-explorer"
SHOWN = "return document.body.innerText.includes('chat openai/test-model')"
# The selected span's attributes (a tab of its pane), and the trace's tree scrolled back to the run's root.
SHOW_ATTRIBUTES = (
    "[...document.querySelectorAll('[role=tab]')].find(t => t.textContent.startsWith('Attributes')).click()"
)
TREE_FROM_THE_TOP = (
    "document.querySelectorAll('*').forEach(e => { if (e.scrollHeight > e.clientHeight + 50) e.scrollTop = 0; })"
)


def run_with_spans(phoenix: PhoenixServer, run_dir: Path) -> None:
    environment = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.url,
        "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT}",
        "OPENAI_API_KEY": "not-a-key",
    }
    with ChatServer(lambda request: REPLY) as server:
        model = ("--model", "openai/test-model", "--api-base", server.api_base)
        team = ("--agents", "2", "--steps", str(STEPS), "--world", "office", "--telemetry", "otlp", "-q")
        main = [sys.executable, str(ROOT / "main.py"), *team, *model, "--run-dir", str(run_dir)]
        subprocess.run(main, env=environment, check=True, capture_output=True)


def trace_page(phoenix: PhoenixServer) -> str:
    """The run's trace in Phoenix's pages, its first model call selected, once Phoenix holds all of it."""
    deadline = time.monotonic() + 120
    while not any(span["parent_id"] is None for span in phoenix.spans(PROJECT)):
        if time.monotonic() > deadline:
            raise SystemExit("Phoenix did not show the run's root span in 120 s")
        time.sleep(1)
    spans = phoenix.spans(PROJECT)
    project = next(p["id"] for p in phoenix.projects() if p["name"] == PROJECT)
    chat = min((s for s in spans if s["name"].startswith("chat ")), key=lambda span: span["start_time"])
    return f"{phoenix.url}/projects/{project}/traces/{chat['context']['trace_id']}?selectedSpanNodeId={chat['id']}"


def main() -> None:
    command = phoenix_command()
    if command is None:
        raise SystemExit("no `phoenix` command: install Phoenix as the README's Telemetry section says")
    with tempfile.TemporaryDirectory() as folder:
        phoenix = PhoenixServer(command, Path(folder))
        browser = headless_chromium(1500, 1150)
        try:
            run_with_spans(phoenix, Path(folder) / "run")
            browser.get(trace_page(phoenix))
            deadline = time.monotonic() + 60
            while not browser.execute_script(SHOWN):
                if time.monotonic() > deadline:
                    raise SystemExit("Phoenix's page did not show the trace in 60 s")
                time.sleep(0.5)
            time.sleep(2)  # its panes finish laying out
            browser.execute_script(SHOW_ATTRIBUTES)
            time.sleep(1)
            browser.execute_script(TREE_FROM_THE_TOP)
            time.sleep(1)
            browser.save_screenshot(str(PICTURE))
        finally:
            browser.quit()
            phoenix.stop()
    print(f"Wrote {PICTURE}")


if __name__ == "__main__":
    main()
