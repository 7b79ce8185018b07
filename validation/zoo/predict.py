"""The current-architecture model's predictions for every zoo configuration, frozen before any
measurement (issue 42 item 4; docs/validation/zoo.md).

    python -m validation.zoo sass      # rebuild the analyzer's inputs with nvcc (kernels/)
    python -m validation.zoo predict   # write validation/zoo/predictions.json
    python -m validation.zoo check     # fail when the predictions differ from the committed file

The hand-written kernels are predicted by `gpu_current.computation_estimate` from their SASS
(`kernels/zoo.sass`, read by the analyzer) at each configuration's trip counts and grid; the
cuBLAS GEMMs, whose SASS is in the library, by `gemm.computation_estimate` from their shape with
the model's default tile. Atomics are described by `atomic_params` (operations per thread
where the analyzer's count of every lane does not hold, addresses, operations per sector:
C.8), barriers come from the SASS (C.9), and the SpMV gather by per-line strides whose
128-byte segments move the 32 sectors of a gather request (C.10's 32 sectors per request).
Each GPU twice: with its database record ("record") and with the
record less every measured attribute ("spec": the spec sheet plus the Hopper profile).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.analyzer.analysis import KernelAnalysis, analyze_sass
from simulator.models import gemm, gpu_current
from validation.analyze import MEASURED_KEYS, load_record

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
KERNEL_DIR = HERE / "kernels"
PREDICTIONS = HERE / "predictions.json"
GPUS = ("H100 SXM5 80GB", "H200 SXM 141GB")
# the measured attributes the spec mode drops: the kit's own list, the clock-wake penalty and
# time constant included (issue 42 item 4)
SPEC_DROPPED = MEASURED_KEYS
# what makes the predictions: a change to any of these files changes the hash
MODEL_FILES = (
    "simulator/models/gpu_current.py",
    "simulator/models/gemm.py",
    "simulator/models/volkov.py",
    "simulator/models/memory.py",
    "simulator/models/data/gpu_current_fit.json",
    "simulator/analyzer",
    "hwdb/seed/hardware.json",
    "validation/zoo/predict.py",
    "validation/zoo/kernels",
)
ZOO_ERRORS = {
    "unknown_kernel": "configs.csv line {line}: kernel {kernel!r} has no entry in predict.KERNELS",
    "bad_config": "configs.csv line {line}: config {config!r} is not key=value;key=value",
    "no_function": "kernels/zoo.sass has no function containing {symbol!r}",
}


@dataclass(frozen=True)
class Config:
    """One zoo configuration as `zoo --list` prints it."""

    cls: str
    kernel: str
    config: str
    grid: int
    block: int
    shmem: int

    @property
    def key(self) -> str:
        """Return the configuration's identity (the CSV's class, kernel and config)."""
        return f"{self.cls}/{self.kernel}/{self.config}"

    def values(self) -> dict[str, str]:
        """Return the config's key=value pairs."""
        return dict(item.split("=", 1) for item in self.config.split(";"))


def read_configs(path: Path = KERNEL_DIR / "configs.csv") -> list[Config]:
    """Return the configurations of `zoo --list` and `zoo_cublas --list`."""
    configs = []
    with path.open(encoding="utf-8") as handle:
        for line, row in enumerate(csv.reader(handle), start=1):
            cls, kernel, config, grid, block, shmem = row
            if not all("=" in item for item in config.split(";")):
                raise ValueError(ZOO_ERRORS["bad_config"].format(line=line, config=config))
            configs.append(Config(cls, kernel, config, int(grid), int(block), int(shmem)))
    return configs


# kernel -> (a substring of its mangled name, trip counts from the config, footprint in bytes,
# average shared-memory bank-conflict ways (C.7))
def _int(v: Mapping[str, str], key: str) -> int:
    return int(v[key])


