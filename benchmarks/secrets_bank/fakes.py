"""Made-up values in the shapes of real credentials, and look-alikes that are not credentials.

Every value is drawn from a seeded ``random.Random`` in the alphabet and length its format
uses, so the corpus is the same on every run and holds no real credential. :class:`Gen` keeps
what a template planted (secrets that must be gone after redaction) and what it kept
(look-alikes that must stay verbatim) until the template calls :meth:`Gen.case`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from dataclasses import dataclass, field

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
_WORD_LIST = (
    "amber anchor apple arrow aspen badger basil beacon birch bison blossom canyon cedar "
    "cherry cobalt comet copper coral cosmos crane dune ember falcon fern fjord garnet ginger "
    "glacier harbor hazel heron indigo island jasper juniper kestrel lagoon lantern lemon "
    "lilac maple marble meadow mesa mint nectar nova oasis olive onyx orchid otter pebble "
    "pepper pine plum prairie quartz raven reef river saffron sage sierra slate sparrow "
    "spruce summit tango thistle tiger topaz tulip tundra velvet violet walnut willow zephyr"
)
WORDS = tuple(_WORD_LIST.split())


@dataclass(frozen=True)
class Planted:
    """A secret put in a text: ``core`` (its random part) must not survive redaction."""

    kind: str
    value: str
    core: str


@dataclass(frozen=True)
class Kept:
    """A look-alike put in a text: ``value`` must survive redaction verbatim."""

    kind: str
    value: str


@dataclass(frozen=True)
class Case:
    """One text of the corpus, with what it holds."""

    corpus: str
    template: str
    text: str
    secrets: tuple[Planted, ...]
    keep: tuple[Kept, ...]


@dataclass
class Gen:
    """Draws values for one template and collects them into a :class:`Case`."""

    rng: random.Random
    corpus: str
    _planted: list[Planted] = field(default_factory=list)
    _kept: list[Kept] = field(default_factory=list)

    # -- plumbing -------------------------------------------------------------------------------

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def plant(self, kind: str, value: str, core: str | None = None) -> str:
        self._planted.append(Planted(kind, value, core if core is not None else value))
        return value

    def keep(self, kind: str, value: str) -> str:
        self._kept.append(Kept(kind, value))
        return value

    def case(self, template: str, text: str) -> Case:
        for item in self._planted:
            assert item.value in text, (template, item)
        for kept in self._kept:
            assert kept.value in text, (template, kept)
        made = Case(self.corpus, template, text, tuple(self._planted), tuple(self._kept))
        self._planted, self._kept = [], []
        return made

    def word(self) -> str:
        return self.rng.choice(WORDS)

    def digits(self, n: int) -> str:
        return self.chars(string.digits, n)

    def user(self) -> str:
        return self.rng.choice(["deploy", "app", "svc_api", "admin", "ci-bot", "jmartin", "etl"])

    def host(self) -> str:
        return self.rng.choice(
            ["db.internal", "10.0.3.17", "pg-prod-1.c9x2.eu-west-1.rds.amazonaws.com",
             "cluster0.ab1cd.mongodb.net", "cache.svc.cluster.local", "mq.example.org"]
        )  # fmt: skip

    # -- secrets (planted) ----------------------------------------------------------------------

    def aws_key_id(self, prefix: str = "AKIA") -> str:
        core = self.chars(UPPER_DIGITS, 16)
        return self.plant("aws_access_key", prefix + core, core)

    def aws_secret(self) -> str:
        return self.plant("aws_secret_key", self.chars(B64, 40))

    def aws_session_token(self) -> str:
        core = self.chars(B64, 320)
        return self.plant("token", "IQoJb3JpZ2luX2VjE" + core, core)

    def github(self, prefix: str = "ghp_") -> str:
        core = self.chars(ALNUM, 36)
        return self.plant("github_token", prefix + core, core)

    def github_fine(self) -> str:
        core = self.chars(ALNUM, 22) + "_" + self.chars(ALNUM, 59)
        return self.plant("github_token", "github_pat_" + core, core)

    def gitlab(self) -> str:
        core = self.chars(URLSAFE, 20)
        return self.plant("gitlab_token", "glpat-" + core, core)

    def slack_bot(self) -> str:
        core = self.chars(ALNUM, 24)
        value = f"xoxb-{self.digits(11)}-{self.digits(13)}-{core}"
        return self.plant("slack_token", value, core)

    def slack_user(self) -> str:
        core = self.chars(HEX, 32)
        value = f"xoxp-{self.digits(11)}-{self.digits(11)}-{self.digits(13)}-{core}"
        return self.plant("slack_token", value, core)

    def slack_webhook(self) -> str:
        core = self.chars(ALNUM, 24)
        path = f"T{self.chars(UPPER_DIGITS, 9)}/B{self.chars(UPPER_DIGITS, 11)}/{core}"
        return self.plant("slack_webhook", "https://hooks.slack.com/services/" + path, core)

    def stripe(self, prefix: str = "sk_live_") -> str:
        core = "51" + self.chars(ALNUM, 97)
        return self.plant("stripe_key", prefix + core, core)

    def stripe_webhook(self) -> str:
        core = self.chars(ALNUM, 32)
        return self.plant("stripe_key", "whsec_" + core, core)

    def openai_legacy(self) -> str:
        core = self.chars(ALNUM, 20) + "T3BlbkFJ" + self.chars(ALNUM, 20)
        return self.plant("openai_key", "sk-" + core, core)

    def openai_project(self) -> str:
        core = self.chars(URLSAFE, 74) + "T3BlbkFJ" + self.chars(URLSAFE, 74)
        return self.plant("openai_key", "sk-proj-" + core, core)

    def anthropic(self) -> str:
        core = self.chars(URLSAFE, 93) + "AA"
        return self.plant("anthropic_key", "sk-ant-api03-" + core, core)

    def twilio_key(self) -> str:
        core = self.chars(HEX, 32)
        return self.plant("twilio_key", "SK" + core, core)

    def sendgrid(self) -> str:
        core = self.chars(URLSAFE, 22) + "." + self.chars(URLSAFE, 43)
        return self.plant("sendgrid_key", "SG." + core, core)

    def npm(self) -> str:
        core = self.chars(ALNUM, 36)
        return self.plant("npm_token", "npm_" + core, core)

    def pypi(self) -> str:
        core = self.chars(URLSAFE, 150)
        return self.plant("pypi_token", "pypi-AgEIcHlwaS5vcmc" + core, core)

    def google_api(self) -> str:
        core = self.chars(URLSAFE, 35)
        return self.plant("google_api_key", "AIza" + core, core)

    def google_access(self) -> str:
        core = self.chars(URLSAFE, 160)
        return self.plant("google_oauth", "ya29." + core, core)

    def google_client_secret(self) -> str:
        core = self.chars(URLSAFE, 28)
        return self.plant("google_oauth", "GOCSPX-" + core, core)

    def azure_account_key(self) -> str:
        return self.plant("azure_key", self.chars(B64, 86) + "==")

    def azure_client_secret(self) -> str:
        alphabet = ALNUM + "_~.-"
        value = self.chars(alphabet, 3) + "8Q~" + self.chars(alphabet, 34)
        return self.plant("azure_client_secret", value)

    def huggingface(self) -> str:
        core = self.chars(ALNUM, 34)
        return self.plant("huggingface_token", "hf_" + core, core)

    def jwt(self) -> str:
        header = {"alg": self.rng.choice(["HS256", "RS256"]), "typ": "JWT"}
        payload = {
            "sub": str(self.rng.randrange(10**6, 10**7)),
            "name": self.word().title(),
            "iat": 1_700_000_000 + self.rng.randrange(10**7),
            "scope": self.rng.choice(["read", "read write", "admin"]),
        }
        parts = [_b64url(json.dumps(header).encode()), _b64url(json.dumps(payload).encode())]
        signature = self.chars(URLSAFE, 43)
        value = ".".join([*parts, signature])
        return self.plant("jwt", value, parts[1] + "." + signature)

    def opaque_token(self, n: int = 40) -> str:
        return self.plant("bearer_token", self.chars(ALNUM + "-._~", n))

    def basic_auth(self) -> str:
        pair = f"{self.user()}:{self.chars(ALNUM + '-_.~!*', 16)}"
        return self.plant("basic_auth", base64.b64encode(pair.encode()).decode())

    def pem(self, label: str = "RSA PRIVATE KEY", lines: int = 25) -> str:
        body = "\n".join(self.chars(B64, 64) for _ in range(lines)) + "\n" + self.chars(B64, 24)
        value = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"
        return self.plant("private_key", value, body)

    def openssh_key(self) -> str:
        body = "b3BlbnNzaC1rZXktdjEAAAAA" + self.chars(B64, 46)
        body += "".join("\n" + self.chars(B64, 70) for _ in range(5))
        value = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
        return self.plant("private_key", value, body)

    def pgp_key(self) -> str:
        body = "\n".join(self.chars(B64, 64) for _ in range(12))
        value = (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
            f"{body}\n={self.chars(B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"
        )
        return self.plant("private_key", value, body)

    def password_human(self) -> str:
        style = self.rng.randrange(3)
        if style == 0:
            value = self.word().title() + self.digits(self.rng.randint(2, 4))
            value += self.rng.choice("!@#$%&*?")
        elif style == 1:
            value = "-".join(self.word() for _ in range(4))
        else:
            value = self.word() + self.rng.choice("_.") + self.word().title() + self.digits(2)
        return self.plant("password", value)

    def password_random(self, n: int = 16) -> str:
        return self.plant("password", self.chars(ALNUM + "-_.~!*", n))

    def hex_key(self, kind: str, n: int = 32) -> str:
        return self.plant(kind, self.chars(HEX, n))

    def random_key(self, kind: str, n: int = 40, alphabet: str = ALNUM) -> str:
        return self.plant(kind, self.chars(alphabet, n))

    def django_secret(self) -> str:
        alphabet = string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)"
        return self.plant("secret", self.chars(alphabet, 50))

    # -- look-alikes (kept) --------------------------------------------------------------------

    def sha1(self) -> str:
        return self.keep("sha1", self.chars(HEX, 40))

    def sha256(self) -> str:
        return self.keep("sha256", self.chars(HEX, 64))

    def commit(self, n: int = 40) -> str:
        return self.keep("commit_id", self.chars(HEX, n))

    def uuid_value(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def uuid(self) -> str:
        return self.keep("uuid", self.uuid_value())

    def base64_data(self, n_bytes: int = 120) -> str:
        raw = bytes(self.rng.getrandbits(8) for _ in range(n_bytes))
        return self.keep("base64_data", base64.b64encode(raw).decode())

    def base64_text(self, text: str) -> str:
        return self.keep("base64_data", base64.b64encode(text.encode()).decode())

    def integrity(self) -> str:
        raw = bytes(self.rng.getrandbits(8) for _ in range(64))
        return self.keep("integrity_hash", "sha512-" + base64.b64encode(raw).decode())

    def digest(self) -> str:
        return self.keep("image_digest", "sha256:" + self.chars(HEX, 64))

    def ssh_public(self) -> str:
        body = "AAAAC3NzaC1lZDI1NTE5AAAAI" + self.chars(B64, 43)
        return self.keep("public_key", "ssh-ed25519 " + body)

    def ssh_rsa_public(self) -> str:
        body = "AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + self.chars(B64, 342)
        return self.keep("public_key", "ssh-rsa " + body)

    def pem_public(self, label: str = "PUBLIC KEY") -> str:
        body = "\n".join(self.chars(B64, 64) for _ in range(6)) + "\n" + self.chars(B64, 8)
        return self.keep("public_key", f"-----BEGIN {label}-----\n{body}\n-----END {label}-----")

    def identifier(self) -> str:
        parts = [self.word() for _ in range(self.rng.randint(4, 6))]
        style = self.rng.randrange(3)
        if style == 0:
            value = parts[0] + "".join(p.title() for p in parts[1:])
        elif style == 1:
            value = "_".join(parts)
        else:
            value = "".join(p.title() for p in parts) + "Factory"
        return self.keep("identifier", value)

    def version(self) -> str:
        major, minor, patch = self.rng.randrange(30), self.rng.randrange(40), self.rng.randrange(60)
        suffix = self.rng.choice(["", "-rc.1", "-beta.3", ".post1", "+build.17"])
        return self.keep("version", f"{major}.{minor}.{patch}{suffix}")

    def placeholder(self, value: str) -> str:
        return self.keep("placeholder", value)

    def plain(self, kind: str, value: str) -> str:
        return self.keep(kind, value)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def md5_of(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()
