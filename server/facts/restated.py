"""A statement said again with words of its own: where they stand says what they do
(docs/writing.md, "The zero-loss rule").

Two statements whose terms align with nothing changed are the same fact only if the new
one adds nothing that narrows it. The readings here find such words on one alignment of
the two statements (difflib over their terms, in reading order):

- a plain word of its own right before a word both say ("the frontend build" / "the
  build"), or before all of them after nothing but a determiner or a word of scope
  ("Production backups …", "For read requests the API timeout …"): a narrower thing
  (`narrows`, `narrows_first`, `put_before`);
- a plain word of its own among them ("We deploy rarely on Fridays"), or in Chinese,
  Japanese and Korean a stretch holding a particle of scope (`inserts_a_word`); where a
  value changed, a stretch among them opened by a word of scope ("The API rate limit for
  the search endpoint is …": `scoped_between`);
- words of its own after all of them: a qualifier, or a thing added after a conjunction
  (`qualifies`, `said_then_more`).

`slots.compare` reads the same words where a value changed or a rule turned round; the
judgement reads them where it would otherwise drop the new statement as known.

One module past 500 lines on purpose: every reading here asks one question of one
alignment — which words of its own a statement says, and where they stand — and they
share its helpers (`_put_first`, `_own_opening`, `_put_among`, `cut_apart`); split by
where the words stand, each part would need the others' helpers back.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from difflib import SequenceMatcher
from typing import Literal

import regex
from memory_recall.server.facts.lexicon import CJK_CHAR, lexicon
from memory_recall.server.facts.terms import Term, Terms
from memory_recall.server.tokens import normalize

# Words of its own a statement adds after all of another's to qualify it (one is enough
# after a conjunction); in CJK, a stretch set off by one of these marks.
QUALIFIER_WORDS = 2
SET_OFF = regex.compile(r"[,，、(（\[【]")


def narrows(old: Terms, new: Terms) -> bool:
    """Whether `new` names a narrower thing than `old`: a plain word of its own put between
    terms both say, right before a plain word both say ("per token" / "for internal
    tokens", "the build" / "the frontend build", "squash merge pull requests" / "squash
    merge only small pull requests"). Only in a sentence said in the same order: where
    terms moved, what stands before a shared word is no sign ("Responses … are cached" /
    "… keeps cached responses"); words put before all of them mostly say when or why
    ("Since the upgrade last week, production runs …"), and one before a value, how
    ("upgraded again: PostgreSQL 15")."""
    matcher = SequenceMatcher(None, old.keys, new.keys, autojunk=False)
    return narrowed_aligned(old, new, matcher.get_opcodes(), set(old.keys))


def scoped_inside(old: Terms, new: Terms, known: frozenset[str]) -> bool:
    """`scoped_between` of two statements said in the same order: a stretch of `new`'s
    own, opened or (in CJK) closed by a word of scope, put among what both say ("API
    타임아웃은 읽기 요청에 대해 30초입니다" / "API 타임아웃은 30초입니다")."""
    matcher = SequenceMatcher(None, old.keys, new.keys, autojunk=False)
    return scoped_between(old, new, matcher.get_opcodes(), set(known))


def narrowed_aligned(
    old: Terms, new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], old_keys: set[str]
) -> bool:
    return any(
        _modifies_shared(new, j, old_keys) or _names_a_part_of_the_subject(new, j, old_keys)
        for j in _inserted_between(old, new, opcodes)
        if new.terms[j].key not in old_keys
    )


def _names_a_part_of_the_subject(terms: Terms, at: int, shared: set[str]) -> bool:
    """Whether the plain word `at` stands right after the words both say that open the
    statement (spaces between, determiners only before them) and right before an auxiliary
    verb (`auxiliary` in data/cues.txt): a noun compound whose head is its own ("The
    frontend preview is deployed to Netlify" / "The frontend is deployed to Vercel"), or a
    word after its noun ("Le frontend principal est …"): a narrower thing than the
    subject. (Without the auxiliary it is mostly the verb: "The backend runs on Java"; and
    a word that only says what kind of thing the subject is, `kind-of-thing`, names none:
    "The payments service is owned by Priya" / "Payments is now owned by Marco".)"""
    term = terms.terms[at]
    if term.kind != "word" or at == 0 or CJK_CHAR.match(term.key):
        return False
    lex = lexicon()
    surface = normalize(terms.text[term.start : term.end])
    if surface in lex.kinds_of_thing:
        return False
    opening = terms.terms[:at]
    following = _WORD.match(terms.text[term.end :].lstrip())
    return (
        following is not None
        and following.group().lower() in lex.auxiliaries
        and all(t.key in shared and t.kind in ("word", "name") for t in opening)
        and _opens_plainly(terms, opening[0])
        and all(
            not terms.text[a.end : b.start].strip() for a, b in itertools.pairwise((*opening, term))
        )
    )


def scoped_between(
    old: Terms, new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], old_keys: set[str]
) -> bool:
    """Whether the new statement puts, after a term it says again, a stretch of its own
    opened by a word of scope: the value it gives is a narrower thing's ("The API rate
    limit for the search endpoint is 20 requests per minute" / "… is 100 requests per
    minute", "The standup on Mondays is at 11:00" / "The standup is at 10:00", "PRs need
    1 approval for docs-only changes" / "PRs need 2 approvals"). Not a stretch that says
    when ("… moved to eu-central-1 in March": `when` in data/cues.txt), nor, after
    everything said again, one of values alone ("… at 03:00 UTC on weekdays") or one word
    after a word that says what for ("needs Node 22 to build": `purpose`). A day or a
    part of a day put inside needs no word of scope ("Les déploiements du vendredi …");
    where the rule turned round, one later in a stretch after everything said again
    counts too (`_scoped_later`). In Chinese, Japanese and Korean the particle of scope
    follows its words ("검색 API에 대해", "对于搜索接口"): a stretch of pairs of its own
    holding one, up to the term after it."""
    # Where the older says no day nor how often, one the newer says of its own is when its
    # value holds, however it is joined ("… tres aprobaciones los fines de semana", "…
    # brauchen am Wochenende drei Freigaben"), not what replaces a value.
    if not any(t.shape in SCOPE_SHAPES for t in old.terms) and any(
        t.shape in SCOPE_SHAPES and t.key not in old_keys for t in new.terms
    ):
        return True
    for run, last in _put_among(old, new, opcodes):
        own = [j for j in run if new.terms[j].key not in old_keys and new.terms[j].kind != "number"]
        if not own or all(_says_when(new, new.terms[j]) for j in own):
            continue
        first = new.terms[own[0]]
        if CJK_CHAR.match(first.key):
            stretch = new.text[first.start : _next_end(new, new.terms[run[-1]])]
        else:
            stretch = new.text[new.terms[own[0] - 1].end if own[0] else 0 : first.start]
        # "Les déploiements du vendredi …": Friday's deploys, whatever word; after the new
        # value, after a word of scope ("… is at 11:00 on Mondays", "… on weekends").
        if all(new.terms[j].shape in _WHEN_OF_A_THING for j in own) and not last:
            return True
        if (
            last
            and all(new.terms[j].shape in SCOPE_SHAPES for j in own)
            and lexicon().scope.search(new.text[first.start - len(stretch) : first.end])
        ):
            return True
        if last and all(new.terms[j].kind == "value" for j in own):
            continue
        if last and len(own) == 1 and stretch.strip().lower() in lexicon().purpose:
            continue  # "needs Node 22 to build": what for
        if lexicon().scope.search(stretch):
            return True
        turned = old.negated != new.negated
        if last and turned and not CJK_CHAR.match(first.key) and _scoped_later(new, own):
            return True
    return False


