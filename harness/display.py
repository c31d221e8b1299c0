"""A real X server on a machine with no screen: Xvfb, for the Unity-mode tests (tests/support/xvfb.py) and
bench/capture.py, which show the stand-in game (harness/stand_in_game.py) on it."""

import contextlib
import os
import secrets
import socket
import struct
import subprocess
import tempfile
from pathlib import Path

GAME = Path(__file__).with_name("stand_in_game.py")
XVFB_OPTIONS = ("-screen", "0", "1280x720x24", "-nolisten", "tcp", "-noreset")


@contextlib.contextmanager
def virtual_display():
    """Runs Xvfb; sets DISPLAY and XAUTHORITY while it runs and yields the display."""
    with tempfile.TemporaryDirectory(prefix="xvfb-") as folder:
        # Xvfb writes its display number to this pipe once it accepts clients.
        # -noreset: by default it resets when its last client leaves, and a
        # client connecting during the reset has its connection dropped.
        read_end, write_end = os.pipe()
        server = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write_end), *XVFB_OPTIONS],
            pass_fds=(write_end,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write_end)
        with os.fdopen(read_end) as ready:
            number = ready.readline().strip()
        if not number:
            server.kill()
            raise RuntimeError(f"Xvfb exited with code {server.wait()} before giving a display number")
        authority = Path(folder, "Xauthority")
        authority.write_bytes(_xauthority_entry(number))
        display = f":{number}"
        saved = {name: os.environ.get(name) for name in ("DISPLAY", "XAUTHORITY")}
        os.environ.update(DISPLAY=display, XAUTHORITY=str(authority))
        try:
            yield display
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            server.kill()
            server.wait()


def _xauthority_entry(number):
    """One cookie for the display, in the Xauthority file format.

    python-xlib refuses to connect without an Xauthority file and prints a warning
    on every connection when it is empty; Xvfb without -auth ignores the cookie.
    """

    def counted(data):
        return struct.pack(">H", len(data)) + data

    family_local = 256
    return (
        struct.pack(">H", family_local)
        + counted(socket.gethostname().encode())
        + counted(number.encode())
        + counted(b"MIT-MAGIC-COOKIE-1")
        + counted(secrets.token_bytes(16))
    )
