"""jaxtour.exercises: `check` turns every kind of mistake into its own plain-words
feedback and never raises; the helpers checkers use say what they promise."""

import contextlib
import io
import re
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import nbformat
import numpy as np
import pytest

from jaxtour import exercises as ex
from jaxtour.cli import main
from jaxtour.exercises import Exercise, Wrong, _registry, check, expect_close
from jaxtour.lesson import lesson_exercises

X = jnp.arange(1.0, 4.0)  # f32[3]


def _fake_checker(fn):
    """ex_double(x) must return 2 * x, also under jit."""
    expect_close(fn(X), 2 * X, where="x=[1. 2. 3.]")
    ex.under_jit(fn, X)


@pytest.fixture
def fake():
    exercise = ex.register(
        Exercise(
            "ex_double",
            "98_fake_lesson",
            "double an array",
            "returning a jnp array",
            _fake_checker,
        )
    )
    yield exercise
    _registry._REGISTRY.pop("ex_double", None)


def _define(code, name: str = "ex_double"):
    namespace = {"jax": jax, "jnp": jnp, "np": np, "lax": jax.lax, "X": X}
    exec(textwrap.dedent(code) if isinstance(code, str) else code, namespace)
    return namespace[name]


def _feedback(code: str, **kwargs) -> ex.Feedback:
    return check(_define(code), **kwargs)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            "y = ...\n    return y * 2",
            "not done yet: a `...` is still in `ex_double` (your function "
            "raised TypeError: unsupported operand type(s) for *: 'ellipsis' and 'int'); "
            "replace it",
        ),
        (
            "return (x, ...)[1]",
            "at x=[1. 2. 3.]: your function returned `...`: replace the `...`",
        ),
    ],
)
def test_a_dot_dot_dot_left_in_the_code_says_so(fake, body, words):
    feedback = _feedback(f"def ex_double(x):\n    {body}")
    assert not feedback.passed and words in feedback.message, feedback.message


def test_a_right_answer_passes_with_a_green_tick(fake):
    feedback = _feedback("def ex_double(x):\n    return x + x")
    assert feedback.passed and feedback.kind == "passed" and feedback.exercise is fake
    assert repr(feedback) == "✓ ex_double: correct! You practised returning a jnp array"
    assert "#1a7f37" in feedback._repr_html_() and "✓" in feedback._repr_html_()


@pytest.mark.parametrize(
    "body",
    [
        "...  # your code here",
        "pass",
        '"""Return 2x."""\n    ...',
        "raise NotImplementedError",
        "return ...  # your code here",
    ],
)
def test_a_stub_is_not_done_yet_and_says_what_to_do(fake, body):
    feedback = _feedback(f"def ex_double(x):\n    {body}")
    assert not feedback.passed and feedback.kind == "not done"
    assert feedback.message == (
        "not done yet: write the body of `ex_double` (double an array) "
        "in place of the `...`, run that cell, then run this check again."
    )


