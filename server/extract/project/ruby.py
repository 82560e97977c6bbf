"""Ruby: Gemfile, gemspec, .ruby-version, Rakefile, RSpec, RuboCop, Rails."""

from __future__ import annotations

import regex
from memory_recall.server.extract.project.deps import frameworks
from memory_recall.server.extract.project.facts import CONVENTION, Component
from memory_recall.server.extract.project.files import Workspace

ECOSYSTEM = "ruby"
_GEM = regex.compile(r"""^\s*gem\s+["']([\w\-.]+)["']""", regex.M)
_GEMSPEC_DEPENDENCY = regex.compile(
    r"add_(?:development_|runtime_)?dependency\s*\(?\s*[\"']([\w\-.]+)"
)
_RUBY = regex.compile(r"""^\s*ruby\s+["']([^"']+)["']""", regex.M)


def applies(names: set[str]) -> bool:
    return "Gemfile" in names or any(n.endswith(".gemspec") for n in names)


def read(ws: Workspace, directory: str, component: Component) -> None:
    prefix = "" if directory == "." else directory + "/"
    names = ws.names_in(directory)
    gems: set[str] = set()
    version = None
    if "Gemfile" in names:
        text = ws.read_text(prefix + "Gemfile")
        if text is None:
            return
        component.add_manifest(prefix + "Gemfile")
        gems.update(_GEM.findall(text))
        match = _RUBY.search(text)
        version = match.group(1) if match else None
    gemspecs = sorted(n for n in names if n.endswith(".gemspec"))
    for gemspec in gemspecs:
        text = ws.read_text(prefix + gemspec) or ""
        component.add_manifest(prefix + gemspec)
        gems.update(
            regex.findall(r"add_(?:development_|runtime_)?dependency\s*\(?\s*[\"']([\w\-.]+)", text)
        )
    if ".ruby-version" in names and not version:
        text = (ws.read_text(prefix + ".ruby-version") or "").strip()
        version = text.split()[0] if text else None
    component.add_language("Ruby", version)
    component.add_package_manager("bundler")
    for label in frameworks(ECOSYSTEM, gems):
        component.add_framework(label)
    source = prefix + ("Gemfile" if "Gemfile" in names else gemspecs[0])
    exe = "bundle exec " if "Gemfile" in names else ""

    def offer(kind: str, command: str) -> None:
        component.offer(kind, command, ECOSYSTEM, CONVENTION, source)  # type: ignore[arg-type]

    if "Gemfile" in names:
        offer("install", "bundle install")
    rails = "rails" in gems and ws.exists(prefix + "bin/rails")
    rspec = (
        "rspec" in gems or "rspec-rails" in gems or ".rspec" in names or ws.has_dir(prefix + "spec")
    )
    if rspec:
        component.add_tool("rspec")
        offer("test", f"{exe}rspec")
    elif rails:
        offer("test", "bin/rails test")
    elif "Rakefile" in names:
        offer("test", f"{exe}rake test")
    if "rubocop" in gems or ".rubocop.yml" in names:
        component.add_tool("rubocop")
        offer("lint", f"{exe}rubocop")
        offer("format", f"{exe}rubocop -a")
    elif "standard" in gems or ".standard.yml" in names:
        component.add_tool("standard")
        offer("lint", f"{exe}standardrb")
        offer("format", f"{exe}standardrb --fix")
    if gemspecs:
        offer("build", f"gem build {gemspecs[0]}")
    if rails:
        offer("run", "bin/rails server")
