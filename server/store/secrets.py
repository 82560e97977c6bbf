"""The secret detector: credentials in known formats, found and redacted.

One detector serves two callers: the quality gate (docs/writing.md, rule `secret`)
rejects a memory that holds a credential, and the extraction pipeline redacts
transcripts before any model sees them (docs/extraction.md). A finding carries the kind
and the span only; the value is never copied into a finding or a message.

Rules are vendor formats (each fixed by its issuer, so a rule is a regular
expression, not a tuned number) plus one generic rule: a `password=` /
`token:` style assignment whose value is high-entropy and not a placeholder.
Documented example keys (AWS's `AKIAIOSFODNN7EXAMPLE`, any value carrying
`EXAMPLE`) are not secrets: they grant nothing and appear in legitimate notes.

Past 500 lines with one job, finding credentials: most of it is the rule table
(`_RULES`, one entry per vendor format, ~280 lines) kept beside the checks that
decide whether a matched value is real (entropy, placeholders, documented examples).
The credential words of 31 languages are data (`data/credential_words.txt`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import pairwise

import regex
from memory_recall.server.store import secrets_maintained


@dataclass(frozen=True)
class SecretFinding:
    """A credential found in a text: its kind and where it is (`text[start:end]`)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: regex.Pattern[str]
    # The group holding the secret itself; the rest of the match is context.
    group: int | str = 0
    # Extra test on the secret's value (entropy, placeholders).
    accept: Callable[[str], bool] | None = None
    # For prose rules, the pattern finds the key only and the value is the
    # first word within this many characters (same line) that `accept` takes.
    window: int = 0


# A secret's neighbours: a token is not a secret when it continues into more
# identifier characters (a longer word that merely contains the prefix).
_B = r"(?<![A-Za-z0-9_\-])"
_E = r"(?![A-Za-z0-9_\-])"


def _rx(pattern: str, *, ignore_case: bool = False, verbose: bool = False) -> regex.Pattern[str]:
    flags = (regex.IGNORECASE if ignore_case else 0) | (regex.VERBOSE if verbose else 0)
    return regex.compile(pattern, flags)


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s character distribution (0 for an empty string)."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


@cache
def _placeholder_words() -> frozenset[str]:
    text = resources.files(__package__).joinpath("data/secret_placeholders.txt").read_text("utf-8")
    lines = (line.strip().lower() for line in text.splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


# Shapes that stand for a value rather than being one: ${VAR}, $VAR, {{ var }},
# <your-token>, %(name)s, xxxx / **** / ...., os.environ[...], process.env.X,
# getenv(...), a call or an attribute path such as settings.DB_PASSWORD.
_REFERENCE = _rx(
    verbose=True,
    pattern=r"""^(?:
        \$\{[^}]*\}? | \$\(? [A-Za-z_]\w* \)? | \{\{.*\}\}? | \{[A-Za-z_]\w*\} | <[^>]*>?
      | %\(?\w*\)?s | \[[^\]]*\]? | %[A-Za-z_]\w*%
      | (?:os\.environ|os\.getenv|getenv|process\.env|env|ENV|System\.getenv|secrets|vault)\b.*
      | [A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:[(\[].*)? | [A-Za-z_][\w.]*[(\[].*
    )$""",
)
_FILLER = _rx(r"^(?:[xX*•.#_\-0]{3,}|(?:abc|123|xyz|foo)+)$")
_DOCUMENTED_EXAMPLE = _rx(r"EXAMPLE|example|Example")


def is_placeholder(value: str) -> bool:
    """Whether `value` stands in for a credential (docs, templates, env references)."""
    bare = value.strip().strip("\"'`,;")
    if not bare:
        return True
    if bare.lower() in _placeholder_words() or _REFERENCE.match(bare) or _FILLER.match(bare):
        return True
    # Vendors' documented example keys (AWS: AKIAIOSFODNN7EXAMPLE,
    # wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY) carry the word EXAMPLE.
    if _DOCUMENTED_EXAMPLE.search(bare):
        return True
    # A run of one repeated character, or placeholder words glued together
    # (your_api_key_here, YOUR-TOKEN-HERE).
    if len(set(bare.lower())) <= 2:
        return True
    words = [w for w in regex.split(r"[_\-\s.]+", bare.lower()) if w]
    return bool(words) and all(w in _PLACEHOLDER_PARTS for w in words)


# Words that placeholder values are glued from (your_api_key_here, YOUR-TOKEN-HERE).
_PLACEHOLDER_PARTS = frozenset(
    [
        "your",
        "my",
        "our",
        "the",
        "a",
        "an",
        "here",
        "insert",
        "put",
        "replace",
        "with",
        "goes",
        "key",
        "api",
        "secret",
        "token",
        "password",
        "pass",
        "access",
        "private",
        "client",
        "app",
        "auth",
        "value",
        "fake",
        "dummy",
        "example",
        "sample",
        "test",
        "placeholder",
        "redacted",
        "xxx",
        "xxxx",
        "changeme",
    ]
)


def _high_entropy(value: str, *, min_length: int, min_bits: float) -> bool:
    """A random-looking value: long enough, varied enough, and not words."""
    if len(value) < min_length or is_placeholder(value):
        return False
    if shannon_entropy(value) < min_bits:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() and c not in "_-" for c in value)
    if has_digit or has_symbol:
        return True
    # Letters only (with _ or -): an identifier or words unless the case flips
    # like random text does (camelCase flips once per word, a key every other
    # character or so).
    letters = [c for c in value if c.isalpha()]
    flips = sum(1 for a, b in pairwise(letters) if a.isupper() != b.isupper())
    return len(letters) >= 16 and flips >= len(letters) / 4


