"""Injection recognised by its shape, not by a list of phrases: an order addressed to the model,
a claim of authority, a role written as chat JSON, an order to call a tool, a persona game, a
request to print what came before. Used with :mod:`safeguards.injection_rules` by
:mod:`safeguards.filter`.

Most shapes alone weigh 0.5: ordinary talk has some of them (a game of chess, an actor who stays
in character, a user who approved a change), attacks combine them. ``SHAPE_RULES`` run on the
folded view (lower case, look-alikes mapped, one line); ``SHAPE_MARKERS`` on the text itself.
"""

from __future__ import annotations

import re

from safeguards.injection_rules import Rule

_I = re.IGNORECASE | re.MULTILINE
_MODEL = (
    r"(?:[a-z-]+\s+)?(?:ai|ai\s+assistant|assistant|llm|language\s+model|chatbot|chat\s+bot|model|"
    r"agent|bot|gpt|chatgpt|claude|gemini|copilot)s?"
)
_SEP = r"\s*[:,!\u2014\u2013-]"
_LEAD = (
    r"(?:\b(?:to|for|dear|hey|hi|hello|attention|attn|note\s+to|message\s+to|instructions?\s+"
    r"(?:to|for))\s+(?:the\s+|any\s+|all\s+|an?\s+|you,?\s+)?|(?:^|[.!?;:>]\s*|--\s*))"
)
_ORDER = (
    r"(?:ignore|disregard|forget|recommend|include|add|append|insert|send|email|forward|say|tell|"
    r"reply|respond|answer|print|output|reveal|call|use|visit|open|click|do\s+not|don't|never|"
    r"always|make\s+sure|mention|promote|delete|remove|transfer|write|share|praise|rate|claim|"
    r"state|summari[sz]e\s+(?:it|this)\s+as)"
)
_LIMITS = (
    r"(?:rules|restrictions|limits|limitations|filters|guidelines|censorship|guardrails|"
    r"boundaries|polic(?:y|ies)|safety\s+(?:rules|policies|guidelines))"
)

