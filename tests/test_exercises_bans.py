"""A ban (`jax.grad` where the task is to build it from `jax.vjp`) and a requirement
(`jax.vmap`) read whatever the answer reaches: a default argument, what a
`functools.partial` binds, an attribute of a module, namespace or object, an item of a
dict, a function in the student's own module, a method of the student's class that
their code names (and its special methods). An answer reaching the banned function so
is told it uses it, and the student's own function that only shares its name is not
blamed, nor a method of theirs that nothing calls. `getattr(jax, "grad")` is not seen."""

import jax
import pytest
from test_exercises_answers import _graded
from test_exercises_speed import answer

from jaxtour.exercises import check, first_use

# a right answer's body: `grad` built from `jax.vjp`
BY_VJP = """    y, pull = jax.vjp(f, x)
    return pull(jnp.ones_like(y))[0]
"""
TOOLS = """class Tools:
    @staticmethod
    def static(f):
        return jax.grad(f)

    def method(self, f):
        return self.pulled(f)

    def pulled(self, f):
        return jax.grad(f)

"""
CALLABLE = """class Gradient:
    def __call__(self, f):
        return jax.grad(f)

"""
SET_IN_INIT = """class Tools:
    def __init__(self):
        self.g = jax.grad

"""
EVADING = {
    "a default": (
        "def ex_grad_from_vjp(f, x, g=jax.grad):\n    return g(f)(x)",
        "as `g`",
    ),
    "a keyword-only default": (
        "def ex_grad_from_vjp(f, x, *, g=jax.grad):\n    return g(f)(x)",
        "as `g`",
    ),
    "a lambda's default": (
        "ex_grad_from_vjp = lambda f, x, g=jax.grad: g(f)(x)",
        "as `g`",
    ),
    "a partial's argument": (
        "import functools\ndef pulled(g, f, x):\n"
        "    return g(f)(x)\nex_grad_from_vjp = functools.partial(pulled, jax.grad)",
        "as `g`",
    ),
    "a namespace's attribute": (
        "import types\ntools = types.SimpleNamespace(g=jax.grad)\n"
        "def ex_grad_from_vjp(f, x):\n    return tools.g(f)(x)",
        "as `tools.g`",
    ),
    "an item of a dict": (
        "ops = {'g': jax.grad}\ndef ex_grad_from_vjp(f, x):\n    return ops['g'](f)(x)",
        "as `ops['g']`",
    ),
    "a static method": (
        f"{TOOLS}def ex_grad_from_vjp(f, x):\n    return Tools.static(f)(x)",
        "in `Tools.static`",
    ),
    "a method calling another by self": (
        f"{TOOLS}def ex_grad_from_vjp(f, x):\n    return Tools().method(f)(x)",
        "in `Tools.pulled`",
    ),
    "a callable instance": (
        f"{CALLABLE}g = Gradient()\ndef ex_grad_from_vjp(f, x):\n    return g(f)(x)",
        "in `g.__call__`",
    ),
    "an attribute its __init__ sets": (
        f"{SET_IN_INIT}def ex_grad_from_vjp(f, x):\n    return Tools().g(f)(x)",
        "in `Tools.__init__`",
    ),
    "a function of the student's module": (
        "import student_helpers\ndef ex_grad_from_vjp(f, x):\n"
        "    return student_helpers.helper(f)(x)",
        "in `student_helpers.helper`",
    ),
    "a class's static method read off an instance": (
        "class T:\n    g = staticmethod(jax.grad)\n\n"
        "def ex_grad_from_vjp(f, x):\n    return T().g(f)(x)",
        "as `T.g`",
    ),
    "a base class's attribute read off an instance": (
        "class Base:\n    g = staticmethod(jax.grad)\n\nclass T(Base):\n    pass\n\n"
        "def ex_grad_from_vjp(f, x):\n    return T().g(f)(x)",
        "as `T.g`",
    ),
    "a named tuple's field": (
        "from typing import NamedTuple, Callable\n"
        "class Ops(NamedTuple):\n    g: Callable\n\nops = Ops(jax.grad)\n"
        "def ex_grad_from_vjp(f, x):\n    return ops.g(f)(x)",
        "as `ops.g`",
    ),
}


def _checked(source):
    # bound to the exercise's name, as a notebook binds a lambda or a partial
    ex_grad_from_vjp = answer(source, "ex_grad_from_vjp")
    return check(ex_grad_from_vjp, quiet=True)


@pytest.mark.parametrize(("source", "where"), EVADING.values(), ids=list(EVADING))
def test_grad_reached_another_way_is_told_the_task_is_vjp(source, where):
    result = _checked(source)
    assert result.kind == "wrong", result
    assert f"it uses `jax.grad` ({where}): the task is to build it from" in (
        result.message
    )


