"""The sample browser client's files, served at ``/`` on the game port, as few and as cached
as can be.

Only regular files inside the client directory with a known type are served;
anything else, including every attempt to climb out of the directory, is 404.

A page load is ``PAGE_FILES`` requests, not one per module: ``/bundle.js`` is
``app.js`` with every module it imports, each in a function of its own
(``bundle``: the client's modules import and export by name, at the top level,
which is all it takes), and the page served at ``/`` refers to the bundle and
the stylesheet under names that change with their content (``?v=`` and a
hash), cached for a year (``immutable``). Every answer carries an ``ETag``, and
everything else is revalidated (``no-cache``): a reload costs one request,
answered ``304 Not Modified``. Files are read again when they change on disk
(their size and time are looked at on every request), so editing the client
needs no restart. The client's modules are still served one by one too (its
tests import them).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs, unquote

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
}

# The client needs nothing from elsewhere: scripts, styles and the WebSocket
# all come from this origin, so an injected tag has nowhere to load from.
SECURITY_HEADERS = (
    (
        "Content-Security-Policy",
        "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; "
        "style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
)

ENTRY = "app.js"
"""The client's entry module: ``/bundle.js`` is it and every module it imports."""
BUNDLE = "bundle.js"
STYLESHEET = "style.css"
PAGE_FILES = 3
"""Requests of a first page load of the sample client: the page, the bundle, the stylesheet."""
REVALIDATE = "no-cache"
FOREVER = "public, max-age=31536000, immutable"


def default_client_dir() -> Path:
    """The repository's ``clients/sample_js`` next to the ``server`` package."""
    return Path(__file__).resolve().parents[2] / "clients" / "sample_js"


@dataclass(frozen=True, slots=True)
class Answer:
    status: HTTPStatus
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class _Built:
    """A file (or the bundle, or the page) as served, with what it was made from."""

    body: bytes
    etag: str
    stamp: tuple[tuple[str, int, int], ...]
    """(path, size, mtime) of every file it was made from: made again when one changes."""


class StaticFiles:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._built: dict[str, _Built] = {}

    def find(self, raw_path: str, query: str = "", if_none_match: str | None = None) -> Answer:
        """The answer to a GET of ``raw_path`` (and its ``query``), given the client's
        ``If-None-Match``."""
        path = unquote(raw_path)
        if path in ("", "/"):
            path = "/index.html"
        if "\\" in path or "\x00" in path or "/." in path or not path.startswith("/"):
            return _not_found()
        name = path.lstrip("/")
        content_type = CONTENT_TYPES.get(Path(name).suffix.lower())
        if content_type is None:
            return _not_found()
        try:
            if name == BUNDLE:
                built = self._bundle()
            elif name == "index.html":
                built = self._page()
            else:
                built = self._file(name)
        except (OSError, BundleError):
            return _not_found()
        if built is None:
            return _not_found()
        # Asked for under the name that carries its hash: it never changes.
        versions = parse_qs(query).get("v", [])
        cache = FOREVER if versions == [built.etag.strip('"')] else REVALIDATE
        headers = (("ETag", built.etag), ("Cache-Control", cache))
        if if_none_match is not None and _matches(if_none_match, built.etag):
            return Answer(HTTPStatus.NOT_MODIFIED, b"", content_type, headers)
        return Answer(HTTPStatus.OK, built.body, content_type, headers)

    # -- what is served ----------------------------------------------------------

    def _candidate(self, name: str) -> Path | None:
        candidate = (self.root / name).resolve()
        if not candidate.is_relative_to(self.root) or not candidate.is_file():
            return None
        return candidate

    def _stamp(self, paths: Iterable[Path]) -> tuple[tuple[str, int, int], ...]:
        stamp = []
        for path in paths:
            info = path.stat()
            stamp.append((str(path), info.st_size, info.st_mtime_ns))
        return tuple(stamp)

    def _fresh(self, key: str) -> _Built | None:
        built = self._built.get(key)
        if built is None:
            return None
        try:
            unchanged = self._stamp(Path(p) for p, _, _ in built.stamp) == built.stamp
        except OSError:
            unchanged = False
        return built if unchanged else None

    def _keep(self, key: str, body: bytes, sources: list[Path]) -> _Built:
        stamp = self._stamp(sources)
        built = _Built(body, f'"{hashlib.sha256(body).hexdigest()[:20]}"', stamp)
        self._built[key] = built
        return built

    def _file(self, name: str) -> _Built | None:
        candidate = self._candidate(name)
        if candidate is None:
            return None
        key = str(candidate)
        built = self._fresh(key)
        if built is None:
            built = self._keep(key, candidate.read_bytes(), [candidate])
        return built

    def _bundle(self) -> _Built | None:
        built = self._fresh(BUNDLE)
        if built is None:
            entry = self._candidate(ENTRY)
            if entry is None:
                return None
            text, sources = bundle(entry, self.root)
            built = self._keep(BUNDLE, text.encode(), sources)
        return built

    def _page(self) -> _Built | None:
        """``index.html``, its script the bundle and its stylesheet, each under its hash."""
        page = self._candidate("index.html")
        if page is None:
            return None
        built = self._fresh("index.html")
        if built is not None:
            return built
        html = page.read_text()
        sources = [page]
        script = self._bundle() if self._candidate(ENTRY) is not None else None
        if script is not None:
            html = html.replace(f'src="{ENTRY}"', f'src="{BUNDLE}?v={script.etag.strip(chr(34))}"')
            sources += [Path(p) for p, _, _ in script.stamp]
        style = self._file(STYLESHEET)
        if style is not None:
            html = html.replace(
                f'href="{STYLESHEET}"', f'href="{STYLESHEET}?v={style.etag.strip(chr(34))}"'
            )
            sources += [Path(p) for p, _, _ in style.stamp]
        return self._keep("index.html", html.encode(), sources)