KERNELS: dict[str, tuple[str, Any, Any, float]] = {
    "saxpy2": ("_ZN2zk6saxpy2", lambda v: {"a": _int(v, "a")}, lambda v: 8 * _int(v, "n"), 1.0),
    "stream_saxpy": ("stream_saxpy", lambda v: {}, lambda v: 8 * _int(v, "n"), 1.0),
    "ffma_ilp1": ("fma_chainsIfLi1E", lambda v: {"a": _int(v, "iters")}, lambda v: None, 1.0),
    "ffma_ilp4": ("fma_chainsIfLi4E", lambda v: {"a": _int(v, "iters")}, lambda v: None, 1.0),
    "ffma_ilp8": ("fma_chainsIfLi8E", lambda v: {"a": _int(v, "iters")}, lambda v: None, 1.0),
    "dfma_ilp1": ("fma_chainsIdLi1E", lambda v: {"a": _int(v, "iters")}, lambda v: None, 1.0),
    "dfma_ilp4": ("fma_chainsIdLi4E", lambda v: {"a": _int(v, "iters")}, lambda v: None, 1.0),
    # 4 conflict-free stores and 4 column reads that hit one bank 32 times: (4 + 4 x 32) / 8
    "transpose_naive": ("transposeILi0E", lambda v: {}, lambda v: 8 * _int(v, "n") ** 2, 16.5),
    "transpose_padded": ("transposeILi1E", lambda v: {}, lambda v: 8 * _int(v, "n") ** 2, 1.0),
    "stencil1d_r4": ("stencil1d", lambda v: {}, lambda v: 8 * _int(v, "n"), 1.0),
    "reduce_sum": ("reduce_sum", lambda v: {}, lambda v: 4 * _int(v, "n"), 1.0),
    "atomic_add": ("10atomic_addE", lambda v: {}, lambda v: 4 * _int(v, "n"), 1.0),
    "atomic_add_warp": ("atomic_add_warp", lambda v: {}, lambda v: 4 * _int(v, "n"), 1.0),
    "histogram_global": ("histogram_global", lambda v: {}, lambda v: _int(v, "n"), 1.0),
    "histogram_shared": ("histogram_shared", lambda v: {}, lambda v: _int(v, "n"), 1.0),
    "spmv_scalar": (
        "spmv_scalar",
        lambda v: {"a": _int(v, "per_row")},
        lambda v: _int(v, "rows") * (8 * _int(v, "per_row") + 12),
        1.0,
    ),
    # a warp per row, 32 entries per step: rows of 16 or 64 entries take 1 or 2 steps
    "spmv_vector": (
        "spmv_vector",
        lambda v: {"a": math.ceil(_int(v, "per_row") / 32)},
        lambda v: _int(v, "rows") * (8 * _int(v, "per_row") + 12),
        1.0,
    ),
    "softmax_rows": (
        "softmax_rows",
        lambda v: {},
        lambda v: 8 * _int(v, "rows") * _int(v, "cols"),
        1.0,
    ),
    "layernorm_rows": (
        "layernorm_rows",
        lambda v: {},
        lambda v: 8 * _int(v, "rows") * _int(v, "cols"),
        1.0,
    ),
    "wmma_fp16": (
        "wmma_gemmI6__half",
        lambda v: {"a": _int(v, "k") // 16},
        lambda v: 8 * _int(v, "m") ** 2,
        1.0,
    ),
    "wmma_bf16": (
        "wmma_gemmI13__nv_bfloat16",
        lambda v: {"a": _int(v, "k") // 16},
        lambda v: 8 * _int(v, "m") ** 2,
        1.0,
    ),
    "wmma_tf32": (
        "wmma_gemmIf",
        lambda v: {"a": _int(v, "k") // 8},
        lambda v: 12 * _int(v, "m") ** 2,
        1.0,
    ),
}
WARP = 32
SECTOR_WORDS = 8  # 4-byte words in a 32-byte L2 sector


def expected_distinct(lanes: int, bins: int) -> float:
    """Return the expected number of bins `lanes` lanes hit, each picking one of `bins` at
    random: bins x (1 - (1 - 1/bins)^lanes)."""
    return bins * (1.0 - (1.0 - 1.0 / bins) ** lanes)


def expected_largest_load(lanes: int, bins: int) -> float:
    """Return the expected largest number of lanes in one bin when `lanes` lanes pick one of
    `bins` at random: sum over k of P(max >= k), P(max <= k) = lanes! / bins^lanes times the
    x^lanes coefficient of (sum over j <= k of x^j / j!)^bins."""

    def at_most(k: int) -> float:
        series = [1.0 / math.factorial(j) for j in range(min(k, lanes) + 1)]
        power = [1.0] + [0.0] * lanes
        for _ in range(bins):
            power = [
                sum(power[i] * series[n - i] for i in range(max(0, n - k), n + 1))
                for n in range(lanes + 1)
            ]
        return power[lanes] * math.factorial(lanes) / bins**lanes

    return sum(1.0 - at_most(k - 1) for k in range(1, lanes + 1))


def atomic_params(kernel: str, values: Mapping[str, str], block: int) -> dict[str, float]:
    """Return what the analyzer cannot see of a kernel's global atomics (C.8): the operations
    per thread where not every lane of the atomic instruction does one, the addresses they hit
    and the operations per 32-byte sector access. Spread histogram data are hashed bytes,
    uniform over the 256 bins (32 sectors)."""
    same = values.get("data") == "same"
    if kernel == "reduce_sum":  # thread 0 of each block, on one address
        return {"atomicsPerThread": 1.0 / block, "atomicAddresses": 1.0, "atomicsPerSector": 1.0}
    if kernel == "atomic_add":  # out[i & mask]: a warp's lanes on consecutive addresses
        addresses = int(values["addresses"])
        sectors = math.ceil(min(WARP, addresses) / SECTOR_WORDS)
        return {"atomicAddresses": float(addresses), "atomicsPerSector": WARP / sectors}
    if kernel == "atomic_add_warp":  # one address; the SASS's elected lane gives 1/32 per thread
        return {"atomicAddresses": 1.0, "atomicsPerSector": 1.0}
    if kernel == "histogram_global":  # bins[data[i]]: one per element
        if same:
            return {"atomicAddresses": 1.0, "atomicsPerSector": float(WARP)}
        per_sector = WARP / expected_distinct(WARP, 256 // SECTOR_WORDS)
        return {"atomicAddresses": 256.0, "atomicsPerSector": per_sector}
    if kernel == "histogram_shared":  # bins[t] += local[t] for the block's non-empty bins
        if same:
            return {
                "atomicsPerThread": 1.0 / block,
                "atomicAddresses": 1.0,
                "atomicsPerSector": 1.0,
            }
        # a block's `block` elements over 256 bins leave (255/256)^block of them empty
        filled = 1.0 - (1.0 - 1.0 / 256) ** block
        return {
            "atomicsPerThread": filled,
            "atomicAddresses": 256.0,
            "atomicsPerSector": filled * SECTOR_WORDS,
        }
    return {}


def shared_atomic_conflict_ways(kernel: str, values: Mapping[str, str]) -> float:
    """Return the n of (C.7) of histogram_shared's shared-memory atomic: its lanes serialise on
    one address (same data) or on the most loaded of the 32 banks (spread data)."""
    if kernel != "histogram_shared":
        return 1.0
    return float(WARP) if values.get("data") == "same" else expected_largest_load(WARP, 32)


# the softmax and layernorm kernels are templates on the elements per thread (cols / 256)
TEMPLATED = {"softmax_rows", "layernorm_rows"}
CUBLAS_PRECISIONS = {
    "cublas_fp16": "fp16",
    "cublas_bf16": "bf16",
    "cublas_tf32": "tf32",
    "cublas_fp64": "fp64",
    "cublas_fp8": "fp8",
}
# cuBLASLt's FP8 GEMM writes BF16
CUBLAS_OUTPUT_BYTES = {"fp8": 2.0}
HMMA_SHAPE = re.compile(r"^[A-Z]*MMA\.(\d+)")
# A gather x[cols[j]] over random columns: every lane reads its own 32-byte L2 sector, which the
# analyzer's 128-byte segments (simulator.models.memory.warp_access) count as a stride of 8
# four-byte elements (four lanes per segment, 32 bytes each)
GATHER_STRIDE = 8
SASS_LINE = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?(\S+)\s+([^;]*);")
ADDRESS = re.compile(r"\[(R\d+)\.64")


def gather_lines(text: str, loops: list[tuple[int, int]]) -> list[int]:
    """Return the lines (1-based, of `text`) of the global loads inside a loop (head and latch
    lines in `loops`) whose address is computed (IMAD.WIDE) from a value loaded in the same
    loop: the x[cols[j]] of a CSR SpMV, not the loads that start at row_ptr[r]."""
    loaded: set[str] = set()
    address_from_load: set[str] = set()
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = SASS_LINE.search(line)
        if match is None or not any(head <= number <= latch for head, latch in loops):
            continue
        opcode, operands = match.group(1), [o.strip() for o in match.group(2).split(",")]
        if opcode.startswith("LDG"):
            address = ADDRESS.search(match.group(2))
            if address and address.group(1) in address_from_load:
                found.append(number)
            loaded.add(operands[0])
        elif opcode.startswith("IMAD.WIDE") and len(operands) > 1 and operands[1] in loaded:
            address_from_load.add(operands[0])
    return found


def function_text(sass: str, function: str) -> str:
    """Return the part of the SASS listing that holds one function (parsing it alone is
    quicker than parsing the whole listing for every configuration)."""
    start = sass.index(f"Function : {function}\n")
    end = sass.find("\n\t\tFunction : ", start)
    return "\t\t" + sass[start : len(sass) if end < 0 else end] + "\n"


def function_name(sass: str, kernel: str, config: Config) -> str:
    """Return the mangled name of the kernel's function in the SASS."""
    symbol, *_ = KERNELS[kernel]
    if kernel in TEMPLATED:
        symbol = f"{symbol}ILi{int(config.values()['cols']) // config.block}E"
    for name in re.findall(r"Function : (\S+)", sass):
        if symbol in name:
            return name
    raise ValueError(ZOO_ERRORS["no_function"].format(symbol=symbol))


def mma_flops(analysis: KernelAnalysis) -> float | None:
    """Return the FLOPs of one warp's tensor instruction from its shape (HMMA.16816 = m16 n8
    k16: 2 x 16 x 8 x 16), None without tensor instructions. Every tensor instruction of a
    zoo kernel has one shape."""
    shapes = set()
    for i in analysis.instructions:
        match = HMMA_SHAPE.match(i.opcode)
        if match:
            digits = match.group(1)
            shapes.add(2 * int(digits[:2]) * int(digits[2]) * int(digits[3:]))
    if len(shapes) > 1:
        raise ValueError(
            f"{analysis.kernel}: tensor instructions of several shapes {sorted(shapes)}"
        )
    return float(shapes.pop()) if shapes else None


def registers(resources: str, function: str) -> int:
    """Return the function's registers per thread from `cuobjdump -res-usage`."""
    match = re.search(re.escape(f"Function {function}:") + r"\s*REG:(\d+)", resources)
    if match is None:
        raise ValueError(f"kernels/zoo.res has no resource line for {function}")
    return int(match.group(1))


def record_for(gpu: str, mode: str) -> dict[str, Any]:
    """Return the GPU's record ("record") or the record less its measured attributes ("spec")."""
    record = dict(load_record(gpu))
    if mode == "spec":
        record = {k: v for k, v in record.items() if k not in SPEC_DROPPED}
    return record


def kernel_params(config: Config, sass: str, resources: str) -> dict[str, Any]:
    """Return the current model's parameters of a hand-written kernel's configuration."""
    _, trips, footprint, conflict = KERNELS[config.kernel]
    values = config.values()
    function = function_name(sass, config.kernel, config)
    text = function_text(sass, function)
    strides = {}
    if values.get("cols") == "random":
        plain = analyze_sass(text, "sm_90", kernel=function, trips=trips(values))
        loops = [(g.head_line, g.latch_line) for g in plain.graph.loops]
        strides = dict.fromkeys(gather_lines(text, loops), GATHER_STRIDE)
    analysis = analyze_sass(
        text,
        "sm_90",
        kernel=function,
        trips=trips(values),
        strides=strides,
        block_size=config.block,
        registers=registers(resources, function),
    )
    params = analysis.model_params()
    params["gridSize"] = config.grid
    params["blockSize"] = config.block
    size = footprint(values)
    if size is not None:
        # launched back to back: what fits in L2 is there from the launch before
        params["footprintBytes"] = float(size)
        params["l2Resident"] = True
    ways = shared_atomic_conflict_ways(config.kernel, values)
    if ways != 1.0:
        # one ATOMS per warp among the kernel's shared-memory instructions
        shared = float(params["sharedMemoryInstructions"])
        atoms = sum(1 for i in analysis.instructions if i.base == "ATOMS")
        conflict = (shared - atoms + atoms * ways) / shared
    if conflict != 1.0:
        params["sharedMemoryConflictWays"] = conflict
    params |= atomic_params(config.kernel, values, config.block)
    flops = mma_flops(analysis)
    if flops is not None:
        params["tensorFLOPsPerInstruction"] = flops
    return {
        k: (float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v)
        for k, v in params.items()
    }


def cublas_params(config: Config) -> dict[str, Any]:
    """Return the GEMM model's parameters of a cuBLAS configuration (the model's default tile)."""
    v = config.values()
    precision = CUBLAS_PRECISIONS[config.kernel]
    params: dict[str, Any] = {
        "kind": "gemm",
        "M": _int(v, "m"),
        "N": _int(v, "n"),
        "K": _int(v, "k"),
        "precision": precision,
    }
    if precision in CUBLAS_OUTPUT_BYTES:
        params["outputBytes"] = CUBLAS_OUTPUT_BYTES[precision]
    return params


def predict_all() -> dict[str, Any]:
    """Return every configuration's predicted time on each GPU and mode."""
    sass = (KERNEL_DIR / "zoo.sass").read_text(encoding="utf-8")
    resources = (KERNEL_DIR / "zoo.res").read_text(encoding="utf-8")
    configs = read_configs()
    records = {(gpu, mode): record_for(gpu, mode) for gpu in GPUS for mode in ("record", "spec")}
    out: dict[str, Any] = {}
    for config in configs:
        if config.kernel in CUBLAS_PRECISIONS:
            params = cublas_params(config)
            model = "gemm"
        elif config.kernel in KERNELS:
            params = kernel_params(config, sass, resources)
            model = "gpu_current"
        else:
            raise ValueError(
                ZOO_ERRORS["unknown_kernel"].format(
                    line=configs.index(config) + 1, kernel=config.kernel
                )
            )
        entry: dict[str, Any] = {
            "class": config.cls,
            "model": model,
            "params": params,
            "time_s": {},
            "bound": {},
        }
        for (gpu, mode), record in records.items():
            estimate = (gemm if model == "gemm" else gpu_current).computation_estimate(
                record, params
            )
            entry["time_s"][f"{gpu} ({mode})"] = estimate.time_s
            entry["bound"][f"{gpu} ({mode})"] = estimate.bound
        out[config.key] = entry
    return out


# what is hashed in the folders of MODEL_FILES (not build outputs, caches or notes)
HASHED_SUFFIXES = (".py", ".json", ".csv", ".sass", ".res")


def _model_paths() -> list[Path]:
    paths: list[Path] = []
    for name in MODEL_FILES:
        path = REPO_ROOT / name
        if path.is_dir():
            paths.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file() and p.suffix in HASHED_SUFFIXES and "__pycache__" not in p.parts
                )
            )
        else:
            paths.append(path)
    return paths


def model_hash() -> str:
    """Return the SHA-256 over the model files' paths and contents."""
    digest = hashlib.sha256()
    for path in _model_paths():
        digest.update(path.relative_to(REPO_ROOT).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def model_commit() -> str:
    """Return the last commit that touched the model files ("unknown" without git), marked
    "+uncommitted" when they differ from it."""
    try:
        commit = subprocess.run(
            ["git", "log", "-1", "--format=%H", "--", *MODEL_FILES],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", *MODEL_FILES],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+uncommitted" if dirty else "")


def build_document(created_utc: str) -> dict[str, Any]:
    """Return predictions.json's content."""
    return {
        "description": "The current-architecture model's predictions for every zoo configuration, made "
        "before any zoo measurement (python -m validation.zoo predict; do not edit).",
        "created_utc": created_utc,
        "model_commit": model_commit(),
        "model_hash": model_hash(),
        "model_files": list(MODEL_FILES),
        "spec_dropped": list(SPEC_DROPPED),
        "predictions": predict_all(),
    }


def check_committed(path: Path = PREDICTIONS, rel_tol: float = 1e-9) -> list[str]:
    """Return how the model's predictions now differ from the committed file (empty when they
    agree): the model files' hash, configurations added or gone, and every changed time."""
    committed = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    if committed["model_hash"] != model_hash():
        problems.append(
            "the model files changed since the predictions were made (hash "
            f"{committed['model_hash'][:12]} -> {model_hash()[:12]}): renew them with "
            "python -m validation.zoo predict before any new zoo measurement"
        )
    now = predict_all()
    old = committed["predictions"]
    for key in sorted(set(now) ^ set(old)):
        problems.append(f"{key}: {'new' if key in now else 'gone'} configuration")
    for key in sorted(set(now) & set(old)):
        for target, value in now[key]["time_s"].items():
            before = old[key]["time_s"].get(target)
            if before is None or not math.isclose(value, before, rel_tol=rel_tol):
                problems.append(f"{key} on {target}: predicted {value:.6e} s, committed {before}")
    return problems
