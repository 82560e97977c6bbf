""".NET: *.sln, *.csproj / *.fsproj / *.vbproj, global.json."""

from __future__ import annotations

from memory_recall.server.extract.project.deps import frameworks
from memory_recall.server.extract.project.facts import CONVENTION, Component
from memory_recall.server.extract.project.files import Workspace

ECOSYSTEM = "dotnet"
PROJECT_SUFFIXES = {".csproj": "C#", ".fsproj": "F#", ".vbproj": "Visual Basic"}
TEST_PACKAGES = {
    "microsoft.net.test.sdk",
    "xunit",
    "xunit.v3",
    "nunit",
    "mstest",
    "mstest.testframework",
}


def applies(names: set[str]) -> bool:
    return any(n.endswith((".sln", ".slnx", *PROJECT_SUFFIXES)) for n in names)


def project_files(ws: Workspace, directory: str) -> list[str]:
    prefix = "" if directory == "." else directory + "/"
    return sorted(
        f for f in ws.files if f.startswith(prefix) and f.endswith(tuple(PROJECT_SUFFIXES))
    )


def read(ws: Workspace, directory: str, component: Component) -> None:
    """A folder with a solution reads every project under it; without one, its own projects."""
    prefix = "" if directory == "." else directory + "/"
    names = ws.names_in(directory)
    solutions = sorted(n for n in names if n.endswith((".sln", ".slnx")))
    if solutions:
        projects = project_files(ws, directory)
        for solution in solutions:
            component.add_manifest(prefix + solution)
    else:
        projects = [prefix + n for n in sorted(names) if n.endswith(tuple(PROJECT_SUFFIXES))]
    packages: set[str] = set()
    tests = False
    read_any = False
    for project in projects:
        root = ws.load_xml(project)
        if root is None:
            continue
        if root.tag != "Project":
            ws.report(project, f"not an MSBuild project: the root element is <{root.tag}>")
            continue
        read_any = True
        component.add_manifest(project)
        language = PROJECT_SUFFIXES[next(s for s in PROJECT_SUFFIXES if project.endswith(s))]
        target = None
        for tag in ("TargetFramework", "TargetFrameworks"):
            for element in root.iter(tag):
                if element.text:
                    target = target or element.text.strip().split(";")[0]
        component.add_language(language, target)
        sdk = root.get("Sdk", "")
        if sdk == "Microsoft.NET.Sdk.Web":
            component.add_framework("ASP.NET Core")
        project_packages = {r.get("Include", "") for r in root.iter("PackageReference")}
        packages |= project_packages
        test_flag = any(
            (e.text or "").strip().lower() == "true" for e in root.iter("IsTestProject")
        )
        if test_flag or {p.lower() for p in project_packages} & TEST_PACKAGES:
            tests = True
    if not read_any and not solutions:
        return
    component.add_package_manager("dotnet (NuGet)")
    if "global.json" in names:
        data = ws.load_json(prefix + "global.json") or {}
        sdk_version = (
            (data.get("sdk") or {}).get("version") if isinstance(data.get("sdk"), dict) else None
        )
        if sdk_version:
            component.add_language(".NET SDK", str(sdk_version))
    for label in frameworks(ECOSYSTEM, packages):
        component.add_framework(label)
    source = prefix + (solutions[0] if solutions else projects[0].rsplit("/", 1)[-1])

    def offer(kind: str, command: str) -> None:
        component.offer(kind, command, ECOSYSTEM, CONVENTION, source)  # type: ignore[arg-type]

    offer("install", "dotnet restore")
    offer("build", "dotnet build")
    if tests:
        offer("test", "dotnet test")
    component.add_tool("dotnet format")
    offer("lint", "dotnet format --verify-no-changes")
    offer("format", "dotnet format")
