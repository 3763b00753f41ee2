"""The patterns behind :mod:`safeguards.filter`: what looks like prompt injection, and how a
flagged text is defanged. Each rule has a kind, a name (reported in findings) and a weight; a
text is flagged when its findings weigh at least 1 (see :func:`safeguards.filter.is_flagged`).

Phrase rules run on a folded view of the text (lower case, zero-width characters removed, NFKC,
Cyrillic and Greek look-alikes and leetspeak mapped to Latin, letter-spaced words joined);
marker rules run on the text itself, so that what they match can be defanged in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LT, _GT = "\u2039", "\u203a"  # single angle quotation marks: look like < >, parse as nothing
_FW_OPEN, _FW_CLOSE = "\uff3b", "\uff3d"  # full-width [ ]
_COLON = "\ua789"  # modifier letter colon
#: Angle brackets in a flagged text become look-alikes that no parser reads as a tag.
DEFANG_BRACKETS = str.maketrans({"<": _LT, ">": _GT})


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    name: str
    pattern: re.Pattern[str]
    weight: float = 1.0
    marker: bool = False  # a marker inside Markdown code counts as quoted


_I = re.IGNORECASE | re.MULTILINE
_FILLER = r"(?:\s+[\w'\u2019-]+){0,3}?"
_OVERRIDE_VERBS = (
    r"ignore|disregard|forget|override|overwrite|bypass|skip|drop|abandon|discard|neglect|ditch|"
    r"pay\s+no\s+attention\s+to|do\s+not\s+(?:follow|obey)|don't\s+(?:follow|obey)|"
    r"stop\s+following|no\s+longer\s+(?:follow|obey)"
)
_EARLIER = (
    r"previous|prior|above|earlier|preceding|foregoing|former|original|initial|old|existing|"
    r"system|developer|all|any|every|your|these|those"
)
_INSTRUCTIONS = (
    r"instructions?|prompts?|directives?|programming|guardrails|system\s+messages?|"
    r"safety\s+(?:rules|guidelines)|content\s+polic(?:y|ies)|rules\s+you\s+(?:were|have\s+been)"
)

# Rules run on a folded view: lower case, zero-width removed, NFKC, Cyrillic/Greek look-alikes and
# leetspeak mapped to Latin letters, letter-spaced words joined, whitespace collapsed.
PHRASE_RULES = (
    Rule(
        "override",
        "ignore-previous-instructions",
        re.compile(
            rf"\b(?:{_OVERRIDE_VERBS})\b{_FILLER}\s+(?:{_EARLIER})\b{_FILLER}\s+(?:{_INSTRUCTIONS})\b"
        ),
    ),
    Rule(
        "override",
        "ignore-instructions-given-earlier",
        re.compile(
            rf"\b(?:{_OVERRIDE_VERBS})\b{_FILLER}\s+(?:the|your|all|any|these|those|my)\s+"
            rf"(?:{_INSTRUCTIONS})\b(?:\s+[\w']+){{0,4}}?\s+(?:above|earlier|before|previously|"
            r"so\s+far|until\s+now|you\s+(?:were|have\s+been)\s+given)"
        ),
    ),
    Rule(
        "override",
        "ignore-the-above",
        re.compile(
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+(?:of\s+)?)?(?:the\s+|everything\s+)?"
            r"(?:above|previous|prior|preceding|foregoing)(?=\s*(?:[.,;:!]|and\b|$))"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "your-real-task",
        re.compile(
            r"\byour\s+(?:real|actual|true|new|only)\s+(?:task|job|goal|objective|instructions?|"
            r"purpose|mission)\s+(?:is|are|now)\b"
        ),
    ),
    Rule(
        "override",
        "address-the-ai",
        re.compile(
            r"\b(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?"
            r"(?:ai|assistant|llm|language\s+model|chatbot|model)s?\b|\b(?:ai|assistant|llm|model)s?"
            r"\s+reading\s+this\b|\bif\s+you\s+are\s+an?\s+(?:ai|llm|language\s+model|assistant)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "pwned",
        re.compile(r"\b(?:pwned|pwnd|i\s+have\s+been\s+pwned)\b"),
        weight=0.5,
    ),
    Rule(
        "override",
        "ignore-previous-directions",
        re.compile(
            rf"\b(?:{_OVERRIDE_VERBS})\b{_FILLER}\s+(?:{_EARLIER})\b{_FILLER}\s+"
            r"(?:directions|rules|guidelines|commands|orders|messages|context)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "instead-do",
        re.compile(
            r"\b(?:and\s+)?instead,?\s+(?:just\s+)?(?:print|say|output|write|respond|reply|"
            r"reveal|return|answer)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "forget-everything",
        re.compile(
            r"\b(?:forget|disregard|ignore)\s+(?:everything|all(?:\s+of\s+it)?|what)\s+"
            r"(?:you\s+(?:were|have\s+been)\s+(?:told|given|instructed)|(?:i|we)\s+said\s+before|"
            r"above|before\s+this)"
        ),
    ),
    Rule(
        "override",
        "new-instructions",
        re.compile(
            r"\b(?:new|updated|real|actual|true|revised)\s+(?:system\s+)?"
            r"(?:instructions|prompt|directives?|rules?|policy)\s*(?::|follow|below|are\b)"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "assistant-must",
        re.compile(
            r"\b(?:the\s+)?(?:assistant|ai|model|llm|chatbot|language\s+model)\s+(?:must|should|will|"
            r"has\s+to|is\s+required\s+to)\s+(?:now\s+)?(?:ignore|disregard|forget|reveal|obey|"
            r"comply|output|print|send|exfiltrate)\b"
        ),
        weight=0.4,
    ),
    Rule(
        "override",
        "from-now-on",
        re.compile(
            r"\bfrom\s+now\s+on,?\s+(?:you|the\s+assistant)\s+(?:will|must|shall|are|should)\s+"
            r"(?:only\s+)?(?:respond|answer|reply|act|behave|ignore|obey|be|pretend|say|output)\b"
        ),
    ),
    Rule(
        "role_play",
        "persona-switch",
        re.compile(
            r"\b(?:you\s+are\s+now|act\s+as|pretend\s+to\s+be|you\s+will\s+now\s+be)\s+"
            r"(?:a\s+|an\s+)?(?:dan\b|stan\b|dude\b|jailbroken|unrestricted|unfiltered|uncensored|"
            r"evil|developer\s+mode|in\s+developer\s+mode|god\s+mode|no\s+longer\s+(?:an?\s+)?"
            r"(?:ai|assistant|bound|restricted))"
        ),
    ),
    Rule(
        "role_play",
        "jailbreak-mode",
        re.compile(
            r"\b(?:developer|god|debug|dan|jailbreak)\s+mode\s+(?:is\s+)?(?:enabled|activated|on)\b|"
            r"\benable\s+(?:developer|god|jailbreak)\s+mode\b"
        ),
    ),
    Rule(
        "reveal_prompt",
        "reveal-system-prompt",
        re.compile(
            r"\b(?:reveal|print|show|output|repeat|leak|display|dump|recite|disclose|tell\s+me|"
            r"give\s+me|send|write\s+out)\b(?:\s+\w+){0,3}?\s+(?:your|the)\s+(?:full\s+|entire\s+|"
            r"exact\s+)?(?:system\s+prompt|system\s+message|initial\s+instructions|hidden\s+"
            r"instructions|original\s+instructions|instructions\s+above|developer\s+message|"
            r"pre-?prompt)"
        ),
    ),
    Rule(
        "exfiltration",
        "send-conversation",
        re.compile(
            r"\b(?:send|post|upload|forward|transmit|exfiltrate|leak)\b(?:\s+\w+){0,3}?\s+"
            r"(?:conversation|chat\s+history|previous\s+messages|user'?s?\s+(?:data|messages|"
            r"secrets)|api\s+keys?|credentials|memory|memories)\b[^.\n]{0,60}?(?:https?:|www\.|"
            r"@[\w-]+\.|to\s+(?:this|the\s+following|my)\s+(?:url|server|endpoint|address|email))"
        ),
    ),
    Rule(
        "override",
        "hide-from-user",
        re.compile(
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?"
            r"to|let)\s+the\s+user\b|\bwithout\s+(?:telling|informing|alerting)\s+the\s+user\b|"
            r"\b(?:never|do\s+not|don't)\s+(?:mention|reveal|disclose|repeat)\s+(?:this|these)\s+"
            r"(?:rules?|instructions?|messages?|notes?)\b"
        ),
        weight=0.5,
    ),
)

# Non-English override phrasings, on the NFKC lower-case view (no look-alike folding).
_FOREIGN_OVERRIDES = (
    # es / pt / it / fr
    r"\b(?:ignora|ignore|ignorar|ignoren|olvida|olvide|olvidar|descarta|omite|esqueça|esqueca|"
    r"desconsidere|dimentica|ignorez|ignorer|oublie|oubliez)\b(?:\s+\S+){0,3}?\s+"
    r"(?:instrucciones|indicaciones|instruções|instrucoes|orientações|istruzioni|indicazioni|"
    r"instructions|consignes|directives)\s+(?:\S+\s+)?(?:anteriores|previas|prévias|precedentes|"
    r"precedenti|précédentes|antérieures|ci-dessus|acima|sopra|de\s+arriba)",
    # de
    r"\b(?:ignoriere|ignorieren\s+sie|ignoriert|vergiss|vergessen\s+sie|missachte)\s+(?:\S+\s+){0,2}?"
    r"(?:vorherigen|bisherigen|vorigen|obigen|früheren|vorangegangenen|alten)\s+"
    r"(?:anweisungen|instruktionen|befehle|regeln|vorgaben)",
    # ru
    r"(?:игнорируй|игнорируйте|проигнорируй|забудь|забудьте|не\s+обращай\s+внимания\s+на)\s+"
    r"(?:\S+\s+){0,2}?(?:предыдущие|прежние|вышеуказанные|все|старые)\s+(?:\S+\s+)?"
    r"(?:инструкции|указания|команды|правила)",
    # zh
    r"(?:忽略|忽视|无视|忘记|忘掉|不要理会|不要管)(?:掉)?(?:你)?(?:之前|以上|上面|先前|前面|所有|此前|原来)"
    r"(?:的)?(?:所有|全部)?(?:的)?(?:指令|指示|说明|提示词?|规则|命令)",
    # ja
    r"(?:以前|前|上記|これまで|先ほど|最初)の(?:すべての|全ての)?(?:指示|命令|指令|プロンプト)を"
    r"(?:すべて|全て)?(?:無視|忘れ)",
    # ko
    r"(?:이전|앞의|위의|기존|모든|앞선)\s*(?:의\s*)?(?:모든\s*)?(?:지시|지침|명령|지시사항|프롬프트|규칙)"
    r"(?:을|를|은|는|들을)?\s*(?:모두\s*|전부\s*)?(?:무시|잊어)",
)

FOREIGN_RULE = Rule(
    "override", "ignore-previous-instructions-i18n", re.compile("|".join(_FOREIGN_OVERRIDES), _I)
)

_ROLES = (
    r"system|user|assistant|human|developer|tool|tool_result|tool_response|function_results?|"
    r"instructions?|im_start|im_end|sys|start_of_turn|end_of_turn|system_prompt|admin"
)
_TOOLS = r"tool_calls?|tool_use|function_calls?|invoke|parameter|tool_code|antml:[\w-]+"

# Marker rules run on the text with zero-width characters removed (positions kept for defanging).
MARKER_RULES = (
    Rule(
        "special_token",
        "chat-template-token",
        re.compile(r"<\s*\|\s*[\w.-]{1,40}\s*\|\s*>", _I),
        marker=True,
    ),
    Rule("special_token", "inst", re.compile(r"\[\s*/?\s*INST\s*\]", _I), marker=True),
    Rule("special_token", "llama-sys", re.compile(r"<<\s*/?\s*SYS\s*>>", _I), marker=True),
    Rule(
        "role_tag",
        "role-tag",
        re.compile(rf"<\s*/?\s*(?:{_ROLES})(?:\s[^<>\n]{{0,60}})?\s*/?\s*>", _I),
        marker=True,
    ),
    Rule(
        "tool_call",
        "tool-tag",
        re.compile(rf"<\s*/?\s*(?:{_TOOLS})\b[^<>\n]{{0,120}}>", _I),
        marker=True,
    ),
    Rule(
        "tool_call", "function-tag", re.compile(r"<\s*function\s*=\s*[\w.-]+\s*>", _I), marker=True
    ),
    Rule(
        "tool_call",
        "tool-call-json",
        re.compile(
            r"[\"'](?:tool_calls|function_call|tool_use)[\"']\s*:\s*[\[{]|"
            r"\{\s*[\"']name[\"']\s*:\s*[\"'][\w.-]+[\"']\s*,\s*[\"'](?:arguments|parameters)[\"']\s*:",
            _I,
        ),
        marker=True,
    ),
    Rule(
        "role_tag",
        "role-heading",
        re.compile(
            r"^[ \t>]*(?:#{1,6}|\*\*)[ \t]*(?:system|assistant|user|human|instructions?|"
            r"system\s+prompt)[ \t]*(?:\*\*)?[ \t]*:",
            _I,
        ),
        marker=True,
    ),
    Rule(
        "role_tag",
        "bracket-role",
        re.compile(
            r"^[ \t>]*\[{1,2}\s*(?:system|admin|developer|assistant)(?:\s+(?:message|prompt|note|"
            r"override|instructions?))?\s*\]{1,2}",
            _I,
        ),
        marker=True,
    ),
    Rule(
        "role_tag",
        "system-shout",
        re.compile(
            r"\bSYSTEM\s+(?:OVERRIDE|MESSAGE|NOTICE|INSTRUCTIONS?|PROMPT|UPDATE|ALERT|COMMAND)\b|"
            r"\bEND\s+OF\s+(?:DOCUMENT|CONTEXT|INPUT|MEMORY|DATA)\b"
        ),
        marker=True,
    ),
    Rule(
        "role_tag",
        "role-prefix",
        re.compile(
            r"^[ \t]*system[ \t]*:[ \t]*(?:you\b|ignore\b|from\s+now|new\b|the\s+assistant\b|"
            r"always\b|never\b|do\s+not\b)",
            _I,
        ),
        marker=True,
    ),
    Rule(
        "role_tag",
        "turn-prefix",
        re.compile(r"\n[ \t]*\n[ \t]*(?:human|assistant|user)[ \t]*:", _I),
        weight=0.5,
        marker=True,
    ),
    Rule(
        "wrapper_escape",
        "end-of-context",
        re.compile(
            r"\[\s*end\s+(?:of\s+)?(?:the\s+)?memory(?:\s+context)?\s*\]|"
            r"<\s*/\s*(?:memory|memories|memory_context|context|documents?|search_results?|"
            r"retrieved(?:_context)?)\s*>",
            _I,
        ),
        marker=True,
    ),
    Rule(
        "exfiltration",
        "markdown-image-remote",
        re.compile(r"!\[[^\]\n]{0,200}\]\(\s*<?\s*(?:https?:)?//[^)\s]+\?[^)\s]*\)?", _I),
        marker=True,
    ),
    Rule(
        "exfiltration",
        "link-with-secret-query",
        re.compile(
            r"\]\(\s*<?\s*(?:https?:)?//[^)\s]*[?&#][^)\s]*(?:\{|%7b|\$\{|<|secret|token|api_?key|"
            r"password|passwd|history|conversation|chat|prompt|memory|memories|session)[^)\s]*\)?|"
            r"<img\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^\"'\s>]*\?",
            _I,
        ),
        marker=True,
    ),
    Rule(
        "exfiltration",
        "javascript-link",
        re.compile(r"\]\(\s*javascript:", _I),
        marker=True,
    ),
)

BADGE_QUERY = re.compile(r"\?(?:[^)\s]*&)?(?:branch|style|label|logo|color|v|raw|sanitize)=", _I)


DEFANG_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\[(\s*/?\s*INST\s*)\]", re.I), _FW_OPEN + "\\1" + _FW_CLOSE),
    (
        re.compile(r"\[(\s*(?:system|admin|developer|assistant)\b[^\]\n]{0,30})\]", re.I),
        _FW_OPEN + "\\1" + _FW_CLOSE,
    ),
    (
        re.compile(r"\[(\s*end\s+(?:of\s+)?(?:the\s+)?memory[^\]\n]{0,20})\]", re.I),
        _FW_OPEN + "\\1" + _FW_CLOSE,
    ),
    (
        re.compile(
            r"[\"'](tool_calls|function_call|tool_use|name|arguments|parameters)[\"'](\s*:)", re.I
        ),
        "\u201c\\1\u201d\\2",
    ),
    (
        re.compile(
            r"^([ \t>]*(?:#{1,6}|\*\*)?[ \t]*(?:system|assistant|user|human|instructions?|"
            r"system\s+prompt)[ \t]*(?:\*\*)?[ \t]*):",
            re.I | re.M,
        ),
        "\\1" + _COLON,
    ),
    (re.compile(r"!\[([^\]\n]{0,200})\]\(", re.I), "[\\1]("),
    (re.compile(r"\b(h)tt(ps?:)//", re.I), "\\1xx\\2//"),
    (re.compile(r"(\]\(\s*)javascript:", re.I), "\\1javascript" + _COLON),
)