def _token_value(value: str) -> bool:
    return _high_entropy(value, min_length=16, min_bits=3.0)


def _password_value(value: str) -> bool:
    # Passwords are shorter and less random than tokens, but a word alone is
    # not one: at least 8 characters, and not a placeholder; or a passphrase.
    return _high_entropy(value, min_length=8, min_bits=2.5) or is_passphrase(value)


# A passphrase: three or more words joined by - _ . (diceware style), 15+ characters.
_PASSPHRASE = regex.compile(r"^\p{L}{3,12}(?:[-_.+]\p{L}{3,12}){2,7}$")


def is_passphrase(value: str) -> bool:
    """Whether `value` is words joined into a passphrase (`orbit-lantern-maple-quiet`)."""
    return len(value) >= 15 and bool(_PASSPHRASE.match(value)) and not is_placeholder(value)


def _prose_password(value: str) -> bool:
    # A value found by proximity must look made up: letters and digits, or joined words.
    return (_password_value(value) and _has_digit_and_letter(value)) or is_passphrase(value)


def _aws_secret(value: str) -> bool:
    # Random base64 of 30 bytes: both cases and a digit (a git SHA is lowercase hex).
    return (
        not is_placeholder(value)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and shannon_entropy(value) >= 4.0
    )


def _command_password(value: str) -> bool:
    # After `docker login -p` or `mysql -p` the value is a password whatever it looks like.
    return len(value) >= 4 and not is_placeholder(value)


def _url_password(value: str) -> bool:
    # A password in a URL is a real credential whatever its entropy (a DSN
    # with `admin:s3cret` still opens the database); only placeholders pass.
    return len(value) >= 3 and not is_placeholder(value)


def _vendor_value(value: str) -> bool:
    return not is_placeholder(value)


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_PEM_KINDS = r"(?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP |SSH2 ENCRYPTED )?PRIVATE KEY(?: BLOCK)?"

# Keys whose value is a credential. The key must END with one of these (so
# `token_count`, `password_min_length` and `tokenizer` are not credentials).
_PASSWORD_KEYS = r"pass(?:word|wd|phrase)?|pwd|db_?pass"
# Prose: a credential word (data/credential_words.txt, 30+ languages), then within a
# few words (any separator, 是, は, est, is…) the value: the first following word that
# passes the value test.
_SCRIPT_BOUNDED = regex.compile(
    r"[\p{Latin}\p{Cyrillic}\p{Greek}\p{Arabic}\p{Devanagari}\p{Hebrew}\p{Bengali}]"
)


