"""Semantic recall, opt-in (`initializationOptions.embeddings`): vectors from the user's own
OpenAI-compatible `/embeddings` endpoint.

Nothing here is imported unless the channel is configured: the daemon imports this package
only then, and numpy (the one library the vector scan needs) only with it. The parts:
`endpoint` (one HTTP call, its answer validated), `cache` (vectors in the state store by
text hash and model), `vectors` (the matrix one recall scans), `channel` (the background
embedder and the query side), `fill` (how semantic hits join a lexical result).
"""
