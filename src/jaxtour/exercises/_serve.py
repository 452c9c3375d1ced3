"""The checker process's script: `python -m jaxtour.exercises._serve` (nothing imports it).

It loads the kit and every lesson's checkers, then serves the jobs `_pool` sends over
stdin/stdout (`_worker.run_job`) until stdin closes.
"""

from __future__ import annotations

import os
import signal
import sys

from jaxtour.exercises._worker import receive, run_job, send


def main() -> int:
    """Serve jobs on stdin/stdout until stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel's Ctrl-C is the parent's
    channel_in = os.fdopen(os.dup(0), "rb")
    channel_out = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # an answer's input() reads nothing
    os.dup2(2, 1)  # what C code prints cannot reach the channel
    import jax

    import jaxtour.exercises  # noqa: F401  (the kit, and every lesson's checkers)

    send(channel_out, {"ready": True, "devices": jax.device_count()})
    while True:
        try:
            job = receive(channel_in)
        except EOFError:
            return 0
        send(channel_out, run_job(job))


if __name__ == "__main__":
    sys.exit(main())
