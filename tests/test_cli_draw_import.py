"""`jaxtour draw KIND file.py:f` imports the file as Python imports a module, and an
exception raised by the user's module is reported as theirs."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxtour.cli import main

DATACLASS = """
from __future__ import annotations

import dataclasses
import jax.numpy as jnp

@dataclasses.dataclass
class Layer:
    scale: float

def f(x):
    return jnp.sin(x) * Layer(2.0).scale
"""


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text))


def _draw(target: str, out: Path) -> int:
    return main(["draw", "jaxpr", target, "--args", "f32[3]", "-o", str(out)])


def test_a_dataclass_under_future_annotations_imports(tmp_path, capsys):
    _write(tmp_path, {"dc_model.py": DATACLASS})
    assert _draw(f"{tmp_path / 'dc_model.py'}:f", tmp_path / "f.svg") == 0
    assert "jaxpr of f: 2 equations" in capsys.readouterr().out
    assert sys.modules["dc_model"].__file__ == str(tmp_path / "dc_model.py")


def test_relative_imports_work_where_the_file_sits_in_a_package(tmp_path, capsys):
    _write(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/nets/__init__.py": "",
            "shop/nets/helpers.py": "def twice(x):\n    return 2 * x\n",
            "shop/nets/model.py": "from .helpers import twice\n\n"
            "def f(x):\n    return twice(x) + 1\n",
        },
    )
    assert _draw(f"{tmp_path / 'shop/nets/model.py'}:f", tmp_path / "f.svg") == 0
    assert "jaxpr of f: 2 equations" in capsys.readouterr().out
    assert sys.modules["shop.nets.model"].__file__ == str(
        tmp_path / "shop/nets/model.py"
    )


@pytest.mark.parametrize(
    "body, last",
    [
        ("x = 1 / 0\n", "ZeroDivisionError: division by zero"),
        (
            "raise ValueError('bad config')\n",
            "ValueError: bad config",
        ),
        (
            "import no_such_package_xyz\n",
            "ModuleNotFoundError: No module named 'no_such_package_xyz'",
        ),
        (
            "import sys\nsys.exit(2)\n",
            "SystemExit: 2 (the module exits when imported: put its script part under "
            'if __name__ == "__main__":)',
        ),
    ],
)
def test_an_error_of_the_user_s_module_is_theirs_with_their_lines(
    body, last, tmp_path, capsys
):
    _write(tmp_path, {"bad_model.py": "import math\n\n" + body})
    assert _draw(f"{tmp_path / 'bad_model.py'}:f", tmp_path / "f.svg") == 1
    err = capsys.readouterr().err.strip().splitlines()
    type_name = last.partition(":")[0]
    assert err[0] == (
        f"jaxtour draw: error: bad_model.py raised {type_name} while being imported, "
        "in your code:"
    )
    assert err[1] == "Traceback (most recent call last):"
    assert err[2].startswith(f'  File "{tmp_path / "bad_model.py"}", line ')
    assert err[-1] == last
    assert not any("jaxtour" in line and "File" in line for line in err[1:])


def test_a_module_by_name_that_raises_is_theirs_too(tmp_path, monkeypatch, capsys):
    _write(
        tmp_path, {"raising_mod.py": "def f(x):\n    return x\n\nimport missing_xyz\n"}
    )
    monkeypatch.chdir(tmp_path)
    assert _draw("raising_mod:f", tmp_path / "f.svg") == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "jaxtour draw: error: raising_mod raised ModuleNotFoundError while being imported"
    )
    assert err.strip().endswith("ModuleNotFoundError: No module named 'missing_xyz'")


def test_the_real_command_exits_1_with_the_user_s_traceback_only(tmp_path):
    _write(tmp_path, {"zero.py": "def f(x):\n    return x\n\nscale = 1 / 0\n"})
    result = subprocess.run(
        [sys.executable, "-m", "jaxtour.cli", "draw", "jaxpr", "zero.py:f"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ},
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "jaxtour draw: error: zero.py raised ZeroDivisionError while being imported, "
        "in your code:",
        "Traceback (most recent call last):",
        f'  File "{tmp_path.resolve() / "zero.py"}", line 4, in <module>',
        "    scale = 1 / 0",
        "            ~~^~~",
        "ZeroDivisionError: division by zero",
    ]
