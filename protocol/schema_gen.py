"""Generate `protocol/schema/protocol.schema.json` from the pydantic models.

python -m memory_recall.protocol.schema_gen          # rewrite the checked-in schema
python -m memory_recall.protocol.schema_gen --check  # exit 1 when it has drifted
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memory_recall.protocol import methods
from memory_recall.protocol.messages import ALL_MODELS
from pydantic.json_schema import models_json_schema

SCHEMA_PATH = Path(__file__).parent / "schema" / "protocol.schema.json"


def build_schema() -> dict[str, object]:
    _, schema = models_json_schema(
        [(model, "validation") for model in ALL_MODELS],
        ref_template="#/$defs/{model}",
        title=f"memory-recall protocol v{methods.PROTOCOL_VERSION}",
    )
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["x-protocolVersion"] = methods.PROTOCOL_VERSION
    schema["x-methods"] = {
        "requests": {
            methods.RECALL: "RecallParams → RecallResult",
            methods.STATUS: "→ StatusResult",
            methods.TREE: "TreeParams → TreeResult",
            methods.CONTEXT: "ContextParams → ContextResult",
            methods.CONSOLIDATE: "ConsolidateParams → ConsolidateResult",
            methods.REMEMBER: "RememberParams → WriteResult",
            methods.UPDATE: "UpdateParams → WriteResult",
            methods.FORGET: "ForgetParams → WriteResult",
            methods.RESTORE: "RestoreParams → WriteResult",
            methods.UNDO: "UndoParams → WriteResult",
            methods.HISTORY: "HistoryParams → HistoryResult",
            methods.LIST: "ListParams → ListResult",
            methods.EXTRACT: "ExtractParams → ExtractResult",
            methods.SEARCH: "SearchParams → SearchResult",
            methods.EXPLAIN: "ExplainParams → ExplainResult",
            methods.PROPOSALS: "ProposalsParams → ProposalsResult",
            methods.CONFIRM: "ProposalParams → WriteResult",
            methods.REJECT: "ProposalParams → RejectResult",
            methods.FEEDBACK: "FeedbackParams → FeedbackResult (also a notification)",
        },
        "notifications": {
            methods.FAST_RESULT: "PhaseNotification",
            methods.REFINED_RESULT: "PhaseNotification",
            methods.TELEMETRY: "RecallTelemetry",
            methods.SUGGESTION: "SuggestionNotification",
        },
        "clientNotifications": {methods.OBSERVE: "ObserveParams"},
        "serverRequests": {
            methods.SELECT: "SelectParams → SelectResult",
            methods.COMPLETE: "CompleteParams → CompleteResult",
        },
    }
    return schema


def render() -> str:
    return json.dumps(build_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != text:
            print(
                f"{SCHEMA_PATH} is stale: run python -m memory_recall.protocol.schema_gen",
                file=sys.stderr,
            )
            return 1
        return 0
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
