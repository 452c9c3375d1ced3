"""The cluster path of the multi-process worker: `jax.distributed.initialize()` with no
arguments, as on a TPU pod slice or under `srun`.

No cluster is reachable here, so the SLURM case is simulated: two local workers get the
`SLURM_*` variables srun would set for a 2-task job on one node, and JAX's own SLURM
detection (not jaxtour's code) derives the coordinator's address, the process count and
each process's index from them. The oracle is the launcher's run with explicit
arguments: same seed and data, the same losses.
"""

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxtour import mlp
from jaxtour.mlp import _multiprocess
from jaxtour.mlp._download import FILES
from jaxtour.mlp._procgroup import RESULT

SHARED = Path(
    os.environ.get("JAXTOUR_DATA") or Path(__file__).parents[2] / "shared" / "mnist"
)
RUN = ["--epochs=1", "--batch-size=64", "--train-size=1024", "--test-size=500"]
SLURM_PORTS = 61440  # JAX's SlurmCluster: port = SLURM_JOB_ID % 4096 + 61440
WORKER = [sys.executable, "-m", "jaxtour.mlp._worker"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.pop("XLA_FLAGS", None)
    return env | {"JAX_PLATFORMS": "cpu"} | extra


def test_outside_a_cluster_the_worker_says_what_to_do():
    proc = subprocess.run(
        [*WORKER, *RUN], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("No cluster to join: jax.distributed.initialize()")
    assert "--coordinator HOST:PORT --processes N --process-id I" in proc.stderr
    assert "jaxtour train --processes N" in proc.stderr
    assert "Traceback" not in proc.stderr


def _free_slurm_job_id() -> int:
    """A job id whose derived coordinator port is free now."""
    for offset in random.sample(range(4096), 64):
        try:
            _multiprocess.free_port(SLURM_PORTS + offset)
        except _multiprocess.PortInUseError:
            continue
        return 10_000 * 4096 + offset
    pytest.skip("no free port in JAX's SLURM range 61440-65535")


@pytest.mark.skipif(
    not all((SHARED / f.name).is_file() for f in FILES),
    reason="MNIST is not in $JAXTOUR_DATA",
)
def test_a_simulated_srun_job_joins_by_jax_s_slurm_detection_alone():
    job = _free_slurm_job_id()
    slurm = dict(
        SLURM_JOB_ID=str(job),
        SLURM_STEP_NODELIST="localhost",
        SLURM_NTASKS="2",
        SLURM_STEP_NUM_NODES="1",
    )
    command = [*WORKER, "--devices=2", f"--data-dir={SHARED}", *RUN]  # no coordinator
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
    results = [line for line in outputs[0].splitlines() if line.startswith(RESULT)]
    assert not any(line.startswith(RESULT) for line in outputs[1].splitlines())
    slurm_run = _multiprocess._result(results, 0.0)
    assert [len(ids) for ids in slurm_run.mesh] == [2, 2]  # 2 processes joined
    assert slurm_run.history.device == "2 processes × 2 cpu"
    launched = mlp.train_multiprocess(
        str(SHARED),
        processes=2,
        devices_per_process=2,
        epochs=1,
        batch_size=64,
        train_size=1024,
        test_size=500,
        echo=False,
        timeout=240,
    )
    np.testing.assert_allclose(
        slurm_run.history.batch_loss, launched.history.batch_loss, rtol=1e-5
    )
