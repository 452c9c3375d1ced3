"""`jaxtour doctor`: what JAX, which devices, which renderer, which extras, where MNIST is."""

from __future__ import annotations

import argparse
import os
import platform
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from jaxtour import paths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir", help="MNIST folder (default: $JAXTOUR_DATA, else the cache)"
    )


def report(data_dir: str | None = None) -> list[tuple[str, str]]:
    """The doctor's findings as (label, value) rows."""
    import jax

    from jaxtour import _render
    from jaxtour._version import __version__

    rows = [
        ("jaxtour", __version__),
        (
            "python",
            f"{platform.python_version()} ({platform.system()} {platform.machine()})",
        ),
        ("jax", jax_status(jax.__version__)),
        ("jaxlib", _package_version("jaxlib")),
        ("default backend", jax.default_backend()),
    ]
    rows += [
        (f"device {d.id}", f"{d.platform}: {d.device_kind}") for d in jax.devices()
    ]
    rows.append(("graphviz renderer", _render.describe()))
    rows += _extra_rows()
    rows += _mnist_rows(data_dir)
    return rows


# The oldest JAX jaxtour is tested on (requirements.lock); pyproject asks for it too.
OLDEST_JAX = (0, 10)


def jax_status(version: str) -> str:
    """The JAX version, with a warning and what to do when it is older than jaxtour supports.

    Example:
        >>> jax_status("0.12.0.1")
        '0.12.0.1'
        >>> jax_status("0.4.38")
        '0.4.38 - older than 0.10, the oldest jaxtour supports: pip install -U "jax>=0.10"'
    """
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    if parts >= OLDEST_JAX:
        return version
    oldest = ".".join(map(str, OLDEST_JAX))
    return (
        f"{version} - older than {oldest}, the oldest jaxtour supports: "
        f'pip install -U "jax>={oldest}"'
    )


def _extra_rows() -> list[tuple[str, str]]:
    """One row per extra: present, or which packages are missing and the pip line."""
    from jaxtour.cli import _extras

    rows = []
    for extra in _extras.EXTRAS:
        missing = _extras.missing_packages(extra)
        rows.append(
            (
                f"extra {extra}",
                "present"
                if not missing
                else f"missing {', '.join(missing)}: {_extras.install_line(extra)}",
            )
        )
    return rows


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def _mnist_rows(data_dir: str | None) -> list[tuple[str, str]]:
    folder = paths.mnist_dir(data_dir)
    source = (
        "--data-dir"
        if data_dir
        else (
            f"${paths.DATA_VARIABLE}"
            if os.environ.get(paths.DATA_VARIABLE)
            else "user cache"
        )
    )
    return [
        ("mnist folder", f"{folder} (from {source})"),
        ("mnist files", mnist_state(folder)),
    ]


def mnist_state(folder: Path) -> str:
    """What the loader would make of the four MNIST files in `folder`: each checked as it
    checks them (size, then SHA-256), the bad ones named with what to do."""
    from jaxtour.data import FILES, ChecksumError, check

    missing, bad = [], []
    for spec in FILES:
        path = folder / spec.name
        if not path.is_file():
            missing.append(spec.name)
            continue
        try:
            check(path, spec)
        except ChecksumError as err:
            bad.append(f"{spec.name} is not the published file ({_why(err, path)})")
        except OSError as err:  # unreadable: the loader cannot use it either
            bad.append(f"{spec.name} cannot be read ({err.strerror or err})")
    if bad:
        return (
            f"{'; '.join(bad)}: delete {'it' if len(bad) == 1 else 'them'} (a fresh copy "
            "is downloaded on first use) or put the published files there"
            + (f"; missing {', '.join(missing)}" if missing else "")
        )
    if missing:
        return f"missing {', '.join(missing)} (downloaded on first use)"
    return "all 4 files present, sizes and SHA-256 as published"


def _why(err: OSError, path: Path) -> str:
    """The loader's reason without the path the row already names."""
    return str(err).replace(f"{path} has ", "has ")


def run(args: argparse.Namespace) -> int:
    rows = report(args.data_dir)
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    return 0