def _cell(code: str, name: str = "ex_double"):
    """Defined as a notebook cell defines it: its source kept where `inspect` finds it
    (IPython puts each cell in `linecache`)."""
    import linecache

    filename = f"<cell-{abs(hash(code))}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace = {"jnp": jnp}
    exec(compile(code, filename, "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize(
    ("body", "done"),
    [
        ("...  # your code here", False),
        ('"""Return 2x."""\n    pass', False),
        ("return None", True),
        ('"""Return 2x."""\n    return', True),
    ],
)
def test_return_none_written_in_a_cell_is_an_answer_not_a_stub(fake, body, done):
    """`return None` compiles as `pass` does; the cell's source tells them apart."""
    feedback = check(_cell(f"def ex_double(x):\n    {body}\n"))
    assert feedback.kind == ("wrong" if done else "not done"), feedback.message
    if done:
        assert "your function returned None" in feedback.message


@pytest.mark.parametrize(
    ("body", "done"),
    [("...", False), ("None", True), ("x * 2 if False else None", True)],
)
def test_a_lambda_returning_none_is_an_answer_not_a_stub(fake, body, done):
    """A lambda's body is an expression: only `...` is a stub's, `None` is written."""
    ex_double = _cell(f"ex_double = lambda x: {body}\n")
    feedback = check(ex_double)
    assert feedback.kind == ("wrong" if done else "not done"), feedback.message
    if done:
        assert "your function returned None" in feedback.message


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            "x = 2 * x",
            "at x=[1. 2. 3.]: your function returned None: did it forget to `return`",
        ),
        ("return (2 * x)[:, None]", "at x=[1. 2. 3.]: expected shape (3,), got (3, 1)"),
        (
            "return np.asarray(x, dtype=np.float64) * 2",
            "expected dtype float32, got float64; "
            "JAX computes in float32 unless `jax_enable_x64`",
        ),
        (
            "return (2 * x).astype(jnp.int32)",
            "expected dtype float32, got int32; integer inputs",
        ),
        (
            "return [2 * v for v in x]",
            "expected an array, got list [Array(2., dtype=float32), ",
        ),
        (
            "return [2 * v for v in x]",
            ": make one array of it with `jnp.array` or `jnp.stack`",
        ),
        (
            "return (2 * x,)",
            "got tuple (Array([2., 4., 6.], dtype=float32),): a tuple holding one "
            "array; take the array out with `[0]`",
        ),
        (
            "return x * x",
            "at x=[1. 2. 3.]: got [1. 4. 9.], expected [2. 4. 6.] (first difference "
            "at index (0,): 1 vs 2)",
        ),
    ],
)
def test_a_wrong_result_gets_its_specific_words(fake, body, words):
    feedback = _feedback(f"def ex_double(x):\n    {body}")
    assert not feedback.passed and feedback.kind == "wrong"
    assert words in feedback.message
    assert "#cf222e" in feedback._repr_html_() and repr(feedback).startswith(
        "✗ ex_double: "
    )


@pytest.mark.parametrize(
    ("code", "words"),
    [
        # Python control flow on a tracer: caught by the checker's under_jit ...
        (
            "def ex_double(x):\n    return 2 * x if x.sum() > 0 else -2 * x",
            "under `jax.jit`: a Python `if`, `while`, `and`/`or`/`not` or `bool()` "
            "needed the value",
        ),
        (
            "def ex_double(x):\n    return 2 * x * [1.0, 1.0][x[0].astype(int) - 1]",
            "`int()`, `range()` or a list index needed the value of a traced array",
        ),
        (
            "def ex_double(x):\n    return jnp.asarray(np.multiply(x, 2)) + jnp.zeros(x.shape)",
            "a NumPy function (`np.…`) or `float()` was given a traced array",
        ),
    ],
)
def test_tracer_mistakes_under_jit_are_said_in_plain_words(fake, code, words):
    feedback = _feedback(code)
    assert not feedback.passed and words in feedback.message, feedback.message
    assert "Traceback" not in feedback.message and "https://" not in feedback.message


