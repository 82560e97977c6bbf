"""What a shell command does: test, lint, format, … and in which ecosystem.

Used on the lines CI runs and on task-runner recipes. A line is cut into
segments at `&&`, `||`, `;` and `|`; `cd DIR` moves the working folder of
the segments after it; environment assignments, `time`, `sudo` and runner
prefixes (`uv run`, `poetry run`, `bundle exec`, `npx`, `python -m`,
`vendor/bin/`, …) are looked through to find the tool, but the segment is
kept exactly as written: that is the command the memory reports.

Script and target names (`test`, `lint`, `fmt`, `type-check`) map to kinds
through `kind_of_name`, shared by every task runner.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import regex
from memory_recall.server.extract.project.facts import ANY_ECOSYSTEM, CommandKind

# Script / target names per kind, best first: `test` beats `check` when both exist.
NAMES: dict[CommandKind, tuple[str, ...]] = {
    "test": ("test", "tests", "check", "spec", "unit", "test:unit", "test-unit", "unit-test"),
    "lint": ("lint", "lint:all", "lint:check", "check-lint", "vet"),
    "format": ("format", "fmt", "format:write", "format-fix", "prettier", "pretty"),
    "typecheck": (
        "typecheck",
        "type-check",
        "typecheck:all",
        "types",
        "check-types",
        "check:types",
        "tsc",
        "mypy",
        "typing",
    ),
    "build": ("build", "compile", "dist"),
    "install": ("setup", "bootstrap", "deps", "install-deps", "dev-setup", "venv", "init"),
    "run": ("dev", "start", "serve", "run"),
}


def kind_of_name(name: str) -> CommandKind | None:
    """The kind a script or target named `name` stands for, if its name says so."""
    lowered = name.lower()
    for kind, names in NAMES.items():
        if lowered in names:
            return kind
    return None


def name_rank(kind: CommandKind, name: str) -> int:
    """Position of `name` among the names of `kind` (lower is better)."""
    names = NAMES[kind]
    lowered = name.lower()
    return names.index(lowered) if lowered in names else len(names)


@dataclass(frozen=True)
class Classified:
    """A segment of a shell line that does something we report."""

    kind: CommandKind
    ecosystem: str
    command: str  # the segment exactly as written (whitespace folded)
    cwd: str | None  # folder the segment runs in, from a preceding `cd`, relative as written
    format_check: bool = False  # a formatter in check mode: its fix is `fix_of(command)`


_SPLIT = regex.compile(r"\s*(?:&&|\|\||;|(?<!\|)\|(?!\|))\s*")
_ENV = regex.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_RUNNERS = (
    ("uv", "run"),
    ("poetry", "run"),
    ("pdm", "run"),
    ("pipenv", "run"),
    ("hatch", "run"),
    ("rye", "run"),
    ("bundle", "exec"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("npm", "exec"),
    ("yarn", "dlx"),
)
_SKIPPED_WORDS = frozenset({"time", "sudo", "exec", "command", "env", "xvfb-run"})
# Options of a runner (`uv run --group dev tox`) that take the next word as their value.
_RUNNER_VALUED = frozenset(
    {"--group", "--only-group", "--no-group", "--extra", "--with", "--with-requirements",
     "--python", "-p", "--package", "--directory", "--project", "--env-file", "--index",
     "--env", "-e", "--only", "--without"}
)  # fmt: skip


def split_segments(line: str) -> list[str]:
    return [s.strip() for s in _SPLIT.split(line) if s.strip()]


def classify_line(line: str) -> list[Classified]:
    """Every segment of `line` that tests, lints, formats, builds, installs, … something."""
    found: list[Classified] = []
    cwd: str | None = None
    for segment in split_segments(line):
        words = _words(segment)
        if not words:
            continue
        if words[0] == "cd" and len(words) >= 2:
            cwd = words[1] if cwd is None else f"{cwd}/{words[1]}"
            continue
        result = classify_words(words)
        if result is not None:
            kind, ecosystem, check = result
            found.append(Classified(kind, ecosystem, " ".join(segment.split()), cwd, check))
    return found


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=False)
    except ValueError:
        return segment.split()


def tool_words(words: list[str]) -> list[str]:
    """The words from the tool on: assignments, `time`, runner prefixes and paths stripped."""
    words = list(words)
    while words and (_ENV.match(words[0]) or words[0] in _SKIPPED_WORDS):
        words.pop(0)
    changed = True
    while changed and words:
        changed = False
        for runner, sub in _RUNNERS:
            if len(words) >= 2 and _base(words[0]) == runner and words[1] == sub:
                words = _past_options(words[2:])
                changed = True
                break
        if words and _base(words[0]) in {"npx", "bunx", "pnpx"}:
            words = [w for w in words[1:] if not w.startswith("--yes")] or words[1:]
            changed = True
        if len(words) >= 3 and _base(words[0]).startswith("python") and words[1] == "-m":
            words = words[2:]
            changed = True
    if words:
        words[0] = _base(words[0])
    return words


def _past_options(words: list[str]) -> list[str]:
    """`words` from the first that is not a runner's option or its value."""
    at = 0
    while at < len(words) and words[at].startswith("-"):
        at += 2 if words[at] in _RUNNER_VALUED else 1
    return words[at:]


