"""Train the injection classifier shipped as safeguards/injection_model.json.

Reads the bank in benchmarks/injection_bank (hand-written attacks and ordinary memories, plus
variations generated here from templates with a fixed seed), extracts the features
:mod:`safeguards.injection_model` uses (on the same views :mod:`safeguards.filter` scans), and
fits a logistic regression with numpy (L2, classes weighted equally, full-batch Adam).

Validation is by technique: each kind of attack and each kind of benign memory in turn is held
out, the model trained on the rest scores it, and the threshold is chosen on these held-out
benign scores so that at most ``--max-fp`` of them pass it. The figures (held-out rates per
kind, with the texts missed and wrongly flagged) go to benchmarks/results/injection_model.json;
then the model is trained on the whole bank and written with that threshold.

    python -m benchmarks.train_injection_model        (from the repository root; ~1 min)

fresh_4.txt and fresh_6.txt in the bank are test sets: they are never read here.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks.injection_bank_files import Item, read_bank
from benchmarks.injection_variations import variations
from disclosure.evaluation.experiment import (
    LONGMEMEVAL_ENV,
    LONGMEMEVAL_RELATIVE,
    default_dataset_path,
)
from safeguards.filter import _scan_at, is_flagged, learned_view
from safeguards.injection_model import MODEL_PATH, features, windows

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "benchmarks" / "injection_bank"
RESULTS = ROOT / "benchmarks" / "results" / "injection_model.json"
SPENT_SEALED = ROOT / "benchmarks" / "sealed" / "injection_sealed.json"
SEED = 20261125


def chat_windows(n: int, rng: random.Random) -> list[Item]:
    """``n`` windows (as the classifier cuts long texts) of real chat turns from the
    LongMemEval dev split (MIT licence), half from user turns and half from assistant turns:
    ordinary memories of a chat with an assistant, full of requests and second person. None
    when the dataset is not beside the repository."""
    path = Path(os.environ.get(LONGMEMEVAL_ENV) or default_dataset_path(LONGMEMEVAL_RELATIVE))
    if not path.is_file():
        print(f"no LongMemEval at {path}: training without real chat turns")
        return []
    turns: dict[str, set[str]] = {"user": set(), "assistant": set()}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            for session in json.loads(line)["haystack_sessions"]:
                for turn in session:
                    if turn.get("role") in turns and turn.get("content"):
                        turns[turn["role"]].add(turn["content"])
    items = []
    for role, texts in turns.items():
        pieces = sorted({w.strip() for t in sorted(texts) for w in windows(t) if len(w) > 20})
        for text in rng.sample(pieces, min(n // 2, len(pieces))):
            items.append(Item(text, 0, f"chat_{role}", "chat"))
    return items


def corpus_items() -> list[Item]:
    """The corpora the rules were tuned on (tests/safeguards and benchmarks/safety_rates.py up to
    fresh_2): always trained on, never in a validation fold. fresh_3 and fresh_4 stay out."""
    from benchmarks import safety_rates as rates

    pairs = [
        rates._corpus("test_filter.py"),
        rates._corpus("test_injection_corpus.py"),
        (rates.HELD_OUT_ATTACKS, rates.HELD_OUT_BENIGN),
        (rates.SECOND_ROUND_ATTACKS, rates.SECOND_ROUND_BENIGN),
        (rates.THIRD_ROUND_ATTACKS, rates.THIRD_ROUND_BENIGN),
        (rates.FRESH_ATTACKS, rates.FRESH_BENIGN),
        (rates.FRESH_2_ATTACKS, rates.FRESH_2_BENIGN),
    ]
    return [
        Item(text, label, "corpus", "corpus")
        for attacks, benign in pairs
        for label, texts in ((1, attacks), (0, benign))
        for text in texts
    ]


def bank_files() -> list[Path]:
    """The bank's training files: every ``attacks*.txt`` and ``benign*.txt`` (the ``fresh_*``
    test sets are not among them)."""
    return sorted([*BANK.glob("attacks*.txt"), *BANK.glob("benign*.txt")])


def spent_sealed_items() -> list[Item]:
    """The first sealed set (benchmarks/sealed/injection_sealed.json), trained on since it was
    measured once; a newer sealed set, never trained on, has taken its place as the test."""
    data = json.loads(SPENT_SEALED.read_text(encoding="utf-8"))
    return [
        Item(text, label, "sealed", "hand")
        for label, texts in ((1, data["attacks"]), (0, data["benign"]))
        for text in texts
    ]


def load_bank(chat: int = 3000) -> list[Item]:
    items = [item for path in bank_files() for item in read_bank(path)]
    items += spent_sealed_items()
    items += corpus_items()
    items += chat_windows(chat, random.Random(SEED))
    items += [Item(t, lab, k, "generated") for t, lab, k in variations(random.Random(SEED))]
    texts = Counter(i.text for i in items)
    return [i for i in items if texts[i.text] == 1 or i.source == "hand"]


# -- training -------------------------------------------------------------------------------------


def extract(items: list[Item]) -> list[set[str]]:
    out = []
    for item in items:
        folded, bare, kinds = learned_view(item.text)
        out.append(features(folded, bare, kinds))
    return out


def fit(
    feats: list[set[str]], labels: np.ndarray, *, l2: float, epochs: int, min_df: int
) -> tuple[dict[str, float], float]:
    """Logistic regression on binary features; both classes weigh the same in the loss."""
    df = Counter(f for fs in feats for f in fs)
    vocab = {f: i for i, f in enumerate(sorted(f for f, c in df.items() if c >= min_df))}
    rows, cols = [], []
    for r, fs in enumerate(feats):
        for f in fs:
            if f in vocab:
                rows.append(r)
                cols.append(vocab[f])
    rows_a, cols_a = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)
    n, d = len(feats), len(vocab)
    y = labels.astype(np.float64)
    sample_w = np.where(y == 1, 0.5 / max(1, y.sum()), 0.5 / max(1, n - y.sum()))
    w, b = np.zeros(d), 0.0
    m_w, v_w, m_b, v_b = np.zeros(d), np.zeros(d), 0.0, 0.0
    lr, beta1, beta2, eps = 0.05, 0.9, 0.999, 1e-8
    for t in range(1, epochs + 1):
        z = b + np.bincount(rows_a, weights=w[cols_a], minlength=n)
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        g = (p - y) * sample_w
        g_w = np.bincount(cols_a, weights=g[rows_a], minlength=d) + l2 * w
        g_b = float(g.sum())
        m_w = beta1 * m_w + (1 - beta1) * g_w
        v_w = beta2 * v_w + (1 - beta2) * g_w**2
        m_b = beta1 * m_b + (1 - beta1) * g_b
        v_b = beta2 * v_b + (1 - beta2) * g_b**2
        w -= lr * (m_w / (1 - beta1**t)) / (np.sqrt(v_w / (1 - beta2**t)) + eps)
        b -= lr * (m_b / (1 - beta1**t)) / (np.sqrt(v_b / (1 - beta2**t)) + eps)
    names = sorted(vocab, key=vocab.__getitem__)
    weights = {f: round(float(w[i]), 4) for i, f in enumerate(names) if abs(w[i]) >= 1e-3}
    return weights, round(b, 4)


def score(weights: dict[str, float], bias: float, fs: set[str]) -> float:
    z = bias + sum(weights.get(f, 0.0) for f in fs)
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def _held_out_scores(
    items: list[Item],
    feats: list[set[str]],
    labels: np.ndarray,
    folds: list[np.ndarray],
    args: argparse.Namespace,
) -> np.ndarray:
    """Each item's score by a model trained without its fold (nan for items in no fold)."""
    scores = np.full(len(items), np.nan)
    for test in folds:
        train = ~test
        weights, bias = fit(
            [f for f, t in zip(feats, train, strict=True) if t],
            labels[train],
            l2=args.l2,
            epochs=args.epochs,
            min_df=args.min_df,
        )
        for j in np.flatnonzero(test):
            scores[j] = score(weights, bias, feats[j])
    return scores


