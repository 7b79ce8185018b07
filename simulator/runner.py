"""`run_simulation`: one application model on one system snapshot, start to result.

Trusted code: it runs inside the sandbox child (simulator.sandbox.run_sandboxed) or
in-process for tests and `--no-sandbox`. The application model is compiled once with the
sandbox's restricted compiler and run once per simulated process, each with its own globals
(simulator.api) on the run's platform (simulator.platform); computational models are JavaScript shallow functions, one
`ShallowFunctions` per distinct (model, hardware) pair.
"""

from __future__ import annotations

import functools
import gc
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from greenlet import GreenletExit

from simulator import api, hotpath
from simulator.api import (
    RUNTIME_GLOBALS,
    ApiUsageError,
    ConstVar,
    HashMap,
    Label,
    OptimizationType,
    Sim,
    SoftwareStack,
    StacklessSim,
)
from simulator.cost import CostFigures, run_cost
from simulator.engine import (
    Engine,
    Process,
    StacklessProcess,
    install_allocator_hook,
    prefault_arenas,
)
from simulator.errors import LaunchError, SimulationError, UserCodeError
from simulator.failure_injection import check_failures, inject_failures
from simulator.flows import NETWORK_MODELS, FlowNetwork
from simulator.model_validity import architecture_warnings
from simulator.models.energy import PowerStates, power_states
from simulator.models.js_compiler import clear_compiled_models
from simulator.models.reliability import failure_rate_from_attributes
from simulator.models.roofline import gpu_roof
from simulator.placement import Routes, Slot, place_processes
from simulator.platform import ModelFunctions, NodeRuntime, ProcessState, World
from simulator.results import (
    DEFAULT_TIMELINE_LIMIT,
    POWER_ATTRIBUTES,
    ComponentFigures,
    ProcessFigures,
    Result,
    Timeline,
    assemble_result,
)
from simulator.sandbox import Progress, child_entry, preparation
from simulator.sandbox.preparation import has_memory_nodes
from simulator.sandbox.restricted import (
    DEFAULT_FILENAME,
    compile_user_code,
    shared_builtins,
    user_error_from_exception,
    user_globals,
)
from simulator.sandbox.stackless import (
    FAST_CALLS,
    changes_globals,
    guard_parameters,
    module_error,
    parameters,
    process_function,
    referenced_names,
)
from simulator.shallow import ShallowFunctions
from simulator.snapshot import IDENTIFIER, SystemSnapshot, load_snapshot
from simulator.summary import result_summary
from simulator.symmetry import SYMMETRY_MESSAGES, RotationSymmetry, SymmetryBroken
from simulator.uncertainty import check_uncertainty, propagate

if TYPE_CHECKING:
    from simulator.summary import ResultSummary

APP_FILENAME = DEFAULT_FILENAME
PROGRESS_INTERVAL_S = 0.1
# How often the simulated time reached is reported while no process ends [s of wall clock].
SIMULATED_TIME_EVERY_S = 0.25

RUNNER_MESSAGES = {
    "variable_name": "variable names are identifiers (letters, digits, '_'), got {name!r}",
    "variable_reserved": "{name!r} is a name the application model already has; rename it",
    "variable_private": "{name!r} starts with '_', which application models cannot use; rename it",
    "variable_value": "a variable is a number, a boolean or a string, got {kind}",
    "labels": "labels map label names to process counts",
}


def _check_variables(variables: Mapping[str, object]) -> dict[str, object]:
    """Return the launch variables after checking names and values (LaunchError otherwise)."""
    checked: dict[str, object] = {}
    for name, value in variables.items():
        field = f"variables.{name}"
        if not isinstance(name, str) or not IDENTIFIER.match(name):
            raise LaunchError(field, RUNNER_MESSAGES["variable_name"].format(name=name))
        if name.startswith("_"):  # reserved for the sandbox's guards, unreadable by the model
            raise LaunchError(field, RUNNER_MESSAGES["variable_private"].format(name=name))
        if name in RUNTIME_GLOBALS:
            raise LaunchError(field, RUNNER_MESSAGES["variable_reserved"].format(name=name))
        if not isinstance(value, int | float | str | bool):
            raise LaunchError(
                field, RUNNER_MESSAGES["variable_value"].format(kind=type(value).__name__)
            )
        checked[name] = value
    return checked


STACKLESS_CALLS: frozenset[str] | None = FAST_CALLS
"""The `sim` calls of a model whose processes run stackless (simulator.sandbox.stackless);
None: any call (the tests run every model both ways)."""


def _run_application(code: CodeType, namespace: dict[str, object], name: str) -> None:
    """Run the application model as one process; turn its failures into SimulationErrors."""
    try:
        exec(code, namespace)
    except GreenletExit:
        raise
    except BaseException as error:  # user code may raise anything, SystemExit included
        reported = _reported(error, name)
        if reported is None:
            raise
        raise reported from None