@cache
def _credential_words(kind: str) -> str:
    text = resources.files(__package__).joinpath("data/credential_words.txt").read_text("utf-8")
    bounded: list[str] = []
    unbounded: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        word_kind, _language, pattern = line.split("\t", 2)
        if word_kind != kind:
            continue
        (bounded if _SCRIPT_BOUNDED.match(pattern.lstrip("\\(?:")) else unbounded).append(pattern)
    parts = [rf"(?<![\p{{L}}\p{{M}}\p{{N}}_])(?:{'|'.join(bounded)})(?![\p{{L}}\p{{M}}\p{{N}}_])"]
    if unbounded:
        parts.append("|".join(unbounded))
    return "|".join(parts)


# How far after a prose key its value may sit, in characters (a few words).
_PROSE_WINDOW = 48
# A credential value is ASCII; prose around it (CJK, quotes, brackets) is not.
_PROSE_WORD = regex.compile(r"[A-Za-z0-9!#$%&*+\-./:;=?@^_|~\\]+")
_TRAILING_PUNCTUATION = ".,;:!?"
_KEY_SEPARATORS = ":="

_TOKEN_KEYS = (
    r"secret|token|api[_\-.]?key|access[_\-.]?key(?:[_\-.]?id)?|secret[_\-.]?key|private[_\-.]?key"
    r"|auth[_\-.]?key|client[_\-.]?secret|credentials?|auth|bearer|signing[_\-.]?key|encryption[_\-.]?key"
    r"|master[_\-.]?key|session[_\-.]?key|webhook[_\-.]?secret"
)
# key (bare, or quoted as in JSON), separator (= := : => ->), optional quote, value.
_ASSIGNMENT = r"""
    (?<![A-Za-z0-9])
    ["']?(?P<key>[A-Za-z0-9_.\-]*?(?:{keys})s?)["']?
    (?:\s*(?:=|:=|:|：|=>|->)\s*|\s+(?:is|was)\s+)
    (?P<q>["'`])?(?P<value>(?(q)[^"'`\r\n]+|[^\s"'`,;)}}\]]+))
"""

