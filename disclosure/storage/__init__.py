"""What a namespace keeps beside the tiers' memories, and where.

:mod:`~disclosure.storage.namespaces` gives every namespace (tenant, user, conversation) a data
directory of its own under the root. In it, beside the tiered store:
:mod:`~disclosure.storage.sidetables` (where the citation log, the summaries and the
participants keep rows: a SQLite file, or the namespace's PostgreSQL schema),
:mod:`~disclosure.storage.citation_usage` (the citation log: which replies used which
memories), :mod:`~disclosure.storage.scan_verdicts` (the injection scan's clean verdicts, so a
text is scanned once) and :mod:`~disclosure.storage.sidefiles` (damaged caches and histories
set aside and rebuilt).

Nothing is imported here; this room imports nothing of :mod:`disclosure` above it.
"""
