"""Checkpoint policies as `grad_memory` takes them: a name, a policy object, or none.

A name is looked up in `jax.checkpoint_policies`; a policy object (`dots_saveable`, or
one a factory built, `save_only_these_names("h")`) is named for the report; a factory
passed without its arguments is refused in words, before anything is traced.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax

from jaxtour import _ir

DEFAULT = "no checkpoint"
# Names in jax.checkpoint_policies that build a policy from arguments, not policies.
_FACTORY_PREFIXES = ("save_", "offload_")
AS_WRITTEN = "as written (its own jax.checkpoint)"


def resolve(policy: Any) -> tuple[str, Any]:
    """(label, policy function or None) for a name, a policy object, or DEFAULT.

    Raises:
        ValueError: an unknown name, or a factory passed without its arguments.
        TypeError: neither a name nor a callable.
    """
    if policy == DEFAULT:
        return DEFAULT, None
    found = (
        getattr(jax.checkpoint_policies, policy, None)
        if isinstance(policy, str)
        else policy
    )
    name = policy if isinstance(policy, str) else _policy_name(policy)
    if isinstance(policy, str) and (found is None or not callable(found)):
        names = [n for n in dir(jax.checkpoint_policies) if n.endswith("saveable")]
        raise ValueError(
            f"{policy!r} is not a policy in jax.checkpoint_policies; use "
            f"{DEFAULT!r}, one of: {', '.join(sorted(names))}, or a policy object "
            f"(e.g. jax.checkpoint_policies.save_only_these_names('h'))."
        )
    if not callable(found):
        raise TypeError(
            f"grad_memory: a policy is a name (str) or a policy object from "
            f"jax.checkpoint_policies; got {_ir.describe(policy)}."
        )
    if name.startswith(_FACTORY_PREFIXES) and "(" not in name:
        raise ValueError(
            f"jax.checkpoint_policies.{name} builds a policy from names: call it "
            f"first, e.g. policies=[jax.checkpoint_policies.{name}('hidden')] with "
            f"the names given by jax.ad_checkpoint.checkpoint_name in f."
        )
    return name, found


def _policy_name(policy: Any) -> str:
    """`dots_saveable`, or `save_only_these_names(…)` for a policy a factory built."""
    for name in dir(jax.checkpoint_policies):
        if getattr(jax.checkpoint_policies, name) is policy:
            return name
        if getattr(jax.checkpoint_policies, name) is type(policy):  # a built object
            return f"{_snake(name)}(…)"  # named as the factory you call
    outer = getattr(policy, "__qualname__", "").split(".<locals>.")
    if len(outer) > 1:
        return f"{outer[0]}(…)"
    if hasattr(policy, "__name__"):
        return policy.__name__
    return f"{_snake(type(policy).__name__)}(…)"


def _snake(name: str) -> str:
    """SaveOnlyTheseNames -> save_only_these_names (a snake_case name is kept)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def wrap(f: Callable, policy: Any) -> Callable:
    return f if policy is None else jax.checkpoint(f, policy=policy)
