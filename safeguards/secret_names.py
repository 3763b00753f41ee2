"""What a name says about the value given to it: ``DB_PASSWORD`` holds a password,
``GITHUB_TOKEN`` a token, ``private_key_id`` only an id, ``max_tokens`` a count.

A name is cut into lower-case words (``AWS_SECRET_ACCESS_KEY`` -> aws, secret, access, key;
``clientSecret`` -> client, secret). Its last word decides first: an id, a name, a path, a
length or a type is not a secret whatever comes before it. Then the words name the class:

- ``password``: a password word (password, passwd, pwd, pass, passphrase; PGPASSWORD). Any
  value that is not a placeholder is a secret, since people choose passwords.
- ``secret``: a secret word (client_secret, SECRET_KEY, credentials). Likewise.
- ``token`` / ``key``: a token, or a key with a qualifier that makes it a credential (api,
  access, private, signing, ...). The value must look machine-made.
- ``weak``: a bare ``key`` or one of unknown purpose; the value must look machine-made and be
  neither a hex digest nor a UUID (cache keys and sort keys are often both).
- ``auth``: an Authorization header (a scheme and a credential) or a bare ``auth`` (a
  registry's base64 ``user:password``).
"""

from __future__ import annotations

import re
from functools import lru_cache


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_PASSWORD = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "passcode", "pw"})
_SECRET = frozenset({"secret", "secrets", "credential", "credentials", "creds", "cred"})
_KEY_QUALIFIERS = _words(
    "api access private secret signing sign master encryption enc auth client app "
    "application account shared subscription webhook service admin license consumer hmac "
    "jwt session cipher crypto integration developer dev management write read ingest "
    "server project org x storage aes"
)
_NOT_KEY = _words(
    "public publishable pub primary foreign sort partition range cache object s3 "
    "idempotency routing dedup dedupe lookup map dict row composite unique natural "
    "surrogate shortcut hot keyboard music group index ssh gpg pgp host known trusted ca "
    "cert certificate translation i18n locale label field column cursor"
)
_NOT_TOKEN = _words(
    "page next continuation cursor csrf xsrf sync pagination resume max num min input "
    "output prompt completion total cancellation lexer parse parser end start eof special"
)
#: A name ending in one of these holds something about a secret, not the secret.
NOT_SECRET_LAST = _words(
    "id ids name names path paths file filename files dir directory url uri urls endpoint "
    "arn ref refs type types kind length len size count counts expiry expires expiration "
    "expired ttl timeout version hash hashed digest checksum sha salt prefix suffix hint "
    "policy header field fields env var variable source location enabled disabled required "
    "rotation format encoding algorithm alg min max regex pattern label description "
    "provider store manager mode method scheme scope scopes usage limit limits reset "
    "changed set flag strength rules validator validation input prompt placeholder example "
    "template column param params config settings options service vault index position "
    "width height color bits fingerprint issuer audience at on date time created updated "
    "lifetime age generator factory class module tokens keys passwords lifespan interval "
    "duration attempts retries error errors message policy valid invalid confirm "
    "confirmation repeat again strategy callback handler endpoint server host port user "
    "username login email account"
)


def words_of(name: str) -> tuple[str, ...]:
    """``name`` cut into lower-case words at separators, case changes and digits."""
    return tuple(w.lower() for w in _WORD.findall(name))


@lru_cache(maxsize=4096)
def classify(name: str) -> str | None:
    """The class of secret ``name`` holds (see the module docstring), or None."""
    words = words_of(name)
    if not words or words[-1] in NOT_SECRET_LAST:
        return None
    if words == ("sig",):
        return "sig"
    if words[-1] in ("authorization", "auth") or words == ("proxy", "authorization"):
        return "auth"
    if any(_is_password(w) for w in words):
        return "password"
    if any(w in _SECRET or w.endswith("secret") for w in words):
        return "secret"
    if words[-1].endswith("token") and words[-1] != "tokens":
        return None if len(words) > 1 and words[-2] in _NOT_TOKEN else "token"
    return _key_class(words)


def _is_password(word: str) -> bool:
    return word in _PASSWORD or word.endswith(("password", "passwd", "passphrase"))


def _key_class(words: tuple[str, ...]) -> str | None:
    for i, word in enumerate(words):
        if word == "key" or (word.endswith("key") and word[:-3] in _KEY_QUALIFIERS):
            before = word[:-3] if word != "key" else (words[i - 1] if i else "")
            if before in _NOT_KEY:
                return None
            return "key" if before in _KEY_QUALIFIERS else "weak"
    return None


def kind_of(name: str, klass: str) -> str:
    """The marker's kind for a value of class ``klass`` given to ``name``."""
    words = words_of(name)
    if ("aws" in words and "secret" in words) or "".join(words) == "secretaccesskey":
        return "aws_secretkey"
    if "".join(words) in ("accountkey", "sharedaccesskey"):
        return "azure_key"
    return {
        "password": "passwd",
        "secret": "credential",
        "token": "token",
        "key": "apikey",
        "weak": "apikey",
        "sig": "azure_sas",
    }.get(klass, klass)
