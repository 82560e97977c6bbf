"""How people type, for bm25f: the exact form of a text and the folded form of a term
(docs/ranking.md, "Normalisation").

- The exact form is the tokenizer's (NFKC, then lowercase), with the special casing of
  Unicode's SpecialCasing.txt where the text says which language it is in: in
  Turkish and Azeri text (it holds one of ı İ ğ ş ə) capital I is ı and İ is i; in
  Lithuanian text (ė į ų) an I keeps its dot under an accent (Ì → i̇̀).
- The folded form is what remains of a term when nothing a keyboard makes optional
  is kept: full Unicode case folding (ß → ss, ς → σ), the marks on Latin, Greek and
  Cyrillic letters (ação → acao, Ελλάδα → ελλαδα, ёлка → елка) and the vowel points
  of Arabic and Hebrew, the letters that have no decomposition but are a base
  letter with a stroke or a ligature (đ → d, ł → l, ø → o, ı → i, æ → ae, read from
  the Unicode names, not listed by hand), and Traditional Chinese characters as
  their Simplified form (OpenCC's table, through the `opencc` package). Width and
  compatibility forms are NFKC's, in both forms.

bm25f indexes both: a memory's exact terms as before, and, for every term whose
folded form differs, that folded form marked with FOLD_MARK. A query term is
looked up exactly and folded; a memory found only by the folded form scores a
share of what the exact form would (the exact spelling is preferred).
The `spec` ranker and `server.tokens` keep the tokenizer's exact rules.
"""

from __future__ import annotations

import sys
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

import regex

# A Unicode noncharacter: never in a term read from text (terms are letters, marks
# and digits), and at least " ", so a marked word is still found by substring.
FOLD_MARK = "\ufdd0"

# Turkish and Azeri letters, Lithuanian ones: when a text holds one, it is cased
# by that language's rules.
_TURKIC_LETTERS = "ıİğĞşŞəƏ"
_LITHUANIAN_LETTERS = "ėĖįĮųŲ"


def _turkic(text: str) -> bool:
    # Eight substring searches are ~2.5× faster than one character class in `re`
    # over a long body (a compound's check asks it of up to 1,024 bodies).
    return any(letter in text for letter in _TURKIC_LETTERS)


def _lithuanian(text: str) -> bool:
    return any(letter in text for letter in _LITHUANIAN_LETTERS)


# Lithuanian: I, J, Į before an accent above keep their dot (SpecialCasing.txt).
_LT_SOFT_DOTTED = regex.compile(r"([IJĮ])(?=[\u0300-\u0314\u033d-\u0344\u0346\u034a-\u034c])")
_LT_ACCENTED_I = str.maketrans({"Ì": "i\u0307\u0300", "Í": "i\u0307\u0301", "Ĩ": "i\u0307\u0303"})


def exact_form(text: str) -> str:
    """NFKC, then lowercase, by the language's rules where the text says which."""
    return _cased(nfkc(text))


