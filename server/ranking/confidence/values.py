"""What kind of value a question asks for, and whether a memory's text holds one.

Many questions a memory cannot answer name a subject the memories discuss and ask for
a value none of them gives: "what's Anna's phone number" beside a note about Anna,
"how many partitions does the orders topic have" beside the note on that topic. Their
words match; what is missing is the value. Three kinds of value are asked for in ways
that can be read from the question's words in many languages and found in a text by
its form:

- a **number** ("how many", "how much", "how old", 多少, 几, いくら, сколько, combien,
  wie viele, a version, a port, a price): a digit, a numeral of an unspaced script or
  a number word;
- a **time** ("when is", "what time", 什么时候, いつ, wann, πότε, a birthday): a digit,
  a month or weekday name, a relative day ("yesterday", "next week", 明天);
- a **contact** (a phone number, an e-mail address): a run of at least seven digits
  with the separators people write, or an address.

`asked(question)` reads the kinds a question asks for; `holds(kind, text, question)`
whether a text holds a value of that kind — a number the question itself gives ("the
Postgres 16 instance") is not an answer. The confidence model reads the result
(`DocEvidence.valueless` and `.contactless`, `with_values`) beside its other figures;
no rule here mutes anything.

Cue lists are short by design: the words that ask for a value in the languages the
memories are written in, not an inventory of each language. A question asked otherwise
simply asks for no kind (the figure is then silent, as before it existed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

import regex
from memory_recall.server.ranking.confidence.evidence import QueryEvidence

NUMBER = "number"
TIME = "time"
CONTACT = "contact"

# A cue matches at a word start; a Latin cue ends at a word end unless it ends in "-"
# (a stem: "верси-" for версия, версии). A cue of an unspaced script matches anywhere
# ("几" but not 几乎, "almost": a cue may carry a lookahead). Left out on purpose: words
# that also join clauses ("cuando", "quand", "quando", "когда", "kiedy", "wanneer": a
# question word in one sentence, "when" the conjunction in the next), words with a
# common second sense ("port" the verb, "cost" the topic, Polish "ile" which is
# Turkish "with", Arabic "عمر" which is also the name Omar) and nouns that only name a
# topic ("fecha", "日期").
_NUMBER_CUES = (
    # English
    "how many", "how much", "how long", "how old", "how far", "how big", "how large",
    "how often", "how tall", "how fast", "how heavy", "what percentage", "which version",
    "what version", "what port", "which port", "port number", "what size", "what price",
    "version", "price", "salary", "rent", "fee", "fees", "age", "timeout", "ttl",
    "lifetime", "capacity", "quota", "rate limit",
    # Spanish, Portuguese, Italian, French, German, Dutch
    "cuánto", "cuánta", "cuántos", "cuántas", "cuantos", "cuantas", "versión", "puerto",
    "edad", "salario", "precio", "cuesta", "cobra",
    "quanto", "quanta", "quantos", "quantas", "quanti", "quante", "versão", "idade",
    "salário", "preço", "custa", "versione", "età", "stipendio", "prezzo",
    "combien", "quel âge", "salaire", "prix", "coûte", "loyer",
    "wie viel-", "wieviel-", "wie lange", "wie alt", "wie oft", "wie groß", "wie weit",
    "gehalt", "preis", "kostet", "miete",
    "hoeveel", "hoe lang", "hoe oud", "hoe vaak", "versie", "leeftijd", "salaris", "prijs",
    # Czech, Turkish, Vietnamese, Indonesian
    "kolik", "verze", "kaç", "ne kadar", "sürüm", "versiyon", "maaş", "fiyat",
    "bao nhiêu", "mấy", "phiên bản", "tuổi", "lương",
    "berapa", "versi", "umur", "gaji", "harga",
    # Cyrillic, Greek, Hebrew, Arabic, Devanagari
    "сколько", "верси-", "возраст", "зарплат-", "цена", "стоимост-", "скільки", "вік",
    "πόσ-", "έκδοση", "ηλικία", "μισθ-", "τιμή", "κοστίζει",
    "כמה", "גרסה", "גיל", "משכורת", "מחיר",
    "كم", "إصدار", "راتب", "سعر",
    "कितन-", "संस्करण", "उम्र", "वेतन", "कीमत",
)  # fmt: skip
_NUMBER_UNSPACED = (
    "多少", "几(?!乎)", "幾(?!乎)", "多久", "多长", "多長", "多大", "多远", "多遠", "多高",
    "多重", "版本", "端口", "价格", "價格", "年龄", "年齡", "工资", "工資", "薪水",
    "费用", "費用",
    "いくつ", "いくら", "何人", "何個", "何分", "何時間", "何日間", "何歳", "何才", "何年",
    "何回", "何台", "何件", "何本", "何枚", "何秒", "何割", "何円", "何名", "何か月",
    "バージョン", "ポート", "料金", "年齢", "給料", "値段",
    "몇", "얼마", "버전", "포트", "나이", "가격", "월급",
    "กี่", "เท่าไร", "เท่าไหร่", "เวอร์ชัน", "พอร์ต", "อายุ", "ราคา", "เงินเดือน",
)  # fmt: skip
_TIME_CUES = (
    "when is", "when was", "when does", "when did", "when do", "when are", "when were",
    "when will", "when should", "when can", "when's", "what time", "what date",
    "which day", "what day", "which date", "what year", "birthday",
    "cuándo", "qué hora", "qué día", "cumpleaños", "que horas", "que dia", "aniversário",
    "che ora", "che giorno", "compleanno", "quelle heure", "quel jour", "quelle date",
    "anniversaire", "wann", "um wie viel uhr", "welchem tag", "welcher tag", "geburtstag",
    "hoe laat", "welke dag", "verjaardag", "o której", "urodziny",
    "ne zaman", "saat kaç", "doğum günü", "khi nào", "mấy giờ", "sinh nhật",
    "kapan", "ulang tahun", "во сколько", "какого числа", "день рождения",
    "πότε", "τι ώρα", "γενέθλια", "מתי", "متى", "कब",
)  # fmt: skip
_TIME_UNSPACED = (
    "什么时候", "什麼時候", "何时", "何時", "哪天", "哪一天", "几点", "幾點", "几号", "幾號",
    "几月", "哪年", "生日", "いつ(?!も)", "何日", "何曜日", "何月", "誕生日",
    "언제(?!나)", "몇 시", "며칠", "생일", "เมื่อไร", "เมื่อไหร่", "กี่โมง", "วันเกิด",
)  # fmt: skip
_CONTACT_CUES = (
    "phone", "telephone", "mobile number", "cell number", "email address",
    "e-mail address", "'s email", "'s e-mail", "’s email", "email of",
    "teléfono", "correo electrónico de", "correo de", "telefone", "e-mail de", "telefono",
    "téléphone", "adresse e-mail", "adresse mail", "courriel de",
    "telefonnummer", "handynummer", "e-mail-adresse", "telefoonnummer", "e-mailadres",
    "numer telefonu", "adres e-mail", "telefon numarası", "e-posta adresi",
    "số điện thoại", "nomor telepon", "nomor hp",
    "номер телефона", "телефон", "адрес почты", "электронной почты", "электронная почта",
    "τηλέφων-",
    "מספר הטלפון", "טלפון", "رقم هاتف", "البريد الإلكتروني", "फ़ोन नंबर", "फोन नंबर",
)  # fmt: skip
_CONTACT_UNSPACED = (
    "电话", "電話", "手机号", "手機號", "邮箱", "郵箱", "邮件地址", "携帯番号",
    "メールアドレス", "전화번호", "이메일 주소", "휴대폰 번호", "เบอร์โทร", "อีเมล",
)  # fmt: skip


def _cue_pattern(cues: tuple[str, ...], unspaced: tuple[str, ...]) -> regex.Pattern[str]:
    """One pattern for a kind's cues: whole words, stems, cues that open with a mark
    ("'s email"), and the unspaced scripts' forms (patterns: a lookahead is kept)."""

    def words(group: list[str]) -> str:
        return "|".join(regex.escape(cue.rstrip("-")).replace(r"\ ", r"\s+") for cue in group)

    whole = [cue for cue in cues if cue[0].isalpha() and not cue.endswith("-")]
    stems = [cue for cue in cues if cue[0].isalpha() and cue.endswith("-")]
    marked = [cue for cue in cues if not cue[0].isalpha()]
    start = r"(?<![\p{L}\p{M}\p{N}])"
    parts = [f"{start}(?:{words(whole)})(?![\\p{{L}}\\p{{M}}])"]
    if stems:
        parts.append(f"{start}(?:{words(stems)})")
    if marked:
        parts.append(f"(?:{words(marked)})(?![\\p{{L}}\\p{{M}}])")
    parts += [cue.replace(" ", r"\s*") for cue in unspaced]
    return regex.compile("|".join(parts), regex.IGNORECASE)