@pytest.mark.parametrize(
    ("code", "kind", "words"),
    [
        (
            "def ex_double(x):\n    return jax.jit(lambda y: 2 * y if y.sum() > 0 else y)(x)",
            "error",
            "not right yet: a Python `if`, `while`, `and`/`or`/`not` or `bool()` "
            "needed the value",
        ),
        (
            "def ex_double(x):\n"
            "    return jax.jit(lambda y: y * jnp.ones(y.sum().astype(int)))(x)",
            "error",
            "a value that must be known while tracing (a shape, a size",
        ),
        (
            "leak = []\ndef ex_double(x):\n    jax.jit(lambda y: leak.append(y) or y)(x)\n"
            "    return leak[-1] * 2",
            "error",
            "a traced value escaped from the function",
        ),
        (
            "def ex_double(x):\n    return 2 * jnp.dot(x, jnp.ones(4))",
            "error",
            "shapes don't fit: dot_general requires contracting dimensions to have "
            "the same shape, "
            "got (3,) and (4,).",
        ),
        (
            "def ex_double(x):\n    return x + jnp.ones(4)",
            "error",
            "shapes don't fit: add got "
            "incompatible shapes for broadcasting: (3,), (4,).",
        ),
        (
            "def ex_double(x):\n    return jax.vmap(lambda a, b: a + b)(x, jnp.ones(4))",
            "error",
            "`vmap` mapped axes of different sizes: vmap got inconsistent sizes",
        ),
        (
            "def ex_double(x):\n    return jax.jit(lambda f, y: f(y))(lambda v: 2 * v, x)",
            "error",
            "`jax.jit` was given an argument that is not an array (a function, a string, …)",
        ),
        (
            "def ex_double(x):\n    return {}['k']",
            "error",
            "your function raised KeyError: 'k'",
        ),
    ],
)
def test_a_student_error_is_a_hint_not_a_traceback(fake, code, kind, words):
    feedback = _feedback(code)
    assert not feedback.passed and feedback.kind == kind
    assert words in feedback.message, feedback.message
    assert "Traceback" not in feedback.message and "\n" not in feedback.message


def test_an_error_in_checking_the_result_is_not_blamed_on_the_function():
    # A checker as the kit holds it: code in a file of the jaxtour package.
    library_file = str(Path(_registry.__file__))
    checker = _define(
        compile(
            "def checker(fn):\n    fn(X).undefined_method()\n", library_file, "exec"
        ),
        "checker",
    )
    ex.register(Exercise("ex_odd", "98_fake_lesson", "t", "p", checker))
    try:
        odd = check(_define("def ex_odd(x):\n    return 'a string'", "ex_odd"))
        helper = _define("def helper(x):\n    return x.nope\n", "helper")
        blamed = check(_with(helper, "def ex_odd(x):\n    return helper(x)"))
    finally:
        _registry._REGISTRY.pop("ex_odd")
    assert odd.message == (
        "not right yet: checking what your function returned raised "
        "AttributeError: 'str' object has no attribute 'undefined_method'"
    )
    assert blamed.message.startswith(
        "not right yet: your function raised AttributeError"
    )


def _with(helper, code: str):
    """Define ex_odd in a namespace holding `helper`, as if from another notebook cell."""
    namespace = {"helper": helper, "X": X}
    exec(compile(code, "<another cell>", "exec"), namespace)
    return namespace["ex_odd"]


def test_check_never_raises_on_what_is_not_an_exercise(fake):
    for thing in (3, None, "ex_double", print, lambda x: x):
        feedback = check(thing)
        assert (
            not feedback.passed
            and feedback.kind == "unknown"
            and feedback.exercise is None
        )
        assert "`ex_double`" in feedback.message  # it names the exercises there are
    assert "no exercise is called `print`" in check(print).message
    assert "`check` takes the function you wrote" in check(3).message


def test_quiet_prints_nothing_and_loud_shows_what_the_student_prints(fake, capsys):
    ex_double = _define(
        "def ex_double(x):\n    print('hello from the student')\n    return 2 * x"
    )
    assert check(ex_double, quiet=True).passed
    assert capsys.readouterr().out == ""
    assert check(ex_double).passed
    assert (
        "hello from the student" in capsys.readouterr().out
    )  # no feedback printed either
    assert "✓" not in capsys.readouterr().out


def test_feedback_html_escapes_the_message_and_codes_backticks():
    feedback = ex.Feedback(False, None, "use `a<b` & more", "wrong")
    assert "<code>a&lt;b</code> &amp; more" in feedback._repr_html_()


