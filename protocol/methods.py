"""JSON-RPC method names of protocol v1 (protocol/README.md)."""

PROTOCOL_VERSION = 2

# client → server requests
RECALL = "memory/recall"
STATUS = "memory/status"
# organisation (docs/organisation.md)
TREE = "memory/tree"
CONTEXT = "memory/context"
CONSOLIDATE = "memory/consolidate"
# the write side (docs/writing.md)
REMEMBER = "memory/remember"
UPDATE = "memory/update"
FORGET = "memory/forget"
RESTORE = "memory/restore"
UNDO = "memory/undo"
HISTORY = "memory/history"
LIST = "memory/list"
EXTRACT = "memory/extract"
# the memory tool of a host's agent (docs/network.md)
SEARCH = "memory/search"
# a notification (docs/network.md): what the agent is doing; answered by memory/suggestion
OBSERVE = "memory/observe"
# retrieval v2 and reflection (docs/network.md)
EXPLAIN = "memory/explain"
# an agent's force / always / team writes wait for the user (docs/safety.md)
PROPOSALS = "memory/proposals"
CONFIRM = "memory/confirm"
REJECT = "memory/reject"
# a notification per docs/network.md (with an id it is answered too): not in REQUESTS
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
