"""`jaxtour draw`: array specs, MODULE:FUNCTION, and a clear usage error for each mistake."""

import argparse
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from jaxtour.cli import main
from jaxtour.cli._draw import ArraySpec, example_arguments, parse_spec

ROOT = Path(__file__).resolve().parent.parent

MODEL = """
import jax.numpy as jnp

def layer(params, x):
    w, b = params
    return jnp.tanh(x @ w + b)

def power(x, n):
    return x ** n

def broken(x):
    raise ZeroDivisionError("inside the user's function")

not_a_function = 3
"""


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "mymodel.py"
    path.write_text(textwrap.dedent(MODEL))
    return path


def draw_layer(kind: str, model: str, out: Path, *extra: str) -> int:
    """`jaxtour draw KIND model.py:layer` at MLP-layer shapes, written to `out`."""
    args = ["(f32[784,10], f32[10])", "f32[128,784]"]
    return main(
        ["draw", kind, f"{model}:layer", "--args", *args, "-o", str(out), *extra]
    )


def usage_error(argv: list[str], capsys) -> str:
    """Run `jaxtour draw ...` expecting exit code 2; return what it printed to stderr."""
    with pytest.raises(SystemExit) as caught:
        main(["draw", *argv])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    "text, dtype, shape",
    [
        ("f32[128,784]", "float32", (128, 784)),
        ("i32[]", "int32", ()),
        ("f64[3]", "float64", (3,)),
        ("bf16[ 2, 3 ]", "bfloat16", (2, 3)),
        ("bool[4]", "bool", (4,)),
    ],
)
def test_array_specs(text, dtype, shape):
    spec = parse_spec(text)
    assert isinstance(spec, ArraySpec) and (spec.dtype, spec.shape) == (dtype, shape)


def test_numbers_and_pytrees():
    assert parse_spec("3") == 3 and parse_spec("-0.5") == -0.5
    tree = parse_spec("{w: f32[784,10], b: (f32[10], 2)}")
    assert (
        tree["w"].shape == (784, 10)
        and tree["b"][0].shape == (10,)
        and tree["b"][1] == 2
    )


@pytest.mark.parametrize(
    "text", ["f32[3", "float32[3]", "f32(3)", "f32[a]", "x", "(f32[3]"]
)
def test_bad_specs_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="is not a"):
        parse_spec(text)


def test_specs_become_shape_dtype_structs_or_zeros():
    specs = [parse_spec("f32[2,3]"), parse_spec("(i32[], f32[4])"), 5]
    shaped = example_arguments(specs, zeros=False)
    assert shaped[0] == jax.ShapeDtypeStruct((2, 3), jnp.float32)
    assert shaped[1][0] == jax.ShapeDtypeStruct((), jnp.int32) and shaped[2] == 5
    zeros = example_arguments(specs, zeros=True)
    assert isinstance(zeros[0], jax.Array) and float(jnp.abs(zeros[0]).sum()) == 0.0


def test_pipeline_of_a_function_in_a_file(model, tmp_path, capsys):
    out = tmp_path / "layer.svg"
    assert draw_layer("pipeline", model, out) == 0
    assert capsys.readouterr().out.startswith(
        f"wrote {out}: pipeline of layer: 4 equations"
    )
    ET.parse(out)