def _scoped_later(terms: Terms, own: list[int]) -> bool:
    """Whether, after its first word, a stretch put after everything said again goes on
    with a word of scope before words of its own that do not say when — read where the
    rule turned round: "Force-pushing to main is allowed for the release bot" / "Never
    force-push to main" is an exception for one case, not the rule turned round for all
    (where nothing turned, "… since the move to Frankfurt" says why)."""
    for at, j in enumerate(own[1:], start=1):
        gap = terms.text[terms.terms[j - 1].end : terms.terms[j].start]
        rest = [terms.terms[k] for k in own[at:]]
        if lexicon().scope.search(gap) and not all(_says_when(terms, t) for t in rest):
            return True
    return False


def _put_among(
    old: Terms, new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]]
) -> Iterator[tuple[range, bool]]:
    """Stretches of the new statement's terms put after a term it says again — between two
    of them, after all of them (then with True), or where it replaces a value with more
    terms than the value ("limit [for the search endpoint] 20" for "limit 100"), or, in an
    unspaced script whose pairs straddle what was put in, where it says more (制是 →
    制对, 对于, …, 口是). None where terms moved: a term of the old statement said
    outside the alignment's equal stretches and not in them too (one said again in what
    was put in, "API … 검색 API에 대해", is no move)."""
    aligned = {t.key for tag, _, _, j1, j2 in opcodes if tag == "equal" for t in new.terms[j1:j2]}
    if any(t.key in old.keys and t.key not in aligned for t in new.terms):
        return
    total = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "equal")
    shared = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            shared += i2 - i1
        elif tag == "insert" and shared:
            yield range(j1, j2), shared == total
        elif tag == "replace" and shared and j2 - j1 > i2 - i1:
            put = new.terms[j1:j2]
            if all(CJK_CHAR.match(t.key) for t in put):
                yield range(j1, j2), False
            elif all(t.valued for t in old.terms[i1:i2]):
                yield from _around_value(new, j1, j2, {t.kind for t in old.terms[i1:i2]})


