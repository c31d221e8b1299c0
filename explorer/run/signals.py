"""Ctrl-C, SIGTERM and SIGHUP stop a run the same way, and only once.

What `timeout`, a container stop, a batch scheduler or a closed terminal send
is treated like Ctrl-C: the finished steps are kept, the summary and the
memories are written, and the exit code is 128 + the signal's number. Once
stopping has begun, further signals are ignored, so that nothing interrupts
the writing of what the run did (nor the interpreter's exit, which would
otherwise restore the default handlers and die of the next Ctrl-C).
"""

from __future__ import annotations

import signal

STOP_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP")
    if hasattr(signal, name)  # no SIGHUP on Windows
)


class RunInterrupted(KeyboardInterrupt):
    """A stop signal arrived; a KeyboardInterrupt, so that Ctrl-C's handling covers every signal."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopSignals:
    """The process's handler for the stop signals; install it in the main thread."""

    def __init__(self):
        self.signum = None  # the stop signal that stopped the run
        self._before = {}

    def install(self):
        for signum in STOP_SIGNALS:
            self._before[signum] = signal.signal(signum, self._handle)
        return self

    def restore(self):
        """The handlers as they were before `install`: for a caller that runs main() and goes on."""
        for signum, handler in self._before.items():
            signal.signal(signum, handler)

    def hold(self):
        """Stopping has begun: from now on the stop signals are ignored. Main thread only."""
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)

    @property
    def exit_code(self):
        return 128 + self.signum if self.signum is not None else None

    def _handle(self, signum, frame):
        self.signum = signum
        self.hold()
        raise RunInterrupted(signum)