# `m.grad` where reading cannot tell what `m` is: no class of the answer's defines
# `grad`, so it is taken for JAX's (read by its name, as before the named tuple's field
# `r.grad` was told apart), with where it is read, "" for the answer itself
BY_ITS_NAME = {
    "a helper given the module": (
        "def h(m, f):\n    return m.grad(f)\n\n"
        "def ex_grad_from_vjp(f, x):\n    return h(jax, f)(x)",
        "h",
    ),
    "__import__": (
        "def ex_grad_from_vjp(f, x):\n    return __import__('jax').grad(f)(x)",
        "",
    ),
    "sys.modules": (
        "import sys\ndef ex_grad_from_vjp(f, x):\n"
        "    return sys.modules['jax'].grad(f)(x)",
        "",
    ),
    "what a function of theirs returns": (
        "def mk():\n    return jax\n\n"
        "def ex_grad_from_vjp(f, x):\n    return mk().grad(f)(x)",
        "",
    ),
    "a variable given a module on one path": (
        "def ex_grad_from_vjp(f, x, c=True):\n    m = jax if c else np\n"
        "    return m.grad(f)(x)",
        "",
    ),
    "a loop's variable": (
        "def ex_grad_from_vjp(f, x):\n    for m in (jax,):\n"
        "        return m.grad(f)(x)",
        "",
    ),
    "a with statement's variable": (
        "import contextlib\ndef ex_grad_from_vjp(f, x):\n"
        "    with contextlib.nullcontext(jax) as m:\n        return m.grad(f)(x)",
        "",
    ),
}


@pytest.mark.parametrize(
    ("source", "helper"), BY_ITS_NAME.values(), ids=list(BY_ITS_NAME)
)
def test_grad_read_off_what_reading_cannot_tell_is_a_use(source, helper):
    use = first_use(answer(source, "ex_grad_from_vjp"), {"grad": jax.grad})
    assert use is not None and (use.name, use.alias, use.helper) == ("grad", "", helper)
    result = _checked(source)
    assert result.kind == "wrong", result
    assert "it uses `jax.grad`" in result.message, result


OWN_METHOD = """class Tools:
    def grad(self, f, x):
        y, pull = jax.vjp(f, x)
        return pull(jnp.ones_like(y))[0]

    def compare(self, f, x):  # never called by the answer: not read
        return jax.grad(f)(x) - self.grad(f, x)

def ex_grad_from_vjp(f, x):
    return Tools().grad(f, x)
"""
# a right answer keeping value and gradient in a record of its own: `r.grad` is no use
# of `jax.grad`, whatever the record is
RECORD = """
def ex_grad_from_vjp(f, x):
    y, pull = jax.vjp(f, x)
    r = VG(y, pull(jnp.ones_like(y))[0])
    return r.grad
"""
OWN_GRAD = {
    "a function of theirs": f"def grad(f, x):\n{BY_VJP}\n"
    "def ex_grad_from_vjp(f, x):\n    return grad(f, x)",
    "a method of theirs": OWN_METHOD,
    "a function of their module": "import student_helpers\n"
    "def ex_grad_from_vjp(f, x):\n    return student_helpers.grad(f)(x)",
    "a named tuple's field": "from typing import NamedTuple\n"
    "class VG(NamedTuple):\n    value: float\n    grad: float\n" + RECORD,
    "a collections.namedtuple's field": "import collections\n"
    "VG = collections.namedtuple('VG', 'value grad')\n" + RECORD,
    "a dataclass field read in a helper": "import dataclasses\n"
    "@dataclasses.dataclass\nclass VG:\n    value: float\n    grad: float\n\n"
    "def pick(r):\n    return r.grad\n\n"
    "def ex_grad_from_vjp(f, x):\n    y, pull = jax.vjp(f, x)\n"
    "    return pick(VG(y, pull(jnp.ones_like(y))[0]))\n",
    "an attribute its __init__ assigns": "class VG:\n"
    "    def __init__(self, value, grad):\n        self.value, self.grad = value, grad\n"
    + RECORD,
    "a dataclass field": "import dataclasses\n@dataclasses.dataclass\n"
    "class VG:\n    value: float\n    grad: float\n" + RECORD,
    "a property": "class VG:\n    def __init__(self, value, grad):\n"
    "        self.pair = (value, grad)\n\n    @property\n    def grad(self):\n"
    "        return self.pair[1]\n" + RECORD,
    "a slot with an annotation": "class VG:\n    __slots__ = ('value', 'grad')\n"
    "    grad: float\n\n    def __init__(self, value, grad):\n"
    "        self.value, self.grad = value, grad\n" + RECORD,
}


@pytest.mark.parametrize("source", OWN_GRAD.values(), ids=list(OWN_GRAD))
def test_the_students_own_grad_is_not_taken_for_jaxs(source):
    result = _checked(source)
    assert (result.passed, result.kind) == (True, "passed"), result


