"""spmdc.scipy.signal: convolutions, correlations and detrend equal to JAX 0.10.2's
(recorded by `tools/record.py signal` from tests/signal_cases.py), eagerly and under jit,
close to SciPy's, and JAX's exceptions for bad arguments."""
from __future__ import annotations

import numpy as np
import oracle
import pytest
import scipy.signal as ssig
import signal_cases

import spmdc
import spmdc.scipy.signal as signal

RECORDED = oracle.recorded_cases("signal_reference.json")
CASES = signal_cases.cases(spmdc)


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(RECORDED)


@pytest.mark.parametrize("name", oracle.one_per_method(CASES))  # every case: test-slow
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("name", ["correlate2d.full.swapped", "fftconvolve.axes.same",
                                  "detrend.breakpoints", "welch", "istft"])
def test_matches_jax_under_jit(name):
    oracle.assert_matches_recorded(spmdc.jit(CASES[name])(), RECORDED[name], name,
                                   rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_matches_scipy(mode):
    x, k = signal_cases.X2.astype(np.float64), signal_cases.K2.astype(np.float64)
    close = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(signal.convolve2d(x, k, mode=mode),
                               ssig.convolve2d(x, k, mode=mode), **close)
    np.testing.assert_allclose(signal.correlate2d(k, x, mode=mode),
                               ssig.correlate2d(k, x, mode=mode), **close)
    np.testing.assert_allclose(signal.fftconvolve(x, k, mode=mode),
                               ssig.fftconvolve(x, k, mode=mode), **close)
    np.testing.assert_allclose(signal.detrend(signal_cases.TREND, bp=[5]),
                               ssig.detrend(signal_cases.TREND, bp=[5]), **close)


def test_spectra_match_scipy():
    wave = signal_cases.WAVE.astype(np.float64)
    for got, want in zip(signal.welch(wave, nperseg=16), ssig.welch(wave, nperseg=16),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    for got, want in zip(signal.stft(wave, nperseg=16), ssig.stft(wave, nperseg=16),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    _, _, z = signal.stft(wave, nperseg=16)
    _, back = signal.istft(z)
    np.testing.assert_allclose(np.asarray(back)[:, :64], wave, atol=1e-5)


def test_bad_spectral_arguments_raise_jax_exceptions():
    wave = signal_cases.WAVE
    with pytest.raises(ValueError, match="Unknown boundary option 'periodic'"):
        signal.stft(wave, nperseg=8, boundary="periodic")
    with pytest.raises(ValueError, match="noverlap \\(8\\) must be less than nperseg"):
        signal.welch(wave, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="nfft \\(4\\) must be greater than or equal"):
        signal.welch(wave, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="Unknown scaling"):
        signal.welch(wave, scaling="power")
    with pytest.raises(ValueError, match='average must be "median" or "mean"'):
        signal.welch(wave, nperseg=8, average="max")
    with pytest.raises(ValueError, match="same rank"):
        signal.csd(wave, signal_cases.OTHER)
    with pytest.raises(ValueError, match="window must be 1-D"):
        signal.welch(wave, window=np.ones((2, 4)))
    with pytest.raises(ValueError, match="differing time and frequency axes"):
        signal.istft(np.ones((3, 9, 5), np.complex64), time_axis=1, freq_axis=1)


def test_bad_arguments_raise_jax_exceptions():
    x, k = signal_cases.X2, signal_cases.K2
    with pytest.raises(ValueError, match="mode must be one of"):
        signal.convolve(x, k, mode="circular")
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        signal.convolve(x, k, method="overlap-add")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(x, signal_cases.K1)
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        signal.convolve(x, np.ones((8, 2), np.float32))
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        signal.convolve2d(x, k, boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional inputs"):
        signal.correlate2d(signal_cases.X3, signal_cases.K3)
    with pytest.raises(ValueError, match="mapped axes must have the same shape"):
        signal.fftconvolve(x, k, axes=0)
    with pytest.raises(ValueError, match="'linear' or 'constant'"):
        signal.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match="[Bb]reakpoints"):
        signal.detrend(x, bp=[40])
