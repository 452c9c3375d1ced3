"""Equations grouped by the user's own calls: each method or function becomes a group.

`code_groups(eqns)` reads every equation's user call stack (`_ir.user_stack`) and nests
the equations the way the code nested its calls: `Block` holds `CausalSelfAttention`
holds the library's `Linear` its `self.qkv(x)` called. One call is one group: two
blocks called from the same line of a loop are two groups, told apart because the
second one starts again at (or before) the first line and bytecode offset the first
one ran. Groups of fewer
than three equations, and groups holding nothing but one other group, are dissolved into
their parent, so every box in a picture stands for at least two equations.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from collections.abc import Callable, Iterator
from typing import Any

from jaxtour import _ir

SMALLEST = 3  # a call that made fewer equations is drawn as its equations


@dataclasses.dataclass(eq=False)
class Group:
    """One call of the user's code: the equations it made, nested as its calls were."""

    label: str  # `Block.fc1`, `CausalSelfAttention`, `loss`
    kind: str  # what was called: `Linear`, `Block`, `loss`
    where: str  # the call site: `model.py:29`
    items: list = dataclasses.field(default_factory=list)  # eqns and Groups, in order
    own: bool = (
        True  # a call of the user's own code, not the library function it entered
    )

    def groups(self) -> list[Group]:
        return [i for i in self.items if isinstance(i, Group)]

    def eqns(self) -> Iterator[Any]:
        """Every equation inside, nested groups included, in order."""
        for item in self.items:
            if isinstance(item, Group):
                yield from item.eqns()
            else:
                yield item

    def size(self) -> int:
        return sum(1 for _ in self.eqns())


class _Open:
    """A group being filled while the equations are read: its key and lines seen."""

    def __init__(self, key: tuple, group: Group, line: tuple) -> None:
        self.key, self.group, self.first, self.last = key, group, line, line


def _levels(stack: _ir.Stack) -> list[tuple[tuple, tuple, Group]]:
    """(key, where that level runs: (line, offset), a fresh group) for each level.

    The backward pass (equations a grad's transpose made) runs the calls again, in
    reverse: its groups are apart from the forward ones, and their lines run backwards.
    """
    out, frames, back = [], stack.frames, stack.backward
    for i, frame in enumerate(frames):
        key = (back, *frames[:i], (frame.file, frame.function))
        caller = frames[i - 1] if i else None
        line = (-frame.line, -frame.at) if back else (frame.line, frame.at)
        out.append((key, line, _group(frame.short, caller, back)))
    if stack.entry is not None and frames:
        key = (back, *frames, (stack.entry.file, stack.entry.function))
        line = (
            (-stack.entry.line, -stack.entry.at)
            if back
            else (stack.entry.line, stack.entry.at)
        )
        group = _group(stack.entry.short, frames[-1], back)
        group.own = False
        scope = stack.scope
        if scope and not frames[-1].callee.startswith("self.") and scope != group.kind:
            # a module the name stack names (Linen's `hidden`): `LinenMLP.hidden`
            group.label = f"{frames[-1].short}.{scope}" + (" (backward)" * back)
            key = (*key, scope)
        out.append((key, line, group))
    return out


def _group(kind: str, caller: _ir.Frame | None, backward: bool) -> Group:
    where = f"{os.path.basename(caller.file)}:{caller.line}" if caller else ""
    attr = caller.attribute if caller is not None else ""
    owner = caller.short if caller is not None else ""
    named = caller is not None and caller.callee.startswith("self.") and owner
    label = f"{owner}.{attr}" if named else kind
    return Group(label + (" (backward)" if backward else ""), kind, where)


