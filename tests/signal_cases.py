"""jax.scipy.signal's convolutions, correlations and detrend, run on spmdc and on JAX
0.10.2 (`tools/record.py signal` records JAX's results in tests/data/signal_reference.json;
tests/scipy/test_signal.py compares)."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(31)
X1 = rng.normal(size=9).astype(np.float32)
K1 = rng.normal(size=4).astype(np.float32)
X2 = rng.normal(size=(6, 7)).astype(np.float32)
K2 = rng.normal(size=(3, 2)).astype(np.float32)
X3 = rng.normal(size=(4, 5, 3)).astype(np.float32)
K3 = rng.normal(size=(2, 3, 2)).astype(np.float32)
BATCHED = rng.normal(size=(3, 8)).astype(np.float32)
BATCHED_K = rng.normal(size=(3, 3)).astype(np.float32)
TREND = (np.arange(24, dtype=np.float32).reshape(2, 12) * 0.5
         + rng.normal(size=(2, 12)).astype(np.float32))


def cases(lib):
    signal = lib.scipy.signal
    out = {}
    for mode in ("full", "same", "valid"):
        out[f"convolve.1d.{mode}"] = lambda m=mode: signal.convolve(X1, K1, mode=m)
        out[f"convolve.1d.{mode}.swapped"] = lambda m=mode: signal.convolve(K1, X1, mode=m)
        out[f"convolve.3d.{mode}"] = lambda m=mode: signal.convolve(X3, K3, mode=m)
        out[f"convolve.fft.{mode}"] = lambda m=mode: signal.convolve(X2, K2, mode=m,
                                                                     method="fft")
        out[f"correlate.1d.{mode}"] = lambda m=mode: signal.correlate(X1, K1, mode=m)
        out[f"convolve2d.{mode}"] = lambda m=mode: signal.convolve2d(X2, K2, mode=m)
        out[f"correlate2d.{mode}"] = lambda m=mode: signal.correlate2d(X2, K2, mode=m)
        out[f"correlate2d.{mode}.swapped"] = lambda m=mode: signal.correlate2d(K2, X2, mode=m)
        out[f"fftconvolve.{mode}"] = lambda m=mode: signal.fftconvolve(X3, K3, mode=m)
        out[f"fftconvolve.axes.{mode}"] = lambda m=mode: signal.fftconvolve(
            BATCHED, BATCHED_K, mode=m, axes=1)
    out["correlate2d.same_shape.valid"] = lambda: signal.correlate2d(K2, K2 + 1, mode="valid")
    out["detrend.linear"] = lambda: signal.detrend(TREND)
    out["detrend.constant"] = lambda: signal.detrend(TREND, axis=0, type="constant")
    out["detrend.breakpoints"] = lambda: signal.detrend(TREND, bp=[4, 9])
    return out
