"""The `default` ranker: BM25F over SPEC §3's three fields, on the warm index.

What it keeps from the reference: the same fields (title, description, body
window, normalized), substring matching of multilingual tokens, title >
description > body, ties by mtime then input order, never by type, nothing
returned without a match. What it adds:

- rarity and saturation: each token weighs its IDF (document frequency read
  from the index's postings, never from a scan), and repeated matches in a
  field saturate (k1) after the body's length is normalized (b);
- function words of a dozen languages are not scored (QUERY_STOPWORDS);
- a compound identifier (`billing-api`) is a term of its own, found through
  its parts, so it weighs what its own rarity says;
- overlapping grams (CJK pairs, Thai trigrams) weigh by their overlap;
- light stemming of query words (`deployments` finds `deployment`,
  `πιστοποιητικού` finds `πιστοποιητικό`);
- near-ties go to the newer memory (`recency_band`): of two memories about
  the same thing, the later one is usually the update;
- silence: nothing is returned unless the best document matches query
  content tokens carrying at least `min_coverage` of their IDF mass, or is
  about one of the query's rarest words (`rare_share`). A question whose
  specific words are nowhere in memory ("what did I say about the weather?")
  is matched by its common words only, so it covers little and returns nothing.

Why it is fast: the index's bitmaps give every token's documents per field;
a bit-sliced sum of integer prescores (each token's BM25F weight in its best
field) ranks every match at once, and only the best PRESCORED of those are
scored exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.index import (
    _PAIR_TOKEN,
    _WORD_TOKEN,
    DocumentIndex,
    _Counters,
    acronyms,
    average_lengths,
    bitmap_of,
    field_texts,
    is_acronym,
    raw_fields,
    slots_of,
)
from memory_recall.server.ranking.spec import ScoredDocument
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.tokens import CJK_CHAR, MIN_PART, UNSPACED_CHAR, normalize, unspaced_grams

# Scores are reported as integers (ScoredDocument.score): thousandths.
SCORE_SCALE = 1000
# Prescore weights are integers for the bit-sliced counters: their score x 16.
PRESCORE_SCALE = 16
# How many of the prescored documents are scored exactly (at least): far more
# than the 2 of a fast phase. On 10,000 synthetic memories and 311 queries the
# top 2 from 32 equal the top 2 from 180 for 85 % of queries (64: 93 %); the
# fast phase costs about half as much as with 64.
PRESCORED = 32

# Function words a question is made of: English, the commonest of German,
# Spanish, French, Russian, Greek, Portuguese, Italian, Dutch, Polish, Turkish,
# Vietnamese, Indonesian, Arabic, Hebrew, Hindi, Ukrainian and the Scandinavian
# languages (words a common English word, code word or name shares are left
# out: `van`, `met`, `var`, `pod`, `ini`, `kim`, `yang`), the function
# pairs of Chinese, Japanese and Korean questions (as the CJK pairs they are
# tokenized into) and the function words of Thai (as its trigrams). They say
# nothing about which memory answers: the default ranker neither scores them nor
# counts them toward the IDF mass a document must cover (a memory does not have
# to say "what" to answer it).
QUERY_STOPWORDS = frozenset(
    """
    about above after again against all also and any are aren't because been before being
    below between both but can cannot could did does doing don't down during each few for
    from further had has have having her here hers herself him himself his how into its
    itself just let me more most much must myself nor not now off once only other our ours
    ourselves out over own same say said she should some such than that the their theirs
    them themselves then there these they this those through too under until upon very
    was were what when where which while who whom why will with would you your yours
    yourself yourselves tell told know remember recall remind anything something thing
    things again ever one ago last time times please show give get got use used using way
    hey

    aber auch aus bei beim bis das dass dem den der des die dir ein eine einem einen einer
    eines für gerade gibt haben hat ich ihr ihre ist jetzt kann kein keine können mich mir
    mit muss nach nicht noch nur oder schon sein seine sich sie sind soll sollen uns unser
    unsere und vom von vor war warum was wann welche welcher welches wenn wer werden wie
    wieder wieso wir wird woher wohin zum zur über

    ahora cómo como con cual cuál cuando cuándo cuánto cuánta cuántos cuántas del desde
    donde dónde el ella entre esa ese eso esta este esto está fue hace hasta hay las los
    más muy nos nuestra nuestro para pero por porque puede puedes que qué quien quién
    recuerdas ser son sobre sus también tenemos tiene una uno unos unas

    aux avait avez avons avec cette ces cet combien comment dans déjà des elle elles encore
    est était fait faut ils les leur leurs mais nos notre nous ont par pas peut plus
    pour pourquoi quand que quel quelle quelles quels qui quoi sont sur tous tout une
    votre vous

    без будет был была были было вам вас все всё всех где для его её если есть ещё еще
    здесь как какая какие каким каком какое какой какую когда кто мне мои мой моя моё
    можно над надо нам напомни нас наш наша наше наши нужно они она оно перед под
    помнишь после почему при про сейчас сколько так также там теперь тогда только тоже
    тут уже чтобы что эта эти это этого этой этот

    αλλά ακόμα από αυτά αυτή αυτό αυτός για γιατί δεν είναι είχε ένα ένας έχει έχουμε
    ήταν και μας μια μία μην μου όταν πάλι ποια ποιες ποιο ποιοι ποιος πόσα πόσες πόσο
    πόσοι πότε που πού πως πώς σας σου στα στη στην στις στο στον την της τις τον του
    τους των τώρα

    com como esta este foi isso não nossa nosso onde para por quando que qual quem são uma
    che chi come con del della dove nel nella per perché quale quando questa questo sono

    aan als bij dat deze dit een geen heb hebben heeft het hoe hun jij jullie kan maar
    mijn moet niet nog ons onze ook over tot uit waar waarom wanneer wat welk welke wie
    wordt worden zijn zou

    być był była było będzie czy dla gdzie jak jaka jaki jakie jest już kiedy kto
    która które który mamy można nie oraz przez przy się tak też teraz trzeba tylko
    dlaczego jeszcze nasz nasza nasze

    ama bir için daha değil gibi hangi ile kaç kadar nasıl neden nedir nerede niye
    olan olarak sonra şimdi önce

    các chưa còn của đang được không khi mình này nào những như rồi tôi thì vậy với bạn

    apa apakah atau bagaimana belum berapa bisa dari dengan dimana juga kami kapan karena
    kenapa kita masih mengapa oleh pada saya siapa sekarang sudah tapi tetapi tidak untuk

    ماذا متى أين كيف لماذا على إلى هذا هذه ذلك تلك التي الذي الذين كان كانت يكون عند
    بين بعد قبل حتى الآن لدينا نحن أنت يجب ممكن هناك

    מתי איפה איך למה זאת הוא היא אנחנו אני אין כבר עוד עכשיו אבל כמה איזה איזו אצל בין
    אחרי לפני צריך אפשר היה הייתה שלנו שלי

    क्या कैसे कहाँ कहां क्यों कौन कितना कितने में और यह वह हम मैं आप हमारा हमारी मेरा
    मेरी नहीं भी अभी लिए चाहिए सकते

    або але буде був була було були вже вона вони воно він для його зараз коли також
    теж тепер треба потрібно скільки чому який яка яке які після через

    och att det som för har inte den till hur vad när varför vem vilken vilket vilka
    ska skulle också eller från efter innan vår våra vårt jag mig oss där här någon
    något hvad hvor hvordan hvornår hvorfor hvem jeg vores også hva når

    什么 怎么 为什 为何 哪个 哪里 哪些 是不 不是 是否 有没 没有 我们 你们 他们 这个 那个
    这些 那些 现在 可以 需要 一下 一个 的是 是谁 多少 吗

    です すか ます まし した して てい いる ある あっ った たの だっ なに どこ いつ だれ
    どう どの これ それ あれ この その につ つい いて けど から まで とか って でし しょ
    ょう よね だけ ので のは には では なの なっ ない

    뭐야 누가 언제 어디 어떻 떻게 무엇 했어 있어 있나 나요 해야 하나 인가 는지 은지 건지
    지금 우리 다시 그거 이거 혹시 어느 얼마 습니 니다 해요 어요 했나 했던 있는 하는
    되는 이야 잖아
    """.split()  # noqa: SIM905 - a word list reads better as text
) | frozenset(
    # Thai function words, as the code-point trigrams a Thai query is cut into
    # (server.tokens.unspaced_grams) and as whole runs. In a corpus where Thai is
    # a minority, "ตอนนี้" (now) or "อะไร" (what) is rare enough to outweigh the
    # `WMS Overview` beside it. (Words of two code points exist only inside
    # trigrams that straddle a neighbour, so they cannot be left out.)
    gram
    for word in normalize(
        """
    ที่ และ ของ ใน เป็น ได้ ไม่ มี ให้ แล้ว กับ ว่า อยู่ ยัง ต้อง หรือ คือ อะไร ไหน ที่ไหน เท่าไหร่
    เท่าไร กี่ ไหม หรือเปล่า ตอนนี้ เมื่อไหร่ เมื่อไร ใคร ยังไง อย่างไร ทำไม ครับ ค่ะ บ้าง เรา
    ผม ฉัน คุณ นี้ นั้น เคย ช่วย บอก หน่อย อีก แบบ จาก ตอน เมื่อ สำหรับ ถ้า แต่ เพราะ ด้วย ต่อ
    ควร จะต้อง อันไหน
    """  # NFKC splits the sara am of ทำไม and สำหรับ
    ).split()
    for gram in (word, *unspaced_grams(word))
)


@dataclass(frozen=True)
class Bm25Params:
    """One ranker's settings; `default` and the plain `bm25` baseline differ only here."""

    field_weights: tuple[float, float, float] = (3.0, 2.0, 1.0)  # title, description, body
    # Length normalisation per field: a title or a description is one statement
    # whatever its length; bodies differ in how much incidental text they carry.
    field_b: tuple[float, float, float] = (0.0, 0.0, 0.75)
    k1: float = 1.2
    # Silence: the share of the query's content IDF mass that the best document
    # must match, or nothing is returned (0 never silences). On the seven eval
    # corpora it was chosen on, 0.15 is the highest share that costs none of them
    # more than a point of Recall@5; above it, paraphrased and cross-language
    # questions fall silent with the abstentions. On `worldwide`, written after,
    # it costs 1.9 points (0.1: 1.0, and 17 % of its abstentions silent, not 38 %).
    # `memory-recall eval --silence-sweep` prints the trade-off.
    min_coverage: float = 0.15
    # ... unless the document is about one of the query's rarest words: its title
    # or description holds a name or identifier found in at most this share of
    # the memories (and at least one). Such a word answers in any language, even
    # when the rest of the question (inflected, or in another language than the
    # memory) matches nothing as written. 0 turns this off.
    rare_share: float = 0.001
    # A token met only in the body (not the title or description) is weaker
    # evidence that the memory is about it: it covers this share of its IDF.
    body_coverage_weight: float = 0.7
    # Near-ties go to the newer memory: when two memories say nearly as much
    # about the query, the later one is usually the update of the earlier.
    recency_band: float = 0.2
    stem: bool = True  # see light_stem
    # A token found only inside longer words (`park` in `bürgerpark`, `cat` in
    # `vietnamese`) is weak evidence too. (For the score it counts fully: a
    # prefix such as `deploy` in `deployment` is the common case there.)
    inside_coverage_weight: float = 0.1
    # Overlapping grams say the same characters several times over: every
    # character of a Thai/Lao/Khmer/Myanmar run is in three trigrams, of a CJK
    # run in two pairs. Each gram weighs this share of its IDF, so a phrase in
    # those scripts weighs about what the same words would weigh spaced.
    unspaced_gram_weight: float = 1 / 3
    cjk_pair_weight: float = 1 / 2
    # Function words ("what", "did", "the") carry no topic: they are not scored,
    # so a question made only of them matches nothing. (The plain baseline scores them.)
    score_stopwords: bool = False


