"""The sandbox child's messages to its parent, and the names both sides agree on.

Light on purpose: the command line's parent side imports it before the run, and orjson
(whose import loads dataclasses, uuid and enum) is imported only when a
message is large enough for its speed to matter, or when a result is encoded. The child
imports orjson ahead of its run (simulator.sandbox.child PRELOAD_MODULES).
"""

from __future__ import annotations

import json
import signal
import struct

# `typing.TYPE_CHECKING` without importing `typing` (mypy reads the name alone).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

# The file name user code is compiled under (simulator.sandbox.restricted), which names the
# model's frames in the crash dumps the parent reads (simulator.sandbox.parent.crash_line).
DEFAULT_FILENAME = "<application model>"

# A zygote's answer to a fork request: the child's process id, or -1.
FORK_REPLY = struct.Struct("!i")

# The parent sends it at the wall-clock limit: faulthandler writes the Python stack (so the
# parent can name the model's line) and the process goes on until the parent kills it.
WALL_DUMP_SIGNAL = signal.SIGUSR1

# A message at least this long is decoded by orjson (a result); shorter ones (progress, an
# error) by `json`, already loaded. Both give the same values.
LARGE_MESSAGE_BYTES = 64 * 1024

# The items of a result's list encoded at a time when the child sends a result in pieces
# (`result_message_pieces`): about 70 KB of timeline entries, a pipe buffer's worth.
RESULT_PIECE_ITEMS = 1000


# How the child ends a message it could not finish (a part of a result that failed to
# encode after others were written): a NUL, which no JSON text holds outside a string, and
# the newline. The parent skips such a line; the child's error follows it.
ABANDONED = b"\0\n"


def encode_json(value: object) -> bytes:
    """Return `value` as compact JSON (UTF-8). orjson writes it in a fraction of the time of
    `json.dumps(separators=(",", ":"))`, which matters for a large result; what it
    refuses (integers over 64 bits, keys that are not strings) goes through `json`. A NaN or
    an infinity becomes null (`json` would write invalid JSON). The message `{"result": r}`
    is `{"result":` + `encode_json(r)` + `}`, which the command line writes out unparsed
    (simulator.sandbox.parent.RawResult)."""
    import orjson

    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":")).encode("utf-8")


def encode_message(message: dict[str, Any]) -> bytes:
    """Return one message of the result pipe: a line of JSON (`encode_json`)."""
    return encode_json(message) + b"\n"


def result_message_pieces(result: dict[str, Any]) -> Iterator[bytes | memoryview]:
    """Yield the bytes of `encode_message({"result": result})` in pieces, so that the child
    writes the first while it encodes the next and its reader reads them meanwhile, and no
    buffer holds the whole message twice (bench/RESULTS.md, the "large result" rows of
    bench_userpath.py's table).
    A list of more than RESULT_PIECE_ITEMS items (the timeline) is encoded in slices of as
    many, joined as orjson joins a list's items; any other value whole. Each piece goes
    through `encode_json`, so a value that orjson refuses is still written (by `json`).
    A slice's piece is a view of what orjson wrote, its brackets left out, and the small
    pieces between them are pieces of their own: the writer gathers them (`os.writev`), so no
    byte of the result is copied on its way to the pipe."""
    yield b'{"result":{'
    separator = b""
    for key, value in result.items():
        head = separator + encode_json(key) + b":"
        separator = b","
        if not isinstance(value, list) or len(value) <= RESULT_PIECE_ITEMS:
            yield head
            yield encode_json(value)
            continue
        yield head + b"["
        for start in range(0, len(value), RESULT_PIECE_ITEMS):
            # "[a,b]" without its brackets; slices after the first follow a comma
            if start:
                yield b","
            yield memoryview(encode_json(value[start : start + RESULT_PIECE_ITEMS]))[1:-1]
        yield b"]"
    yield b"}}\n"


def decode_message(line: bytes | memoryview) -> Any:
    """Return the message of one line of the result pipe (ValueError: not JSON)."""
    if len(line) < LARGE_MESSAGE_BYTES:
        return json.loads(bytes(line))
    import orjson

    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(bytes(line))  # e.g. NaN, which only `json` reads
