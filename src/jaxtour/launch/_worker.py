"""The script each process of a multi-process run runs: `python -m jaxtour.launch._worker`.

Only a script: it parses the command line, joins the other processes, trains
(`jaxtour.launch._spmd`, which `jaxtour train --cluster` calls too) and, in process 0,
prints one line ``JAXTOUR_RESULT {json}`` last, which `train_multiprocess` reads. Nothing
imports this module as a library.

With ``--coordinator auto``, `jax.distributed.initialize()` gets no arguments and
detects the cluster it runs in (Cloud TPU, SLURM, Open MPI); the rest is unchanged.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from jaxtour.launch._config import configs_of
from jaxtour.launch._procgroup import RESULT, NoClusterError
from jaxtour.launch._spmd import parse, start
from jaxtour.launch._spmd_train import train


def _watch_stdin() -> None:
    """Exit when the launcher goes away (its end of our stdin closes): no orphans."""

    def watch() -> None:
        sys.stdin.read()
        os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def _own_stdout() -> None:
    """Keep the stdout pipe for this script's lines; send file descriptor 1 to stderr.

    Gloo prints its connection messages to the C++ stdout from several threads at once,
    in pieces ("[Gloo] Rank 0 is connected to " ... "7"), which no line filter can
    reliably drop; after this they land on stderr, and the launcher's log holds only
    the lines `print` writes here.
    """
    sys.stdout.flush()
    ours = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = open(ours, "w", buffering=1, encoding="utf-8")  # noqa: SIM115


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)  # the process boundary: options become typed configs here
    join, config = configs_of(args)
    if args.own_stdout:
        _own_stdout()
    if args.watch_stdin:
        _watch_stdin()
    try:
        start(join)
    except NoClusterError as err:
        raise SystemExit(str(err)) from None
    except KeyboardInterrupt as err:
        print(err, file=sys.stderr)
        raise SystemExit(130) from None
    out = train(config, details=args.details)
    import jax

    if jax.process_index() == 0:
        print(RESULT + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
