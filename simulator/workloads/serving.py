"""Serving a request stream with continuous batching (docs/workloads.md "Serving"), as
Orca (Yu et al., OSDI'22: iteration-level scheduling), vLLM (Kwon et al., SOSP'23: paged KV
cache, preemption by recomputation; its V1 scheduler: chunked prefill under a token budget)
and Vidur (Agrawal et al., MLSys'24: the same loop driven by per-kernel timings) model it.

Requests arrive (Poisson at a rate from a seed, all at once, or a given list), each with its
own prompt and output length (fixed, or drawn from a distribution with the same seed). Every
iteration the scheduler takes, in this order,

1. one token for every running request that is decoding, and the next prefill chunk of
   every running request still prefilling, while the token budget (`max_batched_tokens`)
   lasts;
2. waiting requests, first come first served, while fewer than `max_batch` run, the budget
   lasts and the paged KV cache has the blocks their chunk needs.

A running request that needs a KV block when none is free preempts the newest running
request, which frees its blocks and goes back to the head of the queue to recompute its
prompt and the tokens it had generated (vLLM's recompute preemption). Without chunked
prefill an iteration runs either prefills (whole prompts, vLLM V0's default) or decodes.

The iteration's time is the mixed batch's kernels, timed by the same functions as the static
batch (simulator.workloads.kernels on the GPU models): the GEMMs and streaming kernels with
M = the iteration's tokens, FlashAttention per prefill chunk against its context, the decode
attention's KV-cache read (G.7) over every decoding request's context, the logits for the
requests that sample; the tensor- and pipeline-parallel transfers cost what the event engine
gives the static batch's application model for the same tokens (fitted once per plan from
two engine runs, the transfers being affine in the tokens). The KV cache holds what the GPU's
memory keeps after the weights, at `gpu_memory_utilization` of it (vLLM's default 0.9), in
blocks of `block_size` tokens.

Pipeline stages run one iteration at a time (no second batch in flight, which vLLM's virtual
engines would add): with PP > 1 the throughput is a lower bound.

By default every request of the stream is counted. With `measurement_interval_s` the
figures are those GenAI-Perf reports (NVIDIA's client, which its NIM tables use): its load
generator, perf_analyzer, measures in consecutive windows from the first send and stops once
three windows in a row agree (MEASUREMENT_* below); the figures are over every request whose
last token came within those windows, the clients' first requests included (no warm-up is
left out), and the simulation stops there.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from simulator.gpu_catalogue import GpuCatalogue
from simulator.models.gemm import decode_attention_per_token_s
from simulator.runner import run_simulation
from simulator.workloads.cluster import TEMPLATES, cluster_snapshot, rank_label
from simulator.workloads.config import ModelConfig
from simulator.workloads.inference import (
    DECODE_ATTENTION,
    SEQUENCE_PARALLEL,
    InferencePlan,
    inference_app,
    inference_memory,
)
from simulator.workloads.kernels import KernelTimer, gpu_record, head_kernels, layer_kernels
from simulator.workloads.plan import PRECISIONS, ParallelPlan, PlanError, chunk_layers

# each distribution's number of parameters
DISTRIBUTIONS = {"fixed": 1, "uniform": 2, "normal": 2, "exponential": 1}
MSG_LENGTH = (
    "{name} must be a positive whole number or DIST:ARGS with DIST one of "
    "fixed:N, uniform:LOW:HIGH, normal:MEAN:STD, exponential:MEAN, not {text!r}"
)
MSG_ITERATIONS = (
    "requests must be fewer or shorter: the stream needs more than {limit:,} iterations, "
    "the limit here (the command line has none)"
)
# A request's queueing delay that grows along the stream by more than this share of the
# stream's duration means the arrivals outrun the service (the queue has no bound).
QUEUE_GROWTH = 0.05
# GenAI-Perf's measurement, as its load generator perf_analyzer runs it
# (triton-inference-server/perf_analyzer, commit 263c5f6e, src/inference_profiler.cc):
# Measure() sleeps --measurement-interval times 1.2 per window, the windows following one another
# from the first send; ValidLatencyMeasurement() counts a request in the window in which its
# last response arrives; ProfileHelper() stops after a window once the last three
# (stability window 3) each counted a request and their request rates and mean latencies lie
# within a factor 1 + --stability-percentage / 100 (DetermineStability()), or after
# --max-trials windows (10, src/command_line_parser.h), when a window of the last three with
# no request is an error ("No valid requests recorded within time interval"). Every window's
# requests go to the profile export (CollectData() per window, ProfileDataCollector keeps
# them all), from which GenAI-Perf computes its figures over all of them (genai_perf/
# profile_data_parser/llm_profile_data_parser.py: TTFT = first response - send, ITL =
# (latency - TTFT) / (output tokens - 1), output throughput = their tokens / (last response
# - first send)). GenAI-Perf's --stability-percentage defaults to 999, its
# --warmup-request-count to 0 (so the clients' first requests are measured) and, until
# commit 00d6a467 (2025-03-21) made a request count the default, its --measurement-interval
# to 10 s (genai_perf/parser.py at 8b8a8e25, after the 24.12 release).
MEASUREMENT_WINDOW_FACTOR = 1.2
MEASUREMENT_STABLE_WINDOWS = 3
MEASUREMENT_MAX_WINDOWS = 10
MEASUREMENT_STABILITY = 9.99
MSG_MEASUREMENT_EMPTY = (
    "measurement_interval_s must be longer: a window of the last {windows} of "
    "{limit} recorded no completed request (perf_analyzer: no valid requests recorded "
    "within time interval)"
)
MSG_MEASUREMENT_STREAM = (
    "requests must be more: all {requests} were sent before the measurement ended (its "
    "window {window} of {limit}, {seconds:g} s each), where the clients would send more"
)


@dataclass(frozen=True)
class LengthSpec:
    """Token lengths of requests: `fixed` N, `uniform` between two bounds (inclusive),
    `normal` (mean, standard deviation) or `exponential` (mean), rounded and at least 1."""

    distribution: str = "fixed"
    a: float = 1024.0
    b: float = 0.0

    @classmethod
    def parse(cls, text: str | int, name: str = "length") -> LengthSpec:
        """Return the spec of `1024`, `fixed:1024`, `uniform:512:1536`, `normal:1024:256` or
        `exponential:300`; raise PlanError naming `name`."""
        error = PlanError(MSG_LENGTH.format(name=name, text=text))
        parts = str(text).split(":")
        try:
            numbers = [float(p) for p in (parts[1:] if len(parts) > 1 else parts)]
        except ValueError:
            raise error from None
        kind = parts[0] if len(parts) > 1 else "fixed"
        wanted = DISTRIBUTIONS.get(kind)
        if wanted != len(numbers) or any(not math.isfinite(n) or n < 0 for n in numbers):
            raise error
        spec = cls(kind, numbers[0], numbers[1] if wanted == 2 else 0.0)
        if kind == "fixed" and (numbers[0] < 1 or numbers[0] != int(numbers[0])):
            raise error
        if kind == "uniform" and (math.ceil(numbers[0]) > math.floor(numbers[1]) or numbers[1] < 1):
            raise error
        if kind in ("normal", "exponential") and numbers[0] < 1:
            raise error
        return spec

    def draw(self, rng: random.Random) -> int:
        if self.distribution == "fixed":
            value = self.a
        elif self.distribution == "uniform":
            value = rng.randint(math.ceil(self.a), int(self.b))
        elif self.distribution == "normal":
            value = rng.gauss(self.a, self.b)
        else:
            value = rng.expovariate(1.0 / self.a)
        return max(1, round(value))

    def label(self) -> str:
        if self.distribution == "fixed":
            return str(int(self.a))
        if self.distribution == "exponential":
            return f"exponential:{self.a:g}"
        return f"{self.distribution}:{self.a:g}:{self.b:g}"


@dataclass(frozen=True)
class ServingPlan:
    """A model replica of TP x PP GPUs serving `requests` requests."""

    tp: int = 1
    pp: int = 1
    precision: str = "bf16"
    kv_bytes: float | None = None
    decode_attention: str = "grouped"
    requests: int = 200
    # requests per second of a Poisson stream; None: every request arrives at time 0
    arrival_rate: float | None = None
    # the arrival times themselves (seconds, in order); overrides arrival_rate
    arrivals: tuple[float, ...] | None = None
    # requests outstanding at most, as a benchmark client's concurrency (vLLM's
    # benchmark --max-concurrency, genai-perf's --concurrency): the next is sent when one
    # completes
    max_concurrency: int | None = None
    # GenAI-Perf's --measurement-interval in seconds: the figures over the requests its
    # windows measure (MEASUREMENT_* above); None: over every request of the stream
    measurement_interval_s: float | None = None
    input_len: LengthSpec = field(default_factory=lambda: LengthSpec("fixed", 1024))
    output_len: LengthSpec = field(default_factory=lambda: LengthSpec("fixed", 128))
    seed: int = 0
    # vLLM's max_num_seqs and max_num_batched_tokens
    max_batch: int = 256
    max_batched_tokens: int = 8192
    chunked_prefill: bool = True
    gpu_memory_utilization: float = 0.9
    block_size: int = 16

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    def check(self) -> None:
        """Raise PlanError naming the first field out of range."""
        for name in ("tp", "pp", "requests", "max_batch", "max_batched_tokens", "block_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise PlanError(f"{name} must be a positive integer, not {value!r}")
        if self.precision not in PRECISIONS:
            raise PlanError(f"precision must be one of {PRECISIONS}, not {self.precision!r}")
        if self.decode_attention not in DECODE_ATTENTION:
            raise PlanError(f"decode_attention must be one of {', '.join(DECODE_ATTENTION)}")
        if self.max_concurrency is not None and (
            isinstance(self.max_concurrency, bool)
            or not isinstance(self.max_concurrency, int)
            or self.max_concurrency < 1
        ):
            raise PlanError(
                f"max_concurrency must be a positive integer, not {self.max_concurrency!r}"
            )
        if self.arrival_rate is not None and not (
            math.isfinite(self.arrival_rate) and self.arrival_rate > 0
        ):
            raise PlanError(f"arrival_rate must be a positive number, not {self.arrival_rate!r}")
        interval = self.measurement_interval_s
        if interval is not None and not (
            not isinstance(interval, bool)
            and isinstance(interval, int | float)
            and math.isfinite(interval)
            and interval > 0
        ):
            raise PlanError(f"measurement_interval_s must be a positive number, not {interval!r}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise PlanError("gpu_memory_utilization must be in (0, 1]")
        if self.arrivals is not None:
            if len(self.arrivals) != self.requests:
                raise PlanError(
                    f"arrivals gives {len(self.arrivals)} times for {self.requests} requests"
                )
            if any(t < 0 for t in self.arrivals) or list(self.arrivals) != sorted(self.arrivals):
                raise PlanError("arrivals must be non-negative times in order")

    def inference_plan(self, input_len: int, batch: int = 1) -> InferencePlan:
        return InferencePlan(
            tp=self.tp,
            pp=self.pp,
            batch=batch,
            input_len=input_len,
            output_len=1,
            precision=self.precision,
            kv_bytes=self.kv_bytes,
            decode_attention=self.decode_attention,
        )


@dataclass
class Request:
    index: int
    arrival: float
    prompt: int
    output: int
    # tokens whose K and V are in the cache, and tokens generated so far
    computed: int = 0
    generated: int = 0
    blocks: int = 0
    first_token: float | None = None
    finish: float | None = None
    preemptions: int = 0
    # when the request was first scheduled (its queueing delay ends)
    started: float | None = None

    @property
    def known(self) -> int:
        return self.prompt + self.generated


def request_stream(plan: ServingPlan) -> list[Request]:
    """Return the requests in arrival order: lengths and Poisson gaps from one generator
    seeded with `plan.seed`, so that a seed gives the same stream at every rate."""
    rng = random.Random(plan.seed)
    lengths = [(plan.input_len.draw(rng), plan.output_len.draw(rng)) for _ in range(plan.requests)]
    if plan.arrivals is not None:
        times = list(plan.arrivals)
    elif plan.arrival_rate is None:
        times = [0.0] * plan.requests
    else:
        gaps = random.Random(plan.seed + 1)
        times, now = [], 0.0
        for _ in range(plan.requests):
            times.append(now)
            now += gaps.expovariate(plan.arrival_rate)
    return [Request(i, t, p, o) for i, (t, (p, o)) in enumerate(zip(times, lengths, strict=True))]


class IterationTimer:
    """Seconds of one iteration of a mixed batch on the plan's replica (module docstring)."""

    def __init__(
        self,
        model: ModelConfig,
        plan: ServingPlan,
        system: str,
        *,
        catalogue: GpuCatalogue | None = None,
    ) -> None:
        if system not in TEMPLATES:
            raise PlanError(f"system: unknown cluster template {system!r} ({', '.join(TEMPLATES)})")
        self.model, self.plan, self.system = model, plan, system
        # the template's GPU as `catalogue` has it (the web user's records; by default the seed)
        self.catalogue = catalogue
        self.timer = KernelTimer(gpu_record(TEMPLATES[system].gpu, catalogue))
        probe = self._parallel(1)
        probe.check(model)
        self.layers = chunk_layers(model, probe)
        self.total_layers = sum(self.layers)
        self.kv_heads = max(1, model.kv_heads // plan.tp)
        kv_element = plan.inference_plan(1).kv_element_bytes
        # bytes of one token's K and V in one layer on one GPU
        self.kv_token_layer_bytes = 2.0 * kv_element * self.kv_heads * model.head_dim
        self.decode_per_token = decode_attention_per_token_s(
            self.timer.gpu,
            self.kv_token_layer_bytes,
            group=max(1, model.heads // max(1, model.kv_heads)),
            grouped=plan.decode_attention == "grouped",
        )
        self.decode_launch = self.timer.streaming("decode_attention", 0.0).seconds
        self.comm_fixed, self.comm_per_token = self._transfers()

    def _parallel(self, tokens: int) -> ParallelPlan:
        return ParallelPlan(
            gpus=self.plan.gpus,
            tp=self.plan.tp,
            pp=self.plan.pp,
            mbs=1,
            gbs=1,
            seq=tokens,
            precision=self.plan.precision,
            sequence_parallel=SEQUENCE_PARALLEL,
        )

    def _transfers(self) -> tuple[float, float]:
        """The TP allreduces and PP sends of one iteration, affine in its tokens: the event
        engine's time for the static batch's application model with its kernels' seconds
        set to zero, at two token counts."""
        if self.plan.gpus == 1:
            return 0.0, 0.0
        snapshot = cluster_snapshot(
            TEMPLATES[self.system], self.plan.gpus, catalogue=self.catalogue
        )
        labels = {rank_label(rank): 1 for rank in range(self.plan.gpus)}
        times = []
        samples = (1, 4096)
        for tokens in samples:
            hidden = self.model.hidden
            tables = {
                "prefill": [0.0] * self.plan.pp,
                "decode_fixed": [0.0] * self.plan.pp,
                "decode_token": [0.0] * self.plan.pp,
                "prefill_tp": [n * 2 * 2.0 * tokens * hidden for n in self.layers],
                "decode_tp": [0.0] * self.plan.pp,
                "prefill_act": 2.0 * tokens * hidden,
                "decode_act": 0.0,
            }
            app = inference_app(self.model, self.plan.inference_plan(tokens), tables, decode=False)
            result = run_simulation(snapshot, app, labels=labels, variables={}, timeline_limit=0)
            times.append(float(result["overall_time_s"]))
        per_token = (times[1] - times[0]) / (samples[1] - samples[0])
        return times[0] - per_token * samples[0], per_token

    @cache  # noqa: B019 - one timer per serving run; token counts repeat across iterations
    def dense(self, tokens: int) -> float:
        """Per layer: the GEMMs and streaming kernels of `tokens` tokens (no attention)."""
        kernels = layer_kernels(self.timer, self.model, self._parallel(tokens), backward=False)
        return sum(k.seconds for k in kernels if k.name != "attention")

    @cache  # noqa: B019
    def head(self, sampled: int) -> float:
        return sum(
            k.seconds
            for k in head_kernels(self.timer, self.model, self._parallel(sampled), backward=False)
        )

    @cache  # noqa: B019
    def prefill_attention(self, chunk: int, context: int, count: int) -> float:
        """Per layer: FlashAttention of `count` chunks of `chunk` queries against `context`
        keys each (the earlier chunks' and its own). A whole prompt is the static batch's
        causal kernel; a later chunk's queries see every earlier key and half of their own
        chunk's on average, `context - chunk / 2` keys each, which the kernel model's causal
        share (half of all keys) would undercount."""
        heads = count * self.model.heads // self.plan.tp
        if chunk == context:
            kernel = self.timer.attention(
                "attention", heads, chunk, context, self.model.head_dim, False
            )
        else:
            keys = context - chunk // 2
            kernel = self.timer.attention(
                "attention", heads, chunk, keys, self.model.head_dim, False, causal=False
            )
        return kernel.seconds

    def iteration(
        self, decode_context: int, decodes: int, chunks: Sequence[tuple[int, int]], sampled: int
    ) -> float:
        """Seconds of an iteration with `decodes` decoding requests whose contexts sum to
        `decode_context`, prefill `chunks` (tokens, context after the chunk) and `sampled`
        requests taking a token."""
        tokens = decodes + sum(c for c, _ in chunks)
        layer = self.dense(tokens)
        if decodes:
            layer += self.decode_launch + self.decode_per_token * decode_context
        groups: dict[tuple[int, int], int] = {}
        for shape in chunks:
            groups[shape] = groups.get(shape, 0) + 1
        for (chunk, context), count in groups.items():
            layer += self.prefill_attention(chunk, context, count)
        compute = self.total_layers * layer + (self.head(sampled) if sampled else 0.0)
        return compute + self.comm_fixed + self.comm_per_token * tokens

    def prefill(self, prompt: int) -> float:
        """One request's prompt alone: the time to first token on an idle replica."""
        return self.iteration(0, 0, [(prompt, prompt)], 1)

    def decode(self, batch: int, context: int) -> float:
        """One decode step of `batch` requests each with `context` tokens cached."""
        return self.iteration(batch * context, batch, [], batch)


def kv_capacity(model: ModelConfig, plan: ServingPlan, timer: IterationTimer) -> dict[str, Any]:
    """The paged KV cache per GPU: what `gpu_memory_utilization` of the memory keeps after
    the weights, in blocks of `block_size` tokens; raise PlanError when the weights alone do
    not fit."""
    memory = timer.timer.memory_bytes
    weights = inference_memory(model, plan.inference_plan(1))["weights"]
    budget = plan.gpu_memory_utilization * memory - weights
    per_token = timer.kv_token_layer_bytes * max(timer.layers)
    if budget < per_token * plan.block_size:
        raise PlanError(
            f"the plan needs {weights / 2**30:.1f} GiB per GPU for the weights, leaving no KV "
            f"cache in {plan.gpu_memory_utilization:.0%} of the GPU's {memory / 2**30:.1f} GiB"
        )
    blocks = int(budget // (per_token * plan.block_size))
    return {
        "blocks": blocks,
        "block_size": plan.block_size,
        "tokens": blocks * plan.block_size,
        "bytes_per_token": per_token,
        "weights_bytes": weights,
        "kv_cache_bytes": blocks * plan.block_size * per_token,
        "gpu_memory_bytes": memory,
    }


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile with linear interpolation between ranks (numpy's default, which
    vLLM's benchmark_serving uses)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "mean": sum(values) / len(values) if values else 0.0,
        "median": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": max(values, default=0.0),
    }


def _blocks(tokens: int, block_size: int) -> int:
    return -(-tokens // block_size)


class Scheduler:
    """vLLM's iteration-level scheduler over a paged KV cache (module docstring)."""

    def __init__(self, plan: ServingPlan, blocks: int) -> None:
        self.plan = plan
        self.free = blocks
        self.total = blocks
        self.running: list[Request] = []
        self.waiting: deque[Request] = deque()
        self.preemptions = 0
        self.preempted_now = 0
        self.budget_left = plan.max_batched_tokens

    def _grow(self, request: Request, tokens: int) -> bool:
        """Give `request` the blocks for `tokens` cached tokens; False when none are free."""
        needed = -(-tokens // self.plan.block_size) - request.blocks
        # called for every running request each iteration: a decode within its last block,
        # the commonest case, returns here
        if needed <= 0:
            return True
        if needed > self.free:
            return False
        self.free -= needed
        request.blocks += needed
        return True

    def release(self, request: Request) -> None:
        self.free += request.blocks
        request.blocks = 0

    def _preempt(self, victim: Request) -> None:
        self.running.remove(victim)
        self.release(victim)
        victim.computed = 0
        victim.preemptions += 1
        self.preemptions += 1
        self.waiting.appendleft(victim)

    def schedule(self, now: float) -> list[tuple[Request, int]]:
        """Return this iteration's (request, tokens) pairs."""
        if not self.plan.chunked_prefill:
            admitted = self._admit(now, self.plan.max_batched_tokens)
            if admitted:
                return admitted
            return self._running(self.plan.max_batched_tokens)
        scheduled = self._running(self.plan.max_batched_tokens)
        if self.preempted_now == 0:
            scheduled += self._admit(now, self.budget_left)
        return scheduled

    def _running(self, budget: int) -> list[tuple[Request, int]]:
        scheduled: list[tuple[Request, int]] = []
        self.preempted_now = 0
        index = 0
        while index < len(self.running) and budget > 0:
            request = self.running[index]
            need = request.known - request.computed
            tokens = min(need, budget)
            if not self.plan.chunked_prefill and tokens < need:
                break
            while not self._grow(request, request.computed + tokens):
                victim = self.running[-1]
                self._preempt(victim)
                self.preempted_now += 1
                if victim is request:
                    break
            else:
                scheduled.append((request, tokens))
                budget -= tokens
                index += 1
                continue
            break
        self.budget_left = budget
        return scheduled

    def _admit(self, now: float, budget: int) -> list[tuple[Request, int]]:
        scheduled: list[tuple[Request, int]] = []
        while self.waiting and budget > 0 and len(self.running) < self.plan.max_batch:
            request = self.waiting[0]
            if request.arrival > now:
                break
            need = request.known - request.computed
            tokens = min(need, budget)
            if not self.plan.chunked_prefill and tokens < need:
                # a preempted request recomputes its prompt and generated tokens, which may
                # pass the budget: it runs alone once nothing else does
                if scheduled or self.running:
                    break
                tokens = need
            if not self._grow(request, tokens):
                break
            self.waiting.popleft()
            self.running.append(request)
            scheduled.append((request, tokens))
            budget -= tokens
        return scheduled


class Measurement:
    """GenAI-Perf's measurement windows over a stream (MEASUREMENT_* above): windows of the
    interval times MEASUREMENT_WINDOW_FACTOR from `start`, each counting the requests whose last token came in it."""

    def __init__(self, start: float, interval_s: float) -> None:
        self.start = start
        self.window = MEASUREMENT_WINDOW_FACTOR * interval_s
        self.counts: list[int] = []
        self.latencies: list[float] = []
        self.closed = 0
        self.stable = False
        self.done = False

    @property
    def end(self) -> float:
        return self.start + self.closed * self.window

    def record(self, request: Request) -> None:
        index = int((float(request.finish or 0.0) - self.start) // self.window)
        while len(self.counts) <= index:
            self.counts.append(0)
            self.latencies.append(0.0)
        self.counts[index] += 1
        self.latencies[index] += float(request.finish or 0.0) - request.arrival

    def advance(self, now: float) -> bool:
        """Close the windows that ended by `now`; return True once the measurement stops."""
        while not self.done and now >= self.start + (self.closed + 1) * self.window:
            self.closed += 1
            self._decide()
        return self.done

    def _decide(self) -> None:
        if self.closed < MEASUREMENT_STABLE_WINDOWS:
            return
        last = range(self.closed - MEASUREMENT_STABLE_WINDOWS, self.closed)
        counts = [self.counts[i] if i < len(self.counts) else 0 for i in last]
        if all(counts):
            # equal windows: their request rates compare as their counts
            rates = max(counts) / min(counts) <= 1 + MEASUREMENT_STABILITY
            means = [self.latencies[i] / self.counts[i] for i in last]
            latency = max(means) / min(means) <= 1 + MEASUREMENT_STABILITY
            self.stable = rates and latency
            self.done = self.stable
            if self.closed >= MEASUREMENT_MAX_WINDOWS and not self.done:
                # perf_analyzer's asynchronous mode accepts rates that agree alone
                self.stable = rates
                self.done = True
        elif self.closed >= MEASUREMENT_MAX_WINDOWS:
            raise PlanError(
                MSG_MEASUREMENT_EMPTY.format(
                    windows=MEASUREMENT_STABLE_WINDOWS, limit=MEASUREMENT_MAX_WINDOWS
                )
            )

    def summary(self, measured: int) -> dict[str, Any]:
        return {
            "interval_s": self.window / MEASUREMENT_WINDOW_FACTOR,
            "window_s": self.window,
            "windows": self.closed,
            "stable": self.stable,
            "requests": measured,
            "span_s": self.closed * self.window,
        }


def simulate_serving(
    model: ModelConfig,
    plan: ServingPlan,
    system: str,
    *,
    timer: IterationTimer | None = None,
    iteration_limit: int | None = None,
    catalogue: GpuCatalogue | None = None,
) -> dict[str, Any]:
    """Serve the plan's request stream (at most `iteration_limit` iterations), the system's
    GPU from `catalogue` (by default the seed; unused with a `timer`); return per-request
    latency percentiles (TTFT, TPOT, end to end), throughput, achieved batch sizes and
    KV-cache occupancy; with `plan.measurement_interval_s`, over the requests GenAI-Perf's
    windows measure (`measurement` tells which). Raise PlanError for a plan that does not
    divide the model, whose weights leave no KV cache, with a request that could never fit,
    or whose stream ends before the measurement does, GpuNotFound for a GPU the catalogue
    lacks."""
    plan.check()
    timer = timer or IterationTimer(model, plan, system, catalogue=catalogue)
    capacity = kv_capacity(model, plan, timer)
    requests = request_stream(plan)
    longest = max(r.prompt + r.output for r in requests)
    if _blocks(longest, plan.block_size) > capacity["blocks"]:
        raise PlanError(
            f"a request of {longest} tokens needs more KV cache than the GPU keeps "
            f"({capacity['tokens']} tokens)"
        )
    if not plan.chunked_prefill and max(r.prompt for r in requests) > plan.max_batched_tokens:
        raise PlanError(
            "max_batched_tokens must hold the longest prompt without chunked prefill "
            f"({max(r.prompt for r in requests)} tokens)"
        )
    scheduler = Scheduler(plan, capacity["blocks"])
    arrivals = [r.arrival for r in requests]
    pending = 0  # requests not yet put in the queue
    limit = plan.max_concurrency
    held = 0  # requests before this index arrived while the client was at its limit
    now = 0.0
    done = 0
    iterations = 0
    busy = 0.0
    batch_time = 0.0  # sum of batch size x iteration time
    tokens_time = 0.0
    kv_time = 0.0
    kv_peak = 0
    batch_max = 0
    meter = None
    if plan.measurement_interval_s is not None:
        meter = Measurement(requests[0].arrival, plan.measurement_interval_s)
    while done < len(requests):
        arrived = bisect.bisect_right(arrivals, now)
        while pending < arrived:
            if limit is not None and pending - done >= limit:
                # the client holds it back until one of its requests completes, and
                # sends it then: its latencies count from that moment
                held = max(held, arrived)
                break
            request = requests[pending]
            if pending < held:
                request.arrival = now
            scheduler.waiting.append(request)
            pending += 1
        if meter is not None and pending == len(requests):
            # the benchmark's clients would go on sending: a stream that ran out would
            # measure a load falling off
            raise PlanError(
                MSG_MEASUREMENT_STREAM.format(
                    requests=len(requests),
                    window=meter.closed + 1,
                    limit=MEASUREMENT_MAX_WINDOWS,
                    seconds=meter.window,
                )
            )
        scheduled = scheduler.schedule(now)
        if not scheduled:
            if pending < len(requests) and not scheduler.running and held <= pending:
                now = max(now, arrivals[pending])
                continue
            raise PlanError("the scheduler cannot make progress: a request never fits")
        # a decode is one query against a cache; a prefill chunk, queries against their own
        # keys and the earlier chunks'
        decodes = context = sampled = tokens_now = 0
        chunks: list[tuple[int, int]] = []
        for request, tokens in scheduled:
            tokens_now += tokens
            if tokens == 1 and request.computed > 0:
                decodes += 1
                context += request.computed
            else:
                chunks.append((tokens, request.computed + tokens))
            if request.computed + tokens == request.prompt + request.generated:
                sampled += 1
        seconds = timer.iteration(context, decodes, chunks, sampled)
        used = scheduler.total - scheduler.free
        kv_peak = max(kv_peak, used)
        kv_time += used * seconds
        batch_time += len(scheduled) * seconds
        tokens_time += tokens_now * seconds
        batch_max = max(batch_max, len(scheduled))
        busy += seconds
        iterations += 1
        if iteration_limit is not None and iterations > iteration_limit:
            raise PlanError(MSG_ITERATIONS.format(limit=iteration_limit))
        now += seconds
        for request, tokens in scheduled:
            if request.started is None:
                request.started = now - seconds
            request.computed += tokens
            if request.computed < request.known:
                continue
            request.generated += 1
            if request.first_token is None:
                request.first_token = now
            if request.generated >= request.output:
                request.finish = now
                scheduler.running.remove(request)
                scheduler.release(request)
                done += 1
                if meter is not None:
                    meter.record(request)
        if meter is not None and meter.advance(now):
            break
    counts = {
        "iterations": iterations,
        "busy": busy,
        "batch_time": batch_time,
        "tokens_time": tokens_time,
        "kv_time": kv_time,
        "kv_peak": kv_peak,
        "batch_max": batch_max,
        "preemptions": scheduler.preemptions,
    }
    if meter is None:
        return _figures(model, plan, system, requests, capacity, timer, now, counts)
    measured = [r for r in requests if r.finish is not None and r.finish <= meter.end]
    end = max(float(r.finish or 0.0) for r in measured)
    result = _figures(model, plan, system, measured, capacity, timer, end, counts)
    result["measurement"] = meter.summary(len(measured))
    return result


def _figures(
    model: ModelConfig,
    plan: ServingPlan,
    system: str,
    requests: list[Request],
    capacity: dict[str, Any],
    timer: IterationTimer,
    end: float,
    counts: dict[str, float],
) -> dict[str, Any]:
    ttft = [float(r.first_token or 0.0) - r.arrival for r in requests]
    e2e = [float(r.finish or 0.0) - r.arrival for r in requests]
    tpot = [
        (float(r.finish or 0.0) - float(r.first_token or 0.0)) / (r.output - 1)
        for r in requests
        if r.output > 1
    ]
    queued = [float(r.started or 0.0) - r.arrival for r in requests]
    # from the first send (a measured subset's earliest, GenAI-Perf's span) to `end`
    duration = end - min(r.arrival for r in requests)
    generated = sum(r.output for r in requests)
    prompts = sum(r.prompt for r in requests)
    busy = counts["busy"] or 1.0
    third = max(1, len(requests) // 3)
    growth = sum(queued[-third:]) / third - sum(queued[:third]) / third
    return {
        "model": model.name,
        "system": system,
        "plan": {
            "tp": plan.tp,
            "pp": plan.pp,
            "precision": plan.precision,
            "requests": plan.requests,
            "arrival_rate": plan.arrival_rate,
            "arrivals": "given" if plan.arrivals is not None else None,
            "max_concurrency": plan.max_concurrency,
            "measurement_interval_s": plan.measurement_interval_s,
            "input_len": plan.input_len.label(),
            "output_len": plan.output_len.label(),
            "seed": plan.seed,
            "max_batch": plan.max_batch,
            "max_batched_tokens": plan.max_batched_tokens,
            "chunked_prefill": plan.chunked_prefill,
            "gpu_memory_utilization": plan.gpu_memory_utilization,
            "block_size": plan.block_size,
        },
        "gpus": plan.gpus,
        "ttft_s": _summary(ttft),
        "tpot_s": _summary(tpot),
        "e2e_latency_s": _summary(e2e),
        "queueing_s": _summary(queued),
        "duration_s": duration,
        "output_tokens_per_s": generated / duration,
        "output_tokens_per_s_per_gpu": generated / duration / plan.gpus,
        "total_tokens_per_s": (generated + prompts) / duration,
        "requests_per_s": len(requests) / duration,
        "batch": {
            "mean": counts["batch_time"] / busy,
            "max": counts["batch_max"],
            "tokens_per_iteration": counts["tokens_time"] / busy,
        },
        "kv_cache": {
            "mean_occupancy": counts["kv_time"] / busy / capacity["blocks"],
            "peak_occupancy": counts["kv_peak"] / capacity["blocks"],
            **capacity,
        },
        "iterations": int(counts["iterations"]),
        "busy_s": counts["busy"],
        "preemptions": int(counts["preemptions"]),
        # the mean queueing delay of the last third of the stream less the first third's
        "queue_growth_s": growth,
        "unbounded_queue": growth > QUEUE_GROWTH * duration,
        "single_prefill_s": timer.prefill(requests[0].prompt),
        "notes": sorted(timer.timer.notes),
        "measurement": None,
    }


def saturating_rate(
    model: ModelConfig,
    plan: ServingPlan,
    system: str,
    *,
    steps: int = 4,
    iteration_limit: int | None = None,
    catalogue: GpuCatalogue | None = None,
) -> dict[str, Any]:
    """Sweep the Poisson arrival rate and find where the queue grows without bound.

    The stream is open (no client concurrency limit) and has at least four times `max_batch`
    requests, so that a queue forms once the running batch is full. The capacity is its request throughput with every request queued
    at time 0 (the replica never idles but for the ramp and the drain). The sweep doubles
    the rate from a quarter of the capacity until the queueing delay grows along the stream
    (`unbounded_queue`), then bisects `steps` times between the last rate that held and the
    first that did not: the saturating rate is the lowest rate found unbounded, the
    sustainable rate the highest that held. "The batch that saturates" is the mean running
    batch at the sustainable rate. The system's GPU is `catalogue`'s (by default the seed)."""
    requests = max(plan.requests, 4 * plan.max_batch)
    # an open stream: a client's concurrency limit would hold the queue back at the client
    plan = _replace(
        plan, requests=requests, arrivals=None, max_concurrency=None, measurement_interval_s=None
    )
    timer = IterationTimer(model, plan, system, catalogue=catalogue)
    limit = iteration_limit
    burst = simulate_serving(
        model, _replace(plan, arrival_rate=None), system, timer=timer, iteration_limit=limit
    )
    capacity = burst["requests_per_s"]
    points: list[dict[str, Any]] = []

    def run(rate: float) -> bool:
        result = simulate_serving(
            model, _replace(plan, arrival_rate=rate), system, timer=timer, iteration_limit=limit
        )
        points.append(
            {
                "arrival_rate": rate,
                "requests_per_s": result["requests_per_s"],
                "output_tokens_per_s": result["output_tokens_per_s"],
                "ttft_s": result["ttft_s"],
                "tpot_s": result["tpot_s"],
                "e2e_latency_s": result["e2e_latency_s"],
                "batch_mean": result["batch"]["mean"],
                "kv_peak_occupancy": result["kv_cache"]["peak_occupancy"],
                "preemptions": result["preemptions"],
                "queue_growth_s": result["queue_growth_s"],
                "unbounded_queue": result["unbounded_queue"],
            }
        )
        return bool(result["unbounded_queue"])

    low, high = 0.0, None
    rate = capacity / 4
    while rate <= 16 * capacity:
        if run(rate):
            high = rate
            break
        low = rate
        rate *= 2
    if high is not None and low > 0:
        for _ in range(steps):
            middle = (low + high) / 2
            if run(middle):
                high = middle
            else:
                low = middle
    points.sort(key=lambda p: p["arrival_rate"])
    held = [p for p in points if p["arrival_rate"] == low]
    return {
        "requests": requests,
        "capacity_requests_per_s": capacity,
        "capacity_output_tokens_per_s": burst["output_tokens_per_s"],
        "saturating_rate": high,
        "sustainable_rate": low or None,
        "saturating_batch": held[0]["batch_mean"] if held else None,
        "points": points,
    }


def _replace(plan: ServingPlan, **changes: Any) -> ServingPlan:
    return dataclasses.replace(plan, **changes)
