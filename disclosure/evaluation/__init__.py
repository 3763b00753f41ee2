"""A/B evaluation: datasets, baselines, the runner, metrics, paired statistics and reports."""

from disclosure.evaluation.dataset import Conversation, Dataset, DatasetIssue, Question
from disclosure.evaluation.jsonl import load_jsonl
from disclosure.evaluation.locomo import LOCOMO_CATEGORIES, load_locomo

__all__ = [
    "LOCOMO_CATEGORIES",
    "Conversation",
    "Dataset",
    "DatasetIssue",
    "Question",
    "load_jsonl",
    "load_locomo",
]
