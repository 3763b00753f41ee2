"""Embedders: same vectors from ONNX and torch, a registry by name, shared instances, caches."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tiers import TierUnavailableError
from tiers.base import Embedder
from tiers.embedders import (
    QueryEmbeddingCache,
    available_embedders,
    get_embedder,
    register_embedder,
)
from tiers.errors import RegistryError
from tiers.minilm import MINILM_NAME, SentenceTransformerEmbedder
from tiers.onnx_embedder import PARITY_MIN_COSINE, OnnxEmbedder, export_path

REPO = Path(__file__).resolve().parents[2]
SENTENCES = [
    "Priya moved the billing service from SQLite to Postgres 16.",
    "The rate limiter throttled the mailer at fifty messages per second.",
    "what did we decide about PDF rendering?",
    "Caroline went to the LGBTQ support group on Tuesday and felt welcomed.",
    "x",
    "A long note about invoices, refunds, ledgers and reconciliation. " * 30,
]


def test_onnx_and_sentence_transformers_give_the_same_vectors(
    st_embedder: SentenceTransformerEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    """Row by row the two embedders agree to cosine >= 0.9999 (one vector space, one name)."""
    torch_vectors = st_embedder.embed(SENTENCES)
    onnx_vectors = onnx_embedder.embed(SENTENCES)
    cosines = (torch_vectors * onnx_vectors).sum(axis=1)
    assert cosines.min() >= PARITY_MIN_COSINE
    assert st_embedder.name == onnx_embedder.name == MINILM_NAME


@pytest.mark.parametrize("kind", ["st", "onnx"])
def test_vectors_are_unit_float32_rows_in_input_order(
    kind: str, st_embedder: SentenceTransformerEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    """Shape (n, 384), float32, unit length; row i embeds text i whatever the batching."""
    embedder: Embedder = st_embedder if kind == "st" else onnx_embedder
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    one_by_one = np.stack([embedder.embed([s])[0] for s in SENTENCES[2:5]])
    np.testing.assert_allclose(vectors[2:5], one_by_one, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_similar_sentences_are_closer_than_unrelated_ones(onnx_embedder: OnnxEmbedder) -> None:
    """The model is a real sentence embedder: a paraphrase beats an unrelated sentence."""
    a, b, c = onnx_embedder.embed(
        [
            "We moved billing to Postgres.",
            "The billing database now runs on Postgres.",
            "My cat sleeps on the windowsill all afternoon.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3


def test_export_is_installed_atomically_with_a_record(onnx_cache_dir: Path) -> None:
    """The cache holds the verified model and its sidecar, and no temporary files: beside them
    only the export's lock file, empty (it stays: removing a lock file others may hold is racy)."""
    locks = sorted((onnx_cache_dir / "onnx").glob(".*.onnx.lock"))
    assert len(locks) == 1 and locks[0].stat().st_size == 0
    files = sorted(p.name for p in (onnx_cache_dir / "onnx").iterdir() if p not in locks)
    assert len(files) == 2
    assert files[0].endswith(".json") and files[1].endswith(".onnx")
    info = json.loads((onnx_cache_dir / "onnx" / files[0]).read_text(encoding="utf-8"))
    assert info["name"] == MINILM_NAME
    assert info["min_cosine_vs_torch"] >= PARITY_MIN_COSINE


def test_the_export_is_fused(
    onnx_cache_dir: Path, st_embedder: SentenceTransformerEmbedder
) -> None:
    """Each layer's attention is one fused operator: the graph onnxruntime runs fastest (the
    parity test above shows it gives the torch model's vectors)."""
    import onnx

    graph = onnx.load(str(export_path(onnx_cache_dir, st_embedder.model_dir))).graph
    ops = Counter(node.op_type for node in graph.node)
    assert ops["Attention"] == 6 and ops["SkipLayerNormalization"] == 12
    assert len(graph.node) < 100


def test_a_missing_export_is_not_made_when_told_not_to(tmp_path: Path) -> None:
    """from_cache(export=False) on an empty cache raises instead of exporting."""
    with pytest.raises(TierUnavailableError, match="no ONNX export"):
        OnnxEmbedder.from_cache(tmp_path, export=False)
    assert not (tmp_path / "onnx").exists()


@pytest.mark.slow  # a second export and verification: ~3 s idle, 8 s on a busy machine
def test_a_damaged_export_is_made_again(
    tmp_path: Path, onnx_embedder: OnnxEmbedder, st_embedder: SentenceTransformerEmbedder
) -> None:
    """A truncated model file is replaced by a fresh export that gives the torch vectors."""
    target = export_path(tmp_path, st_embedder.model_dir)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not an onnx model")
    repaired = OnnxEmbedder.from_cache(tmp_path)
    assert target.stat().st_size > 1_000_000
    cosine = float(repaired.embed(SENTENCES[:1])[0] @ st_embedder.embed(SENTENCES[:1])[0])
    assert cosine >= PARITY_MIN_COSINE


def test_onnx_runs_without_importing_torch(onnx_cache_dir: Path) -> None:
    """Once exported, a fresh process embeds with onnxruntime and never imports torch."""
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from tiers.onnx_embedder import OnnxEmbedder
        vectors = OnnxEmbedder.from_cache(Path({str(onnx_cache_dir)!r}), export=False).embed(["hi"])
        assert vectors.shape == (1, 384), vectors.shape
        print("torch" in sys.modules, "sentence_transformers" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=REPO,  # import this checkout's packages
    )
    assert out.stdout.split() == ["False", "False"]


