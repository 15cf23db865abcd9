"""FFT programs run on spmdc and on JAX 0.10.2 (`tools/record.py fft` records
JAX's results in tests/data/fft_reference.json; tests/numpy/test_fft.py compares). Each case is
a thunk over ``lib`` (spmdc or jax): values, gradients and vmapped transforms."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(7)
X = rng.normal(size=(3, 8)).astype(np.float32)
Y = rng.normal(size=(4, 5, 6)).astype(np.float32)
Z = (rng.normal(size=(3, 5)) + 1j * rng.normal(size=(3, 5))).astype(np.complex64)
W = rng.normal(size=(3, 5)).astype(np.float32)


def cases(lib):
    jnp, lax = lib.numpy, lib.lax
    fft = jnp.fft

    def loss_rfft(x):
        return jnp.sum(jnp.abs(fft.rfft(x, n=10)) ** 2 * jnp.arange(6.0))

    def loss_irfft(x):
        spec = fft.rfft(x) * (1 + jnp.arange(5.0))
        return jnp.sum(fft.irfft(spec, n=8) ** 3)

    def loss_fft2(x):
        return jnp.sum(jnp.real(fft.fft2(x, norm="ortho")) * jnp.imag(fft.fft2(x)))

    def loss_fftn_many(y):
        return jnp.sum(jnp.abs(fft.fftn(y, axes=(0, 2), norm="forward")))

    def loss_hfft(w):
        return jnp.sum(fft.hfft(w + 1j * w[::-1], n=7) * jnp.arange(7.0))

    def loss_ihfft(x):
        return jnp.sum(jnp.real(fft.ihfft(x, axis=0)) ** 2 + jnp.imag(fft.ihfft(x, axis=0)))

    def loss_complex(w):      # a real loss of a complex intermediate built from w
        z = Z * w
        return jnp.sum(jnp.abs(fft.ifft(z) + fft.fft(z, n=6)[:, :5]))

    return {
        "rfft_value": lambda: fft.rfft(X, n=10, norm="ortho"),
        "irfft_value": lambda: fft.irfft(Z, n=7),
        "fftn_value": lambda: fft.fftn(Y, s=(3, 4), axes=(2, 0)),
        "lax_fft_value": lambda: lax.fft(Z, "ifft", (3, 5)),
        "grad_rfft": lambda: lib.grad(loss_rfft)(X),
        "grad_irfft": lambda: lib.jit(lib.grad(loss_irfft))(X),
        "grad_fft2": lambda: lib.grad(loss_fft2)(X),
        "grad_fftn_many": lambda: lib.grad(loss_fftn_many)(Y),
        "grad_hfft": lambda: lib.grad(loss_hfft)(W),
        "grad_ihfft": lambda: lib.grad(loss_ihfft)(X),
        "grad_complex": lambda: lib.grad(loss_complex)(W),
        "vmap_rfft": lambda: lib.vmap(lambda x: fft.rfft(x), in_axes=1)(Y),
        "jvp_irfft": lambda: lib.jvp(lambda z: fft.irfft(z, n=9), (Z,), (Z * 1j,))[1],
    }
