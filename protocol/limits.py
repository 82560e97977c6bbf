"""The numbers the contract fixes (SPEC §1, §3–5), named once.

Everything in the daemon, the clients and the dev tools imports them from here.
"""

FAST_LIMIT = 2  # the fast phase: what fits a first prompt without crowding it (SPEC §1)
REFINED_LIMIT = 5  # the refined phase and the lexical fallback, model or not (SPEC §1, §3)
BODY_WINDOW_CHARS = 1200  # body characters scored and sent: memories put the point first (§3)
HEAD_TOKENS = 32  # distinct query tokens kept from the start of a query (SPEC §3)
TAIL_TOKENS = 32  # … and the rolling window of the last ones
MAX_QUERY_TOKENS = HEAD_TOKENS + TAIL_TOKENS
LEXICAL_CANDIDATES = 180  # lexical matches the model always sees (SPEC §3)
MAX_CANDIDATES = 200  # the manifest's size: a bounded prompt for the selector (SPEC §3)
MAX_QUERY_CHARS = 32_768  # the longest query accepted (SPEC §5)
SELECTOR_CEILING_S = 30.0  # a slow hosted model's worst round trip; past it, fall back (§4)
MAX_WRITE_TEXT_CHARS = 1_000_000  # a write's text on the wire; the gate's limits are far lower (§8)
# `recentTools`: tools used lately, each checked against every candidate memory; a
# host sends tens, and more than this would only make a recall slow (issue 21).
MAX_RECENT_TOOLS = 256
MAX_TOOL_NAME_CHARS = 256
# memory/search (SPEC §11): hits per answer by default, and at most; an agent's tool
# result is read by a model, and fifty summaries is already a long one.
SEARCH_DEFAULT_LIMIT = 10
SEARCH_MAX_LIMIT = 50
