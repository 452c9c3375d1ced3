"""Answers that run in a process of their own, judged where they cannot reach.

`Answers` runs a submitted notebook's cells in an answer process (`_answer`) and hands
the checkers a `Remote` for each answer: a callable that runs the answer there and
returns plain data (`_plain`), so the reference, the comparison and the verdict stay in
this process. A checker that must transform the answer (`jax.jit`, `jax.grad`,
`make_jaxpr`) asks for it with `in_answer(fn, probe, ...)`: the probe runs beside the
answer and only what it returns comes back. Every wait is bounded: an answer that runs
past its exercise's deadline is killed with its process, which the next exercise
restarts; a cell that stopped its process (a timeout, an exit, a crash) fails once and
is left out of every restart. A probe's result is trusted only while
the answer process says its kit is as it started (`_answer`): once a cell or a call has
changed it, every exercise judged by a probe there is refused (`AnswerRefused`).
"""

from __future__ import annotations

import ast
import json
import linecache
import secrets
import time
import types
from collections.abc import Callable, Iterable
from typing import Any

from jaxtour.exercises import _pool
from jaxtour.exercises._plain import untagged
from jaxtour.exercises._registry import Wrong
from jaxtour.exercises._verdict import AnswerRaised, AnswerRefused, AnswerStopped

_LAUNCH = "import sys; from jaxtour.exercises._answer import main; sys.exit(main())"


def _cloudpickled(message: Any) -> bytes:
    import cloudpickle

    return cloudpickle.dumps(message)


class _AnswerProcess(_pool.Worker):
    launch = _LAUNCH
    loads = staticmethod(json.loads)
    dumps = staticmethod(_cloudpickled)

    def reply(self, left: float) -> Any:
        """The next reply, or `_pool.Stopped` after `left` seconds."""
        return self._read(left, "answer")


class Answers:
    """A submission's code cells, run in order in an answer process with `devices`
    CPU devices; each cell and each exercise may run `timeout` seconds."""

    def __init__(
        self, cells: Iterable[tuple[str, str]], devices: int, timeout: float
    ) -> None:
        self.cells = list(cells)  # (cell id, source)
        self.devices, self.timeout = devices, timeout
        self.ran: dict[
            str, dict
        ] = {}  # cell id -> {"out": ..., "error": ...}, first run
        self.deadline: float | None = None
        self.tampered: str | None = None  # who changed the answer process's kit
        self._process: _AnswerProcess | None = None

    def __enter__(self) -> Answers:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None

    def remote(self, name: str) -> Remote:
        """The answer `name` as the checker sees it (its code read, never run, here)."""
        return Remote(self, name, _code_of(name, self.cells))

    def start_exercise(self) -> None:
        """Give the next exercise its own `timeout` seconds, counted from its first call
        on a running answer process (starting one is not the answer's time)."""
        self.deadline = None

    def call(self, name: str, probe: Callable | None, args: tuple, kwargs: dict) -> Any:
        """`probe(answer, *args)` (or the answer itself) run beside the answer: its
        result as plain data.

        Raises:
            Wrong: the probe found the answer wrong.
            AnswerRaised: the answer raised, or is not defined.
            AnswerStopped: it ran past the deadline (its process is killed) or died.
            AnswerRefused: a probe was asked of a process whose kit the submission
                changed (before or during this call).
        """
        request = {
            "op": "call",
            "name": name,
            "probe": probe,
            "args": args,
            "kwargs": kwargs,
        }
        self._ask_running()
        if self.deadline is None:
            self.deadline = time.monotonic() + self.timeout
        reply = self._ask(request, self.deadline - time.monotonic())
        self.tampered = self.tampered or _said(reply, "tampered")
        if probe is not None and self.tampered:
            raise AnswerRefused(self.tampered)
        if "value" in reply:
            return untagged(reply["value"])
        if "wrong" in reply:
            raise Wrong(str(reply["wrong"]))
        if "undefined" in reply:
            raise AnswerRaised(
                f"`{name}` is not defined: run its cell (did it stop with an error?)",
                "not done",
            )
        raise AnswerRaised(str(reply.get("raised")), str(reply.get("kind", "error")))

    def _ask_running(self) -> _AnswerProcess:
        try:
            return self._running()
        except _pool.Stopped as stop:  # it could not start
            self.close()
            raise AnswerStopped(_stopped(stop, self.timeout), "error") from None

    def _ask(self, request: dict, left: float) -> dict:
        process = self._ask_running()
        try:
            if left <= 0:
                raise _pool.Stopped("no time left", timed_out=True)
            reply = self._reply_to(process, request, left)
        except _pool.Stopped as stop:
            self.close()
            raise AnswerStopped(
                _stopped(stop, self.timeout), "timeout" if stop.timed_out else "error"
            ) from None
        if not isinstance(reply, dict):
            raise AnswerRaised(
                "the answer's process sent something that is not a reply", "error"
            )
        return reply

    def _reply_to(self, process: _AnswerProcess, request: dict, left: float) -> Any:
        """The reply that echoes `request`'s number: anything else on the channel (a
        frame an answer wrote there itself) is passed over."""
        request["seq"] = secrets.randbits(
            62
        )  # unguessable: no frame written ahead matches
        deadline = time.monotonic() + left
        reply = process.ask(request, left)
        while not (isinstance(reply, dict) and reply.get("seq") == request["seq"]):
            reply = process.reply(deadline - time.monotonic())
        return reply

    def _running(self) -> _AnswerProcess:
        """The answer process, started and given every cell that never stopped one.

        A cell that stops its process (a timeout, `os._exit`, a crash) is recorded once
        and left out from then on, so each restart runs one cell fewer: at most one
        start per cell, and one more.
        """
        if self._process is not None and self._process.alive():
            return self._process
        for _ in range(len(self.cells) + 1):
            self.close()
            self._process = process = _AnswerProcess(self.devices)
            if self._run_cells(process):
                break
        return process

    def _run_cells(self, process: _AnswerProcess) -> bool:
        """Run on `process` each cell not left out; False when one stopped it."""
        for cell, source in self.cells:
            if self.ran.get(cell, {}).get("stopped"):
                continue
            request = {"op": "exec", "cell": cell, "source": source}
            try:
                said = self._reply_to(process, request, self.timeout)
            except _pool.Stopped as stop:
                error = ["Stopped", _stopped(stop, self.timeout, "cell")]
                self.ran[cell] = {"out": "", "error": error, "stopped": True}
                return False
            self.ran.setdefault(cell, _refused_in(said, self.tampered))
            self.tampered = self.tampered or _said(said, "tampered")
        return True

    def run_cells(self) -> None:
        """Run every cell once (what `ran` then holds)."""
        self._running()


