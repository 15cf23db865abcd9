"""spmdc/lax/associative.py: associative_scan (sums both ways, pytrees under jit) and
cumlogsumexp against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc import lax


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_sums(n, reverse):
    x = np.arange(1.0, 2 * n + 1, dtype=np.float32).reshape(2, n)
    got = lax.associative_scan(lambda a, b: a + b, x, reverse=reverse, axis=1)
    want = np.flip(np.cumsum(np.flip(x, 1), 1), 1) if reverse else np.cumsum(x, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_associative_scan_pytree_and_jit():
    a = np.random.RandomState(1).rand(7).astype(np.float32)
    b = np.random.RandomState(2).rand(7).astype(np.float32)

    def compose(p, q):                 # affine maps x -> a x + b, composed left to right
        return p[0] * q[0], q[0] * p[1] + q[1]
    got_a, got_b = spmdc.jit(lambda u, v: lax.associative_scan(compose, (u, v)))(a, b)
    state, want = (a[0], b[0]), [(a[0], b[0])]
    for i in range(1, 7):
        state = compose(state, (a[i], b[i]))
        want.append(state)
    np.testing.assert_allclose(got_a, [w[0] for w in want], rtol=1e-5)
    np.testing.assert_allclose(got_b, [w[1] for w in want], rtol=1e-5)
    with pytest.raises(TypeError, match="same structure"):
        lax.associative_scan(lambda p, q: p[0], (a, b))


def test_cumlogsumexp():
    y = np.random.RandomState(0).randn(3, 7).astype(np.float32)
    np.testing.assert_allclose(lax.cumlogsumexp(y, 1), np.logaddexp.accumulate(y, 1),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lax.cumlogsumexp(y, 0, reverse=True),
                               np.logaddexp.accumulate(y[::-1], 0)[::-1], rtol=1e-5, atol=1e-6)
    g = spmdc.grad(lambda t: lax.cumlogsumexp(t).sum())(np.array([0.0, 1.0, 2.0], np.float32))
    e = np.exp([0.0, 1.0, 2.0])
    want = [1 + e[0] / e[:2].sum() + e[0] / e.sum(), e[1] / e[:2].sum() + e[1] / e.sum(),
            e[2] / e.sum()]
    np.testing.assert_allclose(g, want, rtol=1e-5)
