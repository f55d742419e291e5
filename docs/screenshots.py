"""Screenshots of the built site in headless Chromium, at a laptop's width and a phone's, to look at by hand.

Run by hand after a build (CI has no Chromium)::

    .venv/bin/python -m sphinx -W -b html docs docs/_build/html
    .venv/bin/python docs/screenshots.py                  # PNGs in docs/_build/screenshots/
    .venv/bin/python docs/screenshots.py --out /tmp/shots --height 3000 how-to/predictions.html

Chromium: ``apt-get install chromium`` (Debian) or any Chrome; ``--browser`` names another binary.  Each page
is taken at 1280 px and at 390 px wide (``--widths``); the file is ``<page>-<width>.png``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The pages looked at: the front page, a how-to, an explanation, one API function's page, the commands reference.
PAGES = ("index.html", "how-to/predictions.html", "explanation/exact-auc.html",
         "reference/api/tablegen.critical_value.html", "reference/commands.html")
WIDTHS = (1280, 390)


def find_browser(name: str | None) -> str:
    """The Chromium binary: ``name`` if given, else the first of the usual names on the PATH."""
    for candidate in ([name] if name else ["chromium", "chromium-browser", "google-chrome", "chrome"]):
        path = shutil.which(candidate)
        if path:
            return path
    sys.exit(f"no Chromium found (tried {name or 'chromium, chromium-browser, google-chrome, chrome'}); "
             "install it (apt-get install chromium) or pass --browser")


def screenshot(browser: str, page: Path, png: Path, width: int, height: int) -> None:
    """One screenshot of ``page`` at ``width`` x ``height`` CSS pixels (device scale 1)."""
    png.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--force-device-scale-factor=1",
                    "--virtual-time-budget=3000", f"--window-size={width},{height}", f"--screenshot={png}",
                    page.as_uri()], check=True, capture_output=True, timeout=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", default=list(PAGES), help="pages, relative to the built site")
    parser.add_argument("--site", type=Path, default=HERE / "_build" / "html", help="the built site")
    parser.add_argument("--out", type=Path, default=HERE / "_build" / "screenshots", help="folder for the PNGs")
    parser.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS), help="window widths in CSS px")
    parser.add_argument("--height", type=int, default=2000, help="window height in CSS px")
    parser.add_argument("--browser", help="the Chromium binary")
    args = parser.parse_args(argv)
    browser = find_browser(args.browser)
    for name in args.pages:
        page = args.site / name
        if not page.exists():
            sys.exit(f"{page} does not exist: build the site first (see this script's docstring)")
        for width in args.widths:
            png = args.out / f"{name.removesuffix('.html').replace('/', '_')}-{width}.png"
            screenshot(browser, page, png, width, args.height)
            print(png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