def _around_value(terms: Terms, j1: int, j2: int, kinds: set[str]) -> Iterator[tuple[range, bool]]:
    """The stretches of `terms[j1:j2]`, put where a value of `kinds` stood, around a new
    value of those kinds: cut where words stand between two terms ("on Mondays | is at
    11:00", "30 seconds | for the export endpoint"), each with whether it comes after the
    new value. None when no stretch holds such a value: then all of it is the new value
    ("Microsoft Teams" for "Slack", "GitHub Actions" for "ci.internal:8080")."""
    put = terms.terms[j1:j2]
    stretches = cut_apart(terms, put, _APART)
    valued = [any(t.kind in kinds for t in put[a:b]) for a, b in stretches]
    if not any(valued):
        return
    first = valued.index(True)
    for at, (a, b) in enumerate(stretches):
        if not valued[at]:
            yield range(j1 + a, j1 + b), at > first


def _says_when(terms: Terms, term: Term) -> bool:
    """Whether a term says when: a month, "yesterday", or a date ("On March 5, …")."""
    return term.shape == "date" or terms.text[term.start : term.end].lower() in lexicon().when


# Days and parts of a day put among what a rule says name whose rule it is.
_WHEN_OF_A_THING = frozenset(("weekday", "daypart"))
# ... and so may how often, where nothing else says it is the rule's value ("周末值班的是
# Bob", "On weekends, …").
SCOPE_SHAPES = _WHEN_OF_A_THING | {"frequency"}
_APART = regex.compile(r"\S")  # words or marks between two terms: two stretches


def cut_apart(
    terms: Terms, put: Sequence[Term], apart: regex.Pattern[str]
) -> list[tuple[int, int]]:
    """`put` (terms of `terms`, in order) as stretches, (start, end) in `put`, cut between
    two terms where the text between them holds `apart`."""
    cuts = [
        k for k in range(1, len(put)) if apart.search(terms.text[put[k - 1].end : put[k].start])
    ]
    return list(zip([0, *cuts], [*cuts, len(put)], strict=True))


COMPOUND_QUALIFIER_WORDS = 3


def put_before(
    new: Terms,
    opcodes: Sequence[tuple[str, int, int, int, int]],
    old_keys: set[str],
    *,
    of_names: bool = True,
) -> bool:
    """Whether the new statement puts a word or a name of its own right before the first
    word both say (spaces between), in a sentence said in the same order: the thing that
    word names is narrower ("The Android build is uploaded to the Play Console" / "Builds
    are uploaded to TestFlight", "The analytics database runs ClickHouse 23" / "The
    database runs PostgreSQL 14", "Production deploys need two approvals" / "Deploys need
    one approval"). Words put first and set off ("Since the upgrade last week, production
    runs …") say when or why. Read where a value changed only: said again with nothing
    changed, such a word mostly says how much ("The user really likes short answers").
    `of_names` False: only a plain word narrows, not a name ("Используем PostgreSQL 13":
    a verb before it) nor CJK pairs glued to it."""
    opening = _put_first(new, opcodes, old_keys)
    if opening is None:
        return False
    put, after = opening
    if not of_names and (after.kind != "word" or CJK_CHAR.match(after.key)):
        return False
    if put[0].shape in SCOPE_SHAPES and all(CJK_CHAR.match(t.key) for t in put[1:]):
        # A day before the subject, glued, with の/的/의 or a space: "周五的部署", "金曜日の
        # デプロイ", "금요일 배포" (Friday's deploys).
        return new.text[put[-1].end : after.start].strip() in _ATTRIBUTIVE
    if all(t.kind == "word" and CJK_CHAR.match(t.key) for t in (*put, after)):
        # Pairs glued to the subject's first pair ("分析数据库" / "数据库"): a compound; or
        # made its attribute ("예시가 있는 짧은 답변": short answers with examples).
        return len(put) <= CJK_QUALIFIER_PAIRS and (
            put[-1].end > after.start
            or bool(_CJK_ATTRIBUTIVE.fullmatch(new.text[put[-1].end : after.start]))
        )
    if all(t.kind == "word" and CJK_CHAR.match(t.key) for t in put) and not CJK_CHAR.match(
        after.key
    ):
        # A CJK word before a subject in Latin letters ("夜间 CI", "夜間の CI"): a qualifier.
        gap = new.text[put[-1].end : after.start].strip()
        return of_names and len(put) <= CJK_QUALIFIER_PAIRS and gap in _ATTRIBUTIVE
    if not _opens_plainly(new, put[0]):
        return False  # "После миграции фронтенд …": a preposition opens, the words say when
    if len(put) != 1:
        # A noun compound of a few plain words right before the subject, nothing but spaces
        # between ("The search service owner" / "The owner"): a narrower thing too. A longer
        # opening, or one with words between ("После обновления в апреле продакшен …"),
        # says when.
        return (
            len(put) <= COMPOUND_QUALIFIER_WORDS
            and all(
                t.kind in ("word", "name") and t.key not in old_keys and not CJK_CHAR.match(t.key)
                for t in put
            )
            and all(not new.text[a.end : b.start].strip() for a, b in itertools.pairwise(put))
            and _part_of(new.text[put[-1].end : after.start])
        )
    word = put[0]
    return (
        word.kind in ("name", "word", "value")
        and word.key not in old_keys
        and not CJK_CHAR.match(word.key)
        and after.kind in ("word", "name")
        and _part_of(new.text[word.end : after.start])
    )


