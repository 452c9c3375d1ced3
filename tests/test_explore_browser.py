"""The explorer in a real JupyterLab, driven by Debian's headless Chromium.

The test starts its own JupyterLab on 127.0.0.1 (a free port, a random token) in a
temporary folder holding a copy of the explorer lesson, runs every cell, changes the
explorer's direction control, and checks that the SVG in the panel changes. Screenshots
go to build/screenshots/ (or $JAXTOUR_BUILD/screenshots/).
"""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser import ARGS as CHROMIUM_ARGS
from browser import SCREENSHOTS, find_chromium

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "notebooks" / "09_explore.ipynb"
JUPYTER = Path(sys.executable).parent / "jupyter"
SERVER_START_S = 60
CELLS_RUN_S = 90
RERENDER_S = 30

# The first explorer's panel: its SVG (a fingerprint of its drawing) and whether the
# live widget, not the static fallback, is what the page shows.
_PANEL = """() => {
  const panel = document.querySelector('.jaxtour-explorer');
  if (!panel) return null;
  const svg = panel.querySelector('.jaxtour-explorer-output svg');
  return {svg: svg ? svg.outerHTML : null,
          box: svg ? [svg.getBoundingClientRect().width, svg.getBoundingClientRect().height]
                   : null,
          static: !!document.querySelector('.jaxtour-explore-static')};
}"""
# True once every code cell has run: each has an execution count in the notebook's model
# (a check cell's input is collapsed, so its prompt is not on the page to read).
_ALL_RAN = """() => {
  const cells = window.jupyterapp.shell.currentWidget?.content?.model?.cells;
  if (!cells) return false;
  const all = Array.from({length: cells.length}, (_, i) => cells.get(i));
  const code = all.filter(c => c.type === 'code');
  return code.length > 0 && code.every(c => Number.isInteger(c.executionCount));
}"""
# What cells wrote to stderr: tracebacks show up here.
_STDERR = """() => [...document.querySelectorAll(
  '[data-mime-type="application/vnd.jupyter.stderr"]')].map(e => e.textContent)"""


@pytest.fixture
def chromium() -> str:
    return find_chromium()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _quiet_lab_settings(folder: Path) -> None:
    # No "receive Jupyter news?" toast over the notebook.
    settings = (
        folder
        / "@jupyterlab"
        / "apputils-extension"
        / "notification.jupyterlab-settings"
    )
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab serving a copy of the explorer lesson: yields (url, process)."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(LESSON, work / LESSON.name)
    _quiet_lab_settings(tmp_path / "settings")
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JAXTOUR_QUICK": "1",
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    log = (tmp_path / "lab.log").open("w")
    server = subprocess.Popen(
        [
            str(JUPYTER),
            "lab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={work}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--allow-root",
        ],  # containers and CI often run as root
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(base, token, server, tmp_path / "lab.log")
        yield f"{base}/lab/tree/{LESSON.name}?token={token}&reset", server
    finally:
        _stop(server)
        log.close()


def _stop(server: subprocess.Popen) -> None:
    """End the server and the kernels it started (its own process group)."""
    for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            return
        try:
            server.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_for_server(
    base: str, token: str, server: subprocess.Popen, log: Path
) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(
                f"JupyterLab exited with {server.returncode}:\n{log.read_text()[-3000:]}"
            )
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    pytest.fail(
        f"JupyterLab did not answer within {SERVER_START_S} s:\n{log.read_text()[-3000:]}"
    )


# Whichever comes first: JupyterLab's question which kernel to start, or the kernel it
# started by itself (no fixed wait for a dialog that may never come).
_KERNEL_OR_DIALOG = """() => !!document.querySelector('.jp-Dialog .jp-mod-accept')
  || !!window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel"""


def _accept_kernel_dialog(page) -> None:
    # JupyterLab may ask which kernel to start; the lesson's own (Python 3) is preselected.
    page.wait_for_function(_KERNEL_OR_DIALOG, timeout=SERVER_START_S * 1000)
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    if accept.count():
        accept.click()


def test_changing_a_control_redraws_the_svg_in_jupyterlab(chromium, lab):
    from playwright.sync_api import sync_playwright

    url, _ = lab
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url, timeout=SERVER_START_S * 1000)
            page.wait_for_function(
                "() => window.jupyterapp && document.querySelector("
                "'.jp-NotebookPanel .jp-Cell')",
                timeout=60_000,
            )
            _accept_kernel_dialog(page)
            # Not awaited: the command's promise settles only when every cell has run.
            page.evaluate(
                "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
            )
            page.wait_for_function(_ALL_RAN, timeout=CELLS_RUN_S * 1000)
            errors = [e for e in page.evaluate(_STDERR) if "Error" in e]
            before = page.evaluate(_PANEL)
            panel = page.locator(".jaxtour-explorer").first
            panel.scroll_into_view_if_needed()
            panel.screenshot(path=str(SCREENSHOTS / "explore_before.png"))

            assert not errors, f"a cell failed in JupyterLab: {errors[0][-2000:]}"
            assert before and before["svg"], "the explorer's panel shows no SVG"
            assert not before["static"], (
                "JupyterLab showed the static fallback, not the widget"
            )
            # The direction not chosen now (ipywidgets marks the chosen one mod-active).
            panel.locator(
                ".jaxtour-explorer-rankdir button:not(.mod-active)"
            ).first.click()
            page.wait_for_function(
                f"before => ({_PANEL})()?.svg && ({_PANEL})().svg !== before",
                arg=before["svg"],
                timeout=RERENDER_S * 1000,
            )
            after = page.evaluate(_PANEL)
            panel.screenshot(path=str(SCREENSHOTS / "explore_after.png"))
        finally:
            browser.close()
    assert 'class="graph"' in after["svg"]
    # One direction draws the jaxpr wider than tall (→), the other taller than wide (↓):
    # the click turned the picture's shape round.
    (w0, h0), (w1, h1) = before["box"], after["box"]
    assert (w0 > h0) != (w1 > h1), (before["box"], after["box"])
