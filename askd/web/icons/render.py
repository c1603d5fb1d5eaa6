"""Render the page's app icons (static/icon-*.png) from the two drawings
beside this file, in Debian's Chromium through Playwright (a development
tool, not shipped: ``.venv/bin/python askd/web/icons/render.py``; the
PNGs are committed, so askd itself never runs this). ``icon.svg`` is the icon as
shown (rounded corners); ``icon-maskable.svg`` fills its square and keeps
its drawing inside the centre circle of 80 % that a launcher may cut to."""

from __future__ import annotations

import asyncio
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE.parent / "static"
#: (drawing, size in px, file written into static/)
ICONS = [
    ("icon.svg", 192, "icon-192.png"),
    ("icon.svg", 512, "icon-512.png"),
    ("icon.svg", 180, "apple-touch-icon.png"),
    ("icon-maskable.svg", 192, "icon-maskable-192.png"),
    ("icon-maskable.svg", 512, "icon-maskable-512.png"),
]


async def render() -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
        for drawing, size, name in ICONS:
            page = await browser.new_page(viewport={"width": size, "height": size})
            svg = (HERE / drawing).read_text()
            await page.set_content(f'<style>html,body{{margin:0;background:transparent}}svg{{display:block;width:{size}px;height:{size}px}}</style>{svg}')
            await page.screenshot(path=str(STATIC_DIR / name), omit_background=True)
            await page.close()
        await browser.close()


if __name__ == "__main__":
    asyncio.run(render())
