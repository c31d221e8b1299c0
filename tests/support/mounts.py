"""A real small file system for a test: tmpfs, mounted by the test (root only; skipped elsewhere)."""

import subprocess
from contextlib import contextmanager

import pytest


@contextmanager
def tmpfs(mount, options):
    """`mount` (a new directory) as a tmpfs with `options`, e.g. "size=256k" or "ro"."""
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)