def test_registry_names_and_a_clear_miss() -> None:
    """The built-in names are listed; an unknown name says which names are valid."""
    assert {"auto", "onnx", "sentence-transformers"} <= set(available_embedders())
    with pytest.raises(RegistryError, match=r"unknown embedder 'bert'; available: auto, onnx"):
        get_embedder("bert")


def test_registering_a_name_twice_to_another_factory_fails() -> None:
    """A built-in name cannot be taken over silently."""
    with pytest.raises(RegistryError, match="already registered"):
        register_embedder("onnx", lambda *, cache_dir: get_embedder("onnx", cache_dir=cache_dir))


def test_instances_are_shared_per_name_and_cache_dir(onnx_cache_dir: Path) -> None:
    """get_embedder builds once per process: the same object comes back."""
    first = get_embedder("onnx", cache_dir=onnx_cache_dir)
    assert get_embedder("onnx", cache_dir=onnx_cache_dir) is first
    assert isinstance(first, OnnxEmbedder)
    assert get_embedder("sentence-transformers") is get_embedder("sentence-transformers")


def test_auto_prefers_onnx_when_the_export_exists(onnx_cache_dir: Path) -> None:
    """auto over a cache holding the export is the ONNX embedder."""
    assert isinstance(get_embedder("auto", cache_dir=onnx_cache_dir), OnnxEmbedder)


def test_auto_falls_back_to_sentence_transformers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, st_embedder: SentenceTransformerEmbedder
) -> None:
    """When no export can be made (the cache dir is a file), auto uses torch and says why."""
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="tiers.embedders"):
        embedder = get_embedder("auto", cache_dir=blocked)
    assert embedder is st_embedder
    assert "ONNX embedder unavailable" in caplog.text


def test_query_cache_keeps_the_most_recent_queries(onnx_embedder: OnnxEmbedder) -> None:
    """Repeated queries are served from the LRU; the oldest entry leaves first; read-only rows."""
    cache = QueryEmbeddingCache(onnx_embedder, max_items=2)
    first = cache.vector("alpha")
    assert cache.vector("alpha") is first
    cache.vector("beta")
    cache.vector("gamma")  # evicts alpha
    assert (cache.hits, cache.misses, len(cache)) == (1, 3, 2)
    assert cache.vector("alpha") is not first
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 1.0


def test_a_disabled_query_cache_stores_nothing(onnx_embedder: OnnxEmbedder) -> None:
    """query_cache_size 0 turns the cache off."""
    cache = QueryEmbeddingCache(onnx_embedder, max_items=0)
    cache.vector("alpha")
    cache.vector("alpha")
    assert (len(cache), cache.hits, cache.misses) == (0, 0, 2)


class _SlowCountingEmbedder:
    """Blocks in ``embed`` until released, counting calls: two threads can ask at once."""

    name = "slow-counting"
    dimension = 3

    def __init__(self, fail_first: bool = False) -> None:
        import threading

        self.calls = 0
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail_first = fail_first

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.started.set()
        self.release.wait(5)
        if self.fail_first and self.calls == 1:
            raise RuntimeError("embedder hiccup")
        return [[float(len(t)), 0.0, 1.0] for t in texts]


@pytest.mark.parametrize("fail_first", [False, True])
def test_a_query_being_embedded_is_waited_for_not_embedded_twice(fail_first: bool) -> None:
    """A prefetch and the search it prepares ask for the same query at once: one embedding
    serves both; if the first attempt fails, the waiter embeds it itself instead of failing."""
    from concurrent.futures import ThreadPoolExecutor

    embedder = _SlowCountingEmbedder(fail_first=fail_first)
    cache = QueryEmbeddingCache(embedder, max_items=4)  # type: ignore[arg-type]
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(cache.vector, "where is billing?")
        assert embedder.started.wait(5)
        second = pool.submit(cache.vector, "where is billing?")
        embedder.release.set()
        if fail_first:
            with pytest.raises(RuntimeError):
                first.result(5)
            assert list(second.result(5)) == [17.0, 0.0, 1.0]
            assert embedder.calls == 2
        else:
            assert first.result(5) is second.result(5)
            assert embedder.calls == 1
    assert cache._running == {}


def test_an_export_waits_for_another_process_exporting_to_the_same_place(tmp_path: Path) -> None:
    """Replicas starting at once on a fresh host: while one process exports the model, another
    one's export waits for it, then finds the file and exports nothing."""
    from tiers.onnx_embedder import export_onnx_model

    target = tmp_path / "onnx" / "model.onnx"
    holder = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from tiers.onnx_embedder import _exporting
        target = Path({str(target)!r})
        with _exporting(target):
            print("holding", flush=True)
            time.sleep(1.5)
            target.write_bytes(b"exported by the other process")
        """
    )
    command = [sys.executable, "-c", holder]
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True) as other:
        assert other.stdout is not None and other.stdout.readline().strip() == "holding"
        assert export_onnx_model(target, model_dir=tmp_path / "no-model-needed") == 1.0
        assert target.read_bytes() == b"exported by the other process"
    assert other.returncode == 0