_ASKS = {
    NUMBER: _cue_pattern(_NUMBER_CUES, _NUMBER_UNSPACED),
    TIME: _cue_pattern(_TIME_CUES, _TIME_UNSPACED),
    CONTACT: _cue_pattern(_CONTACT_CUES, _CONTACT_UNSPACED),
}

_DIGITS = regex.compile(r"\p{Nd}+")
# Numerals of the unspaced scripts: a Chinese or Japanese number is written with them.
_NUMERAL = regex.compile(r"[〇零一二两兩三四五六七八九十百千万萬亿億半]")
# Number words; not the ones that are also an article ("un", "una", "een", "bir", "một",
# 한: every text in those languages would hold a number) nor Thai's, which stand inside
# words (สาม in สามารถ).
_NUMBER_WORDS = regex.compile(
    r"(?<![\p{L}\p{M}])(?:"
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|sixty|hundred|thousand|million|dozen|half|twice|"
    r"dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|veinte|cien|mil|"
    r"duas|três|quatro|sete|oito|nove|dez|"
    r"deux|trois|quatre|cinq|sept|huit|neuf|dix|vingt|cent|"
    r"zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|zwanzig|hundert|tausend|"
    r"tre|quattro|cinque|sette|otto|dieci|venti|trenta|cento|mille|"
    r"twee|drie|vijf|zes|zeven|negen|tien|twintig|honderd|duizend|"
    r"dwa|dwie|trzy|cztery|pięć|sześć|siedem|osiem|dziewięć|dziesięć|"
    r"два|две|три|четыре|пять|шесть|семь|восемь|девять|десять|сто|тысяч\p{L}*|"
    r"δύο|τρία|τρεις|τέσσερα|πέντε|έξι|επτά|εφτά|οκτώ|εννέα|δέκα|είκοσι|εκατό|χίλια|"
    r"iki|üç|dört|beş|altı|yedi|sekiz|dokuz|yirmi|otuz|kırk|elli|yüz|"
    r"hai|ba|bốn|năm|sáu|bảy|tám|chín|mười|mươi|trăm|nghìn|"
    r"dua|tiga|empat|lima|enam|tujuh|delapan|sembilan|sepuluh|seratus|seribu|"
    r"두|세|네|다섯|여섯|일곱|여덟|아홉|열|스물|서른|백|천|만"
    r")(?![\p{L}\p{M}])",
    regex.IGNORECASE,
)
_TIME_WORDS = regex.compile(
    r"(?<![\p{L}\p{M}])(?:"
    # Month names whole ("Jan" is a name, "dec" a word of code), May only capitalised
    # (the verb is everywhere).
    r"january|february|march|april|(?-i:May)|june|july|august|september|october|"
    r"november|december|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?|"
    r"today|tonight|tomorrow|yesterday|weekend|morning|evening|noon|"
    r"midnight|spring|summer|autumn|fall|winter|weekly|daily|monthly|"
    r"next (?:week|month|year)|last (?:week|month|year)|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|"
    r"diciembre|lunes|martes|miércoles|jueves|viernes|sábado|domingo|hoy|mañana|ayer|"
    r"janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|"
    r"décembre|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|demain|hier|"
    r"januar|februar|märz|juni|juli|oktober|dezember|montag|dienstag|mittwoch|"
    r"donnerstag|freitag|samstag|sonntag|heute|morgen|gestern|"
    r"janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro|"
    r"(?:segunda|terça|quarta|quinta|sexta)s?|hoje|amanhã|ontem|"
    r"январ\p{L}*|феврал\p{L}*|март\p{L}*|апрел\p{L}*|ма[йя]|июн\p{L}*|июл\p{L}*|"
    r"август\p{L}*|сентябр\p{L}*|октябр\p{L}*|ноябр\p{L}*|декабр\p{L}*|"
    r"понедельник\p{L}*|вторник\p{L}*|сред[ауы]|четверг\p{L}*|пятниц\p{L}*|суббот\p{L}*|"
    r"воскресень\p{L}*|сегодня|завтра|вчера|летом|зимой|весной|осенью|"
    r"ocak|şubat|nisan|mayıs|haziran|temmuz|ağustos|eylül|ekim|kasım|aralık|pazartesi|"
    r"salı|çarşamba|perşembe|cuma|cumartesi|pazar|bugün|yarın|dün|"
    r"tuần|tháng|quý|ngày|giờ|sáng|chiều|tối|thứ|hôm nay|ngày mai|hôm qua|"
    r"gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|lunedì|"
    r"martedì|mercoledì|giovedì|venerdì|sabato|domenica|oggi|domani|ieri|"
    r"januari|februari|maart|mei|augustus|maandag|dinsdag|woensdag|donderdag|vrijdag|"
    r"zaterdag|zondag|vandaag|morgen|gisteren|"
    r"styczeń|stycznia|luty|lutego|marzec|marca|kwiecień|kwietnia|maj|maja|czerwiec|"
    r"czerwca|lipiec|lipca|sierpień|sierpnia|wrzesień|września|październik|października|"
    r"listopada|grudzień|grudnia|poniedziałek|wtorek|środa|środę|czwartek|piątek|sobota|"
    r"sobotę|niedziela|niedzielę|dziś|dzisiaj|jutro|wczoraj|styczniu|lutym|marcu|"
    r"kwietniu|maju|czerwcu|lipcu|sierpniu|wrześniu|październiku|listopadzie|grudniu|"
    r"ιανουάρ\p{L}*|φεβρουάρ\p{L}*|μάρτ\p{L}*|απρίλ\p{L}*|μαΐ\p{L}*|ιούν\p{L}*|ιούλ\p{L}*|"
    r"αύγουστ\p{L}*|σεπτέμβρ\p{L}*|οκτώβρ\p{L}*|νοέμβρ\p{L}*|δεκέμβρ\p{L}*|δευτέρα|"
    r"τρίτη|τετάρτη|πέμπτη|παρασκευή|σάββατο|κυριακή|σήμερα|αύριο|χθες"
    r")(?![\p{L}\p{M}])",
    regex.IGNORECASE,
)
_TIME_UNSPACED_WORDS = regex.compile(
    r"[昨今明]天|[昨今明]日|[去今明]年|[上下本这這]周|[上下本这這]个?月|星期|周[一二三四五六日末]|"
    r"[月火水木金土日]曜|[春夏秋冬]|早上|晚上|中午|午前|午後|来週|先週|来月|先月|"
    r"어제|오늘|내일|[월화수목금토일]요일|매일|매주|매달|매월|매년|다음 주|지난 주|새벽|아침|저녁|"
    r"วันนี้|พรุ่งนี้|เมื่อวาน|วันจันทร์|วันอังคาร|วันพุธ|วันพฤหัส|วันศุกร์|วันเสาร์|วันอาทิตย์|"
    r"มกรา|กุมภา|มีนา|เมษา|พฤษภา|มิถุนา|กรกฎา|สิงหา|กันยา|ตุลา|พฤศจิกา|ธันวา"
)
# A phone number stands on its own: not glued to a word, an identifier ("INC-2026-021"),
# a path or an address's dots.
_PHONE = regex.compile(r"(?<![\p{L}\p{N}_#/.\-])\+?\p{Nd}[\p{Nd} ().\-]{5,}\p{Nd}(?![\p{L}\p{N}_])")
# Written with the same digits and separators and no phone number, when they stand alone
# (not in a longer run of groups: "06.12.34.56.78" is a phone): a date ("2024-03-02",
# "14.06.2025", also before a time: "2026-04-17 07:40"), an IP address ("10.0.12.154").
_NOT_A_PHONE = regex.compile(
    r"(?<!\p{Nd}[-./]?)(?:"
    r"\p{Nd}{4}[-./]\p{Nd}{1,2}[-./]\p{Nd}{1,2}|\p{Nd}{1,2}[-./]\p{Nd}{1,2}[-./]\p{Nd}{2,4}"
    r"|\p{Nd}{1,3}(?:\.\p{Nd}{1,3}){3}"
    r")(?![-./]?\p{Nd})"
)
# Code: an identifier, a build number or a hash between backticks is no contact.
_CODE = regex.compile(r"`[^`\n]*`")
_EMAIL = regex.compile(r"[^\s@<>()]+@[^\s@<>()]+\.\p{L}{2,}")