def _reported(error: BaseException, name: str) -> BaseException | None:
    """Return the SimulationError to report for what process `name`'s model raised, None
    when `error` is one to pass on as it is."""
    error = module_error(error)  # a stackless process's function: what its module raises
    if isinstance(error, SimulationError):
        if not isinstance(error, UserCodeError) or error.process is not None:
            return None
        # e.g. a forbidden import: the sandbox's guard raised it, the line is in the traceback
        known = user_error_from_exception(error, APP_FILENAME)
        assert isinstance(known, UserCodeError)
        return UserCodeError(known.detail, line=known.line, process=name)
    reported = user_error_from_exception(error, APP_FILENAME)
    if isinstance(reported, UserCodeError) and reported.process is None:
        detail = str(error) if isinstance(error, ApiUsageError) else reported.detail
        reported = UserCodeError(detail, line=reported.line, process=name)
    return reported


def _node_power_and_failure(
    functions: ModelFunctions | None,
    attributes: Mapping[str, float],
    component_type: str,
    *,
    runs_processes: bool,
) -> tuple[PowerStates, float, tuple[str, ...]]:
    """Return (power states, failure rate 1/s, the power attributes the record lacked): the
    model's `power` function, else the record's attributes, whose missing states are
    estimated by simulator.models.energy's rules and named so that the result can say so."""
    states = power_states(attributes, component_type, runs_processes=runs_processes)
    missing = tuple(name for name in POWER_ATTRIBUTES if name not in attributes)
    failure = failure_rate_from_attributes(attributes)
    if functions is not None:
        if functions.has("power"):
            idle = functions.call("power", "idle", params={})
            active = functions.call("power", "active", params={})
            states = PowerStates(
                idle_w=idle, base_w=idle, base_state="idle", load_w=active, source="model"
            )
            missing = ()
        if functions.has("failureRate"):
            failure = functions.call("failureRate", params={})
    return states, failure, missing


# What every process of a run sees alike, in the run's builtins (restricted.shared_builtins).
API_BUILTINS = {
    "ConstVar": ConstVar,
    "SoftwareStack": SoftwareStack,
    "OptimizationType": OptimizationType,
    "HashMap": HashMap,
}
# What each process has of its own besides the launch variables (its globals, or arguments
# of a stackless process's function): sim, tag, rank, labels.
PROCESS_NAMES = RUNTIME_GLOBALS - API_BUILTINS.keys()


@functools.cache
def _shared_names() -> frozenset[str]:
    return frozenset(shared_builtins(API_BUILTINS))


def _stackless_function(app_source: str, variables: Iterable[object]) -> CodeType | None:
    """Return the generator function `app_source` runs as in stackless processes, or None
    when its processes run on greenlets (simulator.sandbox.stackless)."""
    names = frozenset(name for name in variables if isinstance(name, str)) | PROCESS_NAMES
    return process_function(
        app_source,
        APP_FILENAME,
        calls=STACKLESS_CALLS,
        arguments=names,
        shared=_shared_names(),
    )


def _runs_stackless(app_source: str, variables: Iterable[object]) -> bool:
    """Return whether `app_source`'s processes run stackless (`_stackless_function`)."""
    return _stackless_function(app_source, variables) is not None


address_space_reserved = functools.partial(
    preparation.address_space_reserved, runs_stackless=_runs_stackless
)
"""The sandbox child's reservation hook (simulator.sandbox.preparation), with the runner's
answer to whether a model's processes run stackless."""


def _one_at_a_time(progress: Progress) -> Progress:
    """Return `progress` behind a lock: the run reports from two threads."""
    lock = threading.Lock()

    def report(fraction: float, simulated_s: float | None = None, /) -> None:
        with lock:
            progress(fraction, simulated_s)

    return report


@contextmanager
def _reporting_simulated_time(
    report: Progress | None, reached: Callable[[], tuple[float, float]]
) -> Iterator[None]:
    """Report `reached()` (fraction done, simulated time) every SIMULATED_TIME_EVERY_S from
    a helper thread while the body runs, so that a run whose processes end only at the end
    (one process, or all together) still shows how far it got.

    A thread rather than a check in the engine's hot loop: it costs the run nothing between
    reports. It only reads the engine's clock (a float, read whole under the GIL) and is
    stopped and joined before the body's outcome leaves, so no report follows the result.
    """
    if report is None:
        yield
        return
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(SIMULATED_TIME_EVERY_S):
            fraction, simulated_s = reached()
            try:
                report(fraction, simulated_s)
            except BaseException:  # the receiver's failure is not the run's: stop reporting
                return

    thread = threading.Thread(target=run, name="simulated-time", daemon=True)
    try:
        thread.start()
    except RuntimeError as error:  # no room left for its stack: the run outgrew its memory
        raise MemoryError(f"the simulated-time reporter: {error}") from None
    try:
        yield
    finally:
        stop.set()
        thread.join()