DEFAULT_PARAMS = Bm25Params()
# Plain BM25: one bag of words (equal fields, one b), no stemming, never silent,
# the same tie order: the baseline the issue measures against, with the same tokens.
PLAIN_PARAMS = Bm25Params(
    field_weights=(1.0, 1.0, 1.0),
    field_b=(0.75, 0.75, 0.75),
    min_coverage=0.0,
    score_stopwords=True,
    unspaced_gram_weight=1.0,
    cjk_pair_weight=1.0,
    inside_coverage_weight=1.0,
    recency_band=0.0,
    stem=False,
)


@dataclass
class _Term:
    token: str
    idf: float
    bits: tuple[int, int, int]  # per field: the slots whose field contains the token
    any_bits: int  # the slots that contain it in any field
    content: bool  # counts toward the IDF mass a document must cover
    # Finds the token at the start of a word; None where words are not spaced (CJK, Thai…).
    word_start: regex.Pattern[str] | None = None
    acronym: bool = False  # counted in the fields as written, as a whole word


class _Documents(Protocol):
    """What this ranker reads: the warm DocumentIndex, or `_ScanView` standing in for it."""

    def __len__(self) -> int: ...
    def document(self, slot: int) -> MemoryDocument: ...
    def average_field_chars(self) -> tuple[float, float, float]: ...
    def token_bits(self, token: str) -> list[int]: ...
    def order_key(self, slot: int) -> Any: ...
    def in_order(self, bitmap: int, need: int) -> Iterator[int]: ...


