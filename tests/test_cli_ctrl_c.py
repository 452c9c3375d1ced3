"""Ctrl-C under the `jaxtour` command: one line, `interrupted`, status 130, however a
library handled it. The Ctrl-C is raised in-process at a known point (no timing luck)."""

import gc
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxtour.cli import _lessons, _tour_steps, main

# Python reports the KeyboardInterrupt a gc callback swallowed as unraisable: that
# swallowing is what these tests stage
pytestmark = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning"
)


def _ctrl_c_swallowed() -> None:
    """Ctrl-C arriving in a gc callback: Python prints 'Exception ignored in ...' and
    drops the KeyboardInterrupt (as it does in JAX's `_xla_gc_callback`)."""

    def callback(phase: str, info: dict) -> None:
        if phase == "start":  # once: a second Ctrl-C ends the process at once
            signal.raise_signal(signal.SIGINT)

    gc.callbacks.append(callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(callback)


def test_a_ctrl_c_that_a_library_swallowed_still_ends_the_command_as_interrupted(
    monkeypatch, capsys
):
    monkeypatch.setattr(_lessons, "run", lambda args: _ctrl_c_swallowed() or 0)
    assert main(["lessons", "x"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "interrupted"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


@pytest.mark.parametrize(
    "fault",
    # nbclient, after the notebook's kernel died of the same Ctrl-C
    [AssertionError("self.km is not None"), RuntimeError("Kernel died")],
)
def test_a_fault_after_ctrl_c_is_said_as_interrupted_without_a_traceback(
    fault, monkeypatch, capsys
):
    def run(args):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            raise fault from None

    monkeypatch.setattr(_lessons, "run", run)
    assert main(["lessons", "x"]) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_tour_s_notebook_step_stops_at_the_next_lesson_after_a_swallowed_ctrl_c(
    monkeypatch, tmp_path
):
    from jaxtour.lesson import Executed

    looked_up = []
    run = Executed(tmp_path / "a.ipynb", tmp_path / "a.html")
    for path in run:
        path.write_text("{}")

    def cached(source, cache):  # nbclient's event loop swallowed it
        looked_up.append(source)
        _ctrl_c_swallowed()
        return run

    monkeypatch.setattr(_tour_steps.lesson, "cached", cached)
    monkeypatch.setattr(_tour_steps.lesson, "local_pictures", lambda source: [])
    sources = [tmp_path / "a", tmp_path / "b"]
    monkeypatch.setattr(_tour_steps, "lesson_sources", lambda *a: (sources, []))
    args = ["tour", "--only", "notebooks", "--build-dir", str(tmp_path / "build")]
    assert main(args) == 130
    assert looked_up == [tmp_path / "a"]


# The console script as a whole: after Ctrl-C the process ends without the interpreter's
# finalisation (XLA's threads crashed it there: a segfault, status 139), its buffered
# output written.
_SCRIPT = textwrap.dedent(
    """
    import atexit, signal, sys
    from jaxtour.cli import _lessons, main

    def run(args):
        print("buffered", end="")
        for _ in range({presses}):
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                if {presses} == 1:
                    raise
        print("carried on", file=sys.stderr)
        return 0

    atexit.register(print, "finalised", file=sys.stderr)
    _lessons.run = run
    sys.argv = ["jaxtour", "lessons", "x"]
    sys.exit(main())
    """
)


# twice: both swallowed (as in a gc callback), so only the second one's exit stops it
@pytest.mark.parametrize("presses", [1, 2])
def test_after_ctrl_c_the_command_ends_with_130_skipping_finalisation(
    presses, tmp_path
):
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(presses=presses)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 130, result.stderr
    assert result.stdout == "buffered"
    assert result.stderr == "interrupted\n"  # neither "carried on" nor "finalised"


def test_a_ctrl_c_that_nbclient_handled_is_a_keyboard_interrupt_and_ours_comes_back(
    monkeypatch,
):
    import nbclient

    from jaxtour.lesson import _execute

    class Client:  # nbclient's SIGINT handling as it is: kernel shut down, handler left
        def __init__(self, *args, **kwargs):
            pass

        def execute(self):
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self._async_cleanup_kernel_future = object()
            raise AssertionError  # `assert self.km is not None`, after DeadKernelError

    def ours(signum, frame):
        raise KeyboardInterrupt

    monkeypatch.setattr(nbclient, "NotebookClient", Client)
    monkeypatch.setattr(_execute, "kernel_ipc_address", lambda: None)
    signal.signal(signal.SIGINT, ours)
    try:
        with pytest.raises(KeyboardInterrupt):
            _execute.run_notebook(None, Path("."), 10, "x.py")
        assert signal.getsignal(signal.SIGINT) is ours
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def test_training_stops_at_the_epochs_end_after_a_swallowed_ctrl_c(
    monkeypatch, tmp_path, capsys
):
    import jaxtour.mlp
    from jaxtour.mlp import History

    ran = []

    def train(data, *, epochs, on_epoch, **options):
        history = History()
        for epoch in range(epochs):
            for figures in (
                history.loss,
                history.train_accuracy,
                history.test_accuracy,
            ):
                figures.append(0.5)
            history.epoch_seconds.append(0.1)
            ran.append(epoch)
            if epoch == 0:
                _ctrl_c_swallowed()  # in a gc callback, as JAX's can be
            on_epoch(epoch, history)
        return None, history

    class Data:
        def subset(self, size):
            return self

    monkeypatch.setattr(jaxtour.mlp, "train", train)
    monkeypatch.setattr(jaxtour.mlp, "load_mnist", lambda folder: Data())
    args = ["train", "--epochs", "3", "--build-dir", str(tmp_path)]
    assert main(args) == 130
    assert ran == [0]  # not every epoch, then 130
    assert capsys.readouterr().err.splitlines()[-1] == "interrupted"
    assert not (tmp_path / "mlp").exists()