# The young generation of the cyclic garbage collector during a run (CPython's default: 700).
# A run allocates container objects by the hundred thousand (processes, messages in flight,
# timeline entries) that mostly live until it ends, so collecting after every 700 scans the
# same live objects again and again, a large share of a big run's CPU time (gc.callbacks
# show it). Garbage is still collected, in larger batches (at most this many young objects
# wait); a threshold already higher (or 0, collection off) is kept. A lower one still
# collected the GPU example at 1,000 CPU-GPU pairs (about 110,000 objects that live until it
# ends) for nothing; this one never does.
RUN_GC_YOUNG_THRESHOLD = 200_000


class _YoungCollections:
    """Raise the collector's young threshold while at least one run is under way (runs may
    overlap in threads), and put the previous thresholds back when the last one ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs = 0
        self._saved = gc.get_threshold()

    @contextmanager
    def fewer(self) -> Iterator[None]:
        """Collect the young generation every RUN_GC_YOUNG_THRESHOLD allocations meanwhile."""
        with self._lock:
            if self._runs == 0:
                self._saved = saved = gc.get_threshold()
                if 0 < saved[0] < RUN_GC_YOUNG_THRESHOLD:
                    gc.set_threshold(RUN_GC_YOUNG_THRESHOLD, *saved[1:])
            self._runs += 1
        try:
            yield
        finally:
            with self._lock:
                self._runs -= 1
                if self._runs == 0:
                    gc.set_threshold(*self._saved)


_young_collections = _YoungCollections()


def prepare_simulation_process() -> None:
    """Prepare a process that exists to run a simulation (the sandbox child): the chunk cache
    (`install_allocator_hook`), and the young threshold raised for the process's whole life,
    as `_YoungCollections` raises it for a run. Put back as a run ends, the old threshold made
    the next allocation collect what the run left, on the way to the result."""
    install_allocator_hook()
    threshold = gc.get_threshold()
    if 0 < threshold[0] < RUN_GC_YOUNG_THRESHOLD:
        gc.set_threshold(RUN_GC_YOUNG_THRESHOLD, *threshold[1:])


# What a sandbox child waiting for its run compiles (`warm_up_compiler`): the statements
# application models are made of, sim calls, a helper function.
WARM_UP_APP = """\
def share(total, parts):
    return total / max(parts, 1)

data = {"t": 1.0, "n": [rank, 2 * rank]}
for step in range(steps):
    if rank == 0:
        sim.p2pCommunicationSend(1, share(1e6, step + 1), tag="x")
    else:
        sim.p2pCommunicationReceive(0, tag="x")
    sim.computation({"t": data["t"] + (step % 3) * 0.5, "n": len(data["n"])})
"""


# What a sandbox child waiting for its run parses and asks its preparation hooks about
# (`warm_up_compiler`): a system as a user makes one, a computational model with a helper
# function, a conditional and a comment, and a network's p2pTime. The snapshot loader and the
# JavaScript compiler have work of their own on their first use in a process (tables read and
# made once), which a child forked by the zygote otherwise does on its run's clock.
WARM_UP_SNAPSHOT: dict[str, Any] = {
    "name": "warm-up",
    "hardware": {
        "host": {"type": "CPU", "name": "host", "attributes": {"gflops": 10.0}},
        "switch": {
            "type": "NETWORK",
            "name": "switch",
            "attributes": {"latency": 1e-6, "bandwidth": 1e9},
        },
    },
    "models": {
        "compute": {
            "language": "javascript",
            "source": """\
