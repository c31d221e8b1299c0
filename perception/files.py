"""Files that may come from elsewhere (a run directory received as a tarball, say), read and written safely.

Reading: only a regular file is read, opened without blocking (a FIFO is refused rather than waited on),
and never past a bound (a link to /dev/zero, or a file that grows while it is read, cannot take the
machine's memory). Writing: a file is written whole or not at all, through a temporary created
exclusively beside it, so a link planted under a temporary's name is never followed.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


class NotARegularFile(OSError):
    """A device, a FIFO or a socket where a file was expected: reading it could block or never end."""


class FileTooLarge(OSError):
    """A file over the reader's bound."""


@contextmanager
def open_regular_file(path: str | os.PathLike[str]) -> Iterator[tuple[BinaryIO, int]]:
    """(the open file, its size when opened): the regular file at `path` (links followed), for reading.

    IsADirectoryError for a directory; NotARegularFile for anything else that is not a regular file.
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(status.st_mode):
            raise NotARegularFile(f"is not a regular file ({file_kind(status.st_mode)})")
        yield file, status.st_size


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at `path` (links followed), at most `limit` of them; FileTooLarge past it."""
    with open_regular_file(path) as (file, _):
        data = file.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(f"larger than {limit:,} bytes")
    return data


def file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def replace_whole(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> None:
    """Make the file at `path` whole or not at all: `write(file)` fills a temporary beside it, which then
    replaces it (a link at `path` is replaced, not followed). Raises OSError; no temporary is left then."""
    path = Path(path)
    # A fresh name, created exclusively and never through a link: a file planted in the directory,
    # under this name or any other, is neither followed nor overwritten.
    temporary = path.with_name(f"{path.name}.{uuid.uuid4().hex[:12]}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            write(file)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
