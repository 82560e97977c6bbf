"""What leaves for a model passes the secret detector: one wrapper for every model call.

Extraction redacts its transcript and consolidation keeps a credential's cluster
from the model, but the choke point is here (docs/safety.md, "one gate"): the
selector's query and manifest and every completion message go through `redact`
before a `Selector` or `Completer` sends them, whoever built the request. The
daemon wraps the selector and the completer it builds; the models layer below
the store cannot see the detector itself.
"""

from __future__ import annotations

import dataclasses
import functools

from memory_recall.server.models import SelectionRequest, Selector
from memory_recall.server.models.complete import Completer, CompletionRequest
from memory_recall.server.store.secrets import find_secrets, redact

# Each recall offers the selector up to 200 candidates, and the same memories come back
# recall after recall: their descriptions' verdicts are kept (by text, so an edited
# description is checked again). Unkept, the detector was most of the event loop's time
# between recalls at 10,000 memories (docs/performance.md, "Recalls first").
DESCRIPTIONS_KEPT = 65_536


def _clean(text: str) -> str:
    return redact(text) if text and find_secrets(text) else text


_clean_description = functools.lru_cache(maxsize=DESCRIPTIONS_KEPT)(_clean)


class GuardedSelector:
    """A selector whose query and candidates' descriptions are redacted before it sees them."""

    def __init__(self, inner: Selector) -> None:
        self.inner = inner
        self.kind = inner.kind

    async def select(self, request: SelectionRequest) -> list[str]:
        candidates = [
            doc if clean is doc.description else dataclasses.replace(doc, description=clean)
            for doc in request.candidates
            for clean in (_clean_description(doc.description),)
        ]
        query = _clean(request.query)
        return await self.inner.select(
            dataclasses.replace(request, query=query, candidates=candidates)
        )


class GuardedCompleter:
    """A completer whose messages are redacted before they are sent."""

    def __init__(self, inner: Completer) -> None:
        self.inner = inner
        self.kind = inner.kind

    async def complete(self, request: CompletionRequest) -> str:
        messages = [
            {**message, "content": _clean(message.get("content", ""))}
            for message in request.messages
        ]
        return await self.inner.complete(dataclasses.replace(request, messages=messages))


def guarded_selector(selector: Selector | None) -> Selector | None:
    return None if selector is None else GuardedSelector(selector)


def guarded_completer(completer: Completer | None) -> Completer | None:
    return None if completer is None else GuardedCompleter(completer)
