"""Ctrl-C, SIGTERM and SIGHUP stop a run the same way, and only once.

What `timeout`, a container stop, a batch scheduler or a closed terminal send
is treated like Ctrl-C: the finished steps are kept, the summary and the
memories are written, and the exit code is 128 + the number of the signal
that arrived first. Once stopping has begun, further signals are ignored, so
that nothing interrupts the writing of what the run did, nor the
interpreter's exit.

Two signals can arrive before the main thread runs a handler for either (a
busy machine): CPython then calls the handlers in the signals' numeric order,
not as they came, so the order they came in is read from the wakeup pipe, to
which CPython writes each signal's number as it arrives. (Two that were
pending in the kernel together, the process not having run between them,
reach it lowest number first: there the order they were sent in is lost.)
"""

from __future__ import annotations

import os
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
        self._arrivals = None  # the wakeup pipe's ends (read, write), where this process owns the wakeup fd
        self._wakeup_before = -1

    def install(self):
        for signum in STOP_SIGNALS:
            self._before[signum] = signal.signal(signum, self._handle)
        self._watch_arrivals()
        return self

    def restore(self):
        """The handlers as they were before `install`: for a caller that runs main() and goes on."""
        for signum, handler in self._before.items():
            signal.signal(signum, handler)
        if self._arrivals is not None:
            signal.set_wakeup_fd(self._wakeup_before)
            for end in self._arrivals:
                os.close(end)
            self._arrivals = None

    def hold(self):
        """Stopping has begun: from now on the stop signals do nothing. Main thread only. A handler of ours that
        does nothing, not SIG_IGN: a signal that came with the first is already on its way to its Python
        handler, and CPython reports a missing one as a race ("Signal 15 ignored due to race condition")."""
        for signum in STOP_SIGNALS:
            signal.signal(signum, _ignored)

    def ignore(self):
        """Once stopping has begun, the stop signals ignored by the system itself, for the interpreter's exit:
        there CPython puts the default handler back in place of a Python one, and a Ctrl-C would kill."""
        if self.signum is not None:
            for signum in STOP_SIGNALS:
                signal.signal(signum, signal.SIG_IGN)

    def _watch_arrivals(self):
        """The wakeup pipe, unless another part of the process (an event loop) already owns the wakeup fd."""
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        before = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        if before != -1:  # not ours to take
            signal.set_wakeup_fd(before)
            os.close(read)
            os.close(write)
            return
        self._arrivals, self._wakeup_before = (read, write), before

    def _first_arrived(self, signum):
        """The stop signal that came first among those the wakeup pipe holds; `signum` where it holds none."""
        try:
            arrived = os.read(self._arrivals[0], 512) if self._arrivals else b""
        except BlockingIOError:
            arrived = b""
        return next((number for number in arrived if number in STOP_SIGNALS), signum)

    @property
    def exit_code(self):
        return 128 + self.signum if self.signum is not None else None

    def _handle(self, signum, frame):
        self.signum = self._first_arrived(signum)
        self.hold()
        raise RunInterrupted(self.signum)


def _ignored(signum, frame):
    """A stop signal after the first: the run is already stopping."""
