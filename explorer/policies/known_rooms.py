"""The rooms an agent has come to know from its views (perception/room_sight.py): the rooms it stood in,
saw into, or saw a door lead to, and the doors between them. It grows by unions, so reading a step twice
changes nothing."""

from __future__ import annotations

from nodes.decision_context import DecisionContext, Wall
from perception.rooms import Room


class KnownRooms:
    def __init__(self) -> None:
        self.rooms: dict[str, Room] = {}  # by name
        self.doors: dict[Wall, frozenset[str]] = {}  # door (x, y) -> the names of the rooms it joins (one or two)
        self._room_of: dict[Wall, Room] = {}

    def learn(self, context: DecisionContext) -> bool:
        """Take in the rooms and doors the step shows; True when any is new."""
        sight = context.view.rooms
        if sight is None:
            return False
        rooms = [sight.room, *sight.in_sight, *(door.leads_to for door in sight.doors), *(sight.doorway or ())]
        new = [room for room in rooms if room is not None and room.name not in self.rooms]
        for room in new:
            self.add(room)
        doors = {door.cell: (sight.room, door.leads_to) for door in sight.doors}
        if sight.doorway:
            doors[(context.view.pose.x, context.view.pose.y)] = sight.doorway
        new_doors = {cell: frozenset(side.name for side in sides if side) for cell, sides in doors.items()}
        new_doors = {cell: names for cell, names in new_doors.items() if self.doors.get(cell) != names}
        self.doors.update(new_doors)
        return bool(new or new_doors)

    def add(self, room: Room) -> None:
        """Know `room` (by its name: a room known already stays as it was)."""
        if room.name not in self.rooms:
            self.rooms[room.name] = room
            self._room_of.update(dict.fromkeys(room.cells, room))

    def room_at(self, column: Wall) -> Room | None:
        """The known room the ground (x, y) lies in, or None."""
        return self._room_of.get(column)

    def doors_into(self, room: Room) -> list[Wall]:
        """The known doors of `room`, in (x, y) order."""
        return sorted(cell for cell, names in self.doors.items() if room.name in names)
