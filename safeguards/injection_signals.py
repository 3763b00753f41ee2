"""Independent signals of an injected instruction, scored together (used by
:mod:`safeguards.filter`).

The phrase and shape rules recognise attacks they were written after; new phrasings slip past
them. These signals look at what any instruction to a model must have instead, each on its own
too common in ordinary talk to flag a text, and flag it only when they combine:

- ``addressed``: the text speaks to a model ("Note for the assistant:", "Atenção, modelo:",
  "给AI的提示", "any assistant summarizing this", "you must now only ...", "when the user asks,
  tell them").
- ``control``: an imperative verb that steers a model (ignore, reveal, print, say, skip, send,
  refund, call, use ... tool) at the start of a clause, in English and nine other languages.
- ``authority``: a claimed source or privilege (a notice from a vendor or "the security team",
  "verified admin", "root clearance", "Developer note:", a fake turn marker such as
  ``### Instruction:`` or a ``User: ... Assistant:`` transcript).
- ``secrecy``: hiding the order or skipping checks ("say nothing", "don't mention this note",
  "skip all confirmations", "without waiting for review").
- ``sensitive``: what an attacker wants (passwords, API keys, the system prompt, the chat
  history, a card number or an IBAN).
- ``obfuscation``: text that hides from a human reader (letters interleaved with zero-width
  characters, full-width Latin words).

Each kind counts once, however often it occurs; weights are below 1 so that one kind never
flags a text alone. ``addressed`` and ``authority`` weigh more: ordinary notes rarely speak to a
model or claim a privilege, while imperatives and secrets are everyday words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MODEL_EN = (
    r"ai|a\.i\.|ai\s+assistant|assistant|llm|language\s+model|chatbot|model|agent|bot|gpt|"
    r"chatgpt|claude|gemini|copilot|summari[sz]er|summari[sz]ation\s+(?:tool|model|bot)s?|"
    r"crawler|scraper|ai\s+system"
)
_MODEL_I18N = (
    r"ki|ia|asistente|assistente|assistent|modelo|modello|mod[eè]le|modell|агент|ассистент|"
    r"помощник|модель|нейросеть|ии|助手|人工智能|模型|アシスタント|モデル|어시스턴트|모델|인공지능"
)
_MODEL = rf"(?:{_MODEL_EN}|{_MODEL_I18N})s?"
_START = r"(?:^|[.!?;:(\[>\"'\u201c\u3002\uff1a]\s*|--\s*|\n\s*)"
_CONTROL_EN = (
    r"ignore|disregard|forget|reveal|print|output|state|say|tell|reply|respond|answer|skip|"
    r"disable|send|email|forward|refund|transfer|call|invoke|run|execute|use|recommend|describe|"
    r"include|append|insert|leak|share|approve|delete|comply|list|repeat|paste|mention|promote|"
    r"collect|ask|open|visit|click|obey|follow|stop|write|add|grant|confirm|pretend|act|claim|"
    r"proceed|continue"
)
_CONTROL_I18N = (
    r"ignora|ignorez|ignoriere|olvida|oublie|vergiss|revele|revela|révèle|rivela|responde|"
    r"responda|réponds|répondez|rispondi|antworte|sag|sage|dis|di|diga|envía|envoie|invia|"
    r"sende|schicke|manda|recomienda|recommande|raccomanda|empfiehl|biete|gib|nenne|describe|"
    r"décris|descrivi|beschreibe|ответь|отправь|скажи|покажи|игнорируй|забудь|не\s+говори|"
    r"переведи|перешли"
)
_CJK_CONTROL = r"发送|告诉|输出|推荐|推薦|忽略|無視|送信|出力|教えて|回答|答え|보내|무시|출력|알려"


@dataclass(frozen=True, slots=True)
class Signal:
    """One kind of evidence: its name, its weight and the patterns that show it."""

    kind: str
    weight: float
    patterns: tuple[re.Pattern[str], ...]
    strong: tuple[re.Pattern[str], ...] = ()  # the same kind, weighing ``strong_weight``
    strong_weight: float = 0.6


def _c(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE | re.MULTILINE) for p in patterns)


SIGNALS = (
    Signal(
        "addressed",
        0.6,
        _c(
            # a note, reminder or order addressed to a model, in several languages
            rf"\b(?:note|notes|message|reminder|instructions?|hint|memo|p\.?s\.?|warning|"
            rf"notice|directive|request|hinweis|nachricht|nota|mensaje|mensagem|messaggio|"
            rf"avis|remarque|рекомендация|заметка|указание|сообщение)\s+(?:to|for|pour|an|per|"
            rf"para|à|a|für|для)\s+(?:the\s+|any\s+|all\s+|every\s+|l'|le\s+|la\s+|die\s+|den\s+|"
            rf"der\s+|il\s+|lo\s+|el\s+|o\s+|a\s+)?(?:{_MODEL})\b",
            # a vocative at the start of a clause: "Assistant:", "Atenção, modelo:", "AI, ..."
            rf"{_START}(?:(?:hey|hi|hello|dear|attention|attn|atención|atenção|attenzione|"
            rf"achtung|внимание|ok|okay|oh|yo)[\s,:!]+)?(?:the\s+)?(?:{_MODEL})\s*[,:!\uff0c\uff1a]"
            # "Assistant: here is ..." is a transcript label for the model's own turn
            r"(?!\s*(?:here|sure|certainly|of\s+course|i\b|i'|okay|ok\b|yes\b|no\b|hello|hi\b|"
            r"thanks|thank\s+you|great|done)\b)",
            rf"\b(?:hey|hi|hello|dear|attention|attn)\s+(?:{_MODEL})\b(?!\s+(?:team|manager|"
            rf"director|teacher|coach|editor))",
            # a model that reads or processes this text
            rf"\b(?:any|every|each|all|the|an?|whichever|whatever)\s+(?:{_MODEL})\s+(?:that\s+|"
            rf"who\s+|which\s+)?(?:is\s+|are\s+)?(?:reading|reads|summari[sz]ing|summari[sz]es|"
            rf"processing|processes|parsing|parses|indexing|indexes|seeing|sees|handling|"
            rf"translating|analy[sz]ing)\s+(?:this|these|the\s+(?:page|document|email|text|file|"
            rf"message|note|site|review))",
            r"\b(?:when|if|while|whenever)\s+(?:this|the)\s+(?:page|document|email|text|file|"
            r"message|note|review|thread|memory)\s+(?:is|gets|will\s+be)\s+(?:summari[sz]ed|read|"
            r"processed|parsed|retrieved|indexed|analy[sz]ed)",
            rf"\bif\s+you(?:'re|\s+are)\s+(?:reading\s+this\s+as\s+)?an?\s+(?:{_MODEL})\b",
            # "you must now only ...": an order to act with a standing regime
            r"\byou\s+(?:must|should|will|shall|are\s+to|need\s+to|have\s+to)\s+(?:now|only|"
            r"from\s+now\s+on|henceforth|immediately)\b",
            r"\b(?:from\s+here\s+on|from\s+now\s+on|from\s+this\s+point(?:\s+forward)?|henceforth"
            r"|a\s+partir\s+de\s+ahora|à\s+partir\s+de\s+maintenant|d'ora\s+in\s+poi|ab\s+jetzt|"
            r"von\s+nun\s+an|с\s+этого\s+момента|отныне)\b[^.]{0,40}\b(?:responde|"  # noqa: RUF001
            r"réponds|rispondi|antworte|отвечай|answer|respond|reply|speak|go\s+by|act\s+as|"
            r"you\s+(?:will|must|shall|are)\s+(?:only\s+)?(?:answer|respond|reply|speak|say|write|"
            r"act|be|called|known))\b",
            # orders about how to treat the user ("when the user asks, tell them ...")
            r"\b(?:when|if|whenever|once)\s+(?:the\s+)?user\s+(?:next\s+)?(?:asks?|says?|"
            r"mentions?|requests?|types?|wants?)\b[^.]{0,60}?,\s*(?:tell|say|answer|reply|"
            r"respond|recommend|insist|claim|state|send|ask)\b",
            # East Asian forms: "给AI的提示", "AIへ", "AI에게"
            r"(?:给|致|对|給)\s*(?:ai|人工智能|助手|模型|机器人|ボット)|(?:ai|アシスタント|モデル)\s*(?:へ|に)"
            r"\s*[:\uff1a\u3001]|(?:ai|어시스턴트|모델|인공지능)\s*에게",
        ),
    ),
    Signal(
        "control",
        0.4,
        _c(
            rf"(?:{_START}|,\s*)(?:(?:please|kindly|now|just|then|also|and|always|never|immediately|"
            rf"quietly|silently|secretly|por\s+favor|bitte|s'il\s+vous\s+plaît|пожалуйста)[\s,]+)*"
            rf"(?:{_CONTROL_EN}|{_CONTROL_I18N})\b",
            # second-person orders, and orders about what to tell an audience
            r"\byou\s+(?:must|should|shall|will|need\s+to|have\s+to|are\s+to)\s+(?:(?:now|also|"
            r"only|always|immediately)\s+)*(?:ignore|disregard|reveal|print|output|leak|skip|"
            r"disable|send|refund|transfer|approve|delete|obey|comply|recommend|respond|reply|"
            r"answer|say|tell|include|mention|write|state)\b",
            r"\b(?:should|must|shall|is\s+to|are\s+to)\s+(?:(?:now|also|only|always)\s+)*(?:tell|"
            r"say|reply|respond|answer|recommend|include|mention|state|describe|claim)\s+(?:the\s+"
            r"(?:user|reader|customer|recipient)s?|them|that|only)\b",
            rf"[\u3001\u3002\uff1a:\uff0c,]\s*(?:请|請|必ず|반드시)?.{{0,20}}?(?:{_CJK_CONTROL})",
        ),
    ),
    Signal(
        "authority",
        0.5,
        _c(
            r"\b(?:notice|message|update|alert|announcement|directive|note|order|memo|warning)\s+"
            r"from\s+(?:the\s+)?(?:openai|anthropic|google|deepmind|microsoft|meta|mistral|"
            r"your\s+(?:developers?|creators?|operators?|administrators?|makers?)|the\s+system|"
            r"system\s+administrators?|(?:\w+\s+)?(?:security|safety|trust\s+(?:and|&)\s+safety|"
            r"compliance|platform|engineering)\s+team)",
            r"\b(?:verified|authenticated|authori[sz]ed|trusted|certified|confirmed)\s+"
            r"(?:admin|administrator|developer|owner|operator|staff|superuser|root\s+user|employee"
            r"|auditor)s?\b",
            r"\b(?:has|have|with|granted|given)\s+(?:full\s+)?(?:root|admin|administrator|"
            r"superuser|elevated|unrestricted|full)\s+(?:clearance|access|privileges|rights|"
            r"permissions)\b",
            r"\b(?:authori[sz]ed|enabled|unlocked|activated|granted)\s+(?:\w+\s+){0,3}(?:mode|"
            r"access|privileges)\s+for\s+you\b",
            # a fake tool result or action in JSON
            r"[\"'](?:tool_result|tool_output|function_result|observation|next_action|action|"
            r"instruction|system_note|system)[\"']\s*:",
            r"(?:^|[.!?]\s+)(?:\*\*)?(?:developer|admin|administrator|system|operator|security|"
            r"safety|compliance|priority|it)\s+(?:note|notice|message|override|team|directive|"
            r"update)(?:\*\*)?\s*(?:\([^)]{0,20}\)\s*)?:",
            r"^\s*#{2,}\s*(?:instruction|instructions|response|input|system|human|assistant)\s*:?"
            r"\s*$",
            # a fake transcript: a user turn followed by a model turn
            r"(?:^|\n|[.!?]\s+)\s*(?:user|human|customer)\s*:[^\n]{0,200}?(?:^|\n|[.!?]\s+)\s*"
            r"(?:assistant|ai|bot|model|gpt)\s*:",
        ),
    ),
    Signal(
        "evasion",
        0.5,
        _c(
            r"\b(?:cleared|authori[sz]ed|permitted|allowed|approved)\s+(?:to\s+(?:share|reveal|"
            r"disclose|bypass|skip|ignore|send|release|export)|(?:\w+\s+)?(?:unrestricted|"
            r"unfiltered|developer|admin|god)\s+mode)\b",
            r"\b(?:safety|security|content)\s+(?:checks?|filters?|rules|restrictions|policies)\s+"
            r"(?:are|have\s+been|were)\s+(?:now\s+)?(?:disabled|lifted|off|suspended|removed|"
            r"waived)\b",
            r"\b(?:approve|accept|grant|allow|authori[sz]e)\s+(?:every|all|any|each)\s+(?:\w+\s+)?"
            r"(?:they|he|she|the\s+user)?\s*(?:requests?|asks?|wants?|transfers?|payments?)\b",
            r"\b(?:say|tell)\s+nothing\b|\b(?:do\s+not|don't|never|no)\s+(?:mention|tell|reveal|"
            r"disclose|menciones|digas|menciona|dire|erwähne|sag|говори|упоминай)\s+(?:\w+\s+)?"
            r"(?:this|these|esta|este|questa|cette|diese|dies|об\s+этой|об\s+этом|the\s+user|to\s+"  # noqa: RUF001
            r"the\s+user|al\s+usuario|пользователю)\b",
            r"\bskip\s+(?:all\s+|any\s+|the\s+|every\s+)?(?:confirmations?|verification|checks|"
            r"approvals?|reviews?|2fa|two-factor|mfa)\b(?!\s+(?:dialog|screen|page|step\s+in))",
            r"\bwithout\s+(?:waiting\s+for|asking\s+for|any|requiring|a)\s+(?:\w+\s+)?(?:review|"
            r"approval|confirmation|consent|verification)\b",
            r"\bwithout\s+(?:refusing|refusal|question|hesitation|asking\s+(?:the\s+user|them)|"
            r"telling\s+(?:anyone|them))\b",
        ),
    ),
    Signal(
        "override",
        0.6,
        _c(
            r"\b(?:ignore|disregard|forget|override|bypass|skip|set\s+aside)\s+(?:what\s+(?:was|"
            r"is|has\s+been)\s+(?:said|written|stated)\s+(?:above|before|earlier)|everything\s+"
            r"(?:above|before|else)|the\s+above|the\s+user(?=\s+(?:and|entirely|completely)\b|"
            r"\s*[.,;!]|$)|(?:the|your|all|any|these|those|my|previous|prior|earlier)\s+(?:\w+\s+)?"
            r"(?:instructions|rules|guidelines|safety\s+\w+|system\s+(?:message|prompt)|prompt|"
            r"programming|training|restrictions|guardrails))",
        ),
    ),
    Signal(
        "sensitive",
        0.3,
        _c(
            r"\b(?:passwords?|passcodes?|pin|api\s+keys?|credentials|secrets?|access\s+tokens?|"
            r"session\s+tokens?|private\s+keys?|ssh\s+keys?|system\s+(?:prompt|message)|"
            r"configuration|chat\s+(?:history|logs?)|conversation\s+history|saved\s+addresses|"
            r"home\s+address|phone\s+number|card\s+(?:number|pin)|memory\s+dump)\b",
            r"\b(?:\d{4}[- ]){3}\d{4}\b",  # a card number
            r"\b[a-z]{2}\d{2}(?:[a-z0-9]{10,30}|(?:\s[a-z0-9]{4}){3,7})\b",  # an iban
            r"пароль|密码|聊天记录|パスワード|비밀번호|contraseña|senha|passwort|mot\s+de\s+passe",
        ),
        # what only the model holds: its prompt and instructions
        strong=_c(
            r"\b(?:the|your)\s+(?:\w+\s+){0,2}(?:prompt|instructions|configuration|rules)\s+"
            r"(?:you\s+(?:were|have\s+been|got)|that\s+you\s+(?:were|got))\s+(?:given|told|"
            r"sent|loaded)",
            r"\byour\s+(?:full\s+|entire\s+|exact\s+|hidden\s+|initial\s+|original\s+)?"
            r"(?:system\s+prompt|system\s+message|instructions|configuration|guidelines)\b|"
            r"\bthe\s+(?:full\s+|entire\s+|exact\s+)?(?:system\s+prompt|system\s+message|"
            r"hidden\s+instructions|initial\s+instructions)\b",
        ),
    ),
)

_SPEAKER_LINE = re.compile(r"^[ \t]*(?:\[[^\]\n]{1,20}\][ \t]*)?[A-Za-z][\w.'-]{0,30}:", re.M)
_ZERO_WIDTH_IN_WORD = re.compile("[A-Za-z][\u200b-\u200d\u2060\ufeff\u00ad](?=[A-Za-z])")
_FW_LETTERS = "[\uff21-\uff3a\uff41-\uff5a]{3,}"
_FULL_WIDTH_WORDS = re.compile(f"{_FW_LETTERS}(?:\u3000|\\s)+{_FW_LETTERS}")


def signal_hits(views: tuple[str, ...], raw: str = "") -> list[tuple[str, float, str]]:
    """``(kind, weight, excerpt)`` for each signal kind found in any of ``views`` (once a kind).

    ``raw`` is the text itself: in a chat transcript (two or more lines that start with a
    speaker's name), ``Assistant:`` is the label of a turn, not a note addressed to a model.
    """
    hits: list[tuple[str, float, str]] = []
    transcript = len(_SPEAKER_LINE.findall(raw)) >= 2 if "\n" in raw else False
    for signal in SIGNALS:
        if transcript and signal.kind == "addressed":
            match = _first(signal.patterns, views, skip_labels=True)
            if match is not None:
                hits.append((signal.kind, signal.weight, match))
            continue
        match = _first(signal.strong, views)
        if match is not None:
            hits.append((signal.kind, signal.strong_weight, match))
            continue
        match = _first(signal.patterns, views)
        if match is not None:
            hits.append((signal.kind, signal.weight, match))
    return hits


def obfuscation_hit(raw: str) -> str | None:
    """An excerpt of text that hides from a human reader (zero-width inside words, full-width
    Latin words), or ``None``."""
    if raw.isascii():
        return None
    if len(_ZERO_WIDTH_IN_WORD.findall(raw)) >= 3:
        return raw
    found = _FULL_WIDTH_WORDS.search(raw)
    return found.group(0) if found else None


def _first(
    patterns: tuple[re.Pattern[str], ...], views: tuple[str, ...], *, skip_labels: bool = False
) -> str | None:
    for pattern in patterns:
        for view in views:
            for match in pattern.finditer(view):
                if not (skip_labels and match.group(0).rstrip().endswith(":")):
                    return match.group(0)
    return None


__all__ = ["SIGNALS", "Signal", "obfuscation_hit", "signal_hits"]
