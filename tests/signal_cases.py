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
WAVE = (np.sin(np.arange(64) * 0.3) + 0.5 * rng.normal(size=(2, 64))).astype(np.float32)
OTHER = rng.normal(size=64).astype(np.float32)
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
    out["stft"] = lambda: signal.stft(WAVE, nperseg=16)
    out["stft.options"] = lambda: signal.stft(WAVE[0], fs=8.0, window="hamming", nperseg=10,
                                              noverlap=3, nfft=12, detrend="linear",
                                              boundary="even", padded=False)
    out["stft.twosided_odd"] = lambda: signal.stft(WAVE, nperseg=9, return_onesided=False,
                                                   boundary="odd", axis=1)
    out["welch"] = lambda: signal.welch(WAVE, nperseg=16)
    out["welch.median_spectrum"] = lambda: signal.welch(WAVE, fs=2.0, nperseg=12,
                                                        scaling="spectrum", average="median")
    out["welch.window_array"] = lambda: signal.welch(WAVE.T, window=np.hanning(20),
                                                     axis=0, detrend=False)
    out["csd"] = lambda: signal.csd(WAVE, OTHER[None], nperseg=16)
    out["csd.median"] = lambda: signal.csd(WAVE[0], OTHER[:50], nperseg=8, noverlap=2,
                                           average="median")
    stft = signal.stft(WAVE, nperseg=16)[2]
    out["istft"] = lambda: signal.istft(stft)
    out["istft.options"] = lambda: signal.istft(
        signal.stft(WAVE[0], window="hamming", nperseg=10, noverlap=4)[2],
        window="hamming", nperseg=10, noverlap=4, fs=4.0)
    out["istft.axes"] = lambda: signal.istft(np.swapaxes(stft, 1, 2), time_axis=1,
                                             freq_axis=2)
    return out