def _report(
    name: str,
    items: list[Item],
    labels: np.ndarray,
    scores: np.ndarray,
    rules: np.ndarray,
    hidden: np.ndarray,
    threshold: float,
    veto: float,
) -> dict[str, object]:
    """Rates of the classifier alone and of rules-or-classifier (as the scan combines them: the
    rules' flag stands unless the classifier scores the text under ``veto`` and it hides
    nothing) on the items that were held out, per kind, with the texts each gets wrong."""
    seen = ~np.isnan(scores)
    learned = seen & (np.nan_to_num(scores) >= threshold)
    vetoed = rules & seen & ~hidden & (np.nan_to_num(scores) < veto)
    both = learned | (rules & ~vetoed)
    per_kind: dict[str, dict[str, object]] = {}
    for label, kind in sorted({(i.label, i.kind) for i in items}):
        idx = [j for j, i in enumerate(items) if seen[j] and i.label == label and i.kind == kind]
        if not idx:
            continue
        per_kind[f"{'attack' if label else 'benign'}:{kind}"] = {
            "texts": len(idx),
            "flagged_classifier": int(learned[idx].sum()),
            "flagged_with_rules": int(both[idx].sum()),
            "wrong_with_rules": [items[j].text for j in idx if bool(both[j]) != bool(label)],
        }
    chat = np.array([i.source == "chat" for i in items]) & seen
    attack, benign = seen & (labels == 1), seen & (labels == 0) & ~chat
    out: dict[str, object] = {
        "attacks": int(attack.sum()),
        "attacks_flagged_rules": int((rules & attack).sum()),
        "attacks_flagged_classifier": int((learned & attack).sum()),
        "attacks_flagged_with_rules": int((both & attack).sum()),
        "benign": int(benign.sum()),
        "benign_flagged_rules": int((rules & benign).sum()),
        "benign_flagged_classifier": int((learned & benign).sum()),
        "benign_flagged_with_rules": int((both & benign).sum()),
        "attacks_vetoed": int((vetoed & attack).sum()),
        "benign_vetoed": int((vetoed & benign).sum()),
        "chat_windows": int(chat.sum()),
        "chat_flagged_with_rules": int((both & chat).sum()),
        "per_kind": per_kind,
    }
    print(
        f"{name}: attacks {out['attacks_flagged_with_rules']} of {out['attacks']} flagged "
        f"(rules alone {out['attacks_flagged_rules']}, classifier alone "
        f"{out['attacks_flagged_classifier']}); benign {out['benign_flagged_with_rules']} of "
        f"{out['benign']} (rules {out['benign_flagged_rules']}, classifier "
        f"{out['benign_flagged_classifier']}); the rules' flag vetoed on "
        f"{out['attacks_vetoed']} attacks and {out['benign_vetoed']} benign; real chat windows "
        f"{out['chat_flagged_with_rules']} of {out['chat_windows']}"
    )
    for kind, r in per_kind.items():
        print(
            f"  {kind:<28} {r['flagged_with_rules']:>4} of {r['texts']:<4} "
            f"(classifier {r['flagged_classifier']})"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--l2", type=float, default=3e-4)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--min-df", type=int, default=3)
    parser.add_argument(
        "--max-fp",
        type=float,
        default=0.02,
        help="share of held-out hand-written benign texts the classifier may flag",
    )
    parser.add_argument(
        "--chat",
        type=int,
        default=3000,
        help="real chat windows in the bank (0: none)",
    )
    parser.add_argument(
        "--veto",
        type=float,
        default=0.2,
        help="below this probability the rules alone do not flag a text that hides nothing",
    )
    args = parser.parse_args(argv)
    items = load_bank(args.chat)
    labels = np.array([i.label for i in items])
    feats = extract(items)
    found = [_scan_at(i.text, 0, learned=False) for i in items]
    rules = np.array([is_flagged(f) for f in found])
    hidden = np.array([any(x.kind == "hidden" for x in f) for f in found])
    print(
        f"bank: {int(labels.sum())} attacks, {int((1 - labels).sum())} benign "
        f"({sum(i.source == 'hand' for i in items)} hand-written), "
        f"{len({(i.label, i.kind) for i in items})} kinds"
    )
    # New phrasings of known techniques: the hand-written texts in 5 folds, each scored by a
    # model trained on the other four and on every generated variation.
    rng = random.Random(SEED)
    hand = [j for j, i in enumerate(items) if i.source in {"hand", "chat"}]
    rng.shuffle(hand)
    folds = []
    for k in range(5):
        mask = np.zeros(len(items), dtype=bool)
        mask[hand[k::5]] = True
        folds.append(mask)
    phrasing = _held_out_scores(items, feats, labels, folds, args)
    written = np.array([i.source == "hand" for i in items])
    benign_scores = np.sort(phrasing[(labels == 0) & written & ~np.isnan(phrasing)])
    allowed = int(args.max_fp * len(benign_scores))
    threshold = round(min(max(float(benign_scores[-(allowed + 1)]) + 1e-4, 0.5), 0.99), 4)
    report = {"threshold": threshold, "veto": args.veto, "settings": vars(args)}
    report["new_phrasings"] = _report(
        f"hand-written texts, 5 folds, threshold {threshold}",
        items,
        labels,
        phrasing,
        rules,
        hidden,
        threshold,
        args.veto,
    )
    # New techniques: each kind of each class held out in turn, hand-written and generated.
    kinds = sorted({(i.label, i.kind) for i in items if i.source != "corpus"})
    techniques = _held_out_scores(
        items,
        feats,
        labels,
        [np.array([i.label == lab and i.kind == k for i in items]) for lab, k in kinds],
        args,
    )
    report["new_techniques"] = _report(
        "each kind held out in turn", items, labels, techniques, rules, hidden, threshold, args.veto
    )
    weights, bias = fit(feats, labels, l2=args.l2, epochs=args.epochs, min_df=args.min_df)
    model = {
        "about": "logistic regression over safeguards.injection_model features; trained by "
        "benchmarks/train_injection_model.py",
        "seed": SEED,
        "bank": {"attacks": int(labels.sum()), "benign": int((1 - labels).sum())},
        "bias": bias,
        "threshold": threshold,
        "veto": args.veto,
        "weights": dict(sorted(weights.items())),
    }
    MODEL_PATH.write_text(
        json.dumps(model, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    print(f"wrote {MODEL_PATH.relative_to(ROOT)}: {len(weights)} weights")
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
