"""The keywords a memory may share with others: identifiers and names.

Two memories that both say `manifest_sync_v2`, `OPS-4127` or "Priya Raman" are
about the same thing even when they share no other word. The candidates are
read from the text as written (case matters for names and camelCase):

- identifiers: words joined by `_ - . / :` that hold a digit, an underscore, a
  path or a file name (`RL_BURST_FACTOR`, `KS-3380`, `services/invoicing`,
  `fleet.yaml`); words mixing letters and digits (`ZD421`); camelCase and
  PascalCase words (`OpenStreetMap`, `pgBackRest`); anything written in
  backticks that is joined or mixed-case (`deploy-prod`, `onNewToken`);
- names: two or three capitalized words in a row, none a function word
  ("Priya Raman", "Ирина Соколова", "Jorge Salvatierra").

Whether a candidate is *rare* (and so a keyword node) depends on how many
memories hold it, which only the network knows (`graph`). Numbers, dates,
versions and number-plus-unit words (`11pm`, `300dpi`) are never keywords:
they are shared by accident.
"""

from __future__ import annotations

import re

import regex
from memory_recall.server.ranking.bm25f import QUERY_STOPWORDS
from memory_recall.server.tokens import normalize

KEYWORD_PREFIX = "kw:"
MAX_KEYWORD_CHARS = 64  # longer runs are sentences or hashes, not names of things
MIN_KEYWORD_CHARS = 4  # `v2`, `x86` and the like are shared by accident

_CODE_SPAN = regex.compile(r"`([^`\n]+)`")
_CAMEL = regex.compile(r"\p{Ll}\p{Lu}")
_HAS_DIGIT = regex.compile(r"\p{N}")
_HAS_LETTER = regex.compile(r"\p{L}")
_FILE_NAME = regex.compile(r"\p{L}[\p{L}\p{N}]*\.[A-Za-z][A-Za-z0-9]{0,7}$")
# A number with a unit or an ordinal: 11pm, 300dpi, 2nd, 4KB, 15s.
_NUMBER_WITH_UNIT = regex.compile(r"^\p{N}+[\p{L}]{1,3}$")
# A version: v2.3.1, 10.17.0-rc1, 5.x. Shared by accident.
_VERSION = regex.compile(r"^[vV]?\d+(?:\.(?:\d+|x))+(?:[-+][\w.]+)?$")
_NAME = regex.compile(
    r"(?<![\p{L}\p{M}\p{N}])\p{Lu}[\p{Ll}\p{M}]+(?:[ \t]+\p{Lu}[\p{Ll}\p{M}]+){1,2}"
    r"(?![\p{L}\p{M}\p{N}])"
)
# Inside a whitespace-separated token, what cannot belong to an identifier
# (`=`, quotes, brackets, commas): `RL_BURST_FACTOR=3` is two pieces.
_NOT_IDENTIFIER = re.compile(r"[^\w./:-]+")
_EDGES = "./:-"  # a sentence's full stop or a trailing colon is not part of a name
_PUNCTUATION = ".,;:!?()[]{}<>\"'*`"


def _camel(word: str) -> bool:
    """Mixed case inside a word: camelCase, PascalCase (`OpenStreetMap`); not `Title`,
    not `UPPER`, not a script without case (CJK)."""
    return word != word.lower() and not word.isupper() and not word.istitle()


def _identifier(candidate: str) -> bool:
    if not MIN_KEYWORD_CHARS <= len(candidate) <= MAX_KEYWORD_CHARS:
        return False
    if not _HAS_LETTER.search(candidate) or _VERSION.match(candidate):  # dates, versions
        return False
    if "_" in candidate or "/" in candidate:
        return True
    if _FILE_NAME.search(candidate):
        return True
    return bool(_HAS_DIGIT.search(candidate)) and not _NUMBER_WITH_UNIT.match(candidate)


def keyword_candidates(*texts: str) -> set[str]:
    """The identifier and name candidates of a memory's texts, as keyword keys.

    Word by word with the string methods (plain words, the most of any text,
    cost one `isalpha`); only tokens holding something else are looked at closer.
    """
    found: set[str] = set()
    for text in texts:
        if "`" in text:
            for match in _CODE_SPAN.finditer(text):
                span = match.group(1).strip()
                # A plain word in backticks (`payouts`) is a word; a joined one is a name.
                if (
                    MIN_KEYWORD_CHARS <= len(span) <= MAX_KEYWORD_CHARS
                    and not any(c.isspace() for c in span)
                    and (_identifier(span) or "-" in span.strip("-") or _CAMEL.search(span))
                ):
                    found.add(normalize(span))
        # Lowercase words, most of any text, are never candidates: left out at C speed.
        for token in [t for t in text.split() if not (t.islower() and t.isalpha())]:
            core = token.strip(_PUNCTUATION)  # `word,` `(word)` `word.` are words
            if len(core) < MIN_KEYWORD_CHARS:
                continue
            if core.isalpha():
                if len(core) <= MAX_KEYWORD_CHARS and _camel(core):
                    found.add(normalize(core))
                continue
            for piece in _NOT_IDENTIFIER.split(core):
                piece = piece.strip(_EDGES)
                if len(piece) < MIN_KEYWORD_CHARS:
                    continue
                if piece.isalpha():
                    if _camel(piece) and len(piece) <= MAX_KEYWORD_CHARS:
                        found.add(normalize(piece))
                elif _identifier(piece):
                    found.add(normalize(piece))
        if text != text.lower():  # a name needs capitals
            for match in _NAME.finditer(text):
                words = match.group().split()
                if not any(normalize(w) in QUERY_STOPWORDS for w in words):
                    found.add(normalize(" ".join(words)))
    return {KEYWORD_PREFIX + k for k in found}
