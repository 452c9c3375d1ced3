"""The checker process: where a student's answer runs, away from the student's kernel.

`_pool` starts it with `JAX_NUM_CPU_DEVICES` and `JAX_PLATFORMS=cpu` set; it imports the
kit, says it is ready, then answers jobs until its input closes. A job is a cloudpickled
`(Exercise, answer)`; the reply is the verdict and what the answer printed. Before
each job the kit's module dictionaries (and NumPy's and JAX's, which the checkers
compare with) are snapshotted; a verdict reached after the answer changed any of them
is refused, and the parent replaces this process. Messages are framed pickles (an
8-byte length, then the bytes) on the process's own stdin and a copy of its stdout.
"""

from __future__ import annotations

import contextlib
import io
import pickle
import struct
import sys
import threading
import types
import warnings
from collections.abc import Callable
from typing import IO, Any

HEADER = struct.Struct(">Q")
LIMIT = 1 << 28  # bytes one message may hold (256 MiB): a larger one is refused
_WATCHED = ("builtins", "numpy", "numpy.testing", "jax", "jax.numpy", "jax.lax")
Snapshot = dict[str, dict[str, tuple[Any, ...]]]


def send(
    stream: IO[bytes], message: Any, dumps: Callable[[Any], bytes] | None = None
) -> None:
    """Write one framed message to `stream` (a pickle, unless `dumps` says otherwise)."""
    data = (dumps or _pickled)(message)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def _pickled(message: Any) -> bytes:
    return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def receive(stream: IO[bytes], loads: Callable[[bytes], Any] = pickle.loads) -> Any:
    """Read one framed message from `stream` and `loads` it; EOFError when it closed
    (or announced more than `LIMIT` bytes)."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        raise EOFError
    (size,) = HEADER.unpack(header)
    data = stream.read(size) if size <= LIMIT else b""
    if len(data) < size:
        raise EOFError
    return loads(data)


def snapshot() -> Snapshot:
    """Every watched module's names and the objects they hold, with each function's
    code and defaults and each class's attributes (held, so no id is reused)."""
    taken: Snapshot = {}
    names = [m for m in list(sys.modules) if m.startswith("jaxtour")]
    for name in [*names, *_WATCHED]:
        module = sys.modules.get(name)
        if isinstance(module, types.ModuleType):
            taken[name] = _contents(vars(module))
    from jaxtour.exercises import _registry

    taken["the exercise registry"] = {k: (v,) for k, v in _registry._REGISTRY.items()}
    return taken


def _contents(namespace: dict) -> dict[str, tuple[Any, ...]]:
    contents = {}
    for key, value in list(namespace.items()):
        held: tuple[Any, ...] = (value, *_code_of(value))
        if isinstance(value, type) and value.__module__.startswith("jaxtour"):
            held = (value, *vars(value).values())
        elif callable(value) and not isinstance(value, type | types.FunctionType):
            held = (value, *_wrapped_code(value))
        contents[key] = held
    return contents


def _code_of(fn: Any) -> tuple[Any, ...]:
    if not isinstance(fn, types.FunctionType):
        return ()
    return (fn.__code__, fn.__defaults__, fn.__kwdefaults__)


def _wrapped_code(wrapper: Any) -> tuple[Any, ...]:
    """The Python function a callable wraps (`jax.jit`'s `__wrapped__`, NumPy's
    dispatcher's `_implementation`) with its code: patching that code is a patch too."""
    held: tuple[Any, ...] = ()
    for name in ("__wrapped__", "_implementation"):
        try:
            inner = getattr(wrapper, name, None)
        except Exception:  # an attribute that raises: nothing to watch
            continue
        if isinstance(inner, types.FunctionType):
            held += (inner, *_code_of(inner))
    return held


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """The watched modules whose names were reassigned, deleted, or given a new value
    other than a submodule (importing `jaxtour.mlp` adds `mlp` to `jaxtour`: not a patch)
    or a new dunder name (pybind11 extensions, which Flax imports, add
    `__pybind11_internals_...__` to `builtins`; `warnings` adds `__warningregistry__`)."""
    return [name for name, was in before.items() if _differs(was, after.get(name, {}))]


def _differs(was: dict[str, tuple[Any, ...]], now: dict[str, tuple[Any, ...]]) -> bool:
    for key, held in was.items():
        other = now.get(key, ())
        if len(held) != len(other) or any(
            a is not b for a, b in zip(held, other, strict=True)
        ):
            return True
    return any(
        key not in was and not _added_quietly(key, held[0]) for key, held in now.items()
    )


def _added_quietly(key: str, value: Any) -> bool:
    dunder = key.startswith("__") and key.endswith("__")
    return dunder or isinstance(value, types.ModuleType)


def run_job(job: dict) -> dict:
    """Load the answer, run its checker, and refuse the verdict if the kit changed."""
    import cloudpickle
    import jax

    from jaxtour.exercises._probes import python_function
    from jaxtour.exercises._verdict import verdict

    before = snapshot()
    threads = threading.active_count()
    out, err = io.StringIO(), io.StringIO()
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            if job["quiet"]:
                warnings.simplefilter("ignore")
            exercise, answer = _loaded(cloudpickle.loads, job["payload"])
            for fn, filename in zip(
                (exercise.checker, python_function(answer)), job["files"], strict=True
            ):
                _refile(fn, filename)
            with jax.enable_x64(job.get("x64", False)):  # as in the student's kernel
                result = verdict(exercise, answer)
    except BaseException as error:  # loading the answer failed, or it broke the worker
        result = _not_run(error)
    touched = changed(before, snapshot())
    if touched or threading.active_count() > threads:
        return {"verdict": _refused(touched), "tainted": True}
    return {"verdict": result, "out": out.getvalue(), "err": err.getvalue()}


class _NotLoaded(Exception):
    """The answer was sent, but what it uses could not be rebuilt here."""


def _loaded(loads: Callable[[bytes], Any], payload: bytes) -> Any:
    try:
        return loads(payload)
    except Exception as error:
        said = " ".join(str(error).split())[:200]
        raise _NotLoaded(f"{type(error).__name__}: {said}") from None


def _not_run(error: BaseException) -> tuple[bool, str, str]:
    if isinstance(error, _NotLoaded):
        return (
            False,
            "not right yet: your function could not be copied into the checker, "
            f"because it uses something that cannot be rebuilt in another process "
            f"({error}). Create that object inside the function, or pass it as an "
            "argument.",
            "error",
        )
    said = " ".join(str(error).split())[:200]
    return (
        False,
        "not right yet: your function could not be run in the checker "
        f"({type(error).__name__}: {said}).",
        "error",
    )


def _refile(fn: Any, filename: str | None) -> None:
    """Give `fn` back the file name its code had in the kernel (cloudpickle names code
    it copies "<dynamic-code>"): the verdict tells the student's code from the kit's by it."""
    if (
        isinstance(fn, types.FunctionType)
        and filename is not None
        and fn.__code__.co_filename != filename
    ):
        fn.__code__ = _code_in(fn.__code__, filename)


def _code_in(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(
        _code_in(c, filename) if isinstance(c, types.CodeType) else c
        for c in code.co_consts
    )
    return code.replace(co_filename=filename, co_consts=consts)


def _refused(touched: list[str]) -> tuple[bool, str, str]:
    what = ", ".join(f"`{name}`" for name in touched[:3]) or "a thread left running"
    return (
        False,
        f"refused: while it was checked, your answer changed the checking kit ({what}). "
        "A check is passed by a right answer, not by patching the checker: write the "
        "function without assigning to jaxtour's, NumPy's or JAX's names.",
        "refused",
    )
