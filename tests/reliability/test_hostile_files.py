"""Hostile memory files: each is skipped (or bounded) and reported, never a crash.

The files are made at test time in temporary directories. `memory/status`
must list every file that is not a memory with a reason a user can act on,
and the valid siblings must keep being served, both from the initial scan and
when the files appear while the root is watched.

An unreadable file (mode 000) is unreadable only without root's
CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH. Tests here run as root, so that case
runs the daemon under `setpriv --bounding-set=-dac_override,-dac_read_search`:
still root, but bound by file modes like any user. Without setpriv, the
assertion is skipped and says so.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.documents import MAX_FILE_BYTES
from memory_recall.server.roots import MemoryRoot

from tests.memory_files import write_memory
from tests.reliability.harness import (
    MODE_BOUND,
    WAIT,
    RecordingClient,
    completion,
    error_lines,
    start_daemon,
    status_until,
)

HUGE_BYTES = 50 * 1024 * 1024
UNREADABLE_HOW = (
    "unreadable file and directory not checked (root without setpriv)"
    if MODE_BOUND is None
    else "unreadable file and directory checked as root without CAP_DAC_*"
    if MODE_BOUND
    else "unreadable file and directory checked"
)


def make_hostile_root(root: Path, outside: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Build the fixture set. Returns ({name: title} served, {name: reason keyword} skipped)."""
    served: dict[str, str] = {}
    skipped: dict[str, str] = {}

    def raw(name: str, data: bytes) -> Path:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    write_memory(root, "good.md", "sibling alpha", "a valid neighbour", "Alpha body.")
    served["good.md"] = "sibling alpha"
    write_memory(root, "nested/deep/good.md", "sibling beta", "nested valid neighbour")
    served["nested/deep/good.md"] = "sibling beta"

    raw("binary.md", b"---\nname: binary\ntype: project\n---\n\x00\x01\x02\xff" * 10)
    skipped["binary.md"] = "binary"
    raw("latin1.md", b"---\nname: caf\xe9 latin one\ntype: project\n---\nna\xefve\n")
    skipped["latin1.md"] = "UTF-8"
    raw("bom.md", "\ufeff---\nname: bom marked\ntype: project\n---\nBOM body.\n".encode())
    served["bom.md"] = "bom marked"
    raw("crlf.md", b"---\r\nname: crlf windows\r\ntype: user\r\n---\r\nCRLF body.\r\n")
    served["crlf.md"] = "crlf windows"
    raw("empty.md", b"")
    skipped["empty.md"] = "no front matter"
    raw("front-only.md", b"---\nname: front only\ntype: reference\n---\n")
    served["front-only.md"] = "front only"  # a memory with an empty body
    raw("no-type.md", b"---\n---\n")
    skipped["no-type.md"] = "no 'type'"
    raw("unterminated.md", b"---\nname: unterminated\ntype: project\nbody without end\n")
    skipped["unterminated.md"] = "unterminated"
    raw("unknown-type.md", b"---\nname: banana\ntype: banana\n---\nbody\n")
    skipped["unknown-type.md"] = "unknown type"
    with (root / "huge.md").open("wb") as f:  # a valid memory, were it read: "gigantic"
        f.write(b"---\nname: gigantic\ntype: project\n---\n")
        f.truncate(HUGE_BYTES)  # sparse: fast to make, as costly to read as any
    skipped["huge.md"] = "larger than"

    os.mkfifo(root / "pipe.md")  # opening it would block the scan forever
    skipped["pipe.md"] = "not a regular file"

    (root / "folder.md").mkdir()  # a directory named like a memory is a directory
    write_memory(root, "folder.md/inside.md", "sibling gamma", "inside a dir named .md")
    served["folder.md/inside.md"] = "sibling gamma"

    os.symlink("loop-b.md", root / "loop-a.md")
    os.symlink("loop-a.md", root / "loop-b.md")
    skipped["loop-a.md"] = skipped["loop-b.md"] = "symbolic links"
    os.symlink(".", root / "nested" / "again")  # a directory loop: walked once
    os.symlink("nested", root / "alias-dir")  # an alias sorted before its target: not walked
    os.symlink("does-not-exist.md", root / "dangling.md")
    skipped["dangling.md"] = "broken symlink"

    outside.mkdir(parents=True, exist_ok=True)
    write_memory(outside, "secret.md", "outside secret", "must not leak in")
    write_memory(outside, "dir/also.md", "outside dir secret", "must not leak in either")
    os.symlink(outside / "secret.md", root / "escape.md")
    skipped["escape.md"] = "outside the root"
    os.symlink(outside / "dir", root / "escape-dir")
    skipped["escape-dir"] = "outside the root"
    os.symlink(root / "good.md", root / "alias.md")  # inside the root: fine
    served["alias.md"] = "sibling alpha"
    return served, skipped