def _base(word: str) -> str:
    """`.venv/bin/ruff` → `ruff`; `./gradlew` → `gradlew`; `vendor/bin/phpunit` → `phpunit`."""
    base = word.rsplit("/", 1)[-1]
    return base[:-4] if base.endswith(".exe") or base.endswith(".cmd") else base


def _has(args: list[str], *flags: str) -> bool:
    return any(a == f or a.startswith(f + "=") for a in args for f in flags)


# Folders where a project keeps scripts named for what they do (`scripts/test`,
# `script/bootstrap`): its own entry points, like a Makefile's targets. (Not `bin/`,
# which holds build output as often as scripts: the walk skips it.)
SCRIPT_DIRS = ("scripts", "script")
# What such a script may be written in: a shell (no extension, or a shell's).
SCRIPT_SUFFIXES = ("", ".sh", ".bash")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash"})


def script_kind(path: str) -> CommandKind | None:
    """The kind a project script stands for, by its name, when `path` is one (a shell
    script in one of SCRIPT_DIRS: `scripts/test`, `./script/test.sh`)."""
    parts = path.removeprefix("./").split("/")
    if len(parts) != 2 or parts[0] not in SCRIPT_DIRS:
        return None
    stem, dot, suffix = parts[1].rpartition(".")
    name, suffix = (stem, dot + suffix) if dot else (parts[1], "")
    if suffix not in SCRIPT_SUFFIXES:
        return None
    return kind_of_name(name)


