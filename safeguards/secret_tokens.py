"""Credentials recognisable by their own shape: a provider's prefix and alphabet, a JWT's
``eyJ...`` parts.

A search for the prefixes (plain literals, which the regex engine scans fastest) finds where a
token may start; the provider's pattern is then matched there, and only where no token
character precedes the prefix. Every run in a pattern is bounded and stays inside one run of
token characters (or a few, for dotted formats), so each character is looked at a bounded
number of times however long or hostile the text.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from safeguards.secret_values import is_placeholder, looks_random

_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_END = r"(?![A-Za-z0-9_\-])"
Span = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    back: int = 0  # the token starts this many characters before its anchor
    random: bool = False  # the part after the prefix must also look random


def _rule(kind: str, pattern: str, *, back: int = 0, random: bool = False) -> _Rule:
    return _Rule(kind, re.compile(pattern + _END), back, random)


# anchor literal(s) -> the rules tried where one is found, in order (the first match wins)
_TABLE: tuple[tuple[tuple[str, ...], tuple[_Rule, ...]], ...] = (
    (("AKIA", "ASIA"), (_rule("aws_access_key", r"(?:AKIA|ASIA)[A-Z0-9]{16}"),)),
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        (_rule("github_token", r"gh[pousr]_[A-Za-z0-9]{36,251}"),),
    ),
    (
        ("github_pat_",),
        (_rule("github_token", r"github_pat_[A-Za-z0-9]{20,30}_[A-Za-z0-9]{40,80}"),),
    ),
    (
        tuple(
            f"gl{p}-"
            for p in [
                "pat",
                "dt",
                "ptt",
                "rt",
                "cbt",
                "oas",
                "soat",
                "ffct",
                "imt",
                "agent",
                "ft",
                "wt",
            ]
        ),
        (_rule("gitlab_token", r"gl[a-z]{2,5}-[A-Za-z0-9_\-]{20,200}"),),
    ),
    (("GR1348941",), (_rule("gitlab_token", r"GR1348941[A-Za-z0-9_\-]{20,64}"),)),
    (
        ("xox", "xapp-"),
        (
            _rule("slack_token", r"xox[abposre]-[A-Za-z0-9\-]{10,250}"),
            _rule("slack_token", r"xoxe\.xox[bp]-[A-Za-z0-9\-]{10,250}"),
            _rule("slack_token", r"xapp-\d-[A-Za-z0-9\-]{10,250}"),
        ),
    ),
    (
        ("hooks.slack.com/services/",),
        (
            _rule(
                "slack_webhook",
                r"hooks\.slack\.com/services/T[A-Z0-9_]{6,16}/B[A-Z0-9_]{6,16}/[A-Za-z0-9]{16,64}",
            ),
        ),
    ),
    (
        ("hooks.slack.com/workflows/",),
        (
            _rule(
                "slack_webhook",
                r"hooks\.slack\.com/workflows/T[A-Z0-9_]{6,16}/A[A-Z0-9_]{6,16}/[0-9]{6,24}/"
                r"[A-Za-z0-9]{16,64}",
            ),
        ),
    ),
    (
        ("/api/webhooks/",),
        (_rule("discord_webhook", r"/api/webhooks/[0-9]{15,22}/[A-Za-z0-9_\-]{50,100}"),),
    ),
    (
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        (_rule("stripe_key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,255}"),),
    ),
    (("whsec_",), (_rule("stripe_key", r"whsec_[A-Za-z0-9+/=]{24,128}"),)),
    (
        ("sk-",),
        (
            _rule(
                "anthropic_key", r"sk-ant-(?:api|admin|sid|oat|ort)[0-9]{2}-[A-Za-z0-9_\-]{32,255}"
            ),
            _rule("openai_key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,255}"),
            _rule("openai_key", r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"),
            _rule("apikey", r"sk-[A-Za-z0-9]{32,128}", random=True),
        ),
    ),
    (("SK",), (_rule("twilio_key", r"SK[0-9a-fA-F]{32}", random=True),)),
    (("SG.",), (_rule("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),)),
    (("npm_",), (_rule("npm_token", r"npm_[A-Za-z0-9]{36}"),)),
    (("pypi-Ag",), (_rule("pypi_token", r"pypi-Ag[A-Za-z0-9_\-]{50,1000}"),)),
    (("AIza",), (_rule("google_apikey", r"AIza[A-Za-z0-9_\-]{35}"),)),
    (("ya29.",), (_rule("google_oauth", r"ya29\.[A-Za-z0-9_\-]{20,2048}"),)),
    (("1//0",), (_rule("google_oauth", r"1//0[A-Za-z0-9_\-]{30,512}"),)),
    (("GOCSPX-",), (_rule("google_oauth", r"GOCSPX-[A-Za-z0-9_\-]{24,40}"),)),
    (("hf_",), (_rule("huggingface_token", r"hf_[A-Za-z0-9]{30,40}"),)),
    (("dckr_pat_",), (_rule("docker_token", r"dckr_pat_[A-Za-z0-9_\-]{20,40}"),)),
    (
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        (_rule("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}"),),
    ),
    (
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        (_rule("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),),
    ),
    (("glc_", "glsa_"), (_rule("grafana_token", r"gl(?:c|sa)_[A-Za-z0-9+/_]{32,400}={0,2}"),)),
    (("dapi",), (_rule("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?", random=True),)),
    (("ATATT3",), (_rule("atlassian_token", r"ATATT3[A-Za-z0-9_\-=]{100,300}"),)),
    (("lin_api_",), (_rule("linear_key", r"lin_api_[A-Za-z0-9]{40}"),)),
    (("PMAK-",), (_rule("postman_key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),)),
    (("hvs.", "hvb.", "hvr."), (_rule("vault_token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,255}"),)),
    (
        ("AGE-SECRET-KEY-1",),
        (_rule("age_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),),
    ),
    (
        ("8Q~",),
        (_rule("azure_clientsecret", r"[A-Za-z0-9_~.\-]{3}8Q~[A-Za-z0-9_~.\-]{31,34}", back=3),),
    ),
    (
        ("eyJ",),
        (
            _rule(
                "jwt",
                r"eyJ[A-Za-z0-9_\-]{8,4096}\.eyJ[A-Za-z0-9_\-]{8,8192}\.[A-Za-z0-9_\-]{0,2048}",
            ),
        ),
    ),
)
_RULES = {anchor: rules for anchors, rules in _TABLE for anchor in anchors}
_ANCHOR = re.compile("|".join(re.escape(a) for a in sorted(_RULES, key=len, reverse=True)))
#: The kinds this module can name.
TOKEN_KINDS = frozenset(rule.kind for _, rules in _TABLE for rule in rules)


def token_spans(text: str, regions: Iterable[tuple[int, int]] | None = None) -> Iterator[Span]:
    """(start, end, kind) of every credential ``text`` holds in a provider's own format, in
    ``regions`` (start, end) of it if given: a token has no spaces, so the runs of non-space
    characters long enough to hold one are all that need a look."""
    for region_start, region_end in regions or ((0, len(text)),):
        yield from _in_region(text, region_start, region_end)


def _in_region(text: str, position: int, end: int) -> Iterator[Span]:
    while (anchor := _ANCHOR.search(text, position, end)) is not None:
        position = anchor.end()
        start = anchor.start() - _RULES[anchor.group()][0].back
        if start < 0 or (start and text[start - 1] in _TOKEN_CHARS):
            continue  # inside a longer run: not where a token starts
        for rule in _RULES[anchor.group()]:
            match = rule.pattern.match(text, start)
            if match is not None and _plausible(rule, match.group()):
                yield start, match.end(), rule.kind
                position = match.end()
                break


def _plausible(rule: _Rule, value: str) -> bool:
    if is_placeholder(value):
        return False
    if rule.kind == "jwt":
        return _jwt_header(value.partition(".")[0])
    return not rule.random or looks_random(value[2:], min_length=16)


def _jwt_header(part: str) -> bool:
    """Whether ``part`` is a JWT's header: base64url of a JSON object naming its algorithm."""
    try:
        header = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return False
    return header.startswith(b'{"') and (b'"alg"' in header or b'"typ"' in header)
