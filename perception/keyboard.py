"""The keyboard, through pyautogui: keys held down for a while, one agent at a time.

The only module that imports pyautogui. On Linux pyautogui connects to $DISPLAY
when it is imported, so a Keyboard is made only once the display is known.
"""

from __future__ import annotations

import threading
import time

from perception.base import PerceptionStopped


class KeyboardStopped(PerceptionStopped):
    """pyautogui's fail-safe fired: the pointer is in a screen corner. One line."""


class Keyboard:
    """Holds keys with keyDown, sleep, keyUp; games that poll keys each frame miss a tap.

    There is one keyboard however many agents there are, so holds are serialized
    by a lock the caller takes with `turn()` (focusing the window goes inside it).
    """

    def __init__(self):
        import pyautogui

        # Its default pause sleeps 0.1 s after keyDown too, lengthening every hold
        # by a fixed amount; the hold time is the key map's alone.
        pyautogui.PAUSE = 0
        # Kept on: moving the pointer into a screen corner stops the run.
        pyautogui.FAILSAFE = True
        self._gui = pyautogui
        self._lock = threading.Lock()

    def is_valid_key(self, name) -> bool:
        return self._gui.isValidKey(name)

    def turn(self):
        """The lock that gives one agent the keyboard."""
        return self._lock

    def hold(self, keys, seconds):
        """Press `keys` together for `seconds`; every key pressed is released, whatever happens."""
        pressed = []
        try:
            for key in keys:
                self._gui.keyDown(key)
                pressed.append(key)
            time.sleep(seconds)
        except self._gui.FailSafeException:
            raise KeyboardStopped(
                "pyautogui's fail-safe stopped the run: the mouse pointer is in a corner of the screen"
            ) from None
        finally:
            self._release(reversed(pressed))

    def _release(self, keys):
        for key in keys:
            try:
                self._gui.keyUp(key)
            except self._gui.FailSafeException:
                # Releasing is always safe, and a key left down would drive the game on.
                self._gui.FAILSAFE = False
                try:
                    self._gui.keyUp(key)
                finally:
                    self._gui.FAILSAFE = True
