"""The protocol's documents: every relative link reaches a file, and every anchor a heading."""

from __future__ import annotations

import re
from pathlib import Path

from protocol import generate

DOCS = sorted(
    [*generate.HERE.glob("*.md"), *generate.HERE.glob("guides/*.md")],
    key=lambda p: str(p),
)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text()
    found = {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}
    return found | set(re.findall(r'<a id="([^"]+)"></a>', text))


def test_the_landing_page_lists_every_guide() -> None:
    landing = (generate.HERE / "README.md").read_text()
    for guide in generate.HERE.glob("guides/*.md"):
        assert f"(guides/{guide.name})" in landing, guide.name
    for name in ("messages.md", "reference.md", "CHANGELOG.md", "RULES.md", "FAIRNESS.md"):
        assert f"({name})" in landing, name


def test_every_relative_link_and_anchor_resolves() -> None:
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if re.match(r"^[a-z]+:", target):
                continue  # another site
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                broken.append(f"{doc.name}: {target}")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{doc.name}: {target} (no such heading)")
    assert broken == []
