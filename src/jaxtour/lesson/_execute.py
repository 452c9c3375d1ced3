"""Executing a lesson, once: runs are cached on what could change their outputs.

The cache key is the lesson's source (sha256), the view run, the kit (its version and a
hash of its installed source files, so a dev checkout never reuses a run of older code),
JAX's version, ``JAXTOUR_QUICK`` and the Graphviz that draws the lesson's pictures (system
or embedded, and its version: the two lay the same graph out at different sizes). An
entry is a folder ``NN_topic-<key>/`` holding the executed .ipynb and its HTML export;
it appears whole (renamed into place) or not at all, so a failing lesson leaves none. A
file lock per entry lets pytest-xdist workers and two tours share one cache: the second
waits for the first run instead of repeating it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import signal
from pathlib import Path
from typing import Any, NamedTuple

from jaxtour import paths
from jaxtour._files import make_folder, make_staging_folder, write_atomically
from jaxtour.lesson._files import read
from jaxtour.lesson._lock import locked
from jaxtour.lesson._views import View, view

CACHE_VARIABLE = "JAXTOUR_EXECUTED"


class LessonError(RuntimeError):
    """A lesson raised while executing; the message names the cell and the error."""


class Executed(NamedTuple):
    """An executed lesson: the .ipynb with outputs and its HTML export."""

    ipynb: Path
    html: Path


def cache_dir(build_dir: Path | None = None) -> Path:
    """Where executed lessons are kept: $JAXTOUR_EXECUTED, else `build_dir`/executed
    (the build folder: ``paths.build_dir()`` unless given)."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    return (build_dir or paths.build_dir()) / "executed"


