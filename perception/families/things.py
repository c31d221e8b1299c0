"""What the generated worlds hold, by the kind of place: the objects a person would expect there,
so that a later reader (or model) can guess a room from its objects and the reverse."""

from __future__ import annotations

ROOM_OBJECTS = {
    "living room": ("sofa", "tv", "coffee_table", "bookshelf", "armchair", "rug", "floor_lamp", "plant"),
    "kitchen": ("fridge", "stove", "sink", "kettle", "toaster", "microwave", "dishwasher", "fruit_bowl"),
    "bathroom": ("bathtub", "towel", "toothbrush", "mirror", "shower", "soap", "laundry_basket"),
    "bedroom": ("bed", "wardrobe", "bedside_lamp", "alarm_clock", "dresser", "slippers", "pillow"),
    "office": ("desk", "computer", "printer", "filing_cabinet", "office_chair", "bookcase", "stapler"),
    "dining room": ("dining_table", "chairs", "sideboard", "candles", "vase", "placemats"),
    "hallway": ("coat_rack", "shoe_rack", "umbrella_stand", "key_bowl", "doormat"),
    "laundry": ("washing_machine", "dryer", "ironing_board", "detergent", "clothes_horse"),
    # offices
    "meeting room": ("conference_table", "projector", "whiteboard", "speakerphone", "flip_chart"),
    "open office": ("monitor", "keyboard", "desk_lamp", "headset", "potted_plant", "coffee_mug", "stapler"),
    "private office": ("desk", "bookcase", "safe", "couch", "filing_cabinet", "diploma"),
    "kitchenette": ("coffee_machine", "water_cooler", "microwave", "fridge", "kettle"),
    "server room": ("server_rack", "ups", "network_switch", "cable_tray", "air_conditioner"),
    "print room": ("printer", "shredder", "paper_stack", "toner_box", "scanner"),
}
CORRIDOR_OBJECTS = ("fire_extinguisher", "plant", "bench", "notice_board", "clock", "bin", "painting")
SIDE_ROOM_OBJECTS = ("chair", "lamp", "box", "radio", "suitcase", "mop", "bucket", "globe", "typewriter", "vase")
MAZE_OBJECTS = ("key", "coin", "lantern", "map", "compass", "chest", "scroll", "gem", "hourglass")
HALL_OBJECTS = ("chair", "table", "crate", "lamp", "statue", "bench", "piano", "podium", "banner", "trophy")
FLOOR_OBJECTS = ("pallet_jack", "ladder", "fire_extinguisher", "cable_reel", "tires", "barrel", "forklift")
SHELF_OBJECTS = ("batteries", "paint_cans", "toolbox", "rope", "helmet", "gloves", "drill", "boxes", "light_bulbs")

# Things a search task asks for (`--find`, or `find=` in a generated world's name), with the kinds of room
# each belongs in, likeliest first; any object of ROOM_OBJECTS may be asked for as well (its kinds: those
# that list it).
SEARCH_ITEMS = {
    "toothbrush": ("bathroom",),
    "shampoo": ("bathroom",),
    "laptop": ("office", "private office", "open office", "bedroom"),
    "frying_pan": ("kitchen",),
    "mug": ("kitchen", "kitchenette"),
    "teddy_bear": ("bedroom",),
    "wine_glass": ("dining room", "kitchen"),
    "keys": ("hallway", "living room"),
    "envelope": ("print room", "office"),
    "hard_drive": ("server room", "office"),
    "sandwich": ("kitchenette", "kitchen"),
}


def findable_things() -> tuple[str, ...]:
    """Every thing a generated world's search task may ask for, sorted: the search items and the rooms' objects."""
    return tuple(sorted({*SEARCH_ITEMS, *(name for names in ROOM_OBJECTS.values() for name in names)}))


def home_kinds(thing: str) -> tuple[str, ...]:
    """The kinds of room `thing` belongs in, likeliest first; () for a thing the generated worlds do not know."""
    if thing in SEARCH_ITEMS:
        return SEARCH_ITEMS[thing]
    return tuple(kind for kind, names in ROOM_OBJECTS.items() if thing in names)


def category_of(kind: str) -> str:
    """The category of the things that belong in a kind of room: bathroom -> bathroom_item."""
    return f"{kind.replace(' ', '_')}_item"
