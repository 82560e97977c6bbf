"""JSON-RPC method names of protocol v1 (SPEC §5)."""

PROTOCOL_VERSION = 2

# client → server requests
RECALL = "memory/recall"
STATUS = "memory/status"
# organisation (SPEC §10)
TREE = "memory/tree"
CONTEXT = "memory/context"
CONSOLIDATE = "memory/consolidate"
# the write side (SPEC §8)
REMEMBER = "memory/remember"
UPDATE = "memory/update"
FORGET = "memory/forget"
RESTORE = "memory/restore"
UNDO = "memory/undo"
HISTORY = "memory/history"
LIST = "memory/list"
EXTRACT = "memory/extract"
# the memory tool of a host's agent (SPEC §11)
SEARCH = "memory/search"
# a notification (SPEC §12): what the agent is doing; answered by memory/suggestion
OBSERVE = "memory/observe"
# retrieval v2 and reflection (SPEC §11–12)
EXPLAIN = "memory/explain"
# an agent's force / always / team writes wait for the user (docs/safety.md)
PROPOSALS = "memory/proposals"
CONFIRM = "memory/confirm"
REJECT = "memory/reject"
# a notification per SPEC §12 (with an id it is answered too): not in REQUESTS
FEEDBACK = "memory/feedback"
# Every request above: what a host must send with an id (as a notification it is ignored).
REQUESTS = frozenset(
    {RECALL, STATUS, TREE, CONTEXT, CONSOLIDATE, REMEMBER, UPDATE, FORGET, RESTORE, UNDO,
     HISTORY, LIST, EXTRACT, SEARCH, EXPLAIN, PROPOSALS, CONFIRM, REJECT}
)  # fmt: skip

# server → client notifications
FAST_RESULT = "memory/fastResult"
REFINED_RESULT = "memory/refinedResult"
TELEMETRY = "telemetry/event"
SUGGESTION = "memory/suggestion"

# server → client request (selector kind "client")
SELECT = "memory/select"
# server → client request (protocol v2: hosts advertising capabilities.complete)
COMPLETE = "memory/complete"

# JSON-RPC / LSP error codes used by the daemon
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800
REQUEST_FAILED = -32803
