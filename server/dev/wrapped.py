"""Questions as people type them to a coding agent: each labelled question with an
instruction around it ("… Look at the files first, then answer."), for
`memory-recall dev eval --agent-wrapped`.

The corpora's questions are written as questions; a prompt to an agent often carries
instructions too, whose words are in no memory or match one by chance. Evaluated
wrapped, the fast phase's figures say how much of its precision and silence survives
them (docs/ranking.md, "A prompt's sentences").
"""

from __future__ import annotations

from dataclasses import replace

from memory_recall.server.dev.evaluation import EvalCorpus

# Each around every question: before it or after it, on the same line or the next, in
# English and in two unspaced scripts. The first is the real agents' tier prompt's.
INSTRUCTIONS = (
    "{q} Look at the files first, then answer.",
    "{q} Please check the code before changing anything.",
    "{q} Keep the answer short.",
    "Don't edit anything yet, just explain. {q}",
    "{q}\nThink step by step and show me the diff.",
    "{q} 先看一下代码再回答。",
    "{q} まずファイルを確認してから答えて。",
)


def agent_wrapped(corpus: EvalCorpus) -> EvalCorpus:
    """The corpus with every case asked once per instruction (same ids: same splits)."""
    cases = tuple(
        replace(case, query=template.format(q=case.query))
        for case in corpus.cases
        for template in INSTRUCTIONS
    )
    return replace(corpus, cases=cases)
