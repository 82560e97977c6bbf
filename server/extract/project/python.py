"""Python: pyproject.toml, setup.cfg, setup.py, requirements*.txt, Pipfile, tox, nox, configs."""

from __future__ import annotations

import configparser
from typing import Any

import regex
from memory_recall.server.extract.project.deps import frameworks, pep508_name
from memory_recall.server.extract.project.facts import CONVENTION, SCRIPT, Component
from memory_recall.server.extract.project.files import Workspace

ECOSYSTEM = "python"
MARKERS = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "manage.py"}
)
# Package manager → how its environment runs a tool.
RUN_PREFIX = {"uv": "uv run ", "poetry": "poetry run ", "pdm": "pdm run ", "pipenv": "pipenv run "}
DEV_EXTRAS = ("dev", "test", "tests", "testing")
_NOX_SESSION = regex.compile(r"@nox\.session[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)")


def applies(names: set[str]) -> bool:
    return bool(MARKERS & names) or any(_is_requirements(n) for n in names)


def _is_requirements(name: str) -> bool:
    return name.startswith("requirements") and name.endswith((".txt", ".in"))


class _Seen:
    """What the files of one folder declared, before conventions are applied."""

    def __init__(self) -> None:
        self.deps: set[str] = set()
        self.configs: set[str] = set()  # tool names with a configuration
        self.extras: list[str] = []
        self.build_system = False
        self.mypy_targets = False


def read(ws: Workspace, directory: str, component: Component) -> None:
    names = ws.names_in(directory)
    seen = _Seen()
    prefix = "" if directory == "." else directory + "/"
    component.add_language("Python")
    if "pyproject.toml" in names:
        _pyproject(ws, prefix + "pyproject.toml", component, seen)
    if "setup.cfg" in names:
        _setup_cfg(ws, prefix + "setup.cfg", component, seen)
    if "setup.py" in names:
        component.add_manifest(prefix + "setup.py")
        seen.build_system = True
        component.add_package_manager("pip")
    for name in sorted(n for n in names if _is_requirements(n)):
        _requirements(ws, prefix + name, component, seen)
    for sub in ws.glob_in(prefix + "requirements", ".txt"):
        _requirements(ws, sub, component, seen)
    if "Pipfile" in names:
        data = ws.load_toml(prefix + "Pipfile")
        if data is not None:
            component.add_manifest(prefix + "Pipfile")
            component.add_package_manager("pipenv")
            for table in ("packages", "dev-packages"):
                seen.deps.update(k.lower() for k in (data.get(table) or {}))
            python = (data.get("requires") or {}).get("python_version")
            if isinstance(python, str):
                component.add_language("Python", python)
    _lockfiles(names, component)
    _version_files(ws, prefix, names, component)
    _config_files(ws, prefix, names, component, seen)
    component.frameworks.extend(
        f for f in frameworks(ECOSYSTEM, seen.deps) if f not in component.frameworks
    )
    if "manage.py" in names:
        component.add_framework("Django")
    if not component.package_managers:
        component.add_package_manager("pip")
    _scripts(ws, prefix, names, component)
    _conventions(ws, prefix, names, component, seen)


def _pyproject(ws: Workspace, path: str, component: Component, seen: _Seen) -> None:
    data = ws.load_toml(path)
    if data is None:
        return
    component.add_manifest(path)
    project = _table(data, "project")
    python = project.get("requires-python")
    if isinstance(python, str):
        component.add_language("Python", python)
    seen.deps.update(_names(project.get("dependencies")))
    optional = _table(project, "optional-dependencies")
    for extra, requirements in optional.items():
        seen.extras.append(extra)
        seen.deps.update(_names(requirements))
    for requirements in _table(data, "dependency-groups").values():
        seen.deps.update(_names(requirements))
    build = _table(data, "build-system")
    if build:
        seen.build_system = True
        backend = str(build.get("build-backend", ""))
        if backend.startswith("maturin"):
            component.add_language("Rust")
    tool = _table(data, "tool")
    poetry = _table(tool, "poetry")
    if poetry:
        component.add_package_manager("poetry")
        deps = _table(poetry, "dependencies")
        python_dep = deps.get("python")
        if isinstance(python_dep, str):
            component.add_language("Python", python_dep)
        seen.deps.update(k.lower() for k in deps if k != "python")
        seen.deps.update(k.lower() for k in _table(poetry, "dev-dependencies"))
        for group in _table(poetry, "group").values():
            if isinstance(group, dict):
                seen.deps.update(k.lower() for k in _table(group, "dependencies"))
    if "uv" in tool:
        component.add_package_manager("uv")
    if "pdm" in tool:
        component.add_package_manager("pdm")
    if "hatch" in tool and "envs" in _table(tool, "hatch"):
        component.add_package_manager("hatch")
    for name in ("ruff", "black", "isort", "mypy", "pyright", "pylint", "coverage", "tox"):
        if name in tool:
            seen.configs.add(name)
    if "pytest" in tool:
        seen.configs.add("pytest")
    mypy = _table(tool, "mypy")
    seen.mypy_targets = bool(mypy.get("files") or mypy.get("packages"))
    ruff = _table(tool, "ruff")
    if "format" in ruff:
        seen.configs.add("ruff-format")


