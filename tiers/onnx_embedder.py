"""all-MiniLM-L6-v2 on onnxruntime: a one-time export, then no torch at run time.

The export (``torch.onnx.export`` of the BERT encoder with its plain attention, dynamic batch
and sequence axes, then onnxruntime's transformer optimizer fusing each layer's attention,
layer norms and GELU into single operators) is made once per machine and model version, into
``<cache dir>/onnx/all-MiniLM-L6-v2-<fingerprint>.onnx`` (cache dir:
``tiers.warm.embedder_cache_dir``, default ``$XDG_CACHE_HOME/tiered-disclosure``). It is
written to a temporary file, verified against the torch model (every test sentence must reach
cosine >= :data:`PARITY_MIN_COSINE`), fsynced and renamed into place, so a reader never
sees a partial file. The fingerprint covers the model's config and tokenizer, the weights' size
and :data:`EXPORT_FORMAT`, so a new model version gets a new file.

Why the fusion: exported with PyTorch's fused attention kernel, the graph has ~700 operators
that onnxruntime cannot fuse (its attention pattern is not recognised); exported with the plain
attention, the optimizer turns it into 46 (6 ``Attention``, 12 ``SkipLayerNormalization``, 6
``BiasGelu``, one ``EmbedLayerNormalization``, the matrix products). Same vectors (cosine
>= 0.9999998 with the unfused export over 2,000 LoCoMo turns, batched or alone), a short query
~15% faster, and a whole ``disclose`` at 10k memories ~1 ms faster (12.2 -> 11.2 ms p50 over
eight interleaved rounds). If the optimizer fails, the plain export is kept.

At run time the ``tokenizers`` fast tokenizer (the model's tokenizer.json, truncation at 256
tokens like sentence-transformers, padding to the longest text of each batch) feeds
onnxruntime; mean pooling over the attention mask and L2 normalisation are done here in numpy.
Texts are sorted by length before batching so that short texts are not padded to long ones.
Chroma's own ONNX embedding function pads every input to 256 tokens and is ~40x slower.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import sys
import threading
import uuid
import warnings
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tiers._offline import prepare_environment
from tiers.errors import TierUnavailableError
from tiers.minilm import (
    MINILM_MAX_TOKENS,
    MINILM_NAME,
    SentenceTransformerEmbedder,
    default_cache_dir,
    empty_vectors,
    l2_normalise,
    minilm_model_dir,
    model_dimension,
    shared_sentence_transformer,
)

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger(__name__)

EXPORT_FORMAT = 2  # bump when the export recipe below changes (2: plain attention, fused)
ONNX_OPSET = 17
PARITY_MIN_COSINE = 0.9999
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "last_hidden_state"
VERIFY_TEXTS = (
    "Priya moved the billing service from SQLite to Postgres 16.",
    "ok",
    "",
    "Invoice totals drifted by a cent because amounts were floats, not Decimal. " * 40,
    "Le service de facturation a migré vers Postgres; 請求サービスは移行されました.",
    "Why did the nightly batch send duplicate invoice emails?",
)

_export_lock = threading.Lock()


class OnnxEmbedder:
    """Mean-pooled, L2-normalised float32 vectors from an ONNX export of a BERT encoder."""

    backend = "onnx"

    def __init__(
        self,
        model_file: Path,
        tokenizer_file: Path,
        *,
        dimension: int,
        name: str = MINILM_NAME,
        max_tokens: int = MINILM_MAX_TOKENS,
        batch_size: int = 32,
        threads: int = 0,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive (got {batch_size})")
        self.name = name
        self.dimension = dimension
        self.model_file = Path(model_file)
        self.batch_size = batch_size
        self._session = _session(self.model_file, threads)
        self._inputs = {i.name for i in self._session.get_inputs()} & set(INPUT_NAMES)
        self._tokenizer = _tokenizer(Path(tokenizer_file), max_tokens)

    def __repr__(self) -> str:
        return f"OnnxEmbedder(name={self.name!r}, model_file='{self.model_file}')"

    @classmethod
    def from_cache(
        cls,
        cache_dir: Path | None = None,
        *,
        model_dir: Path | None = None,
        export: bool = True,
    ) -> OnnxEmbedder:
        """The embedder over the cached export, exporting (and verifying) it first if needed."""
        model_dir = model_dir or minilm_model_dir()
        target = export_path(cache_dir or default_cache_dir(), model_dir)
        if not target.is_file():
            if not export:
                raise TierUnavailableError(f"no ONNX export at {target}")
            export_onnx_model(target, model_dir=model_dir)
        try:
            return cls._open(target, model_dir)
        except TierUnavailableError as exc:  # a damaged file: export again, once
            log.warning("ONNX export %s unusable (%s); exporting it again", target, exc)
            target.unlink(missing_ok=True)
            export_onnx_model(target, model_dir=model_dir)
            return cls._open(target, model_dir)

    @classmethod
    def _open(cls, target: Path, model_dir: Path) -> OnnxEmbedder:
        return cls(target, model_dir / "tokenizer.json", dimension=model_dimension(model_dir))

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Rows of L2-normalised float32 vectors, one per text, in the order given."""
        if not texts:
            return empty_vectors(self.dimension)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            out[chunk] = self._embed_batch([texts[i] for i in chunk])
        return out

    def _embed_batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        encodings = self._tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        hidden = self._session.run([OUTPUT_NAME], {k: feeds[k] for k in self._inputs})[0]
        return mean_pool(hidden, feeds["attention_mask"])


