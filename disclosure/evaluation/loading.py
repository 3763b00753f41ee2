"""Load the dataset an experiment names, then select its categories and question sample."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from disclosure.evaluation.dataset import Dataset
from disclosure.evaluation.experiment import DATASET_ENV, DatasetSpec
from disclosure.evaluation.jsonl import load_jsonl
from disclosure.evaluation.locomo import load_locomo
from disclosure.evaluation.longmemeval import load_longmemeval
from tiers.errors import DatasetError
from tiers.registry import Registry

#: The dataset readers by format (an experiment's ``dataset.format``).
_READERS: Registry[Callable[[Path], Dataset]] = Registry("dataset format")
_READERS.register("locomo", load_locomo)
_READERS.register("longmemeval", load_longmemeval)
_READERS.register("jsonl", load_jsonl)

log = logging.getLogger(__name__)


def load_dataset(spec: DatasetSpec, *, seed: int = 0) -> Dataset:
    """The questions ``spec`` asks for (categories, then a seeded sample of the limit)."""
    path = spec.resolved_path()
    if not path.exists():
        variable = DATASET_ENV.get(spec.format)
        hint = f" (set {variable} or give --dataset)" if variable else ""
        raise DatasetError(f"{path}: no such dataset{hint}")
    dataset = _READERS.get(spec.format)(path)
    for issue in dataset.issues:
        log.info("dataset: %s", issue)
    selected = dataset.select(
        categories=spec.resolved_categories(), limit=spec.limit_questions, seed=seed
    )
    if not selected.questions:
        raise DatasetError(
            f"{path}: no questions in categories {list(spec.resolved_categories() or [])}; "
            f"the dataset has {', '.join(dataset.categories()) or 'no questions'}"
        )
    return selected
