"""A run's OpenTelemetry spans, sent over OTLP/HTTP (--telemetry otlp): the one module that imports opentelemetry.

The spans follow the GenAI semantic conventions of OpenTelemetry Semantic Conventions 1.41.0, which are still
marked Development (docs/telemetry.md lists every attribute). One trace per run:

    invoke_workflow multi-agent-explorer          the run, its options as attributes
      invoke_agent Agent1                         an agent-step (a coordinator's tick likewise)
        perception, retrieve_memory, ...          its nodes, as its trace line times them
          chat MODEL                              a model call, in the node that made it
          retrieval memory                        the memory search
        hand_in                                   waiting for the team's commit
      embeddings all-MiniLM-L6-v2                 a pass the embedding service encoded

The spans are made from each step's trace line as the step commit writes it, with the times its nodes took, so
that the nodes themselves carry no tracing and the spans say what trace.jsonl says. A span goes to a batch
processor with a bounded queue; a collector that does not answer costs each export at most its timeout, is
then left alone for a while, and is warned about once; at the run's end what is queued is sent within
FLUSH_SECONDS, and the rest dropped, counted.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from explorer.records.secrets import redact, redact_url, secret_values
from explorer.records.telemetry import TelemetrySetup

CONVENTIONS = "1.41.0"  # the Semantic Conventions release whose GenAI attributes the spans carry
SCHEMA_URL = f"https://opentelemetry.io/schemas/{CONVENTIONS}"
SERVICE_NAME = "multi-agent-explorer"  # where OTEL_SERVICE_NAME names none
# The conventions' own switch for prompts and replies in spans; off unless "true".
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CONTENT_KEPT_CHARS = 4_000  # of a prompt, reply or message, where content is captured
EXPORT_SECONDS = 2.0  # one export's bound, with its retries, where OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT sets none
FLUSH_SECONDS = 2.0  # at the run's end, for what is still queued
RESTING_SECONDS = 30.0  # after a failed export, the collector is left alone this long: the spans are dropped
QUEUE_SPANS = 16_384  # the batch processor's queue where OTEL_BSP_MAX_QUEUE_SIZE sets none (8 agents' 200 steps)
# The exporter's and the batch processor's own loggers: each failed batch would be a line; the run says it once.
QUIETED_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http._common",
    "opentelemetry.sdk._shared_internal",
)
EMBEDDING_MODEL = "all-MiniLM-L6-v2"  # the embedding service's (memory/embedder.py)
DECIDING_NODES = ("decision", "direct")  # where an explorer's or a director's decision calls are made
VISION_NODE = "perception"
SHORTEST_NODE_SECONDS = 1e-6
WAIT_SUFFIX = "_wait"  # a node's wait for a slot on the cores, kept apart in the timings (nodes/record.py)


class _Quiet(logging.Filter):
    """Drops the exporter's lines while the run is on: the run's log says once that spans were not taken."""

    def filter(self, record: logging.LogRecord) -> bool:
        return False


class _GuardedExporter(SpanExporter):
    """The OTLP exporter, guarded: after a failed export the collector rests RESTING_SECONDS (its batches are
    dropped at once rather than each waiting out a timeout); once the run is closing, a batch is tried only
    before its deadline, and only where the last one was taken. The first failure is warned about; the spans
    dropped are counted."""

    def __init__(self, inner: OTLPSpanExporter, where: str, warn: Callable[[str], None]) -> None:
        self.inner, self.where, self.warn = inner, where, warn
        self.resting_until = 0.0  # monotonic
        self.deadline: float | None = None  # monotonic: set when the run closes
        self.dropped = 0
        self.warned = False
        self.failing = False  # the last export was not taken

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not self._worth_trying():
            self.dropped += len(spans)
            return SpanExportResult.FAILURE
        result = self.inner.export(spans)
        self.failing = result is not SpanExportResult.SUCCESS
        if self.failing:
            self.dropped += len(spans)
            self.resting_until = time.monotonic() + RESTING_SECONDS
            self._warn_once()
        return result

    def _worth_trying(self) -> bool:
        """Not while the collector rests; once the run is closing, only before the deadline, and only where
        the last export was taken (a run does not end later for a collector that is not there)."""
        now = time.monotonic()
        if self.deadline is not None:
            return now < self.deadline and not self.failing
        return now >= self.resting_until

    def _warn_once(self) -> None:
        if not self.warned:
            self.warned = True
            self.warn(
                f"telemetry: the collector at {self.where} did not take the run's spans; the run goes on, its own "
                "files are complete, and spans are tried again every "
                f"{RESTING_SECONDS:g} s"
            )

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class _Spans:
    """Spans made whole, with the times the trace line gives, and handed to the batch processor as they end.

    The SDK's Tracer times a span as it runs; these ran already, and are made after the fact as ReadableSpans,
    as an exporter receives them. Measured here, that costs 5 µs a span rather than the Tracer's 37 µs (its
    sampler, its processors' on_start, its attribute checks): this is on the run's commit path, 8 to 10 spans
    an agent-step. The attributes made here are of the types OTLP takes, so nothing needs checking.
    """

    def __init__(self, processor: BatchSpanProcessor, resource: Resource) -> None:
        self.processor, self.resource = processor, resource
        self.scope = InstrumentationScope(SERVICE_NAME, schema_url=SCHEMA_URL)
        self.ids = RandomIdGenerator()

    def context(self, trace_id: int | None = None, span_id: int | None = None) -> SpanContext:
        """A new span's context: in `trace_id`'s trace (a new trace where None), with `span_id` where given."""
        return SpanContext(
            trace_id or self.ids.generate_trace_id(),
            span_id or self.ids.generate_span_id(),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )

    def child(self, parent: SpanContext) -> SpanContext:
        return self.context(parent.trace_id)

    def end(
        self,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        start: int,
        end: int,
        attributes: Mapping[str, Any],
        events: Sequence[Event] = (),
        status: Status | None = None,
    ) -> None:
        """The span, ended: handed to the batch processor, which sends it with the next batch. An attribute
        without a value (a policy of the user's own may leave one so) is left out: OTLP has no null."""
        span = ReadableSpan(
            name,
            context,
            parent,
            self.resource,
            {key: value for key, value in attributes.items() if value is not None},
            events,
            kind=SpanKind.INTERNAL,
            status=status or Status(StatusCode.UNSET),
            start_time=start,
            end_time=max(start, end),
            instrumentation_scope=self.scope,
        )
        self.processor.on_end(span)


class OtlpTelemetry:
    """--telemetry otlp: a root span for the run, begun now and sent at its end, and spans for each committed
    step as it is committed."""

    def __init__(self, setup: TelemetrySetup) -> None:
        self.setup = setup
        self.capture = os.environ.get(CAPTURE_CONTENT, "").strip().lower() == "true"
        self.secrets = secret_values()
        self.failed = False  # closed, or a fault of this module's own: it then makes no more spans
        where = _endpoint()
        self.exporter = _GuardedExporter(_otlp_exporter(where), redact_url(where), setup.log.warning)
        queue = None if os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE") else QUEUE_SPANS
        self.processor = BatchSpanProcessor(self.exporter, max_queue_size=queue)
        self.resource = Resource.create({"service.name": SERVICE_NAME}, schema_url=SCHEMA_URL)
        self.spans = _Spans(self.processor, self.resource)
        self.quiet = _Quiet()
        for name in QUIETED_LOGGERS:
            logging.getLogger(name).addFilter(self.quiet)
        self.began = time.time_ns()
        self.root, self.root_parent, self.root_name = self._root()

    # ---- the run ----------------------------------------------------------------------------------------

    def _root(self) -> tuple[SpanContext, SpanContext | None, str]:
        """The run's span context, its parent and its name. A split team's processes agree, through the team's
        store, on one trace: the first process's root span is the team's, and each other process's root is
        its part of the run, under it."""
        name = f"invoke_workflow {SERVICE_NAME}"
        own = self.spans.context()
        if self.setup.team_trace is None:
            return own, None, name
        agreed = _parsed_traceparent(self.setup.team_trace(_traceparent(own.trace_id, own.span_id)))
        if agreed == (own.trace_id, own.span_id):  # this process begins the team's trace
            return own, None, name
        team = SpanContext(agreed[0], agreed[1], is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
        return self.spans.child(team), team, f"{name} ({','.join(sorted(self.setup.local))})"

    def close(self, status: str) -> None:
        """The root span sent with `status`; what is queued sent within FLUSH_SECONDS; the exporter shut."""
        try:
            self._close(status)
        except Exception as error:  # the run's own files are written; its ending is not lost for its spans
            self.setup.log.warning("telemetry: the last spans were not sent: %r", error)

    def _close(self, status: str) -> None:
        self.failed = True  # no more spans: an embedder given to a later run may still call `embedded`
        attributes = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": SERVICE_NAME,
            "gen_ai.conversation.id": self.setup.run_name,
            "explorer.run": self.setup.run_name,
            "explorer.status": status,
            **_option_attributes(self.setup.options, self.secrets),
            # A sweep's name and condition come as resource attributes (explorer/sweep/launch.py); here too, as
            # not every backend shows a resource's.
            **{key: value for key, value in self.resource.attributes.items() if key.startswith("explorer.")},
        }
        self.spans.end(self.root_name, self.root, self.root_parent, self.began, time.time_ns(), attributes)
        closing = time.monotonic()
        self.exporter.deadline = closing + FLUSH_SECONDS
        self.processor.shutdown()  # its last exports, each bounded by the deadline and the export's timeout
        for name in QUIETED_LOGGERS:
            logging.getLogger(name).removeFilter(self.quiet)
        exporter = self.exporter
        if exporter.dropped:
            self.setup.log.warning("telemetry: %s spans were not sent to %s", f"{exporter.dropped:,}", exporter.where)
        # What the run's end waited for its spans (bench/telemetry.py reads it).
        self.setup.log.debug("telemetry: the last spans took %.3f s to send or drop", time.monotonic() - closing)

    # ---- the steps --------------------------------------------------------------------------------------

    def step(self, line: Mapping[str, Any], laps_ended: float) -> None:
        if self.failed or line["agent_id"] not in self.setup.local:
            return  # a split team's other members' steps are the other processes' spans
        try:
            self._step(line, laps_ended, _Clock())
        except Exception as error:  # a fault here must not cost the run a step: no more spans, and one warning
            self._fail(error)

    def _step(self, line: Mapping[str, Any], laps_ended: float, clock: _Clock) -> None:
        nodes = _node_times(line["timings"])
        began = laps_ended - sum(seconds for _, seconds in nodes)
        step = self.spans.child(self.root)
        for name, start, seconds in _laid_out(nodes, began):
            node = self.spans.child(step)
            events = self._node_contents(name, node, line, start, start + seconds, clock)
            self.spans.end(
                name, node, step, clock.ns(start), clock.ns(start + seconds), {"explorer.node": name}, events
            )
        self.spans.end(
            "hand_in", self.spans.child(step), step, clock.ns(laps_ended), clock.now_ns, {"explorer.node": "hand_in"}
        )
        status = Status(StatusCode.ERROR, self._text(line["errors"][0])) if line["errors"] else None
        name = f"invoke_agent {line['agent_id']}"
        self.spans.end(name, step, self.root, clock.ns(began), clock.now_ns, self._step_attributes(line), (), status)

    def _step_attributes(self, line: Mapping[str, Any]) -> dict[str, Any]:
        directing = line["result"] is None  # a coordinator's tick neither sees nor moves
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": line["agent_id"],
            "gen_ai.conversation.id": self.setup.run_name,
            "explorer.role": "director" if directing else "explorer",
            "explorer.step": line["step"],
            "explorer.policy": line["policy"],
            "explorer.parse_failure": bool(line["parse_failure"]),
            "explorer.new_objects": list(line["new_objects"]),
            "explorer.errors": len(line["errors"]),
        }
        if not directing:
            attributes["explorer.action"] = line["action"] or ""
            attributes["explorer.outcome"] = line["result"].get("outcome", "")
        else:
            attributes["explorer.directives"] = len(line["directives"])
        # Simulated time beside the spans' wall time: when it looked, and (realtime) when it was committed.
        for key, name in (("time", "explorer.sim_time"), ("commit_time", "explorer.sim_commit_time")):
            if line.get(key) is not None:
                attributes[name] = float(line[key])
        return attributes

    def _node_contents(
        self, name: str, node: SpanContext, line: Mapping[str, Any], start: float, end: float, clock: _Clock
    ) -> list[Event]:
        """What happened within node `name`: its model calls and memory search as spans under it; its messages
        and directives, its events."""
        calls = [call for call in line["llm"]["calls"] if _node_of(call, line) == name]
        for call, call_start, call_end in _calls_laid_out(calls, start, end):
            self._chat(call, line, node, clock.ns(call_start), clock.ns(call_end))
        if name == "retrieve_memory" and line["memory_query"]:
            self._retrieval(line, node, clock.ns(start), clock.ns(end))
        at = clock.ns(end)
        if name == "communication":
            heard = line["messages_in"]
            return [self._message("message received", m["sender"], m["recipient"], m, at) for m in heard]
        if name == "execution" and line["message_out"]:
            out = line["message_out"]
            return [self._message("message sent", line["agent_id"], out["recipient"], out, at)]
        if name == "direct":
            directives = [Event("directive sent", self._directive_attributes(d), at) for d in line["directives"]]
            relayed = line.get("relayed", [])
            return directives + [
                self._message("message relayed", r["sender"], ",".join(r["to"]), r, at) for r in relayed
            ]
        return []

    def _chat(self, call: Mapping[str, Any], line: Mapping[str, Any], node: SpanContext, start: int, end: int) -> None:
        model = call["model"]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": call["prompt_tokens"],
            "gen_ai.usage.output_tokens": call["completion_tokens"],
            "gen_ai.output.type": "json" if call["format"] == "json" else "text",
            "explorer.purpose": call["purpose"],
            "explorer.reply_format": call["format"],
            "explorer.retries": call["retries"],
            "explorer.latency_seconds": call["latency"],
            "explorer.parse_failure": call["reply_error"] is not None,
        }
        optional = {
            "gen_ai.provider.name": model.split("/", 1)[0] if "/" in model else None,
            "gen_ai.response.finish_reasons": [call["finish_reason"]] if call.get("finish_reason") else None,
            "explorer.reply_dialect": call.get("dialect"),
            "explorer.cost_usd": call["cost_usd"],
            "explorer.replayed": call.get("replayed"),
            "error.type": call["error"],
        }
        attributes.update((key, value) for key, value in optional.items() if value is not None)
        if self.capture:
            attributes.update(self._chat_content(call, line))
        failed = call["error"] and Status(StatusCode.ERROR, self._text(call["error_message"] or call["error"]))
        self.spans.end(f"chat {model}", self.spans.child(node), node, start, end, attributes, (), failed or None)

    def _chat_content(self, call: Mapping[str, Any], line: Mapping[str, Any]) -> dict[str, str]:
        """The prompt and the reply as the conventions' message lists (JSON), bounded and redacted."""
        content: dict[str, str] = {}
        if call["purpose"] != "vision" and line["prompt"]:
            prompt = [{"role": "user", "parts": [{"type": "text", "content": self._text(line["prompt"])}]}]
            content["gen_ai.input.messages"] = json.dumps(prompt)
        if call["reply"]:
            reply = {"role": "assistant", "parts": [{"type": "text", "content": self._text(call["reply"])}]}
            content["gen_ai.output.messages"] = json.dumps([{**reply, "finish_reason": call.get("finish_reason")}])
        return content

    def _retrieval(self, line: Mapping[str, Any], node: SpanContext, start: int, end: int) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": f"{line['agent_id']} memory",
            "explorer.memory.results": len(line["retrieved_memories"]),
        }
        if self.capture:
            attributes["gen_ai.retrieval.query.text"] = self._text(line["memory_query"])
        self.spans.end("retrieval memory", self.spans.child(node), node, start, end, attributes)

    def _message(self, name: str, sender: str, recipient: str, message: Mapping[str, Any], at: int) -> Event:
        """A message as an event, with its route; its words only where content is captured."""
        attributes = {
            "explorer.message.sender": sender,
            "explorer.message.recipient": recipient,
            "explorer.message.route": f"{sender} -> {recipient}",
        }
        if self.capture:
            attributes["explorer.message.content"] = self._text(message.get("message", ""))
        return Event(name, attributes, at)

    def _directive_attributes(self, directive: Mapping[str, Any]) -> dict[str, str]:
        attributes = {f"explorer.directive.{key}": str(directive.get(key, "")) for key in ("to", "kind", "target")}
        if self.capture:
            attributes["explorer.directive.message"] = self._text(str(directive.get("message", "")))
        return attributes

    # ---- embeddings -------------------------------------------------------------------------------------

    def embedded(self, texts: int, started: float, ended: float) -> None:
        if self.failed:
            return
        try:
            clock = _Clock()
            attributes = {
                "gen_ai.operation.name": "embeddings",
                "gen_ai.request.model": EMBEDDING_MODEL,
                "explorer.embedding.texts": texts,
            }
            name, span = f"embeddings {EMBEDDING_MODEL}", self.spans.child(self.root)
            self.spans.end(name, span, self.root, clock.ns(started), clock.ns(ended), attributes)
        except Exception as error:  # as for a step: the run goes on
            self._fail(error)

    # ---- helpers ----------------------------------------------------------------------------------------

    def _text(self, text: str) -> str:
        """A text a span may carry: bounded, and with every secret the environment holds replaced."""
        kept = text if len(text) <= CONTENT_KEPT_CHARS else text[:CONTENT_KEPT_CHARS] + f"... [{len(text):,} in all]"
        return redact(kept, self.secrets)

    def _fail(self, error: Exception) -> None:
        self.failed = True
        self.setup.log.warning("telemetry: no more spans are made for this run: %r", error)


