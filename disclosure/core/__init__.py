"""The core: one namespace's memory, and how a query becomes context.

:mod:`~disclosure.core.controller` holds :class:`DisclosureController`, on top of the stages in
:mod:`~disclosure.core.pipeline` (ingest; gather, rank, fuse, expand, compose and pack to the
budget; feedback after the reply). :mod:`~disclosure.core.result` is what ``disclose`` returns,
:mod:`~disclosure.core.records` what the mem0-style calls return, and
:mod:`~disclosure.core.profiles` the profile that configures it all (with
:mod:`~disclosure.core.profile_sections`: the sections that the rooms above the core read).

Beside them: :mod:`~disclosure.core.empty` (answers for a namespace nothing was ever written to),
:mod:`~disclosure.core.citation_styles` (inline, footnote or reference citations),
:mod:`~disclosure.core.workflow` (search -> timeline -> details over one controller, which the
MCP server, the HTTP API and the clients share) and :mod:`~disclosure.core.transfer` (export
and import of a namespace, with :mod:`~disclosure.core.transfer_summaries`).

Nothing is imported here, so that importing one module of the core loads only what it needs.
"""