@functools.cache
def kit_fingerprint() -> str:
    """jaxtour's version and a hash of its installed source files.

    The lessons a wheel carries (``jaxtour/lessons/``) are left out: each run is keyed on
    its own lesson's source, so a checkout and an install of the same code share runs.
    """
    from jaxtour._version import __version__

    digest = hashlib.sha256(__version__.encode())
    package = Path(__file__).resolve().parent.parent  # the installed jaxtour/
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] == "lessons":
            continue
        digest.update(str(path.relative_to(package)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_key(source: Path, which: View = View.INSTRUCTOR) -> str:
    """The key of a run of lesson `source` in view `which`, on this kit, JAX and mode."""
    import jax

    from jaxtour._render import describe

    digest = hashlib.sha256(source.read_bytes())
    parts = (which.value, kit_fingerprint(), jax.__version__, str(paths.quick()))
    for part in (*parts, describe()):
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()[:20]


def cached(
    source: Path, which: View = View.INSTRUCTOR, *, cache: Path | None = None
) -> Executed | None:
    """The cached run of lesson `source` in view `which`, or None when there is none."""
    entry = (cache or cache_dir()) / f"{source.stem}-{cache_key(source, which)}"
    return _entry_files(entry, source) if entry.is_dir() else None


def executed(
    source: Path,
    which: View = View.INSTRUCTOR,
    *,
    cache: Path | None = None,
    timeout: int = 600,
) -> Executed:
    """Lesson `source` in view `which`, executed: from the cache, else run now and kept.

    Raises:
        LessonError: a cell raised; nothing is cached.
        TimeoutError: another process ran this lesson for over an hour.
    """
    cache = cache or cache_dir()
    entry = cache / f"{source.stem}-{cache_key(source, which)}"
    if entry.is_dir():
        return _entry_files(entry, source)
    make_folder(cache)
    with locked(Path(f"{entry}.lock"), f"executing {source.name}"):
        if not entry.is_dir():  # another process may have run it meanwhile
            _fill(entry, source, which, timeout)
    return _entry_files(entry, source)


def _entry_files(entry: Path, source: Path) -> Executed:
    return Executed(entry / f"{source.stem}.ipynb", entry / f"{source.stem}.html")


def _fill(entry: Path, source: Path, which: View, timeout: int) -> None:
    """Run the lesson into a temporary folder beside `entry`, then rename it to `entry`."""
    # not mkdtemp's 0700: a cache shared between users is read by all of them
    staging = make_staging_folder(entry.parent, prefix=f".{entry.name}.")
    try:
        execute(source, staging, which, timeout)
        os.replace(staging, entry)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def execute(
    source: Path, out_dir: Path, which: View = View.INSTRUCTOR, timeout: int = 600
) -> Executed:
    """Run lesson `source` (view `which`) top to bottom, with no cache; write the
    executed .ipynb and its HTML into `out_dir`.

    The kernel starts in the lesson's folder, as Jupyter would, so relative paths in a
    lesson behave the same in the tour, the tests and the user's Jupyter.

    Raises:
        LessonError: a cell raised (the message names it by its first line).
    """
    import nbformat

    notebook = view(read(source), which)
    run_notebook(notebook, source.parent.resolve(), timeout, source.name)
    found = Executed(out_dir / f"{source.stem}.ipynb", out_dir / f"{source.stem}.html")
    write_atomically(found.ipynb, nbformat.writes(notebook).encode())
    write_atomically(found.html, html_of(notebook).encode())
    return found


def kernel_ipc_address() -> str | None:
    """Where the kernel's Unix sockets go (``<runtime>/jaxtour-<id>-ipc``, each socket
    that plus ``-<n>``), or None where there are none or their paths would not fit:
    then the kernel talks over TCP on 127.0.0.1.

    Over IPC nothing goes through the network, so ipykernel has no cause to warn, once
    per lesson, that it "is running over TCP without encryption"; its other warnings
    still show. The path is absolute: the kernel runs in the lesson's folder, the client
    here. A Unix socket's path holds at most 104 to 108 bytes, by system.
    """
    if os.name != "posix":
        return None
    import uuid

    from jupyter_core.paths import jupyter_runtime_dir

    address = Path(jupyter_runtime_dir()) / f"jaxtour-{uuid.uuid4().hex[:12]}-ipc"
    if len(os.fsencode(address)) + len("-65535") >= IPC_PATH_BYTES:
        return None
    address.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return str(address)


IPC_PATH_BYTES = 104  # the shortest limit of a Unix socket's path (macOS, BSD)


def run_notebook(notebook: Any, folder: Path, timeout: int, name: str) -> None:
    """Execute `notebook` in place with a kernel started in `folder`."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from traitlets.config import Config

    config = Config()
    address = kernel_ipc_address()
    if address is not None:  # the kernel's sockets are removed when it shuts down
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = address

    # No saved widget state: exported HTML and offline slides then show a widget's
    # static fallback picture instead of an empty box that needs JavaScript from a CDN.
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(folder)}},
        config=config,
    )
    previous = signal.getsignal(signal.SIGINT)
    try:
        client.execute()
    except CellExecutionError as err:
        raise LessonError(_failure(notebook, name, err)) from None
    finally:
        _after_nbclient(client, previous)


def _after_nbclient(client: Any, previous: Any) -> None:
    """nbclient handles SIGINT while it runs: it shuts its kernel down (the cell then
    fails with DeadKernelError, or its cleanup with an AssertionError) and leaves
    Python's default handler behind. Put the caller's handler back, and turn a Ctrl-C
    that nbclient handled into the `KeyboardInterrupt` it was."""
    if previous is not None and signal.getsignal(signal.SIGINT) is not previous:
        with contextlib.suppress(ValueError):  # not the main thread: nbclient set none
            signal.signal(signal.SIGINT, previous)
    # set by nbclient's own SIGINT/SIGTERM handler only (nbclient 0.6 to 0.10)
    if getattr(client, "_async_cleanup_kernel_future", None) is not None:
        raise KeyboardInterrupt


def _failure(notebook: Any, name: str, err: Any) -> str:
    failed = next(
        (
            c
            for c in notebook.cells
            if any(o.get("output_type") == "error" for o in c.get("outputs", []))
        ),
        None,
    )
    first = next((li for li in (failed or {}).get("source", "").splitlines()), "?")
    return (
        f"{name}: the cell starting {first!r} raised "
        f"{getattr(err, 'ename', 'an error')}: {getattr(err, 'evalue', err)}"
    )


def html_of(notebook: Any) -> str:
    """The HTML export of an executed notebook, as the HTML view shows it."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(view(notebook, View.HTML))
    return body