def test_expect_close_compares_pytrees_by_path():
    want = {"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}
    expect_close({"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}, want)
    with pytest.raises(
        Wrong, match=r"expected a dict with keys \['b', 'w'\], got a tuple of 2"
    ):
        expect_close((jnp.ones((2, 2)), jnp.zeros(2)), want)
    with pytest.raises(Wrong, match=r"^\['b'\]: expected shape \(2,\), got \(2, 1\)$"):
        expect_close({"w": jnp.ones((2, 2)), "b": jnp.zeros((2, 1))}, want)
    expect_close(
        2.0, jnp.float32(2.0)
    )  # a Python number is an array of any float dtype
    with pytest.raises(Wrong, match=r"^got 2\.5, expected 2$"):
        expect_close(jnp.float32(2.5), jnp.float32(2.0))


def test_side_effect_under_jit_finds_a_list_a_counter_and_a_print():
    cases = {
        "log = []\ndef f(x):\n    log.append(x)\n    return x": (
            "the global `log` changed on the first call only (length 0 → length 1), "
            "not on the 2 calls after it"
        ),
        "count = 0\ndef f(x):\n    global count\n    count += 1\n    return x": "the global "
        "`count` changed on the first call only (0 → 1)",
        "def f(x):\n    print('x is', x)\n    return x": "`print` ran on the first call only",
    }
    for code, words in cases.items():
        with pytest.raises(Wrong, match=r".*") as info:
            ex.side_effect_under_jit(_define(code, "f"), X)
        assert words in str(info.value)
    pure = "def f(x):\n    jax.debug.print('x is {}', x)\n    return 2 * x"
    ex.side_effect_under_jit(_define(pure, "f"), X)  # prints on every call: fine


def test_side_effect_under_jit_sees_a_closed_over_counter():
    def make():
        calls = 0

        def f(x):
            nonlocal calls
            calls += 1
            return x

        return f

    with pytest.raises(
        Wrong, match="the variable `calls` changed on the first call only"
    ):
        ex.side_effect_under_jit(make(), X, hint="Count outside.")


def test_retraces_are_counted_and_reported():
    scale = lambda x, n: x * n
    assert ex.count_traces(scale, [(X, 2.0), (X, 3.0)]) == 1
    assert ex.count_traces(scale, [(X, 2), (X, 3)], static_argnums=1) == 2
    assert ex.count_traces(scale, [(X, 2.0), (X[:2], 2.0)]) == 2  # a new shape
    ex.expect_no_retrace(scale, [(X, 2.0), (X, 3.0), (X, 4.0)])
    with pytest.raises(
        Wrong, match=r"traced your function again on call 2 of 3.*Pass n as"
    ):
        ex.expect_no_retrace(
            scale,
            [(X, 2), (X, 3), (X, 4)],
            static_argnums=1,
            hint="Pass n as an array.",
        )


def test_counted_counts_python_calls_so_traces_under_jit():
    f = ex.Counted(lambda x: x + 1)
    jitted = jax.jit(f)
    jitted(X), jitted(X + 1), jitted(X[:1])
    assert f.calls == 2 and f.__name__ == "<lambda>"


def test_under_jit_returns_the_result_and_says_control_flow_words():
    np.testing.assert_array_equal(
        ex.under_jit(lambda x: jnp.where(x > 2, x, 0.0), X), [0.0, 0.0, 3.0]
    )
    with pytest.raises(Wrong, match=r"^under `jax.jit`: a Python `if`"):
        ex.under_jit(lambda x: x if x > 0 else -x, 1.0)
    assert ex.under_jit(lambda x, n: x * n, X, 2, static_argnums=1).shape == (3,)
    # A function argument is passed through, as the `f` of ex_grad_from_vjp(f, x).
    grad_sin = ex.under_jit(lambda f, x: jax.grad(f)(x), jnp.sin, jnp.float32(0.0))
    assert grad_sin == 1.0


def test_register_refuses_a_second_exercise_of_the_same_name(fake):
    with pytest.raises(ValueError, match="'ex_double' is already registered"):
        ex.register(Exercise("ex_double", "97_other", "t", "p", lambda fn: None))
    ex.register(
        Exercise("ex_double", "98_fake_lesson", "t", "p", _fake_checker)
    )  # a reload


def test_checks_takes_what_an_exercise_practises_from_its_checkers_docstring():
    def checker(fn):
        """Practises reading `draw_vjp`: the cotangent
        that reverse mode pulls back.

        More words, not part of it.
        """

    def other(fn):
        """Checks ex_told."""

    try:
        assert ex.checks("98_fake_lesson", "ex_doc", title="t")(checker) is checker
        assert ex.find("ex_doc") == Exercise(
            "ex_doc",
            "98_fake_lesson",
            "t",
            "reading `draw_vjp`: the cotangent that reverse mode pulls back",
            checker,
        )
        ex.checks("98_fake_lesson", "ex_told", title="t", practises="p")(other)
        assert ex.find("ex_told").practises == "p"
        with pytest.raises(ValueError, match="'ex_bare' needs a docstring saying"):
            ex.checks("98_fake_lesson", "ex_bare", title="t")(other)
        assert ex.find("ex_bare") is None
    finally:
        for name in ("ex_doc", "ex_told"):
            _registry._REGISTRY.pop(name, None)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"name": "ex double"}, "must be a Python function name"),
        ({"lesson": "lesson two"}, "must be a lesson's file stem"),
        ({"checker": "not callable"}, "checker must be callable"),
    ],
)
def test_an_exercise_checks_its_fields(kwargs, words):
    fields = {
        "name": "ex_a",
        "lesson": "02_close_to_the_math",
        "title": "t",
        "practises": "p",
        "checker": lambda fn: None,
        **kwargs,
    }
    with pytest.raises((ValueError, TypeError), match=words):
        Exercise(**fields)


