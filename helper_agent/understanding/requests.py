"""What a person's words mean to the HELPER graph: teaching a routine and recalling one unchanged
(the answer to the feedback question is read by the model: `graphs/helper/feedback.py`).

These rules are structural (a phrasing that must be said explicitly, an exact match), not word
lists chosen to separate an evaluation suite: teaching needs "Perform the <name>: ..." or
"Remember this as <name>: ...", and a recalled routine is reused without the LLM only when the
request is, once normalised, nothing but the routine's name or its original request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# "Perform the Mary cleaning: ...", "Please do the Sunday breakfast: ..." (the article makes it a
# name: "Do this: ..." and "Make me a coffee: ..." teach nothing), and "Remember this as X: ...".
_TEACH_VERB = re.compile(
    r"^\s*(?:please\s+)?(?:perform|do|run)\s+(?P<name>the\s+[\w'’ -]{2,60}?)\s*:\s*(?P<body>\S.*)$", re.I | re.S
)
_TEACH_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?remember\s+(?:this|it|the\s+following)\s+as\s+(?P<name>(?:the\s+)?[\w'’ -]{2,60}?)\s*:\s*(?P<body>\S.*)$",
    re.I | re.S,
)
_NOT_A_NAME = frozenset({"this", "that", "it", "same", "following", "task", "thing", "rest"})


@dataclass(frozen=True)
class TeachRequest:
    """A request that teaches a routine: its name and what to do."""

    name: str
    body: str


def routine_name(raw: str) -> str:
    """A routine name as stored: lower case, single spaces, no quotes."""
    return re.sub(r"\s+", " ", raw.strip().strip("'’\"")).lower()


def teach_request(request: str) -> TeachRequest | None:
    """The routine a request teaches, or None when it teaches none (it must say so explicitly)."""
    for pattern in (_TEACH_VERB, _TEACH_REMEMBER):
        match = pattern.match(request)
        if match:
            name = routine_name(match.group("name"))
            if _bare(name) not in _NOT_A_NAME and any(c.isalpha() for c in _bare(name)):
                return TeachRequest(name, match.group("body").strip())
    return None


def _bare(name: str) -> str:
    """A name without its leading article ("the mary cleaning" -> "mary cleaning")."""
    return re.sub(r"^the\s+", "", name)


def normalise(text: str) -> str:
    """Lower case, words only, single spaces: for exact comparisons of requests."""
    return " ".join(re.findall(r"[\w']+", text.lower()))


_INVOCATION = re.compile(r"^(?:please )?(?:(?:do|perform|run|start) )?(?:the |my )?(?P<rest>.*?)(?: please)?$")


def is_unchanged_recall(request: str, routine_name_: str, routine_request: str = "") -> bool:
    """True when the request asks for the routine and nothing else: once normalised it is the
    routine's original request, or its name with at most an invocation ("do the", "please")."""
    text = normalise(request)
    if routine_request and text == normalise(routine_request):
        return True
    match = _INVOCATION.match(text)
    return bool(match) and match.group("rest") == _bare(normalise(routine_name_))
