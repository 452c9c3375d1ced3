"""`jaxtour train`'s options under faults: bad numbers, a port two runs want at once, a
cluster whose coordinator never answers, more workers than memory holds. The process
cases run real processes, each wait bounded."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jaxtour.cli import main
from jaxtour.data._download import FILES
from jaxtour.launch import _launcher as _multiprocess

SHARED = Path(
    os.environ.get("JAXTOUR_DATA") or Path(__file__).parents[2] / "shared" / "mnist"
)
needs_mnist = pytest.mark.skipif(
    not all((SHARED / f.name).is_file() for f in FILES),
    reason="MNIST is not in $JAXTOUR_DATA",
)
TRAIN = [sys.executable, "-m", "jaxtour.cli", "train"]
SMALL = ["--epochs=1", "--batch-size=64", "--train-size=256", f"--data-dir={SHARED}"]
SLURM = dict(  # a 2-task srun job on this host, as test_multiprocess_cluster simulates
    SLURM_STEP_NODELIST="localhost", SLURM_NTASKS="2", SLURM_STEP_NUM_NODES="1"
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.pop("XLA_FLAGS", None)
    return env | {"JAX_PLATFORMS": "cpu"} | extra


@pytest.mark.parametrize(
    "option, value, said",
    [
        ("--devices-per-process", "0", "an integer from 1 to 256; got '0'"),
        ("--train-size", "-5", "an integer from 1 to 60000; got '-5'"),
        ("--port", "99999", "an integer from 1 to 65535; got '99999'"),
        ("--processes", "0", "an integer from 1 to 128; got '0'"),
        ("--epochs", "two", "an integer from 1 to 10000; got 'two'"),
        ("--batch-size", "0", "an integer from 1 to 60000; got '0'"),
        ("--lr", "nan", "a number above 0 up to 100; got 'nan'"),
        ("--momentum", "1", "a number from 0 to 0.999; got '1'"),
        ("--seed", "-1", "an integer from 0 to 4294967295; got '-1'"),
        ("--init-timeout", "0", "a number above 0 up to 86400; got '0'"),
    ],
)
def test_every_numeric_option_names_itself_and_its_range(option, value, said, capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", option, value])
    assert info.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == f"jaxtour train: error: argument {option}: must be {said}"


def test_the_library_checks_the_port_s_range_too():
    with pytest.raises(
        ValueError, match=r"`port` must be from 1 to 65535 \(or None\); got 99999"
    ):
        _multiprocess.free_port(99999)


def test_more_workers_than_memory_holds_are_refused_with_the_estimate(
    monkeypatch, capsys
):
    monkeypatch.setattr(_multiprocess, "available_memory", lambda: 8 * 2**30)
    assert main(["train", "--processes", "64", "--batch-size", "256"]) == 2
    assert capsys.readouterr().err == (
        "jaxtour train: error: 64 processes need about 17.5 GiB (about 280 MB each, "
        "measured), and this machine has 8.0 GiB available. Use at most --processes 29, "
        "or fewer processes with more --devices-per-process each.\n"
    )
    assert _multiprocess.check_memory(16) == (
        "warning: 16 processes need about 4.4 GiB (about 280 MB each, measured), and "
        "this machine has 8.0 GiB available; the machine may slow down or stop a worker."
    )
    assert _multiprocess.check_memory(14) is None  # under half: nothing to say


def test_a_claimed_port_is_refused_while_held_and_leaves_no_lock_file_behind():
    with _multiprocess.claimed_port() as port:
        lock = _multiprocess._lock_path(port)
        assert lock.is_file()
        refused = pytest.raises(_multiprocess.PortInUseError, match="another jaxtour")
        with refused, _multiprocess.claimed_port(port):
            pass
    assert not lock.exists()
    with _multiprocess.claimed_port(port) as again:  # free to claim once more
        assert again == port
    assert not lock.exists()


@needs_mnist
def test_a_port_another_jaxtour_run_holds_is_refused_before_any_worker_starts():
    with _multiprocess.claimed_port() as port:
        start = time.monotonic()
        proc = subprocess.run(
            [*TRAIN, "--processes=2", f"--port={port}", *SMALL],
            capture_output=True,
            text=True,
            env=_env(),
            timeout=120,
        )
        took = time.monotonic() - start
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        f"jaxtour train: error: Port {port} on 127.0.0.1 is in use by another jaxtour "
        "run starting now"
    )
    assert "process" not in proc.stdout  # no worker said anything: none started
    assert took < 60


@pytest.mark.slow  # two training runs race for one port
@needs_mnist
def test_two_runs_on_one_port_at_the_same_moment_never_cross_connect(tmp_path):
    port = _multiprocess.free_port()
    runs = [
        subprocess.Popen(
            [
                *TRAIN,
                "--processes=2",
                "--devices-per-process=1",
                f"--port={port}",
                f"--build-dir={tmp_path / str(i)}",
                *SMALL,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for i in range(2)
    ]
    try:
        outs = [run.communicate(timeout=300) for run in runs]
    finally:
        for run in runs:
            run.kill()
    codes = sorted(run.returncode for run in runs)
    print(f"exit codes {codes}")  # [0, 1] when they met, as they do here (with -s)
    # Both succeed only if one ended before the other claimed the port; never a crash.
    assert codes in ([0, 0], [0, 1]), outs
    for run, (_, err) in zip(runs, outs, strict=True):
        if run.returncode:
            assert err.startswith(
                f"jaxtour train: error: Port {port} on 127.0.0.1 is in use"
            )


def _cluster_member(*options: str) -> subprocess.Popen:
    """Process 1 of a simulated 2-task job whose process 0 never starts."""
    job = 10_000 * 4096 + _unused_slurm_offset()
    return subprocess.Popen(
        [*TRAIN, "--cluster", *options, *SMALL],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(**SLURM, SLURM_JOB_ID=str(job), SLURM_PROCID="1", SLURM_LOCALID="1"),
    )


def _unused_slurm_offset() -> int:
    for offset in range(4096):  # JAX's SLURM port: 61440 + job id % 4096
        try:
            _multiprocess.free_port(61440 + offset)
        except _multiprocess.PortInUseError:
            continue
        return offset
    pytest.skip("no free port in JAX's SLURM range")


def test_an_unreachable_coordinator_is_reported_in_words_after_the_timeout():
    proc = _cluster_member("--init-timeout=2")
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 1
    assert err.startswith(
        "jaxtour train: error: The other processes did not join within 2 s: "
        "jax.distributed.initialize() got no answer from the coordinator (process 0), "
        "or not every process started."
    )
    assert "--init-timeout SECONDS" in err
    assert "Check failure" not in err and "Traceback" not in err


def test_ctrl_c_stops_a_process_waiting_for_its_cluster():
    proc = _cluster_member()  # the 60 s default
    try:
        assert proc.stdout.readline().startswith(
            "joining the cluster: waiting up to 60 s"
        )
        time.sleep(1)  # into jax.distributed.initialize
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        proc.wait(timeout=20)
        took = time.monotonic() - start
    finally:
        proc.kill()
    err = proc.stderr.read()
    assert proc.returncode == 130, err
    assert took < 20
    assert err.startswith(
        "Stopped (Ctrl-C) while running jax.distributed.initialize(), after "
    )
    assert "this process left" in err


def test_the_worker_run_by_hand_checks_its_layout_numbers_too():
    proc = subprocess.run(
        [sys.executable, "-m", "jaxtour.launch._worker", "--process-id", "-1"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        "python -m jaxtour.launch._worker: error: argument --process-id: must be an "
        "integer from 0 to 999999; got '-1'"
    )
