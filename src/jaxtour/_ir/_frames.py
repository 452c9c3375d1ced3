"""The user's call stack behind an equation: which of their functions and methods made it.

JAX records, for every equation, the Python traceback at the moment it was traced
(`eqn.source_info.traceback`, a public attribute of `jax.extend.source_info_util`'s
`SourceInfo`). Frames inside JAX, Flax, Equinox, Optax, NumPy, jaxtour, the standard
library or any installed package are the libraries'; the rest are the user's. A model's
structure is then read from the user's frames alone, with no adapter per framework: the
`Block.__call__` that called `CausalSelfAttention.__call__` that called a library's
`Linear.__call__` (the *entry*, the first library frame the user's code called).
"""

from __future__ import annotations

import functools
import itertools
import linecache
import os
import re
import sysconfig
from typing import Any, NamedTuple

# a transformation's frame of a name stack, `transpose(jvp(loss))`: not a scope
# that a user named `transpose_heads` or `transpose`
_TRANSPOSED = re.compile(r"(?:^|[/(])transpose\(")


class Frame(NamedTuple):
    """One frame of an equation's call stack: a function running at a line."""

    file: str
    line: int
    function: str  # the qualified name: `Block.__call__`, `loss`
    callee: str = ""  # what this frame was calling: `self.fc1`, `blk`, `jnp.tanh`
    at: int = 0  # the bytecode offset of that call: orders two calls on one line

    @property
    def attribute(self) -> str:
        """The name the caller gave what it called: `fc1` for `self.fc1(h)`."""
        return self.callee.rpartition(".")[2]

    @property
    def short(self) -> str:
        """`Block.__call__` as `Block`, `loss` as `loss`: how a box names the call."""
        function = self.function.rpartition("<locals>.")[2]
        owner, _, method = function.rpartition(".")
        return owner if method == "__call__" and owner else function


class Stack(NamedTuple):
    """The user's frames (outermost first) and the library function they entered."""

    frames: tuple[Frame, ...]
    entry: Frame | None
    backward: bool = False  # made by transposing (the backward pass of a grad)
    scope: str = ""  # the innermost name of the name stack: Linen's `hidden`, a
    # `jax.named_scope`'s name


@functools.cache
def _library_roots() -> tuple[str, ...]:
    import importlib.util

    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")}
    for name in ("jax", "jaxlib", "flax", "equinox", "optax", "numpy", "jaxtour"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            roots.update(spec.submodule_search_locations)
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots))


@functools.lru_cache(maxsize=4096)
def is_library(file: str) -> bool:
    """Whether `file` belongs to a library (installed, standard, or jaxtour itself)."""
    if file.startswith("<frozen") or not file:
        return True
    if file.startswith("<"):  # <string>, <ipython-input-…>: typed by the user
        return False
    return os.path.realpath(file).startswith(_library_roots())


_CALLEE = re.compile(r"\s*([A-Za-z_][\w.]*)\s*(?:\(|\[)")