async def recall_titles(client: RecordingClient, query: str) -> list[str]:
    handle = await client.recall(query, initial_wait_ms=0)
    result = await asyncio.wait_for(handle.response, WAIT)
    assert result.refined is not None
    return [d.title for d in result.refined.docs]


def _skipped_map(status: Any, root: Path) -> dict[str, str]:
    return {os.path.relpath(s.path, root): s.reason for s in status.skipped}


async def test_hostile_files_are_skipped_with_reasons_and_siblings_served(
    tmp_path: Path, figures: dict[str, str]
) -> None:
    root, outside = tmp_path / "memory", tmp_path / "outside"
    served, skipped = make_hostile_root(root, outside)
    unreadable = root / "unreadable.md"
    write_memory(root, "unreadable.md", "locked away", "mode 000")
    unreadable.chmod(0)
    locked_dir = root / "locked"
    write_memory(locked_dir, "x.md", "locked dir memory")
    locked_dir.chmod(0)
    if MODE_BOUND is not None:
        skipped["unreadable.md"] = skipped["locked"] = "permission denied"

    started = time.perf_counter()
    client = await start_daemon(tmp_path, [(root, "project")], prefix=MODE_BOUND or [])
    try:
        status = await status_until(client, lambda s: s.ready, what="index ready")
        scan_s = time.perf_counter() - started
        reasons = _skipped_map(status, root)
        for name, keyword in skipped.items():
            assert name in reasons, f"{name} not reported as skipped: {reasons}"
            assert keyword.lower() in reasons[name].lower(), (name, reasons[name])
        unexpected = set(reasons) - set(skipped) - {"unreadable.md", "locked"}
        assert not unexpected, f"skipped without being hostile: {unexpected}"
        assert status.documents == len(served), status
        for name, title in served.items():
            assert title in await recall_titles(client, title), f"{name} is not served"
        assert not await recall_titles(client, "outside secret gigantic")
        beta = await client.recall("sibling beta", initial_wait_ms=0)
        paths = [d.path for d in (await asyncio.wait_for(beta.response, WAIT)).refined.docs]
        assert paths[0] == str(root / "nested" / "deep" / "good.md"), paths  # its real place
        # The 50 MB file was never read whole: everything the daemon ever read is far less.
        read_chars = int(
            Path(f"/proc/{client.process.pid}/io").read_text().split("rchar:")[1].split()[0]
        )
        assert read_chars < HUGE_BYTES // 2, read_chars
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        await client.close()
        unreadable.chmod(0o644)
        locked_dir.chmod(0o755)
    figures["hostile files (scan)"] = (
        f"{len(skipped)} hostile entries skipped with a reason, {len(served)} valid siblings "
        f"served, daemon ready in {scan_s:.2f} s with a {HUGE_BYTES >> 20} MB file present "
        f"(limit {MAX_FILE_BYTES >> 10} KiB; the daemon read {read_chars >> 20} MB in total)"
        f"; {UNREADABLE_HOW} "
        "(reproduce: .venv/bin/pytest tests/reliability/test_hostile_files.py)"
    )
    if MODE_BOUND is None:
        pytest.skip(
            "running as root without setpriv: root reads a mode-000 file, so the "
            "unreadable-file case could not be checked (everything else passed)"
        )


async def test_symlinks_leaving_the_root_are_followed_only_when_allowed(tmp_path: Path) -> None:
    root, outside = tmp_path / "memory", tmp_path / "outside"
    make_hostile_root(root, outside)
    options = {"roots": [{"path": str(root), "scope": "project", "followSymlinks": True}]}
    client = await start_daemon(tmp_path, None, initialization_options=options)
    try:
        status = await status_until(client, lambda s: s.ready, what="index ready")
        reasons = _skipped_map(status, root)
        assert "escape.md" not in reasons and "escape-dir" not in reasons, reasons
        assert "outside secret" in await recall_titles(client, "outside secret")
        assert "outside dir secret" in await recall_titles(client, "outside dir secret")
        paths = {d.path for d in (await client.status()).skipped}
        assert str(root / "loop-a.md") in paths  # following links does not follow loops
    finally:
        await client.close()


