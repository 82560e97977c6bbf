"""Reading a workspace safely: a bounded walk, size-capped reads, parsers that report.

The walk skips what no project's own manifests live in (dependency folders,
build output, caches, hidden folders other than CI's), examples that show the
code in use (`examples/`) and test data that merely looks like projects
(`fixtures/`, `testdata/`). Every parse goes
through `Workspace.load_*`, which turns a broken file into a `Problem` and
`None`, never an exception.
"""

from __future__ import annotations

import json
import os
import re
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from memory_recall.server.extract.project.facts import Problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

# A manifest is small; a larger file is not one we should read whole.
MAX_FILE_BYTES = 512 * 1024
# How deep below the workspace a component may sit (apps/web/package.json is 2).
MAX_DEPTH = 4
# Entries visited before the walk stops (and says so): a huge tree must not stall init.
MAX_ENTRIES = 50_000

# Folders that hold other people's code, generated output or caches.
SKIPPED_DIRS = frozenset(
    {
        "node_modules",
        "bower_components",
        "jspm_packages",
        "vendor",
        "third_party",
        "third-party",
        "external",
        "target",
        "build",
        "dist",
        "out",
        "bin",
        "obj",
        "coverage",
        "htmlcov",
        "site-packages",
        "venv",
        "env",
        "__pycache__",
        "Pods",
        "DerivedData",
        # Small projects that show the code in use: not where its own commands live.
        "examples",
        "example",
        "samples",
        # Test data shaped like projects (this very repository keeps some).
        "fixtures",
        "__fixtures__",
        "testdata",
        "test-fixtures",
        "test_fixtures",
        "test_data",
    }
)
# Hidden folders are skipped, except where CI configuration lives.
KEPT_HIDDEN_DIRS = frozenset({".github", ".gitlab", ".circleci"})


@dataclass
class Workspace:
    """One workspace folder: its files (walked once) and the problems met reading them."""

    root: Path
    files: list[str] = field(default_factory=list)  # relative POSIX paths
    problems: list[Problem] = field(default_factory=list)
    truncated: bool = False

    @classmethod
    def walk(
        cls, root: str | Path, *, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES
    ) -> Workspace:
        workspace = cls(Path(root))
        workspace.files, workspace.truncated = _walk(workspace.root, max_depth, max_entries)
        return workspace

    # -- where things are -------------------------------------------------------
    # Indexed once per walk: a workspace of 50,000 files is asked about every folder.

    def _index(self) -> tuple[dict[str, set[str]], set[str], set[str]]:
        cached: tuple[dict[str, set[str]], set[str], set[str]] | None = getattr(
            self, "_cache", None
        )
        if cached is None or getattr(self, "_cached_count", -1) != len(self.files):
            by_dir: dict[str, set[str]] = {}
            ancestors: set[str] = set()
            for relative in self.files:
                parent = _parent(relative)
                by_dir.setdefault(parent, set()).add(relative.rsplit("/", 1)[-1])
                while parent != "." and parent not in ancestors:
                    ancestors.add(parent)
                    parent = _parent(parent)
            cached = (by_dir, ancestors, set(self.files))
            object.__setattr__(self, "_cache", cached)
            object.__setattr__(self, "_cached_count", len(self.files))
        return cached

    def dirs(self) -> list[str]:
        """Folders that hold at least one file, root first, then by depth and name."""
        return sorted(self._index()[0], key=lambda d: (d != ".", d.count("/"), d))

    def names_in(self, directory: str) -> set[str]:
        """File names directly in `directory` ("." for the root)."""
        return self._index()[0].get(directory, set())

    def exists(self, relative: str) -> bool:
        return relative in self._index()[2]

    def has_dir(self, relative: str) -> bool:
        """Whether any walked file lies under `relative`."""
        return relative.rstrip("/") in self._index()[1]

    def glob_in(self, directory: str, suffix: str) -> list[str]:
        """Relative paths of files directly in `directory` whose name ends with `suffix`."""
        prefix = "" if directory == "." else directory + "/"
        return sorted(prefix + n for n in self.names_in(directory) if n.endswith(suffix))

    # -- reading ------------------------------------------------------------------

    def read_text(self, relative: str) -> str | None:
        """The file as text, or None (and a problem) when it cannot be read as UTF-8 text."""
        path = self.root / relative
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                self.report(relative, f"larger than {MAX_FILE_BYTES // 1024} KiB; not read")
                return None
            data = path.read_bytes()
        except OSError as exc:
            self.report(relative, f"unreadable: {exc.strerror or type(exc).__name__}")
            return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            self.report(relative, "not UTF-8 text")
            return None

    def load_json(self, relative: str) -> dict[str, Any] | None:
        text = self.read_text(relative)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            self.report(relative, f"malformed JSON: {exc.msg} at line {exc.lineno}")
            return None
        return self._object(relative, data)

    def load_jsonc(self, relative: str) -> dict[str, Any] | None:
        """JSON with comments and trailing commas (tsconfig.json, .eslintrc.json)."""
        text = self.read_text(relative)
        if text is None:
            return None
        try:
            data = json.loads(strip_json_comments(text))
        except json.JSONDecodeError as exc:
            self.report(relative, f"malformed JSON: {exc.msg} at line {exc.lineno}")
            return None
        return self._object(relative, data)

    def load_toml(self, relative: str) -> dict[str, Any] | None:
        text = self.read_text(relative)
        if text is None:
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            self.report(relative, f"malformed TOML: {exc}")
            return None

    def load_yaml(self, relative: str) -> Any:
        """A YAML document as plain data, or None. Only the safe loader: no tags run code."""
        text = self.read_text(relative)
        if text is None:
            return None
        try:
            return yaml.load(text, Loader=_SafeLoader)  # a SafeLoader subclass: no tags run code
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or type(exc).__name__
            self.report(relative, f"malformed YAML: {problem}{where}")
            return None

    def load_xml(self, relative: str) -> ElementTree.Element | None:
        """An XML document's root element; documents declaring entities are refused."""
        text = self.read_text(relative)
        if text is None:
            return None
        # Manifests never need a DTD; refusing one closes the door on entity
        # expansion bombs without another dependency.
        if "<!DOCTYPE" in text or "<!ENTITY" in text:
            self.report(relative, "declares a DTD or entities; not read")
            return None
        try:
            root = ElementTree.fromstring(text)
        except ElementTree.ParseError as exc:
            self.report(relative, f"malformed XML: {exc}")
            return None
        for element in root.iter():  # drop namespaces: pom.xml's tags are read by local name
            if isinstance(element.tag, str) and "}" in element.tag:
                element.tag = element.tag.split("}", 1)[1]
        return root

    def report(self, relative: str, reason: str) -> None:
        self.problems.append(Problem(relative, reason))

    def _object(self, relative: str, data: Any) -> dict[str, Any] | None:
        if not isinstance(data, dict):
            self.report(relative, f"expected an object at the top, got {type(data).__name__}")
            return None
        return data