def _matches(if_none_match: str, etag: str) -> bool:
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == etag:
            return True
    return False


def _not_found() -> Answer:
    return Answer(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")


# -- the bundle ----------------------------------------------------------------------

_IMPORT = re.compile(
    r"^import\s+(?:\{(?P<names>[^}]*)\}|\*\s+as\s+(?P<namespace>[A-Za-z_$][\w$]*))"
    r'\s+from\s+"(?P<source>[^"]+)";[ \t]*$',
    re.MULTILINE,
)
_EXPORT = re.compile(
    r"^export\s+(?P<kind>(?:async\s+)?function\*?|const|let|var|class)\s+"
    r"(?P<name>[A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_REEXPORT = re.compile(
    r'^export\s*\{(?P<names>[^}]*)\}\s*from\s+"(?P<source>[^"]+)";[ \t]*$', re.MULTILINE
)
_EXPORT_LIST = re.compile(r"^export\s*\{(?P<names>[^}]*)\};[ \t]*$", re.MULTILINE)
_LEFT = re.compile(r"^(?:import|export)\b", re.MULTILINE)


def _names(listed: str) -> list[tuple[str, str]]:
    """``a, b as c`` (an import's or export's braces): (name there, name here) pairs."""
    pairs = []
    for item in listed.split(","):
        item = item.strip()
        if item:
            original, _, alias = (p.strip() for p in item.partition(" as "))
            pairs.append((original, alias or original))
    return pairs


class BundleError(ValueError):
    """A module the bundle cannot take as it is (it is then not served)."""


def bundle(entry: Path, root: Path) -> tuple[str, list[Path]]:
    """``entry`` and every module it imports, as one script; and the files it was made of.

    Each module becomes a function run once, in the order the modules would run (its
    imports first, depth first, in the order written): its imports are the exports of
    those before it, its exports the frozen object it returns. Only named imports and
    exports at the top level are taken (declarations, lists, lists from another module;
    ``BundleError`` otherwise): a module exporting a ``let`` it changes later, or
    importing at run time, would not work alike.
    """
    order: list[Path] = []
    state: dict[Path, str] = {}

    def visit(path: Path) -> None:
        if state.get(path) == "done":
            return
        if state.get(path) == "visiting":
            raise BundleError(f"{path.name}: imports form a cycle")
        if not path.resolve().is_relative_to(root):
            raise BundleError(f"{path}: outside the client")
        state[path] = "visiting"
        text = path.read_text()
        for found in [*_IMPORT.finditer(text), *_REEXPORT.finditer(text)]:
            visit((path.parent / found["source"]).resolve())
        state[path] = "done"
        order.append(path)

    visit(entry.resolve())
    names = {path: f"__tali_module_{index}" for index, path in enumerate(order)}
    parts = [
        f"// {len(order)} modules of the sample client from {entry.name} (server/net/static.py)"
    ]
    for path in order:
        text = path.read_text()
        lines = []
        for found in _IMPORT.finditer(text):
            module = names[(path.parent / found["source"]).resolve()]
            if found["namespace"]:
                lines.append(f"const {found['namespace']} = {module};")
            else:
                bound = [f"{a}: {b}" if a != b else a for a, b in _names(found["names"])]
                lines.append(f"const {{ {', '.join(bound)} }} = {module};")
        exports: list[str] = []
        for found in _REEXPORT.finditer(text):
            module = names[(path.parent / found["source"]).resolve()]
            exports += [f"{b}: {module}.{a}" for a, b in _names(found["names"])]
        for found in _EXPORT_LIST.finditer(text):
            exports += [f"{b}: {a}" if a != b else a for a, b in _names(found["names"])]
        for found in _EXPORT.finditer(text):
            if found["kind"] in ("let", "var"):
                raise BundleError(f"{path.name}: exports a {found['kind']} ({found['name']})")
            exports.append(found["name"])
        body = _EXPORT.sub(lambda m: m.group(0).removeprefix("export").lstrip(), text)
        body = _EXPORT_LIST.sub("", _REEXPORT.sub("", _IMPORT.sub("", body)))
        if _LEFT.search(body):
            raise BundleError(f"{path.name}: an import or export the bundle cannot take")
        name = path.relative_to(root)
        parts.append(
            f"const {names[path]} = (() => {{ // {name}\n"
            + "\n".join(lines)
            + f"\n{body}\nreturn Object.freeze({{ {', '.join(exports)} }});\n}})();"
        )
    return "\n".join(parts) + "\n", order