def code_groups(
    eqns: list, name: str = "", stack: Callable[[Any], _ir.Stack] = _ir.user_stack
) -> Group:
    """The equations `eqns` (in program order) nested by the user's calls.

    `stack(item)` reads an item's call stack: `_ir.user_stack` for equations; for the
    ops of StableHLO or compiled HLO, their location's (`_ir.op_stack`).
    Returns the root group (labelled `name`); every equation is in exactly one group.
    """
    root = Group(name, name, "")
    opened: list[_Open] = []
    loose: set[int] = set()  # items with no traceback outside every call
    for eqn in eqns:
        levels = _levels(stack(eqn))
        if not levels:  # no traceback (made by a rule): stays where the last one was
            (opened[-1].group if opened else root).items.append(eqn)
            loose |= set() if opened else {id(eqn)}
            continue
        keep = 0
        for held, (key, line, _) in zip(opened, levels, strict=False):
            if held.key != key or (line < held.last and line <= held.first):
                break  # another call, or the same line called again (a loop)
            held.last = max(held.last, line)
            keep += 1
        del opened[keep:]
        for key, line, group in levels[keep:]:
            (opened[-1].group if opened else root).items.append(group)
            opened.append(_Open(key, group, line))
        opened[-1].group.items.append(eqn)
    return _tidy(_strip(root, loose))


def call_label(stack: _ir.Stack, levels: int = 1) -> str:
    """What a box of the innermost call of `stack` is labelled (`Block.fc1`); "" when
    the stack has fewer than `levels` calls (2: only the function drawn)."""
    found = _levels(stack)
    return found[-1][2].label if len(found) >= levels else ""


def runs_call(eqn: Any, own: _ir.Stack) -> str:
    """`runs Cell` for an equation (a scan, a loop, a call; its stack `own`) whose
    inner equations all sit in a call of the user's code other than its own: what
    it runs, by name; else ""."""
    inner = [
        stack
        for sub in _ir.sub_jaxprs(eqn)
        for _, e in _ir.walk(sub.jaxpr)
        if (stack := _ir.user_stack(e)).frames
    ]
    if not inner:
        return ""
    shared = _ir.common_stack(inner)
    if not shared.frames:
        return ""
    # a body traced on its own may hold only its own frames: compare where each ends
    last = shared.frames[-1]
    same = any(
        (f.file, f.function) == (last.file, last.function) for f in own.frames[-1:]
    )
    return "" if same else f"runs {call_label(shared)}"


def names_own_code(tree: Group) -> bool:
    """Whether a box of `tree` would name the user's own code: a call of their
    function or method (`predict`, `Block`), or a library layer they named
    (`Block.fc1`), not only a library function (`softmax`)."""
    return any(
        g.own or g.label.split(" ")[0] != g.kind or names_own_code(g)
        for g in tree.groups()
    )


def _strip(root: Group, loose: set[int]) -> Group:
    """Calls that hold every equation (the traced function, the caller of the
    drawing), but for `loose` ones without a traceback (an HLO module's
    parameters), are the picture itself, not boxes in it."""
    while True:
        held = [i for i in root.items if id(i) not in loose]
        if len(held) == 1 and isinstance(held[0], Group):
            at = root.items.index(held[0])
            root.items[at : at + 1] = held[0].items
        elif _one_function(held):  # its backward pass beside it
            root.items = [j for i in root.items for j in _unwrap(i, held)]
        else:
            return root


def _one_function(items: list) -> bool:
    """The forward and the backward pass of the function drawn (`f`, `f (backward)`);
    not one function called in a loop (`layer`, `layer`: two calls, two boxes)."""
    if not all(isinstance(i, Group) for i in items):
        return False
    labels = {i.label for i in items}
    forward = min(labels, key=len) if labels else ""
    return labels == {forward, f"{forward} (backward)"}


def _unwrap(item: Any, groups: list) -> list:
    return item.items if any(item is g for g in groups) else [item]


def _tidy(group: Group) -> Group:
    """Dissolve groups of fewer than `SMALLEST` equations and groups that only wrap
    one other group."""
    items: list = []
    for item in group.items:
        if not isinstance(item, Group):
            items.append(item)
            continue
        _tidy(item)
        if item.size() < SMALLEST:
            items.extend(item.items)
        elif len(item.items) == 1:
            items.append(item.items[0])
        else:
            items.append(item)
    group.items = items
    _number_repeats(group)
    return group


def _number_repeats(group: Group) -> None:
    """Siblings of one name (two `Block`s called in a loop) are numbered: `Block 1`."""
    names = collections.Counter(g.label for g in group.groups())
    seen: collections.Counter = collections.Counter()
    for child in group.groups():
        if names[child.label] > 1:
            seen[child.label] += 1
            child.label = f"{child.label} {seen[child.label]}"