def test_exercises_are_listed_in_lesson_order(fake):
    later = ex.register(Exercise("ex_zz_later", "99_last", "t", "p", lambda fn: None))
    earlier = ex.register(
        Exercise("ex_aa_earlier", "00_first", "t", "p", lambda fn: None)
    )
    try:
        names = [e.name for e in ex.exercises()]
        assert (
            names.index("ex_aa_earlier")
            < names.index("ex_double")
            < names.index("ex_zz_later")
        )
        assert ex.for_lesson("99") == ex.for_lesson("99_last") == [later]
        assert earlier.number == "00"
    finally:
        _registry._REGISTRY.pop("ex_zz_later")
        _registry._REGISTRY.pop("ex_aa_earlier")


def test_every_checker_module_is_imported_by_the_package_and_names_its_lesson():
    # A module that registers checkers (it sets LESSON) is imported by the package's
    # __init__, by name; its LESSON is a lesson that exists.
    folder = Path(ex.__file__).parent
    lessons = {
        p.stem for p in (Path(__file__).parent.parent / "notebooks").glob("*.py")
    }
    found = {}
    for path in sorted(folder.glob("_*.py")):
        if "\nLESSON = " in path.read_text():
            module = sys.modules[f"jaxtour.exercises.{path.stem}"]
            found[path.stem] = module.LESSON
            assert module.LESSON in lessons, (path.name, module.LESSON)
            assert not path.stem[2:].isdigit(), f"{path.name}: name it by its topic"
    assert len(found) == 8
    assert sorted({e.lesson for e in ex.exercises()}) == sorted(set(found.values()))


LESSON = """\
# %% [markdown]
# # 98 · Fake
#
# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: double
#
# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_double(x):
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_double(x):
    return x + x  # the secret line

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Add it to itself.</details>

# %%
check(ex_double)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_double, quiet=True).passed
"""


def test_a_lesson_source_gives_its_exercises_stubs_solutions_and_hints(tmp_path):
    source = tmp_path / "98_fake_lesson.py"
    source.write_text(LESSON)
    [found] = lesson_exercises(source)
    assert (found.name, found.lesson) == ("ex_double", "98_fake_lesson")
    assert "..." in found.stub and "the secret line" in found.solution
    assert found.hints == [
        "<details><summary>Hint 1</summary>Add it to itself.</details>"
    ]


