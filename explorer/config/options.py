"""Run options declared once, as metadata on the fields of the parts of RunConfig (explorer/config/run_config.py).

A field's `option(...)` gives its command-line flag and help, its check where it has a simple one, and its
place in config.json. The parser (explorer/config/command_line.py), the checks and config.json are all made
from these declarations, so adding a run option is one field plus its use. A profiles file's keys are
declared so too, on the fields of Profile (explorer/config/profiles.py), with the same kind of Check.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, fields
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from explorer.records.secrets import redact_url

# The key of a field's metadata that holds its declaration: a run option's Option, a profile key's
# ProfileKey (explorer/config/profiles.py).
DECLARATION = "declaration"
T = TypeVar("T")


class Check(Protocol):
    def problem(self, flag: str, value: Any) -> str | None:
        """What is wrong with `value`, in one line naming `flag`; None when nothing is."""
        ...


@dataclass(frozen=True)
class OneOf:
    """One of a few names. With `in_parser` the parser refuses the others itself, and --help lists them."""

    choices: tuple[str, ...]
    in_parser: bool = False
    label: str | None = None  # how the error names the option, where not by its flag

    def problem(self, flag: str, value: Any) -> str | None:
        if value in self.choices:
            return None
        return f"unknown {self.label or flag} {value!r}: choose one of {', '.join(self.choices)}"


@dataclass(frozen=True)
class Count:
    """A whole number from `least`, and up to `most` where there is one; None (not given) passes."""

    least: int
    most: int | None = None

    def problem(self, flag: str, value: Any) -> str | None:
        if value is None or (self.least <= value and (self.most is None or value <= self.most)):
            return None
        if self.most is None:
            return f"{flag} must be at least {self.least}, not {value}"
        return f"{flag} must be from {self.least} to {self.most}, not {value}"


@dataclass(frozen=True)
class Seconds:
    """A finite number of seconds, more than 0 and at most a day: beyond that a client library's own
    limits fail every call with a misleading error, and no one waits that long on purpose."""

    most: float = 86_400.0

    def problem(self, flag: str, value: Any) -> str | None:
        if math.isfinite(value) and 0 < value <= self.most:
            return None
        return f"{flag} must be a number of seconds more than 0 and at most {self.most:g} (a day), not {value}"


@dataclass(frozen=True)
class Dollars:
    """A finite price, 0 or more; None (not given) passes."""

    def problem(self, flag: str, value: Any) -> str | None:
        if value is None or (math.isfinite(value) and value >= 0):
            return None
        return f"{flag} must be a number of dollars, 0 or more, not {value}"


@dataclass(frozen=True)
class NotBlank:
    """Text with more than white space in it."""

    def problem(self, flag: str, value: Any) -> str | None:
        return None if value.strip() else f"{flag} must not be empty"


@dataclass(frozen=True)
class ServerUrl:
    """An http or https URL with a host, and a port from 1 to 65535 where it gives one; None (not given) passes."""

    def problem(self, flag: str, value: Any) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value)
            usable = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
        except ValueError:  # a port that is no number, or out of range; an unclosed [ of an IPv6 address
            usable = False
        if usable:
            return None
        return (
            f"{flag} must be an http or https URL with a host (and a port from 1 to 65535), such as "
            f"http://127.0.0.1:8000/v1, not {redact_url(value)!r}"
        )


@dataclass(frozen=True)
class Record:
    """How a value is written into config.json, and read back from it."""

    write: Callable[[Any], Any]
    read: Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


AS_IS = Record(_same, _same)  # JSON already: numbers, text, true and false, null
PATH = Record(lambda path: None if path is None else str(path), lambda text: None if text is None else Path(text))


def _located(path: str | Path) -> str:
    """A file here as its absolute path, so that --report and --recover find it from any folder; anything
    else (a generated world's name) as given."""
    return str(Path(path).absolute()) if Path(path).is_file() else str(path)


FILE_PATH = Record(_located, PATH.read)
PATHS = Record(lambda paths: [str(path) for path in paths], lambda texts: tuple(Path(text) for text in texts))
TEXTS = Record(list, tuple)
RECTANGLES = Record(lambda boxes: [list(box) for box in boxes], lambda boxes: tuple(tuple(box) for box in boxes))
# A URL may carry a key: config.json keeps it redacted, and reads it back so.
SECRET_URL = Record(lambda url: redact_url(url) if url else None, _same)


@dataclass(frozen=True)
class Spelling:
    """Another flag for one value of an option, with no value of its own: --no-comm for --comm none."""

    flag: str
    value: Any
    help: str


@dataclass(frozen=True)
class Option:
    """A field of a RunConfig part as a run option; see `option`."""

    flag: str
    help: str
    metavar: str | None = None
    type: Callable[[str], Any] | None = None
    repeat: bool = False
    switch_off: bool = False
    switch_on: bool = False
    group: str | None = None
    check: Check | None = None
    record: Record | None = AS_IS
    spelling: Spelling | None = None


def option(
    flag: str,
    help: str,
    *,
    metavar: str | None = None,
    type: Callable[[str], Any] | None = None,
    repeat: bool = False,
    switch_off: bool = False,
    switch_on: bool = False,
    group: str | None = None,
    check: Check | None = None,
    record: Record | None = AS_IS,
    spelling: Spelling | None = None,
) -> dict[str, Option]:
    """A field's metadata that makes it a run option.

    `flag` and `help` are the command line's (`%(default)s` in `help` shows the field's default); `type`
    parses the flag's text (None: kept as text); `repeat`: given once per value, a tuple; `switch_off`: a
    flag with no value that sets the field to False (`switch_on`: to True); `group`: its --help section (command_line.SECTIONS),
    None for the main one; `check`: what every RunConfig is checked for, however it was made; `record`:
    how config.json holds it, None where it does not; `spelling`: another flag that sets one of its values.
    """
    spec = Option(
        flag,
        help,
        metavar=metavar,
        type=type,
        repeat=repeat,
        switch_off=switch_off,
        switch_on=switch_on,
        group=group,
        check=check,
        record=record,
        spelling=spelling,
    )
    return {DECLARATION: spec}


def declarations(record_class: type, kind: type[T]) -> list[tuple[Field[Any], T]]:
    """The fields of a dataclass declared as a `kind`, in field order, each with its declaration."""
    return [
        (field, field.metadata[DECLARATION])
        for field in fields(record_class)
        if isinstance(field.metadata.get(DECLARATION), kind)
    ]


def declared(config_class: type) -> list[tuple[Field[Any], Option]]:
    """The run options of a dataclass, in field order, each field with its Option."""
    return declarations(config_class, Option)


def first_problem(config: Any) -> str | None:
    """What the first declared check `config` fails says, in field order; None when it passes them all."""
    for field, spec in declared(type(config)):
        problem = spec.check.problem(spec.flag, getattr(config, field.name)) if spec.check else None
        if problem:
            return problem
    return None


def recorded(config: Any) -> dict[str, Any]:
    """`config`'s options as config.json records them, in field order."""
    return {
        field.name: spec.record.write(getattr(config, field.name))
        for field, spec in declared(type(config))
        if spec.record is not None
    }


def read_back(config_class: type, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The field values a config.json records, read back; fields it does not hold are left out."""
    return {
        field.name: spec.record.read(settings[field.name])
        for field, spec in declared(config_class)
        if spec.record is not None and field.name in settings
    }