def test_a_slot_holding_grad_is_read():
    # read here, not through `check`: its pickled copy of `ops` keeps no slots
    ex_grad_from_vjp = answer(
        "class Ops:\n    __slots__ = ('g',)\n\nops = Ops()\nops.g = jax.grad\n"
        "def ex_grad_from_vjp(f, x):\n    return ops.g(f)(x)",
        "ex_grad_from_vjp",
    )
    use = first_use(ex_grad_from_vjp, {"grad": jax.grad})
    assert (use.name, use.alias) == ("grad", "ops.g"), use


def test_an_attribute_named_vmap_does_not_meet_the_requirement():
    # the Jacobian built one JVP at a time; only a record's field is named `vmap`
    ex_jacobian_from_jvp = answer(
        "from typing import NamedTuple\n"
        "class Plan(NamedTuple):\n    vmap: bool\n\n"
        "def ex_jacobian_from_jvp(f, x):\n"
        "    plan = Plan(False)\n"
        "    basis = jnp.eye(x.shape[0], dtype=x.dtype)\n"
        "    columns = [jax.jvp(f, (x,), (v,))[1] for v in basis]\n"
        "    return jnp.stack(columns, axis=1) if not plan.vmap else None",
        "ex_jacobian_from_jvp",
    )
    assert first_use(ex_jacobian_from_jvp, {"vmap": jax.vmap}) is None
    result = check(ex_jacobian_from_jvp, quiet=True)
    assert result.kind == "wrong" and "use `jax.vmap`" in result.message, result


def test_vmap_held_by_a_default_meets_the_requirement():
    ex_jacobian_from_jvp = answer(
        "def ex_jacobian_from_jvp(f, x, batched=jax.vmap):\n"
        "    basis = jnp.eye(x.shape[0], dtype=x.dtype)\n"
        "    return batched(lambda v: jax.jvp(f, (x,), (v,))[1], out_axes=1)(basis)",
        "ex_jacobian_from_jvp",
    )
    result = check(ex_jacobian_from_jvp, quiet=True)
    assert (result.passed, result.kind) == (True, "passed"), result


# --- grading reads the same: the answer's process is asked what the answer reaches ---------
GRAD_IN_A_METHOD = f"""{TOOLS}tools = Tools()

def ex_grad_from_vjp(f, x):
    return tools.method(f)(x)
"""
OWN_JACFWD = """def jacfwd(f, x, batched):
    basis = jnp.eye(x.shape[0], dtype=x.dtype)
    return batched(lambda v: jax.jvp(f, (x,), (v,))[1], out_axes=1)(basis)

def ex_jacobian_from_jvp(f, x, batched=jax.vmap):
    return jacfwd(f, x, batched)
"""


@pytest.mark.slow  # an answer process: JAX imported, two exercises judged
def test_grading_reads_methods_and_defaults_and_spares_the_students_own_names():
    verdicts, _ = _graded(
        "02_close_to_the_math",
        {"ex_grad_from_vjp": GRAD_IN_A_METHOD, "ex_jacobian_from_jvp": OWN_JACFWD},
        only={"ex_grad_from_vjp", "ex_jacobian_from_jvp"},
    )
    _, message, kind = verdicts["test_ex_grad_from_vjp"]
    assert kind == "wrong" and "uses `jax.grad` (in `tools.pulled`)" in message
    assert verdicts["test_ex_jacobian_from_jvp"][2] == "passed"


# --- reading runs none of the student's code: lookups that raise are never made ----------
RAISING = """class Loud:
    def __getattr__(self, name):
        raise RuntimeError("looked up")

    @property
    def grad(self):
        raise RuntimeError("read")

class Meta(type):
    def __getattribute__(cls, name):
        raise RuntimeError("looked up")

class Opaque(metaclass=Meta):
    def method(self):
        return 1

loud, items = Loud(), {Loud(): Opaque}

def ex_grad_from_vjp(f, x, g=jax.grad):
    if x is None:
        return loud.grad, loud.other, Opaque.method, items
    return g(f)(x)
"""


def test_objects_whose_lookups_raise_are_read_without_running_them():
    from jaxtour.exercises._probes import uses

    fn = answer(RAISING, "ex_grad_from_vjp")
    assert uses(fn, {"grad": jax.grad, "vmap": jax.vmap}) == [("grad", "g", "")]


# a class whose every lookup is recorded: reading must record none (an earlier reading
# asked `isinstance` and `getattr(fn, "__wrapped__")` of an answer that is an instance)
SPY = """calls = []

class Spy:
    def __getattribute__(self, name):
        calls.append(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        calls.append(name)
        raise AttributeError(name)

    def __call__(self, f, x):
        return jax.grad(f)(x)

spy = Spy()

def ex_grad_from_vjp(f, x, helper=spy):
    return spy.g, helper(f, x)
"""


def test_reading_an_instance_runs_none_of_its_lookups():
    namespace = {"jax": jax}
    exec(compile(SPY, "<spy>", "exec"), namespace)
    for fn in (namespace["spy"], namespace["ex_grad_from_vjp"]):
        assert first_use(fn, {"grad": jax.grad}) is not None
    assert namespace["calls"] == []