def _part_of(gap: str) -> bool:
    """Whether what stands between a word of the new statement's own and the first word
    both say joins them into one thing: nothing but spaces ("The search service owner"),
    or a word for "of" and determiners ("The tests of the frontend", "Les tests du
    frontend", "Die Doku des Backends": the frontend's tests, a narrower thing than the
    frontend)."""
    if not gap.strip():
        return True
    words = _WORD.findall(gap.lower())
    lex = lexicon()
    return (
        "".join(words) == "".join(gap.lower().split())
        and words[0] in lex.of
        and all(w in lex.determiners for w in words[1:])
    )


# Pairs a CJK word of up to three characters glued before another makes.
CJK_QUALIFIER_PAIRS = 3


# A label the line opens with ("correction: …", as `said` reads a labelled statement).
_LINE_LABEL = regex.compile(r"^[ \t]*\p{L}[\p{L} '’-]{0,30}[:：][ \t]*")


def _opens_plainly(new: Terms, first: Term) -> bool:
    """Whether what stands before the statement's first term is nothing or determiners
    ("The search service owner …"), not a function word that makes the words after it
    say when or why ("After migration …", "После миграции …"). A label the line opens
    with is no part of it ("Correction: production backups …": its cue announces the
    change, its word stands before nothing the statement says), nor is a word that only
    says when ("Now production backups …": `now.LANG`)."""
    before = _WORD.findall(_LINE_LABEL.sub("", new.text[: first.start]).lower())
    lex = lexicon()
    return all(word in lex.determiners or word in lex.nows for word in before)


_WORD = regex.compile(r"[\p{L}']+")


def _put_first(
    new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], old_keys: set[str]
) -> tuple[tuple[Term, ...], Term] | None:
    """The terms `new` puts before everything it says again, and the first of those,
    when it says them all in the old statement's order right after them; None otherwise."""
    if len(opcodes) < 2 or opcodes[0][0] != "insert" or opcodes[1][0] != "equal":
        return None
    if _said_again(new, opcodes, old_keys) is None:
        return None  # terms moved: not said in the same order
    put = new.terms[: opcodes[0][4]]
    return put, new.terms[len(put)]


# Words of its own a statement may put before what it says again and still name one
# narrower thing ("integration tests", "the read API timeout"); a longer opening is a
# clause of its own ("Since the upgrade last week production runs …").
QUALIFIER_FIRST_WORDS = 2
# What may stand between a CJK qualifier and the subject it names: nothing, or the
# particle that makes a noun an attribute (Japanese の, Chinese 的, Korean 의).
_ATTRIBUTIVE = frozenset(("", "の", "的", "의"))


