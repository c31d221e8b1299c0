"""What the command line changes of a sweep file: `--set KEY=VALUE`, a key of its `fixed:`, and `--out DIR`.

So a sweep runs again elsewhere, or with another fixed option, without a copy of the file, as Hydra's and Ray
Tune's users expect. A pair is read as the file's line `KEY: VALUE` would be (`--set find=[toothbrush,laptop]`
is a list), then checked where the file's `fixed:` is (sweep_file.py): the runs, their names and what a resumed
sweep refuses are those of the file edited by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.records.errors import ConfigError
from perception.yaml_files import parse_mapping

KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")  # a run option's name, as a sweep file writes it


@dataclass(frozen=True)
class Overrides:
    pairs: tuple[str, ...] = ()  # --set's KEY=VALUE, as given, in order
    out: Path | None = None  # --out DIR: the sweep's directory instead of the file's `out`

    def values(self) -> list[tuple[str, Any]]:
        """Each pair's key and its value read as YAML; a ConfigError, in one line, for one that is no KEY=VALUE."""
        return [_key_value(pair) for pair in self.pairs]


NO_OVERRIDES = Overrides()


def _key_value(pair: str) -> tuple[str, Any]:
    key, equals, value = pair.partition("=")
    if not equals or not KEY.fullmatch(key):
        raise ConfigError(f"--set {pair!r}: give KEY=VALUE, KEY an option of the sweep file's `fixed:`, e.g. steps=80")

    def refused(_: object, problem: str) -> ConfigError:
        return ConfigError(f"--set {pair!r}: {problem}")

    mapping = parse_mapping(f"{key}: {value}", "--set", refused)  # as the file's `fixed:` reads it
    if list(mapping) != [key]:
        raise refused(None, "the value must be one YAML value, on one line")
    return key, mapping[key]


def noted(text: str, changes: tuple[str, ...]) -> str:
    """The sweep file's text with the command line's changes after it, as comments: what the sweep ran."""
    if not changes:
        return text
    lines = "".join(f"#   {change}\n" for change in changes)
    return f"{text.rstrip()}\n\n# Overridden on the command line (--set, --out):\n{lines}"
