"""The embedded default broker: kombu's filesystem transport, with atomic message files.

kombu's filesystem transport writes a message straight into its final file name, and a
consumer may rename and read that file before the producer has written it: the consumer
then parses an empty or partial file, and the worker stops with "Unrecoverable error:
JSONDecodeError" (seen in this project's browser tests). Here a message is written under a
name consumers ignore and renamed into place, which is atomic on one filesystem. Importing
this module points kombu's "filesystem" alias at this transport, so `filesystem://` in
CELERY_BROKER_URL gets it in the web process and in every worker alike.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

# Consumers take files named "<time>_<uuid>.<queue>.msg"; this suffix keeps a file being
# written out of their sight.
PARTIAL_SUFFIX = ".part"


class Channel(filesystem.Channel):
    """A filesystem channel whose messages appear in the queue folder whole or not at all."""

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Put `payload` onto `queue`: write it beside the queue, then rename it into place."""
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + PARTIAL_SUFFIX
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    """kombu's filesystem transport with the atomic channel above."""

    Channel = Channel


TRANSPORT_ALIASES["filesystem"] = f"{__name__}:Transport"
