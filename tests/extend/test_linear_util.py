"""jax.extend.linear_util (spmdc/extend/linear_util.py): wrapped functions with stacks of
transformations in both of JAX's forms, auxiliary outputs, the cache."""
import pytest

from spmdc.extend import linear_util as lu


def test_wrap_init_passes_params():
    f = lu.wrap_init(lambda x, *, k: x * k, {"k": 3})
    assert f.call_wrapped(2) == 6 and f.params == (("k", 3),) and f.__name__ == "<lambda>"


def test_generator_transformations_apply_outermost_last():
    @lu.transformation
    def add_one(*args):
        out = yield tuple(a + 1 for a in args), {}
        yield out * 10

    @lu.transformation_with_aux
    def report(tag, *args):
        out = yield args, {}
        yield out, (tag, out)

    f = lu.wrap_init(lambda x, y: x * y)
    g, aux = report(add_one(f), "seen")
    assert g.call_wrapped(1, 2) == 60      # report sees add_one's output: (2 * 3) * 10
    assert aux() == ("seen", 60)
    assert len(g.transforms) == 2


def test_function_transformations():
    @lu.transformation2
    def scaled(f, k, x):
        return k * f(x)

    @lu.transformation_with_aux2
    def counted(f, store, x):
        out = f(x)
        store.store(out + 1)
        return out

    f = scaled(lu.wrap_init(lambda x: x - 1), 4)
    g, aux = counted(f)
    assert g.call_wrapped(3) == 8 and aux() == 9
    with pytest.raises(lu.StoreException, match="Store occupied"):
        g.call_wrapped(3)

    def remember(f, store, x):
        out = f(x)
        store.store(out)
        return out
    h, aux2 = lu.transformation_with_aux2(remember, f, use_eq_store=True)
    assert h.call_wrapped(3) == h.call_wrapped(3) == 8 and aux2() == 8


def test_stores_and_merge_linear_aux():
    s, t = lu.Store(), lu.Store()
    assert not s
    with pytest.raises(lu.StoreException, match="Store empty"):
        _ = s.val
    s.store(1)
    assert s and s.val == 1
    assert lu.merge_linear_aux(lambda: s.val, lambda: t.val) == (True, 1)
    assert lu.merge_linear_aux(lambda: t.val, lambda: s.val) == (False, 1)
    with pytest.raises(lu.StoreException, match="neither store occupied"):
        lu.merge_linear_aux(lambda: t.val, lambda: t.val)
    e = lu.EqualStore()
    e.store([1])
    e.store([1])
    with pytest.raises(lu.StoreException, match="not-equal value"):
        e.store([2])


def test_cache_memoises_by_function_and_transformations():
    calls = []

    @lu.cache
    def run(fun, x):
        calls.append(x)
        return fun.call_wrapped(x)

    def base(x):
        return x + 1
    assert run(lu.wrap_init(base), 1) == 2 and run(lu.wrap_init(base), 1) == 2
    assert run(lu.wrap_init(base), 2) == 3 and calls == [1, 2]
    assert lu.wrap_init(base) == lu.wrap_init(base)
    assert hash(lu.wrap_init(base)) == hash(lu.wrap_init(base))