// a bounded computation time
function bounded(t, low, high) {
  return t < low ? low : (t > high ? high : t);
}
function computationTime(params) {
  var t = params.get('flops') / (gflops * 1e9) + params.t;
  if (t > 1e9) {
    return 1e9;
  }
  return bounded(t, 0, Math.max(1, t));
}
""",
        },
        "link": {
            "language": "javascript",
            "source": "function p2pTime(size, params) { return latency + size / bandwidth; }\n",
        },
    },
    "nodes": [
        {
            "id": "hosts",
            "name": "hosts",
            "hardware": "host",
            "model": "compute",
            "count": 2,
            "labels": {"P": 1},
        },
        {"id": "net", "name": "net", "hardware": "switch", "model": "link"},
    ],
    "edges": [["hosts", "net"]],
}


def warm_up_compiler() -> None:
    """Compile WARM_UP_APP as a run compiles its application model (`_stackless_function`,
    else `compile_user_code`), and prepare a run of WARM_UP_SNAPSHOT as the sandbox child
    prepares its run (the snapshot parsed, its models compiled by the preparation hooks): a
    child forked by the zygote then owns the compilers' and the loader's pages, and has
    their first-use work done, before its run comes (simulator.sandbox.child
    `_warm_up_while_idle`). Nothing of it reaches a run: the compiled functions' and models'
    caches are emptied after."""
    _stackless_function(WARM_UP_APP, ("steps",))
    compile_user_code(WARM_UP_APP, APP_FILENAME, trusted_sim=True)
    payload = preparation.parse_payload(
        {
            "snapshot": WARM_UP_SNAPSHOT,
            "app_source": WARM_UP_APP,
            "labels": {"P": 2},
            "variables": {"steps": 1},
        }
    )
    address_space_reserved(payload)
    preparation.needs_v8(payload)
    preparation.modules_needed(payload)
    process_function.cache_clear()
    clear_compiled_models()


# The object arenas a sandbox child waiting for its run faults in ahead (`warm_up_child`), of
# those left in the allocator hook's region (simulator/_speedups_memory.c; no new mapping). A
# 1,000 x 20 run's child (bench_userpath.py compute-distinct) then made about 490 minor faults
# in its run, not 740, the same with 2, 4, 8 or 16 (a throwaway count by getrusage, median of
# 4-8 runs each): it takes one or two arenas beyond those its warm-up freed. The waiting child
# faults them in while idle and holds them resident meanwhile (2 MiB).
PREFAULT_ARENAS = 2


def warm_up_child() -> None:
    """A sandbox child's warm-up while it waits for its run (simulator.sandbox.child
    `_warm_up_while_idle`): the compilers' (`warm_up_compiler`), then PREFAULT_ARENAS object
    arenas faulted in (`engine.prefault_arenas`), which the run's first objects then take
    without a page fault each."""
    warm_up_compiler()
    prefault_arenas(PREFAULT_ARENAS)


@overload
def run_simulation(
    snapshot: SystemSnapshot | Mapping[str, Any],
    app_source: str,
    *,
    labels: Mapping[str, int],
    variables: Mapping[str, object],
    seed: int = 0,
    progress: Progress | None = None,
    timeline_limit: int = DEFAULT_TIMELINE_LIMIT,
    failures: Mapping[str, Any] | None = None,
    uncertainty: Mapping[str, Any] | None = None,
    summary: Literal[False] = False,
    symmetry: bool = False,
) -> Result: ...


@overload
def run_simulation(
    snapshot: SystemSnapshot | Mapping[str, Any],
    app_source: str,
    *,
    labels: Mapping[str, int],
    variables: Mapping[str, object],
    seed: int = 0,
    progress: Progress | None = None,
    timeline_limit: int = DEFAULT_TIMELINE_LIMIT,
    failures: Mapping[str, Any] | None = None,
    uncertainty: Mapping[str, Any] | None = None,
    summary: Literal[True],
    symmetry: bool = False,
) -> ResultSummary: ...


@child_entry(
    prepare=prepare_simulation_process,  # the child runs a simulation and nothing else
    parse=preparation.parse_payload,  # once, in the child: the run gets the parsed snapshot
    needs_v8=preparation.needs_v8,
    address_space_reserved=address_space_reserved,
    modules_needed=preparation.modules_needed,
    warm_up=warm_up_child,
)
def run_simulation(
    snapshot: SystemSnapshot | Mapping[str, Any],
    app_source: str,
    *,
    labels: Mapping[str, int],
    variables: Mapping[str, object],
    seed: int = 0,
    progress: Progress | None = None,
    timeline_limit: int = DEFAULT_TIMELINE_LIMIT,
    failures: Mapping[str, Any] | None = None,
    uncertainty: Mapping[str, Any] | None = None,
    summary: bool = False,
    symmetry: bool = False,
) -> Result | ResultSummary:
    """Return the result (DESIGN.md "Result") of running `app_source` on `snapshot`.

    `progress` gets the fraction of processes finished and the simulated time reached, as
    each process ends (at most every PROGRESS_INTERVAL_S) and every SIMULATED_TIME_EVERY_S
    of wall clock in between (`_reporting_simulated_time`).

    `timeline_limit` bounds the timeline's process entries and its busy periods, each.

    `failures`: inject failures by Monte Carlo beside the analytic reliability
    ({mode, samples, restart_s}: simulator.failure_injection), giving `failure_injection`.

    `uncertainty`: a prediction interval by Monte Carlo over the records' uncertain attributes
    ({samples, seed, scale}: simulator.uncertainty), giving `uncertainty`; each sample is one
    more simulation of the same application with the run's seed.

    `symmetry`: simulate a collective call whose ranks are related by a rotation of the
    platform and the traffic once per orbit of ranks (simulator.symmetry), where it is proven
    to give the full simulation's answer; the result's `symmetry` says where it was used.

    `summary`: return the result's summary instead (`result_summary`: what the command line
    prints by default), which a sandbox child sends without the lists of entries that the
    summary only counts.

    Raise SnapshotError, LaunchError, UserCodeError, ModelEvaluationError or DeadlockError.
    """
    system = load_snapshot(snapshot)
    injection = check_failures(failures) if failures is not None else None
    interval_options = check_uncertainty(uncertainty) if uncertainty is not None else None
    with _young_collections.fewer():
        result = _simulate_symmetric(
            system,
            app_source,
            labels=labels,
            variables=variables,
            seed=seed,
            progress=progress,
            timeline_limit=timeline_limit,
            symmetry=symmetry,
        )
    result["cost"] = run_cost(system, result, variables)
    if injection is not None:
        result["failure_injection"] = inject_failures(result, injection, seed=seed)
    if interval_options is not None:

        def sample(variant: SystemSnapshot) -> tuple[float, float, CostFigures]:
            with _young_collections.fewer():
                figures = _simulate_symmetric(
                    variant,
                    app_source,
                    labels=labels,
                    variables=variables,
                    seed=seed,
                    progress=None,
                    timeline_limit=0,
                    symmetry=symmetry,
                )
            cost = run_cost(variant, figures, variables)
            return figures["overall_time_s"], figures["energy_j"]["total"], cost

        result["uncertainty"] = propagate(sample, system, interval_options)
    return result_summary(result) if summary else result


def _javascript_warnings(
    system: SystemSnapshot, functions_by_pair: Mapping[tuple[str, str], ShallowFunctions]
) -> list[dict[str, Any]]:
    """A warning (code "javascript") for each model V8 evaluated instead of the compiled
    Python (simulator.models.js_compiler): why, so that a slow run says what made it slow."""
    warnings: list[dict[str, Any]] = []
    for (model, hardware), functions in functions_by_pair.items():
        reason = functions.v8_reason()
        if reason is None:
            continue
        title = system.models[model].title
        warnings.append(
            {
                "code": "javascript",
                "model": title,
                "hardware": system.hardware[hardware].name,
                "reason": reason,
                "message": f"{title!r} ran in V8, not compiled to Python: {reason}.",
            }
        )
    return warnings


def _simulate_symmetric(
    snapshot: SystemSnapshot | Mapping[str, Any],
    app_source: str,
    *,
    labels: Mapping[str, int],
    variables: Mapping[str, object],
    seed: int,
    progress: Progress | None,
    timeline_limit: int,
    symmetry: bool,
) -> Result:
    """`_simulate` with symmetric collectives when `symmetry` (simulator.symmetry), run again
    in full when a symmetric call's condition failed on the way; the result's `symmetry`
    says which calls were simulated by their representatives, or why the run was redone."""
    arguments: dict[str, Any] = {
        "labels": labels,
        "variables": variables,
        "seed": seed,
        "progress": progress,
        "timeline_limit": timeline_limit,
    }
    if not symmetry:
        return _simulate(snapshot, app_source, **arguments)
    try:
        result = _simulate(snapshot, app_source, symmetry=True, **arguments)
    except SymmetryBroken as broken:
        result = _simulate(snapshot, app_source, **arguments)
        result["symmetry"] = {"used": False, "calls": [], "redone": broken.message}
    return result


def _simulate(
    snapshot: SystemSnapshot | Mapping[str, Any],
    app_source: str,
    *,
    labels: Mapping[str, int],
    variables: Mapping[str, object],
    seed: int,
    progress: Progress | None,
    timeline_limit: int,
    symmetry: bool = False,
) -> Result:
    """`run_simulation`'s work (it only sets the collector up around it)."""
    wall_start = time.perf_counter()
    system = load_snapshot(snapshot)
    if not isinstance(labels, Mapping):
        raise LaunchError("labels", RUNNER_MESSAGES["labels"])
    slots = place_processes(system, labels)
    launch_variables = _check_variables(variables)

    engine = Engine(seed)
    # the processes run stackless when the model allows it (simulator.sandbox.stackless),
    # whose process function compiles only a model that compile_user_code accepts; else on
    # greenlets, running the model's module code (compile_user_code reports its errors)
    stackless = _stackless_function(app_source, launch_variables) if engine.stackless else None
    code = (
        compile_user_code(app_source, APP_FILENAME, trusted_sim=True) if stackless is None else None
    )
    arguments = () if stackless is None else parameters(stackless)
    functions_by_pair: dict[tuple[str, str], ShallowFunctions] = {}
    nodes: dict[str, NodeRuntime] = {}
    figures: list[ComponentFigures] = []
    for node in system.nodes.values():
        if node.group or node.hardware is None:
            continue
        hardware = system.hardware[node.hardware]
        functions: ModelFunctions | None = None
        if node.model is not None:
            pair = (node.model, node.hardware)
            shallow = functions_by_pair.get(pair)
            if shallow is None:
                shallow = ShallowFunctions(
                    # Messages name the model by its name (the snapshot's key is "model-10").
                    model_key=system.models[node.model].title,
                    source=system.models[node.model].source,
                    attributes=hardware.attributes,
                )
                functions_by_pair[pair] = shallow
            functions = shallow
        model_key = system.models[node.model].title if node.model is not None else None
        # The kernel modes are imported here: they need NumPy, which a plain run does not load.
        if node.kernel_mode == "detailed":
            from simulator.models.gpu_detailed import DetailedKernelFunctions

            functions = DetailedKernelFunctions(
                hardware.attributes, functions, workers=node.kernel_workers
            )
            model_key = "detailed kernel mode"
        elif node.kernel_mode != "analytic":
            from simulator.models.gpu_modes import KERNEL_MODE_FUNCTIONS

            mode = KERNEL_MODE_FUNCTIONS[node.kernel_mode](hardware.attributes, functions)
            functions, model_key = mode, mode.MODEL_NAME
        nodes[node.id] = NodeRuntime(
            engine,
            node.id,
            count=node.count,
            capacity=sum(node.labels.values()),
            is_network=hardware.type == "NETWORK",
            model_key=model_key,
            functions=functions,
            title=node.name or node.id,
            sharing=node.sharing if hardware.type == "NETWORK" else "fifo",
            reduce_bytes_per_s=_reduce_bytes_per_s(hardware.type, hardware.attributes),
            nvls=hardware.type == "NETWORK" and bool(hardware.attributes.get("nvls", 0)),
            compute_capability=_compute_capability(hardware.type, hardware.attributes),
        )
        power, failure_rate, power_missing = _node_power_and_failure(
            functions,
            hardware.attributes,
            hardware.type,
            runs_processes=sum(node.labels.values()) > 0,
        )
        figures.append(
            ComponentFigures(
                node.id,
                node.name,
                hardware.name,
                hardware.type,
                power.base_w,
                power.load_w,
                failure_rate,
                power_missing,
                roof=gpu_roof(hardware.attributes) if hardware.type == "GPU" else None,
                states=power,
            )
        )

    memory = None
    if has_memory_nodes(system):
        # Imported here: the memory hierarchy's modules load only for systems that have one.
        from simulator.memsys import MemorySystem

        memory = MemorySystem(engine, system)
    active_memory = memory if memory is not None and memory.active else None
    timeline = Timeline(timeline_limit)
    states = _made_states(engine, slots)
    # a network of flow links when a network node shares its bandwidth (simulator.flows)
    network = (
        FlowNetwork(engine, NETWORK_MODELS[system.network_model])
        if any(node.sharing != "fifo" for node in nodes.values())
        else None
    )
    world = World(engine, nodes, Routes(system), states, timeline, active_memory, network)
    world.hosts = {node.id: node.parent or node.id for node in system.nodes.values()}
    rotations = world.symmetry = RotationSymmetry(world) if symmetry else None
    label_counts = {label: int(count) for label, count in labels.items()}
    builtins = shared_builtins(API_BUILTINS)  # one table for the run's processes
    sim_class = Sim if stackless is None else StacklessSim
    # a stackless model that never names `tag` or `labels` gets neither (made per process)
    referenced = referenced_names(stackless) if stackless is not None else PROCESS_NAMES
    with_tag, with_labels = "tag" in referenced, "labels" in referenced
    # the guards a stackless process's function reads as its parameters: the builtins'
    guards = (
        {} if stackless is None else {name: builtins[name] for name in guard_parameters(stackless)}
    )
    shared = _shared_process_function(stackless, arguments, launch_variables, builtins, guards)
    if shared is not None:
        # each process's arguments: the launch variables', then its own in their places
        template = [launch_variables.get(name) for name in arguments]
        sim_at, rank_at, tag_at, labels_at = (
            arguments.index(name) if name in arguments else -1
            for name in ("sim", "rank", "tag", "labels")
        )
    sims = _made_sims(sim_class, world, states, label_counts)
    if shared is not None:
        # every process's generator from the one shared function (`_stackless_spawned`)
        places = (sim_at, rank_at, tag_at, labels_at)
        spawned = _stackless_spawned(
            engine, states, sims, shared, template, places, label_counts, _reported, Label
        )
        if spawned is NotImplemented:
            _python_stackless_spawned(
                engine, states, sims, shared, template, places, label_counts, _reported, Label
            )
    else:
        for number, (state, sim) in enumerate(zip(states, sims, strict=True)):
            slot = state.slot
            process: Process | StacklessProcess
            names: dict[str, object] = {**launch_variables, "sim": sim, "rank": slot.rank}
            if with_tag:
                names["tag"] = Label(slot.label)
            if with_labels:
                names["labels"] = dict(label_counts)
            # a stackless process's function takes some as arguments: its fast locals
            values = list(map(names.pop, arguments))
            # every process has the same names: the first one's are checked for all
            namespace = user_globals(names, builtins, names_checked=number > 0)
            if stackless is None:
                process = engine.spawn(state.name, _run_application, code, namespace, state.name)
                process.data = state
                continue
            generator = FunctionType(stackless, namespace)(*values, **guards)
            process = engine.spawn_stackless(state.name, generator, sim)
            process.on_error = _reported  # _run_application's reporting
            sim._stackless = process  # type: ignore[attr-defined]  # a StacklessSim (no cast: a call)
            process.data = state

    total = len(states)
    finished = 0
    last_report = wall_start
    report = _one_at_a_time(progress) if progress is not None else None

    def on_process_end(process: Process | StacklessProcess) -> None:
        nonlocal finished, last_report
        process.data.figures.finish_s = engine.now
        finished += 1
        if report is not None:
            now = time.perf_counter()
            if now - last_report >= PROGRESS_INTERVAL_S or finished == total:
                last_report = now
                report(finished / total, engine.now)

    # without progress to report, a process's end needs no call as it happens: its finish
    # time is read from the process once the run is over (`_finish_times`)
    if report is not None:
        engine.on_process_end = on_process_end
    # The usage each component row reports (a memory node's comes from the memory system)
    # also records its busy periods: the timeline's resource rows.
    components = [
        (fig, (memory.usages(fig.node) if memory else None) or nodes[fig.node].usages)
        for fig in figures
    ]
    for _, usages in components:
        for usage in usages:
            usage.track = timeline
    try:
        with _reporting_simulated_time(report, lambda: (finished / total, engine.now)):
            engine.run()
    except BaseException as error:
        if rotations is not None and (rotations.broken or rotations.waiting):
            # a symmetric call's condition failed (or members waited for ever at its start):
            # the whole run again in full (`_simulate_symmetric`)
            reason = rotations.broken or "a member never called it"
            raise SymmetryBroken(SYMMETRY_MESSAGES["broken"].format(reason=reason)) from error
        raise
    finally:
        engine.close()
    if rotations is not None and rotations.broken:
        raise SymmetryBroken(SYMMETRY_MESSAGES["broken"].format(reason=rotations.broken))

    if report is None:
        _finish_times(engine)
    overall = engine.now
    for _, usages in components:
        for usage in usages:
            usage.close(overall)
    result = assemble_result(
        overall_time_s=overall,
        processes=[state.figures for state in states],
        components=components,
        timeline=timeline,
        events=engine.events,
        wall_start=wall_start,
        seed=seed,
        memory=active_memory.result(overall) if active_memory is not None else None,
        warnings=[*architecture_warnings(system), *_javascript_warnings(system, functions_by_pair)],
        collectives=world.collective_calls,
        links=network.result(overall) if network is not None else None,
    )
    if rotations is not None:
        result["symmetry"] = {"used": bool(rotations.used), "calls": rotations.used, "redone": None}
    return result


