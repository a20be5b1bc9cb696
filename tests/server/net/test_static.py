"""The sample client's files: one bundle for its modules, hashed names, ETags and 304s."""

from __future__ import annotations

import os
import re
from http import HTTPStatus
from pathlib import Path

import pytest

from server.net.static import (
    FOREVER,
    REVALIDATE,
    BundleError,
    StaticFiles,
    bundle,
    default_client_dir,
)


def client(tmp_path: Path) -> Path:
    root = tmp_path / "client"
    (root / "views").mkdir(parents=True)
    (root / "index.html").write_text(
        '<link rel="stylesheet" href="style.css"><script type="module" src="app.js"></script>'
    )
    (root / "style.css").write_text("body { color: black; }\n")
    (root / "facts.js").write_text("export const ANSWER = Object.freeze(42);\n")
    (root / "views" / "show.js").write_text(
        'import { ANSWER as answer } from "../facts.js";\n'
        "export function show() { return `answer ${answer}`; }\n"
        "export class Shown {}\n"
    )
    (root / "app.js").write_text(
        'import { show } from "./views/show.js";\n'
        'import * as facts from "./facts.js";\n'
        "export async function main() { return [show(), facts.ANSWER]; }\n"
    )
    return root


def headers(answer: object) -> dict[str, str]:
    return dict(answer.headers)  # type: ignore[attr-defined]


def test_the_page_names_its_bundle_and_stylesheet_by_their_hash(tmp_path: Path) -> None:
    files = StaticFiles(client(tmp_path))
    page = files.find("/")
    assert page.status == HTTPStatus.OK
    assert headers(page)["Cache-Control"] == REVALIDATE
    (script,) = re.findall(r'src="bundle\.js\?v=(\w+)"', page.body.decode())
    (style,) = re.findall(r'href="style\.css\?v=(\w+)"', page.body.decode())
    hashed = files.find("/bundle.js", f"v={script}")
    assert headers(hashed)["Cache-Control"] == FOREVER
    assert headers(hashed)["ETag"] == f'"{script}"'
    assert headers(files.find("/style.css", f"v={style}"))["Cache-Control"] == FOREVER
    # Under another name (an old page's), or none: revalidated, never cached for good.
    assert headers(files.find("/bundle.js", "v=0ld"))["Cache-Control"] == REVALIDATE
    assert headers(files.find("/bundle.js"))["Cache-Control"] == REVALIDATE


def test_a_revalidation_is_answered_304_until_the_file_changes(tmp_path: Path) -> None:
    root = client(tmp_path)
    files = StaticFiles(root)
    first = files.find("/style.css")
    etag = headers(first)["ETag"]
    again = files.find("/style.css", "", etag)
    assert (again.status, again.body) == (HTTPStatus.NOT_MODIFIED, b"")
    assert files.find("/style.css", "", f'"other", W/{etag}').status == HTTPStatus.NOT_MODIFIED
    page = headers(files.find("/"))["ETag"]
    (root / "style.css").write_text("body { color: red; }\n")
    stat = (root / "style.css").stat()
    os.utime(root / "style.css", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    changed = files.find("/style.css", "", etag)
    assert changed.status == HTTPStatus.OK
    assert changed.body == b"body { color: red; }\n"
    # The page names the stylesheet by its hash: it changed with it.
    assert headers(files.find("/"))["ETag"] != page


def test_the_bundle_runs_each_module_once_in_import_order(tmp_path: Path) -> None:
    root = client(tmp_path)
    text, sources = bundle(root / "app.js", root.resolve())
    assert [p.name for p in sources] == ["facts.js", "show.js", "app.js"]
    assert "import " not in text
    assert "export " not in text
    assert "const { ANSWER: answer } = __tali_module_0;" in text
    assert "const facts = __tali_module_0;" in text
    assert "return Object.freeze({ show, Shown });" in text
    assert "return Object.freeze({ main });" in text


@pytest.mark.parametrize(
    ("module", "complaint"),
    [
        ("export let counter = 0;\n", "exports a let"),
        ('import "./app.js";\n', "cannot take"),
        ("export default 1;\n", "cannot take"),
        ('import { x } from "./app.js";\n', "cycle"),
    ],
)
def test_a_module_the_bundle_cannot_take_is_refused(
    tmp_path: Path, module: str, complaint: str
) -> None:
    root = client(tmp_path)
    (root / "facts.js").write_text(module)
    with pytest.raises(BundleError, match=complaint):
        bundle(root / "app.js", root.resolve())
    # Served without it: the bundle is not found, every module still is.
    files = StaticFiles(root)
    assert files.find("/bundle.js").status == HTTPStatus.NOT_FOUND
    assert files.find("/facts.js").status == HTTPStatus.OK


def test_the_sample_client_bundles() -> None:
    root = default_client_dir()
    files = StaticFiles(root)
    script = files.find("/bundle.js")
    assert script.status == HTTPStatus.OK
    _, modules = bundle(root / "app.js", root.resolve())
    assert script.body.count(b"= (() => { // ") == len(modules) > 15
    # Every module of the page is in it; of the library's copy (tali/), what it imports.
    left_out = {p.resolve() for p in root.rglob("*.js")} - set(modules)
    assert all(p.parent.name == "tali" for p in left_out), left_out
    # The library's index, re-exports and all, bundles too.
    text, _ = bundle(root / "tali" / "index.js", root.resolve())
    assert "TaliClient: __tali_module_" in text


def test_lists_of_exports_and_exports_from_another_module(tmp_path: Path) -> None:
    root = client(tmp_path)
    (root / "facts.js").write_text(
        "const ANSWER = 42;\nconst other = 1;\nexport { ANSWER, other as OTHER };\n"
    )
    (root / "views" / "show.js").write_text(
        'export {\n  ANSWER,\n  OTHER as more,\n} from "../facts.js";\nexport function show() { return 1; }\n'
    )
    (root / "app.js").write_text(
        'import { ANSWER, more } from "./views/show.js";\nexport const both = [ANSWER, more];\n'
    )
    text, _ = bundle(root / "app.js", root.resolve())
    assert "return Object.freeze({ ANSWER, OTHER: other });" in text
    assert (
        "return Object.freeze({ ANSWER: __tali_module_0.ANSWER, more: __tali_module_0.OTHER, show });"
        in text
    )
    assert "export" not in text


@pytest.mark.parametrize("path", ["/../pyproject.toml", "/%2e%2e/README.md", "/.git/config"])
def test_nothing_outside_the_client_is_served(tmp_path: Path, path: str) -> None:
    assert StaticFiles(client(tmp_path)).find(path).status == HTTPStatus.NOT_FOUND