def _is_phone(run: str) -> bool:
    return sum(c.isdigit() for c in _NOT_A_PHONE.sub(" ", run)) >= 7


@lru_cache(maxsize=256)
def asked(question: str) -> frozenset[str]:
    """The kinds of value `question` asks for (none, usually)."""
    return frozenset(kind for kind, cue in _ASKS.items() if cue.search(question))


def holds(kind: str, text: str, question: str = "") -> bool:
    """Whether `text` holds a value of `kind` that `question` does not itself give."""
    if kind == CONTACT:
        if _EMAIL.search(text):
            return True
        prose = _CODE.sub(" ", text)
        return any(_is_phone(m.group()) for m in _PHONE.finditer(prose))
    given = set(_DIGITS.findall(question))
    if any(number not in given for number in _DIGITS.findall(text)):
        return True
    if set(_NUMERAL.findall(text)) - set(_NUMERAL.findall(question)):
        return True
    if kind == NUMBER:
        return bool(_NUMBER_WORDS.search(text))
    return bool(_TIME_WORDS.search(text) or _TIME_UNSPACED_WORDS.search(text))


def with_values(evidence: QueryEvidence, texts: Sequence[str], question: str) -> QueryEvidence:
    """`evidence`, each memory marked with the kinds of value `question` asks for that its
    text (`texts`, in the order of `evidence.docs`: what the memory would deliver) does
    not hold: `valueless` for a number or a time, `contactless` for a contact (a figure
    of its own: a question that names a phone number or an address asks for one far
    more surely than a "how" asks for a number)."""
    kinds = asked(question)
    if not kinds:
        return evidence
    marked = []
    for text, found in zip(texts, evidence.docs, strict=True):
        lacks = {kind for kind in kinds if not holds(kind, text, question)}
        marked.append(
            replace(
                found,
                valueless=float(bool(lacks - {CONTACT})),
                contactless=float(CONTACT in lacks),
            )
        )
    return evidence.with_docs(tuple(marked))