def nfkc(text: str) -> str:
    """`unicodedata.normalize("NFKC", text)`, faster for a text whose only characters NFKC
    rewrites are common compatibility ones (a Chinese memory's fullwidth commas, a
    no-break space, an ellipsis): those written as NFKC writes them (`_compatibility_table`),
    and if that is its own NFKC, it is the text's — a character and its NFKC decompose
    alike, and a text decomposes character by character before its marks are put in
    order, so both texts have one NFKC. NFKC reworks a whole text once one character
    fails its quick check: ~120 µs per 1,000 Chinese characters, against ~40 µs here."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    table = _compatibility_table()
    rewritten = text
    for char in table.keys() & set(text):  # a few distinct ones: one C pass each
        rewritten = rewritten.replace(char, table[char])
    if rewritten is not text and unicodedata.is_normalized("NFKC", rewritten):
        return rewritten
    return unicodedata.normalize("NFKC", text)


# Where the compatibility characters people type are: Latin-1's no-break space and
# superscripts, general punctuation's spaces and ellipsis, letterlike symbols and number
# forms, enclosed alphanumerics, CJK punctuation and compatibility, ligatures, small and
# fullwidth forms. Which blocks are listed changes only how often `nfkc` takes its short
# way, never what it returns.
_COMPATIBILITY_BLOCKS = (
    (0x00A0, 0x00FF), (0x2000, 0x218F), (0x2460, 0x24FF), (0x3000, 0x303F),
    (0x3200, 0x33FF), (0xFB00, 0xFB4F), (0xFE30, 0xFE6F), (0xFF00, 0xFFEF),
)  # fmt: skip


@lru_cache(maxsize=1)
def _compatibility_table() -> dict[str, str]:
    """Each character of those blocks that NFKC rewrites, to what NFKC writes for it."""
    table = {}
    for first, last in _COMPATIBILITY_BLOCKS:
        for char in map(chr, range(first, last + 1)):
            normal = unicodedata.normalize("NFKC", char)
            if normal != char:
                table[char] = normal
    return table


KEPT_FORM_CHARS = 4_000_000  # 8 MB of Chinese text at most
_kept: OrderedDict[str, str] = OrderedDict()  # text → its exact form, oldest use first
_kept_chars = 0
_kept_lock = threading.Lock()  # a remember's read-ahead thread checks compounds too


def kept_exact_form(text: str) -> str:
    """`exact_form`, kept for the texts it costs most: those NFKC must rework.

    NFKC returns a text that passes its quick check as it is (~1 µs per 1,000
    characters); one it must rework (a fullwidth comma, a compatibility character)
    takes ~40 µs per 1,000 characters where `nfkc` takes its short way and ~120 µs
    where not, often most of a Chinese or Japanese memory's body. A query's compound
    term checks the exact form of up to 1,024 memories' bodies (ranker.COMPOUND_CANDIDATES),
    and the next recall or remember often checks the same ones: those forms are kept,
    the least recently used leaving first, within KEPT_FORM_CHARS characters of texts
    and forms together. (Keeping every form would not hold even one query's bodies in
    that much.)"""
    global _kept_chars
    with _kept_lock:
        form = _kept.get(text)
        if form is not None:
            _kept.move_to_end(text)
            return form
    normal = nfkc(text)
    form = _cased(normal)
    if normal is not text and len(text) <= KEPT_FORM_CHARS // 8:
        with _kept_lock:
            if text not in _kept:
                _kept[text] = form
                _kept_chars += len(text) + len(form)
            while _kept_chars > KEPT_FORM_CHARS:
                old, old_form = _kept.popitem(last=False)
                _kept_chars -= len(old) + len(old_form)
    return form


def _cased(nfkc: str) -> str:
    """An NFKC text lowercased, by the language's rules where the text says which."""
    if nfkc.isascii():
        return nfkc.lower()
    if _turkic(nfkc):
        nfkc = nfkc.replace("I", "ı").replace("İ", "i")
    elif _lithuanian(nfkc):
        nfkc = _LT_SOFT_DOTTED.sub(lambda m: m.group(1).lower() + "\u0307", nfkc)
        nfkc = nfkc.translate(_LT_ACCENTED_I)
    return nfkc.lower()


class CaselessToken(NamedTuple):
    """An ASCII token as `cannot_hold` looks for it: its caseless search, and the
    characters of its lowercase."""

    pattern: regex.Pattern[str]
    chars: frozenset[str]


def caseless_ascii(token: str) -> CaselessToken | None:
    """What finds an ASCII token in a text as written, without case (`cannot_hold`);
    None for a token that is not ASCII."""
    if not token.isascii():
        return None
    pattern = regex.compile(regex.escape(token), regex.IGNORECASE | regex.ASCII)
    return CaselessToken(pattern, frozenset(token.lower()))


def cannot_hold(text: str, token: CaselessToken) -> bool:
    """Whether the exact form of `text` surely lacks the ASCII token (`caseless_ascii`),
    told without making that form: ~1 µs per 1,000 characters, against ~5 µs to
    lowercase them and ~100 µs where NFKC must rework them.

    An ASCII character of the exact form comes from an ASCII character written as such
    (lowercased), or from the decomposition of another one (a fullwidth ｋ, the ligature
    ﬁ, İ, an é: NFKC decomposes before it composes, and composing only ever takes
    characters away). So where none of the text's other characters can give one of the
    token's characters (`_ascii_given`), every place the exact form holds the token is
    a run of ASCII characters written as such, which a caseless ASCII search of the text
    as written finds. The Turkish and Lithuanian casings, which look at the whole text,
    are not told apart: such a text is never said to lack a token its search misses."""
    return token.pattern.search(text) is None and not token.chars & _ascii_given(text)


_EVERY_ASCII = frozenset(map(chr, range(128)))
# The marks that compose a letter into one of `_TURKIC_LETTERS` or `_LITHUANIAN_LETTERS`
# (breve: Ğ, dot above: İ Ė, cedilla: Ş, ogonek: Į Ų): a text written decomposed is cased
# by that language's rules once NFKC has composed it, which `needs_tailoring` of the
# text as written cannot see.
_COMPOSING_TAILORED = "\u0306\u0307\u0327\u0328"


@lru_cache(maxsize=4_096)
def _ascii_given(text: str) -> frozenset[str]:
    """The ASCII characters (lowercased) the exact form of `text` may hold that are not
    written in it as ASCII: none when the text is its own NFKC (its exact form is its
    lowercase), any under a language's casing, else what its other characters may give
    (a Chinese memory's fullwidth commas give ",", an é gives "e"). Kept for the texts
    asked lately: a compound's check asks it of the same bodies (up to 1,024) at every
    recall, and the bodies are the catalog's own strings (a changed memory's old body
    stays until four thousand others were asked)."""
    if needs_tailoring(text):
        return _EVERY_ASCII
    if unicodedata.is_normalized("NFKC", text):
        return frozenset()
    if any(mark in text for mark in _COMPOSING_TAILORED):
        return _EVERY_ASCII  # its NFKC may hold a Turkish or Lithuanian letter ("I" + dot)
    given: set[str] = set()
    for char in set(text):
        if not char.isascii():
            given |= _ascii_of(char)
    return frozenset(given)


