"""Cut the sandboxed simulation process off the network: a seccomp filter on socket creation.

A run's process needs no network: its result goes back through a pipe, V8 has no network
API, and Python models cannot import `socket`. Yet, as defence in depth, code that escaped
the restricted environment should not reach the services beside the worker (PostgreSQL and
Redis on 127.0.0.1). Every thread of the process, V8's included, gets a seccomp filter
under which `socket()` fails with EACCES for every address family but AF_UNIX, and
`io_uring_setup` (whose operations can open sockets) fails too. Sockets already open stay
usable; the child inherits none but its pipes.

A seccomp filter works wherever the process may set `no_new_privs`, root or not (the Docker
image's unprivileged `parasim` user included). A network namespace would need
CAP_SYS_ADMIN or unprivileged user namespaces (which Docker's default profile refuses), and
each run's namespace would cost the kernel its set-up and tear-down.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

__all__ = ["MSG_NO_NETWORK", "cut_off_network"]

MSG_NO_NETWORK = "cannot cut the simulation process off the network: {error}"

PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1  # every thread of the process, not only the caller
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
AF_UNIX = 1
X32_SYSCALL_BIT = 0x40000000
IO_URING_SETUP = 425  # the same number on both architectures below

# machine: (AUDIT_ARCH_*, the seccomp syscall's number, socket's number)
_ARCHITECTURES = {
    "x86_64": (0xC000003E, 317, 41),
    "aarch64": (0xC00000B7, 277, 198),
}

# Classic BPF: the instruction classes used below.
_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
# Offsets in struct seccomp_data: nr, arch, then the arguments (the low half of the first on
# a little-endian machine).
_NR, _ARCH, _FIRST_ARGUMENT = 0, 4, 16


class _Program(ctypes.Structure):
    _fields_ = [("length", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _instruction(code: int, jump_true: int, jump_false: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jump_true, jump_false, k)


def _filter(arch: int, socket_number: int) -> bytes:
    """Return the BPF program: socket() only for AF_UNIX, no io_uring, no other ABI."""
    refuse = SECCOMP_RET_ERRNO | errno.EACCES
    program = [
        _instruction(_LOAD_WORD, 0, 0, _ARCH),  # 0
        _instruction(_JUMP_EQUAL, 0, 8, arch),  # 1: another ABI (i386's socketcall): 10
        _instruction(_LOAD_WORD, 0, 0, _NR),  # 2
        _instruction(_JUMP_AT_LEAST, 6, 0, X32_SYSCALL_BIT),  # 3: the x32 ABI: 10
        _instruction(_JUMP_EQUAL, 2, 0, socket_number),  # 4: socket(): 7
        _instruction(_JUMP_EQUAL, 4, 0, IO_URING_SETUP),  # 5: 10
        _instruction(_RETURN, 0, 0, SECCOMP_RET_ALLOW),  # 6
        _instruction(_LOAD_WORD, 0, 0, _FIRST_ARGUMENT),  # 7: the address family
        _instruction(_JUMP_EQUAL, 0, 1, AF_UNIX),  # 8
        _instruction(_RETURN, 0, 0, SECCOMP_RET_ALLOW),  # 9
        _instruction(_RETURN, 0, 0, refuse),  # 10
    ]
    return b"".join(program)


def cut_off_network() -> bool:
    """Install the filter on every thread of this process; return False where it does not
    apply (not Linux, an architecture it does not know); raise OSError when it fails."""
    known = _ARCHITECTURES.get(os.uname().machine)
    if known is None or not sys.platform.startswith("linux"):
        return False
    arch, seccomp_number, socket_number = known
    libc = ctypes.CDLL(None, use_errno=True)
    # Required to install a filter without CAP_SYS_ADMIN; the threads get it with the filter.
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(code)}")
    code_bytes = _filter(arch, socket_number)
    buffer = ctypes.create_string_buffer(code_bytes, len(code_bytes))
    program = _Program(len(code_bytes) // 8, ctypes.addressof(buffer))
    answer = libc.syscall(
        seccomp_number,
        SECCOMP_SET_MODE_FILTER,
        SECCOMP_FILTER_FLAG_TSYNC,
        ctypes.byref(program),
    )
    if answer != 0:  # -1 with errno, or the id of a thread that could not be synchronised
        code = ctypes.get_errno() if answer == -1 else errno.ESRCH
        raise OSError(code, f"seccomp(SECCOMP_SET_MODE_FILTER): {os.strerror(code)}")
    return True