def narrows_first(old: Terms, new: Terms, known: frozenset[str]) -> bool:
    """Whether `new` says all of `old` in its order after words of its own that name
    what it holds for, with nothing changed: "Production backups are encrypted" /
    "Backups are encrypted", "Integration tests must pass before merging", "The read API
    timeout is 30 seconds", "For read requests the API timeout is …", "运营备份已加密" /
    "备份已加密", "운영 백업은 …", "読み取りリクエストの API タイムアウトは …". Said of
    all backups, the old rule does not say the new one is the rule for the rest; dropped
    as known, the narrower rule was lost. Words set off before the rest ("Honestly,
    backups …", "Since the upgrade: …") or a value ("In 2024 …") say when or how, not
    what of; so does a word the old memory says elsewhere (`known`)."""
    opcodes = SequenceMatcher(None, old.keys, new.keys, autojunk=False).get_opcodes()
    said = _put_first(new, opcodes, set(old.keys))
    if said is None:
        return False
    put, first = said
    opening = new.text[: put[0].start]
    gap = new.text[put[-1].end : first.start]
    if not any(t.valued for t in put) and _the_users(opening, gap):
        # "the user's manager", "the user's team" (even when the old memory says "team"
        # elsewhere): whose, another subject than the user.
        return True
    if any(t.valued or t.key in known for t in put):
        return False
    if CJK_CHAR.match(put[-1].key):
        # Pairs: the qualifier glued to the subject, a space or an attributive particle
        # before it ("读请求的 API", "リクエストの API", "운영 백업은"), never set off
        # unless a word of scope says what it is ("对于读请求，API 超时是 …").
        if lexicon().scope.search(new.text[: first.start]):
            return True
        attribute = gap.strip() in _ATTRIBUTIVE or bool(_CJK_ATTRIBUTIVE.fullmatch(gap))
        return attribute and not SET_OFF.search(new.text[: first.start])
    if (
        lexicon().scope.fullmatch(opening.strip(" \t*_`").casefold())
        and len(put) <= QUALIFIER_WORDS
        and (len(put) > 1 or SET_OFF.search(gap))
    ):
        # "For read requests the API timeout …", "For reads, the API timeout …": where it
        # holds, first. One word not set off may be a verb after a pronoun the scope words
        # spell too ("On gère les migrations …").
        return True
    return (
        len(put) <= QUALIFIER_FIRST_WORDS
        and not gap.strip()
        and not SET_OFF.search(new.text[: first.start])
        and all(t.kind in ("word", "name") for t in put)
        and all(w in lexicon().determiners for w in _opening_words(opening))
    )


def _the_users(opening: str, gap: str) -> bool:
    """Whether the words put first are said of the user, the user's word (a function
    word) marking whose they are: its English possessive before them ("The user's team
    prefers …"), before them with an attributive particle ("ユーザーの上司は", "사용자의
    매니저는", "用户的经理"), or after them with a word for "of" ("Le manager de
    l'utilisateur", "El jefe del usuario"). Read before the words the old memory says
    elsewhere: "team" said in another of its statements is still the user's team."""
    lex = lexicon()
    head = opening.strip(" \t*_`")
    if any(head.endswith(w + p) for w in lex.users if CJK_CHAR.match(w) for p in _OF_THE_USER):
        return True
    before = _opening_words(opening)
    if any(map(_users_own, before)) and all(w in lex.determiners or _users_own(w) for w in before):
        return not gap.strip()  # "The user's team prefers …"
    words = _opening_words(gap)
    return (
        len(words) >= 2
        and words[0] in lex.of
        and words[-1] in lex.users
        and all(w in lex.of or w in lex.determiners or w in lex.users for w in words)
        and all(w in lex.determiners for w in _opening_words(opening))
    )


_OF_THE_USER = ("の", "的", "의")  # attributive particles after the user's word


def _users_own(word: str) -> bool:
    """Whether a word is the user's possessive ("the user's manager works at Acme" says
    whose, a narrower thing than "the user works at Acme")."""
    return word in lexicon().users and word.endswith(("'s", "’s"))


def said_by_a_pronoun(terms: Terms) -> bool:
    """Whether a statement opens, before its first term, with a pronoun of who writes
    where its subject would stand ("We use React 17", "Wir nutzen …", "我们使用 …";
    `speaker` in data/cues.txt), or with the word for the user, a function word too
    ("Each user may upload 10 files a day"; `user`). A statement that names a subject
    there instead ("The admin app uses React 18", "Each admin may upload 100 files")
    says its value of that thing, not of all "we" use or of the user."""
    if not terms.terms:
        return False
    lex = lexicon()
    opening = terms.text[: terms.terms[0].start]
    if CJK_CHAR.search(opening):
        return any(w in opening for w in lex.speakers | lex.users if CJK_CHAR.match(w))
    return any(w in lex.speakers or w in lex.users for w in _opening_words(opening))


def _opening_words(text: str) -> list[str]:
    """The words of a statement's opening, lower case; an elided article ("l'") is one,
    and so is an English possessive ("user's")."""
    return [w.casefold().replace("’", "'") for w in _OPENING_WORD.findall(text)]


_OPENING_WORD = regex.compile(r"\p{L}+(?:['’]s\b|'?)")


def said_then_more(old: Terms, new: Terms, added: Sequence[Term]) -> bool:
    """Whether `new` says all of `old` in its order and then, right after the last of them
    (no comma between), words of its own (`QUALIFIER_WORDS` at least): a qualifier put at
    the end, whatever the new statement announces. A clause set off says what replaces
    the rule ("ya no se escriben en español, sino en inglés"); in Chinese, Japanese and
    Korean the two cannot be told apart by a comma, so never there."""
    last = _said_in_order(old.keys, new.keys)
    if last is None or not added:
        return False
    after = [t for t in new.terms[last + 1 :] if t in added]
    if len(after) != len(added) or CJK_CHAR.match(after[0].key):
        return False  # words of its own elsewhere too, or CJK
    gap = new.text[new.terms[last].end : after[0].start]
    return not SET_OFF.search(gap) and ";" not in gap and len(after) >= QUALIFIER_WORDS


