"""Pointing a profile's warm tier at a Chroma server: ``--chroma-url`` and its variable.

``disclosure serve --chroma-url http://HOST:PORT`` (any store command takes it), the variable
``TIERED_DISCLOSURE_CHROMA_URL``, or the profile's own ``tiers.warm`` settings (``backend:
server``, ``host``, ``port``, ``ssl``) put every namespace's vectors on that server, one
collection per namespace (see :mod:`tiers.warm_layout`). The option wins over the variable,
the variable over the profile. The :class:`~disclosure.service.pool.ControllerPool` (hence the HTTP
service, the local service and the CLI) reads the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from disclosure.core.profiles import Profile
from tiers.config import WarmConfig
from tiers.warm_layout import parse_chroma_url

CHROMA_URL_VARIABLE = "TIERED_DISCLOSURE_CHROMA_URL"

__all__ = ["CHROMA_URL_VARIABLE", "chroma_url_of", "drop_server_vectors", "with_chroma_url"]


def chroma_url_of(given: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """The Chroma server to use: ``given``, else ``$TIERED_DISCLOSURE_CHROMA_URL``, else None."""
    if given:
        return given
    value = (os.environ if environ is None else environ).get(CHROMA_URL_VARIABLE, "").strip()
    return value or None


def with_chroma_url(profile: Profile, url: str | None) -> Profile:
    """``profile`` with its warm tier on the Chroma server at ``url`` (unchanged if None)."""
    if not url:
        return profile
    warm = WarmConfig.model_validate({**profile.tiers.warm.model_dump(), **parse_chroma_url(url)})
    tiers = profile.tiers.model_copy(update={"warm": warm})
    return profile.model_copy(update={"tiers": tiers})


def drop_server_vectors(profile: Profile, data_dir: Path) -> bool:
    """Delete the Chroma server collection of ``data_dir``'s namespace (a namespace being
    removed: its directory goes, and its vectors must not stay on the server); True if there
    was one. Nothing to do in embedded mode (the vectors are inside the directory)."""
    if profile.tiers.warm.backend != "server":
        return False
    from tiers.warm import WarmTier
    from tiers.warm_layout import server_config

    return WarmTier.drop(None, server_config(profile.tiers.warm, data_dir))