@lru_cache(maxsize=65_536)
def _ascii_of(char: str) -> frozenset[str]:
    """The ASCII characters, lowercased, of one character's compatibility decomposition
    (NFKD: what NFKC starts from) and of its lowercase (İ → i̇)."""
    pieces = unicodedata.normalize("NFKD", char) + char.lower()
    return frozenset(c.lower() for c in pieces if c.isascii())


def needs_tailoring(text: str) -> bool:
    """Whether `exact_form` differs from the tokenizer's normalize for this text."""
    return not text.isascii() and (_turkic(text) or _lithuanian(text))


# Marks dropped from a letter of these scripts; the vowel points of Arabic and Hebrew.
_MARKED_LETTER = regex.compile(r"([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])\p{Mn}+")
_POINTS = regex.compile(r"[\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed]")
_POINTED_SCRIPTS = regex.compile(r"[\p{Script=Arabic}\p{Script=Hebrew}]")
_STROKED = regex.compile(
    r"LATIN SMALL (?:LETTER|LIGATURE) (?:(?P<one>[A-Z]) WITH (?:STROKE|BAR|HOOK|TAIL|"
    r"MIDDLE DOT|CURL|LONG LEG|DIAGONAL STROKE|SWASH TAIL)|DOTLESS (?P<dotless>[A-Z])|"
    r"(?P<two>AE|OE|IJ|UE))$"
)


def _letter_table() -> dict[int, str]:
    """Latin letters with no decomposition that are a base letter with a stroke, a
    hook, no dot or a ligature, from their Unicode names: đ → d, ı → i, æ → ae."""
    table: dict[int, str] = {}
    for code in range(0x80, 0x2B0):
        char = chr(code)
        if unicodedata.decomposition(char):
            continue
        match = _STROKED.match(unicodedata.name(char, ""))
        if match:
            table[code] = (match["one"] or match["dotless"] or match["two"]).lower()
    table[ord("þ")] = "th"  # Icelandic thorn, typed "th" (its name says no base letter)
    return table


_LETTERS = _letter_table()
_HAN = regex.compile(r"\p{Script=Han}")


@lru_cache(maxsize=1)
def _han_table() -> dict[int, str]:
    """Traditional → Simplified Chinese, one character for one: OpenCC's `t2s`
    conversion of every Han character of the Basic, Extension A and Compatibility
    blocks (its phrase tables are not used: a term is folded out of context)."""
    import opencc

    chars = [
        chr(c)
        for lo, hi in ((0x3400, 0x4DC0), (0x4E00, 0xA000), (0xF900, 0xFB00))
        for c in range(lo, hi)
    ]
    converted = opencc.OpenCC("t2s").convert("\n".join(chars)).split("\n")
    if len(converted) != len(chars):  # a converter that joined or split lines: keep none
        return {}
    return {ord(a): b for a, b in zip(chars, converted, strict=True) if a != b and len(b) == 1}


@lru_cache(maxsize=1 << 16)
def fold(term: str) -> str:
    """The folded form of a term in its exact form (see the module's docstring)."""
    folded = fold_text(term)
    return sys.intern(folded) if len(folded) < 32 else folded


def fold_text(text: str) -> str:
    """The folded form of a whole text in its exact form (not cached: see `fold`)."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFD", text)
    text = _MARKED_LETTER.sub(r"\1", text)
    if _POINTED_SCRIPTS.search(text):
        text = _POINTS.sub("", text)
    text = unicodedata.normalize("NFC", text).casefold()
    text = text.translate(_LETTERS)
    if _HAN.search(text):
        text = text.translate(_han_table())
    return text


def with_folded(terms: Mapping[str, int]) -> dict[str, int]:
    """`terms` (term → count) and, for each term whose folded form differs, that form
    marked (FOLD_MARK + folded → the summed counts). Acronyms stay as they are."""
    out = dict(terms)
    for term, count in terms.items():
        if term.isascii() or term[0] < " ":
            continue
        folded = fold(term)
        if folded != term and folded:
            key = FOLD_MARK + folded
            out[key] = out.get(key, 0) + count
    return out


def is_folded(term: str) -> bool:
    return term[:1] == FOLD_MARK


def warm() -> None:
    """Build what folding reads on first use (OpenCC's table, the letter table is
    built at import), so that no recall pays for it."""
    _han_table()
    _compatibility_table()
    fold("資料庫")