def _python_states_made(engine: Engine, slots: list[Slot], *_classes: object) -> list[ProcessState]:
    """Return a run's process records, one a slot, each made by its class (the C core's
    `states_made` makes the same without their Python initialisers)."""
    return [ProcessState(engine, slot) for slot in slots]


def _python_sims_made(
    sim_class: type[Sim],
    _init: object,
    world: World,
    states: list[ProcessState],
    labels: Mapping[str, int],
    *_read: object,
) -> list[Sim]:
    """Return the run's processes' sim objects, one a record, each made by its class (the C
    core's `sims_made` makes the same without Sim's Python initialiser)."""
    return [sim_class(world, state, labels) for state in states]


# the C core's (simulator/_speedups_spawn.c) where it is in use, else the references above; C's
# answers NotImplemented where a class is not as its reference makes it (the reference then)
_states_made: Callable[..., Any] = hotpath.choose(_python_states_made, "states_made")
_sims_made: Callable[..., Any] = hotpath.choose(_python_sims_made, "sims_made")
# the default of ProcessFigures' five figures, which a record made in C is given too
_FIGURE_DEFAULT = ProcessFigures.__dataclass_fields__["compute_s"].default
# What the C core makes its records and sims as: the initialisers and the slot's name as this
# module found them. The C core answers NotImplemented where a class's __init__ is no longer
# the one handed to it, so one replaced since (a wrapper, a test double) is run by the
# references; the name is built in C as Slot.name builds it, so a replaced one is too.
_STATE_INIT = ProcessState.__init__
_FIGURES_INIT = ProcessFigures.__init__
_SIM_INIT = Sim.__init__
_SLOT_NAME = Slot.__dict__["name"]