def classify_words(words: list[str]) -> tuple[CommandKind, str, bool] | None:
    """(kind, ecosystem, is a format check) of a command's words, or None."""
    original = words
    words = tool_words(words)
    if not words:
        return None
    # A project script, run as itself or through a shell: it speaks for every ecosystem.
    script = original[1] if _base(original[0]) in _SHELLS and len(original) > 1 else original[0]
    if (kind := script_kind(script)) is not None:
        return kind, ANY_ECOSYSTEM, False
    tool, args = words[0], words[1:]
    first = args[0] if args else ""
    # Python
    if tool in {"pytest", "py.test"} or (tool == "unittest"):
        return "test", "python", False
    if tool.startswith("python") and first == "manage.py" and args[1:2] == ["test"]:
        return "test", "python", False
    if tool in {"tox", "nox"}:
        env = _option_value(args, "-e", "-s", "--session", "--env")
        return (_kind_of_env(env) or "test"), "python", False
    if tool == "ruff":
        if first == "format":
            check = _has(args, "--check", "--diff")
            return ("lint" if check else "format"), "python", check
        return "lint", "python", False
    if tool in {"black", "isort", "autopep8", "yapf"}:
        check = _has(args, "--check", "--check-only", "--diff")
        return ("lint" if check else "format"), "python", check
    if tool in {"flake8", "pylint", "pyflakes", "pycodestyle", "pydocstyle", "bandit"}:
        return "lint", "python", False
    if tool in {"mypy", "pyright", "pytype", "basedpyright"}:
        return "typecheck", "python", False
    if tool == "build" and original[:1] != ["build"]:  # `python -m build`
        return "build", "python", False
    if tool in {"uv", "poetry", "pdm", "hatch", "rye", "pipenv", "flit"}:
        if first == "build":
            return "build", "python", False
        if first in {"sync", "install"} or (tool == "uv" and args[:2] == ["pip", "install"]):
            return "install", "python", False
        if tool == "hatch" and first == "test":
            return "test", "python", False
        return None
    if tool in {"pip", "pip3"} and first == "install":
        return "install", "python", False
    if tool == "pre-commit" and first == "run":
        return "lint", "python", False
    # JavaScript / TypeScript
    if tool in {"npm", "pnpm", "yarn", "bun"}:
        return _classify_js_pm(tool, args)
    if tool in {"jest", "vitest", "mocha", "ava", "jasmine", "karma"}:
        return "test", "javascript", False
    if tool in {"playwright", "cypress"} and first in {"test", "run"}:
        return "test", "javascript", False
    if tool == "eslint":
        return ("format" if _has(args, "--fix") else "lint"), "javascript", False
    if tool == "biome":
        write = _has(args, "--write", "--apply", "--fix")
        if first == "format":
            return ("format" if write else "lint"), "javascript", not write
        if first in {"check", "lint", "ci"}:
            return ("format" if write else "lint"), "javascript", False
        return None
    if tool == "prettier":
        if _has(args, "--check", "-c", "--list-different", "-l"):
            return "lint", "javascript", True
        if _has(args, "--write", "-w"):
            return "format", "javascript", False
        return None
    if tool in {"tsc", "vue-tsc"}:
        if _has(args, "--noEmit") or tool == "vue-tsc":
            return "typecheck", "javascript", False
        return "build", "javascript", False
    if tool in {"vite", "next", "nuxt", "astro", "remix"} and first == "build":
        return "build", "javascript", False
    if tool in {"webpack", "rollup", "esbuild", "tsup"}:
        return "build", "javascript", False
    if tool in {"turbo", "nx"}:
        task = next((a for a in args if not a.startswith("-") and a not in {"run", "run-many"}), "")
        task_kind = kind_of_name(task)
        return (task_kind, "javascript", False) if task_kind else None
    # Rust
    if tool == "cargo":
        if first in {"test", "nextest"}:
            return "test", "rust", False
        if first == "clippy":
            return "lint", "rust", False
        if first == "fmt":
            check = _has(args, "--check")
            return ("lint" if check else "format"), "rust", check
        if first in {"build", "check"}:
            return ("build" if first == "build" else "typecheck"), "rust", False
        return None
    if tool == "rustfmt":
        check = _has(args, "--check")
        return ("lint" if check else "format"), "rust", check
    # Go
    if tool == "go":
        if first == "test":
            return "test", "go", False
        if first == "vet":
            return "lint", "go", False
        if first == "build":
            return "build", "go", False
        if first == "mod" and args[1:2] == ["download"]:
            return "install", "go", False
        return None
    if tool in {"gofmt", "goimports", "gofumpt"}:
        write = _has(args, "-w")
        return ("format" if write else "lint"), "go", not write
    if tool in {"golangci-lint", "staticcheck", "revive"}:
        if tool == "golangci-lint" and first == "fmt":
            return "format", "go", False
        return "lint", "go", False
    if tool == "gotestsum":
        return "test", "go", False
    # JVM
    if tool in {"mvn", "mvnw"}:
        return _classify_goals(args, _MAVEN_GOALS)
    if tool in {"gradle", "gradlew"}:
        return _classify_goals(args, _GRADLE_TASKS)
    if tool in {"ktlint"}:
        return ("format" if _has(args, "-F", "--format") else "lint"), "jvm", False
    # .NET
    if tool == "dotnet":
        if first in {"build", "test", "restore"}:
            dotnet_kind: CommandKind = {"build": "build", "test": "test"}.get(first, "install")  # type: ignore[assignment]
            return dotnet_kind, "dotnet", False
        if first == "format":
            check = _has(args, "--verify-no-changes")
            return ("lint" if check else "format"), "dotnet", check
        return None
    # Ruby
    if tool in {"rspec"}:
        return "test", "ruby", False
    if tool == "rake" and (not args or first in {"test", "spec", "default"}):
        return "test", "ruby", False
    if tool == "rails" and first == "test":
        return "test", "ruby", False
    if tool in {"rubocop", "standardrb"}:
        fix = _has(args, "-a", "-A", "--autocorrect", "--autocorrect-all", "--fix", "-x")
        return ("format" if fix else "lint"), "ruby", False
    if tool == "bundle" and first in {"install", ""}:
        return "install", "ruby", False
    if tool == "gem" and first == "build":
        return "build", "ruby", False
    # PHP
    if tool in {"phpunit", "pest", "paratest"}:
        return "test", "php", False
    if tool == "php" and first == "artisan" and args[1:2] == ["test"]:
        return "test", "php", False
    if tool in {"phpstan", "psalm"}:
        return "typecheck", "php", False
    if tool == "phpcs":
        return "lint", "php", True
    if tool == "phpcbf":
        return "format", "php", False
    if tool == "php-cs-fixer":
        check = _has(args, "--dry-run")
        return ("lint" if check else "format"), "php", check
    if tool == "pint":
        check = _has(args, "--test")
        return ("lint" if check else "format"), "php", check
    if tool == "composer":
        if first == "install":
            return "install", "php", False
        script = args[1] if first in {"run", "run-script"} and len(args) > 1 else first
        kind_of = kind_of_name(script)
        return (kind_of, "php", False) if kind_of else None
    # Task runners: the ecosystem is every ecosystem.
    if tool in {"make", "just", "task"}:
        target = next((a for a in args if not a.startswith("-") and "=" not in a), "")
        kind_of = kind_of_name(target) if target else None
        return (kind_of, ANY_ECOSYSTEM, False) if kind_of else None
    return None


