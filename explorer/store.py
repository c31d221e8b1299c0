"""The team's shared store (spec section 2): discoveries, positions, mailboxes.

One instance is shared by all agents; it owns its lock and its methods are
the only way in, so no caller can see a half-made change.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

BROADCAST = "all"


@dataclass(frozen=True)
class Message:
    sender: str
    recipient: str  # an agent id or "all"
    message: str
    step: int | None = None

    def to_dict(self):
        return {"sender": self.sender, "recipient": self.recipient, "message": self.message, "step": self.step}


class BadRecipient(ValueError):
    """A message named an agent that is not in the team, or its own sender."""


class SharedStore:
    def __init__(self):
        self._lock = threading.Lock()
        self._objects: dict[str, tuple[str, int | None]] = {}  # name -> (finder, step), in discovery order
        self._positions: dict[str, dict] = {}
        self._mailboxes: dict[str, list[Message]] = {}
        self._history: list[Message] = []
        self._errors: list[dict] = []

    def register_agent(self, agent_id, position=None):
        """Give an agent a mailbox; do this for all agents before any starts."""
        with self._lock:
            self._mailboxes.setdefault(agent_id, [])
            self._positions[agent_id] = position

    def send_message(self, sender, recipient, message, step=None) -> Message:
        """Deliver to one mailbox, or to every other agent's for "all".

        An unknown recipient, or the sender itself, is recorded as an error
        and raises BadRecipient; nothing is delivered.
        """
        msg = Message(sender, recipient, message, step)
        with self._lock:
            if recipient == BROADCAST:
                targets = [a for a in self._mailboxes if a != sender]
            elif recipient in self._mailboxes and recipient != sender:
                targets = [recipient]
            else:
                problem = "is the sender" if recipient == sender else "is not in the team"
                error = {"sender": sender, "recipient": recipient, "step": step, "error": f"recipient {recipient!r} {problem}"}
                self._errors.append(error)
                raise BadRecipient(error["error"])
            for target in targets:
                self._mailboxes[target].append(msg)
            self._history.append(msg)
        return msg

    def read_mailbox(self, agent_id) -> list[Message]:
        """The agent's messages in arrival order; reading empties the mailbox."""
        with self._lock:
            messages = self._mailboxes[agent_id]
            self._mailboxes[agent_id] = []
        return messages

    def add_objects(self, names, finder=None, step=None) -> list[str]:
        """Record discoveries; returns the names the team had not seen before."""
        new = []
        with self._lock:
            for name in names:
                if name not in self._objects:
                    self._objects[name] = (finder, step)
                    new.append(name)
        return new

    def update_position(self, agent_id, position):
        with self._lock:
            self._positions[agent_id] = position

    def objects(self) -> list[str]:
        """Discovered object names in the order they were found."""
        with self._lock:
            return list(self._objects)

    def discoveries(self) -> dict[str, dict]:
        with self._lock:
            return {name: {"finder": f, "step": s} for name, (f, s) in self._objects.items()}

    def positions(self) -> dict[str, dict]:
        with self._lock:
            return dict(self._positions)

    def history(self) -> list[Message]:
        with self._lock:
            return list(self._history)

    def errors(self) -> list[dict]:
        with self._lock:
            return list(self._errors)
