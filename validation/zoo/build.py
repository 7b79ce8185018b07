"""Build the analyzer's inputs of the zoo with nvcc (`python -m validation.zoo sass`): the SASS
and resource usage of zoo.cu for sm_90 and the configuration lists of both programs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
REPO_ROOT = HERE.parents[1]
NVCC_FLAGS = ("-O3", "-std=c++17", "-arch=sm_90")
BUILD_ERRORS = {
    "no_nvcc": "nvcc is not on PATH: the zoo cannot be compiled here",
    "no_cuobjdump": "cuobjdump is neither on PATH, beside nvcc, nor in the virtualenv's nvidia package",
}


def nvcc() -> str:
    """Return nvcc's path."""
    found = shutil.which(os.environ.get("NVCC", "nvcc"))
    if found is None:
        raise FileNotFoundError(BUILD_ERRORS["no_nvcc"])
    return found


def cuobjdump() -> str:
    """Return cuobjdump's path (PATH, beside nvcc, or the pip package nvidia-cuda-cuobjdump)."""
    candidates = [shutil.which("cuobjdump"), str(Path(nvcc()).parent / "cuobjdump")]
    candidates += [
        str(p)
        for p in (REPO_ROOT / ".venv" / "lib").glob(
            "python3*/site-packages/nvidia/cu*/bin/cuobjdump"
        )
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    raise FileNotFoundError(BUILD_ERRORS["no_cuobjdump"])


def compile_zoo(out_dir: Path) -> tuple[str, str]:
    """Compile zoo.cu to a cubin for sm_90 in `out_dir`; return its SASS (the fill kernels left
    out) and `cuobjdump -res-usage`."""
    cubin = out_dir / "zoo.cubin"
    subprocess.run(
        [nvcc(), "-cubin", *NVCC_FLAGS, "-o", str(cubin), str(HERE / "zoo.cu")],
        check=True,
        capture_output=True,
        text=True,
    )
    sass = subprocess.run(
        [cuobjdump(), "-sass", str(cubin)], check=True, capture_output=True, text=True
    ).stdout
    res = subprocess.run(
        [cuobjdump(), "-res-usage", str(cubin)], check=True, capture_output=True, text=True
    ).stdout
    return drop_functions(sass, "fill_"), res


def drop_functions(sass: str, marker: str) -> str:
    """Return the SASS without the functions whose name contains `marker` (the data fillers)."""
    parts = re.split(r"(?=\n\t\tFunction : )", sass)
    return "".join(p for p in parts if not re.match(rf"\n\t\tFunction : \S*{re.escape(marker)}", p))


def cublas_flags() -> list[str]:
    """Return nvcc's flags for a cuBLAS outside the CUDA toolkit: CUBLAS_HOME names a folder with
    include/ and lib/ (e.g. the pip package nvidia-cublas's nvidia/cu13)."""
    home = os.environ.get("CUBLAS_HOME")
    if not home:
        return []
    lib = Path(home) / "lib"
    return [f"-I{Path(home) / 'include'}", f"-L{lib}", "-Xlinker", f"-rpath={lib}"]


def list_configs(binary: Path) -> str:
    """Return `binary --list` (runs on a machine without a GPU: it makes no CUDA call)."""
    return subprocess.run(
        [str(binary), "--list"], check=True, capture_output=True, text=True
    ).stdout


def build_kernels() -> None:
    """Write kernels/zoo.sass, zoo.res and configs.csv (the cuBLAS list needs cuBLAS headers:
    without them the committed cuBLAS rows are kept)."""
    KERNELS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        sass, res = compile_zoo(out)
        binary = out / "zoo"
        subprocess.run(
            [nvcc(), *NVCC_FLAGS, "-o", str(binary), str(HERE / "zoo.cu")],
            check=True,
            capture_output=True,
            text=True,
        )
        configs = list_configs(binary)
        lib = out / "zoo_cublas"
        built = subprocess.run(
            [
                nvcc(),
                *NVCC_FLAGS,
                *cublas_flags(),
                "-o",
                str(lib),
                str(HERE / "zoo_cublas.cu"),
                "-lcublas",
                "-lcublasLt",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if built.returncode == 0:
            configs += list_configs(lib)
        else:
            old = (KERNELS / "configs.csv").read_text(encoding="utf-8").splitlines(keepends=True)
            configs += "".join(line for line in old if ",cublas_" in line)
    (KERNELS / "zoo.sass").write_text(sass, encoding="utf-8")
    (KERNELS / "zoo.res").write_text(res, encoding="utf-8")
    (KERNELS / "configs.csv").write_text(configs, encoding="utf-8")
    version = subprocess.run(
        [nvcc(), "--version"], capture_output=True, text=True, check=True
    ).stdout
    (KERNELS / "README.md").write_text(
        "# The zoo's analyzer inputs\n\nWritten by `python -m validation.zoo sass` (do not edit): "
        f"`nvcc -cubin {' '.join(NVCC_FLAGS)} validation/zoo/zoo.cu`, then `cuobjdump -sass` (the "
        "data-filling kernels left out) and `cuobjdump -res-usage`; `configs.csv` is `zoo --list` "
        "followed by `zoo_cublas --list`.\n\nnvcc: " + version.strip().splitlines()[-1] + "\n",
        encoding="utf-8",
    )
