"""Small folders made of a labelled corpus (server/dev/small_folders.py), and the gate a
folder of a few memories gets (docs/ranking.md, "Small folders")."""

from __future__ import annotations

from memory_recall.server.dev.evaluation import EvalCase, EvalCorpus
from memory_recall.server.dev.small_folders import folder_name, small_folders
from memory_recall.server.ranking.confidence.calibration import (
    Calibration,
    Model,
    default_calibration,
)
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.service import RecallRequest, lexical_phases

from tests.conftest import make_doc

CORPUS = EvalCorpus(
    tuple(make_doc(f"note {i}", f"topic {i}", path=f"n{i}") for i in range(40)),
    (
        EvalCase("a", "fact", "q1", ("n3", "n31")),
        EvalCase("b", "fact", "q2", ("n7",)),
        EvalCase("none", "abstain", "q3", ()),
    ),
    "notes",
)


def test_each_case_gets_a_folder_of_its_own_with_what_answers_it():
    folders = small_folders(CORPUS, 5)
    assert [f.cases for f in folders] == [(case,) for case in CORPUS.cases]
    for folder in folders:
        paths = [d.path for d in folder.documents]
        assert len(paths) == len(set(paths)) == 5
        assert set(folder.cases[0].relevant_ids) <= set(paths)
        assert paths == sorted(paths, key=lambda p: int(p[1:]))  # corpus order
        assert folder.name == folder_name("notes", 5) == "notes@5"


def test_folders_never_move_and_differ_by_seed_and_size():
    def paths(size: int, seed: int) -> list[list[str]]:
        return [[d.path for d in f.documents] for f in small_folders(CORPUS, size, seed)]

    assert paths(5, 0) == paths(5, 0)
    assert paths(5, 0) != paths(5, 1)
    assert all(len(p) == 10 for p in paths(10, 0))
    assert all(len(p) == 40 for p in paths(60, 0))  # no larger than the corpus


def test_a_folder_of_a_few_memories_has_a_gate_of_its_own():
    flat = Model(0.0, {})
    small = Calibration(flat, flat, 0.1, 0.1)
    gate = Calibration(flat, flat, 0.9, 0.9, small=small, small_up_to=20)
    assert gate.for_folder(5) is small and gate.for_folder(20) is small
    assert gate.for_folder(21) is gate
    assert Calibration.of(gate.as_json()) == gate
    assert Calibration(flat, flat, 0.9, 0.9).for_folder(1).small is None


def test_the_shipped_gate_serves_small_folders_with_their_own_calibration():
    shipped = default_calibration()
    assert shipped.small is not None and shipped.small_up_to >= 10
    assert shipped.small.small is None


FOLDER = [
    make_doc(text, "", text, path=f"/p/{name}.md")
    for name, text in (
        ("staging", "The staging database is db-stg-7.internal on port 5433."),
        ("pnpm", "Our team uses pnpm, not npm, for all JavaScript packages."),
        ("oncall", "Maria is the on-call lead for payments."),
        ("deploy", "Deploys need make check and a note in the release channel."),
        ("build", "The build server is ci-berlin-02, on Ubuntu 22.04."),
    )
]


def test_a_new_users_few_memories_answer_questions_in_their_own_words():
    # Most words of these questions are in none of five memories ("install", "host"):
    # in a folder of hundreds that says the question has no answer, in five it does not.
    spec = RANKERS["bm25f"]
    view = CorpusView.of(FOLDER)
    for question, answer in (
        ("can I use npm install here?", "/p/pnpm.md"),
        ("who is on call for payments tonight?", "/p/oncall.md"),
    ):
        fast, _ = lexical_phases(view, RecallRequest(1, question), spec)
        assert fast is not None and fast.docs[0].path == answer, question
    silent, _ = lexical_phases(view, RecallRequest(2, "what is the capital of Peru?"), spec)
    assert silent is None