def test_students_notebooks_drop_solution_and_check_cells_and_keep_hints(
    tmp_path, capsys
):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "98_fake_lesson.py").write_text(LESSON)
    assert (
        main(
            [
                "tour",
                "--only",
                "exercises",
                "--notebooks",
                str(lessons),
                "--build-dir",
                str(tmp_path / "build"),
            ]
        )
        == 0
    )
    student = nbformat.read(
        tmp_path / "build/student/98_fake_lesson.ipynb", as_version=4
    )
    teacher = nbformat.read(
        tmp_path / "build/instructor/98_fake_lesson.ipynb", as_version=4
    )
    assert len(teacher.cells) == len(student.cells) + 2
    student_text = (tmp_path / "build/student/98_fake_lesson.ipynb").read_text()
    assert "the secret line" not in student_text and "quiet=True" not in student_text
    assert (
        "<summary>Hint 1</summary>" in student_text
        and "check(ex_double)" in student_text
    )
    assert (
        "the secret line"
        in (tmp_path / "build/instructor/98_fake_lesson.ipynb").read_text()
    )
    # The hint stays a collapsed <details> in exported HTML: no widget, no JavaScript.
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(student)
    assert "<details><summary>Hint 1</summary>Add it to itself.</details>" in body


def test_the_exercises_command_lists_lesson_title_and_what_each_practises(fake, capsys):
    assert main(["exercises"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["lesson", "exercise", "title", "practises"]
    assert re.search(r"^98 +ex_double +double an array +returning", out, re.MULTILINE)
    assert "returning a jnp array" in out
    assert main(["exercises", "--lesson", "98"]) == 0
    assert "ex_double" in capsys.readouterr().out
    assert main(["exercises", "--lesson", "98", "--markdown"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "| lesson | exercise | title | practises |",
        "|---|---|---|---|",
        "| 98 | `ex_double` | double an array | returning a jnp array |",
    ]
    assert main(["exercises", "--lesson", "00"]) == 0  # a lesson with none
    assert capsys.readouterr().out == "No exercises in lesson 00 yet.\n"
    with pytest.raises(SystemExit) as usage:  # no such lesson: a usage error
        main(["exercises", "--lesson", "96"])
    assert usage.value.code == 2
    assert "there is no lesson 96; the lessons are 00, 01, " in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # not a number: a usage error too
        main(["exercises", "--lesson", "two"])
    assert usage.value.code == 2
    assert (
        "argument --lesson: must be a lesson's number such as 02; got 'two'"
        in capsys.readouterr().err
    )


def test_check_swallows_what_the_student_prints_only_when_quiet(fake):
    out = io.StringIO()
    ex_double = _define("def ex_double(x):\n    print('noise')\n    return x")
    with contextlib.redirect_stdout(out):
        feedback = check(ex_double, quiet=True)
    assert out.getvalue() == "" and feedback.kind == "wrong"


def _x64_checker(fn):
    """ex_wide() must return a 64-bit float where the kernel computes in 64 bits."""
    got = fn()
    if got.dtype != jnp.float64:
        raise Wrong(f"got {got.dtype}")


@pytest.mark.parametrize("x64", [True, False])
def test_an_answer_is_checked_with_the_kernels_64_bit_setting(x64):
    """A kernel with jax_enable_x64 on computes in float64: the checker's process,
    which starts with JAX's default (off), must check the answer the same way."""
    ex.register(Exercise("ex_wide", "98_fake_lesson", "a wide float", "", _x64_checker))
    try:
        with jax.enable_x64(x64):
            feedback = check(
                _define("def ex_wide():\n    return jnp.ones(2)", "ex_wide")
            )
    finally:
        _registry._REGISTRY.pop("ex_wide", None)
    assert feedback.passed is x64, feedback.message