def mean_pool(
    hidden: npt.NDArray[Any], attention_mask: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """sentence-transformers' mean pooling over real tokens, then L2 normalisation."""
    mask = attention_mask[..., None].astype(np.float32)
    summed = (hidden * mask).sum(axis=1)
    return l2_normalise(summed / np.maximum(mask.sum(axis=1), 1e-9))


def _session(model_file: Path, threads: int) -> Any:
    prepare_environment()
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise TierUnavailableError("onnxruntime is not installed: pip install onnxruntime") from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    # no busy-waiting between operators: on a shared machine (the service's request threads,
    # other processes) spinning threads take the cores the work they wait for needs; the
    # vectors are the same either way
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only
    try:
        return ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidProtobuf types
        raise TierUnavailableError(f"cannot load ONNX model {model_file}: {exc}") from exc


def _tokenizer(tokenizer_file: Path, max_tokens: int) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(max_length=max_tokens)
    pad_id = tokenizer.token_to_id("[PAD]") or 0
    tokenizer.enable_padding(pad_id=pad_id, pad_token="[PAD]")  # to the batch's longest text
    return tokenizer


def model_fingerprint(model_dir: Path) -> str:
    """12 hex digits naming one model version and export recipe."""
    digest = hashlib.sha256(f"format={EXPORT_FORMAT};opset={ONNX_OPSET}".encode())
    for name in ("config.json", "tokenizer.json", "1_Pooling/config.json"):
        path = model_dir / name
        digest.update(path.read_bytes() if path.is_file() else b"-")
    weights = model_dir / "model.safetensors"
    digest.update(str(weights.stat().st_size if weights.is_file() else -1).encode())
    return digest.hexdigest()[:12]


def export_path(cache_dir: Path, model_dir: Path) -> Path:
    """Where the export of ``model_dir`` lives under ``cache_dir``."""
    return Path(cache_dir) / "onnx" / f"{MINILM_NAME}-{model_fingerprint(model_dir)}.onnx"


def export_onnx_model(target: Path, *, model_dir: Path | None = None) -> float:
    """Export, verify and atomically install the model at ``target``; returns the min cosine.

    Needs torch, sentence-transformers and onnx (build time only). Raises
    :class:`TierUnavailableError` when any of them fails or the vectors differ.
    """
    model_dir = model_dir or minilm_model_dir()
    with _export_lock, _exporting(target):
        if target.is_file():  # exported meanwhile by another thread or process
            return 1.0
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            reference = shared_sentence_transformer(model_dir)
            log.info("exporting %s to ONNX at %s (one time)", reference.name, target)
            _trace(reference, tmp)
            parity = _verify(tmp, model_dir, reference)
            _fsync(tmp)
            tmp.replace(target)
            _write_sidecar(target, reference, parity)
            return parity
        except TierUnavailableError:
            raise
        except Exception as exc:  # torch / onnx raise many types; the caller falls back
            raise TierUnavailableError(f"exporting {model_dir} to ONNX failed: {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def _exporting(target: Path) -> Iterator[None]:
    """The cache directory's export lock: replicas starting at once on a fresh host export the
    model once (the others wait, then find the file) instead of each spending minutes of CPU."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = (target.parent / f".{target.name}.lock").open("a", encoding="utf-8")
    except OSError as exc:
        raise TierUnavailableError(
            f"cannot use the export directory {target.parent}: {exc}"
        ) from None
    with handle:
        if sys.platform != "win32":  # pragma: no branch - no advisory locks there
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # dropped when the file closes
        yield


def _trace(reference: SentenceTransformerEmbedder, path: Path) -> None:
    try:
        import onnx  # noqa: F401 - torch's exporter needs it
        import torch
    except ImportError as exc:
        raise TierUnavailableError(f"the ONNX export needs torch and onnx ({exc})") from exc

    class Encoder(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    bert = copy.deepcopy(reference.load()[0].auto_model)  # the shared model stays as it is
    bert.set_attn_implementation("eager")  # a graph the optimizer below can fuse
    encoder = Encoder(bert).eval()
    # Two texts of different lengths, so the traced graph takes the padded-mask path.
    ids = torch.tensor([[101, 7592, 2088, 2003, 102], [101, 7592, 102, 0, 0]], dtype=torch.long)
    dummy = (ids, (ids != 0).long(), torch.zeros_like(ids))
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUT_NAMES, OUTPUT_NAME)}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings and the legacy-exporter notice
        torch.onnx.export(
            encoder,
            dummy,
            str(path),
            dynamo=False,  # the dynamo exporter needs onnxscript; the TorchScript one does not
            input_names=list(INPUT_NAMES),
            output_names=[OUTPUT_NAME],
            dynamic_axes=axes,
            opset_version=ONNX_OPSET,
            do_constant_folding=True,
        )
    _fuse(path, heads=int(bert.config.num_attention_heads), hidden=int(bert.config.hidden_size))


def _fuse(path: Path, *, heads: int, hidden: int) -> None:
    """Fuse the exported graph in place with onnxruntime's transformer optimizer (see the
    module's docstring); on any failure, keep the plain export, which gives the same vectors."""
    try:
        from onnxruntime.transformers import optimizer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = optimizer.optimize_model(
                str(path), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=1
            )
        fused = {k: v for k, v in model.get_fused_operator_statistics().items() if v}
        model.save_model_to_file(str(path))
    except Exception as exc:  # the optimizer raises many types; the plain export still works
        log.warning("fusing the ONNX export failed (%s); keeping it unfused", exc)
        return
    log.info("fused the ONNX export: %s", fused)


def _verify(path: Path, model_dir: Path, reference: SentenceTransformerEmbedder) -> float:
    candidate = OnnxEmbedder(
        path, model_dir / "tokenizer.json", dimension=reference.dimension, batch_size=4
    )
    texts = list(VERIFY_TEXTS)
    cosines = (candidate.embed(texts) * reference.embed(texts)).sum(axis=1)
    worst = float(cosines.min())
    if worst < PARITY_MIN_COSINE:
        raise TierUnavailableError(
            f"the ONNX export differs from the torch model (min cosine {worst:.6f} < "
            f"{PARITY_MIN_COSINE}); not installed"
        )
    return worst


def _fsync(path: Path) -> None:
    with path.open("rb+") as handle:
        os.fsync(handle.fileno())


def _write_sidecar(target: Path, reference: SentenceTransformerEmbedder, parity: float) -> None:
    info = {
        "name": reference.name,
        "dimension": reference.dimension,
        "source": str(reference.model_dir),
        "export_format": EXPORT_FORMAT,
        "opset": ONNX_OPSET,
        "min_cosine_vs_torch": parity,
        "created": datetime.now(UTC).isoformat(),
    }
    sidecar = target.with_suffix(".json")
    tmp = sidecar.with_name(f".{sidecar.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info, indent=2), encoding="utf-8")
    tmp.replace(sidecar)
