"""A run's options given from Python, as keywords: the same declarations, conversions and checks as the
command line's (explorer/config/command_line.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from explorer.config.options import Option, declared
from explorer.config.run_config import RunConfig
from explorer.records.errors import ConfigError

QUIET = -1  # a run from Python prints only its summary, as -q does; verbosity=0 shows the live table


def make_config(**options: Any) -> RunConfig:
    """A checked RunConfig of the command line's options, each named as RunConfig's field (the flag without
    its dashes, '-' as '_': world="office", max_concurrency=4, comm=False for --no-comm, window_titles=[...]
    for --window-title). Text is read as the command line reads it (world="gen:house", steps="40");
    `verbosity` is -q (-1, the default here), normal (0) or -v (1). ConfigError, one line, for a mistake."""
    specs = {field.name: spec for field, spec in declared(RunConfig)}
    values: dict[str, Any] = {"verbosity": options.pop("verbosity", QUIET)}
    for name, value in options.items():
        if name not in specs:
            raise ConfigError(f"unknown option {name!r}: the options are {', '.join(specs)}")
        spec = specs[name]
        values[name] = tuple(_read(spec, item) for item in _items(value)) if spec.repeat else _read(spec, value)
    return RunConfig(**values).check()


def _items(value: Any) -> list[Any]:
    """A repeated option's values: one value, or a list of them."""
    return list(value) if isinstance(value, (list, tuple)) and not isinstance(value, (str, Path)) else [value]


def _read(spec: Option, value: Any) -> Any:
    """A value given as text, read as the command line reads it; any other value as it is."""
    if not isinstance(value, str) or spec.type is None:
        return value
    try:
        return spec.type(value)
    except argparse.ArgumentTypeError as error:
        raise ConfigError(f"{spec.flag}: {error}") from None
    except ValueError:
        raise ConfigError(f"{spec.flag}: invalid value {value!r}") from None