def _made_states(engine: Engine, slots: list[Slot]) -> list[ProcessState]:
    """Return `ProcessState(engine, slot)` for each slot (`_states_made`)."""
    made = (
        _states_made(
            engine,
            slots,
            ProcessState,
            _STATE_INIT,
            ProcessFigures,
            _FIGURES_INIT,
            Slot,
            _FIGURE_DEFAULT,
        )
        if Slot.__dict__.get("name") is _SLOT_NAME
        else NotImplemented
    )
    if made is NotImplemented:
        made = _python_states_made(engine, slots)
    return cast("list[ProcessState]", made)


def _made_sims(
    sim_class: type[Sim], world: World, states: list[ProcessState], labels: Mapping[str, int]
) -> list[Sim]:
    """Return `sim_class(world, state, labels)` for each state (`_sims_made`), the world's
    values read once."""
    engine = world.engine
    made = _sims_made(
        sim_class,
        _SIM_INIT,
        world,
        states,
        labels,
        ProcessState,
        Slot,
        api._node_memos,  # read here: the module's, as Sim.__init__ reads it
        engine,
        world.nodes,
        world.receivers,
        world.collectives,
        world.timeline,
        engine.random,
    )
    if made is NotImplemented:
        made = _python_sims_made(sim_class, Sim.__init__, world, states, labels)
    return cast("list[Sim]", made)