async def test_hostile_files_appearing_while_watched(
    tmp_path: Path, figures: dict[str, str]
) -> None:
    root, outside = tmp_path / "memory", tmp_path / "outside"
    root.mkdir()
    write_memory(root, "anchor.md", "anchor memory", "present from the start")
    client = await start_daemon(tmp_path, [(root, "project")])
    try:
        await status_until(client, lambda s: s.ready and s.watcher.state == "watching")
        served, skipped = make_hostile_root(root, outside)
        served["anchor.md"] = "anchor memory"

        def settled(status: Any) -> bool:
            reasons = _skipped_map(status, root)
            return status.documents == len(served) and all(
                name in reasons and key.lower() in reasons[name].lower()
                for name, key in skipped.items()
            )

        await status_until(client, settled, what="hostile files reported")
        for title in served.values():
            assert title in await recall_titles(client, title)

        # Fixing a file serves it; deleting hostile files clears their reports.
        write_memory(root, "unknown-type.md", "banana fixed", "now a project memory")
        for name in ("binary.md", "huge.md", "empty.md"):
            (root / name).unlink()
        await status_until(
            client,
            lambda s: (
                not {"binary.md", "huge.md", "empty.md", "unknown-type.md"}
                & set(_skipped_map(s, root))
                and s.documents == len(served) + 1
            ),
            what="fixed and deleted files reconciled",
        )
        assert "banana fixed" in await recall_titles(client, "banana fixed")
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        await client.close()
    figures["hostile files (watched)"] = (
        f"{len(skipped)} hostile entries (the scan's set but the unreadable ones) created under "
        "a watched root: all reported, "
        "valid siblings served; fixing or deleting them reconciles "
        "(reproduce: .venv/bin/pytest tests/reliability/test_hostile_files.py)"
    )


