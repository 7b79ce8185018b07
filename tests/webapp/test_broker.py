"""The embedded broker never hands a consumer a message file that is still being written."""

from __future__ import annotations

import threading
from pathlib import Path
from queue import Empty

from kombu import Connection
from kombu.transport import TRANSPORT_ALIASES, resolve_transport

from webapp import broker


def connection(folder: Path) -> Connection:
    return Connection(
        "filesystem://",
        transport_options={
            "data_folder_in": str(folder),
            "data_folder_out": str(folder),
            "control_folder": str(folder / "control"),
        },
    )


def test_filesystem_urls_get_the_atomic_transport() -> None:
    assert TRANSPORT_ALIASES["filesystem"] == "webapp.broker:Transport"
    assert resolve_transport("filesystem") is broker.Transport


def test_a_file_being_written_is_invisible_to_consumers(tmp_path: Path) -> None:
    channel = connection(tmp_path).default_channel
    (tmp_path / f"1_{'0' * 8}.default.msg{broker.PARTIAL_SUFFIX}").write_bytes(b"")
    try:
        channel._get("default")
    except Empty:
        pass
    else:  # pragma: no cover - the assertion below explains
        raise AssertionError("a partial file was consumed")


def test_messages_survive_a_producer_and_a_consumer_racing(tmp_path: Path) -> None:
    """kombu's own transport tears reads here (1 run in 5 on a 2-core machine)."""
    count = 400
    producer = connection(tmp_path).default_channel
    consumer = connection(tmp_path).default_channel
    received: list[object] = []
    errors: list[BaseException] = []

    def consume() -> None:
        while len(received) < count and not errors:
            try:
                received.append(consumer._get("default"))
            except Empty:
                continue
            except BaseException as error:  # a torn read
                errors.append(error)

    thread = threading.Thread(target=consume)
    thread.start()
    for index in range(count):
        producer._put("default", {"index": index, "padding": "x" * 20_000})
    thread.join(timeout=60)
    assert not errors
    assert sorted(m["index"] for m in received) == list(range(count))  # type: ignore[index]
    assert not list(tmp_path.glob(f"*{broker.PARTIAL_SUFFIX}"))
