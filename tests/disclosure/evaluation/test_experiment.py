"""Experiment files: the shipped ones validate; mistakes name file, path and reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzers import DisclosureLevel
from disclosure.evaluation import Experiment, load_experiment, validate_experiment
from disclosure.evaluation.experiment import LOCOMO_ENV, DatasetSpec, default_locomo_path
from tiers.errors import DatasetError, ExperimentError, ProfileError

REPO = Path(__file__).resolve().parents[3]
EXPERIMENTS = sorted((REPO / "configs" / "ab").glob("*.yaml"))


def write(tmp_path: Path, text: str, name: str = "x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.name)
def test_every_shipped_experiment_validates(path: Path) -> None:
    """Each configs/ab/*.yaml loads as an Experiment named after its file."""
    experiment = load_experiment(path)
    assert experiment.name == path.stem
    assert experiment.system_labels()


def test_locomo_dev_compares_profiles_among_all_baselines_at_two_budgets() -> None:
    """locomo-dev: default first and the reference, every baseline at 1,000 and 2,000, cats 1-4."""
    experiment = load_experiment(REPO / "configs" / "ab" / "locomo-dev.yaml")
    assert experiment.profiles[0].profile == "default"
    assert experiment.reference_label == "default"
    assert experiment.baselines == ("full", "recency", "bm25", "dense", "hybrid")
    assert experiment.budgets == (1000, 2000)
    assert experiment.dataset.resolved_categories() == (1, 2, 3, 4)
    assert experiment.dataset.path is None  # read by path from outside the repository
    assert "baseline:hybrid@2000" in experiment.system_labels()


def test_the_tiny_experiment_points_at_the_test_fixture() -> None:
    """A relative dataset path resolves against the experiment file, to the test fixture."""
    experiment = load_experiment(REPO / "configs" / "ab" / "tiny.yaml")
    assert experiment.dataset.path is not None
    assert experiment.dataset.path.resolve().name == "locomo_tiny.json"
    assert experiment.dataset.path.resolve().is_file()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("baselines: [bm25]\nbudgets: [100]\ncolour: red\n", "x.yaml: colour: unknown key"),
        (
            "baselines: [bm25]\ndataset: {format: csv}\n",
            "x.yaml: dataset -> format: Input should be",
        ),
        ("baselines: [tfidf]\n", "unknown baseline 'tfidf'; available: bm25, dense, full"),
        (
            "baselines: [bm25]\nbudgets: [0]\n",
            "x.yaml: budgets: must be positive token counts, got [0]",
        ),
        ("baselines: [bm25]\nbudgets: []\n", "budgeted baselines need at least one budget"),
        ("budgets: [100]\n", "name at least one profile or baseline"),
        (
            "baselines: [bm25]\nreference: nobody\n",
            "reference: 'nobody' is none of baseline:bm25@1000",
        ),
        ("profiles: [{profile: default, level: huge}]\n", "profiles -> 0 -> level:"),
        ("profiles: [default, default]\n", "two systems share the label 'default'"),
        ("baselines: [bm25]\nbootstrap: {resamples: 5}\n", "bootstrap -> resamples"),
        ("baselines: [bm25]\ndataset: {limit_questions: 0}\n", "dataset -> limit_questions"),
        ("- a list\n", "an experiment must be a mapping"),
        ("baselines: [bm25\n", "x.yaml: line 2, column 1"),
    ],
)
def test_mistakes_name_the_file_the_path_and_the_reason(
    tmp_path: Path, text: str, needle: str
) -> None:
    """An ExperimentError (a ProfileError, a ValueError) with file, path inside and reason."""
    with pytest.raises(ExperimentError) as caught:
        load_experiment(write(tmp_path, text))
    assert needle in str(caught.value)
    assert isinstance(caught.value, ProfileError | ValueError)


def test_labels_budgets_and_all_baselines() -> None:
    """'all' expands to five baselines; full is unbudgeted; profile labels carry fixed levels."""
    experiment = validate_experiment(
        {
            "profiles": ["chat", {"profile": "default", "level": "Detailed", "budget": 900}],
            "baselines": ["all"],
            "budgets": [2000, 1000, 1000],
        }
    )
    assert experiment.budgets == (1000, 2000)
    assert experiment.profiles[1].level is DisclosureLevel.DETAILED
    labels = experiment.system_labels()
    assert labels[:2] == ["chat", "default@detailed@900"]
    assert labels[2] == "baseline:full"
    assert labels.count("baseline:full") == 1
    assert len(labels) == 2 + 1 + 4 * 2
    assert experiment.reference_label == "chat"


def test_the_locomo_path_defaults_to_the_environment_then_beside_the_repo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """$DISCLOSURE_LOCOMO wins over the default; a given path wins over both; jsonl needs one."""
    monkeypatch.setenv(LOCOMO_ENV, str(tmp_path / "mine.json"))
    assert DatasetSpec().resolved_path() == tmp_path / "mine.json"
    assert DatasetSpec(path=Path("given.json")).resolved_path() == Path("given.json")
    monkeypatch.delenv(LOCOMO_ENV)
    assert DatasetSpec().resolved_path() == default_locomo_path()
    assert default_locomo_path().parts[-4:] == ("shared", "datasets", "locomo", "locomo_dev.json")
    with pytest.raises(DatasetError, match="a jsonl dataset needs a path"):
        DatasetSpec(format="jsonl").resolved_path()


def test_categories_all_means_every_category() -> None:
    """'all' asks every category; no categories means LoCoMo's 1-4 (jsonl: all)."""
    assert DatasetSpec(categories="all").resolved_categories() is None
    assert DatasetSpec().resolved_categories() == (1, 2, 3, 4)
    assert DatasetSpec(format="jsonl").resolved_categories() is None
    assert isinstance(Experiment(baselines=("bm25",)), Experiment)
