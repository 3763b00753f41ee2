"""A/B evaluation: datasets, baselines, the runner, metrics, paired statistics and reports.

``disclosure eval`` drives it from the command line; in Python::

    from disclosure.evaluation import (
        build_report, experiment_systems, load_experiment, load_dataset, run_experiment,
        write_report,
    )

    experiment = load_experiment("configs/ab/locomo-dev.yaml")
    dataset = load_dataset(experiment.dataset, seed=experiment.seed)
    run = run_experiment(experiment, dataset, experiment_systems(experiment))
    write_report(build_report(run), Path("results/locomo-dev"))

Beyond A/B/n: a profile may run with a simulated reader whose replies go back through
``feedback`` (``reader: cite-gold``) and with its budget learning on or off (``adaptive``): the
report then compares them (``configs/ab/adaptive-budget.yaml``); ``oracle: true`` runs each
profile at every fixed level and reports the analyzer against each question's oracle level
(``configs/ab/analyzer-oracle.yaml``); ``match_tokens`` runs the baselines at a profile's mean
tokens.
"""

from disclosure.evaluation.adaptive import adaptive_pairs
from disclosure.evaluation.baselines import BASELINES, Baseline, make_baseline, render_turn
from disclosure.evaluation.dataset import Conversation, Dataset, DatasetIssue, Question
from disclosure.evaluation.experiment import (
    BootstrapSpec,
    DatasetSpec,
    Experiment,
    ProfileSpec,
    load_experiment,
    validate_experiment,
)
from disclosure.evaluation.jsonl import load_jsonl
from disclosure.evaluation.loading import load_dataset
from disclosure.evaluation.locomo import LOCOMO_CATEGORIES, load_locomo
from disclosure.evaluation.longmemeval import load_longmemeval
from disclosure.evaluation.metrics import (
    QuestionRecord,
    Summary,
    collapse_whitespace,
    evidence_found,
    score_result,
    summarize,
)
from disclosure.evaluation.oracle import best_level, oracle_level
from disclosure.evaluation.reader import READERS, Reader, cite_gold, get_reader
from disclosure.evaluation.report import Report, build_report, write_report
from disclosure.evaluation.runner import (
    Discloser,
    RunResult,
    System,
    baseline_systems,
    experiment_systems,
    run_experiment,
)
from disclosure.evaluation.stats import (
    Comparison,
    Interval,
    bootstrap_mean,
    compare,
    mcnemar_exact,
)

__all__ = [
    "BASELINES",
    "LOCOMO_CATEGORIES",
    "READERS",
    "Baseline",
    "BootstrapSpec",
    "Comparison",
    "Conversation",
    "Dataset",
    "DatasetIssue",
    "DatasetSpec",
    "Discloser",
    "Experiment",
    "Interval",
    "ProfileSpec",
    "Question",
    "QuestionRecord",
    "Reader",
    "Report",
    "RunResult",
    "Summary",
    "System",
    "adaptive_pairs",
    "baseline_systems",
    "best_level",
    "bootstrap_mean",
    "build_report",
    "cite_gold",
    "collapse_whitespace",
    "compare",
    "evidence_found",
    "experiment_systems",
    "get_reader",
    "load_dataset",
    "load_experiment",
    "load_jsonl",
    "load_locomo",
    "load_longmemeval",
    "make_baseline",
    "mcnemar_exact",
    "oracle_level",
    "render_turn",
    "run_experiment",
    "score_result",
    "summarize",
    "validate_experiment",
    "write_report",
]
