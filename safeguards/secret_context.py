"""Secrets known by where they stand: a value given to a name that says secret, the password
of a URL, an Authorization header, a private key block, a ``.netrc`` line, a CLI flag.

Each finder takes the text and yields ``(start, end, kind)`` spans of secret values. They are
reached from literal anchors (a name word, ``://``, ``-----BEGIN``) and read forward with
bounded patterns, so their cost grows with the text's length, never faster.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Iterator

from safeguards.secret_names import classify, kind_of
from safeguards.secret_values import (
    is_expression,
    is_hex,
    is_path_or_url,
    is_placeholder,
    is_uuid,
    is_version_or_amount,
    looks_random,
)

Span = tuple[int, int, str]

_NAME_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
_NAME_RUN = re.compile(r"[A-Za-z0-9_.\-]{0,96}")
_MAX_NAME = 64
#: What makes a text worth reading, searched in its ASCII-lower-cased copy: the words of
#: names that hold secrets (and ``bearer``, ``basic``, ``machine``), the commands whose flags
#: take passwords, URLs and key blocks.
TRIGGERS = re.compile(
    r"pass|pwd|pw|secret|token|key|auth|credential|creds|sig=|bearer|basic|machine|mysql|sshpass"
    r"|비밀번호|패스워드|토큰"
)
_NOT_NAMES = frozenset({"mysql", "sshpass"})
# Korean: the name, a particle or a colon, then a value of printable ASCII (a particle after
# it is attached without a space: 비밀번호는 X로 바꿨어요)
_KOREAN = {"비밀번호": "password", "패스워드": "password", "토큰": "token"}
_KOREAN_OPERATOR = re.compile(r"(?:은|는|이|가|을|를|도)?[ \t]*[:=]?[ \t]*")
_ASCII_VALUE = re.compile(r"[!-~]{1,256}")

_ANNOTATED = re.compile(  # api_key: str | None = "...", token: Optional[str] = ...
    r"""(?:\\?["'`])?\]?[ \t]{0,4}:[ \t]{0,4}[A-Za-z_][\w.]{0,30}(?:\[[\w.\[\], |]{0,40}\])?"""
    r"""(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]{0,30}){0,3}[ \t]{0,4}=[ \t]{0,8}"""
)
_ASSIGN = re.compile(r"""(?:\\?["'`])?\]?[ \t]{0,8}(?::=|=>|==|<-|=|:(?!//))[ \t]{0,16}""")
_FLAG_GAP = re.compile(r"""[ \t]{1,4}(?=[^\s\-])""")
_PROSE = re.compile(
    r"[ \t]{1,4}(?:(?:for|of)(?:[ \t]{1,4}[^\s]{1,30}){1,4}[ \t]{1,4})?"
    r"(?:is|was|=|:|(?:is |was |been )?(?:changed|set|reset|rotated|updated) to)"
    r"(?:[ \t]{1,4}(?:now|still|actually))?[ \t]{1,4}"
)
_PAIRED = re.compile(  # {"name": "DB_PASSWORD", "value": ...}, <add key="ApiKey" value=...>
    r"""(\\?["'])[ \t]*,?[ \t]*(?:\r?\n[ \t]*-?[ \t]*)?"""
    r"""(?:\\?["'])?value(?:\\?["'])?[ \t]*[:=][ \t]*"""
)
_ENV_LINE = re.compile(r"(?:^|\n)[ \t]*(?:ENV|ARG|setenv)[ \t]+$")  # Dockerfile, csh
_K8S_NAME = re.compile(r"name:[ \t]*[\"']?$")
_K8S_VALUE = re.compile(r"""[\"']?[ \t]*\r?\n[ \t]*-?[ \t]*value:[ \t]*""")
_QUOTED = re.compile(r"""[fbrFBRu]{0,2}(\\?["'`])([^\n]{1,512}?)\1""")
_BARE = re.compile(r"""[^\s"'`,;&<>(){}\[\]|\\]{1,512}""")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9\-]{1,20})[ \t]{1,4}(?=[^\s])")
_STRONG = re.compile(r"[^A-Za-z'\-]|[a-z][A-Z]")
_FOLLOWING_WORD = re.compile(r"[,.;:!?]?[ \t]+[A-Za-z]")  # the value is a word of a sentence
_CREDENTIAL = re.compile(r"[A-Za-z0-9._~+/=\-]{8,4096}")
_BASIC = re.compile(r"[A-Za-z0-9+/]{8,1024}={0,2}(?![A-Za-z0-9+/=])")
_AFTER_SCHEME = re.compile(r"(?i)(?:bearer|basic|token|bot|apikey)[ \t]{1,4}")
_NETRC = re.compile(
    r"machine[ \t]+\S{1,256}(?:\s{1,16}(?:login|account|port)[ \t]+\S{1,256}){0,3}"
    r"\s{1,16}password[ \t]+(\S{1,256})"
)
_URL_AUTH = re.compile(
    r"""://([^\s/?#@:"'<>\[\]]{0,128}):([^\s/?#"'<>]{1,256})@(?=[A-Za-z0-9\[])"""
)
_CURL_USER = re.compile(
    r"""(?:^|[ \t])(?:-u|--user)[ \t]+(['"]?)[^\s:'"]{1,128}:([^\s'"]{1,256})\1"""
)
_MYSQL_P = re.compile(
    r"""mysql(?:dump|admin|sh)?\b[^\n]{0,200}?[ \t]-p"""
    r"""(?:'([^'\n]{1,128})'|"([^"\n]{1,128})"|([^\s'"]{1,128}))"""
)
_SSHPASS = re.compile(
    r"""sshpass[ \t]+-p[ \t]*(?:'([^'\n]{1,128})'|"([^"\n]{1,128})"|([^\s'"]{1,128}))"""
)
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(
    r"(?:(?:\r?\n|\\r?\\n){1,2}[ \t]{0,8}"  # a line break (real or escaped), or a blank line
    r"(?:[A-Za-z0-9+/=]{1,128}|[A-Za-z][A-Za-z\-]{0,30}: ?[^\n\\]{0,128})"  # base64, a header
    r"(?=\r?\n|\\r?\\n|\Z|[\"']))*"
)
_PEM_SEARCH = 65_536
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
_AWS_NEAR = 300


