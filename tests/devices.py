"""Running code with several simulated CPU devices, shared by the parallelism tests.

The test process itself has initialised JAX with one device, so such code runs in
another interpreter that asked for `n_devices` before JAX started. One such interpreter
serves the whole session (one per pytest-xdist worker): starting Python and importing
JAX and jaxtour costs seconds, and the compiled programs it keeps are reused. Each
snippet runs in a fresh namespace, under `jax.set_mesh(None)`, so a mesh it sets
globally ends with it; a snippet must leave other global JAX settings as it found them.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import subprocess
import sys
import tempfile
import textwrap

TIMEOUT_S = 300

# The serving loop: one JSON request per line on stdin (a snippet, which finds `jax`
# imported), one JSON reply per line on a copy of the original stdout. File descriptor 1
# itself goes to stderr, so nothing a snippet or a library prints can break a reply.
_SERVE = r"""
import contextlib, io, json, os, sys, traceback
replies = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr
import jax
jax.config.update("jax_num_cpu_devices", N_DEVICES)
for line in sys.stdin:
    printed = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stdout(printed), jax.set_mesh(None):
            namespace = {"__name__": "__main__", "jax": jax}
            exec(compile(json.loads(line), "<snippet>", "exec"), namespace)
    except BaseException:
        error = traceback.format_exc()
    replies.write(json.dumps({"printed": printed.getvalue(), "error": error}) + "\n")
    replies.flush()
"""


class _Server:
    """One interpreter with `n_devices` CPU devices, running snippets one at a time."""

    def __init__(self, n_devices: int):
        # lives as long as the process that writes it: closed with the session
        self.stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVE.replace("N_DEVICES", str(n_devices))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
        )

    def run(self, code: str) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(code) + "\n")
        self.proc.stdin.flush()
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ)
            ready = selector.select(TIMEOUT_S)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            why = "gave no answer in" if ready == [] else "died within"
            raise AssertionError(
                f"the device process {why} {TIMEOUT_S} s:\n{self.tail()}"
            )
        return json.loads(line)

    def tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-4000:]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


_servers: dict[int, _Server] = {}


def _server(n_devices: int) -> _Server:
    server = _servers.get(n_devices)
    if server is None or server.proc.poll() is not None:
        server = _servers[n_devices] = _Server(n_devices)
    return server


@atexit.register
def _close_all() -> None:
    for server in _servers.values():
        server.close()


def run_with_devices(code: str, n_devices: int = 8) -> dict:
    """Run `code` where JAX has `n_devices` simulated CPU devices; its last printed line
    is JSON, returned decoded."""
    server = _server(n_devices)
    reply = server.run(textwrap.dedent(code))
    assert reply["error"] is None, reply["error"][-4000:]
    return json.loads(reply["printed"].strip().splitlines()[-1])
