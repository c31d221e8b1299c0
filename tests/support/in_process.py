"""main.py's `main` run inside the test's own process, for tests whose point is the run, not the process.

A process start costs seconds (litellm's import alone about 3 s here); a run in this process pays
it once. Tests of what only a process shows (signals, start-up time, the interpreter's exit) start
main.py instead (tests/test_cli.py's `main`).
"""

from __future__ import annotations

import logging
import subprocess

import pytest

from explorer.cli.main import main
from explorer.run import prepare, runner
from memory.embedder import SentenceEmbedder


class InProcessMain:
    """`run(*args)`: `python main.py ARGS` as main(argv) runs it here; what subprocess.run would give back.

    The run uses the session's embedder (a run's own would load the model again, and its threads
    would keep it for the rest of the session), left as it was found. main(argv) restores the signal
    handlers; a run that left a handler on the "explorer" logger fails the test.
    """

    def __init__(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, embedder: SentenceEmbedder):
        self.capsys = capsys
        monkeypatch.setattr(embedder, "on_batch", embedder.on_batch)  # the run sets its telemetry's
        monkeypatch.setattr(
            runner, "start_embedder", lambda config, given: prepare.start_embedder(config, given or embedder)
        )

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        handlers = list(logging.getLogger("explorer").handlers)
        self.capsys.readouterr()  # what was printed before is not the run's
        code = main(list(args))
        printed = self.capsys.readouterr()
        assert logging.getLogger("explorer").handlers == handlers, "the run left a handler on the explorer logger"
        return subprocess.CompletedProcess(["main.py", *args], code, printed.out, printed.err)