def named_first(
    new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], old_keys: set[str]
) -> bool:
    """Whether the new statement puts words of its own before everything it says again,
    not set off by a comma: where the rule turned round, whose turn it is ("The release
    bot can push directly to main" / "Never push directly to main", "发布机器人可以直接推送到
    main"), not the rule turned round for all. Set off, they say when or why ("After the
    migration, pushing directly to main is fine")."""
    opening = _own_opening(new, opcodes, old_keys)
    if opening is None:
        return False
    put, after, own = opening
    return bool(own) and not SET_OFF.search(new.text[put[-1].end : after.start])


def _own_opening(
    new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], old_keys: set[str]
) -> tuple[tuple[Term, ...], Term, list[Term]] | None:
    """`_put_first`'s opening, the first term said again, and the opening's words of its
    own: not said by the old statement, not a number, and not a CJK pair reaching into
    the first word said again ("现在可以直接…": 以直)."""
    opening = _put_first(new, opcodes, old_keys)
    if opening is None:
        return None
    put, after = opening
    own = [
        t for t in put
        if t.key not in old_keys and t.kind != "number" and t.end <= after.start
    ]  # fmt: skip
    return put, after, own


def scoped_first(
    new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], old_keys: set[str]
) -> bool:
    """Whether the new statement opens, before everything it says again, with words of its
    own that say where or for what it holds: a word of scope first, the opening set off by
    a comma ("On weekends, on-call is Bob" / "On-call is Alice", "For hotfixes, deploys
    need one approval", "In the payments repo, …"; "Voor hotfixes hebben …" needs no comma,
    but "On" does), a day or a part of a day ("Mondays: …", "Nachts …"), or how often ("Le
    week-end, …", "По выходным …"); in Chinese, Japanese and Korean, an opening holding a
    particle of scope ("对于热修复，…"). The rule the old statement gave still holds for
    the rest. Not an opening that says when it changed ("In March, …", "In 2024, …",
    "Yesterday, …"), nor one with no word of scope ("After the migration, …", "Since the
    upgrade, …")."""
    opening = _own_opening(new, opcodes, old_keys)
    if opening is None:
        return False
    put, after, own = opening
    if not own or all(_says_when(new, t) for t in own):
        return False
    head = new.text[: after.start]
    if all(t.shape in _WHEN_OF_A_THING for t in own):
        return True  # "Mondays: …", "Nachts …"
    if all(t.shape == "frequency" for t in own):
        return True  # "Le week-end, l'astreinte …", "Am Wochenende ist …", "По выходным …"
    set_off = SET_OFF.search(new.text[put[-1].end : after.start])
    if CJK_CHAR.match(own[0].key):
        return bool(lexicon().scope.search(head))
    scoped = lexicon().scope.match(_LINE_LABEL.sub("", head).lstrip(" \t*_`"))
    if not scoped:
        return False
    # "On" not set off may be the French pronoun before a verb ("On écrit les messages …"),
    # unless a name follows it ("On staging the timeout …").
    named = all(t.kind in ("name", "ident") for t in own)
    return bool(set_off or named or scoped.group().casefold() != "on")


def opens_scoped(terms: Terms, other_keys: set[str]) -> bool:
    """Whether a statement opens with a word of scope before a word the other statement
    does not say, in whatever order the rest goes ("Für Hotfixes brauchen die Deploys eine
    Freigabe" beside "Die Deploys brauchen drei Freigaben"): its rule is for that case."""
    if not terms.terms:
        return False
    first = terms.terms[0]
    if first.key in other_keys or first.kind == "number" or _says_when(terms, first):
        return False
    opening = terms.text[: first.start].lstrip(" \t*_`")
    scoped = lexicon().scope.fullmatch(opening.rstrip())
    return bool(scoped) and scoped.group().casefold() != "on"


def scoped_after(old: Terms, new: Terms) -> bool:
    """Whether `new`, after the last term both say, goes on with words of its own, one of
    them after a word of scope ("El force-push a main está permitido para el bot de
    releases" / "Nunca hagas force-push a main"): where the rule turned round, for one
    case only. Not in Chinese, Japanese or Korean, whose particles of scope follow."""
    shared = [j for j, t in enumerate(new.terms) if t.key in old.keys]
    if not shared:
        return False
    own = [
        j for j in range(shared[-1] + 1, len(new.terms))
        if new.terms[j].key not in old.keys and new.terms[j].kind != "number"
    ]  # fmt: skip
    if not own or CJK_CHAR.match(new.terms[own[0]].key):
        return False
    # A clause set off says what replaces the rule ("ya no se escriben en español, sino en
    # inglés", "больше не пишем на английском, только на русском").
    tail = new.text[new.terms[shared[-1]].end :]
    if SET_OFF.search(tail) or ";" in tail:
        return False
    return _scoped_later(new, [shared[-1], *own])


