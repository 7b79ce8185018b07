"""The command line's side of its pool (simulator.sandbox.pool): which daemon serves this
checkout and entry (`socket_path`, named by `pool_key`), and a served run's request
(`served_run`, `encode_request`), with what a sandbox child is made of that the name depends
on (`PROJECT_ROOT`, `DEFAULT_ENTRY`, `child_environment`; simulator.sandbox.launch starts the
children).

The lightest module of the sandbox: `python -m simulator run` imports it alone before it
knows whether a daemon answers (the socket module's C part, nothing else that the
interpreter's start has not loaded: no `struct`, no `zlib`, not the pool's and the launcher's
classes, whose import every served run would pay).
"""

from __future__ import annotations

import _socket
import contextlib
import os
import stat
import sys

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy reads it)
if TYPE_CHECKING:
    from collections.abc import Sequence

# The result pipe's buffer while the child writes a run's result (fcntl F_SETPIPE_SZ, where the
# kernel grants it: up to /proc/sys/fs/pipe-max-size, 1 MiB by default, within its user's
# quota of pipe buffers), so that it writes 1 MB as it encodes it instead of waiting for its
# reader to empty 64 KiB each time; the parent reads as much at a time, and the pool's copy
# warms buffers of this size (simulator.sandbox.pool `_warm_up_reads`).
RESULT_PIPE_BYTES = 1 << 20
DEFAULT_ENTRY = "simulator.runner:run_simulation"  # a registered child entry's address
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
# glibc's malloc advises huge pages for its heap (glibc 2.35 and later; older ones ignore it),
# as the C core's allocator hook does for Python's objects (simulator/_speedups.c): a run's
# memory faults in 2 MiB at a time, not 4 KiB (the GPU example's 1,000 pairs: 66 faults, not
# 475), and so does the pool's daemon's, whose copies read results (`with_huge_pages`).
MALLOC_HUGE_PAGES = "glibc.malloc.hugetlb=1"
# A child's environment (simulator.sandbox.launch `CHILD_FLAGS` says why only this).
CHILD_ENVIRONMENT = {"PYTHONHASHSEED": "0", "GLIBC_TUNABLES": MALLOC_HUGE_PAGES}
# Operator switches the child reads before it clears its environment (not the user's).
CHILD_PASSED_THROUGH = ("PARASIM_KEEP_ON_ONE_CPU", "PARASIM_JS_TWINS")

# The child's last argument when it loads V8 while it waits for its run (simulator.sandbox.launch
# starts it so, simulator.sandbox.child reads it).
LOAD_V8_AHEAD = "v8-ahead"
# The last argument of a zygote (simulator.sandbox.zygote): prepared once, it forks a child per
# request on the socket whose descriptor it gets in place of the result pipe's.
ZYGOTE = "zygote"
POOL_SWITCH = "PARASIM_CHILD_POOL"  # "0": no pool
CONNECT_TIMEOUT_S = 2.0
MAX_SOCKET_PATH_BYTES = 107
_DIGEST_MASK = (1 << 64) - 1
# A served command line's request: its header (the body's length and the umask, two unsigned
# 32-bit numbers in network order), with its stdin, stdout and stderr (SCM_RIGHTS: C ints).
REQUEST_HEADER_BYTES = 8
REQUEST_STREAMS = 3
_C_INTS_0_1_2 = b"".join(fd.to_bytes(4, sys.byteorder) for fd in range(REQUEST_STREAMS))
DECLINED = b"declined\n"  # the served copy's answer when the command line must run itself
EXIT_SERVER_LOST = 2  # a served command line whose copy ended without a status
MSG_SERVER_LOST = (
    "error: the command line's server (simulator.sandbox.pool) ended without an answer\n"
)


def child_environment() -> dict[str, str]:
    """Return the child's environment: the fixed hash seed and the operator's switches."""
    passed = {name: os.environ[name] for name in CHILD_PASSED_THROUGH if name in os.environ}
    return {**CHILD_ENVIRONMENT, **passed}


def with_huge_pages(tunables: str | None) -> str:
    """Return glibc's tunables `tunables` (GLIBC_TUNABLES, colon-separated) with malloc's huge
    pages on (MALLOC_HUGE_PAGES) in place of any setting of them."""
    kept = [
        part
        for part in (tunables or "").split(":")
        if part and not part.startswith("glibc.malloc.hugetlb=")
    ]
    return ":".join([*kept, MALLOC_HUGE_PAGES])


def asks_for_a_child(argv: Sequence[str]) -> bool:
    """Return whether the command line `argv` asks for a sandboxed `run` (a guess from the
    words alone, made before the command line is even imported)."""
    return bool(argv) and argv[0] == "run" and not {"--no-sandbox", "-h", "--help"} & set(argv)