def _said(reply: Any, key: str) -> str | None:
    value = reply.get(key) if isinstance(reply, dict) else None
    return None if value is None else str(value)


def _refused_in(said: Any, tampered: str | None) -> Any:
    """The cell's result, with an error saying so when it is the first to change the kit."""
    if tampered is not None or not isinstance(said, dict) or not said.get("tampered"):
        return said
    error = said.get("error") or ["Refused", f"refused: {said['tampered']}"]
    return {**said, "error": error}


def _stopped(stop: _pool.Stopped, timeout: float, what: str = "answer") -> str:
    if stop.timed_out:
        return (
            f"stopped: this {what} ran longer than {timeout:g} s. Look for a loop that never "
            "ends (a `while` whose condition stays true)."
        )
    return f"stopped: the process running your {what} ended ({stop})."


class Remote:
    """An answer living in its `Answers` process: call it with data, get data back."""

    def __init__(
        self, answers: Answers, name: str, code: types.CodeType | None
    ) -> None:
        self.__name__ = self.__qualname__ = name
        self.__code__ = code
        self._answers = answers

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._answers.call(self.__name__, None, args, kwargs)

    def run(self, probe: Callable, *args: Any, **kwargs: Any) -> Any:
        """`probe(answer, *args, **kwargs)` run beside the answer; its plain result."""
        return self._answers.call(self.__name__, probe, args, kwargs)

    def __repr__(self) -> str:
        return f"<{self.__name__}, run in its own process>"


def in_answer(fn: Callable, probe: Callable, *args: Any, **kwargs: Any) -> Any:
    """`probe(fn, *args, **kwargs)`, run where the answer `fn` lives.

    In the student's checker process that is here; when grading, `fn` is a `Remote`
    and the probe (a function of the kit, or one it can pickle) runs in the answer's
    process, returning plain data. Use it for what transforms the answer: `jax.jit(fn)`,
    `jax.grad(fn)`, `jax.make_jaxpr(fn)`.
    """
    if type(fn) is Remote:  # never `isinstance`: it asks the answer's `__class__`
        return fn.run(probe, *args, **kwargs)
    return probe(fn, *args, **kwargs)


def _code_of(name: str, cells: list[tuple[str, str]]) -> types.CodeType | None:
    """The code of the answer `name` as the cells last bind it at the top level, compiled,
    never run: a `def name`, or `name = ` a lambda, another function's name, or a call
    wrapping one (`jax.jit(f)`, `functools.partial(f, ...)`); None for anything else."""
    from jaxtour.lesson import python_of

    bound: dict[str, types.CodeType | None] = {}
    for cell, source in cells:
        text = python_of(source)
        try:
            statements = ast.parse(text).body
        except Exception:  # not Python: nothing to read
            continue
        # kept where `inspect` finds it, as IPython keeps a cell: `is_stub` reads it
        linecache.cache[cell] = (len(text), None, text.splitlines(True), cell)
        for node in statements:
            try:
                _bind(node, cell, bound)
            except Exception:  # too deep to compile: nothing to read
                continue
    return bound.get(name)


def _bind(node: ast.stmt, cell: str, bound: dict[str, types.CodeType | None]) -> None:
    """Record the code each name `node` binds at the top level holds (None: unknown)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        module = compile(ast.Module([node], []), cell, "exec")
        bound[node.name] = _function_code(module, node.name)
    elif isinstance(node, ast.Assign):
        code = _wrapped_code(node.value, cell, bound)
        for target in node.targets:
            if isinstance(target, ast.Name):
                bound[target.id] = code


def _wrapped_code(
    value: ast.expr, cell: str, bound: dict[str, types.CodeType | None]
) -> types.CodeType | None:
    if isinstance(value, ast.Lambda):
        return _function_code(compile(ast.Expression(value), cell, "eval"), "<lambda>")
    if isinstance(value, ast.Name):
        return bound.get(value.id)
    if isinstance(value, ast.Call) and value.args:  # jax.jit(f), partial(f, 2.0)
        return _wrapped_code(value.args[0], cell, bound)
    return None


def _function_code(code: types.CodeType, name: str) -> types.CodeType | None:
    found = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return next((c for c in found if c.co_name == name), None)