def name_spans(text: str, hits: list[tuple[int, str]]) -> Iterator[Span]:
    """Values given to names that say secret; ``hits``: where :data:`TRIGGERS` found what.
    A name word inside a name or a value already read is not read again."""
    skip_until = 0
    for position, word in hits:
        if position < skip_until or word in _NOT_NAMES:
            continue
        if word in ("bearer", "basic"):
            yield from _scheme_span(text, position)
            continue
        if word == "machine":
            yield from _netrc_span(text, position)
            continue
        if word in _KOREAN:
            yield from _korean_span(text, position + len(word), _KOREAN[word])
            continue
        start = _name_start(text, position)
        end = _NAME_RUN.match(text, position).end()  # type: ignore[union-attr]
        skip_until = end
        if start is None or end - start > _MAX_NAME:
            continue
        name = text[start:end].strip(".-")
        klass = classify(name)
        if klass is None:
            continue
        for value_start, value_end, kind in _values(text, start, end, klass):
            if kind:
                skip_until = max(skip_until, value_end)
                yield value_start, value_end, kind_of(name, klass) if kind == "?" else kind
                break
            skip_until = max(skip_until, _read_past(text, value_start, value_end))


def _read_past(text: str, start: int, end: int) -> int:
    """Where to look for names again after a value that is no secret: after it, unless it
    was quoted (a quoted string may hold names: ``{"name": "DB_PASSWORD", "value": ...}``)
    or is a URL (its query may: ``?token=...``)."""
    if start and text[start - 1] in "\"'`":
        return start
    query = text.find("?", start, end)
    return query if query >= 0 else end


def _name_start(text: str, position: int) -> int | None:
    start = position
    floor = max(0, position - _MAX_NAME)
    while start > floor and text[start - 1] in _NAME_CHARS:
        start -= 1
    return None if start == floor and start and text[start - 1] in _NAME_CHARS else start


