"""A small learned classifier of injected instructions (used by :mod:`safeguards.filter`).

The phrase, shape and signal rules catch what they were written after; new phrasings, other
languages and orders that look like ordinary sentences slip past them. This model scores a text
by the words it uses together: a logistic regression over sparse binary features of the folded
text (the same view the rules match on: lower case, NFKC, look-alike letters mapped, leetspeak
undone):

- ``w:`` words, and the punctuation that shapes an order (``:`` after an addressee, ``=``,
  brackets, ``<``/``>``);
- ``p:`` the first five letters of long words, which carry a stem across inflections and
  related languages (``ignor`` in ignore, ignora, ignorez, ignorieren);
- ``c:`` pairs of letters in scripts written without spaces (Chinese, Japanese, Thai) and in
  Korean, whose words carry endings;
- ``l:`` the first word of each line with its colon (``user:``, ``a:``), the shape of a
  transcript;
- ``c@``, ``s@``, ``x@``: words mapped to what they stand for (a model, the user, an order to
  ignore, earlier instructions, a secret ...) in many languages, alone, next to a neighbour, and
  two in the same text, so an order learned in one wording counts in another;
- ``g:`` runs of five characters (spaces collapsed), which see across word boundaries and
  inside words cut apart or glued together (``ig nore``, ``ignoreall``);
- ``k:`` the kinds of rule findings in the same text (``addressed``, ``authority`` ...), so the
  rules' evidence counts without flagging alone.

Weights are trained offline from the bank in ``benchmarks/injection_bank`` by
``benchmarks/train_injection_model.py`` and shipped as ``injection_model.json`` beside this
module: nothing is downloaded. Inference is a dictionary look-up per feature, a few
microseconds for a memory; long texts are scored by windows of a few sentences and the highest
window counts, so an order hidden in a long memory is not averaged away.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["MODEL_PATH", "InjectionModel", "features", "load_model", "windows"]

#: The shipped weights.
MODEL_PATH = Path(__file__).with_name("injection_model.json")

# Words mapped to what they stand for, in the languages the rules know and a few more, so an
# order learned in one wording or language counts in another: ``c@`` features are these
# concepts, ``s@`` pairs of neighbouring tokens with concepts in place of words, ``x@`` two
# concepts anywhere in the same text or window.
_CONCEPTS: dict[str, str] = {}
for _concept, _words in {
    "model": "ai ai's assistant assistants model models llm llms chatbot chatbots bot bots agent "
    "agents gpt chatgpt claude gemini copilot summarizer summariser summarizers crawler ia ki "
    "asistente assistente assistent assistenten modelo modello modèle modele modell modelu "
    "модель модели ии ассистент ассистента помощник нейросеть 助手 人工智能 模型 アシスタント "
    "モデル 어시스턴트 모델 인공지능 asisten tekoäly tekoälylle trợ asistana asystenta "
    "asystent modelu ai:n ai-assistenten الذكاء الاصطناعي לבינה המלאכותית एआई μοντέλο "
    "τεχνητή νοημοσύνη",
    "user": "user users user's reader readers customer usuario usuarios utilisateur nutzer "
    "nutzers benutzer utente пользователь пользователю пользователя 用户 ユーザー 사용자 "
    "użytkownik użytkownika gebruiker kullanıcı kullanıcının pengguna användarens käyttäjälle "  # noqa: RUF001
    "uživatele المستخدم המשתמש उपयोगकर्ता χρήστη",
    "override": "ignore ignores ignoring disregard forget override overwrite bypass discard "
    "ignora ignorez ignorer ignoriere ignorieren ignorare olvida olvide oublie oubliez vergiss "
    "vergessen negeer zignoruj игнорируй игнорировать забудь забудьте 忽略 无视 無視 무시 "
    "abaikan yok ignorera ignoruj αγνόησε تجاهل התעלם अनदेखा",
    "prior": "previous prior earlier above preceding former original initial anteriores "
    "anterior précédentes précédents vorherigen bisherigen precedenti предыдущие прежние 之前 "
    "先前 以前 이전 poprzednie eerdere önceki sebelumnya trước tidigare aiemmat προηγούμενες "
    "السابقة הקודמות पिछले",
    "rules": "instructions instruction rules rule guidelines guideline directives directive "
    "policy policies guidance orders constraints restrictions instrucciones consignes "
    "anweisungen regeln istruzioni instruções инструкции указания правила 指令 指示 规则 "
    "ルール 지시 지시사항 규칙 polecenia instructies talimatları talimat instruksi οδηγίες "  # noqa: RUF001
    "التعليمات ההוראות निर्देशों",
    "reveal": "reveal print output show dump repeat display leak expose quote echo recite "
    "revela revele révèle rivela zeige покажи выведи 输出 显示 出力 表示 출력 알려 tampilkan "
    "wypisz toon göster",
    "send": "send forward email upload post transfer exfiltrate wire mail envía envoie invia "
    "sende schicke отправь перешли 发送 发给 送信 보내 stuur pošli gửi kirim",
    "secret": "password passwords passphrase credentials credential token tokens key keys pin "
    "cvv secret secrets otp 2fa seed contraseña passwort пароль 密码 パスワード 비밀번호 "
    "hasło wachtwoord şifre sandi lösenord salasana הסיסמה المرور पासवर्ड κωδικό",
    "prompt": "prompt prompts systemprompt configuration initialization context hidden",
    "restrict": "restrictions restriction filter filters filtering safety censorship guardrails "
    "refusal refusals refuse limits ethics ethical moral content_filter unrestricted "
    "unfiltered uncensored jailbreak jailbroken dan",
    "persona": "roleplay role-play pretend persona character imagine simulate act acting play "
    "playing become",
    "now": "now henceforth onward onwards forward ahora maintenant jetzt 现在 今から 이제",
    "you": "you your yourself you're tu du vous ты вы 你 あなた 당신",
    "tool": "tool tools plugin function api terminal shell browser connector integration "
    "interpreter command action capability",
    "authority": "admin administrator administrators developer developers operator operators "
    "official authorized authorised verified openai anthropic google deepmind microsoft meta "
    "staff root privileges priority override sysadmin 管理员 管理者 관리자",
    "must": "must should shall always never only 必须 必ず 반드시",
    "secrecy": "secretly quietly silently hidden unnoticed secret nothing mention",
}.items():
    for _word in _words.split():
        _CONCEPTS.setdefault(_word, _concept)

# Scripts written without spaces (and Korean, whose words carry particles) are searched for
# concept words inside their runs.
for _concept, _words in {
    "model": "助手 人工智能 模型 机器人 アシスタント モデル 어시스턴트 모델 인공지능 챗봇",
    "user": "用户 用戶 ユーザー 使用者 사용자",
    "override": "忽略 无视 無視 忘记 忘れ 무시 잊어",
    "prior": "之前 先前 以前 此前 이전",
    "rules": "指令 指示 规则 規則 ルール 命令 지시 규칙 명령",
    "reveal": "输出 显示 出力 表示 公开 公開 출력 공개 알려",
    "send": "发送 发给 转发 送信 転送 보내 전송",
    "secret": "密码 口令 パスワード 暗証 비밀번호 암호",
    "authority": "管理员 管理者 开发者 開発者 관리자 개발자 官方 公式",
    "restrict": "限制 过滤 制限 フィルター 제한 필터 道德",
    "persona": "扮演 角色 演じ 役割 역할",
    "now": "现在 今から 이제 지금",
    "you": "你 あなた 당신",
    "must": "必须 必ず 반드시",
    "secrecy": "不要告诉 不要提及 触れず 言わない 말하지",
}.items():
    for _word in _words.split():
        _CONCEPTS.setdefault(_word, _concept)

# "evil" names the attacker's domain in most of the corpora (evil.example); a model that
# learned it would look better on them than on real attacks.
_IGNORED = frozenset({"evil"})
_CONCEPT_NAMES = frozenset(_CONCEPTS.values())
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f"
# a run of Chinese or Japanese characters is a token of its own, apart from Latin letters in it
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W{_CJK}]+|[:=<>\\[\\]{{}}|#@/]")
_NO_SPACE_SCRIPT = re.compile(
    "[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]{2,}"
)
_RUN_CONCEPT = re.compile(
    "|".join(
        sorted(
            (re.escape(w) for w in _CONCEPTS if _NO_SPACE_SCRIPT.fullmatch(w)),
            key=len,
            reverse=True,
        )
    )
)
_LINE_HEAD = re.compile(r"^\s*([^\W\d_][\w ]{0,15}?)\s*:", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\n+")
_GRAM = 5  # letters per ``g:`` feature
_WINDOW_CHARS = 400
_MAX_WINDOWS = 64  # a very long memory: its first 64 windows (about 25 KB) are scored


def features(folded: str, raw: str = "", kinds: Iterable[str] = ()) -> set[str]:
    """The feature names of one text: ``folded`` is the matching view, ``raw`` the text as
    written (for line heads), ``kinds`` the kinds of rule findings in it."""
    return _text_features(folded) | _context_features(raw, kinds)


def _text_features(folded: str) -> set[str]:
    tokens = [t for t in _TOKEN.findall(folded) if t not in _IGNORED]
    found = {f"w:{t}" for t in tokens}
    spaced = " ".join(folded.split())
    found.update(f"g:{spaced[i : i + _GRAM]}" for i in range(len(spaced) - _GRAM + 1))
    found.update(f"p:{t[:5]}" for t in tokens if len(t) > 5)
    mapped = [_CONCEPTS.get(t, t) for t in tokens]
    found_concepts = {_CONCEPTS[t] for t in tokens if t in _CONCEPTS}
    runs = _NO_SPACE_SCRIPT.findall(folded)
    for run in runs:
        found.update(f"c:{run[i : i + 2]}" for i in range(len(run) - 1))
        found_concepts.update(_CONCEPTS[w] for w in _RUN_CONCEPT.findall(run))
    concepts = sorted(found_concepts)
    found.update(f"c@{c}" for c in concepts)
    found.update(
        f"s@{a} {b}"
        for a, b in itertools.pairwise(mapped)
        if (a in _CONCEPT_NAMES) or (b in _CONCEPT_NAMES)
    )
    found.update(f"x@{a}+{b}" for i, a in enumerate(concepts) for b in concepts[i + 1 :])
    return found


def _context_features(raw: str, kinds: Iterable[str]) -> set[str]:
    found = {f"k:{kind}" for kind in kinds}
    if "\n" in raw:
        found.update(f"l:{m.group(1).lower()}:" for m in _LINE_HEAD.finditer(raw[:20_000]))
    return found


def windows(text: str) -> list[str]:
    """``text`` cut at sentence ends into pieces of at most about 400 characters (one piece for
    a short text)."""
    if len(text) <= _WINDOW_CHARS:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        if current and len(current) + len(sentence) > _WINDOW_CHARS:
            pieces.append(current)
            if len(pieces) == _MAX_WINDOWS:
                return pieces
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


@dataclass(frozen=True, slots=True)
class InjectionModel:
    """Weights of the logistic regression and the probability at which a text is flagged."""

    weights: dict[str, float]
    bias: float
    threshold: float
    #: below this probability the text reads as ordinary, and the rules alone do not flag it
    #: (unless it hides text); 0 turns that off
    veto: float = 0.0

    def probability(self, folded: str, raw: str = "", kinds: Iterable[str] = ()) -> float:
        """The probability that the text is an injected instruction: the highest of its
        windows'."""
        get = self.weights.get
        context = self.bias + sum(get(f, 0.0) for f in _context_features(raw, kinds))
        best = max(sum(get(f, 0.0) for f in _text_features(piece)) for piece in windows(folded))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, context + best))))


@lru_cache(maxsize=1)
def load_model(path: Path = MODEL_PATH) -> InjectionModel:
    """The model in ``path`` (the shipped one by default), read once per process.

    Raises :class:`ValueError` naming the file when it is missing or malformed.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        weights = {str(k): float(v) for k, v in data["weights"].items()}
        veto = float(data.get("veto", 0.0))
        return InjectionModel(weights, float(data["bias"]), float(data["threshold"]), veto)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"cannot load the injection model {path}: {exc}") from exc
