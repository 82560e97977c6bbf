"""Java / Kotlin: Maven (pom.xml, mvnw) and Gradle (build.gradle[.kts], settings, gradlew)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import regex
from memory_recall.server.extract.project.deps import frameworks
from memory_recall.server.extract.project.facts import CONVENTION, Component
from memory_recall.server.extract.project.files import Workspace

ECOSYSTEM = "jvm"
GRADLE_FILES = ("build.gradle.kts", "build.gradle")
SETTINGS_FILES = ("settings.gradle.kts", "settings.gradle")
_PLUGIN_ID = regex.compile(r"""\bid\s*\(?\s*["']([\w.\-]+)["']""")
_KOTLIN_PLUGIN = regex.compile(r"""\bkotlin\s*\(\s*["']([\w.\-]+)["']\s*\)""")
_APPLY_PLUGIN = regex.compile(r"""apply\s+plugin\s*:\s*["']([\w.\-]+)["']""")
_ALIAS = regex.compile(r"""alias\s*\(\s*libs\.plugins\.([\w.]+)\s*\)""")
_COORDINATE = regex.compile(r"""["']([\w.\-]+):([\w.\-]+)(?::[^"']*)?["']""")
_TOOLCHAIN = regex.compile(
    r"(?:JavaLanguageVersion\.of\(\s*(\d+)\s*\)|jvmToolchain\(\s*(\d+)\s*\)"
    r"|(?:source|target)Compatibility\s*=\s*(?:JavaVersion\.VERSION_)?['\"]?(\d+(?:[._]\d+)?))"
)
_INCLUDE = regex.compile(r"""include\s*\(?\s*((?:["'][^"']+["']\s*,?\s*)+)""")


def applies(names: set[str]) -> bool:
    return "pom.xml" in names or any(n in names for n in GRADLE_FILES)


def read(ws: Workspace, directory: str, component: Component) -> None:
    names = ws.names_in(directory)
    if "pom.xml" in names:
        _maven(ws, directory, component)
    if any(n in names for n in GRADLE_FILES):
        _gradle(ws, directory, component)


def _text(element: ElementTree.Element | None, path: str) -> str | None:
    found = element.find(path) if element is not None else None
    return found.text.strip() if found is not None and found.text else None


def _maven(ws: Workspace, directory: str, component: Component) -> None:
    prefix = "" if directory == "." else directory + "/"
    pom = ws.load_xml(prefix + "pom.xml")
    if pom is None:
        return
    if pom.tag != "project":
        ws.report(prefix + "pom.xml", f"not a Maven POM: the root element is <{pom.tag}>")
        return
    component.add_manifest(prefix + "pom.xml")
    component.add_package_manager("maven")
    properties = pom.find("properties")
    java = None
    for key in ("maven.compiler.release", "java.version", "maven.compiler.source"):
        java = java or _text(properties, key)
    coordinates = {
        f"{_text(d, 'groupId')}:{_text(d, 'artifactId')}" for d in pom.iter("dependency")
    }
    plugins = {_text(p, "artifactId") or "" for p in pom.iter("plugin")}
    parent = pom.find("parent")
    if parent is not None:
        coordinates.add(f"{_text(parent, 'groupId')}:{_text(parent, 'artifactId')}")
    kotlin = "kotlin-maven-plugin" in plugins or ws.has_dir(prefix + "src/main/kotlin")
    if kotlin:
        component.add_language("Kotlin", _text(properties, "kotlin.version"))
    if not kotlin or ws.has_dir(prefix + "src/main/java"):
        component.add_language("Java", java)
    for label in frameworks(ECOSYSTEM, coordinates):
        component.add_framework(label)
    modules = [m.text.strip() for m in pom.iter("module") if m.text]
    component.workspace_members.extend(modules)
    mvn = "./mvnw" if "mvnw" in ws.names_in(directory) else "mvn"
    source = prefix + "pom.xml"

    def offer(kind: str, command: str) -> None:
        component.offer(kind, command, ECOSYSTEM, CONVENTION, source)  # type: ignore[arg-type]

    offer("build", f"{mvn} package")
    offer("test", f"{mvn} test")
    if "spotless-maven-plugin" in plugins:
        component.add_tool("spotless")
        offer("lint", f"{mvn} spotless:check")
        offer("format", f"{mvn} spotless:apply")
    elif "maven-checkstyle-plugin" in plugins:
        component.add_tool("checkstyle")
        offer("lint", f"{mvn} checkstyle:check")
    if any(c.startswith("org.springframework.boot:") for c in coordinates):
        offer("run", f"{mvn} spring-boot:run")


def _gradle(ws: Workspace, directory: str, component: Component) -> None:
    prefix = "" if directory == "." else directory + "/"
    names = ws.names_in(directory)
    build_file = next(n for n in GRADLE_FILES if n in names)
    text = ws.read_text(prefix + build_file)
    if text is None:
        return
    component.add_manifest(prefix + build_file)
    component.add_package_manager("gradle")
    plugins = set(_PLUGIN_ID.findall(text)) | set(_APPLY_PLUGIN.findall(text))
    plugins |= {f"org.jetbrains.kotlin.{p}" for p in _KOTLIN_PLUGIN.findall(text)}
    plugins |= {a.replace(".", "-") for a in _ALIAS.findall(text)}
    catalog = (
        ws.read_text("gradle/libs.versions.toml")
        if ws.exists("gradle/libs.versions.toml")
        else None
    )
    coordinates = {f"{g}:{a}" for g, a in _COORDINATE.findall(text + "\n" + (catalog or ""))}
    for settings in SETTINGS_FILES:
        if settings in names:
            settings_text = ws.read_text(prefix + settings) or ""
            component.add_manifest(prefix + settings)
            for group in _INCLUDE.findall(settings_text):
                for member in regex.findall(r"""["']([^"']+)["']""", group):
                    component.workspace_members.append(member.lstrip(":").replace(":", "/"))
    kotlin = any("kotlin" in p for p in plugins) or ws.has_dir(prefix + "src/main/kotlin")
    toolchain = _TOOLCHAIN.search(text)
    java = next((g for g in toolchain.groups() if g), None) if toolchain else None
    if kotlin:
        component.add_language("Kotlin")
    if not kotlin or ws.has_dir(prefix + "src/main/java") or "java" in plugins:
        component.add_language("Java", java)
    elif java:
        component.add_language("JVM toolchain", java)
    android = any(p.startswith("com.android.") or p.startswith("android-") for p in plugins)
    if android:
        component.add_framework("Android")
    if any("springframework.boot" in p or "spring-boot" in p for p in plugins):
        component.add_framework("Spring Boot")
    for label in frameworks(ECOSYSTEM, coordinates):
        component.add_framework(label)
    gradle = "./gradlew" if "gradlew" in names or ws.exists("gradlew") else "gradle"
    source = prefix + build_file

    def offer(kind: str, command: str) -> None:
        component.offer(kind, command, ECOSYSTEM, CONVENTION, source)  # type: ignore[arg-type]

    offer("build", f"{gradle} build")
    offer("test", f"{gradle} test")
    if any("spotless" in p for p in plugins):
        component.add_tool("spotless")
        offer("lint", f"{gradle} spotlessCheck")
        offer("format", f"{gradle} spotlessApply")
    elif any("ktlint" in p for p in plugins):
        component.add_tool("ktlint")
        offer("lint", f"{gradle} ktlintCheck")
        offer("format", f"{gradle} ktlintFormat")
    elif any("detekt" in p for p in plugins):
        component.add_tool("detekt")
        offer("lint", f"{gradle} detekt")
    elif android:
        offer("lint", f"{gradle} lint")
    elif "checkstyle" in plugins:
        component.add_tool("checkstyle")
        offer("lint", f"{gradle} checkstyleMain")
    if "Spring Boot" in component.frameworks:
        offer("run", f"{gradle} bootRun")
    elif "application" in plugins:
        offer("run", f"{gradle} run")
