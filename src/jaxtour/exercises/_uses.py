"""What an answer uses, its own helpers included: the JAX function a checker bans
(`jax.grad` where the task is to build it from `jax.vjp`) or requires (`jax.vmap`).

What the answer's code reaches (an alias, `g = jax.grad`; a default argument; an
attribute, `tools.g`; a helper it calls, a method of its class) lives where the answer
lives, so it is asked there, with the probe `uses`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jaxtour.exercises._probes import uses
from jaxtour.exercises._remote import in_answer


@dataclass(frozen=True)
class Use:
    """One use of a wanted name: `name` spelt (alias "") or held by the variable
    `alias`, in the answer itself (helper "") or in its helper `helper`.

    Example:
        >>> Use("grad", "g", "helper").where
        ' (as `g`, in `helper`)'
        >>> Use("grad", "", "").where
        ''
    """

    name: str
    alias: str = ""
    helper: str = ""

    @property
    def where(self) -> str:
        """Where the answer uses it, in words for a message ("" for its own code)."""
        said = [f"as `{self.alias}`"] * bool(self.alias)
        said += [f"in `{self.helper}`"] * bool(self.helper)
        return f" ({', '.join(said)})" if said else ""


def first_use(fn: Callable, wanted: dict[str, Any]) -> Use | None:
    """The first of `wanted` (a name: the object it names, `{"grad": jax.grad}`, in
    order) that `fn` or one of its own helpers uses, spelt or held by another name;
    None when none is. Read from the code, never run: aliases, imports, default
    arguments, `functools.partial`, attributes, list and dict items and the methods of
    the student's classes are followed, and `T().g` where a class it reaches holds
    `g`. An attribute spelt like a wanted name off what reading cannot tell
    (`m.grad` with `m` an argument, a loop's or a `with`'s variable or `jax if c else
    np`; `mk().grad`, `__import__("jax").grad`, `sys.modules["jax"].grad`) is a use,
    unless a class the answer reaches defines an attribute of that name (a named
    tuple's or dataclass field, an annotation, a property, method or slot) or their
    code assigns one: their record's field `r.grad` is not JAX's.
    Not found: a name built at run time (`getattr(jax, "grad")`, `eval`),
    the wanted function under another name read off what a call returns
    that no class reached holds (`make().g`), or held by a variable given different
    values on different paths (`g = jax.grad if c else h`), `grad` read off something
    unknown where a class of theirs also defines `grad`, computed keys and nested
    containers. None of the student's code runs.
    """
    found = [Use(*use) for use in in_answer(fn, uses, wanted)]
    order = list(wanted)
    return min(found, key=lambda use: order.index(use.name), default=None)
