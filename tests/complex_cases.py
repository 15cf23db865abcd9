"""Complex derivative cases shared by tests/transforms/test_grad_float0_complex.py and
`tools/record.py complex_grad` (which runs them with JAX 0.10.2): ``cases(lib)`` maps
a name to a thunk returning a pytree of arrays."""
import numpy as np

Z = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.7 - 1.1j], np.complex64)
W = np.array([0.3 - 0.2j, 1.5 + 0.5j, -1.0 + 0.25j], np.complex64)


def cases(lib):
    jnp, lax = lib.numpy, lib.lax
    z0 = Z[0]
    return {
        "grad_abs_squared": lambda: lib.grad(lambda z: jnp.abs(z) ** 2)(z0),
        "grad_abs": lambda: lib.grad(jnp.abs)(z0),
        "grad_real_square": lambda: lib.grad(lambda z: jnp.real(z * z))(z0),
        "grad_imag_times_real": lambda: lib.grad(lambda z: jnp.imag(z) * jnp.real(z))(z0),
        "grad_real_sin_conj": lambda: lib.grad(lambda z: jnp.real(jnp.sin(z) * jnp.conj(z)))(z0),
        "grad_angle": lambda: lib.grad(jnp.angle)(z0),
        "grad_sum_abs_product": lambda: lib.grad(
            lambda w: jnp.sum(jnp.abs(w * Z)))(W),
        "grad_attributes": lambda: lib.grad(
            lambda w: jnp.sum(w.real * w.imag + jnp.abs(w.conj() - 1.0)))(W),
        "grad_lax_complex": lambda: lib.grad(
            lambda x, y: jnp.abs(lax.complex(x, y)) ** 2, argnums=(0, 1))(1.5, -0.5),
        "grad_real_input_complex_path": lambda: lib.grad(
            lambda x: jnp.real(jnp.exp(1j * x)))(0.3),
        "holomorphic_grad": lambda: lib.grad(lambda z: z * jnp.sin(z), holomorphic=True)(z0),
        "holomorphic_jacrev": lambda: lib.jacrev(lambda z: jnp.exp(z) * z,
                                                 holomorphic=True)(Z),
        "holomorphic_jacfwd": lambda: lib.jacfwd(lambda z: jnp.exp(z) * z,
                                                 holomorphic=True)(Z),
        "jacrev_abs": lambda: lib.jacrev(jnp.abs)(Z),
        "jvp_abs": lambda: lib.jvp(jnp.abs, (Z,), (W,))[1],
        "jvp_real_imag_conj": lambda: lib.jvp(
            lambda z: (jnp.real(z), jnp.imag(z), jnp.conj(z)), (Z,), (W,))[1],
        "vjp_real_imag": lambda: lib.vjp(lambda z: jnp.real(z) + 2.0 * jnp.imag(z), Z)[1](
            np.array([1.0, -1.0, 0.5], np.float32)),
        "vjp_conj": lambda: lib.vjp(jnp.conj, Z)[1](W),
    }