@functools.lru_cache(maxsize=65536)
def _callee(code: Any, lasti: int) -> str:
    """The callee's expression of the call `code` is running at `lasti` (`self.fc1`),
    read from the instruction's source position; "" when Python keeps none."""
    try:
        line, _, col, _ = next(itertools.islice(code.co_positions(), lasti // 2, None))
    except Exception:  # positions are best effort (python -X no_debug_ranges)
        return ""
    if line is None or col is None:
        return ""
    text = linecache.getline(code.co_filename, line)
    match = _CALLEE.match(text, col)
    return match[1] if match else ""


def _raw(traceback: Any) -> list[tuple[Frame, Any, int]]:
    """The traceback's frames, outermost first, each with its code object and offset
    (None and 0 where jaxlib gives none)."""
    frames = list(getattr(traceback, "frames", None) or ())
    try:
        codes, lastis = traceback.raw_frames()
    except Exception:  # a jaxlib without raw frames: no callee names
        codes, lastis = [None] * len(frames), [0] * len(frames)
    return [
        (Frame(f.file_name, int(f.line_num), f.function_name), code, int(lasti))
        for f, code, lasti in zip(
            reversed(frames), reversed(codes), reversed(lastis), strict=False
        )
    ]


def _named(frame: Frame, code: Any, lasti: int) -> Frame:
    """`frame` with what it was calling and where in its bytecode (an op's location
    gives no bytecode: the column of the call names the callee)."""
    if code is None:
        return frame._replace(
            callee=_callee_at(frame.file, frame.line, lasti) * bool(lasti)
        )
    return frame._replace(callee=_callee(code, lasti), at=lasti)


def public(function: str) -> bool:
    """A function worth naming (`Linear.__call__`, `softmax`, `Optimizer.update`), not
    plumbing (`_forward_operator_to_aval.<locals>.op`, a decorator's wrapper)."""
    name = function.rpartition(".")[2]
    return "<" not in function and (not name.startswith("_") or name == "__call__")


def user_stack(eqn: Any) -> Stack:
    """The user's frames that made `eqn`, outermost first, and the library entry: the
    first public function of a library that the innermost user frame called.

    Empty when JAX kept no traceback (equations made by a transformation's rules).
    """
    try:
        raw = _raw(eqn.source_info.traceback)
        names = str(eqn.source_info.name_stack)
    except Exception:  # source info is best effort: a picture without it is still right
        return Stack((), None)
    return _stack(raw, names, bool(_TRANSPOSED.search(names)))


def op_stack(frames: tuple[Frame, ...], op_name: str = "") -> Stack:
    """As `user_stack`, for an op of StableHLO or compiled HLO: the frames its location
    holds (outermost first, `at` the column of the call) and its op name
    (`jit(loss)/transpose(jvp(MLP))/hidden/dot_general`)."""
    names = op_name.rpartition("/")[0]
    # a compiled module's frame table may repeat a frame (a loop's body under
    # `lax.scan`): one call, one frame
    frames = tuple(f for i, f in enumerate(frames) if i == 0 or f != frames[i - 1])
    raw = [(f._replace(at=0), None, f.at) for f in frames]
    return _stack(raw, names, bool(_TRANSPOSED.search(names)))


def _stack(raw: list[tuple[Frame, Any, int]], names: str, backward: bool) -> Stack:
    user = [i for i, (f, _, _) in enumerate(raw) if not is_library(f.file)]
    if not user:
        return Stack((), None, backward)
    entry = next((f for f, _, _ in raw[user[-1] + 1 :] if public(f.function)), None)
    scope = _SCOPE.search(names)
    return Stack(
        tuple(_named(*raw[i]) for i in user),
        entry,
        backward,
        scope[1] if scope else "",
    )


@functools.lru_cache(maxsize=65536)
def _callee_at(file: str, line: int, column: int) -> str:
    """The callee's expression of a call starting at `column` of `line` (`self.fc1`)."""
    match = _CALLEE.match(linecache.getline(file, line), column)
    return match[1] if match else ""


# the last name of a name stack when it is a plain name (`jvp(MLP)/hidden`: `hidden`),
# not a transformation's (`jit(step)`)
_SCOPE = re.compile(r"(?:^|/)([A-Za-z_]\w*)$")


def common_stack(stacks: list[Stack]) -> Stack:
    """The calls `stacks` share (the ops XLA fused into one kernel): their frames while
    all are one call, then the function they all run in (its latest line), and the
    library entry only when every stack enters the same function from one call.

    Example:
        >>> loss = Frame("m.py", 9, "loss")
        >>> a = Stack((loss._replace(line=3), Frame("m.py", 2, "dense")), None)
        >>> b = Stack((loss._replace(line=4), Frame("m.py", 7, "norm")), None)
        >>> common_stack([a, b]).frames
        (Frame(file='m.py', line=4, function='loss', callee='', at=0),)
    """
    shared: list[Frame] = []
    for level in zip(*(s.frames for s in stacks), strict=False):
        if len(set(level)) == 1:
            shared.append(level[0])
            continue
        if len({(f.file, f.function) for f in level}) == 1:
            shared.append(max(level, key=lambda f: (f.line, f.at)))
        break
    first = stacks[0]
    entries = {(s.entry.file, s.entry.function) if s.entry else None for s in stacks}
    same = len(entries) == 1 and all(s.frames == tuple(shared) for s in stacks)
    return Stack(
        tuple(shared),
        first.entry if same else None,
        all(s.backward for s in stacks),
        first.scope if all(s.scope == first.scope for s in stacks) else "",
    )
