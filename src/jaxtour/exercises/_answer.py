"""The answer's process: `python -c` runs `main` here (nothing else imports this module).

It runs a submitted notebook's cells, then calls its answers for the grader
(`_remote`), which judges what comes back. Everything here is within the answer's reach,
so nothing here decides a mark: the grader sends pickles (it trusts itself), and every
reply is JSON (`_plain`), which the grader reads as data and nothing else. What a probe
measures here is only as good as the kit it runs on, so the kit (and NumPy's and JAX's
names) is snapshotted before any cell runs; once a cell or a call has changed it, every
reply says so (`tampered`) and the grader trusts no probe here again.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import sys
from typing import IO, Any

from jaxtour.exercises import _worker
from jaxtour.exercises._plain import tagged

_OUTPUT = 20_000  # characters of a cell's printed output sent back


def main() -> int:
    """Run the grader's requests from stdin until it closes; reply on a copy of stdout."""
    channel_in = os.fdopen(os.dup(0), "rb")
    channel_out = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # an answer's input() reads nothing
    os.dup2(2, 1)  # what C code prints cannot reach the channel
    import jaxtour.exercises  # noqa: F401  (the kit, as the notebook's cells import it)

    guard, run = _Guard(), serve  # held here, before any cell can rebind the module's
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    _reply(channel_out, {"ready": True})
    while True:
        try:
            request = _worker.receive(channel_in)
        except EOFError:
            return 0
        said = {**run(request, namespace), **guard.after(request)}
        _reply(channel_out, {**said, "seq": request.get("seq")})


class _Guard:
    """The kit as it was before any submitted code ran, and who first changed it."""

    def __init__(self) -> None:
        self.before = _worker.snapshot()
        self.snapshot, self.changed = _worker.snapshot, _worker.changed
        self.tampered: str | None = None

    def after(self, request: dict) -> dict:
        """`{"tampered": what changed, and where}` once the kit has changed, else {}."""
        if self.tampered is None:
            touched = self.changed(self.before, self.snapshot())
            if touched:
                names = ", ".join(f"`{name}`" for name in touched[:3])
                cell = request.get("cell")
                where = (
                    f"the cell {cell}" if cell else f"a call of `{request.get('name')}`"
                )
                self.tampered = f"{where} changed {names}"
        return {} if self.tampered is None else {"tampered": self.tampered}


def _reply(stream: IO[bytes], message: dict) -> None:
    data = json.dumps(message).encode()
    stream.write(_worker.HEADER.pack(len(data)) + data)
    stream.flush()


def serve(request: dict, namespace: dict[str, Any]) -> dict:
    """Run one request: a cell's source (`exec`) or a call of an answer (`call`)."""
    if request["op"] == "exec":
        return _run_cell(request["source"], request["cell"], namespace)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            return {"value": tagged(_call(request, namespace))}
    except BaseException as err:  # whatever the answer raised is its own failure
        return _raised(err)


def _call(request: dict, namespace: dict[str, Any]) -> Any:
    name = request["name"]
    if name not in namespace:
        raise _Undefined(name)
    fn, probe = namespace[name], request["probe"]
    if probe is None:
        return fn(*request["args"], **request["kwargs"])
    return probe(fn, *request["args"], **request["kwargs"])


class _Undefined(Exception):
    pass


def _raised(err: BaseException) -> dict:
    from jaxtour.exercises._registry import Wrong
    from jaxtour.exercises._verdict import said_by

    if isinstance(err, _Undefined):
        return {"undefined": str(err)}
    if isinstance(err, Wrong):
        return {"wrong": str(err) or "not right yet."}
    return {"raised": said_by(err), "kind": _kind(err)}


def _kind(err: BaseException) -> str:
    if isinstance(err, NotImplementedError):
        return "not done"
    if isinstance(err, TypeError | AttributeError) and "ellipsis" in str(err):
        return "not done"
    return "error"


def _run_cell(source: str, cell: str, namespace: dict[str, Any]) -> dict:
    from jaxtour.lesson import python_of

    out = io.StringIO()
    error = None
    try:
        code = compile(python_of(source), cell, "exec")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(code, namespace)
    except BaseException as err:
        error = [type(err).__name__, " ".join(str(err).split())[:500]]
    return {"out": out.getvalue()[:_OUTPUT], "error": error}


if __name__ == "__main__":
    sys.exit(main())
