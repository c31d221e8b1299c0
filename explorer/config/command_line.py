"""The run options on the command line, made from the declarations of RunConfig's parts: the parser, and a
RunConfig from what it parsed. main.py's parser adds the actions that are no run's (explorer/cli/main.py); a sweep
checks each of its runs with this one (explorer/sweep/sweep_file.py)."""

from __future__ import annotations

import argparse
from dataclasses import Field
from typing import Any, NoReturn

from explorer.config.options import OneOf, Option, Spelling
from explorer.config.run_config import RunConfig, option_fields
from explorer.records.errors import ConfigError

# --help's sections after the main one, in order: {Option.group: (title, description)}.
SECTIONS = {
    "embedding": ("the embedding model", "all-MiniLM-L6-v2, from the installed package"),
    "team": ("a team split across processes", "start every process with the same run arguments"),
    "unity": ("unity mode", "each option once for all agents, or once per agent in order"),
}
# The options in the order --help lists them, a user's order: the parts group them by what they set, which
# is not the order to read them in. Every option is here once (a test checks); a section's are in its own.
HELP_ORDER = (
    "--mode",
    "--agents",
    "--steps",
    "--world",
    "--world-seed",
    "--seed",
    "--random-starts",
    "--stop-when",
    "--find",
    "--no-prior",
    "--model",
    "--api-base",
    "--comm",
    "--decide",
    "--reply-format",
    "--schedule",
    "--coordinator",
    "--coordinators",
    "--run-dir",
    "--profiles",
    "--resume-memory",
    "--replay-replies",
    "--timeout",
    "--no-preflight",
    "--max-concurrency",
    "--price-in",
    "--price-out",
    "--max-cost",
    "--max-calls",
    "--max-tokens",
    "--fallback",
    "--telemetry",
    "--window-title",
    "--keymap",
    "--region",
    "--vision",
    "--pause-key",
    "--store",
    "--run-id",
    "--local-agents",
    "--join-timeout",
    "--embedder",
    "--embedder-cache",
)


class RunParser(argparse.ArgumentParser):
    """A parser of RunConfig's run options, with --help's sections; its errors are ConfigErrors, not exits."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self.sections = {name: self.add_argument_group(title, text) for name, (title, text) in SECTIONS.items()}
        for field, spec in in_help_order(option_fields()):
            section = self.sections[spec.group] if spec.group else self
            if spec.spelling:  # before the option itself, in --help too
                section.add_argument(spec.spelling.flag, **_spelling_arguments(field, spec.spelling))
            section.add_argument(spec.flag, **_arguments(field, spec))

    def error(self, message: str) -> NoReturn:
        raise ConfigError(message)


def in_help_order(options: list[tuple[Field[Any], Option]]) -> list[tuple[Field[Any], Option]]:
    """The options in HELP_ORDER."""
    return sorted(options, key=lambda option: HELP_ORDER.index(option[1].flag))


def _arguments(field: Field[Any], spec: Option) -> dict[str, Any]:
    """argparse's `add_argument` keywords for a declared option."""
    arguments: dict[str, Any] = {"dest": field.name, "help": spec.help, "default": field.default}
    if spec.switch_off:
        return {**arguments, "action": "store_false"}
    if spec.switch_on:
        return {**arguments, "action": "store_true"}
    if spec.repeat:
        arguments.update(action="append", default=[])  # argparse appends to a list of its own
    if spec.metavar is not None:
        arguments["metavar"] = spec.metavar
    if spec.type is not None:
        arguments["type"] = spec.type
    if isinstance(spec.check, OneOf) and spec.check.in_parser:
        arguments["choices"] = spec.check.choices
    return arguments


def _spelling_arguments(field: Field[Any], spelling: Spelling) -> dict[str, Any]:
    return {
        "dest": field.name,
        "help": spelling.help,
        "default": field.default,
        "action": "store_const",
        "const": spelling.value,
    }


def run_options() -> dict[str, tuple[str, Option]]:
    """RunConfig's options by their flag without its dashes, e.g. {"max-concurrency": (field name, Option)}; a
    spelling (--no-comm) as a switch of its own that sets its option's field."""
    options = {}
    for field, spec in option_fields():
        if spec.spelling:
            options[spec.spelling.flag.removeprefix("--")] = (
                field.name,
                Option(spec.spelling.flag, spec.spelling.help, switch_on=True),
            )
        options[spec.flag.removeprefix("--")] = (field.name, spec)
    return options


def config_from(args: argparse.Namespace, **settings: Any) -> RunConfig:
    """The checked RunConfig of a RunParser's parsed options; `settings` give the fields no option sets."""
    values: dict[str, Any] = {
        field.name: tuple(getattr(args, field.name)) if spec.repeat else getattr(args, field.name)
        for field, spec in option_fields()
    }
    return RunConfig.of(**values, **settings).check()
