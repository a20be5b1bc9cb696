"""The sample browser client's files, served at ``/`` on the game port.

Only regular files inside the client directory with a known type are served;
anything else, including every attempt to climb out of the directory, is 404.
"""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path
from urllib.parse import unquote

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


def default_client_dir() -> Path:
    """The repository's ``clients/sample_js`` next to the ``server`` package."""
    return Path(__file__).resolve().parents[1] / "clients" / "sample_js"


class StaticFiles:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def find(self, raw_path: str) -> tuple[HTTPStatus, bytes, str]:
        """Status, body and content type for a request path (query string already removed)."""
        path = unquote(raw_path)
        if path in ("", "/"):
            path = "/index.html"
        if "\\" in path or "\x00" in path or "/." in path or not path.startswith("/"):
            return _not_found()
        candidate = (self.root / path.lstrip("/")).resolve()
        if not candidate.is_relative_to(self.root) or not candidate.is_file():
            return _not_found()
        content_type = CONTENT_TYPES.get(candidate.suffix.lower())
        if content_type is None:
            return _not_found()
        return HTTPStatus.OK, candidate.read_bytes(), content_type


def _not_found() -> tuple[HTTPStatus, bytes, str]:
    return HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8"
