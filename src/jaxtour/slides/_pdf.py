"""Handouts: each deck as a PDF, one page per slide, printed by the system Chromium.

reveal.js lays a deck out for print when its URL asks for ``?print-pdf`` (one 1280x720 page
per slide); headless Chromium prints that page with ``--print-to-pdf``. The browser is the
one on this machine (``$JAXTOUR_CHROMIUM``, then Chromium or Chrome where they install):
jaxtour never downloads one. A PDF is written to a temporary name and renamed when
complete, so a failed or interrupted print leaves nothing half-made.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jaxtour.slides._plan import SlidesError

CHROMIUM_VARIABLE = "JAXTOUR_CHROMIUM"
_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
_MACOS = ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
          "/Applications/Chromium.app/Contents/MacOS/Chromium")
# Headless and quiet: no first-run pages, no requests to the network of its own.
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw",
          "--virtual-time-budget=20000")
# The PDF's pages: "/Type /Page" objects (not the "/Type /Pages" tree above them).
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
INSTALL = (
    "Handouts need Chromium or Chrome, and none was found. Install one (Debian/Ubuntu: "
    "`sudo apt install chromium`; macOS: install Google Chrome) or set "
    f"{CHROMIUM_VARIABLE} to its executable."
)


def find_chromium() -> str | None:
    """The system Chromium or Chrome: ``$JAXTOUR_CHROMIUM``, then the usual places, or None.

    Raises:
        SlidesError: ``$JAXTOUR_CHROMIUM`` names a file that does not exist.
    """
    wanted = os.environ.get(CHROMIUM_VARIABLE)
    if wanted:
        if not Path(wanted).is_file():
            raise SlidesError(f"{CHROMIUM_VARIABLE}={wanted} is no file: point it at the "
                              "Chromium or Chrome executable, or unset it.")
        return wanted
    candidates = ["/usr/bin/chromium", *(shutil.which(n) for n in _NAMES)]
    if sys.platform == "darwin":
        candidates += list(_MACOS)
    return next((c for c in candidates if c and Path(c).is_file()), None)


def count_pages(pdf: bytes) -> int:
    """How many pages a PDF holds (its ``/Type /Page`` objects).

    Example:
        >>> count_pages(b"<< /Type /Pages /Count 2 >> << /Type /Page >> << /Type/Page >>")
        2
    """
    return len(_PAGE.findall(pdf))


def print_deck(deck_html: Path, pdf: Path, chromium: str, timeout: float = 180) -> Path:
    """Print deck `deck_html` to `pdf` through reveal.js's print view, atomically.

    Raises:
        SlidesError: Chromium failed, timed out, or wrote no PDF; `pdf` is then untouched.
    """
    pdf = Path(pdf)
    pdf.parent.mkdir(parents=True, exist_ok=True)
    url = Path(deck_html).resolve().as_uri() + "?print-pdf"
    handle, part = tempfile.mkstemp(prefix=f".{pdf.stem}.", suffix=".pdf.part", dir=pdf.parent)
    os.close(handle)
    try:
        with tempfile.TemporaryDirectory(prefix="jaxtour-chromium-") as profile:
            command = [chromium, *_FLAGS, f"--user-data-dir={profile}",
                       f"--print-to-pdf={part}", url]
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        written = Path(part).read_bytes()
        if done.returncode != 0 or not written.startswith(b"%PDF") or not count_pages(written):
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise SlidesError(f"Chromium ({chromium}) made no PDF of {Path(deck_html).name} "
                              f"(exit {done.returncode}: {last}).")
        os.replace(part, pdf)
    except subprocess.TimeoutExpired:
        raise SlidesError(f"Chromium took over {timeout:.0f} s to print "
                          f"{Path(deck_html).name}; no PDF written.") from None
    finally:
        Path(part).unlink(missing_ok=True)
    return pdf


def write_handouts(decks, chromium: str | None = None) -> list[Path]:
    """One PDF beside each deck (``NN_topic.pdf``), one page per slide.

    Args:
        decks: the `Deck`s `build_slides` wrote.
        chromium: the browser to print with (default: `find_chromium`).

    Raises:
        SlidesError: no Chromium (the message says what to install), or a print failed.
    """
    chromium = chromium or find_chromium()
    if chromium is None:
        raise SlidesError(INSTALL)
    return [print_deck(d.path, d.path.with_suffix(".pdf"), chromium) for d in decks]
