"""The stages of ingest and disclose, one module each; the controller calls them in order.

Ingest: :mod:`~disclosure.core.pipeline.ingest` (memories from what the caller passed, private spans
removed, secrets redacted, entities and summaries added) -> the tiered store ->
:mod:`~disclosure.core.pipeline.caches` invalidated, :mod:`~disclosure.core.pipeline.participants`
told the new speakers.

Disclose: the analyzer's level -> :mod:`~disclosure.core.pipeline.budget` (the adaptive budget and
its learned :mod:`~disclosure.core.pipeline.usemodel`) -> :mod:`~disclosure.core.pipeline.gather`
(the tiers searched concurrently, then :mod:`~disclosure.core.pipeline.fusion`) ->
:mod:`~disclosure.core.pipeline.expansion` (which hits read beyond an index line) ->
:mod:`~disclosure.core.pipeline.compose` (the render items, the formatter, the result).

After the reply: :mod:`~disclosure.core.pipeline.feedback` (what the reply used) -> the budget.

A :class:`~disclosure.core.pipeline.trace.Trace` goes along each disclosure and collects the stages'
timings and warnings for the result.
"""
