"""The simulated reader, the oracle level and the adaptive-budget pairing, on hand-made cases."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analyzers import DisclosureLevel, QueryAnalysis
from disclosure.core.profiles import load_profile
from disclosure.core.result import DisclosedItem, DisclosureResult
from disclosure.evaluation import (
    Dataset,
    Question,
    QuestionRecord,
    System,
    best_level,
    cite_gold,
    get_reader,
    oracle_level,
    validate_experiment,
)
from disclosure.evaluation.adaptive import adaptive_section, fixed_factor_frontier, positions
from disclosure.evaluation.metrics import packing_depths
from disclosure.evaluation.oracle import oracle_section
from disclosure.evaluation.reader import NOTHING, PREAMBLE
from disclosure.evaluation.runner import RunResult, with_adaptive
from formatters.base import Layer
from tiers.errors import ExperimentError, RegistryError

MIN, STD, DET, COMP = DisclosureLevel


def result(*items: tuple[str, str]) -> DisclosureResult:
    return DisclosureResult(
        text="...",
        items=tuple(
            DisclosedItem(id=i, citation=c, tier="cold", layer=Layer.DETAIL, score=1.0, tokens=5)
            for i, c in items
        ),
        level=STD,
        analysis=QueryAnalysis(query="q", level=STD),
        budget=100,
        tokens_used=50,
        full_history_tokens=1000,
    )


def question(qid: str = "c/q1", *evidence: str, category: str = "single-hop") -> Question:
    return Question(id=qid, conversation_id="c", text="?", evidence=evidence, category=category)


def rec(
    system: str, qid: str, *, found: int, gold: int = 1, tokens: int, level: str | None = None,
    budget: int = 1000, category: str = "single-hop", conversation: str = "c",
) -> QuestionRecord:  # fmt: skip
    gold_ids = tuple(f"{qid}/g{i}" for i in range(gold))
    return QuestionRecord(
        system=system, question_id=qid, conversation_id=conversation, category=category,
        level=level, analyzer_level=level, budget=None, result_budget=budget,
        tokens_used=tokens, context_tokens=tokens, full_tokens=10_000, items=3, gold=gold_ids,
        found=gold_ids[:found], gold_items=found, latency_ms=1.0,
    )  # fmt: skip


def run_of(experiment_data: dict[str, object], records: list[QuestionRecord]) -> RunResult:
    experiment = validate_experiment({"dataset": {"path": "x.json"}, **experiment_data})
    labels = experiment.system_labels()
    systems = tuple(System(label, "profile", lambda _: None) for label in labels)  # type: ignore[arg-type,return-value]
    return RunResult(
        experiment,
        Dataset(name="d", conversations=(), questions=()),
        systems,
        tuple(records),
        {"c": 10_000},
    )


# -- the reader ---------------------------------------------------------------------------------


def test_cite_gold_cites_each_disclosed_gold_item_once_in_disclosure_order() -> None:
    """Gold items present are cited [mem:..] in order, others are not; a preamble leads."""
    res = result(("c/3", "mem:ccc333"), ("c/1", "mem:aaa111"), ("c/2", "mem:bbb222"))
    reply = cite_gold(question("c/q1", "c/1", "c/3", "c/9"), res)
    assert reply == f"{PREAMBLE} See [mem:ccc333] [mem:aaa111]."
    assert "bbb222" not in reply


def test_cite_gold_cites_nothing_when_no_gold_was_disclosed() -> None:
    """No gold in the context: a reply without citations (it teaches no depth)."""
    reply = cite_gold(question("c/q1", "c/7"), result(("c/1", "mem:aaa111")))
    assert reply == NOTHING and "mem:" not in reply


def test_readers_are_looked_up_by_name() -> None:
    """cite-gold is registered; a miss lists the available readers."""
    assert get_reader("cite-gold") is cite_gold
    with pytest.raises(RegistryError, match="available: cite-gold"):
        get_reader("psychic")


# -- the oracle level ---------------------------------------------------------------------------


def test_the_oracle_level_is_the_cheapest_level_holding_all_evidence() -> None:
    """minimal misses; standard hits at 500, detailed at 400: detailed is the oracle level."""
    options = {
        MIN: rec("a", "q", found=0, tokens=100),
        STD: rec("a", "q", found=1, tokens=500),
        DET: rec("a", "q", found=1, tokens=400),
        COMP: rec("a", "q", found=1, tokens=900),
    }
    assert oracle_level(options) is DET


def test_ties_go_to_the_lower_level_and_no_hit_means_no_oracle() -> None:
    """Equal tokens: the lower level. No level with all evidence: None; best_level then takes
    the best recall (1 of 2) at the fewest tokens."""
    tie = {STD: rec("a", "q", found=1, tokens=400), DET: rec("a", "q", found=1, tokens=400)}
    assert oracle_level(tie) is STD
    partial = {
        MIN: rec("a", "q", found=0, gold=2, tokens=100),
        STD: rec("a", "q", found=1, gold=2, tokens=700),
        DET: rec("a", "q", found=1, gold=2, tokens=600),
    }
    assert oracle_level(partial) is None
    assert best_level(partial) is DET


def test_the_oracle_section_counts_how_the_analyzer_picks() -> None:
    """Three questions: q1 the analyzer picks the oracle level; q2 it holds the evidence at more
    tokens than needed; q3 it misses evidence a level holds. Confusion and shares follow."""
    cost = {"q1": (0, 300, 300, 900), "q2": (200, 300, 300, 900), "q3": (0, 0, 500, 900)}
    records = []
    for level, column in zip(DisclosureLevel, range(4), strict=True):
        for qid, row in cost.items():
            tokens = row[column] or 150
            records.append(
                rec(
                    f"p@{level.value}",
                    qid,
                    found=int(bool(row[column])),
                    tokens=tokens,
                    level=level.value,
                )
            )
    picks = {"q1": (STD, 1, 300), "q2": (STD, 1, 300), "q3": (STD, 0, 150)}
    records += [rec("p", q, found=f, tokens=t, level=lv.value) for q, (lv, f, t) in picks.items()]
    run = run_of({"profiles": [{"profile": "default", "label": "p"}], "oracle": True}, records)
    section = oracle_section(run)
    assert section is not None
    data = section.data["p"]
    assert data["reachable"] == 3 and data["unreachable"] == 0
    assert data["picks_oracle_level"] == pytest.approx(1 / 3)
    assert data["as_cheap_as_oracle"] == pytest.approx(1 / 3)
    assert data["holds_evidence_at_more_tokens"] == pytest.approx(1 / 3)
    assert data["misses_evidence_a_level_holds"] == pytest.approx(1 / 3)
    assert data["confusion"] == {"standard": {"standard": 1, "minimal": 1, "detailed": 1}}
    assert data["systems"]["oracle level"]["recall"] == 1.0
    assert data["systems"]["oracle level"]["tokens_mean"] == pytest.approx((300 + 200 + 500) / 3)


def test_oracle_experiments_add_every_fixed_level_and_need_an_analyzer_profile() -> None:
    """oracle: true runs each analyzer-driven profile at each level, labelled name@level."""
    experiment = validate_experiment(
        {
            "dataset": {"path": "x.json"},
            "profiles": ["default", {"profile": "chat", "level": "minimal"}],
            "oracle": True,
        }
    )
    assert experiment.system_labels() == [
        "default", "chat@minimal", "default@minimal", "default@standard", "default@detailed",
        "default@comprehensive",
    ]  # fmt: skip
    with pytest.raises(ExperimentError, match="oracle: needs a profile without a fixed level"):
        validate_experiment(
            {
                "dataset": {"path": "x.json"},
                "profiles": [{"profile": "chat", "budget": 9}],
                "oracle": True,
            }
        )


# -- the adaptive budget, evaluated -------------------------------------------------------------


def test_adaptive_modes_read_as_the_brief_says() -> None:
    """true/false mean learn/start; start turns learning off (budgets stay at their start);
    ceiling turns budget.adaptive off; labels say the mode and the reader."""
    experiment = validate_experiment(
        {"dataset": {"path": "x.json"},
         "profiles": [{"profile": "default", "adaptive": False, "reader": "cite-gold"},
                      {"profile": "default", "adaptive": True, "reader": "cite-gold"}]}
    )  # fmt: skip
    assert experiment.system_labels() == ["default/start+cite-gold", "default/learn+cite-gold"]
    profile = load_profile("default")
    start = with_adaptive(profile, "start").budget
    assert start.adaptive and not start.learning.enabled
    assert not with_adaptive(profile, "ceiling").budget.adaptive
    assert with_adaptive(profile, None) is profile


def test_the_adaptive_section_pairs_learning_with_off_and_checks_the_target() -> None:
    """Off: 1000 tokens, recall 1.0 on both questions. On: 700 and 900 tokens (20% fewer), one
    question loses its evidence (recall 0.5: 50 points lost): the target is missed."""
    records = [
        rec("off", "q1", found=1, tokens=1000), rec("off", "q2", found=1, tokens=1000),
        rec("on", "q1", found=1, tokens=700, level="standard", budget=800),
        rec("on", "q2", found=0, tokens=900, level="standard", budget=900),
    ]  # fmt: skip
    run = run_of(
        {"profiles": [{"profile": "default", "adaptive": "start", "label": "off"},
                      {"profile": "default", "adaptive": "learn", "label": "on"}],
         "bootstrap": {"resamples": 200}},
        records,
    )  # fmt: skip
    section = adaptive_section(run)
    assert section is not None
    (pair,) = section.data["pairs"]
    assert (pair["off"], pair["on"], pair["off_mode"]) == ("off", "on", "start")
    assert pair["token_cut"] == pytest.approx(0.2)
    assert pair["recall_points_lost"] == pytest.approx(50.0)
    assert pair["target_met"] is False
    assert pair["by_level"]["standard"]["budget_on"] == pytest.approx(850)
    assert pair["by_position"]["1-10"]["questions"] == 2


def test_positions_count_questions_within_each_conversation() -> None:
    """Run order per conversation: 1, 2 in c; 1 in d; 3 in c."""
    records = [rec("s", "a", found=1, tokens=1), rec("s", "b", found=1, tokens=1)]
    records.append(replace(rec("s", "x", found=1, tokens=1), conversation_id="d"))
    records.append(rec("s", "c", found=1, tokens=1))
    assert positions(records) == [1, 2, 1, 3]


def test_no_section_without_pairs_or_oracle(tmp_path: Path) -> None:
    """Plain experiments get neither section."""
    run = run_of({"profiles": ["default"]}, [rec("default", "q", found=1, tokens=5)])
    assert adaptive_section(run) is None and oracle_section(run) is None


def test_packing_depths_end_each_item_where_packing_order_puts_it_plus_the_frame() -> None:
    """Items of 5 tokens in a 50-token context: a 35-token frame; the 1st ends at 40, the 3rd
    at 50; an id shown only inside another item has no depth of its own."""
    res = result(("a", "mem:aaaa"), ("b", "mem:bbbb"), ("c", "mem:cccc"))
    assert packing_depths(res, ["a", "c", "zz"]) == (40, 50, None)


def test_the_fixed_factor_frontier_keeps_what_ended_within_the_scaled_budget() -> None:
    """Budget 1000, context 1000, gold at 300 and 900: x0.5 keeps 1 of 2 at 500 tokens (50%
    fewer, 50 points lost); x1.0 keeps both at 1000."""
    record = replace(rec("s", "q", found=2, gold=2, tokens=1000), found_depths=(300, 900))
    half, full = fixed_factor_frontier([record], (0.5, 1.0))
    assert (half["tokens"], half["recall"], half["token_cut"]) == (500, 0.5, 0.5)
    assert half["recall_points_lost"] == pytest.approx(50.0)
    assert (full["tokens"], full["recall"]) == (1000, 1.0)


def test_cli_flags_set_the_reader_the_adaptive_mode_and_the_oracle() -> None:
    """--reader/--adaptive apply to each --profile; --oracle asks for the oracle levels;
    --reader without --profile is a usage error."""
    from disclosure.faces.cli import UsageError, build_parser
    from disclosure.faces.cli.evaluate import _experiment

    parser = build_parser()
    args = parser.parse_args(
        ["eval", "--profile", "default", "--reader", "cite-gold", "--adaptive", "learn",
         "--oracle", "--dataset", "x.json"]
    )  # fmt: skip
    experiment = _experiment(args)
    assert experiment.oracle
    (spec,) = experiment.profiles
    assert (spec.reader, spec.adaptive) == ("cite-gold", "learn")
    bare = parser.parse_args(["eval", "--baseline", "bm25", "--reader", "cite-gold"])
    with pytest.raises(UsageError, match="--reader and --adaptive"):
        _experiment(bare)


def test_match_tokens_runs_the_budgeted_baselines_at_the_profiles_mean_tokens() -> None:
    """After the profiles, each budgeted baseline runs once more at the named profile's mean
    context tokens, labelled baseline:<name>@<profile>; the name must be a profile."""
    from disclosure.evaluation import (
        experiment_systems,
        load_dataset,
        load_experiment,
        run_experiment,
    )

    tiny = load_experiment(Path(__file__).resolve().parents[3] / "configs" / "ab" / "tiny.yaml")
    data = tiny.model_dump(exclude_unset=True) | {"match_tokens": "long-memory", "budgets": [40]}
    data["reference"] = "long-memory"
    experiment = validate_experiment(data)
    dataset = load_dataset(experiment.dataset, seed=experiment.seed)
    run = run_experiment(experiment, dataset, experiment_systems(experiment), progress=False)
    assert run.labels[-2:] == ["baseline:bm25@long-memory", "baseline:recency@long-memory"]
    assert run.labels == experiment.system_labels()
    profile = run.by_system["long-memory"]
    mean = round(sum(r.context_tokens for r in profile) / len(profile))
    assert {r.budget for r in run.by_system["baseline:bm25@long-memory"]} == {mean}
    with pytest.raises(ExperimentError, match="match_tokens: 'chat' is none of the profiles"):
        validate_experiment(data | {"match_tokens": "chat"})