def _setup_cfg(ws: Workspace, path: str, component: Component, seen: _Seen) -> None:
    text = ws.read_text(path)
    if text is None:
        return
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        ws.report(path, f"malformed setup.cfg: {type(exc).__name__}")
        return
    component.add_manifest(path)
    if parser.has_section("metadata") or parser.has_section("options"):
        seen.build_system = True
    if parser.has_option("options", "python_requires"):
        component.add_language("Python", parser.get("options", "python_requires").strip())
    if parser.has_option("options", "install_requires"):
        seen.deps.update(_names(parser.get("options", "install_requires").splitlines()))
    if parser.has_section("options.extras_require"):
        for extra, value in parser.items("options.extras_require"):
            seen.extras.append(extra)
            seen.deps.update(_names(value.splitlines()))
    for section, tool in (("flake8", "flake8"), ("mypy", "mypy"), ("tool:pytest", "pytest")):
        if parser.has_section(section):
            seen.configs.add(tool)
    if parser.has_section("isort"):
        seen.configs.add("isort")


def _requirements(ws: Workspace, path: str, component: Component, seen: _Seen) -> None:
    text = ws.read_text(path)
    if text is None:
        return
    component.add_manifest(path)
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        name = pep508_name(line)
        if name:
            seen.deps.add(name)


def _lockfiles(names: set[str], component: Component) -> None:
    for lockfile, manager in (
        ("uv.lock", "uv"),
        ("poetry.lock", "poetry"),
        ("pdm.lock", "pdm"),
        ("Pipfile.lock", "pipenv"),
    ):
        if lockfile in names:
            component.add_package_manager(manager)
    # A lockfile names the manager for sure; move it first.
    for lockfile, manager in (("uv.lock", "uv"), ("poetry.lock", "poetry"), ("pdm.lock", "pdm")):
        if lockfile in names and component.package_managers[0] != manager:
            component.package_managers.remove(manager)
            component.package_managers.insert(0, manager)


def _version_files(ws: Workspace, prefix: str, names: set[str], component: Component) -> None:
    if ".python-version" in names:
        text = ws.read_text(prefix + ".python-version")
        version = text.split()[0] if text and text.split() else None
        if version and not component.languages.get("Python"):
            component.add_language("Python", version)


def _config_files(
    ws: Workspace, prefix: str, names: set[str], component: Component, seen: _Seen
) -> None:
    for name, tool in (
        ("ruff.toml", "ruff"),
        (".ruff.toml", "ruff"),
        (".flake8", "flake8"),
        ("mypy.ini", "mypy"),
        (".mypy.ini", "mypy"),
        ("pytest.ini", "pytest"),
        ("conftest.py", "pytest"),
        ("pyrightconfig.json", "pyright"),
        (".pylintrc", "pylint"),
        ("pylintrc", "pylint"),
        (".isort.cfg", "isort"),
        ("tox.ini", "tox"),
        ("noxfile.py", "nox"),
    ):
        if name in names:
            seen.configs.add(tool)
    if ws.exists(prefix + "tests/conftest.py"):
        seen.configs.add("pytest")
    if "tox.ini" in names:
        text = ws.read_text(prefix + "tox.ini") or ""
        for section, tool in (("[flake8]", "flake8"), ("[pytest]", "pytest"), ("[mypy", "mypy")):
            if section in text:
                seen.configs.add(tool)
    if "mypy.ini" in names or ".mypy.ini" in names:
        text = ws.read_text(prefix + ("mypy.ini" if "mypy.ini" in names else ".mypy.ini")) or ""
        seen.mypy_targets = seen.mypy_targets or bool(
            regex.search(r"^(files|packages)\s*=", text, regex.M)
        )


