"""What --telemetry otlp costs a run: `python bench/telemetry.py` prints the figures and writes bench/telemetry.json.

An offline team of AGENTS agents explores for STEPS steps, each run a real `python main.py`, in four conditions
taken in turn, REPEATS times each:

- `off`: this checkout, no --telemetry;
- `before`: the code before telemetry came (a git worktree of --before, made and removed here);
- `phoenix`: --telemetry otlp to a live Arize Phoenix started here (harness/phoenix_server.py; its
  `phoenix` command as the tests find it), each run's spans into a project of their own, counted afterwards;
- `sink`: --telemetry otlp to an OTLP endpoint here that takes each batch and keeps nothing: what sending
  costs the run itself, apart from what a collector on the same cores costs it;
- `unreachable`: --telemetry otlp to a port of loopback where nothing listens.

Per run: the summary's wall time (the exploration), the process's whole time, its CPU time, its tail (from
summary.json written to the process's exit: the report, the last spans, the interpreter's exit), and the seconds
its end waited for its last spans (run.log's line). Then, from the first `off` run's trace, the CPU time the step
commit spends on telemetry for the whole run, off and on, and the encoding of its spans. The figures are the medians of the
paired ratios (each condition's run beside the `off` run of the same round, which survives a busy machine
better than seconds do), the tails, and the machine's load average as the bench began and ended.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult  # noqa: E402

from bench.output import command_line, figures_path, write_figures  # noqa: E402
from explorer.records.otel_spans import OtlpTelemetry  # noqa: E402
from explorer.records.run_files import TraceLines  # noqa: E402
from explorer.records.telemetry import OTLP, NoTelemetry, TelemetrySetup  # noqa: E402
from explorer.testing.ports import free_port  # noqa: E402
from harness.phoenix_server import PhoenixServer, phoenix_command  # noqa: E402

AGENTS = 8
STEPS = 200
REPEATS = 3
CONDITIONS = ("off", "before", "sink", "unreachable", "phoenix")
TEAM = ("--mode", "mock", "--agents", str(AGENTS), "--steps", str(STEPS), "-q")
# Phoenix refuses spans (503) once this many wait to be written; a run here makes about 13,000 in 25 s.
PHOENIX_QUEUE = "200000"
TELEMETRY_MODULE = "explorer/records/telemetry.py"
CLOSING = re.compile(r"telemetry: the last spans took ([0-9.]+) s")  # run.log's line: what the end waited


def code_before(given: str | None) -> str:
    """The commit --before names; by default the one before telemetry's module was added."""
    if given:
        revision = given
    else:
        added = _git("log", "--diff-filter=A", "--format=%H", "--", TELEMETRY_MODULE).split()
        if not added:
            raise SystemExit(f"bench/telemetry.py: no commit adds {TELEMETRY_MODULE}: give --before REV")
        revision = added[-1] + "^"
    return _git("rev-parse", "--verify", f"{revision}^{{commit}}").strip()


def _git(*arguments: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *arguments], check=True, capture_output=True, text=True).stdout


def one_run(checkout: Path, run_dir: Path, environment: dict[str, str], *flags: str) -> dict[str, float]:
    """One run of main.py in `checkout`: its summary's wall time, its whole time and CPU time, and its tail."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "main.py", *TEAM, "--run-dir", str(run_dir), *flags],
        cwd=checkout,
        env=environment,
        check=True,
        capture_output=True,
    )
    whole, ended = time.perf_counter() - began, time.time()
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed", summary["status"]
    closing = CLOSING.search((run_dir / "run.log").read_text())
    return {
        "closing_seconds": float(closing.group(1)) if closing else 0.0,
        "wall_seconds": summary["wall_seconds"],
        "process_seconds": round(whole, 3),
        "cpu_seconds": round(cpu, 3),
        "tail_seconds": round(ended - (run_dir / "summary.json").stat().st_mtime, 3),
    }


def commit_path_costs(run_dir: Path) -> dict[str, float]:
    """The CPU seconds the step commit spends on telemetry for all of a run's steps (its trace, read back), on
    this thread, which a busy machine changes least: with the flag off (NoTelemetry), and with otlp making the
    spans (to an exporter that keeps them), and the OTLP encoding of those spans that the exporter's thread does."""
    lines = list(TraceLines(run_dir / "trace.jsonl"))
    agents = frozenset(line["agent_id"] for line in lines)
    kept: list[ReadableSpan] = []
    off = NoTelemetry()
    began = time.thread_time()
    for line in lines:
        off.step(line, time.perf_counter())
    off_seconds = time.thread_time() - began
    setup = TelemetrySetup(OTLP, "bench", {}, agents, logging.getLogger("bench"))
    spans = OtlpTelemetry(setup)
    spans.exporter.inner = _Kept(kept)
    began = time.thread_time()
    for line in lines:
        spans.step(line, time.perf_counter())
    making = time.thread_time() - began
    spans.close("completed")
    began = time.thread_time()
    for start in range(0, len(kept), 512):  # the batch processor's batches
        encode_spans(kept[start : start + 512]).SerializePartialToString()
    return {
        "steps": len(lines),
        "spans": len(kept),
        "off_cpu_seconds": round(off_seconds, 5),
        "making_cpu_seconds": round(making, 3),
        "encoding_cpu_seconds": round(time.thread_time() - began, 3),
    }