def _values(text: str, start: int, end: int, klass: str) -> Iterator[Span]:
    """Each value the name ``text[start:end]`` may be given, as (start, end, kind): the kind
    is "" when the value is not a secret, "?" when the name's class names it."""
    if start and text[start - 1] == "<" and text.startswith(">", end):  # <password>x</password>
        close = text.find("<", end + 1, end + 514)
        if close > 0:
            secret = accepts(text[end + 1 : close], klass)
            yield end + 1, close, "?" if secret else ""
        return
    spaced = text.startswith("-", start) or _ENV_LINE.search(text, max(0, start - 16), start)
    for operator, prose in _operators(text, start, end, spaced=bool(spaced)):
        if klass == "auth":
            yield _auth_value(text, operator)
        else:
            yield _read_value(text, operator, klass, prose=prose)


def _operators(text: str, start: int, end: int, *, spaced: bool) -> Iterator[tuple[int, bool]]:
    """Where the value may begin after the name, and whether it is read as prose. ``spaced``:
    a space may stand for the operator (``--token VALUE``, Dockerfile ``ENV TOKEN VALUE``)."""
    in_path = start > 0 and text[start - 1] == ":"  # arn:aws:...:secret:name is no assignment
    for pattern in (_PAIRED, _ANNOTATED, _ASSIGN):
        match = pattern.match(text, end)
        if match is not None and not (in_path and "=" not in match.group()):
            yield match.end(), False
    if spaced and (gap := _FLAG_GAP.match(text, end)) is not None:
        yield gap.end(), False
    if _K8S_NAME.search(text, max(0, start - 24), start) and (k8s := _K8S_VALUE.match(text, end)):
        yield k8s.end(), False
    if (prose := _PROSE.match(text, end)) is not None:
        yield prose.end(), True


def _read_value(text: str, position: int, klass: str, *, prose: bool) -> Span:
    quoted = _QUOTED.match(text, position)
    if quoted is not None:
        secret = accepts(quoted.group(2), klass, quoted=True)
        return quoted.start(2), quoted.end(2), "?" if secret else ""
    bare = _BARE.match(text, position)
    if bare is None:
        return position, position, ""
    value_end = bare.end()
    if prose and text[value_end - 1] in ".?:":
        value_end -= 1
    prose = prose or _FOLLOWING_WORD.match(text, value_end) is not None
    secret = accepts(text[position:value_end], klass, quoted=False, prose=prose)
    return position, bare.end(), "?" if secret else ""


def accepts(value: str, klass: str, *, quoted: bool = True, prose: bool = False) -> bool:
    """Whether ``value``, given to a name of class ``klass``, is a secret."""
    if not value or value != value.strip() or is_placeholder(value):
        return False
    if is_path_or_url(value) or is_version_or_amount(value):
        return False
    if klass in ("password", "secret"):
        return _human_secret(value, quoted=quoted, prose=prose)
    if klass in ("token", "key"):
        return looks_random(value, min_length=16) or is_uuid(value)
    if klass == "weak":
        return looks_random(value, min_length=20) and not is_hex(value) and not is_uuid(value)
    if klass == "sig":
        return len(value) >= 16 and looks_random(value.replace("%2B", "+"), min_length=16)
    return False


def _human_secret(value: str, *, quoted: bool, prose: bool) -> bool:
    if len(value) < 6 or len(value) > 256 or len(value.split()) != 1:
        return False
    if not quoted and is_expression(value):
        return False
    if prose and not quoted:
        return _strong(value)
    return True


def _strong(value: str) -> bool:
    """Not a word of a sentence: it has a digit, a symbol other than a hyphen or an
    apostrophe, or a capital right after a small letter."""
    return _STRONG.search(value) is not None


def _auth_value(text: str, position: int) -> Span:
    """An Authorization value: an optional scheme (Bearer, Basic, token, ...) and the
    credential."""
    quoted = _QUOTED.match(text, position)
    start, limit = (quoted.start(2), quoted.end(2)) if quoted else (position, len(text))
    scheme = _SCHEME.match(text, start, limit)
    credential = _CREDENTIAL.match(text, scheme.end() if scheme else start, limit)
    if credential is None:
        return position, position, ""
    span = credential.start(), credential.end()
    value = credential.group()
    if is_placeholder(value) or is_path_or_url(value):
        return *span, ""
    if scheme is not None and scheme.group(1).lower() == "basic":
        return *span, "basic_auth" if _decodes_to_pair(value) else ""
    if scheme is not None:
        return *span, "bearer_token" if looks_random(value, min_length=12) else ""
    if _decodes_to_pair(value):
        return *span, "basic_auth"
    return *span, "bearer_token" if looks_random(value, min_length=12) else ""


