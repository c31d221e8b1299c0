"""A stub model that obeys the schema it is sent: each reply a random instance of it, as a constrained decoder's.

`obeying(seed)` is a ChatServer answer. The instances reach every edge the schema allows (strings up to
their `maxLength`, arrays up to `maxItems`, repeats, odd case and spacing, nulls where allowed), so a
reader that refuses any of them refuses what a constrained server may send.
"""

from __future__ import annotations

import json
import random
import threading

WORDS = ("chair", "Desk Lamp", " sofa ", "window", "kettle", "book shelf", "rug", "plant", "TV", "door")


def instance(schema: dict, rng: random.Random) -> object:
    """A random value `schema` allows (the keywords explorer/model/schemas.py and dialects.py use)."""
    if "anyOf" in schema:
        return instance(rng.choice(schema["anyOf"]), rng)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        required = set(schema.get("required", ()))
        return {
            name: instance(part, rng)
            for name, part in schema.get("properties", {}).items()
            if name in required or rng.random() < 0.5
        }
    if kind == "array":
        low, high = schema.get("minItems", 0), schema.get("maxItems", 8)
        return [instance(schema.get("items", {}), rng) for _ in range(rng.choice((low, high, rng.randint(low, high))))]
    if kind == "integer":
        return rng.randint(schema.get("minimum", 0), schema.get("maximum", 99))
    if kind == "null":
        return None
    return _text(schema.get("maxLength", 200), rng)


def _text(limit: int, rng: random.Random) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40)))
    return words[: rng.choice((limit, rng.randint(1, limit)))].strip() or "x"  # a blank name or caption says nothing


def sent_schema(request: dict) -> dict | None:
    """The schema a chat request carries, in whichever dialect; None: none."""
    response_format = request.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return response_format["json_schema"]["schema"]
    return response_format.get("schema") or (request["format"] if isinstance(request.get("format"), dict) else None)


def obeying(seed: int):
    """A ChatServer answer: a random instance of the schema sent, as JSON ("{}" to a request without one)."""
    rng, lock = random.Random(seed), threading.Lock()

    def answer(request: dict) -> str:
        schema = sent_schema(request)
        with lock:
            return json.dumps(instance(schema, rng)) if schema else "{}"

    return answer
