"""The secret detector: what it finds, what redaction leaves, and its figures on the labelled set."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_recall.server.dev.gate_eval import evaluate_refusals, evaluate_secrets
from memory_recall.server.store.secrets import find_secrets, redact

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "gate" / "secrets.json"
CASES = json.loads(FIXTURE.read_text("utf-8"))["cases"]
SECRET_TEXTS = [case["text"] for case in CASES if case["secrets"]]
CLEAN_TEXTS = [case["text"] for case in CASES if not case["secrets"]]

# Figures measured when the set was written; a change may raise them, never
# lower them by more than one case's worth.
BASELINE_PRECISION = 1.0
BASELINE_RECALL = 1.0
TOLERANCE = 0.01


def test_kinds_name_the_issuer() -> None:
    text = "GITHUB_TOKEN=ghp_" + "a1B2c3D4e5" * 3 + "a1B2c3 and AKIA" + "Z7Q2" * 4
    assert [f.kind for f in find_secrets(text)] == ["github_token", "aws_access_key_id"]


def test_redaction_keeps_everything_but_the_secret() -> None:
    text = "Staging DSN: postgres://app:Vq8!zr2Lm@db.internal:5432/app — ask ops for access."
    assert redact(text) == (
        "Staging DSN: postgres://app:[REDACTED:url_password]@db.internal:5432/app"
        " — ask ops for access."
    )


def test_placeholders_and_references_are_not_secrets() -> None:
    for text in (
        "API_KEY=<your-api-key>",
        "password: changeme",
        "token: ${GITHUB_TOKEN}",
        'token = os.environ["SLACK_TOKEN"]',
        "DB_PASSWORD=xxxxxxxxxxxx",
        "AKIAIOSFODNN7EXAMPLE is AWS's documented example key",
    ):
        assert find_secrets(text) == [], text


def test_redacted_text_has_nothing_left_to_find() -> None:
    for text in SECRET_TEXTS:
        assert find_secrets(redact(text)) == [], text


def test_secret_free_texts_are_left_unchanged() -> None:
    for text in CLEAN_TEXTS:
        assert redact(text) == text


_credential_shaped = st.sampled_from(SECRET_TEXTS)
_prose = st.text(
    alphabet=st.sampled_from(string.ascii_letters + " .,\n" + "密码令牌パスワードпароль"),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(before=_prose, secret_text=_credential_shaped, after=_prose)
def test_redact_never_leaves_a_found_value(before: str, secret_text: str, after: str) -> None:
    text = f"{before} {secret_text} {after}"
    redacted = redact(text)
    for finding in find_secrets(text):
        value = text[finding.start : finding.end]
        assert value not in redacted
        assert f"[REDACTED:{finding.kind}]" in redacted


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_redact_changes_only_what_it_finds(text: str) -> None:
    if find_secrets(text):
        assert redact(text) != text
    else:
        assert redact(text) == text


def test_labelled_set_figures_do_not_regress() -> None:
    report = evaluate_secrets(FIXTURE)
    assert report.precision >= BASELINE_PRECISION - TOLERANCE, report.false_positives
    assert report.recall >= BASELINE_RECALL - TOLERANCE, report.false_negatives


def test_labelled_set_is_broad() -> None:
    kinds = {secret["kind"] for case in CASES for secret in case["secrets"]}
    assert len(CASES) >= 150
    assert len(kinds) >= 15
    assert len(CLEAN_TEXTS) >= 50


# Refusals as a user meets them (issue 29's targets: ≥ 98 % refused, ≤ 2 % of harmless
# look-alikes refused), measured when the classes were added; `memory-recall eval-gate`
# prints them per class and per language. The tuned set was tuned on; the blind set
# (written with the tuned set, before any tuning, other sentences and values) never was.
REFUSAL_BASELINES = {
    "secrets.json": (1.0, 0.0),  # 172/172 refused, 0/101 look-alikes
    "secrets-blind.json": (1.0, 0.0),  # 35/35 refused, 0/13 (a public key is no credential)
}
REFUSAL_TOLERANCE = 0.02


@pytest.mark.parametrize("name", sorted(REFUSAL_BASELINES))
def test_refusals_do_not_regress(name: str) -> None:
    report = evaluate_refusals(FIXTURE.with_name(name))
    refused, false_refusals = REFUSAL_BASELINES[name]
    assert report.total.refusal_rate >= refused - REFUSAL_TOLERANCE, report.missed
    assert report.total.false_refusal_rate <= false_refusals + REFUSAL_TOLERANCE, (
        report.falsely_refused
    )


def test_every_issue_class_is_covered_in_seven_languages() -> None:
    languages = {case["lang"] for case in CASES if case["id"].startswith("i29-")}
    assert len(languages) >= 7
    classes = {case["class"] for case in CASES if case["id"].startswith("i29-")}
    for cls in classes - {"maintained"}:
        kinds = [c for c in CASES if c["class"] == cls]
        assert any(c["secrets"] for c in kinds) and any(not c["secrets"] for c in kinds), cls


def test_credential_words_cover_twenty_languages() -> None:
    from importlib import resources

    text = (
        resources.files("memory_recall.server.store")
        .joinpath("data/credential_words.txt")
        .read_text("utf-8")
    )
    languages = {line.split("\t")[1] for line in text.splitlines() if line.startswith("password\t")}
    assert len(languages) >= 20
    for word in (
        "wachtwoord",
        "lösenordet",
        "şifresi",
        "heslo",
        "mật khẩu",
        "كلمة المرور",
        "पासवर्ड",
        "密码",
        "パスワード",
        "비밀번호",
        "пароль",
        "contraseña",
        "passwort",
    ):
        assert find_secrets(f"{word}: Kx8vQ2mZ7pLw"), word


@pytest.mark.parametrize(
    "text",
    [
        "Öffentlicher Schlüssel: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 deploy@ci",
        "public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx9 me@laptop",
        "cert:\n-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUb3\n-----END CERTIFICATE-----",
    ],
)
def test_a_public_key_is_no_credential_whatever_word_stands_beside_it(text: str) -> None:
    assert find_secrets(text) == []


def test_a_private_key_stays_one_beside_a_public_key() -> None:
    text = (
        "pub: ssh-rsa AAAAB3NzaC1yc2EAAAADAQAB me@x\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    assert [f.kind for f in find_secrets(text)] == ["private_key"]
