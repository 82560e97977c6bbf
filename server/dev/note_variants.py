"""How people and agents write the same two notes: the variants `dev sweep-facts`
judges a labelled pair again in (server/dev/fact_sweeps.py measures them; docs/writing.md,
"Measuring", has their figures). Each sweep rewrites one pair of the tuning sets one way,
or leaves it out (None) where the way does not apply to its language or verdict:

- `title`: both given one generic title by hand ("Notes", as an agent's MCP remember may
  give one);
- `old-title`: the new note given the old note's title, where that title is its opening
  words (an agent that keeps the title of the note it updates);
- `reversed`: the older written second (facts come in any order; independent pairs only);
- `extra-new` / `extra-old`: an unrelated statement added to the new / to the old note;
- `note`: the new note opened with a label that says how to read it ("Note:", "FYI:");
- `lower`: both typed in lower case;
- `now`: "now" said in the new statement, in its language (independent pairs: after it,
  or first in Chinese, Japanese and Korean);
- `code`: every word holding a digit written as code in both ("port `8080`");
- `bold`: … in bold ("Kafka **7** days");
- `quoted`: … in quotes ("Kafka "7" days");
- `italic`: the new note said in italics as a whole ("_…_");
- `emoji`: the new note opened with an emoji ("⚠️ …");
- `cited`: the new note closed with where it comes from ("… (see PR #123).");
- `dated` / `dated-new`: both notes opened with the day they were written, as a journal
  is ("2026-11-02: …", "2026-12-07: …") / the new one only;
- `dated-after`: the new note closed with that day in brackets ("… (2026-12-07).");
- `dated-label`: the new note opened with a label that carries that day ("UPDATE
  (2026-12-07): …");
- `as-of`: the new note opened with "As of 2026-12-07," (English);
- `update` / `correction` / `rule`: the new note opened with "Update:" / "Correction:" /
  "Rule:" (English; "Rule:" stands for the labels that say what kind of note it is);
- `label`: the new note opened with a label of words neither note says ("Infra:");
- `said`: the new note opened with who said it, in its language ("The user said: …");
- `bullet`: both written as a markdown bullet ("- …");
- `unpunctuated`: both without their last full stop;
- `why` / `why-new`: both notes / the new one followed by a `**Why:**` line and a `**How
  to apply:**` line, each note's own, as Claude Code writes its memories (the labels in
  English, their text in the note's language);
- `headed`: the old note's title given by hand also written as its heading ("# Billing
  service" over its lines), as a markdown note is;
- `remark`: the new note closed with a remark of who confirmed it, in its language ("…
  (confirmed with the team).");
- `link`: the new note closed with a link in brackets ("… ([runbook](https://…)).").
- `since` / `since-bracket`: the new note closed with from when it holds, in its language
  ("… since last week", "… (seit letzter Woche)");
- `agreed`: … with ", as discussed", in its language;
- `going-forward` / `according`: the new note opened with "Going forward, …" / "According
  to Alice, …", in its language;
- `ticket` / `hedge` / `again`: … closed with "(JIRA-1234)" / "(TBD)" / "(again)", in its
  language;
- `tldr` / `update-dated`: … opened with "TL;DR:" / "Update 2026-12-07:" (English);
- `hashtag` / `nbsp`: … closed with " #ops" / written with no-break spaces;
- `agreed-that`: … opened with "We agreed that …", in its language;
- `upper`: the new note written in capitals;
- `since-pr` / `in-pr`: … closed with the pull request it came with, in its language ("…
  since PR #123", "… seit PR #123") / with where it was changed ("… in PR #123").

One job past 500 lines: a table of one function per sweep, each a few lines, and the
phrases each language writes them with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import regex
from memory_recall.server.dev.fact_eval import memory_of
from memory_recall.server.facts.judgement import MemoryText
from memory_recall.server.store.metadata import derive

GENERIC_TITLE = "Notes"
# An unrelated statement in each language the sets hold (English otherwise).
EXTRA = {
    "en": "The team standup is at 9:30.",
    "de": "Das Team-Standup ist um 9:30.",
    "fr": "Le standup de l'équipe est à 9h30.",
    "es": "El standup del equipo es a las 9:30.",
    "ru": "Стендап команды в 9:30.",
    "zh": "团队站会在 9:30。",
    "ja": "チームの朝会は 9:30。",
    "ko": "팀 스탠드업은 9:30이다.",
}
EXTRA_MARKS = ("9:30", "9h30")
# A label that says how to read a line, in each language ("Note:").
NOTE = {"en": "Note: ", "de": "Hinweis: ", "fr": "Remarque : ", "es": "Nota: ",
        "ru": "Примечание: ", "zh": "备注：", "ja": "メモ：", "ko": "참고: "}  # fmt: skip
_UNSPACED = ("zh", "ja")
# A reason and a use for each note (old, new), as Claude Code writes them under a memory's
# fact (`why`, `why-new`).
WHY = {
    "en": ("it was agreed in the team retro.", "the user asked for it.",
           "check this before changing it.", "follow it in every session."),
    "de": ("so im Team-Retro beschlossen.", "der Nutzer hat darum gebeten.",
           "vor jeder Änderung prüfen.", "in jeder Sitzung befolgen."),
    "fr": ("décidé lors de la rétro de l'équipe.", "l'utilisateur l'a demandé.",
           "vérifier avant de modifier.", "à suivre à chaque session."),
    "es": ("se acordó en la retro del equipo.", "el usuario lo pidió.",
           "comprobarlo antes de cambiarlo.", "seguirlo en cada sesión."),
    "ru": ("так решили на ретро команды.", "так попросил пользователь.",
           "проверять перед изменением.", "соблюдать в каждой сессии."),
    "zh": ("团队复盘时定下的。", "用户要求的。", "修改前先确认。", "每次会话都遵守。"),
    "ja": ("チームの振り返りで決まった。", "ユーザーの依頼。", "変更前に確認する。",
           "毎回のセッションで守る。"),
    "ko": ("팀 회고에서 정했다.", "사용자가 요청했다.", "바꾸기 전에 확인한다.",
           "매 세션마다 따른다."),
}  # fmt: skip


@dataclass(frozen=True)
class Variant:
    """One labelled pair as a sweep rewrote it."""

    pair_id: str
    verdict: str
    old: MemoryText
    new: MemoryText
    plain_old: MemoryText
    plain_new: MemoryText
    extra: str = ""  # the unrelated statement the sweep added, which a rewrite must keep


def _derived(body: str) -> MemoryText:
    d = derive(body)
    return MemoryText(d.title, d.description, body, d.type)


def _with_body(memory: MemoryText, body: str) -> MemoryText:
    return (
        _derived(body)
        if memory.title == derive(memory.body).title
        else MemoryText(memory.title, memory.description, body, memory.type)
    )


def _joined(first: str, second: str, lang: str) -> str:
    return first + ("" if lang in _UNSPACED else "\n") + second


Sweep = Callable[[dict[str, Any], MemoryText, MemoryText], Variant | None]


def _variant(p: dict[str, Any], old: MemoryText, new: MemoryText, **changes: Any) -> Variant:
    plain_old, plain_new = memory_of(p["old"]), memory_of(p["new"])
    return Variant(p["id"], p["verdict"], old, new, plain_old, plain_new, **changes)


def _title(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    titled = (MemoryText(GENERIC_TITLE, "", m.body, m.type) for m in (old, new))
    return _variant(p, *titled)


def _old_title(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    if "text" not in p["old"]:
        return None  # a title written for the old note's subject names no other note's
    return _variant(p, old, MemoryText(old.title, old.description, new.body, new.type))


def _reversed(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    if p["verdict"] != "independent":
        return None
    return _variant(p, new, old)


def _extra(p: dict[str, Any], old: MemoryText, new: MemoryText) -> str | None:
    """The unrelated statement for a pair, None when either note already says it."""
    extra = EXTRA.get(p["lang"], EXTRA["en"])
    return None if any(extra in m.body for m in (old, new)) else extra


def _extra_new(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    extra = _extra(p, old, new)
    if extra is None:
        return None
    return _variant(p, old, _with_body(new, _joined(new.body, extra, p["lang"])), extra=extra)


def _extra_old(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    extra = _extra(p, old, new)
    if extra is None:
        return None
    return _variant(p, _with_body(old, _joined(old.body, extra, p["lang"])), new, extra=extra)


def _note(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _with_body(new, NOTE.get(p["lang"], NOTE["en"]) + new.body))


def _lower(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, _derived(old.body.lower()), _derived(new.body.lower()))


# Who said a note, opening it (`said`).
SAID = {"en": "The user said: ", "de": "Der Nutzer sagt: ", "fr": "L'utilisateur a dit : ",
        "es": "El usuario dijo: ", "ru": "Пользователь сказал: ", "zh": "用户说：",
        "ja": "ユーザーによると：", "ko": "사용자 말로는: "}  # fmt: skip
# A remark closing a note: who confirmed it (`remark`).
REMARK = {"en": "confirmed with the team", "de": "mit dem Team abgestimmt",
          "fr": "confirmé avec l'équipe", "es": "confirmado con el equipo",
          "ru": "согласовано с командой", "zh": "已与团队确认", "ja": "チームと確認済み",
          "ko": "팀과 확인함"}  # fmt: skip

# A closing stretch that says from when the new note holds (`since`), in the spaced
# languages (Chinese, Japanese and Korean put it first: not swept).
SINCE = {
    "en": "since last week", "fr": "depuis la semaine dernière", "de": "seit letzter Woche",
    "es": "desde la semana pasada", "pt": "desde a semana passada",
    "it": "dalla settimana scorsa", "nl": "sinds vorige week", "ru": "с прошлой недели",
    "el": "από την περασμένη εβδομάδα",
}  # fmt: skip

# … from the pull request it came with (`since-pr`).
SINCE_PR = {
    "en": "since PR #123", "fr": "depuis la PR #123", "de": "seit PR #123",
    "es": "desde el PR #123", "pt": "desde o PR #123", "it": "dalla PR #123",
    "nl": "sinds PR #123", "ru": "начиная с PR #123", "el": "από το PR #123",
}  # fmt: skip
# … and where it was changed (`in-pr`).
IN_PR = {
    "en": "in PR #123", "fr": "dans la PR #123", "de": "in PR #123", "es": "en el PR #123",
    "pt": "no PR #123", "it": "nella PR #123", "nl": "in PR #123", "ru": "в PR #123",
}  # fmt: skip

# A closing stretch after a comma that says the new note was agreed (`agreed`), in the
# spaced languages.
AGREED = {
    "en": "as discussed", "fr": "comme convenu", "de": "wie besprochen",
    "es": "como se acordó", "pt": "conforme combinado", "it": "come concordato",
    "nl": "zoals besproken", "ru": "как договорились", "el": "όπως συμφωνήθηκε",
}  # fmt: skip

# An opening set off by a comma that says from when the new note holds (`going-forward`) or
# whose word it is (`according`), in the spaced languages.
GOING_FORWARD = {
    "en": "Going forward", "fr": "Désormais", "de": "Ab sofort", "es": "A partir de ahora",
    "pt": "A partir de agora", "it": "D'ora in poi", "nl": "Voortaan", "ru": "С этой недели",
    "el": "Από τώρα",
}  # fmt: skip
ACCORDING = {
    "en": "According to Alice", "fr": "D'après Alice", "de": "Laut Alice",
    "es": "Según lo acordado", "pt": "Conforme combinado", "it": "Come concordato",
    "nl": "Volgens Alice", "ru": "По словам Алисы", "el": "Σύμφωνα με την Αλίκη",
}  # fmt: skip

# A bracket closing the new note that says it is not settled (`hedge`), or that stresses
# or repeats it (`again`).
HEDGE = {
    "en": "TBD", "fr": "provisoire", "de": "vorläufig", "es": "provisional",
    "pt": "provisório", "it": "provvisorio", "nl": "voorlopig", "ru": "временно",
    "el": "προσωρινό", "zh": "暂定", "ja": "暫定", "ko": "잠정",
}  # fmt: skip
AGAIN = {
    "en": "again", "fr": "encore", "de": "wieder", "es": "de nuevo", "pt": "novamente",
    "it": "di nuovo", "nl": "opnieuw", "ru": "снова", "el": "ξανά", "zh": "再次",
    "ja": "再度", "ko": "다시",
}  # fmt: skip

# "We agreed that …" opening the new note (`agreed-that`).
AGREED_THAT = {
    "en": "We agreed that", "fr": "Nous avons convenu que", "es": "Acordamos que",
    "pt": "Combinamos que", "it": "Abbiamo deciso che", "nl": "We hebben afgesproken dat",
}  # fmt: skip

# The days a journal's notes are stamped with (`dated`, `dated-new`).
OLD_DAY, NEW_DAY = "2026-11-02", "2026-12-07"

# "now" in each language, where a statement puts it: after it (before its full stop) in
# the spaced ones, first in Chinese, Japanese and Korean.
NOW_AFTER = {
    "en": "now", "fr": "désormais", "de": "ab sofort", "es": "a partir de ahora",
    "pt": "a partir de agora", "it": "d'ora in poi", "nl": "voortaan", "ru": "теперь",
    "el": "τώρα",
}  # fmt: skip
NOW_BEFORE = {"zh": "现在", "ja": "今は", "ko": "이제 "}


def _now(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    if p["verdict"] != "independent":
        return None
    body = new.body.strip()
    if p["lang"] in NOW_AFTER:
        stop = body[-1] if body[-1:] in (".", "!") else "."
        body = f"{body.rstrip('.!')} {NOW_AFTER[p['lang']]}{stop}"
    elif p["lang"] in NOW_BEFORE:
        body = NOW_BEFORE[p["lang"]] + body
    else:
        return None
    return _variant(p, old, _with_body(new, body))


# A word holding a digit, as agents write values in notes: "port `8080`", "`us-east-1`".
_DIGITED = regex.compile(r"(?<![`\w])([\w.\-:/]*\d[\w.\-:/]*\w|\d)(?![`\w])")


def _code(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, *(_with_body(m, _DIGITED.sub(r"`\1`", m.body)) for m in (old, new)))


def _bold(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, *(_with_body(m, _DIGITED.sub(r"**\1**", m.body)) for m in (old, new)))


def _quoted(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, *(_with_body(m, _DIGITED.sub(r'"\1"', m.body)) for m in (old, new)))


def _emoji(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _with_body(new, f"⚠️ {new.body.strip()}"))


def _bracketed(memory: MemoryText, inside: str) -> MemoryText:
    """`memory` with " (inside)" closing its body, before its full stop if it has one."""
    body = memory.body.strip()
    stop = body[-1] if body[-1:] in (".", "。") else ""
    return _with_body(memory, f"{body.rstrip('.。')} ({inside}){stop}")


def _cited(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _bracketed(new, "see PR #123"))


def _remark(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _bracketed(new, REMARK.get(p["lang"], REMARK["en"])))


def _since(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    return _closed(p, old, new, f" {SINCE[p['lang']]}") if p["lang"] in SINCE else None


def _since_bracket(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    return _variant(p, old, _bracketed(new, SINCE[p["lang"]])) if p["lang"] in SINCE else None


def _since_pr(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    return _closed(p, old, new, f" {SINCE_PR[p['lang']]}") if p["lang"] in SINCE_PR else None


def _in_pr(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    return _closed(p, old, new, f" {IN_PR[p['lang']]}") if p["lang"] in IN_PR else None


def _agreed(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    return _closed(p, old, new, f", {AGREED[p['lang']]}") if p["lang"] in AGREED else None


def _going_forward(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    lang = p["lang"]
    return _opened(p, old, new, f"{GOING_FORWARD[lang]}, ") if lang in GOING_FORWARD else None


def _according(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    lang = p["lang"]
    return _opened(p, old, new, f"{ACCORDING[lang]}, ") if lang in ACCORDING else None


def _opened(p: dict[str, Any], old: MemoryText, new: MemoryText, opening: str) -> Variant:
    """The new note opened with `opening`, its first letter lowercased (a sentence goes on)
    unless the word is an acronym ("API …")."""
    body = new.body.strip()
    if body[:1].isupper() and not body[1:2].isupper():
        body = body[0].lower() + body[1:]
    return _variant(p, old, _with_body(new, opening + body))


def _closed(p: dict[str, Any], old: MemoryText, new: MemoryText, closing: str) -> Variant:
    """The new note closed with `closing`, before its full stop if it has one."""
    body = new.body.strip()
    stop = body[-1] if body[-1:] in (".", "!") else ""
    return _variant(p, old, _with_body(new, f"{body.rstrip('.!')}{closing}{stop}"))


def _hashtag(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _closed(p, old, new, " #ops")


def _nbsp(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _with_body(new, new.body.replace(" ", "\u00a0")))


def _agreed_that(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    lang = p["lang"]
    return _opened(p, old, new, f"{AGREED_THAT[lang]} ") if lang in AGREED_THAT else None


def _upper(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _with_body(new, new.body.upper()))


def _ticket(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _bracketed(new, "JIRA-1234"))


def _hedge(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    return _variant(p, old, _bracketed(new, HEDGE[p["lang"]])) if p["lang"] in HEDGE else None


def _again(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    return _variant(p, old, _bracketed(new, AGAIN[p["lang"]])) if p["lang"] in AGAIN else None


def _italic(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _with_body(new, f"_{new.body.strip()}_"))


def _dated(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(
        p, _with_body(old, f"{OLD_DAY}: {old.body}"), _with_body(new, f"{NEW_DAY}: {new.body}")
    )


def _dated_new(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _with_body(new, f"{NEW_DAY}: {new.body}"))


def _dated_after(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _bracketed(new, NEW_DAY))


def _dated_label(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _with_body(new, f"UPDATE ({NEW_DAY}): {new.body.strip()}"))


def _link(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, old, _bracketed(new, "[runbook](https://wiki.example.com/runbook)"))


def _as_of(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    if p["lang"] != "en":
        return None
    body = new.body.strip()
    if body[:1].isupper() and not body[1:2].isupper():
        body = body[0].lower() + body[1:]  # "As of …, production deploys …"
    return _variant(p, old, _with_body(new, f"As of {NEW_DAY}, {body}"))


def _labelled(label: str) -> Sweep:
    def sweep(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
        if p["lang"] != "en":
            return None
        return _variant(p, old, _with_body(new, f"{label}: {new.body}"))

    return sweep


def _said(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    if p["lang"] not in SAID:
        return None
    body = new.body.strip()
    if p["lang"] not in _UNSPACED and body[:1].isupper() and not body[1:2].isupper():
        body = body[0].lower() + body[1:]  # "The user said: production deploys …"
    return _variant(p, old, _with_body(new, SAID[p["lang"]] + body))


def _bullet(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, *(_with_body(m, "- " + m.body.strip()) for m in (old, new)))


def _reasoned(body: str, why: str, use: str) -> str:
    return f"{body.strip()}\n\n**Why:** {why}\n\n**How to apply:** {use}"


def _why(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    old_why, new_why, old_use, new_use = WHY.get(p["lang"], WHY["en"])
    return _variant(
        p,
        _with_body(old, _reasoned(old.body, old_why, old_use)),
        _with_body(new, _reasoned(new.body, new_why, new_use)),
    )


def _why_new(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    _old_why, new_why, _old_use, new_use = WHY.get(p["lang"], WHY["en"])
    return _variant(p, old, _with_body(new, _reasoned(new.body, new_why, new_use)))


def _headed(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant | None:
    if "text" in p["old"]:
        return None  # a title derived from the first sentence would only say it twice
    body = f"# {old.title}\n\n{old.body.strip()}"
    return _variant(p, MemoryText(old.title, old.description, body, old.type), new)


def _unpunctuated(p: dict[str, Any], old: MemoryText, new: MemoryText) -> Variant:
    return _variant(p, *(_with_body(m, m.body.strip().rstrip(".。!！")) for m in (old, new)))


SWEEPS: dict[str, Sweep] = {
    "title": _title,
    "old-title": _old_title,
    "reversed": _reversed,
    "extra-new": _extra_new,
    "extra-old": _extra_old,
    "note": _note,
    "lower": _lower,
    "now": _now,
    "code": _code,
    "bold": _bold,
    "quoted": _quoted,
    "italic": _italic,
    "emoji": _emoji,
    "cited": _cited,
    "dated": _dated,
    "dated-new": _dated_new,
    "dated-after": _dated_after,
    "dated-label": _dated_label,
    "as-of": _as_of,
    "update": _labelled("Update"),
    "correction": _labelled("Correction"),
    "rule": _labelled("Rule"),
    "label": _labelled("Infra"),
    "said": _said,
    "bullet": _bullet,
    "unpunctuated": _unpunctuated,
    "why": _why,
    "why-new": _why_new,
    "headed": _headed,
    "remark": _remark,
    "link": _link,
    "since": _since,
    "since-bracket": _since_bracket,
    "agreed": _agreed,
    "going-forward": _going_forward,
    "according": _according,
    "ticket": _ticket,
    "hedge": _hedge,
    "again": _again,
    "tldr": _labelled("TL;DR"),
    "hashtag": _hashtag,
    "nbsp": _nbsp,
    "update-dated": _labelled(f"Update {NEW_DAY}"),
    "agreed-that": _agreed_that,
    "upper": _upper,
    "since-pr": _since_pr,
    "in-pr": _in_pr,
}
