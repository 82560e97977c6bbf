"""Memory files on disk: where a write may go, new names, atomic changes, the root lock."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store import files
from memory_recall.server.store.errors import ChangedOnDisk, InvalidWrite, WriteFailed
from memory_recall.server.store.files import (
    MAX_SLUG_CHARS,
    RootLock,
    delete_checked,
    free_name,
    resolve_target,
    slugify,
    write_atomic,
)

from tests.write_helpers import read_only

# -- slugs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Deploy freeze before release", "deploy-freeze-before-release"),
        ("Node.js 22 — required!", "node-js-22-required"),
        ("Préférences de l'équipe", "préférences-de-l-équipe"),
        ("Сертификаты партнёров", "сертификаты-партнёров"),
        ("支付服务的部署流程", "支付服务的部署流程"),
        ("デプロイ手順", "デプロイ手順"),
        ("Ｆｕｌｌ　ｗｉｄｔｈ", "full-width"),
        ("???", "memory"),
    ],
)
def test_slug_keeps_the_letters_of_every_script(title: str, slug: str) -> None:
    assert slugify(title) == slug


@given(st.text(max_size=300))
def test_slug_is_a_safe_file_name_of_at_most_60_characters(title: str) -> None:
    slug = slugify(title)
    assert 1 <= len(slug) <= MAX_SLUG_CHARS
    assert regex.fullmatch(r"[\p{L}\p{M}\p{N}]+(?:-[\p{L}\p{M}\p{N}]+)*|memory", slug), slug
    assert len(f"{slug}.md".encode()) <= 255


def test_long_titles_are_cut_at_a_word() -> None:
    slug = slugify("The staging database connection pool is limited to two hundred connections")
    assert len(slug) <= MAX_SLUG_CHARS
    assert not slug.endswith("-")
    assert "the-staging-database-connection-pool-is-limited-to-two".startswith(slug)


def test_collisions_get_numbers_without_regard_to_case(tmp_path: Path) -> None:
    (tmp_path / "Deploy.md").write_text("x")
    assert free_name(tmp_path, "deploy") == "deploy-2.md"
    (tmp_path / "deploy-2.md").write_text("x")
    assert free_name(tmp_path, "deploy") == "deploy-3.md"
    assert free_name(tmp_path, "memory") == "memory-2.md"  # MEMORY.md on a case-blind disk
    assert free_name(tmp_path / "missing", "x") == "x.md"


# -- where a write may go -----------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    (tmp_path / "mem" / "sub").mkdir(parents=True)
    (tmp_path / "mem" / "a.md").write_text("x")
    (tmp_path / "outside").mkdir()
    return MemoryRoot.of(tmp_path / "mem", "project")


def test_a_path_inside_the_root(root: MemoryRoot) -> None:
    assert resolve_target([root], str(root.path / "a.md")) == (0, "a.md")
    assert resolve_target([root], str(root.path / "sub" / "new.md")) == (0, "sub/new.md")
    assert resolve_target([root], "a.md") == (0, "a.md")  # relative to the root that has it


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("{root}/../outside/x.md", "not inside a memory root"),
        ("{root}/sub/../../outside/x.md", "not inside a memory root"),
        ("../outside/x.md", "not inside a memory root"),
        ("/etc/passwd", "not inside a memory root"),
        ("{root}/MEMORY.md", "index"),
        ("{root}/.archive/a.md", "hidden"),
        ("{root}/.git/config.md", "hidden"),
        ("{root}/notes.txt", "not a memory file"),
        ("{root}", "not inside"),
        ("", "empty path"),
        ("{root}/a\x00.md", "NUL"),
    ],
)
def test_paths_a_write_must_not_touch(root: MemoryRoot, path: str, says: str) -> None:
    with pytest.raises(InvalidWrite) as raised:
        resolve_target([root], path.format(root=root.path))
    assert raised.value.field == "path"
    assert says in raised.value.message


def test_symlinks_leaving_the_root_are_refused(root: MemoryRoot, tmp_path: Path) -> None:
    (root.path / "escape").symlink_to(tmp_path / "outside")
    (root.path / "link.md").symlink_to(root.path / "a.md")
    with pytest.raises(InvalidWrite, match="leaves its root through a symlink"):
        resolve_target([root], str(root.path / "escape" / "x.md"))
    with pytest.raises(InvalidWrite, match="is a symlink"):
        resolve_target([root], str(root.path / "link.md"))


def test_the_archive_is_reachable_when_asked_for(root: MemoryRoot) -> None:
    assert resolve_target([root], str(root.path / ".archive" / "a.md"), archived=True) == (
        0,
        ".archive/a.md",
    )


# -- atomic changes ---------------------------------------------------------------------------------


def _visible(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_write_replaces_atomically_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    write_atomic(target, b"new", expected=b"old", temp=".a.md.1.tmp")
    assert target.read_bytes() == b"new"
    assert _visible(tmp_path) == ["a.md"]


def test_a_file_changed_since_the_decision_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"the user's edit")
    with pytest.raises(ChangedOnDisk, match="changed on disk"):
        write_atomic(target, b"daemon", expected=b"what the daemon read", temp=".a.md.1.tmp")
    assert target.read_bytes() == b"the user's edit"
    assert _visible(tmp_path) == ["a.md"]


def test_a_new_file_never_clobbers_one_made_meanwhile(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"someone else's")
    with pytest.raises(ChangedOnDisk):
        write_atomic(target, b"mine", expected=None, temp=".a.md.1.tmp")
    assert target.read_bytes() == b"someone else's"


def test_disk_full_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(WriteFailed, match=r"disk full.*old file is intact"):
        write_atomic(target, b"new" * 1000, expected=b"old", temp=".a.md.1.tmp")
    assert target.read_bytes() == b"old"
    assert _visible(tmp_path) == ["a.md"]


def test_file_size_limit_keeps_the_old_file(tmp_path: Path) -> None:
    """A real write failure, not a simulated one: the process's file-size limit (EFBIG)."""
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    script = (
        "import resource, sys; from pathlib import Path;"
        "from memory_recall.server.store.files import write_atomic;"
        "from memory_recall.server.store.errors import WriteFailed;"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000));"
        f"t = Path({str(target)!r})\n"
        "try:\n    write_atomic(t, b'x' * 5000, expected=b'old', temp='.a.md.1.tmp')\n"
        "except WriteFailed as e:\n    print(e); sys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    assert "old file is intact" in done.stdout
    assert target.read_bytes() == b"old"
    assert _visible(tmp_path) == ["a.md"]