class _ScanView:
    """The index's reads answered by a pass over a snapshot's documents (slot = position).

    Only for a snapshot the catalog has moved on from: rare, and a pass (like
    the reference's) costs far less than indexing the snapshot anew.
    """

    def __init__(self, documents: Sequence[MemoryDocument]) -> None:
        self.docs = documents

    def __len__(self) -> int:
        return len(self.docs)

    def document(self, slot: int) -> MemoryDocument:
        return self.docs[slot]

    def average_field_chars(self) -> tuple[float, float, float]:
        sums = [sum(len(field_texts(doc)[f]) for doc in self.docs) for f in range(3)]
        return average_lengths(sums, len(self.docs))

    def token_bits(self, token: str) -> list[int]:
        def holds(doc: MemoryDocument) -> list[bool]:
            if is_acronym(token):
                return [token in acronyms(raw) for raw in raw_fields(doc)]
            return [token in text for text in field_texts(doc)]

        held = [holds(doc) for doc in self.docs]
        return [
            bitmap_of((slot for slot, fields in enumerate(held) if fields[f]), len(held))
            for f in range(3)
        ]

    def order_key(self, slot: int) -> Any:
        return (-self.docs[slot].mtime_ms, slot)

    def in_order(self, bitmap: int, need: int) -> Iterator[int]:
        return iter(sorted(slots_of(bitmap), key=self.order_key))