class _Clock:
    """Now, as the wall clock (nanoseconds, as spans are timed) and as perf_counter (as the trace times steps):
    a perf_counter reading becomes a span's time against it."""

    def __init__(self) -> None:
        self.now_ns, self.now_perf = time.time_ns(), time.perf_counter()

    def ns(self, perf: float) -> int:
        return self.now_ns - int((self.now_perf - perf) * 1e9)


def _node_times(timings: Mapping[str, float]) -> list[tuple[str, float]]:
    """(node, seconds) in the order the nodes ran, each with its wait for a slot on the cores, and at least
    SHORTEST_NODE_SECONDS: a backend that orders spans by their start then shows them in the order they ran (a
    node of no measurable time would start as the next one does)."""
    return [
        (name, max(seconds + timings.get(f"{name}{WAIT_SUFFIX}", 0.0), SHORTEST_NODE_SECONDS))
        for name, seconds in timings.items()
        if not name.endswith(WAIT_SUFFIX)
    ]


def _laid_out(nodes: list[tuple[str, float]], began: float) -> Iterator[tuple[str, float, float]]:
    """(node, start, seconds): the nodes back to back from `began`, as their laps were timed."""
    start = began
    for name, seconds in nodes:
        yield name, start, seconds
        start += seconds


def _node_of(call: Mapping[str, Any], line: Mapping[str, Any]) -> str:
    """The node a model call was made in: vision in perception, a decision where the step decided."""
    if call["purpose"] == "vision":
        return VISION_NODE
    return next((node for node in DECIDING_NODES if node in line["timings"]), DECIDING_NODES[0])