def test_file_deleted_between_listing_and_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk lists a file and it is deleted before the catalog reads it.

    The race is made certain by deleting each doomed file right after the walk
    yields it (in process: a daemon cannot be paused at that instruction).
    """
    root = tmp_path / "memory"
    write_memory(root, "stays.md", "stays here")
    doomed = {write_memory(root, f"doomed-{i}.md", f"deleted mid scan {i}") for i in range(3)}
    real_walk = MemoryCatalog._walk_entries

    def walk_then_delete(self: MemoryCatalog, *args: Any) -> Any:
        for entry in real_walk(self, *args):
            if Path(entry.path) in doomed:
                os.unlink(entry.path)
            yield entry

    monkeypatch.setattr(MemoryCatalog, "_walk_entries", walk_then_delete)
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    assert [d.title for d in catalog.snapshot().documents] == ["stays here"]
    assert catalog.skipped == []  # gone is not hostile: nothing to report
    for path in doomed:  # and the watcher's later event for it changes nothing
        catalog.refresh(path)
    assert len(catalog) == 1 and catalog.skipped == []


async def test_files_churning_while_watched_end_consistent(
    tmp_path: Path, figures: dict[str, str]
) -> None:
    """Files created, rewritten and deleted as fast as possible during a scan and recalls."""
    root = tmp_path / "memory"
    root.mkdir()
    for i in range(200):
        write_memory(root, f"seed-{i}.md", f"seed {i}", "churn seed")
    stop = asyncio.Event()
    operations = 0

    async def churn() -> None:
        nonlocal operations
        i = 0
        while not stop.is_set():
            name = root / f"churn-{i % 50}.md"
            if name.exists():
                name.unlink()
            else:
                write_memory(root, name.name, f"churn {i}", "churning")
            seed = root / f"seed-{i % 200}.md"
            seed.unlink(missing_ok=True) if i % 3 == 0 else write_memory(
                root, seed.name, f"seed {i % 200}", f"rewritten {i}"
            )
            operations += 2
            i += 1
            if i % 20 == 0:
                await asyncio.sleep(0)

    churner = asyncio.ensure_future(churn())
    client = await start_daemon(tmp_path, [(root, "project")])
    try:
        for _ in range(30):
            await recall_titles(client, "churn seed rewritten")
            await asyncio.sleep(0.01)
        stop.set()
        await churner
        on_disk = len(list(root.glob("*.md")))
        await status_until(
            client,
            lambda s: s.ready and s.documents == on_disk and not s.skipped,
            what=f"catalog equal to the {on_disk} files on disk",
        )
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        stop.set()
        await client.close()
    figures["file churn"] = (
        f"{operations} create/rewrite/delete operations during the initial scan and 30 "
        "recalls: catalog converged to exactly the files on disk, no error "
        "(reproduce: .venv/bin/pytest tests/reliability/test_hostile_files.py)"
    )


# -- issue 21: files other tools write, names that break lines, fields that never end ---------


YAML_FILES = {
    # A YAML tool folded a long description onto continuation lines.
    "folded.md": (
        "---\nname: Folded by a tool\ndescription: The release train leaves every second\n"
        "  Tuesday at noon, and the branch is cut the evening before\ntype: project\n---\nBody.\n",
        "The release train leaves every second Tuesday at noon, and the branch is cut the "
        "evening before",
    ),
    # Quoted multi-line strings, a block scalar and lists.
    "quoted.md": (
        '---\nname: "Quoted: with a colon"\ndescription: "first line\n  second line"\n'
        "type: feedback\ntags:\n  - ci\n  - release\n---\nBody.\n",
        "first line second line",
    ),
    "block.md": (
        "---\nname: Block scalar\ndescription: >\n  a folded block\n  over two lines\n"
        "related: [a.md, b.md]\ntype: reference\n---\nBody.\n",
        "a folded block over two lines",
    ),
    # Claude-Code style, which is not YAML (a colon in a plain value): line by line, as ever.
    "claude.md": (
        "---\nname: Claude style\ndescription: Deploy rule: never on Friday, see issue #12\n"
        "type: project\n---\nBody.\n",
        "Deploy rule: never on Friday, see issue #12",
    ),
}


async def test_front_matter_written_as_yaml_reads_fully(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    for name, (text, _) in YAML_FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    client = await start_daemon(tmp_path, [(root, "project")])
    try:
        status = await status_until(client, lambda s: s.ready)
        assert status.documents == len(YAML_FILES) and not status.skipped, status
        for name, (_, description) in YAML_FILES.items():
            handle = await client.recall(description, initial_wait_ms=0)
            docs = (await asyncio.wait_for(handle.response, WAIT)).refined.docs
            by_path = {d.path: d for d in docs}
            assert str(root / name) in by_path, (name, [d.path for d in docs])
            assert by_path[str(root / name)].description == description
    finally:
        await client.close()


async def test_a_newline_in_a_file_name_and_a_1_mb_name_keep_the_prompt_whole(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    write_memory(root, "line\nbreak.md", "deploy split name", "a newline in the file name")
    huge_title = "deploy " + "x" * 1_000_000  # a 1 MB `name:`, within the file limit
    (root / "huge-name.md").write_text(
        f"---\nname: {huge_title}\ndescription: {'y' * 40_000}\ntype: project\n---\nbody\n"
    )
    client = await start_daemon(tmp_path, [(root, "project")])
    try:
        await status_until(client, lambda s: s.ready and s.documents == 2)
        handle = await client.recall("deploy split name", initial_wait_ms=0)
        refined = (await asyncio.wait_for(handle.response, WAIT)).refined
        assert len(refined.docs) == 2
        headings = [line for line in refined.prompt.splitlines() if line.startswith("### ")]
        assert len(headings) == 2, refined.prompt[:500]
        assert any("line break.md" in h for h in headings), headings
        assert len(refined.prompt) < 8000, len(refined.prompt)  # not a 2 MB prompt
    finally:
        await client.close()


async def test_one_huge_description_never_empties_the_model_manifest(
    tmp_path: Path, fake_model: Any
) -> None:
    """The first candidate's description is 30 KB: the model still sees every candidate."""
    root = tmp_path / "memory"
    write_memory(root, "first.md", "deploy first", "deploy " * 5000)
    for i in range(10):
        write_memory(root, f"n{i}.md", f"deploy note {i}", f"how we deploy, part {i}")
    manifests: list[str] = []

    def answer(_h: dict[str, str], payload: dict[str, Any]) -> tuple[int, bytes]:
        user = payload["messages"][-1]["content"]
        manifests.append(user.split("<manifest>\n", 1)[1].split("\n</manifest>", 1)[0])
        first = manifests[-1].splitlines()[0].split()[2]
        return 200, completion(json.dumps({"selected_memories": [first]}))

    model = fake_model(answer)
    client = await start_daemon(
        tmp_path, [(root, "project")], selector={"kind": "http", "url": model.url}
    )
    try:
        await status_until(client, lambda s: s.ready)
        handle = await client.recall("deploy", initial_wait_ms=0)
        result = await asyncio.wait_for(handle.response, WAIT)
        assert len(manifests[0].splitlines()) == 11, manifests[0][:300]
        assert result.refined.strategy == "model" and result.refined.failure is None
    finally:
        await client.close()
