"""A memory's headline by rules: its title and description from its text (docs/writing.md), for a
`remember` without them and for an update whose title or description was derived.

- title: the first sentence, markdown markers removed, cut to a short line;
- description: the opening sentences as one line (what a model's manifest and
  MEMORY.md show), cut at a sentence or word boundary.
"""

from __future__ import annotations

import regex
from memory_recall.server.sentences import split_sentences

TITLE_CHARS = 80  # a title fits one MEMORY.md line next to its description
DESCRIPTION_CHARS = 200  # one sentence or two: what a selector reads per memory
# CJK characters carry about twice the meaning of a Latin letter per character.
CJK_TITLE_CHARS = 40

_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")
# Markdown that opens a line: headings, list bullets, quotes, numbering, checkboxes.
_LINE_MARKUP = regex.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+(?:\[[ xX]\]\s+)?|\d{1,3}[.)]\s+)")
_INLINE_MARKUP = regex.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_LINK = regex.compile(r"\[([^\]\n]+)\]\([^)\s]+\)")


def _clean_line(line: str) -> str:
    line = _LINE_MARKUP.sub("", line)
    line = _LINK.sub(r"\1", line)
    return _INLINE_MARKUP.sub("", line).strip()


def sentences(text: str) -> list[str]:
    """The text's sentences, markdown line markers removed, in order."""
    out: list[str] = []
    for line in text.splitlines():
        cleaned = _clean_line(line)
        if not cleaned or regex.fullmatch(r"[-=*_`~]{3,}", cleaned):
            continue  # rules, fences
        out.extend(split_sentences(cleaned))
    return out


def _cut(text: str, limit: int) -> str:
    """`text` at most `limit` characters, cut at a word boundary with … when cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if not _CJK.search(head[-1:]):
        space = head.rfind(" ")
        if space >= limit // 2:
            head = head[:space]
    return head.rstrip(" ,;:-–—") + "…"


def derive_title(text: str) -> str:
    """The first sentence, without its full stop, cut to a short line."""
    found = sentences(text)
    if not found:
        return ""
    first = found[0].rstrip(".。!！")
    cjk_share = len(_CJK.findall(first)) / max(1, len(first))
    return _cut(first, CJK_TITLE_CHARS if cjk_share > 0.5 else TITLE_CHARS)


def derive_description(text: str) -> str:
    """The opening sentences on one line, as many as fit DESCRIPTION_CHARS."""
    parts: list[str] = []
    used = 0
    for sentence in sentences(text):
        if parts and used + len(sentence) + 1 > DESCRIPTION_CHARS:
            break
        if parts and not _ENDED.search(parts[-1]):
            # A heading or a list item without its full stop: give it one.
            parts[-1] += "。" if _CJK.search(parts[-1][-1:]) else "."
        parts.append(sentence)
        used += len(sentence) + 1
    joined = "".join(
        part if i == 0 or _unspaced(parts[i - 1][-1:]) else " " + part
        for i, part in enumerate(parts)
    )
    return _cut(joined, DESCRIPTION_CHARS)


_ENDED = regex.compile(r"[.!?。！？:;：；…]$")


def _unspaced(char: str) -> bool:
    """Whether text after `char` follows without a space (CJK)."""
    return bool(_CJK.search(char)) or char in "。！？；：、"
