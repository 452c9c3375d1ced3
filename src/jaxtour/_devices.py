"""What a lesson's set-up cell prints: JAX, the backend, and every device."""

from __future__ import annotations


def describe_devices() -> str:
    """One line per fact: JAX version, default backend, and the devices JAX sees.

    JAX picks the best backend by itself (GPU, then TPU, then CPU), so the same
    lesson uses a Colab TPU or a laptop CPU unchanged; this says which it got.

    Example:
        >>> print(describe_devices())  # doctest: +ELLIPSIS
        JAX ... on ...: ... device...
    """
    import jax

    devices = jax.devices()
    kinds = sorted({d.device_kind for d in devices})
    plural = "s" * (len(devices) != 1)
    return (
        f"JAX {jax.__version__} on {jax.default_backend()}: {len(devices)} device{plural} "
        f"({', '.join(kinds)})"
    )
