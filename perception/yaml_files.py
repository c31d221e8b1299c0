"""Reading the YAML files people write (worlds, key maps): every problem is one line naming the file."""

from __future__ import annotations

from pathlib import Path

import yaml


class FileProblem(Exception):
    """A file that cannot be used; the message is one line: `<path>: <problem>`."""

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = " ".join(str(problem).split())
        super().__init__(f"{self.path}: {self.problem}")


class Invalid(Exception):
    """A problem in a file's data; the loader adds the path."""


def load_mapping(path, error, what):
    """The top-level mapping of the YAML file at `path`; problems raise `error(path, problem)`.

    `what` names the kind of file, as in "is a directory, not a world file".
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(path, "no such file") from None
    except IsADirectoryError:
        raise error(path, f"is a directory, not {what}") from None
    except UnicodeDecodeError:
        raise error(path, "cannot read the file: it is not UTF-8 text") from None
    except OSError as problem:
        raise error(path, f"cannot read the file: {problem.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as problem:
        where = f" at line {problem.problem_mark.line + 1}" if problem.problem_mark else ""
        raise error(path, f"invalid YAML{where}: {problem.problem}") from None
    except yaml.YAMLError as problem:
        raise error(path, f"invalid YAML: {problem}") from None
    if data is None:
        raise error(path, "the file is empty")
    if not isinstance(data, dict):
        raise error(path, f"the top level must be a mapping of keys, not a {kind(data)}")
    return data


def kind(value):
    """What a YAML value is, in words."""
    kinds = {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "number"}
    return kinds.get(type(value), "number" if isinstance(value, float) else type(value).__name__)


def check_keys(mapping, allowed, what):
    unknown = sorted(str(key) for key in mapping if key not in allowed)
    if unknown:
        raise Invalid(f"unknown {what} key '{unknown[0]}' (allowed: {', '.join(allowed)})")


def shipped_or_given(path, shipped_dir) -> Path:
    """`path` if it is a file; else the file of that name shipped in `shipped_dir`
    (`worlds/office.yaml`, `office.yaml` and `office` all name the shipped office), if there is one."""
    path = Path(path)
    if path.is_file():
        return path
    name = path.name if path.suffix else f"{path.name}.yaml"
    shipped = Path(shipped_dir) / name
    return shipped if shipped.is_file() else path


def shipped_names(shipped_dir):
    return sorted(file.stem for file in Path(shipped_dir).glob("*.yaml"))
