"""A run's options given from Python, as keywords: the same declarations, conversions and checks as the
command line's (explorer/config/command_line.py).

A value is either text, read as the command line reads it, or a value of its field's type (the annotations
of RunConfig's parts: a whole number, a path, True or False, a list of names, ...), which is then read as its text
would be, so that the command line's reader checks it too. Anything else is a ConfigError naming the option.
"""

from __future__ import annotations

import argparse
import numbers
import os
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from explorer.config.command_line import in_help_order
from explorer.config.options import Option
from explorer.config.run_config import RunConfig, option_default, option_fields, option_kind
from explorer.records.errors import ConfigError

QUIET = -1  # a run from Python prints only its summary, as -q does; verbosity=0 shows the live table
VERBOSITIES = (QUIET, 0, 1)
SHOWN_CHARS = 60  # of a value of the wrong kind, in the error
KINDS = {bool: "True or False", int: "a whole number", float: "a number", str: "text", Path: "a path"}


def make_config(**options: Any) -> RunConfig:
    """A checked RunConfig of the command line's options, each named as its field (the flag without
    its dashes, '-' as '_': world="office", max_concurrency=4, comm=False for --no-comm, window_titles=[...]
    for --window-title). Text is read as the command line reads it (world="gen:house", steps="40");
    `verbosity` is -q (-1, the default here), normal (0) or -v (1). ConfigError, one line, for a mistake."""
    specs = {field.name: spec for field, spec in in_help_order(option_fields())}  # named in that order
    verbosity = options.pop("verbosity", QUIET)
    if isinstance(verbosity, bool) or verbosity not in VERBOSITIES:
        raise ConfigError(f"verbosity must be -1 (quiet), 0 or 1 (verbose), not {_shown(verbosity)}")
    values: dict[str, Any] = {"verbosity": verbosity}
    for name, value in options.items():
        if name not in specs:
            raise ConfigError(f"unknown option {name!r}: the options are {', '.join(specs)}")
        spec, kind = specs[name], option_kind(name)
        if spec.repeat:  # tuple[X, ...]: one X, or a list of them
            values[name] = tuple(_read(name, spec, get_args(kind)[0], item) for item in _items(value))
        else:
            values[name] = _read(name, spec, kind, value)
    return RunConfig.of(**values).check()


def _items(value: Any) -> list[Any]:
    """A repeated option's values: one value, or a list of them."""
    return list(value) if isinstance(value, (list, tuple)) and not isinstance(value, (str, Path)) else [value]


def _read(name: str, spec: Option, kind: Any, value: Any) -> Any:
    """`value` as option `name` holds it: text read as the command line reads it; a value of the field's type
    `kind` read as its text would be (as it is, where the option has no reader)."""
    kind, optional = _without_none(kind)
    if value is None and optional:
        return None
    if isinstance(value, bool) and spec.spelling:  # comm=False for --no-comm, True for the default
        return spec.spelling.value if not value else option_default(name)
    if isinstance(value, str) and spec.type is not None:
        return _parsed(spec, value)
    if not _is(kind, value):
        or_none = " or None" if optional else ""
        raise ConfigError(f"{name} must be {_described(kind)}{or_none}, not {_shown(value)}")
    if spec.type is None:
        return value
    if get_origin(kind) is tuple and Ellipsis in get_args(kind):  # a list of names: each read as the command line's
        return tuple(part for item in value for part in _parsed(spec, item))
    return _parsed(spec, _text(value))


def _without_none(kind: Any) -> tuple[Any, bool]:
    """(the type without None, whether None is allowed) of an `X | None` or an `X`."""
    if get_origin(kind) in (Union, types.UnionType):
        kinds = [one for one in get_args(kind) if one is not type(None)]
        return kinds[0], len(kinds) < len(get_args(kind))
    return kind, False


def _is(kind: Any, value: Any) -> bool:
    """True where `value` is of the field's type `kind` (an int for a float too, never a bool for a number)."""
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is int:
        return isinstance(value, numbers.Integral)
    if kind is float:
        return isinstance(value, numbers.Real)
    if kind is Path:
        return isinstance(value, (str, os.PathLike))
    if get_origin(kind) is tuple:
        parts = get_args(kind)
        if not isinstance(value, (list, tuple)):
            return False
        if Ellipsis in parts:
            return all(_is(parts[0], item) for item in value)
        return len(value) == len(parts) and all(_is(part, item) for part, item in zip(parts, value))
    return isinstance(value, kind)


def _described(kind: Any) -> str:
    """The field's type in words."""
    if get_origin(kind) is tuple:
        parts = get_args(kind)
        if Ellipsis in parts:
            return f"a list of {_described(parts[0]).removeprefix('a ')}"
        return f"{len(parts)} values, each {_described(parts[0])}"
    return KINDS.get(kind, kind.__name__)


def _text(value: Any) -> str:
    """A value of a field's type as the command line writes it: a list of values joined by commas."""
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= SHOWN_CHARS else f"{shown[: SHOWN_CHARS - 3]}..."


def _parsed(spec: Option, text: str) -> Any:
    """Text read as the command line reads it."""
    try:
        return spec.type(text) if spec.type else text
    except argparse.ArgumentTypeError as error:
        raise ConfigError(f"{spec.flag}: {error}") from None
    except ValueError:
        raise ConfigError(f"{spec.flag}: invalid value {text!r}") from None
