"""A NumPy array captured by a trace as a converted copy (float64 -> float32) is keyed by
its own id, so the trace keeps it alive: otherwise, once freed, a later array of another
type and value could get its id and be taken for it (a uint32 array read as the float32
zeros: "add needs operands of one dtype", or wrong values)."""
from __future__ import annotations

import numpy as np

import spmdc
from spmdc import lax


def test_a_freed_converted_array_is_not_taken_for_a_later_one():
    def f(x):
        bounded = spmdc.random.uniform(spmdc.random.key(0), (2,), minval=np.zeros(2),
                                       maxval=3.0)
        return bounded, x + np.arange(4, dtype=np.uint32)
    bounded, counted = spmdc.jit(f)(np.zeros(4, np.uint32))
    assert counted.tolist() == [0, 1, 2, 3]
    assert bounded.shape == (2,) and bool(((bounded >= 0) & (bounded < 3)).all())


def test_converted_temporaries_each_keep_their_value():
    def f(x):
        for i in range(12):
            x = lax.max(x, np.full(3, float(i)))       # float64, converted, then freed
            x = x + np.full(3, i, dtype=np.uint8).astype(np.float32) * 0
        return x
    assert spmdc.jit(f)(np.zeros(3, np.float32)).tolist() == [11.0, 11.0, 11.0]