def _parent(relative: str) -> str:
    return relative.rsplit("/", 1)[0] if "/" in relative else "."


def _walk(root: Path, max_depth: int, max_entries: int) -> tuple[list[str], bool]:
    files: list[str] = []
    seen = 0
    stack: list[tuple[Path, str, int]] = [(root, "", 0)]
    while stack:
        folder, prefix, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        subfolders = []
        for entry in entries:
            seen += 1
            if seen > max_entries:
                return files, True
            relative = prefix + entry.name
            try:
                if entry.is_symlink():
                    continue  # a link may leave the workspace or loop
                if entry.is_dir():
                    if depth < max_depth and _walkable(entry.name):
                        subfolders.append((Path(entry.path), relative + "/", depth + 1))
                elif entry.is_file():
                    files.append(relative)
            except OSError:
                continue
        stack.extend(reversed(subfolders))
    return files, False


def _walkable(name: str) -> bool:
    if name.startswith("."):
        return name in KEPT_HIDDEN_DIRS
    if name.startswith("_"):  # set aside, as Go's tools read it (`_examples`, `_site`)
        return False
    return name not in SKIPPED_DIRS and not name.endswith(".egg-info")


def strip_json_comments(text: str) -> str:
    """JSON text without `//` and `/* */` comments and trailing commas (strings kept intact)."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if char == '"':
                in_string = False
            i += 1
            continue
        if char == '"':
            in_string = True
            out.append(char)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(char)
            i += 1
    cleaned = "".join(out)
    # Trailing commas before a closing bracket or brace.
    result: list[str] = []
    in_string = False
    for index, char in enumerate(cleaned):
        if in_string:
            if char == '"' and not _escaped(cleaned, index):
                in_string = False
        elif char == '"':
            in_string = True
        elif char == ",":
            rest = cleaned[index + 1 :].lstrip()
            if rest[:1] in {"]", "}"}:
                continue
        result.append(char)
    return "".join(result)


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index > 0 and text[index - 1] == "\\":
        backslashes += 1
        index -= 1
    return backslashes % 2 == 1


class _SafeLoader(yaml.SafeLoader):
    """The safe loader, where only `true`/`false` are booleans.

    YAML 1.1 reads `on:` as the boolean True; GitHub's workflows mean the key `on`.
    """


_SafeLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_SafeLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
