"""The memory network (docs/network.md): memories and rare keywords as nodes, links between them
as weighted edges, and spreading activation from a recall's lexical hits.

- `links`: the explicit links a memory writes (markdown links to memory files,
  `[[Title]]`, front-matter `related` and `supersedes`);
- `keywords`: the rare identifiers and names a memory shares with others;
- `graph`: the network of one set of memories, built from scratch or kept up to
  date per changed memory (plus the co-use edges feedback provides);
- `activation`: spreading activation over at most two hops, with the path that
  reached each memory;
- `join`: how the memories it reaches join a recall's candidates and, under a
  conservative rule, its fast result.

A pure service: it reads memory text, never the catalog, the store or the wire.
"""
