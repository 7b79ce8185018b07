"""Compile CUDA source with nvcc and disassemble it with cuobjdump, without a GPU.

``nvcc -cubin -arch=sm_XX -Xptxas -v`` gives the cubin and, on stderr, ptxas's resource usage
per kernel (000 Listing 1: registers, shared memory, spills); ``cuobjdump -sass`` gives the SASS
(the PyPI packages nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm provide both tools, pinned in
requirements/dev.txt; cuobjdump needs nvdisasm next to it or on PATH).

Tools are looked up in $PARASIM_NVCC / $PARASIM_CUOBJDUMP, PATH, $CUDA_HOME/bin,
/usr/local/cuda/bin and the ``nvidia`` Python packages. Results are cached per (source text,
architecture) for the life of the process, so tests and repeated CLI calls compile once.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from simulator.analyzer.errors import (
    COMPILER_FAILED,
    CUOBJDUMP_MISSING,
    DISASSEMBLER_FAILED,
    NVCC_MISSING,
    AnalyzerError,
)


@dataclass(frozen=True)
class ResourceUsage:
    """ptxas's report for one kernel (`-Xptxas -v`)."""

    registers: int
    shared_bytes: int = 0
    constant_bytes: int = 0
    stack_frame_bytes: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    barriers: int = 0


@dataclass(frozen=True)
class Compiled:
    """The SASS text and the per-kernel resource usage of one compilation."""

    arch: str
    sass: str
    resources: dict[str, ResourceUsage]
    ptxas_output: str


_CACHE: dict[tuple[str, str], Compiled] = {}


def _package_bin(tool: str) -> str | None:
    for entry in sys.path:
        base = Path(entry) / "nvidia"
        try:
            found = base.is_dir()
        except OSError:  # a folder this user may not read (the sandbox's child)
            continue
        if found:
            for candidate in sorted(base.glob(f"*/bin/{tool}")):
                if os.access(candidate, os.X_OK):
                    return str(candidate)
    return None


def find_tool(tool: str) -> str | None:
    """Return the path of `tool` (nvcc, cuobjdump, nvdisasm), or None when it is not installed."""
    override = os.environ.get(f"PARASIM_{tool.upper()}")
    if override:
        return override
    found = shutil.which(tool)
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.access(Path(home) / "bin" / tool, os.X_OK):
            return str(Path(home) / "bin" / tool)
    return _package_bin(tool)


def nvcc_available() -> bool:
    """Return whether both nvcc and cuobjdump can be found."""
    return find_tool("nvcc") is not None and find_tool("cuobjdump") is not None


_FUNCTION_PROPERTIES = re.compile(r"Function properties for (\S+)")
_COMPILING = re.compile(r"Compiling entry function '([^']+)'")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")
_BARRIERS = re.compile(r"used (\d+) barriers")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_ptxas(output: str) -> dict[str, ResourceUsage]:
    """Return kernel name -> resource usage from ptxas's verbose output."""
    result: dict[str, ResourceUsage] = {}
    current: str | None = None
    stack = (0, 0, 0)
    for line in output.splitlines():
        match = _COMPILING.search(line) or _FUNCTION_PROPERTIES.search(line)
        if match:
            if match.group(1) != current:
                stack = (0, 0, 0)
            current = match.group(1)
            continue
        stack_match = _STACK.search(line)
        if stack_match:
            stack = (int(stack_match[1]), int(stack_match[2]), int(stack_match[3]))
            continue
        used = _USED.search(line)
        if used and current is not None:
            smem, cmem, barriers = _SMEM.search(line), _CMEM.search(line), _BARRIERS.search(line)
            result[current] = ResourceUsage(
                registers=int(used[1]),
                shared_bytes=int(smem[1]) if smem else 0,
                constant_bytes=int(cmem[1]) if cmem else 0,
                stack_frame_bytes=stack[0],
                spill_store_bytes=stack[1],
                spill_load_bytes=stack[2],
                barriers=int(barriers[1]) if barriers else 0,
            )
    return result


def compile_cuda(source: str, arch: str, *, filename: str = "kernel.cu") -> Compiled:
    """Return the SASS and resource usage of CUDA `source` compiled for `arch` (e.g. sm_90).

    Raises AnalyzerError with nvcc's output verbatim when compilation fails.
    """
    key = (hashlib.sha256(source.encode()).hexdigest(), arch)
    if key in _CACHE:
        return _CACHE[key]
    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise AnalyzerError(NVCC_MISSING)
    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        raise AnalyzerError(CUOBJDUMP_MISSING)
    with tempfile.TemporaryDirectory(prefix="parasim-analyze-") as folder:
        source_path = Path(folder) / Path(filename).name
        if source_path.suffix != ".cu":
            source_path = source_path.with_suffix(".cu")
        source_path.write_text(source)
        cubin = Path(folder) / "kernel.cubin"
        built = subprocess.run(
            [nvcc, "-cubin", f"-arch={arch}", "-Xptxas", "-v", "-o", str(cubin), str(source_path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        output = (built.stdout + built.stderr).strip()
        if built.returncode != 0:
            raise AnalyzerError(
                COMPILER_FAILED.format(arch=arch, code=built.returncode, output=output)
            )
        environment = dict(os.environ)
        tool_dirs = [str(Path(cuobjdump).parent)]
        nvdisasm = find_tool("nvdisasm")
        if nvdisasm:
            tool_dirs.append(str(Path(nvdisasm).parent))
        environment["PATH"] = os.pathsep.join([*tool_dirs, environment.get("PATH", "")])
        dumped = subprocess.run(
            [cuobjdump, "-sass", str(cubin)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env=environment,
        )
        if dumped.returncode != 0:
            raise AnalyzerError(
                DISASSEMBLER_FAILED.format(
                    code=dumped.returncode, output=(dumped.stdout + dumped.stderr).strip()
                )
            )
    compiled = Compiled(
        arch=arch, sass=dumped.stdout, resources=parse_ptxas(output), ptxas_output=output
    )
    _CACHE[key] = compiled
    return compiled
