"""The installable page's files, read as files (protocol section 23): the
manifest's fields and icons (each a PNG of its stated size, the maskable
ones opaque), the shell the service worker keeps (every file the page
links, nothing outside static/ but the page), and the worker's rule that
nothing seen after install is written to its cache."""

from __future__ import annotations

import json
import re
import struct

import askd
from askd.server.http import web
from askd.web import STATIC_DIR, WEB_DIR

MANIFEST = json.loads((STATIC_DIR / "manifest.webmanifest").read_text(encoding="utf-8"))


def png_size(data: bytes) -> tuple[int, int, int]:
    """Width, height and colour type from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height, _, colour = struct.unpack(">IIBB", data[16:26])
    return width, height, colour


def test_the_manifest_has_the_fields_a_browser_wants_relative_to_its_folder() -> None:
    assert MANIFEST["name"] and MANIFEST["short_name"] and MANIFEST["display"] == "standalone"
    assert re.fullmatch(r"#[0-9a-f]{6}", MANIFEST["theme_color"]) and re.fullmatch(r"#[0-9a-f]{6}", MANIFEST["background_color"])
    # static/manifest.webmanifest: "../" is the page's folder under any path prefix.
    assert (MANIFEST["start_url"], MANIFEST["scope"], MANIFEST["id"]) == ("../", "../", "../")


def test_each_icon_is_a_png_of_its_stated_size_and_the_maskable_ones_fill_their_square() -> None:
    wanted = {("192x192", "any"), ("512x512", "any"), ("192x192", "maskable"), ("512x512", "maskable")}
    pngs = [i for i in MANIFEST["icons"] if i["type"] == "image/png"]
    assert {(i["sizes"], i["purpose"]) for i in pngs} == wanted
    for icon in pngs:
        assert "/" not in icon["src"]  # beside the manifest, under static/
        width, height, colour = png_size((STATIC_DIR / icon["src"]).read_bytes())
        assert f"{width}x{height}" == icon["sizes"]
        if icon["purpose"] == "maskable":
            assert colour == 2  # RGB without alpha: a launcher's mask never shows a hole
    assert png_size((STATIC_DIR / "apple-touch-icon.png").read_bytes())[:2] == (180, 180)


def test_the_shell_is_the_page_and_every_static_file_it_links() -> None:
    shell = web.shell_files()
    assert shell[0] == "./" and all(f.startswith("static/") for f in shell[1:])
    assert all((STATIC_DIR / f.removeprefix("static/")).is_file() for f in shell[1:])
    page = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    linked = set(re.findall(r'(?:href|src)="(static/[^"]+)"', page))
    assert linked and linked <= set(shell)
    assert {f"static/{i['src']}" for i in MANIFEST["icons"]} <= set(shell)
    imported = set(re.findall(r"from '\./([^']+)'", (STATIC_DIR / "app.js").read_text(encoding="utf-8")))
    assert {f"static/{m}" for m in imported} <= set(shell)


def test_the_served_worker_names_its_cache_by_askds_version_and_writes_nothing_after_install() -> None:
    script = web.service_worker_script().decode()
    assert "__ASKD_SHELL" not in script
    version = json.loads(re.search(r"const CACHE = CACHE_PREFIX \+ (\"[^\"]+\");", script)[1])
    assert version.startswith(f"{askd.__version__}-")
    assert json.loads(re.search(r"const SHELL = (\[.*?\]);", script)[1]) == web.shell_files()
    # The cache is filled once, from the fixed list: a runtime put() would
    # let an address with a secret (a link page, a ?token=) into it.
    source = (WEB_DIR / "service_worker.js").read_text(encoding="utf-8")
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    assert ".put(" not in code and "cache.add(" not in code


def test_the_page_allows_its_manifest_and_worker_from_its_own_origin_only() -> None:
    csp = dict(d.strip().split(" ", 1) for d in web.SECURITY_HEADERS["Content-Security-Policy"].split(";"))
    assert csp["manifest-src"] == "'self'" and csp["worker-src"] == "'self'" and csp["default-src"] == "'none'"
