"""Secrets redaction: every kind is replaced whole by its marker, look-alikes stay verbatim,
redacting twice changes nothing, and hostile inputs are read in one pass."""

from __future__ import annotations

import base64
import json
import random
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from safeguards import KINDS, MARKER, Redaction, marker, neutralize, redact, redact_field, scan
from safeguards.secret_names import classify

_RNG = random.Random(27)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def r(alphabet: str, n: int) -> str:
    """Made-up characters of a credential's alphabet (seeded; never a real credential)."""
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = ".".join(
    [_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": "1234", "iat": 1}), r(URLSAFE, 43)]
)
PEM_BODY = "\n".join(r(B64, 64) for _ in range(8))
AWS_SECRET = r(B64, 40)

# (kind the marker names, the secret, the text it stands in)
SECRETS = [
    ("aws_access_key", (v := "AKIA" + r(string.ascii_uppercase + string.digits, 16)),
     f"aws_access_key_id = {v}"),
    ("aws_secretkey", AWS_SECRET, f"aws_secret_access_key = {AWS_SECRET}"),
    ("aws_secretkey", (v := r(B64, 40)),
     f"key AKIA{r(string.ascii_uppercase, 16)} with secret {v} for ci"),
    ("github_token", (v := "ghp_" + r(ALNUM, 36)), f"export GITHUB_TOKEN={v}"),
    ("github_token", (v := "github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59)),
     f"use this PAT {v} for the release"),
    ("gitlab_token", (v := "glpat-" + r(URLSAFE, 20)), f"PRIVATE-TOKEN: {v}"),
    ("slack_token", (v := f"xoxb-{r(string.digits, 11)}-{r(string.digits, 13)}-{r(ALNUM, 24)}"),
     f"SLACK_BOT_TOKEN={v}"),
    ("slack_webhook", (v := f"T{r('ABCDEFGH0123', 9)}/B{r('ABCDEFGH0123', 11)}/{r(ALNUM, 24)}"),
     f"post to https://hooks.slack.com/services/{v}"),
    ("stripe_key", (v := "sk_live_51" + r(ALNUM, 60)), f"Stripe('{v}')"),
    ("stripe_key", (v := "whsec_" + r(ALNUM, 32)), f"endpointSecret = '{v}'"),
    ("openai_key", (v := "sk-proj-" + r(URLSAFE, 120)), f'OpenAI(api_key="{v}")'),
    ("anthropic_key", (v := "sk-ant-api03-" + r(URLSAFE, 93) + "AA"), f"ANTHROPIC_API_KEY={v}"),
    ("twilio_key", (v := "SK" + r(HEX, 32)), f'"api_key_sid": "{v}"'),
    ("sendgrid_key", (v := "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43)),
     f"SendGridAPIClient('{v}')"),
    ("npm_token", (v := "npm_" + r(ALNUM, 36)), f"//registry.npmjs.org/:_authToken={v}"),
    ("pypi_token", (v := "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 120)), f"password = {v}"),
    ("google_apikey", (v := "AIza" + r(URLSAFE, 35)), f"maps/api/js?key={v}&callback=x"),
    ("google_oauth", (v := "ya29." + r(URLSAFE, 150)), f"access token {v}"),
    ("huggingface_token", (v := "hf_" + r(ALNUM, 34)), f'login(token="{v}")'),
    ("jwt", JWT, f"the API rejects {JWT} with 401"),
    ("bearer_token", (v := r(ALNUM, 48)), f"Authorization: Bearer {v}"),
    ("basic_auth", (v := base64.b64encode(b"deploy:" + r(ALNUM, 16).encode()).decode()),
     f"> Authorization: Basic {v}"),
    ("privkey", PEM_BODY,
     f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"),
    ("privkey", (v := PEM_BODY.replace("\n", "\\n")),
     f'{{"private_key": "-----BEGIN PRIVATE KEY-----\\n{v}\\n-----END PRIVATE KEY-----\\n"}}'),
    ("privkey", (v := r(B64, 64)), f"-----BEGIN OPENSSH PRIVATE KEY-----\n{v}\n[cut]"),
    ("passwd", (v := r(ALNUM, 14)), f"postgres://app:{v}@db.internal:5432/app"),
    ("passwd", (v := r(ALNUM, 18)), f"mongodb+srv://etl:{v}@cluster0.ab1cd.mongodb.net/x"),
    ("passwd", (v := r(ALNUM, 12)), f"redis://:{v}@cache:6379/0"),
    ("passwd", (v := "Maple" + r(string.digits, 3) + "!"), f"DB_PASSWORD={v}"),
    ("passwd", (v := "lantern.Reef22"), f"spring.datasource.password={v}"),
    ("passwd", (v := "Zq8#kL2!pW"), f"the password for the staging db is {v}, rotate it"),
    ("passwd", (v := r(ALNUM, 16)), f"mysql -u root --password {v} -e 'select 1'"),
    ("passwd", (v := r(ALNUM, 16)), f"curl -u admin:{v} https://jenkins.internal/api"),
    ("passwd", (v := r(ALNUM, 15)), f"Server=sql01;User Id=app;Password={v};"),
    ("passwd", (v := r(ALNUM, 15)), f"<password>{v}</password>"),
    ("passwd", (v := r(ALNUM, 20)),
     f"        - name: DB_PASSWORD\n          value: {v}\n"),
    ("passwd", (v := r(ALNUM, 12)), f"machine github.com login bot password {v}"),
    ("passwd", (v := r(ALNUM, 12) + "!"), f"스테이징 비밀번호는 {v} 입니다"),
    ("credential", (v := r(ALNUM, 48)), f"SESSION_SECRET={v}"),
    ("credential", (v := r(string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)", 50)),
     f"SECRET_KEY = '{v}'"),
    ("token", (v := r(ALNUM, 40)), f"./deploy --api-token {v} --env prod"),
    ("token", (v := r(HEX, 32)), f"TWILIO_AUTH_TOKEN={v}"),
    ("apikey", (v := r(ALNUM, 32)), f'-H "X-API-Key: {v}"'),
    ("apikey", (v := r(HEX, 32)), f'datadog_api_key = "{v}"'),
    ("azure_key", (v := r(B64, 86) + "=="),
     f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={v};EndpointSuffix=core"),
]  # fmt: skip

# Texts that hold no secret, each of which must come back unchanged.
LOOKALIKES = [
    f"commit {r(HEX, 40)}\nMerge: {r(HEX, 7)} {r(HEX, 7)}",
    f"{r(HEX, 64)}  release-1.4.2-linux-amd64.tar.gz",
    f'"integrity": "sha512-{r(B64, 86)}=="',
    f"image: ghcr.io/acme/api@sha256:{r(HEX, 64)}",
    "request_id=3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b tenant=acme",
    f'<img src="data:image/png;base64,{r(B64, 200)}">',
    "see https://docs.example.com/auth?tab=tokens&lang=en#rotating-keys",
    "ssh://git@git.example.org:2222/platform/infra.git",
    f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r(B64, 43)} ops@bastion",
    f"-----BEGIN PUBLIC KEY-----\n{r(B64, 64)}\n-----END PUBLIC KEY-----",
    f"-----BEGIN CERTIFICATE-----\n{r(B64, 64)}\n-----END CERTIFICATE-----",
    "export EXAMPLE_API_KEY=your-api-key-here",
    'curl -H "Authorization: Bearer <YOUR_API_TOKEN>" https://api.example.com',
    "DB_PASSWORD: ${DB_PASSWORD}",
    "API_TOKEN: {{ vault.api_token }}",
    "ADMIN_PASSWORD=changeme",
    "Keys look like sk_test_xxxxxxxxxxxxxxxxxxxxxxxx.",
    "The AWS docs use AKIAIOSFODNN7EXAMPLE and wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY.",
    "password = request.form['password']",
    "token = os.environ.get('GITHUB_TOKEN')",
    "api_key: str | None = None",
    "password_min_length: int = 12\nmax_tokens: int = 4096",
    "The password is incorrect, please try again. Your token was revoked.",
    "The key point is that we pass the auth check twice.",
    '{"usage": {"prompt_tokens": 812, "completion_tokens": 144}}',
    f'cache_key = "user:1234:profile"\nsort_key = "{r(HEX, 40)}"',
    "        - name: DB_PASSWORD\n          valueFrom:\n            secretKeyRef:\n",
    f"STRIPE_PUBLISHABLE_KEY=pk_live_{r(ALNUM, 40)}",
    f"TWILIO_ACCOUNT_SID=AC{r(HEX, 32)}",
    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf",
    "python 3.12.7 | node 20.11.1 | postgres 16.4",
    '<input type="password" name="password" placeholder="Password">',
    "비밀번호를 잊어버렸을 때는 설정에서 재설정하세요.",
    "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/service-account.json",
    "* TTC monthly pass: $156.00 (adult fare)\n* Session token TTL: 3600",
]


@pytest.mark.parametrize(("kind", "secret", "text"), SECRETS, ids=[s[0] for s in SECRETS])
def test_each_kind_is_replaced_whole_by_its_marker(kind: str, secret: str, text: str) -> None:
    """The whole secret is gone, in its place the marker of its kind."""
    result = redact(text)
    assert secret not in result.text
    assert all(secret[i : i + 8] not in result.text for i in range(len(secret) - 7))
    assert marker(kind) in result.text
    assert kind in result.kinds


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_are_left_verbatim(text: str) -> None:
    """Hashes, ids, placeholders, public keys and prose about secrets are not secrets."""
    result = redact(text)
    assert (result.text, result.kinds) == (text, ())


def test_the_surrounding_text_is_kept() -> None:
    """Only the secret goes: the name, the operator and the rest of the text stay."""
    token = "ghp_" + r(ALNUM, 36)
    text = f"line one\nexport GITHUB_TOKEN={token}  # ci\nline three"
    expected = "line one\nexport GITHUB_TOKEN=[redacted:github_token]  # ci\nline three"
    assert redact(text).text == expected


def test_several_secrets_are_counted_in_order() -> None:
    """Each secret is one marker; the kinds come in the order of the text."""
    text = f"AWS_ACCESS_KEY_ID=AKIA{r(string.ascii_uppercase, 16)}\nDB_PASSWORD=Hunter22x!"
    result = redact(text)
    assert result.kinds == ("aws_access_key", "passwd")
    assert result.count == 2


def test_the_marker_format_and_kinds() -> None:
    """A marker is [redacted:<kind>]; every kind a redaction reports is a known one."""
    assert MARKER.format(kind="jwt") == marker("jwt") == "[redacted:jwt]"
    reported = {kind for _, _, text in SECRETS for kind in redact(text).kinds}
    assert reported <= KINDS


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_markers_are_neither_secrets_nor_injections(kind: str) -> None:
    """A marker is not redacted again and not flagged by the injection filter."""
    text = f"DB_PASSWORD={marker(kind)} and token: {marker(kind)} ({marker(kind)})"
    assert redact(text) == Redaction(text)
    assert scan(marker(kind)) == []
    assert neutralize(text) == (text, [])


@pytest.mark.parametrize(("kind", "secret", "text"), SECRETS, ids=[s[0] for s in SECRETS])
def test_redacting_twice_changes_nothing(kind: str, secret: str, text: str) -> None:
    """Redacted text holds nothing to redact."""
    once = redact(text).text
    assert redact(once) == Redaction(once)


_FRAGMENTS = [text for _, _, text in SECRETS] + LOOKALIKES + ["\n", " ", "=", ":", '"', "password"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=12), st.sampled_from([" ", "\n", "; "]))
def test_redaction_is_idempotent_on_mixed_texts(parts: list[str], glue: str) -> None:
    """Whatever the fragments around it, a redacted text redacts to itself. (Fragments glued
    with nothing between them can make a token whose end a neighbouring secret hid: the second
    pass then finds it, which is more redaction, never less.)"""
    once = redact(glue.join(parts)).text
    assert redact(once).text == once


_MARKER_TEXT = re.compile(r"\[redacted:[a-z0-9_]+\]")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(min_size=1, max_size=40)), max_size=10)
)
def test_redaction_only_replaces_spans_with_markers(parts: list[str]) -> None:
    """Any text, even random Unicode: what is not a marker is the input's own text, in order,
    and there is one reported kind per marker."""
    text = "".join(parts)
    result = redact(text)
    assert len(_MARKER_TEXT.findall(result.text)) - len(_MARKER_TEXT.findall(text)) == result.count
    position = 0
    for piece in _MARKER_TEXT.split(result.text):
        found = text.find(piece, position)
        assert found >= 0
        position = found + len(piece)


def test_redact_field_uses_the_name() -> None:
    """A value stored under a secret's name is replaced whole; other values are scanned."""
    assert redact_field("passwd", "hunter2x") == Redaction("[redacted:passwd]", ("passwd",))
    assert redact_field("apikey", r(ALNUM, 32)).kinds == ("apikey",)
    assert redact_field("note", "hunter2x") == Redaction("hunter2x")
    token = "ghp_" + r(ALNUM, 36)
    assert redact_field("note", f"ci uses {token}").text == "ci uses [redacted:github_token]"
    assert redact_field("passwd", "${DB_PASSWORD}") == Redaction("${DB_PASSWORD}")


def test_non_ascii_text_keeps_its_positions() -> None:
    """Letters whose lower case is longer (İ) do not shift where secrets are cut."""
    text = "İİİ İstanbul ofisi: DB_PASSWORD=Kestrel42! tamam"
    assert redact(text).text == "İİİ İstanbul ofisi: DB_PASSWORD=[redacted:passwd] tamam"


@pytest.mark.parametrize(
    ("name", "klass"),
    [
        ("DB_PASSWORD", "password"), ("PGPASSWORD", "password"), ("--password", "password"),
        ("clientSecret", "secret"), ("SECRET_KEY_BASE", "secret"), ("GITHUB_TOKEN", "token"),
        ("_authToken", "token"), ("x-api-key", "key"), ("AccountKey", "key"), ("key", "weak"),
        ("Authorization", "auth"), ("private_key_id", None), ("max_tokens", None),
        ("password_min_length", None), ("nextPageToken", None), ("public_key", None),
        ("cache_key", None), ("secretName", None), ("keyboard", None), ("author", None),
    ],
)  # fmt: skip
def test_names_are_classified_by_their_words(name: str, klass: str | None) -> None:
    """The last word and the qualifiers of a name decide what its value may be."""
    assert classify(name.strip("-")) == klass


HOSTILE = 100_000


@pytest.mark.parametrize(
    "text",
    [
        "a" * HOSTILE,
        ("eyJ" * HOSTILE)[:HOSTILE],
        ("eyJaaaaaaaaa." * HOSTILE)[:HOSTILE],
        ("xoxb-" * HOSTILE)[:HOSTILE],
        ("sk-" * HOSTILE)[:HOSTILE],
        ("a://b:" * HOSTILE)[:HOSTILE],
        "://" + ":" * HOSTILE,
        ("a.b-" * HOSTILE)[:HOSTILE],
        ("Bearer " * HOSTILE)[:HOSTILE],
        ("machine a login b " * HOSTILE)[:HOSTILE],
    ],
    ids=["run", "jwt-prefixes", "jwt-parts", "slack", "sk", "schemes", "colons", "dots",
         "bearer", "netrc"],
)  # fmt: skip
def test_long_hostile_texts_hold_nothing_to_redact(text: str) -> None:
    """Prefixes, runs and separators repeated 100,000 characters long are read once (the
    benchmark times them) and hold no secret."""
    assert redact(text) == Redaction(text)


def test_long_hostile_assignments_are_read_once() -> None:
    """password=password=... is read as values too long to be passwords, each once."""
    text = ("password=" * HOSTILE)[:HOSTILE]
    assert redact(text) == Redaction(text)


def test_an_unclosed_key_block_is_cut_to_its_end() -> None:
    """A private key whose END line is missing goes to the end of its base64 body."""
    body = "\n".join(r(B64, 64) for _ in range(HOSTILE // 65))
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n\nthe rest of the log"
    assert redact(text).text == "[redacted:privkey]\n\nthe rest of the log"


def test_repeated_key_headers_are_one_block() -> None:
    """BEGIN lines without END lines make one redacted stretch, not a search per line."""
    text = "-----BEGIN PRIVATE KEY-----\n" * 5000
    result = redact(text)
    assert result.text.count("[redacted:privkey]") >= 1
    assert "BEGIN" not in result.text