def _python_stackless_spawned(
    engine: Engine,
    states: list[ProcessState],
    sims: list[Sim],
    shared: Callable[..., Any],
    template: list[object],
    places: tuple[int, int, int, int],
    label_counts: dict[str, int],
    on_error: Callable[..., Any],
    label_type: type[Label],
) -> object:
    """Spawn each process of a run whose processes share one stackless function: its
    arguments `template`'s (the launch variables), its sim, rank, tag and labels in their
    `places` (-1: not an argument), its generator the shared function's (the C core's
    `stackless_spawned` spawns the same)."""
    sim_at, rank_at, tag_at, labels_at = places
    for state, sim in zip(states, sims, strict=True):
        slot = state.slot
        values = template.copy()
        if sim_at >= 0:
            values[sim_at] = sim
        if rank_at >= 0:
            values[rank_at] = slot.rank
        if tag_at >= 0:
            values[tag_at] = label_type(slot.label)
        if labels_at >= 0:
            values[labels_at] = dict(label_counts)
        generator = shared(*values)
        process = engine.spawn_stackless(state.name, generator, sim)
        process.on_error = on_error  # _run_application's reporting
        sim._stackless = process  # type: ignore[attr-defined]  # a StacklessSim (no cast: a call)
        process.data = state
    return None