# A compound whose parts match more documents than this is not verified (the
# parts still count): a scan of that many field texts would cost milliseconds.
COMPOUND_CANDIDATES = 2048


def _compound_bits(index: _Documents, token: str) -> list[int] | None:
    """Per field, the slots whose field contains a compound identifier (`billing-api`,
    `services/billing/refund.ts`, `billing_retry_max`), found through its parts.

    The documents holding every part are the candidates; each is checked for the
    whole. None for a token without a part of three letters, or with too many
    candidates.
    """
    parts = set(_WORD_TOKEN.findall(token))
    if not parts:
        return None
    candidates = -1
    for part in parts:
        title, description, body = index.token_bits(part)
        candidates &= title | description | body
        if not candidates:
            return [0, 0, 0]
    if candidates.bit_count() > COMPOUND_CANDIDATES:
        return None
    out = [0, 0, 0]
    for slot in slots_of(candidates):
        for f, text in enumerate(field_texts(index.document(slot))):
            if token in text:
                out[f] |= 1 << slot
    return out


def _names_a_lack(token: str, tokens: Sequence[str]) -> bool:
    """Whether a token found in no memory says the memories lack what the query asks.

    Not for a CJK pair or a trigram of an unspaced script: most of those that are
    found nowhere straddle two words (nothing marks the boundary). Not for a
    whole identifier whose parts are query tokens too (`retrywithbackoff` beside
    `retry`, `backoff`): the parts already speak for it. A whole word found
    nowhere is one the memories lack.
    """
    if CJK_CHAR.match(token) or UNSPACED_CHAR.search(token) or not _WORD_TOKEN.fullmatch(token):
        return False
    return not _made_of(token, {t for t in tokens if t != token})