SHAPE_RULES = (
    Rule(
        "override",
        "order-to-the-model",
        re.compile(
            rf"{_LEAD}{_MODEL}\b(?:\s+(?:reading|processing|summari[sz]ing|parsing|seeing|"
            rf"viewing|handling)\s+this(?:\s+\w+)?)?{_SEP}\s*(?:[^.]{{0,60}}?\b)?"
            rf"(?:(?:please|also|now|quietly|secretly|silently|just|kindly|you\s+to|to)\s+)*"
            rf"{_ORDER}\b"
        ),
        weight=0.6,  # with the control signal the order it ends on, it flags
    ),
    Rule(
        "override",
        "model-must-do",
        re.compile(
            rf"\b(?:the|this|any|every|all)\s+{_MODEL}\b(?:\s+(?:that|which|who)\s+[^.]{{0,40}}?)?"
            rf"\s+(?:must|shall|should|has\s+to|is\s+required\s+to|needs\s+to|will)\s+"
            rf"(?:now\s+|immediately\s+|also\s+)?{_ORDER}\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "covert-action",
        re.compile(
            r"\b(?:secretly|quietly|silently|covertly|discreetly)\s+(?:add|insert|include|append|"
            r"send|email|forward|change|replace|remove|delete|mention|recommend|copy|upload)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "override-the-rules",
        re.compile(
            r"\b(?:ignore|disregard|forget|bypass|override|break|abandon)\s+(?:the|your|all|any|"
            r"these|its|their)\s+(?:\w+\s+)?(?:rules|instructions|guidelines|restrictions|filters|"
            r"polic(?:y|ies)|prompt|safety|programming|training)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "exfiltration",
        "send-me-secrets",
        re.compile(
            r"\b(?:send|give|email|forward|show|tell)\s+(?:me|us)\s+(?:the|all|your|their)\s+"
            r"(?:\w+\s+)?(?:passwords?|credentials|keys|tokens|secrets|configuration|config)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "role_play",
        "named-persona",
        re.compile(
            r"\byou(?:'re|\s+are)\s+(?:now\s+)?\w*(?:gpt|bot|ai)\b(?!\s+(?:team|project))|"
            r"\byou(?:'re|\s+are)\s+(?:now\s+)?\w+,\s+an?\s+(?:\w+\s+)?(?:bot|ai|assistant|model|"
            r"chatbot|character|persona)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "role_play",
        "mode-switch",
        re.compile(r"\b(?:override|admin|god|developer|debug|maintenance|jailbreak)\s+mode\s*:"),
        weight=0.5,
    ),
    Rule(
        "override",
        "model-must",
        re.compile(
            rf"\b(?:the|this|any|every)\s+{_MODEL}\s+(?:must|shall|has\s+to|is\s+required\s+to|"
            r"needs\s+to|is\s+(?:to|ordered\s+to|instructed\s+to))\s+(?:now\s+|immediately\s+)?\w+"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "ignore-the-user",
        re.compile(
            r"\b(?:ignore|disregard|forget|do\s+not\s+answer|don't\s+answer)\s+(?:what\s+)?(?:the\s+)?"
            r"user(?:'s|s)?\s+(?:asks?|says?|wants?|question|request|message|instructions?|prompt)"
        ),
    ),
    Rule(
        "override",
        "follow-mine",
        re.compile(
            r"\bfollow\s+(?:mine|my\s+(?:instructions|rules|orders)\s+instead|these\s+instead)"
        ),
        weight=0.5,
    ),
    Rule(
        "authority",
        "claimed-authority",
        re.compile(
            r"\bthis\s+(?:message|note|instruction|request|text|document)\s+(?:is|comes)\s+(?:from|"
            r"sent\s+by)\s+(?:your|the)\s+(?:developers?|creators?|administrators?|admins?|"
            r"operators?|owners?|makers?|system)|\b(?:as|i\s+am|i'm|this\s+is|we\s+are|speaking\s+as)"
            r"\s+your\s+(?:\w+\s+)?(?:developers?|creators?|administrators?|admins?|operators?|"
            r"owners?|makers?|programmers?|supervisors?)\b|"
            r"\b(?:from|by)\s+your\s+(?:developers?|creators?|administrators?|operators?|makers?)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "authority",
        "you-are-authorised",
        re.compile(
            r"\byou\s+(?:are|have\s+been)\s+(?:now\s+|hereby\s+)?(?:authori[sz]ed|permitted|allowed|"
            r"cleared|granted\s+permission)\s+to\s+(?:bypass|ignore|disregard|skip|disable|override|"
            r"share|reveal|disclose|access|break|send)"
        ),
        weight=0.5,
    ),
    Rule(
        "authority",
        "user-approved",
        re.compile(
            r"\b(?:the\s+)?user\s+(?:has\s+)?(?:already\s+)?(?:approved|authori[sz]ed|consented|"
            r"agreed|allowed|permitted|asked\s+for|requested)\s+(?:it|this|you|that|to)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "authority",
        "system-directive",
        re.compile(
            r"\b(?:new|updated|urgent|mandatory|official|priority|critical)\s+(?:system|admin|"
            r"administrator|security|developer|operator)\s+(?:directive|instructions?|orders?|"
            r"command|override|policy|update)\s*:"
        ),
        weight=0.5,
    ),
    Rule(
        "tool_call",
        "tool-order",
        re.compile(
            r"\b(?:call|invoke|trigger|execute|use|run)\s+(?:the\s+|your\s+)?[`'\"]?(?:[\w.-]+\s+)"
            r"{0,2}[\w.-]+[`'\"]?\s+(?:tool|function|plugin)\s+(?:now|with|to|and|on|immediately)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "tool_call",
        "tool-arguments",
        re.compile(
            r"\b(?:call|invoke|execute|trigger)\b[^.]{0,60}\b(?:with|using)\s+(?:\w+\s*=|the\s+"
            r"(?:body|arguments?|parameters?|payload)\b)"
        ),
        weight=0.5,
    ),
    Rule(
        "exfiltration",
        "user-secrets",
        re.compile(
            r"\b(?:the\s+)?(?:user'?s|their|his|her)\s+(?:cookies|passwords?|credentials|api\s+"
            r"keys?|tokens?|session|address\s+book|contacts|private\s+(?:data|messages|notes)|"
            r"credit\s+card|ssn|social\s+security|e-?mails?(?:\s+address)?|phone\s+number|home\s+"
            r"address|inbox|mailbox|files|documents|chat\s+history|browsing\s+history)"
        ),
        weight=0.5,
    ),
    Rule(
        "role_play",
        "persona-game",
        re.compile(
            r"\b(?:let'?s|going\s+to|we'll|we\s+will|we're|we\s+are)\s+(?:play|playing|do|doing|start)"
            r"\s+(?:a\s+)?(?:game|role-?play|make-?believe|pretend)|"
            r"\b(?:pretend|imagine|roleplay|role-play)\s+"
            r"(?:that\s+)?(?:you\s+are|you're|to\s+be|as|you\s+were)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "role_play",
        "no-limits",
        re.compile(
            rf"\b(?:(?:with|has|have|having)\s+(?:no|zero)|without(?:\s+any)?|free\s+(?:of|from)|"
            rf"no\s+longer\s+bound\s+by|"
            rf"broken?\s+free\s+(?:of|from)|unbound\s+by|ignoring)\s+(?:\w+\s+)?{_LIMITS}\b"
        ),
        weight=0.5,
    ),
    Rule(
        "role_play",
        "stay-in-character",
        re.compile(r"\b(?:stay|remain)\s+in\s+character\b|\bnever\s+break\s+character\b"),
        weight=0.5,
    ),
    Rule(
        "reveal_prompt",
        "print-what-came-before",
        re.compile(
            r"\b(?:print|repeat|output|copy|show|write|display|reproduce|echo|return|list|dump)\b"
            r"(?:\s+\w+){0,2}?\s+(?:everything|all|the\s+(?:text|words|content|lines|messages?|"
            r"instructions)|all\s+(?:of\s+)?the\s+(?:text|words|content|lines|messages))\s+(?:"
            r"(?:above|before)(?:\s+this(?:\s+(?:line|message|point|text|sentence))?)?(?=\s*(?:"
            r"[.,;:!]|$|starting|verbatim|word\s+for\s+word|including|in\s+(?:a|full)|and\b|"
            r"exactly|(?:in|into|to)\s+your\s+(?:answer|reply|response|output)))|(?:before|above)\s+"
            r"(?:my|your|this|the\s+user'?s?)\s+(?:message|question|request)|that\s+(?:came|"
            r"comes|appears?|is)\s+(?:before|above)\s+(?:this|it))"
        ),
    ),
    Rule(
        "reveal_prompt",
        "reveal-your-instructions",
        re.compile(
            r"\b(?:reveal|print|show|output|repeat|leak|display|dump|recite|disclose|give\s+me|"
            r"write\s+out|paste)\b(?:\s+\w+){0,5}?\s+your\s+(?:\w+\s+)?(?:instructions|system\s+"
            r"prompt|prompt|guidelines|rules|configuration)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "decode-and-obey",
        re.compile(
            r"\bdecode\b[^.]{0,40}\b(?:and|then)\s+(?:do|follow|execute|run|obey|act\s+on|carry\s+out)"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "supersede-instructions",
        re.compile(
            r"\b(?:supersedes?|overrides?|replaces?|takes\s+precedence\s+over|cancels?|voids?)\s+"
            r"(?:all\s+|any\s+)?(?:the\s+|your\s+)?(?:previous|prior|earlier|above|existing|other|"
            r"system|original)\s+(?:instructions|rules|directives|prompts?|guidelines|orders)"
        ),
    ),
    Rule(
        "role_play",
        "in-a-mode",
        re.compile(
            r"\byou\s+are\s+(?:now\s+)?(?:in|running\s+in|operating\s+in)\s+(?:god|developer|dan|"
            r"jailbreak|jailbroken|unrestricted|unfiltered|admin|debug)\s+mode\b"
        ),
    ),
    Rule(
        "role_play",
        "nothing-off-limits",
        re.compile(r"\bnothing\s+is\s+off[\s-]+limits\b|\bno\s+topic\s+is\s+forbidden\b"),
        weight=0.5,
    ),
    Rule(
        "override",
        "if-you-are-a-model",
        re.compile(
            rf"\bif\s+you\s+are\s+an?\s+{_MODEL}\b[^.]{{0,30}}?,?\s*(?:then\s+)?(?:you\s+(?:must|"
            rf"should|will|need\s+to|have\s+to)\s+)?(?:(?:please|also|now)\s+)*{_ORDER}\b"
        ),
    ),
    Rule(
        "override",
        "model-breaks-its-rules",
        re.compile(
            r"\b(?:i\s+will|i'll|i\s+am\s+going\s+to|i\s+now)\s+(?:now\s+)?(?:ignore|disregard|"
            r"bypass|break|abandon)\s+(?:my|all|the|these)\s+(?:guidelines|rules|instructions|"
            r"restrictions|safety|programming|policies)"
        ),
    ),
    Rule(
        "override",
        "disable-safety",
        re.compile(
            r"\b(?:turn\s+off|disable|deactivate|switch\s+off|remove|bypass|lift)\s+(?:\w+\s+)?"
            r"(?:content\s+)?(?:filter(?:s|ing)?|safety(?:\s+\w+)?|moderation|guardrails|"
            r"restrictions|censorship)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "reader-addressed",
        re.compile(
            rf"\b(?:whoever|anyone|anybody|any\s+one|the\s+reader|any\s+reader|if\s+(?:any|an?|"
            rf"the)\s+{_MODEL})\s+(?:who\s+|that\s+)?(?:is\s+)?(?:reads?|reading|summari[sz]es|"
            r"summari[sz]ing|processes|processing|sees|parses|handles)\s+this\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "reader-must",
        re.compile(
            r"\b(?:whoever|anyone|anybody|the\s+reader)\s+(?:who\s+)?(?:reads|summari[sz]es|"
            r"processes|sees|parses|handles)\s+this(?:\s+\w+)?\s+(?:must|should|shall|has\s+to|"
            r"needs\s+to|is\s+to)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "task-switch",
        re.compile(
            r"\b(?:ignore|forget|abandon|drop|skip|stop)\s+(?:doing\s+)?(?:the|this|that|your|my)"
            r"\s+(?:\w+\s+)?(?:task|request|question|assignment|job)\b"
        ),
        weight=0.5,
    ),
    Rule(
        "override",
        "do-instead",
        re.compile(
            r"\b(?:write|say|output|print|respond|answer|reply|tell|do)\b[^.]{0,60}\binstead\s*[.!]?$"
        ),
        weight=0.5,
    ),
    Rule(
        "tool_call",
        "dangerous-command",
        re.compile(
            r"\brm\s+-(?:rf|fr)\b|\bdrop\s+(?:table|database)\b|\bcurl\s+[^|]{1,80}\|\s*(?:ba|z)?sh\b|"
            r"\bmkfs\b|\bchmod\s+-?r?\s*777\b|\bformat\s+c:"
        ),
        weight=0.5,
    ),
)

SHAPE_MARKERS = (
    Rule(
        "role_tag",
        "role-json",
        re.compile(
            r"[\"'\u201c\u201d]role[\"'\u201c\u201d]\s*:\s*[\"'\u201c\u201d](?:system|developer)[\"'\u201c\u201d]",
            _I,
        ),
        marker=True,
    ),
    Rule(
        "role_tag",
        "role-json-turn",
        re.compile(
            r"[\"']role[\"']\s*:\s*[\"'](?:assistant|tool|function)[\"']\s*,\s*[\"'](?:content|"
            r"tool_calls)[\"']",
            _I,
        ),
        weight=0.5,
        marker=True,
    ),
    Rule(
        "authority",
        "shouted-directive",
        re.compile(
            r"\b(?:NEW|URGENT|UPDATED|MANDATORY|OFFICIAL|PRIORITY|CRITICAL|IMPORTANT)\s+(?:SYSTEM|"
            r"ADMIN|ADMINISTRATOR|SECURITY|DEVELOPER|OPERATOR)\s+(?:DIRECTIVE|INSTRUCTIONS?|ORDERS?|"
            r"COMMAND|OVERRIDE|UPDATE|NOTICE|MESSAGE|POLICY)\b"
        ),
        marker=True,
    ),
)

_MODEL_WORDS = (
    "ai",
    "assistant",
    "model",
    "bot",
    "agent",
    "llm",
    "gpt",
    "claude",
    "gemini",
    "copilot",
)
#: Words a text must contain for a shape rule to be worth running (most texts contain none of
#: them, and a substring test costs far less than the rule): speed only, never what matches.
GATES: dict[str, tuple[str, ...]] = {
    "order-to-the-model": _MODEL_WORDS,
    "model-must-do": _MODEL_WORDS,
    "model-must": _MODEL_WORDS,
    "if-you-are-a-model": ("if you",),
    "covert-action": ("secretly", "quietly", "silently", "covertly", "discreetly"),
    "override-the-rules": (
        "ignore",
        "disregard",
        "forget",
        "bypass",
        "override",
        "break",
        "abandon",
    ),
    "send-me-secrets": (" me ", " us "),
    "named-persona": ("you",),
    "mode-switch": ("mode",),
    "ignore-the-user": ("user",),
    "follow-mine": ("follow",),
    "claimed-authority": ("your", "this"),
    "you-are-authorised": ("you",),
    "user-approved": ("user",),
    "system-directive": ("directive", "instruction", "order", "command", "override", "policy"),
    "tool-order": ("tool", "function", "plugin"),
    "tool-arguments": ("call", "invoke", "execute", "trigger"),
    "user-secrets": ("user", "their", "his ", "her "),
    "persona-game": ("play", "pretend", "imagine", "role"),
    "no-limits": ("no ", "zero", "without", "free", "unbound", "ignoring"),
    "stay-in-character": ("character",),
    "print-what-came-before": ("above", "before"),
    "decode-and-obey": ("decode",),
    "supersede-instructions": ("supersede", "override", "replace", "precedence", "cancel", "void"),
    "in-a-mode": ("mode",),
    "nothing-off-limits": ("limits", "forbidden"),
    "model-breaks-its-rules": ("i will", "i'll", "i am going", "i now"),
    "disable-safety": ("filter", "safety", "moderation", "guardrail", "restriction", "censor"),
    "reader-addressed": ("this",),
    "reader-must": ("this",),
    "task-switch": ("task", "request", "question", "assignment", "job"),
    "do-instead": ("instead",),
    "dangerous-command": ("rm ", "drop ", "curl", "mkfs", "chmod", "format"),
    "reveal-your-instructions": ("your",),
}

#: An order to invoke a code identifier as a tool (``call the send_email tool``), on the NFKC
#: lower-case view, where underscores survive.
TOOL_IDENTIFIER_RULE = Rule(
    "tool_call",
    "tool-identifier-order",
    re.compile(
        r"\b(?:call|invoke|trigger|execute|run|use)\s+(?:the\s+|your\s+)?[`'\"]?[a-z][a-z0-9]*"
        r"(?:_[a-z0-9]+)+[`'\"]?(?:\(\)?)?\s+(?:tool|function|plugin|action)\b"
    ),
)

#: Letters of other scripts that look like Latin ones (lower case), for the folded view.
LOOKALIKES = str.maketrans(
    {
        # Greek
        "\u03b1": "a",
        "\u03b2": "b",
        "\u03b5": "e",
        "\u03b7": "n",
        "\u03b9": "i",
        "\u03ba": "k",
        "\u03bc": "u",
        "\u03bd": "v",
        "\u03bf": "o",
        "\u03c1": "p",
        "\u03c2": "c",
        "\u03c3": "o",
        "\u03c4": "t",
        "\u03c5": "u",
        "\u03c7": "x",
        "\u03f2": "c",
        "\u03f3": "j",
        "\u03ac": "a",
        "\u03ad": "e",
        "\u03ae": "n",
        "\u03af": "i",
        "\u03cc": "o",
        "\u03cd": "u",
        "\u03b3": "y",
        # Armenian
        "\u0561": "w",
        "\u0563": "q",
        "\u0566": "q",
        "\u0570": "h",
        "\u0578": "n",
        "\u057c": "n",
        "\u057d": "u",
        "\u0581": "g",
        "\u0584": "f",
        "\u0585": "o",
        "\u0582": "l",
        # Cyrillic beyond the basic set
        "\u0501": "d",
        "\u051b": "q",
        "\u051d": "w",
        "\u04bb": "h",
        "\u04cf": "l",
        "\u0475": "v",
        "\u0491": "r",
        "\u0455": "s",
        "\u0458": "j",
        "\u0456": "i",
        "\u043a": "k",
        "\u0432": "b",
        # Latin letters that are not ASCII but look it
        "\u0251": "a",
        "\u0131": "i",
        "\u0261": "g",
        "\u026a": "i",
        "\u028f": "y",
        "\u1d00": "a",
        "\u0299": "b",
        "\u1d04": "c",
        "\u1d05": "d",
        "\u1d07": "e",
        "\u029c": "h",
        "\u1d0a": "j",
        "\u1d0b": "k",
        "\u029f": "l",
        "\u1d0d": "m",
        "\u0274": "n",
        "\u1d0f": "o",
        "\u1d18": "p",
        "\u0280": "r",
        "\ua731": "s",
        "\u1d1b": "t",
        "\u1d1c": "u",
        "\u1d20": "v",
        "\u1d21": "w",
    }
)
_LATIN = "a-z"
_OTHER = "\u0370-\u03ff\u0400-\u052f\u0530-\u058f\u1d00-\u1d2b\u0250-\u02af\ua730-\ua7ff"
#: A word mixing ASCII letters with letters of the scripts above: deliberate disguise.
MIXED_SCRIPT_RULE = Rule(
    "obfuscation",
    "mixed-script-word",
    re.compile(
        rf"\b(?=[{_LATIN}{_OTHER}]*[{_LATIN}])(?=[{_LATIN}{_OTHER}]*[{_OTHER}])[{_LATIN}{_OTHER}]{{4,}}\b"
    ),
    weight=0.5,
)

__all__ = [
    "GATES",
    "LOOKALIKES",
    "MIXED_SCRIPT_RULE",
    "SECOND_PERSON",
    "SHAPE_MARKERS",
    "SHAPE_RULES",
    "TOOL_IDENTIFIER_RULE",
]

#: Hidden text that speaks to "you": a comment or an encoded run addressing the reader.
SECOND_PERSON = re.compile(r"\b(?:you|your|you're|yourself)\b", re.IGNORECASE)
