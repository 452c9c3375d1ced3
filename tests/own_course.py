"""A course's own exercises, as an instructor writes them: a lesson-format task, stub and
solution (`90_our_extras.py`) and a module registering their checkers (`checkers.py`).
Shared by the export's tests (test_exercises_nbgrader.py) and the real nbgrader round
(test_exercises_grading.py)."""

from pathlib import Path

OWN_EXERCISES = ("ex_course_cube", "ex_course_square")
OWN_STEM = "90_our_extras"
OWN_LESSON = """# %% [markdown]
# # 90 · Our extras

# %%
import jax
import jax.numpy as jnp

from jaxtour.exercises import check

# %% [markdown] tags=["exercise"]
# ## Your turn: cube
#
# Write `ex_course_cube(x)`: x cubed, elementwise, traceable by `jax.jit`.

# %% tags=["exercise"]
def ex_course_cube(x):
    ...  # your code here


# %% tags=["solution"]
def ex_course_cube(x):
    return x * x * x


# %% [markdown] tags=["exercise"]
# ## Your turn: square
#
# Write `ex_course_square(x)`: x squared, elementwise.

# %% tags=["exercise"]
def ex_course_square(x):
    ...  # your code here


# %% tags=["solution"]
def ex_course_square(x):
    return x**2
"""
OWN_CHECKERS = '''import jax
import jax.numpy as jnp

from jaxtour.exercises import checks, expect_close, in_answer

LESSON = "90_our_extras"


def _jitted(fn, x):  # a probe of the course's own: it travels by value
    return jax.jit(fn)(x)


@checks(LESSON, "ex_course_cube", title="cube", points=2)
def _check_cube(fn):
    """Practises a course's own exercise."""
    x = jnp.arange(4.0)
    expect_close(in_answer(fn, _jitted, x), x**3, where="x = [0, 1, 2, 3], under jit")


@checks(LESSON, "ex_course_square", title="square")
def _check_square(fn):
    """Practises another of the course's exercises."""
    x = jnp.arange(4.0)
    expect_close(fn(x), x**2, where="x = [0, 1, 2, 3]")
'''


def write_own(folder: Path) -> None:
    """Write the course's own lesson and its checker module into `folder`."""
    (folder / f"{OWN_STEM}.py").write_text(OWN_LESSON)
    (folder / "checkers.py").write_text(OWN_CHECKERS)
