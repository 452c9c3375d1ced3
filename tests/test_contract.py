"""The visualiser contract (CONTRIBUTING): `draw_*(f, <what JAX takes positionally>, *,
display options)`; the same option has the same default everywhere."""

import inspect

import pytest

from jaxtour import _options, autodiff, viz

# What JAX itself takes positionally beside `f` (jax.grad(f, argnums, has_aux,
# holomorphic, allow_int); jax.vjp's cotangents come with the call, so draw_vjp takes
# them early).
POSITIONAL = {
    "draw_grad": ["f", "argnums", "has_aux", "holomorphic", "allow_int"],
    "draw_vjp": ["f", "cotangents"],
    "draw_sharding": ["x"],
}
DRAWERS = {
    name: getattr(module, name)
    for module in (viz, autodiff)
    for name in module.__all__
    if name.startswith(("draw_", "compare_"))
}
SHARED = {
    "rankdir": "TB",
    "max_depth": _options.MAX_DEPTH,
    "values": True,
    "static_argnums": (),
    "static_argnames": (),
    "has_aux": False,
    "edge_labels": None,
    "expand_pytrees": None,
}


def test_every_visualiser_is_covered():
    assert {
        "draw_jaxpr",
        "draw_hlo",
        "draw_grad",
        "draw_jvp",
        "draw_vjp",
        "draw_pipeline",
        "compare_stages",
        "draw_ai_stack",
    } <= set(DRAWERS)


@pytest.mark.parametrize("name", sorted(DRAWERS))
def test_display_options_are_keyword_only(name):
    parameters = inspect.signature(DRAWERS[name]).parameters.values()
    positional = [p.name for p in parameters if p.kind is not p.KEYWORD_ONLY]
    assert positional == POSITIONAL.get(name, ["f"] if "f" in positional else [])


@pytest.mark.parametrize("name", sorted(DRAWERS))
def test_the_same_option_has_the_same_default(name):
    parameters = inspect.signature(DRAWERS[name]).parameters
    for option, default in SHARED.items():
        if option in parameters:
            assert parameters[option].default == default, (name, option)


@pytest.mark.parametrize("name", ["draw_grad", "draw_vjp", "draw_jvp"])
def test_a_misspelt_display_option_is_named_with_the_right_ones(name):
    with pytest.raises(TypeError) as info:
        DRAWERS[name](abs, rankdr="LR")
    assert str(info.value) == (
        f"{name}() got an unexpected keyword argument 'rankdr'; its display options "
        "are values, rankdir, max_depth, max_eqns, expand_pytrees, max_width."
    )


def test_autodiff_drawers_list_the_same_display_options():
    expected = {
        "values": True,
        "rankdir": "TB",
        "max_depth": _options.MAX_DEPTH,
        "max_eqns": 150,
        "expand_pytrees": None,
        "max_width": 5000,
    }
    assert list(expected) == list(autodiff.Display.__annotations__)
    for name in ("draw_grad", "draw_vjp", "draw_jvp"):
        parameters = inspect.signature(DRAWERS[name]).parameters.values()
        options = {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY}
        for jit_option in ("has_aux", "static_argnums", "static_argnames"):
            options.pop(jit_option, None)
        assert options == expected, name


def test_draw_grad_takes_positionally_what_jax_grad_does():
    # jax.grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes): the kit
    # leaves out only reduce_axes, which JAX refuses (NotImplementedError: deprecated)
    import jax

    jax_grad = list(inspect.signature(jax.grad).parameters)
    ours = POSITIONAL["draw_grad"]
    assert jax_grad[: len(ours)] == ["fun", *ours[1:]]