def _calls_laid_out(
    calls: list[Mapping[str, Any]], start: float, end: float
) -> Iterator[tuple[Mapping[str, Any], float, float]]:
    """(call, start, end): the node's calls one after another, by their latencies, ending as the node ends (its
    reply read after them), and never before the node began. The trace keeps each call's latency, not its
    start."""
    at = max(start, end - sum(call["latency"] for call in calls))
    for call in calls:
        finish = min(end, at + call["latency"])
        yield call, at, finish
        at = finish


def _option_attributes(options: Mapping[str, Any], secrets: tuple[str, ...]) -> dict[str, Any]:
    """The run's options as attributes (explorer.option.NAME): what config.json records, URLs redacted there
    already, and every text redacted again; None left out, lists as lists of text."""
    return {
        f"explorer.option.{name}": _attribute_value(value, secrets)
        for name, value in options.items()
        if value is not None and not isinstance(value, Mapping)
    }


def _attribute_value(value: Any, secrets: tuple[str, ...]) -> Any:
    """An option's value as an attribute takes it: a number or True/False as it is, text redacted, a list as
    a list of texts."""
    if isinstance(value, (list, tuple)):
        return [redact(str(item), secrets) for item in value]
    return redact(value, secrets) if isinstance(value, str) else value


def _endpoint() -> str:
    """Where the spans go, as the OTLP exporter reads its environment variables (its default otherwise)."""
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if traces:
        return traces
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318")
    return base.rstrip("/") + "/v1/traces"


def _otlp_exporter(endpoint: str) -> OTLPSpanExporter:
    """The OTLP/HTTP exporter, settings from the environment; EXPORT_SECONDS a batch where none is set."""
    timeout_set = any(
        os.environ.get(name) for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
    )
    return OTLPSpanExporter(endpoint=endpoint, timeout=None if timeout_set else EXPORT_SECONDS)


def _traceparent(trace_id: int, span_id: int) -> str:
    return f"00-{trace_id:032x}-{span_id:016x}-01"


def _parsed_traceparent(text: str) -> tuple[int, int]:
    """(trace id, span id) of a W3C traceparent, as _traceparent writes it."""
    _, trace_id, span_id, _ = text.split("-")
    return int(trace_id, 16), int(span_id, 16)
