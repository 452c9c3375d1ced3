"""Running code with several simulated CPU devices, shared by the parallelism tests.

The test process itself has initialised JAX with one device, so such code runs in a
fresh interpreter that asks for `n_devices` before JAX starts.
"""

import json
import os
import subprocess
import sys
import textwrap


def run_with_devices(code: str, n_devices: int = 8) -> dict:
    """Run `code` in a fresh Python with `n_devices` simulated CPU devices; its last
    printed line is JSON, returned decoded."""
    prelude = f"import jax\njax.config.update('jax_num_cpu_devices', {n_devices})\n"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