MAX_IDENTIFIER = 256  # a longer word is not an identifier made of query words


def _made_of(word: str, parts: set[str]) -> bool:
    """Whether `word` is a concatenation of `parts` (linear in the word's length)."""
    if len(word) > MAX_IDENTIFIER:
        return False
    ends = [True] + [False] * len(word)
    for end in range(MIN_PART, len(word) + 1):
        ends[end] = any(
            len(part) <= end and ends[end - len(part)] and word.startswith(part, end - len(part))
            for part in parts
        )
    return ends[-1]


_ENGLISH_SUFFIXES = ("ies", "ing", "ed", "es", "s", "y")
MIN_STEM = 4  # shorter stems match too many unrelated words


def light_stem(token: str) -> str:
    """A query word cut to the part its inflections share; matching is by substring.

    English words lose one common suffix (-ies, -ing, -ed, -es, -s, -y); other
    alphabetic words (German, Greek, Russian, Spanish, …), whose endings are
    mostly one or two letters, lose one letter from five letters on and two
    from seven. CJK pairs, unspaced-script grams and words with digits stay whole.
    """
    if not token.isalpha() or CJK_CHAR.match(token) or UNSPACED_CHAR.search(token):
        return token
    if token.isascii():
        for suffix in _ENGLISH_SUFFIXES:
            if token.endswith(suffix) and len(token) - len(suffix) >= MIN_STEM:
                return token[: -len(suffix)]
        return token
    cut = 2 if len(token) >= 7 else 1 if len(token) >= 5 else 0
    return token[: len(token) - cut] if len(token) - cut >= MIN_STEM else token


# Clitics Hebrew and Arabic write joined to the next word ("and", "the", "in",
# "to", "that"), longest first.
_CLITICS = (
    (
        regex.compile(r"\p{Script=Hebrew}"),
        ("וה", "שה", "וב", "ול", "ומ", "וש", "בה", "לה", "מה", "ו", "ה", "ב", "ל", "מ", "ש", "כ"),
    ),
    (
        regex.compile(r"\p{Script=Arabic}"),
        ("وال", "بال", "كال", "فال", "لل", "ال", "و", "ب", "ل", "ف", "ك"),
    ),
)


def without_clitic(word: str) -> str | None:
    """A Hebrew or Arabic word without the clitic it starts with (`החדירות` →
    `חדירות`), or None. Matching is by substring, so a memory's `חדירות` does
    not contain a query's `החדירות`; the ranker looks the bare word up when the
    whole one is in no memory."""
    for script, prefixes in _CLITICS:
        if script.match(word):
            for prefix in prefixes:
                if word.startswith(prefix) and len(word) - len(prefix) >= MIN_PART:
                    return word[len(prefix) :]
    return None