def _said_again(
    new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], old_keys: set[str]
) -> int | None:
    """How many terms of the old statement `new` says again, when it says every one of
    them in the old statement's order (the alignment's equal stretches hold them all);
    None when terms moved."""
    total = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "equal")
    return total if total == sum(1 for t in new.terms if t.key in old_keys) else None


def _inserted_between(
    old: Terms, new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]]
) -> Iterator[int]:
    """The new statement's terms put between two of the terms it says again, when it says
    them in the old statement's order (none when terms moved)."""
    total = _said_again(new, opcodes, set(old.keys))
    if total is None:
        return  # terms moved: not said in the same order
    shared = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            shared += i2 - i1
        elif tag == "insert" and 0 < shared < total:
            yield from range(j1, j2)


def of_inserted(
    old: Terms, new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], known: Iterable[str]
) -> bool:
    """Whether `new` puts, right after a word both say, a word for "of" and a plain word
    of its own among the terms it says again: "Los backups de producción están cifrados"
    / "Los backups están cifrados", "Die Backups der Produktion …": which of them, a
    narrower thing (`_part_of`, read the other way round)."""
    known = set(known)
    for j in _inserted_between(old, new, opcodes):
        term = new.terms[j]
        if term.valued or term.key in known or not j:
            continue
        before = new.terms[j - 1]
        gap = new.text[before.end : term.start]
        if before.key in known and gap.strip() and _part_of(gap):
            return True
    return False


def names_which(old: Terms, new: Terms, known: frozenset[str]) -> bool:
    """`of_inserted`, the two statements aligned here."""
    opcodes = SequenceMatcher(None, old.keys, new.keys, autojunk=False).get_opcodes()
    return of_inserted(old, new, opcodes, known)


def inserts_a_word(old: Terms, new: Terms, known: frozenset[str]) -> bool:
    """Whether `new` says `old`'s terms in their order with a plain word of its own put
    between two of them, one the old memory (`known`, its terms) says nowhere: "We
    deploy rarely on Fridays" / "We deploy on Fridays", or a negation in a language the
    cues do not know ("We deployen niet meer op vrijdag"). Such a word may turn the
    statement round or say how often; it is never the same fact for sure. Words put
    before all of the shared terms mostly say when or why, and those after them are
    `qualifies`'s. Not in Chinese, Japanese or Korean, whose rewordings put pairs of
    their own between the shared ones ("10秒でタイムアウトします" / "10秒を過ぎると
    タイムアウトになります"), and whose negations the cues know — unless the pairs put
    there hold a particle of scope ("읽기 요청에 대해": `inserts_aligned`)."""
    opcodes = SequenceMatcher(None, old.keys, new.keys, autojunk=False).get_opcodes()
    return inserts_aligned(old, new, opcodes, known)


def inserts_aligned(
    old: Terms, new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], known: Iterable[str]
) -> bool:
    """`inserts_a_word` on an alignment already made; in Chinese, Japanese and Korean, a
    stretch of pairs of its own put between that holds a word of scope ("API 타임아웃은
    읽기 요청에 대해 30초입니다": "for read requests")."""
    inserted = [new.terms[j] for j in _inserted_between(old, new, opcodes)]
    if any(
        not term.valued and term.key not in known and not CJK_CHAR.match(term.key)
        for term in inserted
    ):
        return True
    own = [t for t in inserted if CJK_CHAR.match(t.key) and t.key not in known]
    return bool(own) and any(
        lexicon().scope.search(new.text[t.start : _next_end(new, t)]) for t in own
    )


def _next_end(terms: Terms, term: Term) -> int:
    """Where the term after `term` ends (the text's end after the last): a particle of
    scope stands between two terms ("요청에 대해": 요청, 에 대해, then 대해)."""
    later = [t.end for t in terms.terms if t.start >= term.end]
    return min(later) if later else len(terms.text)