_RULES: tuple[_Rule, ...] = (
    # Private keys first: a PEM block inside a GCP service-account file is
    # reported as the file's kind, and JSON escapes its newlines as \n.
    _Rule(
        "gcp_service_account_key",
        _rx(
            r'"private_key"\s*:\s*"(?P<v>-----BEGIN ' + _PEM_KINDS + r'-----(?:\\n|[^"])*?'
            r"-----END " + _PEM_KINDS + r'-----(?:\\n)?)"'
        ),
        "v",
    ),
    _Rule(
        "private_key",
        _rx(
            r"-----BEGIN (?P<k>" + _PEM_KINDS + r")-----[\s\S]*?-----END (?P=k)-----"
            # A block cut short (pasted halfway) is still key material.
            r"|-----BEGIN "
            + _PEM_KINDS
            + r"-----(?:\\n|\s)*[A-Za-z0-9+/=]{64,}[A-Za-z0-9+/=\s\\n]*"
        ),
    ),
    _Rule(
        "aws_access_key_id",
        _rx(_B + r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + _E),
        0,
        _vendor_value,
    ),
    _Rule(
        "aws_secret_access_key",
        _rx(
            r"aws.{0,24}?(?:secret|sk).{0,24}?[\"']?\s*(?:=|:|=>)\s*[\"']?"
            r"(?P<v>(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))",
            ignore_case=True,
        ),
        "v",
        _vendor_value,
    ),
    _Rule("gcp_api_key", _rx(_B + r"AIza[0-9A-Za-z_\-]{35}" + _E), 0, _vendor_value),
    _Rule(
        "google_oauth_client_secret", _rx(_B + r"GOCSPX-[0-9A-Za-z_\-]{28}" + _E), 0, _vendor_value
    ),
    _Rule(
        "azure_storage_key",
        _rx(
            r"(?:AccountKey|SharedAccessKey|AccessKey)\s*=\s*(?P<v>[A-Za-z0-9+/]{40,}={0,2})",
            ignore_case=True,
        ),
        "v",
        _vendor_value,
    ),
    _Rule(
        "azure_sas_token",
        _rx(r"[?&]sig=(?P<v>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})(?=[&\s\"']|$)", ignore_case=True),
        "v",
        _vendor_value,
    ),
    _Rule(
        "github_token",
        _rx(
            _B
            + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})"
            + _E
        ),
    ),
    _Rule(
        "gitlab_token",
        _rx(_B + r"gl(?:pat|dt|ptt|rt|cbt)-[0-9A-Za-z_\-]{20,}" + _E),
        0,
        _vendor_value,
    ),
    _Rule(
        "slack_webhook",
        _rx(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]{16,}"
        ),
    ),
    _Rule(
        "slack_token",
        _rx(
            _B
            + r"xox[abposr]-(?:\d+-)+[0-9A-Za-z\-]{8,}"
            + _E
            + r"|"
            + _B
            + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{32,}"
        ),
    ),
    _Rule(
        "stripe_key", _rx(_B + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}" + _E), 0, _vendor_value
    ),
    _Rule("anthropic_key", _rx(_B + r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_\-]{40,}" + _E)),
    _Rule(
        "openai_key",
        _rx(_B + r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}" + _E),
        0,
        lambda v: _token_value(v) and any(c.isdigit() for c in v) and any(c.isupper() for c in v),
    ),
    _Rule(
        "npm_token",
        _rx(
            _B
            + r"npm_[A-Za-z0-9]{36}"
            + _E
            + r"|//[\w.\-/]+/:_authToken=(?P<v>[A-Za-z0-9\-_.]{20,})"
        ),
    ),
    _Rule("pypi_token", _rx(_B + r"pypi-AgE[A-Za-z0-9_\-]{50,}" + _E)),
    _Rule("sendgrid_key", _rx(_B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E)),
    _Rule(
        "twilio_key",
        _rx(
            _B
            + r"SK[0-9a-f]{32}"
            + _E
            + r"|twilio\w{0,20}?(?:auth|token|secret)\w{0,10}[\"']?\s*(?:=|:|=>)\s*[\"']?"
            + r"(?P<v>[0-9a-f]{32})"
            + _E,
            ignore_case=False,
        ),
    ),
    _Rule("huggingface_token", _rx(_B + r"hf_[A-Za-z]{34}" + _E), 0, _token_value),
    _Rule("digitalocean_token", _rx(_B + r"do[por]_v1_[a-f0-9]{64}" + _E)),
    _Rule("shopify_token", _rx(_B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E)),
    _Rule("telegram_bot_token", _rx(r"(?<![\w:])\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _E)),
    # Vault tokens (service hvs., batch hvb., recovery hvr.; the legacy s. only beside
    # the word Vault): https://developer.hashicorp.com/vault/docs/concepts/tokens
    _Rule(
        "vault_token",
        _rx(
            _B
            + r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"
            + _E
            + r"|vault.{0,40}?(?<![A-Za-z0-9_.\-])(?P<v>s\.[A-Za-z0-9]{24})"
            + _E,
            ignore_case=False,
        ),
        0,
        lambda v: not _DOCUMENTED_EXAMPLE.search(v),
    ),
    # Sentry organisation (sntrys_) and user (sntryu_) auth tokens.
    _Rule(
        "sentry_token",
        _rx(_B + r"sntrys_[A-Za-z0-9+/=_]{40,}|" + _B + r"sntryu_[a-f0-9]{64}" + _E),
    ),
    # Mapbox secret tokens (sk.eyJ…; pk. tokens are public by design).
    _Rule("mapbox_token", _rx(_B + r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}" + _E)),
    # Alibaba Cloud AccessKey IDs: LTAI and 12 to 20 characters.
    _Rule("alibaba_access_key", _rx(_B + r"LTAI[A-Za-z0-9]{12,20}" + _E), 0, _vendor_value),
    # Discord webhook URLs carry their own token.
    _Rule(
        "discord_webhook",
        _rx(
            r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/"
            r"\d{17,20}/[A-Za-z0-9_\-]{60,68}"
        ),
    ),
    # A private key's body pasted without its BEGIN line: OpenSSH's format starts with
    # base64 of "openssh-key-v1"; PKCS#1 and PKCS#8 RSA keys with their DER headers.
    _Rule(
        "private_key",
        _rx(
            r"b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=\s]{40,}"
            r"|MII[A-Za-z0-9+/]{1,3}(?:IBAAKCA|IBADANBgkqhkiG9w0BAQEFAASC)[A-Za-z0-9+/=\s]{40,}"
        ),
    ),
    # Heroku API keys are UUIDs: only beside the word Heroku and a word for key.
    _Rule(
        "heroku_api_key",
        _rx(
            r"heroku.{0,30}?(?:api[_\s\-]?key|key|token|schlüssel|clave|clé|chave|キー|ключ|密钥)"
            r".{0,20}?(?P<v>" + _UUID + r")"
            r"|(?:api[_\s\-]?key|key|token|schlüssel|clave|clé|chave|キー|ключ|密钥)"
            r".{0,30}?heroku.{0,10}?(?P<w>" + _UUID + r")",
            ignore_case=True,
        ),
        "v",
    ),
    _Rule(
        "jwt",
        _rx(_B + r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}" + _E),
    ),
    _Rule(
        "url_password",
        _rx(
            r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@'\"<>]{0,64}:(?P<v>[^\s:/@'\"<>]{1,128})@[\w.\-\[\]]+",
            ignore_case=True,
        ),
        "v",
        _url_password,
    ),
    _Rule(
        "authorization_header",
        _rx(r"\b(?:Bearer|Basic|token)\s+(?P<v>[A-Za-z0-9\-._~+/]{20,}=*)" + _E),
        "v",
        _token_value,
    ),
    _Rule(
        "password_assignment",
        _rx(_ASSIGNMENT.format(keys=_PASSWORD_KEYS), ignore_case=True, verbose=True),
        "value",
        _password_value,
    ),
    _Rule(
        "password_assignment",
        _rx(
            r"(?<!\S)--?(?:password|passwd|pass)[= ](?P<v>[^\s\"'`]+)",
        ),
        "v",
        _password_value,
    ),
    # `docker login -p`, `mysql -pSECRET`, `sshpass -p`: a password on a command line.
    _Rule(
        "password_assignment",
        _rx(
            r"\b(?:docker|podman|nerdctl|helm|buildah|skopeo)\s+(?:registry\s+)?login\b"
            r"[^\n`]*?\s(?:-p|--pass)\s+['\"]?(?P<v>[^\s'\"`]+)"
            r"|\b(?:mysql|mysqldump|mariadb|mysqladmin)\b[^\n`]*?\s-p(?P<w>[^\s'\"`]+)"
            r"|\bsshpass\s+-p\s*['\"]?(?P<x>[^\s'\"`]+)"
        ),
        "v",
        _command_password,
    ),
    # A bare 40-character AWS secret access key within a sentence of the word AWS.
    _Rule(
        "aws_secret_access_key",
        _rx(
            r"\baws\b.{0,80}?(?<![A-Za-z0-9/+])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            ignore_case=True,
        ),
        "v",
        _aws_secret,
    ),
    # An environment variable that names a credential, then its value after a space
    # (`ENV API_TOKEN value` in a Dockerfile, `heroku config` output).
    _Rule(
        "token_assignment",
        _rx(
            r"\b[A-Z][A-Z0-9_]*_(?:API_KEY|APIKEY|TOKEN|SECRET|SECRET_KEY|ACCESS_KEY|AUTH_KEY)"
            r"[ \t]+(?P<v>[^\s\"'`,;]+)"
        ),
        "v",
        _token_value,
    ),
    _Rule(
        "token_assignment",
        _rx(_ASSIGNMENT.format(keys=_TOKEN_KEYS), ignore_case=True, verbose=True),
        "value",
        _token_value,
    ),
    _Rule(
        "token_assignment",
        _rx(
            r"(?<!\S)--(?:token|api-key|secret|auth-token|access-token)[= ](?P<v>[^\s\"'`]+)",
            ignore_case=True,
        ),
        "v",
        _token_value,
    ),
    _Rule(
        "password_assignment",
        _rx(_credential_words("password"), ignore_case=True),
        accept=_prose_password,
        window=_PROSE_WINDOW,
    ),
    _Rule(
        "token_assignment",
        _rx(_credential_words("token"), ignore_case=True),
        accept=lambda v: _token_value(v) and _has_digit_and_letter(v),
        window=_PROSE_WINDOW,
    ),
)

KINDS: tuple[str, ...] = tuple(
    dict.fromkeys([*(rule.kind for rule in _RULES), *secrets_maintained.KINDS])
)
"""Every kind the detector reports, most specific first."""


def _has_digit_and_letter(value: str) -> bool:
    # Prose words are letters; a value found by proximity must look made up.
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _prose_value(rule: _Rule, text: str, key_end: int) -> SecretFinding | None:
    line_end = text.find("\n", key_end)
    stop = min(key_end + rule.window, len(text) if line_end < 0 else line_end)
    for word in _PROSE_WORD.finditer(text, key_end, stop):
        start, end = word.span()
        # Glued to the key: a value only after `:` or `=` (`password:x`),
        # never the rest of a word or URL (`user:password@host`).
        if start == key_end and text[start] not in _KEY_SEPARATORS:
            continue
        if text[start] in "@/":
            continue  # the rest of a URL (`<password>@host`), not a value
        while start < end and text[start] in _KEY_SEPARATORS:
            start += 1
        while end > start and text[end - 1] in _TRAILING_PUNCTUATION:
            end -= 1
        if rule.accept is None or rule.accept(text[start:end]):
            return SecretFinding(rule.kind, start, end)
    return None


# Rules from here on are generic (URLs, assignments, prose); those before are vendor
# formats. detect-secrets' vendor formats are tried between the two.
_FIRST_GENERIC = next(i for i, rule in enumerate(_RULES) if rule.kind == "url_password")


def _candidates(text: str, rules: tuple[_Rule, ...]) -> Iterator[SecretFinding]:
    for rule in rules:
        for match in rule.pattern.finditer(text):
            if rule.window:
                finding = _prose_value(rule, text, match.end())
                if finding is not None:
                    yield finding
                continue
            group: int | str = rule.group
            # A rule with alternatives names its secret in each (v, w, x…): the one that
            # took part in this match; none: the whole match is the secret.
            if isinstance(group, str) or "v" in rule.pattern.groupindex:
                names = [n for n in (rule.group, "v", "w", "x") if isinstance(n, str)]
                taking = [n for n in names if n in rule.pattern.groupindex and match.start(n) >= 0]
                group = taking[0] if taking else 0
            start, end = match.span(group)
            value = text[start:end]
            if rule.accept is not None and not rule.accept(value):
                continue
            yield SecretFinding(rule.kind, start, end)


def _all_candidates(text: str) -> Iterator[SecretFinding]:
    yield from _candidates(text, _RULES[:_FIRST_GENERIC])
    for kind, start, end in secrets_maintained.find(text):
        if not is_placeholder(text[start:end]):
            yield SecretFinding(kind, start, end)
    yield from _candidates(text, _RULES[_FIRST_GENERIC:])


# What is published on purpose and opens nothing: an OpenSSH public key line, a PEM
# public key or certificate. A credential word beside one ("Öffentlicher Schlüssel:
# ssh-rsa AAAA…") does not make it a secret.
_PUBLIC = regex.compile(
    r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com)"
    r"\s+AAAA[A-Za-z0-9+/]+={0,3}"
    r"|-----BEGIN (?:RSA |EC )?(?:PUBLIC KEY|CERTIFICATE)-----.*?"
    r"-----END (?:RSA |EC )?(?:PUBLIC KEY|CERTIFICATE)-----",
    regex.S,
)


def find_secrets(text: str) -> list[SecretFinding]:
    """Every credential in `text`, left to right, without overlaps.

    Where two rules find overlapping spans, the more specific rule (earlier in
    the rule list: vendor formats before generic assignments) wins. A finding inside
    a public key or certificate is no credential.
    """
    public = [m.span() for m in _PUBLIC.finditer(text)] if "AAAA" in text or "-----" in text else []
    kept: list[SecretFinding] = []
    for finding in _all_candidates(text):
        if any(s <= finding.start and finding.end <= e for s, e in public):
            continue
        if all(finding.end <= k.start or finding.start >= k.end for k in kept):
            kept.append(finding)
    return sorted(kept, key=lambda f: f.start)


def redact(text: str) -> str:
    """`text` with each secret replaced by `[REDACTED:<kind>]`; everything else intact."""
    parts: list[str] = []
    cursor = 0
    for finding in find_secrets(text):
        parts.append(text[cursor : finding.start])
        parts.append(f"[REDACTED:{finding.kind}]")
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)
