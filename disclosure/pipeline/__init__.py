"""The stages of ingest and disclose, one module each; the controller calls them in order.

Ingest: :mod:`~disclosure.pipeline.ingest` (memories from what the caller passed, private spans
removed, secrets redacted, entities and summaries added) -> the tiered store ->
:mod:`~disclosure.pipeline.caches` invalidated, :mod:`~disclosure.pipeline.participants` told the
new speakers.

Disclose: the analyzer's level -> :mod:`~disclosure.pipeline.budget` (the adaptive budget and
its learned :mod:`~disclosure.pipeline.usemodel`) -> :mod:`~disclosure.pipeline.gather` (the
tiers searched concurrently, then :mod:`~disclosure.pipeline.fusion`) ->
:mod:`~disclosure.pipeline.expansion` (which hits read beyond an index line) ->
:mod:`~disclosure.pipeline.compose` (the render items, the formatter, the result).

After the reply: :mod:`~disclosure.pipeline.feedback` (what the reply used) -> the budget.

A :class:`~disclosure.pipeline.trace.Trace` goes along each disclosure and collects the stages'
timings and warnings for the result.
"""
