"""A run's settings: a record of typed parts, one per concern (world, team, model calls, schedule, memory,
output, game window). Each part declares its options on its fields (explorer/config/options.py) and checks
its own; `RunConfig.check` adds what involves two parts. The command line, `make_config`, config.json and
sweep files name every option by its field, whichever part holds it: the names are unique across the parts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields, replace
from typing import Any, get_type_hints

from explorer.config.call_options import GOALS, CallOptions
from explorer.config.episode_options import EpisodeOptions
from explorer.config.memory_options import MemoryOptions
from explorer.config.options import Option, declared, first_problem, read_back, recorded
from explorer.config.output_options import OutputOptions
from explorer.config.team_options import TeamOptions
from explorer.config.timing_options import TimingOptions
from explorer.config.window_options import WindowOptions
from explorer.records.errors import ConfigError
from explorer.team.topologies import SILENT

Part = EpisodeOptions | TeamOptions | CallOptions | TimingOptions | MemoryOptions | OutputOptions | WindowOptions


@dataclass(frozen=True)
class RunConfig:
    """A run's settings, in parts; `RunConfig.of(agents=3, model="offline")` makes one from options named as
    their fields, as `make_config` does (which also reads text and checks)."""

    episode: EpisodeOptions = field(default_factory=EpisodeOptions)
    team: TeamOptions = field(default_factory=TeamOptions)
    calls: CallOptions = field(default_factory=CallOptions)
    timing: TimingOptions = field(default_factory=TimingOptions)
    memory: MemoryOptions = field(default_factory=MemoryOptions)
    output: OutputOptions = field(default_factory=OutputOptions)
    window: WindowOptions = field(default_factory=WindowOptions)

    @classmethod
    def of(cls, **options: Any) -> RunConfig:
        """An unchecked config of options named as their fields, the rest at their defaults."""
        return cls().with_options(**options)

    def with_options(self, **options: Any) -> RunConfig:
        """This config with the named options changed, whichever parts hold them (TypeError for a name no part
        has: a mistake in code, not in a user's input, which make_config reads)."""
        changes: dict[str, Any] = {}
        for name, part in self.parts().items():
            mine = {key: options.pop(key) for key in [f.name for f in fields(part)] if key in options}
            if mine:
                changes[name] = replace(part, **mine)
        if options:
            raise TypeError(f"RunConfig has no option {', '.join(options)}")
        return replace(self, **changes)

    def parts(self) -> dict[str, Part]:
        return {part.name: getattr(self, part.name) for part in fields(self)}

    def check(self) -> RunConfig:
        """This config, if its options make a run; else ConfigError, one line saying what is wrong. The declared
        checks of every part come first, then each part's own, then those across parts."""
        for part in self.parts().values():
            problem = first_problem(part)
            if problem:
                raise ConfigError(problem)
        self.episode.check()
        self.team.check()
        self.calls.check()
        self.memory.check()
        self.output.check()
        if self.episode.mode == "unity":
            self.window.check(self.team.agents)
        self._check_across()
        return self

    def _check_across(self) -> None:
        """What one part's options ask of another's."""
        mock, team, kind = self.episode.mock, self.team, self.timing.schedule_kind
        if self.window.given() and self.episode.mode != "unity":
            raise ConfigError("--window-title, --keymap, --region, --vision and --pause-key are for --mode unity")
        if self.calls.decide == GOALS and not mock:
            raise ConfigError("--decide goals needs --mode mock: goals come from the grid map a mock world gives")
        if kind.mock_only and not mock:
            raise ConfigError(f"--schedule {self.timing.schedule} needs --mode mock: a game keeps its own time")
        if kind.one_process and (team.coordinator is not None or team.store is not None):
            raise ConfigError(
                f"--schedule {self.timing.schedule} runs a team of explorers in one process: not with --coordinator or --store"
            )
        if team.coordinator is not None and not mock:
            raise ConfigError("--coordinator needs --mode mock: it plans over the ground the explorers report")
        if team.local_agents and self.calls.limits():
            raise ConfigError(
                "--max-cost, --max-calls and --max-tokens bound one process's model calls: "
                "not for a team split over processes (--local-agents)"
            )

    def to_dict(self) -> dict[str, Any]:
        """The options as config.json records them (paths as text, URLs redacted), part by part."""
        return {name: value for part in self.parts().values() for name, value in recorded(part).items()}

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any], **missing: Any) -> RunConfig:
        """The config a config.json records, unchecked: `missing` gives what it does not hold (a run from before
        an option existed), else the parts' defaults."""
        held = _one_comm(settings)
        given = {name: value for part in fields(cls) for name, value in read_back(_part_class(part), held).items()}
        return cls.of(**{**missing, **given})


def _part_class(part: Field[Any]) -> type:
    return part.default_factory  # type: ignore[return-value]  # each part's default is its class's default


def option_fields() -> list[tuple[Field[Any], Option]]:
    """Every run option, part by part, each field with its declaration."""
    return [option for part in fields(RunConfig) for option in declared(_part_class(part))]


def option_default(name: str) -> Any:
    """The default of the option held by the field `name`."""
    return next(field.default for field, _ in option_fields() if field.name == name)


def option_kind(name: str) -> Any:
    """The type of the field `name` (`int | None`, `tuple[str, ...]`, ...), in whichever part holds it."""
    hints = [get_type_hints(_part_class(part)) for part in fields(RunConfig)]
    return next(part[name] for part in hints if name in part)


def _one_comm(settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """A config.json's settings with communication as one name: one written before `comm` was, held `comm`
    (false for --no-comm) and `comm_topology` (--comm) apart."""
    if not isinstance(settings.get("comm", ""), bool):
        return settings
    old = {name: value for name, value in settings.items() if name != "comm_topology"}
    return {**old, "comm": settings.get("comm_topology", "all") if settings["comm"] else SILENT}