def _scheme_span(text: str, position: int) -> Iterator[Span]:
    """``Bearer <token>`` or ``Basic <base64 user:password>`` anywhere (headers in logs)."""
    scheme = _AFTER_SCHEME.match(text, position)
    if scheme is None:
        return
    if text[position] in "Bb" and text[position + 1] == "a":
        basic = _BASIC.match(text, scheme.end())
        if basic is not None and _decodes_to_pair(basic.group()):
            yield basic.start(), basic.end(), "basic_auth"
        return
    token = _CREDENTIAL.match(text, scheme.end())
    value = token.group() if token else ""
    if token and looks_random(value, min_length=16) and not is_placeholder(value):
        yield token.start(), token.end(), "bearer_token"


def _decodes_to_pair(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password and decoded.isprintable())


def _korean_span(text: str, position: int, klass: str) -> Iterator[Span]:
    operator = _KOREAN_OPERATOR.match(text, position)
    value = _ASCII_VALUE.match(text, operator.end()) if operator else None
    if value is None:
        return
    end = value.end() - (text[value.end() - 1] in ".,)")
    if accepts(text[value.start() : end], klass, quoted=False, prose=True):
        yield value.start(), end, kind_of("", klass)


def _netrc_span(text: str, position: int) -> Iterator[Span]:
    match = _NETRC.match(text, position)
    if match is not None and not is_placeholder(match.group(1)):
        yield match.start(1), match.end(1), "passwd"


def url_spans(text: str) -> Iterator[Span]:
    """Passwords in URLs: ``postgres://user:PASSWORD@host``, ``https://:TOKEN@host``."""
    for match in _URL_AUTH.finditer(text):
        password = match.group(2)
        if len(password) >= 3 and not is_placeholder(password, references=False):
            yield match.start(2), match.end(2), "passwd"


def flag_spans(text: str, found: set[str]) -> Iterator[Span]:
    """Passwords given on command lines: ``curl -u user:PASSWORD``, ``mysql -pPASSWORD``,
    ``sshpass -p PASSWORD`` (``found``: the :data:`TRIGGERS` the text holds)."""
    if "-u " in text or "--user " in text:
        for match in _CURL_USER.finditer(text):
            if len(match.group(2)) >= 4 and not is_placeholder(match.group(2)):
                yield match.start(2), match.end(2), "passwd"
    for pattern, word in ((_MYSQL_P, "mysql"), (_SSHPASS, "sshpass")):
        if word in found:
            for match in pattern.finditer(text):
                group = next(g for g in (1, 2, 3) if match.group(g) is not None)
                if len(match.group(group)) >= 4 and not is_placeholder(match.group(group)):
                    yield match.start(group), match.end(group), "passwd"


def key_block_spans(text: str) -> Iterator[Span]:
    """Private key blocks (PEM, OpenSSH, PGP), with their BEGIN and END lines; a block cut
    short (no END line within 64 KB) to the end of its base64 body."""
    next_end = -1  # where the next "-----END " is (each stretch of the text is searched once)
    covered = 0
    for begin in _PEM_BEGIN.finditer(text):
        if begin.start() < covered:
            continue
        if next_end < begin.end() and next_end != len(text):
            found = text.find("-----END ", begin.end())
            next_end = len(text) if found < 0 else found
        end = None
        if next_end - begin.end() <= _PEM_SEARCH:
            end = _PEM_END.match(text, next_end)
        if end is None:
            body = _PEM_BODY.match(text, begin.end())
            end_at = body.end() if body else begin.end()
        else:
            end_at = end.end()
        covered = end_at
        yield begin.start(), end_at, "privkey"


def aws_secret_spans(text: str, key_ids: list[int]) -> Iterator[Span]:
    """An AWS secret access key (40 characters of base64, not all hex) shortly after an access
    key id."""
    searched = 0
    for position in key_ids:
        start = max(position, searched)
        searched = position + _AWS_NEAR
        for match in _AWS_SECRET.finditer(text, start, searched):
            value = match.group()
            if not is_hex(value) and looks_random(value, min_length=40):
                yield match.start(), match.end(), "aws_secretkey"
