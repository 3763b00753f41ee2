"""A/B evaluation: datasets, baselines, the runner, metrics, paired statistics and reports."""

from disclosure.evaluation.dataset import Conversation, Dataset, DatasetIssue, Question
from disclosure.evaluation.jsonl import load_jsonl
from disclosure.evaluation.locomo import LOCOMO_CATEGORIES, load_locomo
from disclosure.evaluation.metrics import (
    QuestionRecord,
    Summary,
    collapse_whitespace,
    evidence_found,
    score_result,
    summarize,
)
from disclosure.evaluation.stats import (
    Comparison,
    Interval,
    bootstrap_mean,
    compare,
    mcnemar_exact,
)

__all__ = [
    "LOCOMO_CATEGORIES",
    "Comparison",
    "Conversation",
    "Dataset",
    "DatasetIssue",
    "Interval",
    "Question",
    "QuestionRecord",
    "Summary",
    "bootstrap_mean",
    "collapse_whitespace",
    "compare",
    "evidence_found",
    "load_jsonl",
    "load_locomo",
    "mcnemar_exact",
    "score_result",
    "summarize",
]
