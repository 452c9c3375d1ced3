"""Handouts: each deck as a PDF, one page per slide, printed by the system Chromium.

reveal.js lays a deck out for print when its URL asks for ``?print-pdf`` (one 1280x720 page
per slide); headless Chromium prints that page once the deck is ready (DevTools protocol
over a pipe: no extra Python package, no network port). The browser is the
one on this machine (``$JAXTOUR_CHROMIUM``, then Chromium or Chrome where they install):
jaxtour never downloads one. A PDF is written to a temporary name and renamed when
complete, so a failed or interrupted print leaves nothing half-made.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from jaxtour._files import write_atomically
from jaxtour.slides._plan import SlidesError

CHROMIUM_VARIABLE = "JAXTOUR_CHROMIUM"
CLOSED = "Chromium closed its pipe (did it start?)"  # it exited, or never started
_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
)
_MACOS = (
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)
# Headless and quiet: no first-run pages, no requests to the network of its own.
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-default-browser-check",
    "--disable-dev-shm-usage",
    # with scroll bars the print view paints blank pages for a long deck
    "--hide-scrollbars",
)
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
            raise SlidesError(
                f"{CHROMIUM_VARIABLE}={wanted} is no file: point it at the "
                "Chromium or Chrome executable, or unset it."
            )
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

    Chromium opens ``deck.html?print-pdf``; once the deck says it is laid out and fitted
    (``<html data-deck-ready="true">``) and its fonts are loaded, it prints the page at the
    page size reveal.js sets, one page per slide.

    Raises:
        SlidesError: Chromium failed, timed out, or made no PDF; `pdf` is then untouched.
    """
    pdf = Path(pdf)
    pdf.parent.mkdir(parents=True, exist_ok=True)
    url = Path(deck_html).resolve().as_uri() + "?print-pdf"
    try:
        data = _DevTools(chromium, timeout).print_when_ready(url)
    except (OSError, TimeoutError, KeyError, ValueError) as err:
        raise SlidesError(
            f"Chromium ({chromium}) made no PDF of {Path(deck_html).name}: "
            f"{err}. No PDF written."
        ) from None
    if not data.startswith(b"%PDF") or not count_pages(data):
        raise SlidesError(
            f"Chromium ({chromium}) made no PDF of {Path(deck_html).name}."
        )
    write_atomically(pdf, data)  # whole or not at all; a full disk names the file
    return pdf


# Chromium reads DevTools commands on its fd 3 and answers on fd 4. A small Python puts
# the two pipes there (moved above 4 first, so that neither overwrites the other) and
# becomes Chromium. Doing it in a `preexec_fn` would run Python code in a fork of this
# process, which JAX's threads make unsafe: JAX warns of a deadlock, in the tour's output.
_WIRE = """import fcntl, os, sys
ends = [fcntl.fcntl(int(fd), fcntl.F_DUPFD_CLOEXEC, 5) for fd in sys.argv[1:3]]
for fd in sys.argv[1:3]:
    os.close(int(fd))
os.dup2(ends[0], 3)
os.dup2(ends[1], 4)
os.execvp(sys.argv[3], sys.argv[3:])
"""
_READY = (
    "document.documentElement.dataset.deckReady === 'true'"
    " && document.fonts.status === 'loaded'"
)


class _DevTools:
    """Headless Chromium driven over ``--remote-debugging-pipe`` (its file descriptors 3
    and 4, NUL-separated JSON): enough of the DevTools protocol to print one page."""

    def __init__(self, chromium: str, timeout: float):
        self.chromium, self.deadline = chromium, time.monotonic() + timeout
        self.next_id, self.buffer = 0, b""

    def print_when_ready(self, url: str) -> bytes:
        to_child, self.to_chromium = os.pipe()
        self.from_chromium, from_child = os.pipe()
        with tempfile.TemporaryDirectory(
            prefix="jaxtour-chromium-", ignore_cleanup_errors=True
        ) as profile:
            process = subprocess.Popen(
                [
                    *(sys.executable, "-I", "-S", "-c", _WIRE),
                    *(str(to_child), str(from_child), self.chromium),
                    *_FLAGS,
                    "--remote-debugging-pipe",
                    f"--user-data-dir={profile}",
                    "about:blank",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(to_child, from_child),
            )
            os.close(to_child)
            os.close(from_child)
            try:
                return self._print(url)
            finally:
                self._close(process)

    def _close(self, process: subprocess.Popen) -> None:
        # Ask the browser to quit (its helper processes with it), then make sure.
        try:
            os.write(self.to_chromium, b'{"id": 0, "method": "Browser.close"}\0')
            process.wait(timeout=3)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        finally:
            os.close(self.to_chromium)
            os.close(self.from_chromium)

    def _print(self, url: str) -> bytes:
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        session = self.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )["sessionId"]
        while not self.call(
            "Runtime.evaluate", {"expression": _READY, "returnByValue": True}, session
        )["result"].get("value"):
            if time.monotonic() > self.deadline:
                raise TimeoutError("the deck never said it was ready")
            time.sleep(0.1)
        printed = self.call(
            "Page.printToPDF",
            {"preferCSSPageSize": True, "printBackground": True},
            session,
        )
        return base64.b64decode(printed["data"])

    def call(self, method: str, params: dict, session: str | None = None) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        try:
            os.write(self.to_chromium, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:  # it exited before we wrote: the same failure as EOF
            raise OSError(CLOSED) from None
        while True:
            reply = self._receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise ValueError(f"{method}: {reply['error'].get('message')}")
                return reply["result"]

    def _receive(self) -> dict:
        while b"\0" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_chromium], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium in time")
            chunk = os.read(self.from_chromium, 1 << 20)
            if not chunk:
                raise OSError(CLOSED)
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)


def write_handouts(decks: Any, chromium: str | None = None) -> list[Path]:
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