def qualifies(
    old: Terms, new: Terms, known: frozenset[str], *, announced: bool = False
) -> Literal["added", "narrower"] | None:
    """Whether `new` says all of `old`, in its order, and then words of its own after
    them, most of them said nowhere in the old memory (`known`, its terms): a qualifier
    put at the end ("Code review needs two approvals" / "… for changes to the payments
    service": "narrower") or a thing added after a conjunction ("… and the invoicing
    service", "… et des paiements": "added"); None if neither. Never the same fact for
    sure.

    Two words at least, or one after a conjunction. In Chinese, Japanese and Korean the
    verb and its endings come last ("火曜日に行います" / "火曜日です"), so there only a
    stretch set off by a comma or a bracket, or after a conjunction, counts ("，针对支付服务
    的改动", "（決済サービスの変更の場合）", "山本さんと中村さん"). Not where the new statement
    announces a change the old one does not (by "now" alone, plain words can still narrow:
    "… für Änderungen am Zahlungsdienst ab sofort"): a replacement names its new value last —
    unless `new` is the older of the two (`announced`: read from the older side, a change
    it announced is no replacement of the newer statement, written after it)."""
    if not old.keys or len(new.keys) <= len(old.keys):
        return None
    announced_now = new.change_cue and not old.change_cue and not announced
    if announced_now and new.announces_what:
        return None
    # All of old in its order; a word it says twice may be said once, and an identifier
    # said again extended is said ("alerts go to #alerts" / "alerts go to #alerts-payments
    # for …": a narrower channel, for a narrower case).
    said = _extensions_as_said(old, new)
    last = _said_in_order(old.keys, said)
    if last is None:
        last = _said_in_order(list(dict.fromkeys(old.keys)), said)
    if last is None:
        return None
    after = [t for t in new.terms[last + 1 :] if t.kind in ("word", "name")]
    own = sum(1 for t in after if t.key not in known)
    if not own or 2 * own < len(after):
        return None
    if announced_now and len(after) < QUALIFIER_WORDS:
        return None  # "… is now written in Rust": one word after "now", its new value
    cjk = bool(CJK_CHAR.match(after[0].key))
    # What stands between: in CJK, pairs overlap and the first may hold the conjunction
    # ("服务和支付": the pair 务和).
    between = new.text[new.terms[last].end : after[0].end if cjk else after[0].start]
    # In a spaced script the conjunction opens what stands between ("… and the invoicing
    # service", "… e dos pagamentos"): the Portuguese article "o" of "para o serviço" is
    # the Spanish and Italian "or".
    joined = between if cjk else between.lstrip(" \t,")
    if (lexicon().conjunction.search if cjk else lexicon().conjunction.match)(joined):
        return "added"
    if (cjk and SET_OFF.search(between)) or (not cjk and len(after) >= QUALIFIER_WORDS):
        return "narrower"
    if not cjk and lexicon().scope.search(between):  # "… 30 seconds for reads"
        return "narrower"
    if not cjk and len(after) == 1 and lexicon().with_.search(between):
        # One word of its own after "with", "via" (`with` in data/cues.txt: "The user
        # prefers concise answers with examples"): no word of scope, but the thing given
        # along is new, and dropped as known it was gone. (Not after "as": "as usual".)
        return "narrower"
    return None


def _extensions_as_said(old: Terms, new: Terms) -> list[str]:
    """`new`'s keys, each identifier that extends one of `old`'s ("#alerts-payments" of
    "#alerts", "jobs-high" of "jobs") read as that one."""
    idents = [t.key for t in old.terms if t.kind == "ident"]
    return [
        next((k for k in idents if t.kind == "ident" and _extends(t.key, k)), t.key)
        for t in new.terms
    ]


def _extends(key: str, base: str) -> bool:
    return len(key) > len(base) + 1 and key.startswith(base) and key[len(base)] in "-_."


def _said_in_order(keys: Sequence[str], said: Sequence[str]) -> int | None:
    """Where in `said` the last of `keys` is, when all of them are said in their order."""
    last, at = -1, 0
    for j, key in enumerate(said):
        if at < len(keys) and key == keys[at]:
            at += 1
            last = j
    return last if at == len(keys) else None


def _modifies_shared(terms: Terms, at: int, shared: set[str]) -> bool:
    """Whether the plain term `at` stands right before a plain word of `shared` (spaces
    between; terms are in reading order, and CJK pairs overlap: the next one past it)."""
    term = terms.terms[at]
    after = next((t for t in terms.terms[at + 1 :] if t.start >= term.end), None)
    if term.valued or after is None:
        return False
    gap = terms.text[term.end : after.start]
    if CJK_CHAR.match(term.key) and after.kind == "word" and after.key in shared:
        # Pairs of its own made an attribute of a shared word ("例付きの短い回答": answers
        # with examples): the word's ending, then の, 的 or 의.
        return bool(_CJK_ATTRIBUTIVE.fullmatch(gap))
    return after.kind == "word" and after.key in shared and not gap.strip()


# What makes the CJK words before it an attribute of the next word: an ending of up to two
# kana or one hangul syllable, then の, 的, 의, or a Korean "that has / lacks" (있는, 없는).
_CJK_ATTRIBUTIVE = regex.compile(
    r"\p{Hiragana}{0,2}の\s*|的\s*|\p{Hangul}?의\s*|\p{Hangul}?\s?(?:있는|없는)\s*"
)
