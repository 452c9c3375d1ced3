"""The cluster path, `jaxtour train --cluster`: `jax.distributed.initialize()` with no
arguments, as on a TPU pod slice or under `srun`.

No cluster is reachable here, so the SLURM case is simulated: two local workers get the
`SLURM_*` variables srun would set for a 2-task job on one node, and JAX's own SLURM
detection (not jaxtour's code) derives the coordinator's address, the process count and
each process's index from them. The oracle is single-device training (`mlp.train`)
in this process, same seed and data, as in test_multiprocess.
"""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxtour import mlp
from jaxtour.data._download import FILES
from jaxtour.launch import _launcher

SHARED = Path(
    os.environ.get("JAXTOUR_DATA") or Path(__file__).parents[2] / "shared" / "mnist"
)
RUN = ["--epochs=1", "--batch-size=64", "--train-size=1024"]
# 4 devices each, as test_multiprocess's run and lesson 07's: in a run of the suite,
# process 0 finds the programs (start, shuffle, epoch) in the run's compilation cache.
DEVICES = 4
SLURM_PORTS = 61440  # JAX's SlurmCluster: port = SLURM_JOB_ID % 4096 + 61440
WORKER = [sys.executable, "-m", "jaxtour.launch._worker"]
CLUSTER = [sys.executable, "-m", "jaxtour.cli", "train", "--cluster"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.pop("XLA_FLAGS", None)
    return env | {"JAX_PLATFORMS": "cpu"} | extra


@pytest.mark.parametrize("command", [WORKER, CLUSTER], ids=["worker", "cli"])
def test_outside_a_cluster_it_says_what_to_do(command):
    proc = subprocess.run(
        [*command, *RUN], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    prefix = "jaxtour train: error: " if command == CLUSTER else ""
    assert proc.stderr.startswith(
        prefix + "No cluster to join: jax.distributed.initialize() found no TPU pod "
        "slice, SLURM or Open MPI job (coordinator_address should be defined.)."
    )
    assert "--coordinator HOST:PORT --processes N --process-id I" in proc.stderr
    assert "`jaxtour train --processes N` starts the processes" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cluster_and_processes_together_are_refused(capsys):
    from jaxtour.cli import main

    with pytest.raises(SystemExit) as usage:
        main(["train", "--cluster", "--processes", "2"])
    assert usage.value.code == 2
    assert "--processes starts local processes and --cluster joins a cluster's" in (
        capsys.readouterr().err
    )


def _free_slurm_job_id() -> int:
    """A job id whose derived coordinator port is free now."""
    for offset in random.sample(range(4096), 64):
        try:
            _launcher.free_port(SLURM_PORTS + offset)
        except _launcher.PortInUseError:
            continue
        return 10_000 * 4096 + offset
    pytest.skip("no free port in JAX's SLURM range 61440-65535")


@pytest.mark.slow  # starts several JAX processes
@pytest.mark.skipif(
    not all((SHARED / f.name).is_file() for f in FILES),
    reason="MNIST is not in $JAXTOUR_DATA",
)
def test_a_simulated_srun_job_joins_by_jax_s_slurm_detection_alone(tmp_path):
    job = _free_slurm_job_id()
    slurm = dict(
        SLURM_JOB_ID=str(job),
        SLURM_STEP_NODELIST="localhost",
        SLURM_NTASKS="2",
        SLURM_STEP_NUM_NODES="1",
    )
    command = [
        *CLUSTER,
        f"--devices-per-process={DEVICES}",
        f"--data-dir={SHARED}",
        f"--build-dir={tmp_path}",
        *RUN,
    ]
    procs = [
        subprocess.Popen(
            command,
            env=_env(**slurm, SLURM_PROCID=str(i), SLURM_LOCALID=str(i)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in (0, 1)
    ]
    try:
        outputs = [proc.communicate(timeout=240)[0] for proc in procs]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    assert [proc.returncode for proc in procs] == [0, 0], outputs[0][-2000:]
    assert "process 0 of 2: 4 of 8 devices" in outputs[0]  # JAX found both tasks
    assert "process 1 of 2: 4 of 8 devices" in outputs[1]
    assert "wrote " in outputs[0] and "wrote " not in outputs[1]  # process 0 reports
    record = json.loads((tmp_path / "mlp" / "history.json").read_text())
    assert record["device"] == "2 processes × 4 cpu"
    # the oracle: one device in this process, same seed and data (as test_multiprocess)
    data = mlp.load_mnist(SHARED, mirrors=[]).subset(1024)
    _, one = mlp.train(data, epochs=1, batch_size=64, seed=0, progress=False)
    assert len(record["batch_loss"]) == len(one.batch_loss) == 1024 // 64
    np.testing.assert_allclose(
        record["batch_loss"][:10], one.batch_loss[:10], rtol=1e-4
    )
    assert one.batch_loss[0] > 1.5 * one.batch_loss[-1]  # a real trajectory
