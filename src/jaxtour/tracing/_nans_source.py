"""Where a bad value `find_nans` met came in: an argument, a literal, a constant, or a
value the program computed from constants alone (and from which static argument).

A static argument is a Python value while `f` is traced. What `f` computes from it
with `jnp` is staged into the jaxpr with the value as a literal (`log -1.0`); what it
computes with NumPy is computed before tracing and enters as a constant, as an array
`f` closes over does. A literal is named with the static argument it equals; a constant
is named by the static argument that, changed, changes it (`_ir.made_from_static`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jaxtour import _ir
from jaxtour.tracing._step_through import Steps


@dataclass
class Sources:
    """Names where a value of `steps`' run came in. `statics` holds `f`'s static
    arguments by name; `made_from(value)` names the static argument a constant
    holding `value` was computed from (`_ir.made_from_static`), None if it cannot."""

    steps: Steps
    statics: dict[str, Any] = field(default_factory=dict)
    made_from: Callable[[Any], tuple | None] | None = None

    def describe(self, atom: Any, value: Any) -> str:
        """An argument's name, a literal, a constant, or the step that made `atom`'s
        value from constants alone."""
        run = self.steps.run
        names = dict(zip(map(id, run.invars), self.steps.arg_names, strict=True))
        if id(atom) in names:
            return f"the argument `{names[id(atom)]}`"
        if _ir.is_literal(atom):
            return "a literal in the program"
        if (step := self._made_by(atom, _ir.nonfinite(value, False))) is not None:
            return self._computed(step)
        return self._constant(value)

    def _made_by(self, atom: Any, nan: bool) -> Any:
        """The first step, among those `atom` was computed from, that made a NaN
        (`nan`) or else an Inf (None when no step made `atom`: a constant)."""
        maker = {v: s for s in self.steps for v in s.outvars}
        if atom not in maker:
            return None
        seen, frontier = {}, [maker[atom]]
        while frontier:
            step = frontier.pop()
            if step.index not in seen:
                seen[step.index] = step
                frontier += [
                    maker[a]
                    for a in step.invars
                    if not _ir.is_literal(a) and a in maker
                ]
        bad = [
            s
            for _, s in sorted(seen.items())
            if any(_ir.nonfinite(v, not nan) for v in s.outputs)
        ]
        return bad[0] if bad else maker[atom]

    def _computed(self, step: Any) -> str:
        literals = [self._literal(a) for a in step.invars if _ir.is_literal(a)]
        of = f" of {', '.join(literals)}" if literals else ""
        return f"a value made from constants alone by step {step.index}, {step.primitive}{of}"

    def _literal(self, atom: Any) -> str:
        """The literal's number, and the static argument it equals (a literal in
        `f`'s code may equal one by chance, so it is not said to come from it)."""
        text = _ir.literal_str(atom)
        value = np.asarray(atom.val)
        for name, static in self.statics.items():
            if _is_number(static) and value.ndim == 0 and value.item() == static:
                return f"{text} (equal to the static argument `{name}`)"
        return text

    def _constant(self, value: Any) -> str:
        name = self.steps.name
        if self.made_from is None:
            return f"a constant {name} closes over (or one computed from constants)"
        if (static := self.made_from(value)) is not None:
            return (
                f"a constant made from the static argument `{static[0]}` "
                f"(= {static[1]!r}) before tracing (outside the jaxpr)"
            )
        return (
            f"a constant made before tracing (outside the jaxpr), from a static "
            f"argument or a value {name} closes over"
        )


def statics_given(
    f: Callable, args: tuple, kwargs: dict, statics: _ir.StaticArgs
) -> dict[str, Any]:
    """The static arguments of this call, by name."""
    names = _ir.arg_names(f, len(args))
    given = {names[i]: args[i] for i in sorted(statics.positions(len(args)))}
    return given | {k: v for k, v in kwargs.items() if k in statics.names}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
