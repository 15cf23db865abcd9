"""The key-reuse checker (Note [key reuse] in spmdc/random/key_reuse.py). Every expected
outcome and message is JAX 0.10.2's, recorded by running the same program with
``jax.debug_key_reuse(True)``."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax, random
from spmdc.errors import KeyReuseError

EAGER_JIT = "Previously-consumed key passed to jit-compiled function at index 0"


def _twice(g):
    def f():
        k = random.key(0)
        g(k)
        g(k)
    return f


def _twice_in_jit(g):
    def f():
        @spmdc.jit
        def h():
            k = random.key(0)
            g(k)
            return g(k)
        h()
    return f


def _index_twice_in_jit():
    @spmdc.jit
    def h(ks):
        return random.normal(ks[0]) + random.normal(ks[0])
    h(random.split(random.key(0)))


def _index_each_in_jit():
    @spmdc.jit
    def h(ks):
        return random.normal(ks[0]) + random.normal(ks[1:][0])
    h(random.split(random.key(0), 3))


def _reshape_in_jit():
    @spmdc.jit
    def h(k):
        k2 = k.reshape(1)
        random.normal(k)
        return random.normal(k2.reshape(()))
    h(random.key(0))


def _reshape_eager():
    k = random.key(0)
    k2 = k.reshape(1)                  # eagerly a forward copies the flag, as JAX's does
    random.normal(k)
    random.normal(k2.reshape(()))


def _slice_overlap():
    ks = random.split(random.key(0), 3)
    ks[0:2]
    ks[1]


def _iterate_then_index():
    ks = random.split(random.key(0), 3)
    [random.normal(k) for k in ks]     # eager iteration consumes nothing
    random.normal(ks[0])


def _dynamic_index():
    ks = random.split(random.key(0), 3)
    ks[jnp.array(0)]
    ks[jnp.array(0)]


def _stack_then_use():
    k = random.key(0)
    jnp.stack([k, k])
    random.normal(k)


def _fold_in_repeatedly():
    k = random.key(0)
    random.fold_in(k, 1)
    random.normal(k)
    random.fold_in(k, 2)


def _cond_closure():
    @spmdc.jit
    def h(k, p):
        return lax.cond(p, lambda: random.normal(k), lambda: random.uniform(k))
    h(random.key(0), True)


def _scan_split():
    def body(k, _):
        k, s = random.split(k)
        return k, random.bits(s)
    lax.scan(body, random.key(0), None, length=3)


def _clone_in_jit():
    @spmdc.jit
    def h(k):
        return random.normal(k) + random.normal(random.clone(k))
    h(random.key(0))


def _split_twice_in_jit():
    @spmdc.jit
    def h(k):
        return random.normal(random.split(k)[0]), random.split(k)
    h(random.key(0))


def _disable_jit(g):
    def f():
        with spmdc.disable_jit():
            _twice(g)()
    return f


def _raw_key():
    k = random.PRNGKey(0)              # raw keys are not tracked
    random.normal(k)
    random.normal(k)


CASES = {
    "eager_bits": (_twice(lambda k: random.bits(k)),
                   "Previously-consumed key passed to random_bits at index 0"),
    "eager_normal": (_twice(lambda k: random.normal(k)), EAGER_JIT),
    "eager_split": (_twice(lambda k: random.split(k)),
                    "Previously-consumed key passed to random_split at index 0"),
    "eager_key_data": (_twice(random.key_data), None),
    "eager_fold_in": (_twice(lambda k: random.fold_in(k, 1)), None),
    "jit_bits": (_twice_in_jit(lambda k: random.bits(k)),
                 "In random_bits, argument 0 is already consumed."),
    "jit_uniform": (_twice_in_jit(lambda k: random.uniform(k)),
                    "In jit, argument 0 is already consumed."),
    "jit_split": (_twice_in_jit(lambda k: random.split(k)),
                  "In random_split, argument 0 is already consumed."),
    "jit_fold_in": (_twice_in_jit(lambda k: random.fold_in(k, 1)), None),
    "nojit_bits": (_disable_jit(lambda k: random.bits(k)),
                     "Previously-consumed key passed to random_bits at index 0"),
    "jit_index_twice": (_index_twice_in_jit, "In slice, argument 0 is already consumed."),
    "jit_index_each": (_index_each_in_jit, None),
    "jit_reshape": (_reshape_in_jit, "In jit, argument 0 is already consumed."),
    "eager_reshape": (_reshape_eager, None),
    "slice_overlap": (_slice_overlap, "Previously-consumed key passed to slice at index 0"),
    "iterate_then_index": (_iterate_then_index, None),
    "dynamic_index": (_dynamic_index, None),
    "stack_then_use": (_stack_then_use, EAGER_JIT),
    "fold_in_repeatedly": (_fold_in_repeatedly, None),
    "cond_closure": (_cond_closure, None),
    "scan_split": (_scan_split, None),
    "clone_in_jit": (_clone_in_jit, None),
    "split_twice_in_jit": (_split_twice_in_jit,
                           "In random_split, argument 0 is already consumed."),
    "vmap_twice": (lambda: spmdc.vmap(lambda k: random.normal(k) + random.normal(k))(
        random.split(random.key(0), 3)), EAGER_JIT),
    "grad_twice": (lambda: spmdc.grad(lambda x, k: x * random.normal(k) + random.normal(k))(
        1.0, random.key(0)), EAGER_JIT),
    "raw_key": (_raw_key, None),
}


SLOW = {"scan_split", "dynamic_index"}     # a compile each of ~2 s on 2 cores


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW
                                  else n for n in sorted(CASES)])
def test_key_reuse_as_jax(name):
    program, message = CASES[name]
    with spmdc.debug_key_reuse(True):
        if message is None:
            program()
        else:
            with pytest.raises(KeyReuseError) as info:
                program()
            assert str(info.value) == message


def test_off_by_default_and_no_flags_when_off():
    k = random.key(0)
    random.normal(k)
    random.normal(k)
    assert not spmdc.debug_key_reuse.value and k._consumed == np.False_ and k._cell is None


def test_consumed_flags_as_jax():
    with spmdc.debug_key_reuse(True):
        k = random.key(0)
        s = random.split(k)
        assert (k._consumed, s._consumed) == (True, False)
        c = random.clone(k)
        assert c is not k and not c._consumed and k._consumed
        f = random.fold_in(c, 3)
        assert (c._consumed, f._consumed) == (False, False)
        ks = random.split(random.key(1), 3)
        random.normal(ks[0])
        random.split(ks[1])
        np.testing.assert_array_equal(ks._consumed, [True, True, False])
        b = random.key(2)
        wide = jnp.broadcast_to(b, (2,))
        random.normal(b)
        assert not wide._consumed and b._consumed


def test_config_update_turns_it_on():
    spmdc.config.update("jax_debug_key_reuse", True)
    try:
        k = random.key(0)
        random.normal(k)
        with pytest.raises(KeyReuseError, match="jit-compiled function at index 0"):
            random.normal(k)
        with spmdc.debug_key_reuse(False):      # the context Flax's tests open
            random.normal(k)
    finally:
        spmdc.config.update("jax_debug_key_reuse", False)
    random.normal(k)
