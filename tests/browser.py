"""Finding and launching the system Chromium, shared by the browser tests.

Never a downloaded browser: Debian's `chromium` package ($JAXTOUR_CHROMIUM overrides the
path). Without one the browser tests skip, except in CI, where they must run.
"""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = "/usr/bin/chromium"
# Headless, and quiet: no background requests that a closed network would refuse.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SCREENSHOTS = Path(os.environ.get("JAXTOUR_BUILD") or ROOT / "build") / "screenshots"


def find_chromium() -> str:
    """The system Chromium; skip without one (or Playwright), fail under CI=true or CI=1."""
    wanted = os.environ.get("JAXTOUR_CHROMIUM")
    candidates = [wanted] if wanted else [DEFAULT, shutil.which("chromium")]
    found = next((p for p in candidates if p and Path(p).is_file()), None)
    where = wanted or f"{DEFAULT} or on PATH"
    problem = None if found else f"no Chromium at {where} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = problem or "Playwright is not installed (pip install playwright)"
    if problem and os.environ.get("CI", "").lower() in ("1", "true"):
        pytest.fail(f"CI must run the browser tests, but {problem}.")
    if problem:
        pytest.skip(problem)
    return found


@contextmanager
def offline_page(path: Path, width: int, height: int) -> Iterator[tuple]:
    """(page, blocked, errors): `path` opened from file:// in the system Chromium at
    `width` × `height`, every request off this machine refused and listed in `blocked`,
    the page's script errors in `errors`."""
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []
    errors: list[str] = []

    def gate(route):
        if route.request.url.startswith(("file://", "data:")):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=ARGS)
        context = browser.new_context(viewport={"width": width, "height": height})
        context.route("**/*", gate)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(path.as_uri())
        try:
            yield page, blocked, errors
        finally:
            browser.close()
