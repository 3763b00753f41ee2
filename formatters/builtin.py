"""The built-in formatters, one default-configured instance each, as the registry names them.

The registry imports this module lazily (``formatters.builtin:<name>``). Use
:func:`formatters.get_formatter` to get one configured with a profile's ``formatting`` options.

==========================  =====================================================================
name                        how items read
==========================  =====================================================================
``summary_only``            minimal: one line per memory, index items as summaries
``summary_with_entities``   standard: as above, summaries followed by key entities
``full_content``            detailed: every item's full content
``full_with_context``       comprehensive: full content, neighbours in full, metadata
``timeline``                the timeline layer: times on every line, the hit marked ``→``
``index``                   the index layer: a table of index items, sections for expanded ones
``detail``                  the detail layer: a block per item: content, metadata, relations
``json``                    a JSON array, one object per item
==========================  =====================================================================

The first five read chronologically under one date header per day; ``index``,
``detail`` and ``json`` keep the controller's priority order.
"""

from __future__ import annotations

from formatters.blocks import Detail, IndexTable
from formatters.chronological import (
    FullContent,
    FullWithContext,
    SummaryOnly,
    SummaryWithEntities,
    Timeline,
)
from formatters.jsonfmt import Json

summary_only = SummaryOnly()
summary_with_entities = SummaryWithEntities()
full_content = FullContent()
full_with_context = FullWithContext()
timeline = Timeline()
index = IndexTable()
detail = Detail()
json = Json()
