"""A perception backend wrapped by a schedule: what the wrapper does not change is the backend's."""

from __future__ import annotations

from perception.base import EnvironmentInfo, PerceptionInterface, Pose


class WrappedPerception(PerceptionInterface):
    """Hands the backend's state, sight and actions on as they are; subclasses change what a view shows."""

    def __init__(self, backend: PerceptionInterface) -> None:
        super().__init__(backend.store)
        self.backend = backend

    def get_agent_state(self, agent_id: str) -> Pose:
        return self.backend.get_agent_state(agent_id)

    def get_visible_objects(self, agent_id: str, position: Pose | None = None) -> list[str]:
        return self.backend.get_visible_objects(agent_id, position)

    def get_environment_info(self) -> EnvironmentInfo:
        return self.backend.get_environment_info()

    def available_actions(self, agent_id: str) -> tuple[str, ...]:
        return self.backend.available_actions(agent_id)