_stackless_spawned: Callable[..., Any] = hotpath.choose(
    _python_stackless_spawned, "stackless_spawned"
)


def _finish_times(engine: Engine) -> None:
    """Set each finished process's figures' finish time from the process (the engine's
    `finish_time`, its clock at the process's end: what `on_process_end` sets as it ends);
    one that never finished keeps none (0.0), as there."""
    for process in engine.processes:
        if process.finish_time is not None:
            process.data.figures.finish_s = process.finish_time


def _shared_process_function(
    stackless: CodeType | None,
    arguments: tuple[str, ...],
    launch_variables: Mapping[str, object],
    builtins: dict[str, object],
    guards: dict[str, object],
) -> FunctionType | None:
    """Return the one process function of a run whose processes can share their globals, or
    None when each process needs its own (made per process). They can share when the model
    cannot change its globals (simulator.sandbox.stackless `changes_globals`) and every name
    of a process's own that it names (`sim`, `rank`, `tag`, `labels`) is an argument of the
    function, not a global: the one table then holds what every process's would (the
    launch variables, the run's builtins), and nothing a process does reaches it. The
    guards are the function's keyword defaults."""
    if stackless is None or changes_globals(stackless):
        return None
    if (referenced_names(stackless) & PROCESS_NAMES) - set(arguments):
        return None
    namespace = user_globals(
        {name: value for name, value in launch_variables.items() if name not in arguments},
        builtins,
    )
    function = FunctionType(stackless, namespace)
    function.__kwdefaults__ = guards or None
    return function


def _compute_capability(kind: str, attributes: Mapping[str, Any]) -> float | None:
    """Return a GPU record's `computeCapability` as a number, None for other hardware or a
    record without one."""
    value = attributes.get("computeCapability") if kind == "GPU" else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _reduce_bytes_per_s(kind: str, attributes: Mapping[str, Any]) -> float | None:
    """Return the rate at which a GPU streams a collective's reduction through its memory
    (its DRAM roof, simulator.models.roofline.gpu_roof), None for other hardware or a record
    without the attributes the roof needs."""
    if kind != "GPU":
        return None
    roof = gpu_roof(attributes)
    return None if roof is None else roof.peak_bytes_per_s