def pool_directory() -> str | None:
    """Return the directory of this user's pool sockets, made if missing (mode 0700), or None
    when it is not a directory of this user's that nobody else can enter."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    path = os.path.join(base, "parasim") if base else f"/tmp/parasim-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    private = stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o077
    return path if private and info.st_uid == os.geteuid() else None


def _tree_signature(root: str, into: list[str]) -> None:
    """Append (path, size, mtime) of every file under `root` that makes a child, sorted."""
    with os.scandir(root) as entries:
        for entry in sorted(entries, key=lambda item: item.name):
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    _tree_signature(entry.path, into)
            elif entry.name.endswith((".py", ".so", ".js", ".json")):
                info = entry.stat()
                into.append(f"{entry.path}:{info.st_size}:{info.st_mtime_ns}")


def pool_key(entry: str = DEFAULT_ENTRY) -> str:
    """Return a digest of what a started child is made of: the interpreter, the checkout,
    the entry, the child's environment, the simulator's files, and the installed packages
    (their directory changes whenever one is added, removed or upgraded). What the daemon
    serves a command line with (its modules) is among the simulator's files."""
    parts = [sys.executable, PROJECT_ROOT, entry, repr(sorted(child_environment().items()))]
    for directory in sys.path:
        if directory.endswith("site-packages") and os.path.isdir(directory):
            parts.append(f"{directory}:{os.stat(directory).st_mtime_ns}")
    _tree_signature(os.path.join(PROJECT_ROOT, "simulator"), parts)
    data = "\n".join(parts).encode("utf-8", "surrogateescape")
    # The hash of an int is the same in every process (the hash seed salts only str and
    # bytes): the text as a number modulo 2**61 - 1, with its length. No zlib: its import
    # loads a shared library, on every command line.
    return f"{hash((len(data), int.from_bytes(data, 'little'))) & _DIGEST_MASK:016x}"


def pool_enabled() -> bool:
    """Return whether the command line may use the pool (PARASIM_CHILD_POOL is not 0)."""
    return os.environ.get(POOL_SWITCH, "1") != "0"


def socket_path(entry: str = DEFAULT_ENTRY) -> str | None:
    """Return the socket of the daemon for `entry` and this checkout, or None (no private
    directory, or a path too long for a Unix socket)."""
    directory = pool_directory()
    if directory is None:
        return None
    path = os.path.join(directory, f"pool-{pool_key(entry)}.sock")
    # A Unix socket's path holds at most 107 bytes; a longer one means no pool.
    return path if len(os.fsencode(served_socket(path))) <= MAX_SOCKET_PATH_BYTES else None


def served_socket(path: str) -> str:
    """Return the socket where the daemon of socket `path` serves command lines."""
    return path.removesuffix(".sock") + "-run.sock"


def served_run(argv: Sequence[str]) -> int | None:
    """Have this user's daemon serve the command line `argv` when it asks for a sandboxed
    `run`; return its exit status, or None: not such a command, the pool is off, no daemon
    answers, or the daemon's copy declined (the command line then runs itself, which starts
    a daemon as it exits when there was none). Ctrl-C ends the served copy and its run."""
    if not asks_for_a_child(argv) or not pool_enabled():
        return None
    # `_socket`, not `socket`: the latter imports enum and selectors.
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        path = socket_path()
        if path is None:
            return None
        connection.settimeout(CONNECT_TIMEOUT_S)
        connection.connect(served_socket(path))
        umask = os.umask(0o077)
        os.umask(umask)
        body = encode_request(argv)
        streams = (_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _C_INTS_0_1_2)
        connection.sendmsg([request_header(len(body), umask)], [streams])
    except (OSError, ValueError):
        connection.close()
        return None
    try:
        connection.sendall(body)
        connection.settimeout(None)
        reply = b""
        while not reply.endswith(b"\n"):
            data = connection.recv(64)
            if not data:
                break
            reply += data
    except OSError:
        reply = b""
    finally:
        connection.close()
    if reply == DECLINED:
        return None
    try:
        return int(reply)
    except ValueError:
        sys.stderr.write(MSG_SERVER_LOST)
        return EXIT_SERVER_LOST


def encode_request(argv: Sequence[str]) -> bytes:
    """Return what a served command line sends besides its umask and streams: its working
    directory, its standard streams' encodings, `argv` and its environment, NUL-separated
    (no argument, path or variable holds a NUL; undecodable bytes pass as they came)."""
    fields = [os.getcwd()]
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        fields.append(getattr(stream, "encoding", None) or "utf-8")
        fields.append(getattr(stream, "errors", None) or "strict")
        fields.append("1" if getattr(stream, "line_buffering", False) else "0")
    fields += [str(len(argv)), *argv]
    fields += [f"{name}={value}" for name, value in os.environ.items()]
    return b"\0".join(os.fsencode(field) for field in fields)


def decode_request(
    body: bytes,
) -> tuple[str, list[tuple[str, str, bool]], list[str], dict[str, str]]:
    """Return (working directory, the standard streams' (encoding, errors, line buffered),
    argv, environment) of a request made by `encode_request`."""
    fields = [os.fsdecode(field) for field in body.split(b"\0")]
    streams = [(fields[i], fields[i + 1], fields[i + 2] == "1") for i in (1, 4, 7)]
    count = int(fields[10])
    environment = dict(item.split("=", 1) for item in fields[11 + count :] if "=" in item)
    return fields[0], streams, fields[11 : 11 + count], environment


def request_header(length: int, umask: int) -> bytes:
    """Return a request's header: its body's `length` and the command line's `umask`."""
    return length.to_bytes(4, "big") + umask.to_bytes(4, "big")


def read_request_header(header: bytes) -> tuple[int, int]:
    """Return (body length, umask) of a request's header (`request_header`)."""
    return int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big")
