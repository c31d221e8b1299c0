"""What a vision model sees in a screenshot: a caption call and an objects call, or one call for both.

Unity mode's perception backend is given one `look(png_path) -> Sight` per
agent, made here. Each call is asked in JSON, under its schema (schemas.py's
`vision_schema`) where the agent's reply format has a dialect; the replies are
read like every model answer, by explorer/model/reading.py, and what they say
is kept bounded.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

from explorer.model.client import (
    RAW_REPLY_LIMIT,
    AuthenticationFailed,
    ChatMessage,
    LLMError,
    LLMSettings,
    Reply,
    complete,
)
from explorer.model.reading import ReplyError, bounded_text, read_structured
from explorer.model.reply_format import OFF_SCHEMA
from explorer.model.schemas import MAX_OBJECTS, OBJECT_NAME_CHARS, vision_schema
from nodes.decision_context import CAPTION_CHARS
from nodes.record import ModelCall
from perception.unity import Sight
from prompts import render

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def make_vision(settings: LLMSettings, split: bool = False) -> Callable[[str | Path], Sight]:
    """`look(png_path) -> Sight` with the model in `settings`; a failed call is an empty Sight with its error.

    `split` makes two calls (caption, then objects) instead of one.
    """

    def look(image_path: str | Path) -> Sight:
        replies, caption = [], ""
        try:
            if split:
                caption, reply = caption_image(settings, image_path)
                replies.append(reply)
                objects, reply = extract_objects_from_image(settings, image_path)
            else:
                caption, objects, reply = describe_image(settings, image_path)
            replies.append(reply)
        except AuthenticationFailed as refused:
            raise refused.stop_run() from None  # every later call would fail the same way
        except LLMError as failure:
            failed = failure.record("vision")
            calls = _records(replies) + ((failed,) if failed else ())
            return Sight(caption, (), _as_dicts(calls), errors=(f"vision failed: {failure}",))
        return Sight(caption, tuple(objects), _as_dicts(_records(replies)))

    return look


def _records(replies: list[Reply]) -> tuple[ModelCall, ...]:
    return tuple(reply.record("vision") for reply in replies)


def _as_dicts(calls: tuple[ModelCall, ...]) -> tuple[dict[str, Any], ...]:
    """The calls as perception carries them, a layer below the record: as the trace keeps them."""
    return tuple(call.to_dict() for call in calls)


def caption_image(settings: LLMSettings, image_path: str | Path) -> tuple[str, Reply]:
    """A short description of the image: its `caption`, or, from a model that wrote prose, the reply."""
    reply = complete(settings, [_image_message(image_path, render("vision_caption"))], vision_schema(["caption"]))
    loaded = _read(reply, lambda value: isinstance(value, dict) and isinstance(value.get("caption"), str))
    return bounded_text(loaded["caption"] if loaded else reply.text, CAPTION_CHARS), reply


def extract_objects_from_image(settings: LLMSettings, image_path: str | Path) -> tuple[list[str], Reply]:
    """The names of the objects in the image, lower-case, without repeats."""
    prompt = render("vision_objects", max_objects=MAX_OBJECTS)
    reply = complete(settings, [_image_message(image_path, prompt)], vision_schema(["objects"]))
    loaded = _read(reply, lambda value: isinstance(value, (list, dict)))
    if isinstance(loaded, dict):  # a list under a label is still the list
        loaded = loaded.get("objects")
    if not isinstance(loaded, list):
        raise _unparseable(reply, "a list of objects")
    return _object_names(loaded), reply


def describe_image(settings: LLMSettings, image_path: str | Path) -> tuple[str, list[str], Reply]:
    """Caption and objects from one call."""
    prompt = render("vision_describe", max_objects=MAX_OBJECTS)
    reply = complete(settings, [_image_message(image_path, prompt)], vision_schema())
    loaded = _read(reply, lambda value: isinstance(value, dict))
    caption = loaded.get("caption") if isinstance(loaded, dict) else None
    objects = loaded.get("objects") if isinstance(loaded, dict) else None
    if not isinstance(caption, str) or not caption.strip() or not isinstance(objects, (list, type(None))):
        raise _unparseable(reply, "an object with a `caption` and a list of `objects`")
    return bounded_text(caption, CAPTION_CHARS), _object_names(objects or []), reply


def _image_message(image_path: str | Path, prompt: str) -> ChatMessage:
    """One user message: the prompt, then the image as a base64 data URL (what stays the same from call to call
    first, so that a server that keeps a prompt's state reuses it)."""
    path = Path(image_path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise LLMError(f"image file not found: {path}", "bad_request") from None
    except OSError as error:
        raise LLMError(f"cannot read image {path}: {error.strerror or error}", "bad_request") from None
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime is None:
        raise LLMError(
            f"unsupported image type {path.suffix or '(none)'!r} for {path}: use PNG, JPEG, GIF or WebP", "bad_request"
        )
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {
        "role": "user",
        "content": [{"type": "text", "text": prompt}, {"type": "image_url", "image_url": {"url": url}}],
    }


def _read(reply: Reply, usable: Callable[[object], bool]) -> Any:
    """The JSON (or YAML) the reply holds, if `usable` accepts it; else None. Under --reply-format json, a
    reply off its schema is an error, not prose to fall back on."""
    if reply.off_schema:
        raise _unparseable(reply, OFF_SCHEMA)
    try:
        return read_structured(reply.text, usable)
    except ReplyError:
        return None


def _object_names(items: list[object]) -> list[str]:
    names = []
    for item in items:
        name = bounded_text(item, OBJECT_NAME_CHARS).lower() if isinstance(item, str) else ""
        if name and name not in names:
            names.append(name)
    return names[:MAX_OBJECTS]


def _unparseable(reply: Reply, expected: str) -> LLMError:
    return LLMError(
        f"{reply.model}: bad_response error: the reply is not {expected}: {reply.text[:RAW_REPLY_LIMIT]!r}",
        "bad_response",
        retries=reply.retries,
        reply=reply,
    )
