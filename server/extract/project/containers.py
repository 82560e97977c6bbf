"""Dockerfiles and compose files: base images and the services a project runs beside it."""

from __future__ import annotations

from typing import Any

import regex
from memory_recall.server.extract.project.facts import CONVENTION, Component, ProjectReport
from memory_recall.server.extract.project.files import Workspace

COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
_FROM = regex.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", regex.M | regex.I)
_STAGE = regex.compile(r"^\s*FROM\s+.*\s+AS\s+(\S+)", regex.M | regex.I)


def is_dockerfile(name: str) -> bool:
    return (
        name in {"Dockerfile", "Containerfile"}
        or name.startswith("Dockerfile.")
        or name.endswith(".Dockerfile")
    )


def read(ws: Workspace, report: ProjectReport, root: Component | None) -> None:
    for relative in ws.files:
        name = relative.rsplit("/", 1)[-1]
        if is_dockerfile(name):
            _dockerfile(ws, relative, report)
    for name in COMPOSE_FILES:
        if ws.exists(name):
            _compose(ws, name, report, root)
            break


def _dockerfile(ws: Workspace, relative: str, report: ProjectReport) -> None:
    text = ws.read_text(relative)
    if text is None:
        return
    images = _FROM.findall(text)
    if not images:
        ws.report(relative, "no FROM line: not a Dockerfile")
        return
    stages = {s.lower() for s in _STAGE.findall(text)}
    for image in images:
        if image.lower() in stages or image == "scratch" or "$" in image:
            continue
        if image not in report.containers:
            report.containers.append(image)


def _compose(ws: Workspace, name: str, report: ProjectReport, root: Component | None) -> None:
    data = ws.load_yaml(name)
    if data is None:
        return
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict):
        ws.report(name, "no `services:` mapping")
        return
    for service, spec in services.items():
        label = _service_label(str(service), spec)
        if label and label not in report.services:
            report.services.append(label)
    if root is not None:
        root.offer("run", "docker compose up", "docker", CONVENTION, name)


def _service_label(service: str, spec: Any) -> str | None:
    if not isinstance(spec, dict):
        return None
    image = spec.get("image")
    if isinstance(image, str) and image:
        base, _, tag = image.rsplit("/", 1)[-1].partition(":")
        tag = tag if tag and "$" not in tag else ""
        return (
            f"{service} ({base} {tag})".replace(" )", ")")
            if base != service
            else f"{service} {tag}".strip()
        )
    if "build" in spec:
        return f"{service} (built here)"
    return None