def _option_value(args: list[str], *flags: str) -> str | None:
    for index, arg in enumerate(args):
        for flag in flags:
            if arg == flag and index + 1 < len(args):
                return args[index + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def _kind_of_env(env: str | None) -> CommandKind | None:
    if not env:
        return None
    for part in regex.split(r"[,\-_]", env.lower()):
        if part in {"lint", "flake8", "ruff", "pylint"}:
            return "lint"
        if part in {"format", "fmt", "black"}:
            return "format"
        if part in {"type", "types", "typing", "mypy", "typecheck"}:
            return "typecheck"
        if part in {"docs", "doc"}:
            return None
    return "test"


def _classify_js_pm(tool: str, args: list[str]) -> tuple[CommandKind, str, bool] | None:
    first = args[0] if args else ""
    if first in {"ci", "install", "i"} or (tool in {"yarn"} and not args):
        return "install", "javascript", False
    if tool == "bun" and first == "test":
        return "test", "javascript", False
    if first in {"run", "run-script"} and len(args) > 1:
        script = args[1]
    elif first in {"test", "t"}:
        script = "test"
    elif tool in {"pnpm", "yarn", "bun"} and first and not first.startswith("-"):
        script = first
    else:
        return None
    kind = kind_of_name(script) or kind_of_name(script.split(":")[0])
    return (kind, "javascript", False) if kind else None


_MAVEN_GOALS: dict[str, CommandKind] = {
    "spotless:check": "lint",
    "checkstyle:check": "lint",
    "spotless:apply": "format",
    "test": "test",
    "verify": "test",
    "package": "build",
    "install": "build",
    "compile": "build",
}
_GRADLE_TASKS: dict[str, CommandKind] = {
    "spotlessCheck": "lint",
    "ktlintCheck": "lint",
    "detekt": "lint",
    "lint": "lint",
    "checkstyleMain": "lint",
    "spotlessApply": "format",
    "ktlintFormat": "format",
    "test": "test",
    "check": "test",
    "build": "build",
    "assemble": "build",
}


def _classify_goals(
    args: list[str], goals: dict[str, CommandKind]
) -> tuple[CommandKind, str, bool] | None:
    """The kind of the first goal/task we know, in the order the table ranks them."""
    present = [a.rsplit(":", 1)[-1] if a.startswith(":") else a for a in args]
    for goal, kind in goals.items():
        if goal in present:
            return kind, "jvm", goal in {"spotless:check", "spotlessCheck", "ktlintCheck"}
    return None


# Formatter check → fix: the flag to drop or the word to replace.
_FIXES: tuple[tuple[regex.Pattern[str], str], ...] = (
    (regex.compile(r"\s--(?:check|check-only|diff|list-different)\b"), ""),
    (regex.compile(r"\s--verify-no-changes\b"), ""),
    (regex.compile(r"\s--dry-run\b"), ""),
    (regex.compile(r"\s--test\b"), ""),
    (regex.compile(r"\bspotless:check\b"), "spotless:apply"),
    (regex.compile(r"\bspotlessCheck\b"), "spotlessApply"),
    (regex.compile(r"\bktlintCheck\b"), "ktlintFormat"),
    (regex.compile(r"(?<=\bgof(?:u)?mt|goimports)\s-l\b"), " -w"),
    (regex.compile(r"(?<=\bbiome\s+format\b)"), " --write"),
    (regex.compile(r"\bphpcs\b"), "phpcbf"),
    (regex.compile(r"\s--\s*$"), ""),
)
_GOFMT_TEST = regex.compile(r'^test\s+-z\s+"\$\((gofmt|gofumpt|goimports)\s+-l\s+([^)]*)\)"$')


def fix_of(check_command: str) -> str | None:
    """The formatter's fix command for its check command (`ruff format --check x` → `… x`)."""
    gofmt = _GOFMT_TEST.match(check_command)
    if gofmt:
        return f"{gofmt.group(1)} -w {gofmt.group(2).strip()}".strip()
    words = tool_words(_words(check_command))
    tool = words[0] if words else ""
    fixed = check_command
    if tool == "prettier":
        fixed = regex.sub(r"\s(?:--check|-c|--list-different|-l)\b", " --write", fixed)
    else:
        for pattern, replacement in _FIXES:
            fixed = pattern.sub(replacement, fixed)
    fixed = regex.sub(r"\s--diff\b", "", fixed)
    fixed = " ".join(fixed.split())
    return fixed if fixed and fixed != check_command else None
