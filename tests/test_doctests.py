"""The examples in jaxtour's docstrings run, so the documentation cannot go stale."""

import doctest
import importlib
import pkgutil

import pytest

import jaxtour

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(jaxtour.__path__, "jaxtour.")
    if not info.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_the_docstring_examples_are_really_run():
    assert doctest.testmod(importlib.import_module("jaxtour._diagram")).attempted >= 3
