"""Finding and launching the system Chromium, shared by the browser tests.

Never a downloaded browser: Debian's `chromium` package ($JAXTOUR_CHROMIUM overrides the
path). Without one the browser tests skip, except in CI, where they must run.
"""

import os
import shutil
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
