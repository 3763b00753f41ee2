"""Child process for the lease test: claims outbox items as a replica would, reports them, and
waits to be killed (it never acknowledges them).

Usage: python tests/tiers/pg_claim_child.py DATABASE_URL NAMESPACE COUNT LEASE_SECONDS
Prints one JSON line ``{"claimed": [ids...]}`` once the claim is committed.
"""

from __future__ import annotations

import json
import sys
import time

from tiers.config import OutboxConfig
from tiers.pg_archive import PgArchive
from tiers.pg_outbox import PgOutbox


def main() -> None:
    url, namespace, count, lease = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    archive = PgArchive(url, namespace)
    box = PgOutbox(archive, OutboxConfig(lease_seconds=lease), claimer="child")
    items = box.due(count)
    print(json.dumps({"claimed": [i.id for i in items]}), flush=True)
    time.sleep(600)  # "embedding": the parent kills it here


if __name__ == "__main__":
    main()
