"""`jaxtour draw`: one diagram to a file, for slides, without a notebook.

    jaxtour draw jaxpr mymodel:loss --args "f32[784,512]" "f32[128,784]" -o loss.svg
    jaxtour draw pipeline                       # the general diagram, step 3
    jaxtour draw landscape -o landscape.png     # .svg, .dot, .png or .pdf

`--args` are array specs, as jaxprs print types: `f32[128,784]`, `i32[]`, `bf16[8]`,
`bool[3]`; they become `jax.ShapeDtypeStruct`s (`--zeros` passes arrays of zeros
instead), and plain numbers (`3`, `0.5`) are passed as Python numbers. Tuples, lists
and dicts of them make pytrees: `"(f32[784,10], f32[10])"`, `"{w: f32[3,2], b: f32[2]}"`.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from jaxtour.cli import add_flag
from jaxtour.cli._usercode import UserCodeError, as_users, import_path

if TYPE_CHECKING:
    from jaxtour._diagram import Diagram

# KIND -> (what it draws, whether it needs MODULE:FUNCTION)
KINDS: dict[str, tuple[str, bool]] = {
    "pipeline": (
        "tracing → jaxpr → StableHLO → XLA → device (with FUNCTION: its counts)",
        False,
    ),
    "jaxpr": ("the jaxpr of FUNCTION: one node per equation", True),
    "hlo": ("FUNCTION's HLO: --stage compiled (fusions) or stablehlo", True),
    "landscape": (
        "the autodiff landscape: TensorFlow 1, PyTorch, TensorFlow 2, JAX",
        False,
    ),
    "stack": (
        "the JAX AI stack: JAX, the libraries on it, what is built with it",
        False,
    ),
}
DTYPES = {
    "bool": "bool",
    "bf16": "bfloat16",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "c64": "complex64",
    "c128": "complex128",
}
SUFFIXES = (".svg", ".dot", ".gv", ".png", ".pdf")
_SPEC = re.compile(r"^([a-z]+\d*)\[([\d,\s]*)\]$")


class ArraySpec:
    """A parsed `--args` spec: a dtype name and a shape, e.g. `f32[128,784]`."""

    def __init__(self, text: str, dtype: str, shape: tuple[int, ...]) -> None:
        self.text, self.dtype, self.shape = text, dtype, shape

    def __repr__(self) -> str:
        return self.text


def parse_spec(text: str) -> Any:
    """`f32[128,784]` -> ArraySpec; `3` -> 3; `(f32[3], {w: i32[]})` -> that pytree.

    Anything else raises argparse.ArgumentTypeError, which argparse reports as a
    usage error (exit code 2).
    """
    text = text.strip()
    if text[:1] in "([{":
        return _parse_tree(text)
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+\.?\d*[eE][-+]?\d+)", text):
        return float(text)
    match = _SPEC.match(text.replace(" ", ""))
    if not match or match[1] not in DTYPES:
        known = ", ".join(DTYPES)
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an array spec. Write DTYPE[DIMS] as jaxprs print types, e.g. "
            f"f32[128,784] (a matrix), f32[3] (a vector) or i32[] (a scalar), with DTYPE "
            f"one of {known}; or a plain number such as 3 or 0.5."
        )
    dims = [d for d in match[2].replace(" ", "").split(",") if d]
    return ArraySpec(text, DTYPES[match[1]], tuple(int(d) for d in dims))


_TREE_LEAF = re.compile(r"\b[a-z]+\d*\[[\d,\s]*\]|[-+]?\.?\d[\w.+-]*")
_TREE_KEY = re.compile(r"([{,]\s*)([A-Za-z_]\w*)(\s*:)")


def _parse_tree(text: str) -> Any:
    # Quote every leaf and bare dict key, read it as a Python literal, then parse leaves.
    quoted = _TREE_KEY.sub(r"\1'\2'\3", _TREE_LEAF.sub(lambda m: repr(m[0]), text))
    try:
        tree = ast.literal_eval(quoted)
    except (ValueError, SyntaxError):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a pytree of array specs; write e.g. "
            '"(f32[784,512], f32[512])" or "{w: f32[784,512], b: f32[512]}".'
        ) from None
    return _map_leaves(tree)


def _map_leaves(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {key: _map_leaves(value) for key, value in tree.items()}
    if isinstance(tree, tuple | list):
        return type(tree)(_map_leaves(value) for value in tree)
    return parse_spec(str(tree))


def parse_option(text: str) -> tuple[str, object]:
    """`max_depth=2` -> ("max_depth", 2); values are Python literals, else strings."""
    key, sep, value = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not KEY=VALUE; write e.g. --option max_depth=2 or "
            "--option group_by=source."
        )
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = "\n".join(f"  {name:<10} {what}" for name, (what, _) in KINDS.items())
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = f"kinds:\n{kinds}\n\nexample:\n  {__doc__.splitlines()[2].strip()}"
    parser.add_argument(
        "kind",
        choices=list(KINDS),
        metavar="KIND",
        help=f"what to draw: {', '.join(KINDS)}",
    )
    parser.add_argument(
        "target",
        nargs="?",
        metavar="MODULE:FUNCTION",
        help="the function to trace, e.g. mymodel:loss or path/to/file.py:loss",
    )
    parser.add_argument(
        "--args",
        nargs="+",
        type=parse_spec,
        default=[],
        metavar="SPEC",
        help='example arguments: "f32[128,784]" "i32[]" 3',
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="file to write; the suffix picks .svg, .dot, .png or .pdf "
        "(default: FUNCTION_KIND.svg)",
    )
    parser.add_argument(
        "--step",
        type=int,
        choices=(1, 2, 3),
        default=3,
        help="pipeline: 1 tracing and jit, 2 every stage, 3 jax.* entry points",
    )
    parser.add_argument(
        "--stage",
        choices=("compiled", "stablehlo"),
        default="compiled",
        help="hlo: compiled (after XLA) or stablehlo (before)",
    )
    parser.add_argument(
        "--static-argnums",
        type=int,
        nargs="+",
        default=[],
        metavar="N",
        help="positions of arguments that are constants, as in jax.jit",
    )
    parser.add_argument(
        "--option",
        type=parse_option,
        action="append",
        metavar="KEY=VALUE",
        default=[],
        help="a drawing option, e.g. max_depth=2",
    )
    add_flag(parser, "--zeros", "pass arrays of zeros instead of jax.ShapeDtypeStruct")
    parser.set_defaults(draw_parser=parser)


def run(args: argparse.Namespace) -> int:
    parser = args.draw_parser
    needs_function = KINDS[args.kind][1]
    if needs_function and not args.target:
        parser.error(
            f"`jaxtour draw {args.kind}` needs MODULE:FUNCTION, e.g. "
            f'jaxtour draw {args.kind} mymodel:loss --args "f32[128,784]"'
        )
    if args.target is None and (args.args or args.static_argnums):
        parser.error("--args and --static-argnums need MODULE:FUNCTION to pass them to")
    try:
        f = resolve(args.target, parser) if args.target else None
    except UserCodeError as err:
        print(f"jaxtour draw: error: {err}", file=sys.stderr)
        return 1
    output = args.output or Path(f"{_stem(args)}.svg")
    if output.suffix.lower() not in SUFFIXES:
        parser.error(
            f"cannot write {output.name!r}: use a {', '.join(SUFFIXES)} suffix"
        )
    _check_options(args.kind, dict(args.option), parser)
    example = example_arguments(args.args, args.zeros)
    if f is not None:
        _check_arity(f, args.target, len(example), parser)
    diagram = draw(args.kind, f, example, args)
    diagram.save(output)
    print(f"wrote {output}: {diagram.title}")
    return 0


def _stem(args: argparse.Namespace) -> str:
    if not args.target:
        return args.kind
    return f"{args.target.rpartition(':')[2].replace('.', '_')}_{args.kind}"


def resolve(target: str, parser: argparse.ArgumentParser) -> Callable[..., Any]:
    """MODULE:FUNCTION (or path/to/file.py:FUNCTION) -> the function, or a usage error."""
    module_name, sep, attribute = target.rpartition(":")
    if not sep or not module_name or not attribute:
        parser.error(f"expected MODULE:FUNCTION such as mymodel:loss; got {target!r}")
    module = _import(module_name, parser)
    value = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            names = sorted(
                n
                for n in dir(module)
                if callable(getattr(module, n, None)) and not n.startswith("_")
            )
            parser.error(
                f"{module_name} has no {attribute!r}; its functions include: "
                f"{', '.join(names[:12]) or '(none)'}"
            )
        value = getattr(value, part)
    if not callable(value):
        parser.error(f"{target} is a {type(value).__name__}, not a function")
    return value


def _import(module_name: str, parser: argparse.ArgumentParser) -> ModuleType:
    path = Path(module_name)
    if path.suffix == ".py":
        if not path.is_file():
            parser.error(f"no file {path} (looked in {Path.cwd()})")
        return as_users(path.name, lambda: import_path(path), missing=None)
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # a module beside the user, as `python -m`
    try:
        load = lambda: importlib.import_module(module_name)
        return as_users(module_name, load, missing=module_name)
    except ModuleNotFoundError as err:  # the module itself, not one it imports
        parser.error(
            f"cannot import {module_name!r}: {err}. Run jaxtour from the folder "
            "that holds it, or pass a path: path/to/file.py:FUNCTION"
        )


def example_arguments(specs: list, zeros: bool) -> list:
    """ArraySpecs as jax.ShapeDtypeStruct (or zeros); numbers stay numbers."""
    import jax
    import jax.numpy as jnp

    leaves = jax.tree.leaves(specs, is_leaf=lambda x: isinstance(x, ArraySpec))
    if any(
        isinstance(s, ArraySpec)
        and s.dtype in ("float64", "int64", "uint64", "complex128")
        for s in leaves
    ):
        jax.config.update("jax_enable_x64", True)  # else JAX silently makes them 32-bit
    make = (
        (lambda s: jnp.zeros(s.shape, s.dtype))
        if zeros
        else (lambda s: jax.ShapeDtypeStruct(s.shape, jnp.dtype(s.dtype)))
    )
    leaf = lambda s: make(s) if isinstance(s, ArraySpec) else s
    return [
        jax.tree.map(leaf, s, is_leaf=lambda x: isinstance(x, ArraySpec)) for s in specs
    ]


_DRAWERS = {
    "landscape": "draw_autodiff_landscape",
    "stack": "draw_ai_stack",
    "pipeline": "draw_pipeline",
    "jaxpr": "draw_jaxpr",
    "hlo": "draw_hlo",
}
_SET_BY_FLAGS = {"f", "step", "stage", "static_argnums"}  # --step, --stage, ...


def _check_options(kind: str, options: dict, parser: argparse.ArgumentParser) -> None:
    """Refuse an --option the visualiser does not take, listing those it does."""
    from jaxtour import viz

    drawer = getattr(viz, _DRAWERS[kind], None)
    if drawer is None or not options:
        return
    taken = [
        name
        for name, p in inspect.signature(drawer).parameters.items()
        if p.kind is p.KEYWORD_ONLY or p.default is not p.empty
    ]
    taken = [name for name in taken if name not in _SET_BY_FLAGS]
    unknown = [name for name in options if name not in taken]
    if unknown:
        parser.error(
            f"`jaxtour draw {kind}` takes no option {unknown[0]!r}; its options are "
            f"{', '.join(taken) or 'none'} (--option NAME=VALUE)"
        )


def _check_arity(
    f: Callable[..., Any], target: str, given: int, parser: argparse.ArgumentParser
) -> None:
    """Refuse a function called with fewer `--args` than it needs, naming them."""
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):  # a builtin or an object without a signature
        return
    needed = [
        p.name
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        and p.default is p.empty
    ]
    if given < len(needed):
        parser.error(
            f"{target} takes {len(needed)} argument(s) ({', '.join(needed)}) and "
            f"--args gave {given}: give one spec per argument, e.g. --args "
            + " ".join(['"f32[128,784]"'] * len(needed))
        )


def draw(
    kind: str, f: Callable[..., Any] | None, example: list, args: argparse.Namespace
) -> Diagram:
    """Call the visualiser for `kind` the jaxtour way: configure, then call with examples."""
    from jaxtour import viz

    options = dict(args.option)
    static = tuple(args.static_argnums)
    if static:
        options["static_argnums"] = static
    if kind == "landscape":
        return viz.draw_autodiff_landscape(**options)
    if kind == "stack":
        return viz.draw_ai_stack(**options)
    if kind == "pipeline":
        if f is None:
            return viz.draw_pipeline(step=args.step, **options)
        return viz.draw_pipeline(f, step=args.step, **options)(*example)
    name = _DRAWERS[kind]
    drawer = getattr(viz, name, None)
    if drawer is None:
        raise RuntimeError(f"jaxtour.viz.{name} is not in this version of jaxtour")
    if kind == "hlo":
        options["stage"] = args.stage
    return drawer(f, **options)(*example)