def test_static_arguments_and_dot_output(model, tmp_path, capsys):
    out = tmp_path / "power.dot"
    assert (
        main(
            [
                "draw",
                "pipeline",
                f"{model}:power",
                "--args",
                "f32[3]",
                "3",
                "--static-argnums",
                "1",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert out.read_text().startswith("digraph pipeline {")
    assert "pipeline of power: 1 equation," in capsys.readouterr().out


@pytest.mark.parametrize(
    "kind, title",
    [
        ("landscape", "the autodiff landscape: 5 frameworks"),
        ("stack", "the JAX AI stack:"),
        ("pipeline", "how JAX runs a function (step 1 of 3)"),
    ],
)
def test_diagrams_that_need_no_function(kind, title, tmp_path, capsys):
    out = tmp_path / f"{kind}.svg"
    assert (
        main(
            ["draw", kind, "--step", "1", "-o", str(out)]
            if kind == "pipeline"
            else ["draw", kind, "-o", str(out)]
        )
        == 0
    )
    assert title in capsys.readouterr().out
    ET.parse(out)


def test_unknown_kind(capsys):
    err = usage_error(["flowchart", "m:f"], capsys)
    assert "argument KIND: invalid choice: 'flowchart' (choose from 'pipeline'," in err


def test_bad_spec_is_a_usage_error(model, capsys):
    err = usage_error(["pipeline", f"{model}:power", "--args", "f32[3,"], capsys)
    assert "argument --args: 'f32[3,' is not an array spec. Write DTYPE[DIMS]" in err


@pytest.mark.parametrize(
    "target, message",
    [
        ("mymodel", "expected MODULE:FUNCTION such as mymodel:loss; got 'mymodel'"),
        ("no_such_module_xyz:f", "cannot import 'no_such_module_xyz': No module named"),
        (
            "{model}:nothere",
            "has no 'nothere'; its functions include: broken, layer, power",
        ),
        ("{model}:not_a_function", "is a int, not a function"),
        ("missing.py:f", "no file missing.py"),
    ],
)
def test_bad_targets_are_usage_errors(target, message, model, capsys):
    err = usage_error(["pipeline", target.format(model=model)], capsys)
    assert message in err


def test_a_function_kind_without_a_function(capsys):
    assert "`jaxtour draw jaxpr` needs MODULE:FUNCTION" in usage_error(
        ["jaxpr"], capsys
    )


def test_an_unwritable_suffix_is_refused_before_drawing(capsys):
    assert "cannot write 'stack.txt'" in usage_error(
        ["stack", "-o", "stack.txt"], capsys
    )


def test_an_option_the_drawing_does_not_take_lists_those_it_does(capsys):
    err = usage_error(["stack", "--option", "bogus=1"], capsys)
    assert "`jaxtour draw stack` takes no option 'bogus'; its options are " in err
    assert "(--option NAME=VALUE)" in err


def test_too_few_args_name_the_functions_parameters(model, capsys):
    err = usage_error(["jaxpr", f"{model}:layer"], capsys)
    assert (
        f"{model}:layer takes 2 argument(s) (params, x) and --args gave 0: give one "
        'spec per argument, e.g. --args "f32[128,784]" "f32[128,784]"'
    ) in " ".join(err.split())


def test_the_users_own_error_reaches_them(model):
    with pytest.raises(ZeroDivisionError, match="inside the user's function") as caught:
        main(["draw", "pipeline", f"{model}:broken", "--args", "f32[3]"])
    assert (
        "(raised while draw_pipeline traced broken(f32[3]))" in caught.value.__notes__
    )


def test_the_real_command_exits_2_without_a_traceback(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxtour.cli",
            "draw",
            "jaxpr",
            "m:f",
            "--args",
            "f32[x]",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ},
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        "jaxtour draw: error: argument --args: 'f32[x]' is not an array spec."
    )


def test_modules_by_name_from_the_installed_packages_or_the_current_folder(
    model, tmp_path, monkeypatch, capsys
):
    assert (
        main(
            [
                "draw",
                "pipeline",
                "jax.numpy:sin",
                "--args",
                "f32[3]",
                "-o",
                str(tmp_path / "sin.svg"),
            ]
        )
        == 0
    )
    assert "pipeline of sin: 1 equation" in capsys.readouterr().out
    monkeypatch.chdir(model.parent)
    monkeypatch.setattr(
        sys, "path", [p for p in sys.path if p not in ("", str(model.parent))]
    )
    assert (
        main(
            [
                "draw",
                "pipeline",
                "mymodel:power",
                "--args",
                "f32[3]",
                "2",
                "--static-argnums",
                "1",
            ]
        )
        == 0
    )
    assert (model.parent / "power_pipeline.svg").is_file()


@pytest.mark.parametrize(
    "kind, extra, title",
    [
        ("jaxpr", [], "jaxpr of layer: 4 equations"),
        ("hlo", [], "compiled HLO of layer"),
        ("hlo", ["--stage", "stablehlo"], "StableHLO of layer"),
        ("jaxpr", ["--option", "rankdir=LR"], "jaxpr of layer: 4 equations"),
    ],
)
def test_jaxpr_and_hlo_of_a_function(kind, extra, title, model, tmp_path, capsys):
    out = tmp_path / "layer.svg"
    assert draw_layer(kind, model, out, *extra) == 0
    assert title in capsys.readouterr().out
    ET.parse(out)
