"""Reading the YAML files people write (worlds, key maps): every problem is one line naming the file."""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from perception.files import FileTooLarge, NotARegularFile, read_regular_file

# What a file people write may hold: far more than any world, key map or profiles file needs,
# far less than what would take the machine's memory or minutes to read.
MAX_FILE_BYTES = 10_000_000
MAX_VALUES = 1_000_000  # values once YAML aliases are expanded: an alias "bomb" expands exponentially
MAX_PROBLEM_CHARS = 300  # an error quotes at most this much of the file's values


class FileProblem(Exception):
    """A file that cannot be used; the message is one line: `<path>: <problem>`."""

    def __init__(self, path, problem):
        self.path = str(path)
        problem = " ".join(str(problem)[: MAX_PROBLEM_CHARS * 4].split())
        self.problem = problem if len(problem) <= MAX_PROBLEM_CHARS else problem[: MAX_PROBLEM_CHARS - 3] + "..."
        super().__init__(f"{self.path}: {self.problem}")


class Invalid(Exception):
    """A problem in a file's data; the loader adds the path."""


def load_mapping(path, error, what):
    """The top-level mapping of the YAML file at `path`; problems raise `error(path, problem)`.

    `what` names the kind of file, as in "is a directory, not a world file".
    """
    return parse_mapping(read_yaml_text(path, error, what), path, error)


def read_yaml_text(path, error, what) -> str:
    """The text of the YAML file at `path`, a regular file of at most MAX_FILE_BYTES; as `load_mapping`."""
    try:
        text = read_regular_file(path, MAX_FILE_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise error(path, "no such file") from None
    except IsADirectoryError:
        raise error(path, f"is a directory, not {what}") from None
    except NotARegularFile as problem:
        raise error(path, f"{problem}, not {what}") from None
    except FileTooLarge:
        raise error(path, f"the file is larger than {MAX_FILE_BYTES // 1_000_000} MB") from None
    except UnicodeDecodeError:
        raise error(path, "cannot read the file: it is not UTF-8 text") from None
    except OSError as problem:
        raise error(path, f"cannot read the file: {problem.strerror}") from None
    return text


def parse_mapping(text, path, error):
    """The top-level mapping of `text`, read from the YAML file at `path`; as `load_mapping`."""
    try:
        data = _load_bounded(text, path, error)
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


def _load_bounded(text, path, error):
    """yaml.safe_load, refusing a document whose aliases would expand past MAX_VALUES values,
    and a mapping that gives a key twice (YAML keeps the last silently)."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node) > MAX_VALUES:
            raise error(path, f"the file expands to more than {MAX_VALUES:,} values (through YAML aliases?)")
        duplicate = _duplicate_key(node)
        if duplicate is not None:
            key, line = duplicate
            raise error(path, f"the key {key!r} is given twice (again at line {line})")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _expanded_size(root):
    """How many values the node graph holds once every alias is expanded; stops counting past MAX_VALUES."""
    sizes: dict[int, int] = {}  # id(node) -> its expanded size
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = (
            [part for pair in node.value for part in pair]
            if isinstance(node, yaml.MappingNode)
            else node.value
            if isinstance(node, yaml.SequenceNode)
            else []
        )
        if children_done:
            sizes[id(node)] = min(MAX_VALUES + 1, 1 + sum(sizes[id(child)] for child in children))
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _duplicate_key(root):
    """(key, line) of the first mapping key given a second time, in any mapping of the document; or None."""
    seen_nodes, stack = set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if (key.tag, key.value) in keys:
                        return key.value[:40], key.start_mark.line + 1
                    keys.add((key.tag, key.value))
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return None


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)  # YAML `yes` is a bool


def flow_text(value) -> str:
    """`value` (a list, a mapping or a scalar) as one line of YAML in flow style, quoted where YAML needs it."""
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=math.inf, allow_unicode=True)
    return text.removesuffix("...\n").strip()


def kind(value):
    """What a YAML value is, in words."""
    kinds = {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "number"}
    return kinds.get(type(value), "number" if isinstance(value, float) else type(value).__name__)


def check_keys(mapping, allowed, what):
    unknown = sorted(str(key) for key in mapping if key not in allowed)
    if unknown:
        raise Invalid(f"unknown {what} key '{unknown[0]}' (allowed: {', '.join(allowed)})")


def named_entry(entry: object, allowed, what: str, shape: str) -> tuple[dict, str]:
    """(the entry, its name): a mapping of only `allowed` keys with a non-empty `name`, as a world file's
    objects and rooms are; Invalid, naming `what` and the `shape` it must have, where it is not."""
    if not isinstance(entry, dict):
        raise Invalid(f"each {what} must be a mapping with {shape}, got {entry!r}")
    check_keys(entry, allowed, what)
    if "name" not in entry:
        raise Invalid(f"{what} without a name: {entry!r}")
    name = entry["name"]
    if not isinstance(name, str) or not name.strip():
        raise Invalid(f"{what} name must be a non-empty string, got {name!r}")
    return entry, name


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


def shipped_name(path, shipped_dir) -> str | None:
    """The name (`office`) of the file shipped in `shipped_dir` that `path` is, None for any other: what a run
    records of a shipped file, the same from every checkout or install of this version."""
    path = Path(path)
    if path.suffix != ".yaml" or not path.is_file():
        return None
    return path.stem if path.resolve().parent == Path(shipped_dir).resolve() else None


def shipped_file(name, shipped_dir) -> Path | None:
    """The file shipped in `shipped_dir` that `name` (shipped_name's) names; None where it names none."""
    return Path(shipped_dir) / f"{name}.yaml" if name in shipped_names(shipped_dir) else None