class _Kept(SpanExporter):
    def __init__(self, kept: list[ReadableSpan]) -> None:
        self.kept = kept

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.kept.extend(spans)
        return SpanExportResult.SUCCESS


def paired(runs: dict[str, list[dict[str, float]]], condition: str, base: str, key: str) -> float:
    """The median over rounds of `condition`'s `key` over `base`'s in the same round."""
    return round(statistics.median(c[key] / b[key] for c, b in zip(runs[condition], runs[base])), 3)


def load() -> list[float]:
    return [round(figure, 2) for figure in os.getloadavg()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "telemetry.json")
    parser.add_argument("--before", metavar="REV", help="the code before telemetry (default: before it was added)")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args()
    command = phoenix_command()
    if command is None:
        parser.error("no `phoenix` command: install Phoenix as the README's Telemetry section says")
    before = code_before(args.before)
    load_began = load()
    runs: dict[str, list[dict[str, float]]] = {condition: [] for condition in CONDITIONS}
    taken: list[int] = []  # the spans Phoenix holds of each `phoenix` run
    signal.signal(signal.SIGTERM, _stopped)  # so that Phoenix and the worktree are removed
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        _git("worktree", "add", "--detach", str(work / "before"), before)
        os.environ["PHOENIX_MAX_SPANS_QUEUE_SIZE"] = PHOENIX_QUEUE
        phoenix = PhoenixServer(command, work)
        sink = _sink()
        try:
            plain = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.url}
            sunk = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_port}"}
            unreachable = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
            otlp = ("--telemetry", "otlp")
            for repeat in range(args.repeats):
                project = {"OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name=bench-{repeat}"}
                runs["off"].append(one_run(ROOT, work / f"off-{repeat}", dict(os.environ)))
                runs["before"].append(one_run(work / "before", work / f"before-{repeat}", dict(os.environ)))
                runs["sink"].append(one_run(ROOT, work / f"sink-{repeat}", sunk, *otlp))
                runs["unreachable"].append(one_run(ROOT, work / f"unreachable-{repeat}", unreachable, *otlp))
                runs["phoenix"].append(one_run(ROOT, work / f"phoenix-{repeat}", {**plain, **project}, *otlp))
                # Phoenix writes what it took in the background, on the same cores: the next run waits for it.
                taken.append(len(_spans(phoenix, f"bench-{repeat}")))
                print(repeat, {condition: runs[condition][-1] for condition in CONDITIONS}, taken, flush=True)
            costs = commit_path_costs(work / "off-0")
        finally:
            phoenix.stop()
            sink.shutdown()
            _git("worktree", "remove", "--force", str(work / "before"))
    figures = {
        "command": command_line("telemetry.py"),
        "agents": AGENTS,
        "steps": STEPS,
        "before": before,
        "cpus": os.cpu_count(),
        "load_average_began": load_began,
        "load_average_ended": load(),
        **ratios(runs),
        "spans_phoenix_took": taken,
        "commit_path": costs,
        "runs": [{"condition": condition, **run} for condition in CONDITIONS for run in runs[condition]],
    }
    print(json.dumps(figures, indent=1))
    write_figures(args.out, figures)


def ratios(runs: dict[str, list[dict[str, float]]]) -> dict[str, float]:
    """The paired ratios against `off` (and `off` against `before`), and the ends' waits."""
    return {
        "sink_over_off_wall": paired(runs, "sink", "off", "wall_seconds"),
        "sink_over_off_process": paired(runs, "sink", "off", "process_seconds"),
        "sink_over_off_cpu": paired(runs, "sink", "off", "cpu_seconds"),
        "phoenix_over_off_wall": paired(runs, "phoenix", "off", "wall_seconds"),
        "phoenix_over_off_process": paired(runs, "phoenix", "off", "process_seconds"),
        "phoenix_over_off_cpu": paired(runs, "phoenix", "off", "cpu_seconds"),
        "off_over_before_wall": paired(runs, "off", "before", "wall_seconds"),
        "off_over_before_process": paired(runs, "off", "before", "process_seconds"),
        "off_over_before_cpu": paired(runs, "off", "before", "cpu_seconds"),
        "tail_seconds_off": statistics.median(run["tail_seconds"] for run in runs["off"]),
        "tail_seconds_unreachable": statistics.median(run["tail_seconds"] for run in runs["unreachable"]),
        "closing_seconds_phoenix": max(run["closing_seconds"] for run in runs["phoenix"]),
        "closing_seconds_unreachable": max(run["closing_seconds"] for run in runs["unreachable"]),
        "unreachable_over_off_wall": paired(runs, "unreachable", "off", "wall_seconds"),
    }


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that takes each batch and keeps nothing."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def _sink() -> ThreadingHTTPServer:
    """The sink on a free port of loopback, serving on a thread of its own."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _stopped(signum: int, frame: object) -> None:
    raise SystemExit(f"bench/telemetry.py: stopped by signal {signum}")


def _spans(phoenix: PhoenixServer, project: str) -> list[dict]:
    """The project's spans once Phoenix has written what it took (its count settled)."""
    before, deadline = -1, time.monotonic() + 600
    while True:
        try:
            spans = phoenix.spans(project)
        except urllib.error.URLError:
            spans = []
        if (spans and len(spans) == before) or time.monotonic() > deadline:
            return spans
        before = len(spans)
        time.sleep(3)


if __name__ == "__main__":
    main()
