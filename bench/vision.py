"""Vision replies under a schema, first try: `python bench/vision.py` prints the table and writes bench/vision.json.

Each vision call of game mode (one call for caption and objects, or `--vision split`'s caption call and
objects call) is made through the real client against a local stub that obeys the schema it is sent
(explorer/testing/schema_stub.py: each reply a random instance of it, out to every bound it allows), in
each dialect: strict `json_schema` (sent no bounds, which are kept on reading) and llama-cpp-python's
`json_object` (sent the whole schema). A call is valid at the first try when its reply is read as a
sight without a re-ask; the issue's target is at least 95%. The replies are random: this measures what
the reader accepts of what a schema allows, not what a model sees.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from bench.output import command_line, figures_path, write_figures  # noqa: E402
from explorer.model import vision  # noqa: E402
from explorer.model.client import LLMError, LLMSettings  # noqa: E402
from explorer.model.reply_format import ReplyFormat  # noqa: E402
from explorer.testing.chat_server import ChatServer, error  # noqa: E402
from explorer.testing.schema_stub import obeying  # noqa: E402

MODEL = "openai/schema-stub"
CALLS = {
    "caption and objects": vision.describe_image,
    "caption (split)": vision.caption_image,
    "objects (split)": vision.extract_objects_from_image,
}
REFUSED = "response_format.type: Input should be 'text' or 'json_object'"


def strict_refused(answer):
    """A server that takes only json_object with a schema (llama-cpp-python's), else `answer`."""

    def refusing(request):
        if (request.get("response_format") or {}).get("type") == "json_schema":
            return error(422, REFUSED)
        return answer(request)

    return refusing


def measure(call, dialect: str, image: Path, calls: int, seed: int) -> dict:
    """One row: how many of `calls` vision calls were read at the first try, and how many stayed under a schema."""
    answer = obeying(seed) if dialect == "json_schema" else strict_refused(obeying(seed))
    valid = under_schema = 0
    with ChatServer(answer) as server:
        settings = LLMSettings(MODEL, api_base=server.api_base, max_retries=0, reply_format=ReplyFormat("json", MODEL))
        for _ in range(calls):
            try:
                *_, reply = call(settings, image)
            except LLMError:
                continue
            valid += 1
            under_schema += reply.format == "json"
        sent = [(request.get("response_format") or {}).get("type") for request in server.requests]
    return {
        "call": next(name for name, made in CALLS.items() if made is call),
        "dialect": dialect,
        "calls": calls,
        "first_try_valid": valid,
        "share": round(valid / calls, 4),
        "under_schema": under_schema,
        "dialect_sent_last": sent[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="vision calls per row (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "vision.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        image = Path(folder) / "view.png"
        Image.new("RGB", (64, 48), (120, 160, 200)).save(image)
        rows = [
            measure(call, dialect, image, args.calls, args.seed)
            for dialect in ("json_schema", "json_object")
            for call in CALLS.values()
        ]
    print(f"{'call':<22} {'dialect':<12} first-try valid")
    for row in rows:
        print(f"{row['call']:<22} {row['dialect']:<12} {row['first_try_valid']}/{row['calls']} ({row['share']:.0%})")
    write_figures(args.out, {"command": command_line("vision.py"), "target_share": 0.95, "rows": rows})


if __name__ == "__main__":
    main()
