"""The numbers the contract fixes (docs/design.md, docs/ranking.md, docs/recall.md), named once.

Everything in the daemon, the clients and the dev tools imports them from here.
"""

FAST_LIMIT = 2  # the fast phase: what fits a first prompt without crowding it (docs/design.md)
REFINED_LIMIT = 5  # the refined phase and the lexical fallback, model or not (docs/recall.md)
# Body characters scored and sent: memories put the point first (docs/ranking.md).
BODY_WINDOW_CHARS = 1200
HEAD_TOKENS = 32  # distinct query tokens kept from the start of a query (docs/ranking.md)
TAIL_TOKENS = 32  # … and the rolling window of the last ones
MAX_QUERY_TOKENS = HEAD_TOKENS + TAIL_TOKENS
LEXICAL_CANDIDATES = 180  # lexical matches the model always sees (docs/ranking.md)
MAX_CANDIDATES = 200  # the manifest's size: a bounded prompt for the selector (docs/ranking.md)
MAX_QUERY_CHARS = 32_768  # the longest query accepted (protocol/README.md)
# A slow hosted model's worst round trip; past it, fall back (docs/recall.md).
SELECTOR_CEILING_S = 30.0
# A write's text on the wire; the gate's limits are far lower (docs/writing.md).
MAX_WRITE_TEXT_CHARS = 1_000_000
# `recentTools`: tools used lately, each checked against every candidate memory; a
# host sends tens, and more than this would only make a recall slow (issue 21).
MAX_RECENT_TOOLS = 256
MAX_TOOL_NAME_CHARS = 256
# memory/search (docs/network.md): hits per answer by default, and at most; an agent's tool
# result is read by a model, and fifty summaries is already a long one.
SEARCH_DEFAULT_LIMIT = 10
SEARCH_MAX_LIMIT = 50
# memory/list: memories per page, at most and by default. Each listed memory's front matter
# is read from disk: 10,000 in one reply took 5 s and 7.5 MB (issue 33); a page of 500 is a
# quarter second and a few hundred kB.
LIST_PAGE_LIMIT = 500
MAX_CURSOR_CHARS = 8_192  # a memory/list cursor: a path and three numbers