def test_a_read_only_folder_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "a.md").write_bytes(b"old")
    with read_only(folder), pytest.raises(WriteFailed, match="read-only"):
        write_atomic(folder / "a.md", b"new", expected=b"old", temp=".a.md.1.tmp")
    assert (folder / "a.md").read_bytes() == b"old"


def test_delete_checks_the_content_first(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"edited")
    with pytest.raises(ChangedOnDisk):
        delete_checked(target, expected=b"original")
    assert target.exists()
    delete_checked(target, expected=b"edited")
    assert not target.exists()


# -- the lock --------------------------------------------------------------------------------------

_HOLD = """
import sys, time
from pathlib import Path
from memory_recall.server.store.files import RootLock
lock = RootLock(Path(sys.argv[1]), sys.argv[2])
with lock.held():
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
"""


def test_another_process_holding_the_lock_makes_a_writer_wait(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(tmp_path), "/some/root", "0.6"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        busy = RootLock(tmp_path, "/some/root", timeout_s=0.1)
        with pytest.raises(WriteFailed, match="another memory-recall process"), busy.held():
            pass
        started = time.perf_counter()
        with RootLock(tmp_path, "/some/root", timeout_s=5).held():
            waited = time.perf_counter() - started
        assert waited > 0.1  # it waited for the other process to let go
    finally:
        holder.wait(10)


def test_a_killed_holder_releases_the_lock(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(tmp_path), "/r", "60"], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.wait(10)
    with RootLock(tmp_path, "/r", timeout_s=2).held():
        pass
    assert os.listdir(tmp_path)  # the lock file stays; only the lock went away
