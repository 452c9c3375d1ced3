"""MNIST mirrors on 127.0.0.1 for the tests: good ones and ones that misbehave."""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from jaxtour.data._download import FILES

SHARED = Path(
    os.environ.get("JAXTOUR_DATA") or Path(__file__).parents[2] / "shared" / "mnist"
)
NAMES = [f.name for f in FILES]
HAVE_MNIST = all((SHARED / n).is_file() for n in NAMES)

# mode -> what the mirror does with a GET:
#   good         serves the file
#   wrong-bytes  the right size, all zeros
#   truncating   promises the whole file, sends a third, hangs up
#   trickle      promises the whole file, sends one byte every `interval` seconds
#   stall        reads the request and never answers
#   slow-headers answers one byte of its status line every `interval` seconds
#   slow         sends 64 KiB every `interval` seconds
MODES = (
    "good",
    "wrong-bytes",
    "truncating",
    "trickle",
    "stall",
    "slow",
    "slow-headers",
)


class _Handler(http.server.SimpleHTTPRequestHandler):
    mode = "good"
    interval = 5.0
    stop: threading.Event
    hits: list[str]

    def do_GET(self):
        self.hits.append(self.path)
        if self.mode == "good":
            return super().do_GET()
        if self.mode == "stall":
            self.stop.wait()
            return None
        if self.mode == "slow-headers":
            for byte in b"HTTP/1.0 200 OK\r\nX-Padding: " + b"x" * 10_000:
                if self.stop.wait(self.interval):
                    return None
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return None
            return None
        data = Path(self.translate_path(self.path)).read_bytes()
        body = {"wrong-bytes": bytes(len(data)), "truncating": data[: len(data) // 3]}
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.close_connection = True
        if self.mode in body:
            self.wfile.write(body[self.mode])
            return None
        step = 1 if self.mode == "trickle" else 1 << 16
        for start in range(0, len(data), step):
            if self.stop.wait(self.interval if start else 0):
                return None
            try:
                self.wfile.write(data[start : start + step])
                self.wfile.flush()
            except OSError:  # the client gave up
                return None
        return None

    def log_message(self, *args):
        pass


class Mirrors:
    """Starts mirrors serving `root` (which holds mnist/<files>); `close()` stops them all."""

    def __init__(self, root: Path):
        self.root, self.servers, self.stop = root, [], threading.Event()
        self.hits: dict[str, list[str]] = {}  # base URL -> the paths requested from it

    def start(self, mode: str = "good", interval: float = 5.0) -> str:
        """A new mirror's base URL, ``http://127.0.0.1:PORT/mnist/``."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
        hits = []
        handler = type(
            "H",
            (_Handler,),
            {"mode": mode, "interval": interval, "stop": self.stop, "hits": hits},
        )
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(self.root))
        )
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.servers.append(server)
        url = f"http://127.0.0.1:{server.server_address[1]}/mnist/"
        self.hits[url] = hits
        return url

    def close(self) -> None:
        self.stop.set()
        for server in self.servers:
            server.shutdown()
            server.server_close()


def mirror_root(folder: Path) -> Path:
    """`folder`/mnist/<the four files> (links to the shared copies); returns `folder`."""
    (folder / "mnist").mkdir(parents=True)
    for name in NAMES:
        (folder / "mnist" / name).symlink_to(SHARED / name)
    return folder


_LOAD = """
import json, sys
from jaxtour.data import Budget, MnistUnavailableError, load_mnist
folder, mirrors, budget = json.loads(sys.argv[1])
try:
    load_mnist(folder, mirrors=mirrors, progress=False, budget=Budget(**budget))
except MnistUnavailableError as err:
    sys.exit(f"MnistUnavailableError: {err}")
print("loaded")
"""


def load_command(folder: Path, mirrors: list[str], **budget: float) -> list[str]:
    """The command line of a process that runs `load_mnist` once; exit 1 if it fails."""
    return [sys.executable, "-c", _LOAD, json.dumps([str(folder), mirrors, budget])]


def load_in_process(
    folder: Path,
    mirrors: list[str],
    timeout: float,
    prefix: tuple = (),
    **budget: float,
) -> tuple[subprocess.CompletedProcess, float]:
    """Run `load_command` to its end (killed after `timeout` s); (result, seconds taken)."""
    start = time.monotonic()
    result = subprocess.run(
        [*prefix, *load_command(folder, mirrors, **budget)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return result, time.monotonic() - start
