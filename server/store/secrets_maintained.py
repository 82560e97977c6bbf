"""Credential formats from a maintained detector: Yelp's detect-secrets (PyPI).

Why only some of it (measured on fixtures/gate/secrets.json before issue 29's
cases were added; docs/safety.md has the figures): its vendor plugins found 55
of our 103 labelled credentials and none that our rules missed, and its entropy
and keyword plugins, built for lines of source code, flagged 69 of 71 harmless
prose look-alikes (commit hashes, URLs, CJK sentences). So secrets.py keeps its
own rules, and this module adds detect-secrets' regular expressions for the
vendor formats those rules do not know: Discord bot tokens, Mailchimp and Square
keys, Artifactory, Cloudant, SoftLayer and IBM Cloud keys. They come from the
package, so an update of detect-secrets updates them; its verification (network
calls) is never used, and its `requests` import gets a stand-in (`_offline_requests`).
"""

from __future__ import annotations

import importlib
import logging
import sys
import types
from collections.abc import Iterator
from functools import cache

log = logging.getLogger("memory_recall.store")

# detect-secrets plugin (module, class) → the kind we report.
PLUGINS: dict[tuple[str, str], str] = {
    ("discord", "DiscordBotTokenDetector"): "discord_bot_token",
    ("mailchimp", "MailchimpDetector"): "mailchimp_key",
    ("square_oauth", "SquareOAuthDetector"): "square_oauth_secret",
    ("artifactory", "ArtifactoryDetector"): "artifactory_token",
    ("cloudant", "CloudantDetector"): "cloudant_key",
    ("softlayer", "SoftlayerDetector"): "softlayer_key",
    ("ibm_cos_hmac", "IbmCosHmacDetector"): "ibm_cos_hmac_key",
    ("ibm_cloud_iam", "IbmCloudIamDetector"): "ibm_cloud_iam_key",
}
KINDS: tuple[str, ...] = tuple(PLUGINS.values())

# Characters a denylist match may carry around its value (Artifactory's patterns
# include the whitespace or quote before and after the key).
_EDGES = " \t\r\n\"'=:"


def _offline_requests() -> types.ModuleType:
    """A stand-in for `requests` while detect-secrets is imported: its plugins import it
    for verification we never run, and importing the real one (urllib3) binds a socket to
    probe IPv6 — the daemon opens no socket but its model's. Every call refuses."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("memory-recall never verifies a credential over the network")

    stub = types.ModuleType("requests")
    exceptions = types.ModuleType("requests.exceptions")
    exceptions.RequestException = type("RequestException", (Exception,), {})  # type: ignore[attr-defined]
    stub.exceptions = exceptions  # type: ignore[attr-defined]
    stub.Response = object  # type: ignore[attr-defined]
    stub.get = stub.post = refuse  # type: ignore[attr-defined]
    return stub


@cache
def _patterns() -> tuple[tuple[str, object], ...]:
    """(kind, compiled pattern) of every plugin, or () when detect-secrets is missing."""
    stubbed = "requests" not in sys.modules
    if stubbed:
        sys.modules["requests"] = _offline_requests()
    try:
        found = []
        for (module, name), kind in PLUGINS.items():
            plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
            found += [(kind, pattern) for pattern in plugin.denylist]
        return tuple(found)
    except Exception as exc:  # missing or changed package: our own rules still run
        log.warning("detect-secrets unavailable (%s); its vendor formats are not checked", exc)
        return ()
    finally:
        if stubbed:  # whoever imports requests later gets the real one
            sys.modules.pop("requests", None)


def find(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of each credential detect-secrets' vendor patterns find."""
    for kind, pattern in _patterns():
        for match in pattern.finditer(text):  # type: ignore[attr-defined]
            group = 1 if match.re.groups and match.start(1) >= 0 else 0
            start, end = match.span(group)
            while start < end and text[start] in _EDGES:
                start += 1
            while end > start and text[end - 1] in _EDGES:
                end -= 1
            if end > start:
                yield kind, start, end
