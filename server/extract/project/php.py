"""PHP: composer.json (and its scripts), composer.lock, PHPUnit/Pest, PHPStan/Psalm, code style."""

from __future__ import annotations

from typing import Any

from memory_recall.server.extract.project.classify import NAMES
from memory_recall.server.extract.project.deps import frameworks
from memory_recall.server.extract.project.facts import COMMAND_KINDS, CONVENTION, SCRIPT, Component
from memory_recall.server.extract.project.files import Workspace

ECOSYSTEM = "php"


def applies(names: set[str]) -> bool:
    return "composer.json" in names


def read(ws: Workspace, directory: str, component: Component) -> None:
    prefix = "" if directory == "." else directory + "/"
    manifest = ws.load_json(prefix + "composer.json")
    if manifest is None:
        return
    component.add_manifest(prefix + "composer.json")
    names = ws.names_in(directory)
    packages: dict[str, Any] = {}
    for table in ("require", "require-dev"):
        value = manifest.get(table)
        if isinstance(value, dict):
            packages.update(value)
    php = packages.get("php")
    component.add_language("PHP", php if isinstance(php, str) else None)
    component.add_package_manager("composer")
    for label in frameworks(ECOSYSTEM, packages):
        component.add_framework(label)
    source = prefix + "composer.json"
    scripts: dict[str, Any] = (
        manifest["scripts"] if isinstance(manifest.get("scripts"), dict) else {}
    )
    for kind in COMMAND_KINDS:
        name = next((n for n in NAMES[kind] if n in scripts), None)
        if name:
            component.offer(kind, f"composer {name}", ECOSYSTEM, SCRIPT, source + " scripts")

    def offer(kind: str, command: str) -> None:
        component.offer(kind, command, ECOSYSTEM, CONVENTION, source)  # type: ignore[arg-type]

    offer("install", "composer install")
    has = lambda *files: any(f in names for f in files)  # noqa: E731
    if "artisan" in names:
        offer("test", "php artisan test")
    if "pestphp/pest" in packages:
        offer("test", "vendor/bin/pest")
    elif "phpunit/phpunit" in packages or has("phpunit.xml", "phpunit.xml.dist"):
        offer("test", "vendor/bin/phpunit")
    if "phpstan/phpstan" in packages or has("phpstan.neon", "phpstan.neon.dist"):
        component.add_tool("phpstan")
        offer("typecheck", "vendor/bin/phpstan analyse")
    elif "vimeo/psalm" in packages or has("psalm.xml", "psalm.xml.dist"):
        component.add_tool("psalm")
        offer("typecheck", "vendor/bin/psalm")
    if "laravel/pint" in packages or has("pint.json"):
        component.add_tool("pint")
        offer("lint", "vendor/bin/pint --test")
        offer("format", "vendor/bin/pint")
    elif "friendsofphp/php-cs-fixer" in packages or has(
        ".php-cs-fixer.php", ".php-cs-fixer.dist.php"
    ):
        component.add_tool("php-cs-fixer")
        offer("lint", "vendor/bin/php-cs-fixer fix --dry-run --diff")
        offer("format", "vendor/bin/php-cs-fixer fix")
    elif "squizlabs/php_codesniffer" in packages or has(
        "phpcs.xml", "phpcs.xml.dist", ".phpcs.xml"
    ):
        component.add_tool("phpcs")
        offer("lint", "vendor/bin/phpcs")
        offer("format", "vendor/bin/phpcbf")
    if "artisan" in names:
        offer("run", "php artisan serve")