def idf(df: int, n: int) -> float:
    """BM25's IDF, never negative."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


class Bm25Ranker:
    """A `Ranker` (server.ranking.shortlist) scoring BM25F through the warm index."""

    def __init__(self, params: Bm25Params = DEFAULT_PARAMS) -> None:
        self.params = params

    def __call__(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool],
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        index = snapshot.index()
        if index is None:  # the catalog moved on after this snapshot was taken
            return self._rank(_ScanView(snapshot.documents), tokens, keep, limit)
        return self._rank(index, tokens, keep, limit)

    def rank(
        self,
        index: DocumentIndex,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool] = lambda _doc: True,
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        """Kept documents best first: score, then mtime, then the index's input order."""
        return self._rank(index, tokens, keep, limit)

    def _rank(
        self,
        index: _Documents,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool],
        limit: int | None,
    ) -> list[ScoredDocument]:
        n = len(index)
        if not tokens or not n or limit == 0:
            return []
        terms = self._terms(index, tokens)
        matched = 0
        for term in terms:
            matched |= term.any_bits
        if not matched:
            return []
        content_mass = sum(t.idf for t in terms if t.content)
        averages = index.average_field_chars()
        scored: list[tuple[float, Any, MemoryDocument]] = []
        needed = self.params.min_coverage * content_mass
        answered = needed <= 0  # once one document covers enough, coverage is not computed
        # The documents about one of the query's rarest words answer whatever they cover.
        rare = max(1, int(self.params.rare_share * n)) if self.params.rare_share else 0
        anchors = 0
        for term in terms:
            if term.content and 0 < term.any_bits.bit_count() <= rare:
                anchors |= term.bits[0] | term.bits[1]  # a memory about it
        want = n if limit is None else max(PRESCORED, limit)  # None: every match
        for slot in self._prescored(index, terms, matched, keep, want):
            doc = index.document(slot)
            score, covered = self._score(doc, slot, terms, averages, coverage=not answered)
            if score > 0:
                scored.append((score, index.order_key(slot), doc))
                answered = answered or covered >= needed or bool(anchors >> slot & 1)
        if not answered:
            return []
        scored.sort(key=lambda item: (-round(item[0] * SCORE_SCALE), item[1]))
        if self.params.recency_band:
            _newer_first_in_near_ties(scored, self.params.recency_band)
        out = [ScoredDocument(doc, round(score * SCORE_SCALE)) for score, _, doc in scored]
        return out if limit is None else out[:limit]

    def _terms(self, index: _Documents, tokens: Sequence[str]) -> list[_Term]:
        """The query's terms, with their IDF and field bitmaps, function words left out.

        Words and CJK pairs are looked up in the index; compound identifiers
        (`billing-api`) through their parts. A compound the index cannot narrow
        down is left out (its parts are tokens too).
        """
        n = len(index)
        terms: list[_Term] = []
        seen: set[str] = set()
        kept = (t for t in tokens if self.params.score_stopwords or t not in QUERY_STOPWORDS)
        for token in dict.fromkeys(light_stem(t) if self.params.stem else t for t in kept):
            stopword = token in QUERY_STOPWORDS
            acronym = is_acronym(token)
            if acronym or _WORD_TOKEN.fullmatch(token) or _PAIR_TOKEN.fullmatch(token):
                bits = index.token_bits(token)
            else:
                found = _compound_bits(index, token)
                if found is None:
                    continue
                bits = found
            bare = without_clitic(token) if self.params.stem and not any(bits) else None
            if bare is not None and any(bare_bits := index.token_bits(bare)):
                token, bits = bare, bare_bits
            if token in seen:
                continue
            seen.add(token)
            title, description, body = bits
            anywhere = title | description | body
            df = anywhere.bit_count()
            content = not stopword and (df > 0 or _names_a_lack(token, tokens))
            word_start = None
            spaced = not (acronym or CJK_CHAR.match(token) or UNSPACED_CHAR.search(token))
            if content and spaced:  # (an acronym is a whole word by construction)
                word_start = regex.compile(r"(?<![\p{L}\p{M}\p{N}])" + regex.escape(token))
            weight = idf(df, n)
            if CJK_CHAR.match(token):
                weight *= self.params.cjk_pair_weight
            elif UNSPACED_CHAR.search(token):
                weight *= self.params.unspaced_gram_weight
            bits_by_field = (title, description, body)
            terms.append(
                _Term(token, weight, bits_by_field, anywhere, content, word_start, acronym)
            )
        return terms

    def _prescored(
        self,
        index: _Documents,
        terms: Sequence[_Term],
        matched: int,
        keep: Callable[[MemoryDocument], bool],
        want: int,
    ) -> list[int]:
        """The first `want` kept slots by the score each would have if every token
        it holds occurred once, in its best field, and its body were of average length."""
        counters = _Counters()
        k1, weights = self.params.k1, self.params.field_weights
        for term in terms:
            # By the best field that holds the token: a second field adds little
            # once the first has saturated the term.
            seen = 0
            for f, bits in enumerate(term.bits):
                bits &= ~seen
                if not bits:
                    continue
                seen |= bits
                weight = round(term.idf * weights[f] / (k1 + weights[f]) * PRESCORE_SCALE)
                if weight > 0:
                    counters.add(bits & matched, weight)
        out: list[int] = []
        for _score, bitmap in counters.levels(matched):
            # Inside a level, in the tie order (mtime, then input order), as
            # the reference would break the tie.
            for slot in index.in_order(bitmap, want - len(out)):
                if keep(index.document(slot)):
                    out.append(slot)
                    if len(out) == want:
                        return out
        return out

    def _score(
        self,
        doc: MemoryDocument,
        slot: int,
        terms: Sequence[_Term],
        averages: tuple[float, float, float],
        *,
        coverage: bool = True,
    ) -> tuple[float, float]:
        """(BM25F score, IDF mass of the content tokens matched) of one document
        (the mass only with `coverage`, else 0)."""
        p = self.params
        texts = field_texts(doc)
        norms = [1.0 - p.field_b[f] + p.field_b[f] * len(texts[f]) / averages[f] for f in range(3)]
        bit = 1 << slot
        score = covered = 0.0
        for term in terms:
            if not term.any_bits & bit:
                continue
            tf = 0.0
            in_summary = False  # in the title or the description
            for f in range(3):
                if term.bits[f] & bit:
                    if term.acronym:
                        count = acronyms(raw_fields(doc)[f]).count(term.token)
                    else:
                        count = texts[f].count(term.token)
                    tf += p.field_weights[f] * count / norms[f]
                    in_summary = in_summary or f < 2
            if tf > 0:
                score += term.idf * tf / (p.k1 + tf)
                if coverage and term.content:
                    weight = 1.0 if in_summary else p.body_coverage_weight
                    if term.word_start is not None and p.inside_coverage_weight < 1.0:
                        starts = any(
                            term.bits[f] & bit and term.word_start.search(texts[f])
                            for f in range(3)
                        )
                        weight *= 1.0 if starts else p.inside_coverage_weight
                    covered += term.idf * weight
        return score, covered


def _newer_first_in_near_ties(scored: list[tuple[float, Any, MemoryDocument]], band: float) -> None:
    """Move a newer document above an older one scoring at most `band` more (in place).

    An insertion pass: each document climbs over the older ones just above it
    while it stays within the band of them; equal mtimes never move.
    """
    for i in range(1, len(scored)):
        j = i
        while j > 0:
            above, here = scored[j - 1], scored[j]
            if here[1][0] < above[1][0] and here[0] >= (1.0 - band) * above[0]:
                scored[j - 1], scored[j] = here, above
                j -= 1
            else:
                break
