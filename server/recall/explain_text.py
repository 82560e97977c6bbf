"""`memory/explain`'s answer as text (`memory-recall recall --explain`)."""

from __future__ import annotations

from collections import defaultdict

from memory_recall.protocol.messages import ExplainResult


def format_explanation(e: ExplainResult) -> str:
    """Rank, score parts per field and term, silence, network path, staleness, phases."""
    if not e.found:
        return f"{e.path}: {e.summary}"
    lines = [f"{e.relative_path} — {e.title}", f"  {e.summary}"]
    lines.append(f"  query {e.query!r}, ranker {e.ranker}, terms: {' '.join(e.tokens) or '(none)'}")
    rank = (
        f"rank {e.rank} of {e.ranked}" if e.rank is not None else f"not ranked ({e.ranked} ranked)"
    )
    score = f"{e.score:g}" if e.score is not None else "0"
    lines.append(f"  {rank}, score {score}")
    if e.parts:
        by_term: dict[str, list[str]] = defaultdict(list)
        totals: dict[str, float] = defaultdict(float)
        for part in e.parts:
            key = part.term if part.term is not None else f"({part.field})"
            by_term[key].append(f"{part.field} {part.value:g}")
            totals[key] += part.value
        lines.append("  score parts (they sum to the ranker's score):")
        for term, fields in by_term.items():
            lines.append(f"    {term:<24} {totals[term]:>7g}  = {' + '.join(fields)}")
        details = {p.detail for p in e.parts if p.detail}
        if len(details) <= 6:
            for part in e.parts:
                if part.detail:
                    term = part.term or part.field
                    lines.append(f"      {term} / {part.field}: {part.detail}")
    else:
        lines.append("  score parts: none (no query term matches it)")
    if e.silence is not None:
        s = e.silence
        state = "the query was silenced" if s.silenced else "the query was answered"
        lines.append(
            f"  silence: covers {s.coverage:.0%} of the query's content weight "
            f"(one of the best must cover {s.threshold:.0%}); {state}"
            + (f"; {s.detail}" if s.detail else "")
        )
    if e.network is not None:
        lines.append(
            f"  network: activation {e.network.activation:g} from {e.network.seed}: "
            f"{e.network.describe}"
        )
    else:
        lines.append("  network: no lexical hit leads to it")
    lines.append(f"  stale: {e.stale.reason}" if e.stale else "  stale: no")
    if e.noise:
        lines.append("  active-tool noise: yes (removed before ranking)")
    if e.excluded:
        lines.append("  excluded by the recall's excludePaths")
    lines.append(f"  among the model's candidates: {'yes' if e.candidate else 'no'}")
    for phase in e.phases:
        sent = f"sent (#{phase.rank})" if phase.delivered else "not sent"
        lines.append(f"  {phase.phase}: {sent} — {phase.reason}")
    return "\n".join(lines)
