"""What stands around a statement's fact, read before its terms (docs/writing.md, "Terms"):
each decides which text `terms.read_terms` reads.

- as typed for: no-break spaces, curly apostrophes, full-width digits and letters, one
  character for one (`typed_as`); a whole statement in capitals (`shouted`);
- a closing bracket that cites, links, refers to a ticket, says when it was written or who
  confirmed it, or only stresses it (`closing_citation`), or says it is not settled
  (`closing_hedge`);
- closing hashtags, the note's tags (`closing_tags`), and a closing reference after a word
  ("… in PR #123", "…, see JIRA-1234": `closing_reference`);
- a closing agreement after a comma ("…, as discussed": `closing_agreement`);
- an opening aside set off by a comma ("Going forward, …", "According to Alice, …":
  `opening_aside`) and a closing stretch or bracket that says from when ("… since last
  week", "… (as of this sprint)", "… since PR #123": `closing_since`), both read as "now"
  does when they say from when.

Each returns where its stretch starts (or ends), never a reading: the text left is read by
`read_terms` as any statement is.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import regex
from memory_recall.server.facts.lexicon import function_words, lexicon, norm

# Characters read as the one they are typed for, one for one (a statement's spans kept):
# the no-break and narrow spaces a web page or a Mac keyboard leaves between words, curly
# apostrophes, and full-width digits and Latin letters ("ポート８０８２"). Full-width
# punctuation stays: the CJK cues and stops are written with it.
_WIDE = "".join(map(chr, [*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B)]))
_TYPED_AS = str.maketrans(
    "\u00a0\u2007\u202f\u2009\u200a\u2002\u2003\u2019\u2018\u02bc" + _WIDE,
    " " * 7 + "'" * 3 + "".join(chr(ord(c) - 0xFEE0) for c in _WIDE),
)


# A bracket closing a statement that says where it comes from: "(see PR #123)", "(per
# Alice)", "(cf. the runbook)", "(siehe …)", "(voir …)", "(参见 …)".
_CITED = regex.compile(
    r"[ \t]*[(（](?:see|cf\.?|per|ref\.?|source|via|siehe|vgl\.|voir|ver|vedi|zie|см\.?"
    r"|参见|参照|참고)(?![\p{L}])[^()（）]*[)）][ \t]*[.!?。！？]?[ \t]*$",
    regex.IGNORECASE,
)


# A bracket closing a statement that holds a link alone: "([runbook](https://…))", "(https://…)".
_LINKED = regex.compile(
    r"[ \t]*[(（][ \t]*(?:\[[^\]\n]*\]\([^()\s]*\)|<?https?://[^\s()<>]+>?)[ \t]*[)）]"
    r"[ \t]*[.!?。！？]?[ \t]*$"
)
# A reference: a ticket ("JIRA-1234", "PROJ-12"), an issue or pull request ("#123", "PR 45",
# "!67"), a commit or its hash.
_REFERENCE = (
    r"(?:[A-Z][A-Z0-9]+-\d+|[#!]\d+|(?i:pr|mr|issue|ticket|bug)[ \t]*#?\d+"
    r"|(?i:commit[ \t]+)?(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40})"
)
# A bracket closing a statement that holds a reference alone: "(JIRA-1234)", "(#123)".
_TICKET = regex.compile(rf"[ \t]*[(（][ \t]*{_REFERENCE}[ \t]*[)）][ \t]*[.!?。！？]?[ \t]*$")
_A_REFERENCE = regex.compile(_REFERENCE)
# A bracket closing a statement, its words (`_remarked`).
_CLOSING_BRACKET = regex.compile(r"[ \t]*[(（]([^()（）]*)[)）][ \t]*[.!?。！？]?[ \t]*$")
REMARK_WORDS = 8  # words a remark holds at most


# A date alone in a closing bracket, a few words before it at most: "(2026-12-07)", "(as of
# 2026-12-07)", "(updated 07.12.2026)".
_DATED = regex.compile(
    r"[ \t]*(?:\p{L}+[ \t]+){0,2}(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[./]\d{1,2}[./]\d{4})"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?[ \t]*"
)


def _remarked(text: str) -> regex.Match[str] | None:
    """A bracket closing `text` that says when it was written ("(2026-12-07)", "(as of
    2026-12-07)": a stamp, as one opening a line is, `statements.Statement.stamp`) or who
    confirmed or decided it ("(confirmed with the team)", "(mit dem Team abgestimmt)":
    `provenance` in data/cues.txt), short, and neither restricting nor negating what it
    closes ("(confirmed for staging only)" is kept)."""
    closing = _CLOSING_BRACKET.search(text)
    if closing is None:
        return None
    inner = closing.group(1)
    if _DATED.fullmatch(inner):
        return closing
    lex = lexicon()
    if _bare(inner) in lex.stresses:  # "(again)", "(important!)", "(wieder)"
        return closing
    if len(inner.split()) > REMARK_WORDS or not lex.provenance.search(inner):
        return None
    if lex.only.search(inner) or any(p.search(inner) for p in lex.negation.values()):
        return None
    return closing


SINCE_WORDS = 4  # words a closing stretch of `_since_stretch` holds at most after its opener
_DIGIT_DATE = regex.compile(r"\d{4}|\d{1,2}[./-]\d{1,2}")
_STRETCH_WORD = regex.compile(r"[\p{L}\p{N}][\p{L}\p{N}'’-]*")


def _since_stretch(text: str) -> int | None:
    """Where a closing stretch that says from when a statement holds starts ("since last
    week", "starting today", "effective immediately", "seit Montag", "depuis le 1er
    décembre": a word of `since` in data/cues.txt, then words that name a time and nothing
    else, `_only_when`), or None. A stretch that holds a word of `until` ("from Monday to
    Friday") says when the fact holds: part of it, not a stamp; so is one said right after
    an auxiliary ("… is effective from Monday": the time is what it says)."""
    if len(text) < 12:
        return None
    last = text.rstrip(" \t.!?。！？").rpartition(" ")[2]
    if not last or (
        norm(last) not in _time_ends()
        and not _DIGIT_DATE.search(last)
        and not _ends_with_reference(text)
    ):
        return None  # most statements: not closed by a time or a reference
    lex = lexicon()
    found = _stretch_after(lex.since_when, text)
    if found is None:
        return None
    # It names a time and nothing else ("с этой недели Игорь" names the on-call after it),
    # or the change it came with ("… since PR #123", "… seit JIRA-1234").
    when = found.group("when")
    words = _STRETCH_WORD.findall(norm(when))
    opener = text[found.start() : found.start("when")].strip(" \t,，")
    if len(opener) >= 3 and _referred(when):  # "с PR #123" is as often "with PR #123"
        return found.start()
    if not _only_when(words) or _a_range(words):
        return None
    return found.start()


def _stretch_after(pattern: regex.Pattern[str], text: str) -> regex.Match[str] | None:
    """The closing stretch `pattern` finds in `text`, unless it stands right after an
    auxiliary ("The freeze is effective from Monday", "The fix is in PR #45": what it names
    is the fact) or after nothing but function words ("It is …")."""
    found = pattern.search(text)
    if found is None:
        return None
    before = _STRETCH_WORD.findall(norm(text[: found.start()]))
    if not before or before[-1] in lexicon().auxiliaries:
        return None
    if all(w in function_words() for w in before):
        return None
    return found


def _ends_with_reference(text: str) -> bool:
    """Whether `text`'s last word or two are a reference ("… #123.", "… PR 45")."""
    tail = text.rstrip(" \t.!?。！？")
    if not any(c.isdigit() for c in tail[tail.rfind(" ") + 1 :]):
        return False  # every reference ends with a word holding a digit; most texts do not
    words = tail.rsplit(None, 2)
    return any(_A_REFERENCE.fullmatch(" ".join(words[-k:])) for k in (1, 2) if len(words) >= k)


def _referred(stretch: str) -> bool:
    """Whether a stretch names a reference and nothing else, a determiner before it at
    most ("PR #123", "the commit 3f2a9c1", "la PR #123")."""
    stretch = stretch.strip()
    if _A_REFERENCE.fullmatch(stretch):
        return True
    word, _, rest = stretch.partition(" ")
    return norm(word) in lexicon().determiners and _A_REFERENCE.fullmatch(rest.strip()) is not None


def closing_reference(text: str) -> int | None:
    """Where a closing stretch that names a reference after a word of `cites` starts ("…
    in PR #123", "…, see JIRA-1234", "… siehe PR 45"): where the fact was changed or is
    written down, read as a bracket of it is (`closing_citation`); not right after an
    auxiliary ("The fix is in PR #45": the pull request is what it says). Its number still
    keeps a note from being dropped as known (judgement.py, `_raw_values`)."""
    if len(text) < 12 or not _ends_with_reference(text):
        return None
    found = _stretch_after(lexicon().cites_in, text)
    if found is None or not _referred(found.group("when")):
        return None
    return found.start()


def closing_agreement(text: str) -> int | None:
    """Where a closing stretch after a comma that says the statement was agreed, or whose
    word it is, starts ("…, as discussed", "…, according to Alice", "…, comme convenu":
    `agreed` in data/cues.txt, at most `REMARK_WORDS` words), unless it restricts or
    negates ("…, as agreed for staging only"); or None."""
    comma = max(text.rfind(","), text.rfind("，"))
    if comma < 0 or len(text[comma:].split()) > REMARK_WORDS:
        return None
    lex = lexicon()
    found = lex.agreed.search(text)
    if found is None:
        return None
    rest = found.group("rest")
    if lex.only.search(rest) or any(p.search(rest) for p in lex.negation.values()):
        return None
    return found.start()


def _only_when(words: Sequence[str]) -> bool:
    """Whether `words` (normal forms) say a time and nothing else: they end with a word that
    names one (a period, a day, a month, a date), and every other is one too, a function
    word, an article or a word that places a time ("last", "cette", "прошлой"); "the
    upgrade last week" names an event as well."""
    if not words or len(words) > SINCE_WORDS:
        return False
    lex = lexicon()
    ends, closed = _time_ends(), function_words()
    if words[-1] not in ends and _DIGIT_DATE.search(words[-1]) is None:
        return False
    return all(
        w in ends
        or w in closed
        or w in lex.articles
        or w in lex.relative
        or any(c.isdigit() for c in w)
        for w in words[:-1]
    )


def opening_aside(text: str) -> tuple[int, bool] | None:
    """Where an opening set off by a comma that says from when a statement holds, or whose
    word it is, ends, and whether it says from when: a word of `now` alone ("Going
    forward, …", "Ab sofort, …"), one of `since` and a time ("Since last week, …", "Seit
    Montag, …": as `_since_stretch` reads one closing a statement), one of `agreed`, or "per"
    and a name, and a few words ("According to Alice, …", "Per Alice, …", "Wie besprochen,
    …"); or None."""
    if "," not in text and "，" not in text:
        return None
    lex = lexicon()
    found = lex.aside.match(text)
    if found is None:
        return None
    opener, rest = norm(found.group("opener")), found.group("rest")
    words = _STRETCH_WORD.findall(norm(rest))
    if lex.only.search(rest) or any(p.search(rest) for p in lex.negation.values()):
        return None
    if opener in lex.now_phrases:
        return (found.end(), True) if not words else None
    if opener in lex.since_phrases:
        if _only_when(words) and not _a_range(words):
            return found.end(), True
        return None
    if len(words) > SINCE_WORDS or (opener == "per" and not rest.strip()[:1].isupper()):
        return None
    return found.end(), False


def time_words(text: str) -> set[str]:
    """The words of `text` that name a day, a month or a day relative to today (`when`,
    weekdays, months in data/cues.txt and data/values.txt)."""
    return set(_STRETCH_WORD.findall(norm(text))) & _days_and_months()


@functools.cache
def _days_and_months() -> frozenset[str]:
    lex = lexicon()
    weekdays = (w for w, kind in lex.value_class.items() if kind == "weekday")
    return frozenset({*lex.when, *lex.months, *weekdays})


def _a_range(words: Sequence[str]) -> bool:
    """Whether a stretch of words (normal forms) that names a time holds a word of `until`
    after its first ("from Monday to Friday"): the time the fact holds in, not since when.
    Its first may be an article that is also "to" (the "a" of "desde a semana passada")."""
    return not lexicon().until.isdisjoint(words[1:])


@functools.cache
def _time_ends() -> frozenset[str]:
    """The words a closing stretch of `_since_stretch` may end with (and the last word of
    each phrase of `period`)."""
    periods = lexicon().periods
    return _days_and_months() | periods | {p.rsplit(" ", 1)[-1] for p in periods}


_HASHTAG = r"#[\p{L}_][\p{L}\p{N}_/-]*"
_TAGS = regex.compile(rf"(?:[ \t]+{_HASHTAG})+[ \t]*[.!?。！？]?[ \t]*$", regex.REVERSE)
# A hashtag anywhere, not a character reference ("&#123;") nor a link's fragment.
_ANY_TAG = regex.compile(rf"(?<![\p{{L}}\p{{N}}&/]){_HASHTAG}")


def hashtags(text: str) -> set[str]:
    """The hashtags of `text` ("#ops"), wherever they stand."""
    return set(_ANY_TAG.findall(text)) if "#" in text else set()


def closing_tags(text: str) -> int | None:
    """Where hashtags closing a statement start ("… two approvals #ops #deploy"), unless
    the statement names a channel with them: after a word of scope, an auxiliary, a
    function word, a negation or a word for a channel ("Alerts go to #ops", "The channel
    is #ops", "…, not #deploys"); or None."""
    found = _TAGS.search(text) if "#" in text else None
    if found is None:
        return None
    before = _STRETCH_WORD.findall(norm(text[: found.start()]))
    if not before:
        return None
    lex = lexicon()
    last = before[-1]
    if (
        last in lex.auxiliaries
        or last in lex.channels
        or last in function_words()
        or lex.scope.fullmatch(last)
        or any(p.fullmatch(last) for p in lex.negation.values())
    ):
        return None  # "… go to #ops", "… is #ops", "…, not #deploys"
    return found.start()


def shouted(text: str) -> bool:
    """Whether a statement in capitals is written so as a whole, not an acronym or two
    ("API", "CI/CD"): three words of two letters or more, and every word of letters in
    capitals (an uncased one, CJK, says a few acronyms stand in a sentence)."""
    if not text.isupper():
        return False
    worded = [w for w in _STRETCH_WORD.findall(text) if not w.isdigit()]
    return sum(len(w) >= 2 for w in worded) >= 3 and all(w.isupper() for w in worded)


def _bare(inner: str) -> str:
    """A bracket's words in their normal form, without the marks around them."""
    return norm(inner).strip(" \t!?.…*_") or norm(inner).strip()


def closing_hedge(text: str) -> int | None:
    """Where a bracket closing `text` that says, alone, that it is not settled starts
    ("(TBD)", "(temporary)", "(vorläufig)", "（暂定）": `hedge` in data/cues.txt), or None."""
    closing = _CLOSING_BRACKET.search(text) if "(" in text or "（" in text else None
    if closing is None or _bare(closing.group(1)) not in lexicon().hedges:
        return None
    return closing.start()


def typed_as(text: str) -> str:
    """`text` read as typed for (`_TYPED_AS`): the same length, character for character."""
    return text if text.isascii() else text.translate(_TYPED_AS)


def closing_citation(text: str) -> int | None:
    """Where a bracket closing `text` that says where it comes from, links, names a ticket,
    says who confirmed it or only stresses it starts ("(see PR #123)", "([runbook](…))",
    "(JIRA-1234)", "(confirmed with the team)", "(again)"), or None."""
    if "(" not in text and "（" not in text:
        return None
    found = _CITED.search(text) or _LINKED.search(text) or _TICKET.search(text) or _remarked(text)
    return found.start() if found is not None else None


def closing_since(text: str) -> int | None:
    """Where a closing stretch that says from when starts (`_since_stretch`), or a bracket
    closing `text` that says so alone ("(as of this sprint)", "(seit Montag)"), or None."""
    if ("(" in text or "（" in text) and (bracket := _since_bracket(text)) is not None:
        return bracket
    return _since_stretch(text)


def _since_bracket(text: str) -> int | None:
    closing = _CLOSING_BRACKET.search(text)
    if closing is None:
        return None
    inner = norm(closing.group(1)).strip()
    opener = next((o for o in _since_openers() if inner.startswith(o)), None)
    if opener is None:
        return None
    words = _STRETCH_WORD.findall(inner[len(opener) :])
    if not _only_when(words) or _a_range(words):
        return None
    return closing.start()


@functools.cache
def _since_openers() -> tuple[str, ...]:
    """The words of `since`, each with the space after it, the longest first."""
    return tuple(f"{o} " for o in sorted(lexicon().since_phrases, key=len, reverse=True))