def _tools(seen: _Seen) -> set[str]:
    """Tools declared by a config or a dependency."""
    declared = set(seen.configs)
    for tool in ("ruff", "black", "isort", "flake8", "pylint", "mypy", "pyright", "pytest"):
        if tool in seen.deps:
            declared.add(tool)
    if "pytest-django" in seen.deps:
        declared.add("pytest")
    return declared


def _scripts(ws: Workspace, prefix: str, names: set[str], component: Component) -> None:
    """tox environments and nox sessions: commands the project named."""
    if "tox.ini" in names:
        text = ws.read_text(prefix + "tox.ini") or ""
        envs = set(regex.findall(r"^\[testenv:([\w\-.]+)\]", text, regex.M))
        component.offer("test", "tox", ECOSYSTEM, SCRIPT, "tox.ini")
        for env in sorted(envs):
            kind = {"lint": "lint", "format": "format", "fmt": "format", "type": "typecheck",
                    "typecheck": "typecheck", "mypy": "typecheck"}.get(env)  # fmt: skip
            if kind:
                component.offer(kind, f"tox -e {env}", ECOSYSTEM, SCRIPT, "tox.ini")  # type: ignore[arg-type]
    if "noxfile.py" in names:
        text = ws.read_text(prefix + "noxfile.py") or ""
        sessions = _NOX_SESSION.findall(text)
        for kind, wanted in (
            ("test", ("tests", "test", "unit")),
            ("lint", ("lint",)),
            ("format", ("format", "fmt")),
            ("typecheck", ("mypy", "typecheck", "types")),
        ):
            match = next((s for s in wanted if s in sessions), None)
            if match:
                component.offer(kind, f"nox -s {match}", ECOSYSTEM, SCRIPT, "noxfile.py")  # type: ignore[arg-type]


def _conventions(
    ws: Workspace, prefix: str, names: set[str], component: Component, seen: _Seen
) -> None:
    manager = component.package_managers[0]
    run = RUN_PREFIX.get(manager, "")
    tools = _tools(seen)
    for tool in sorted(tools):
        component.add_tool(tool)
    manifest = next(
        (n for n in ("pyproject.toml", "setup.cfg", "setup.py", "Pipfile") if n in names), None
    )
    source = prefix + manifest if manifest else f"{prefix}requirements"

    def offer(kind: str, command: str) -> None:
        component.offer(kind, command, ECOSYSTEM, CONVENTION, source)  # type: ignore[arg-type]

    # install
    if manager in {"uv", "poetry", "pdm"}:
        offer(
            "install", {"uv": "uv sync", "poetry": "poetry install", "pdm": "pdm install"}[manager]
        )
    elif manager == "pipenv":
        offer("install", "pipenv install --dev")
    elif seen.build_system:
        extras = [e for e in DEV_EXTRAS if e in seen.extras]
        target = f"'.[{extras[0]}]'" if extras else "."
        offer("install", f"python -m pip install -e {target}")
    else:
        dev = next(
            (n for n in sorted(names) if n in {"requirements-dev.txt", "requirements_dev.txt"}),
            None,
        )
        if dev or "requirements.txt" in names:
            offer("install", f"python -m pip install -r {dev or 'requirements.txt'}")
    # build
    if seen.build_system:
        offer("build", {"uv": "uv build", "poetry": "poetry build", "pdm": "pdm build",
                        "hatch": "hatch build"}.get(manager, "python -m build"))  # fmt: skip
    # test
    if "pytest" in tools:
        offer("test", f"{run}pytest")
    elif "manage.py" in names:
        offer("test", f"{run}python manage.py test")
    elif any(f.rsplit("/", 1)[-1].startswith("test_") for f in ws.files if f.startswith(prefix)):
        offer("test", f"{run}python -m unittest")
    # lint
    if "ruff" in tools:
        offer("lint", f"{run}ruff check .")
    elif "flake8" in tools:
        offer("lint", f"{run}flake8")
    elif "pylint" in tools:
        offer("lint", f"{run}pylint --recursive=y .")
    # format: black is the formatter where both are declared (ruff then lints)
    if "black" in tools:
        offer("format", f"{run}black .")
    elif "ruff" in tools:
        offer("format", f"{run}ruff format .")
    # typecheck
    if "mypy" in tools:
        offer("typecheck", f"{run}mypy" if seen.mypy_targets else f"{run}mypy .")
    elif "pyright" in tools:
        offer("typecheck", f"{run}pyright")
    if "manage.py" in names:
        offer("run", f"{run}python manage.py runserver")


def _table(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _names(requirements: Any) -> set[str]:
    if not isinstance(requirements, list):
        return set()
    return {n for r in requirements if isinstance(r, str) and (n := pep508_name(r))}
