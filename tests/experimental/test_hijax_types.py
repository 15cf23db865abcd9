"""jax.experimental.hijax's hi-types (spmdc/experimental/hitypes.py): a class registered
with register_hitype is an argument and result of jit, grad and scan through its lo
values, and HiPrimitives on it run their to_lojax (Note [hi-types as their lo values]);
a mutable hi-type's state is read and updated through AvalMutableQDD. Expected values
are JAX 0.10.2's for the same programs (JAX's tests/hijax_test.py QArray and MyArray)."""
from dataclasses import dataclass

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.experimental import cur_qdd
from spmdc.experimental import hijax as hjx
from spmdc.extend.core import Effect


@dataclass(frozen=True)
class QArray:
    arr: object
    scale: object


@dataclass(frozen=True)
class QArrayTy(hjx.HiType):
    shape: tuple

    def lo_ty(self):
        m, k = self.shape
        return [hjx.ShapedArray((m, k), np.dtype("int8")),
                hjx.ShapedArray((m,), np.dtype("float32"))]

    def lower_val(self, v):
        return [v.arr, v.scale]

    def raise_val(self, arr, scale):
        return QArray(arr, scale)

    def to_tangent_aval(self):
        return self


hjx.register_hitype(QArray, lambda q: QArrayTy(q.arr.shape))


class ToQ(hjx.HiPrimitive):
    def abstract_eval(self, a):
        return QArrayTy(a.shape), set()

    def to_lojax(self, x):
        scale = x.max(1) / 32.0
        return QArray((x / scale[:, None]).astype("int8"), scale)


class FromQ(hjx.HiPrimitive):
    def abstract_eval(self, h):
        return hjx.ShapedArray(h.shape, np.dtype("float32")), set()

    def to_lojax(self, h):
        return h.arr.astype("float32") * h.scale[:, None]


to_q_p, from_q_p = ToQ("to_q"), FromQ("from_q")
X = np.arange(12, dtype=np.float32).reshape(3, 4) + 1.0
Q_ARR = [[8, 16, 24, 32], [20, 24, 28, 32], [24, 26, 29, 32]]
ROUNDTRIP = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 9.75, 10.875, 12.0]]


@pytest.mark.parametrize("jit", [False, True])
def test_hi_result_and_argument(jit):
    wrap = spmdc.jit if jit else (lambda f: f)
    q = wrap(to_q_p.bind)(jnp.asarray(X))
    assert type(q) is QArray and q.arr.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(q.arr), Q_ARR)
    np.testing.assert_allclose(np.asarray(q.scale), [0.125, 0.25, 0.375])
    np.testing.assert_allclose(np.asarray(wrap(from_q_p.bind)(q)), ROUNDTRIP)
    np.testing.assert_allclose(np.asarray(wrap(lambda x: from_q_p.bind(to_q_p.bind(x)))(X)),
                               ROUNDTRIP)


def test_typeof_and_identity_under_jit():
    q = to_q_p.bind(jnp.asarray(X))
    assert spmdc.typeof(q) == QArrayTy((3, 4))
    out = spmdc.jit(lambda q: q)(q)
    assert type(out) is QArray
    np.testing.assert_array_equal(np.asarray(out.arr), Q_ARR)


def test_scan_carries_a_hi_value():
    # The carry is rebuilt from scan's own markers before it is traced: see Note [the
    # type a hi value was raised with].
    q = to_q_p.bind(jnp.asarray(X))
    out, _ = spmdc.lax.scan(lambda c, _: (QArray(c.arr, c.scale * 2), None), q, None,
                            length=3)
    np.testing.assert_allclose(np.asarray(out.scale), [1.0, 2.0, 3.0])


def test_abstract_eval_type_checks_hi_operands():
    class Mul(hjx.HiPrimitive):
        def abstract_eval(self, a, b):
            if a != b:
                raise TypeError(f"my_mul: {a} and {b} differ")
            return a, set()

        def to_lojax(self, a, b):
            return QArray(a.arr * b.arr, a.scale * b.scale)

    q, r = to_q_p.bind(jnp.asarray(X)), to_q_p.bind(jnp.asarray(X[:2]))
    np.testing.assert_allclose(np.asarray(Mul("my_mul").bind(q, q).scale),
                               [0.015625, 0.0625, 0.140625])
    with pytest.raises(TypeError, match="my_mul"):
        Mul("my_mul").bind(q, r)


@dataclass(frozen=True)
class MyArray:
    arr: object


@dataclass(frozen=True)
class MyTy(hjx.HiType):
    def lo_ty(self):
        return [hjx.ShapedArray((), np.dtype("float32"))]

    def lower_val(self, v):
        return [v.arr]

    def raise_val(self, v):
        return MyArray(v)

    def to_tangent_aval(self):
        return MyTy()


hjx.register_hitype(MyArray, lambda _: MyTy())


class MyMul(hjx.HiPrimitive):
    def abstract_eval(self, a, b):
        return a, set()

    def to_lojax(self, a, b):
        return MyArray(a.arr * b.arr)


def test_vjp_through_a_hi_argument():
    # JAX's hijax_test test_custom_types_and_primitive: the cotangent is a MyArray.
    f = spmdc.jit(lambda x: MyMul("my_mul").bind(x, x))
    a = MyArray(jnp.ones((), "float32"))
    b, f_vjp = spmdc.vjp(f, a)
    assert type(b) is MyArray
    (grad,) = f_vjp(b)
    assert type(grad) is MyArray
    np.testing.assert_allclose(np.asarray(grad.arr), 2.0)
    primal, tangent = spmdc.jvp(f, (a,), (a,))
    assert type(tangent) is MyArray
    np.testing.assert_allclose(np.asarray(tangent.arr), 2.0)


# --- a mutable hi-type: a counter whose array changes shape ------------------------------

@dataclass(frozen=True)
class CounterState:
    shape: tuple


class CounterTy(hjx.MutableHiType):
    def __hash__(self):
        return hash(CounterTy)

    def __eq__(self, other):
        return isinstance(other, CounterTy)

    def lo_ty_qdd(self, state):
        return [hjx.ShapedArray(state.shape, np.dtype("float32"))]

    def new_from_loval(self, state, v):
        return Counter.new(v)

    def read_loval(self, state, c):
        return [c.val]

    def update_from_loval(self, state, c, v):
        c.val = v

    def to_tangent_aval(self):
        return CounterTy()


class Counter:
    @classmethod
    def new(cls, v):
        c = object.__new__(cls)
        c.val = v
        return c

    def cur_qdd(self):
        return CounterState(tuple(np.shape(self.val)))


hjx.register_hitype(Counter, lambda c: CounterTy())


class CounterEffect(Effect):
    pass


hjx.control_flow_allowed_effects.add_type(CounterEffect)


class NewCounter(hjx.HiPrimitive):
    def abstract_eval(self, v):
        return hjx.AvalQDD(CounterTy(), CounterState(v.shape)), {CounterEffect()}

    def to_lojax(self, v):
        return Counter.new(v)


class GetCounter(hjx.HiPrimitive):
    def abstract_eval(self, c):
        assert isinstance(c, hjx.AvalMutableQDD)
        return hjx.ShapedArray(c.mutable_qdd.cur_val.shape, np.dtype("float32")), set()

    def to_lojax(self, c):
        return c.val


class SetCounter(hjx.HiPrimitive):
    multiple_results = True

    def abstract_eval(self, c, v):
        c.mutable_qdd.update(CounterState(v.shape))
        return [], set()

    def to_lojax(self, c, v):
        c.val = v
        return []


new_p, get_p, set_p = NewCounter("new_counter"), GetCounter("get_counter"), SetCounter(
    "set_counter")


def _doubles(x):
    c = new_p.bind(x)
    for _ in range(3):
        set_p.bind(c, get_p.bind(c) * 2.0)
    set_p.bind(c, jnp.stack([get_p.bind(c)] * 2))      # its type changes
    return get_p.bind(c)


@pytest.mark.parametrize("jit", [False, True])
def test_mutable_hi_value_inside_a_function(jit):
    f = spmdc.jit(_doubles) if jit else _doubles
    np.testing.assert_allclose(np.asarray(f(jnp.array([1.0, 2.0]))),
                               [[8.0, 16.0], [8.0, 16.0]])


def test_mutable_state_and_effect_set():
    c = new_p.bind(jnp.array([1.0, 2.0]))
    assert isinstance(spmdc.typeof(c), CounterTy)
    assert cur_qdd(c) == CounterState((2,))
    assert hjx.control_flow_allowed_effects.contains(CounterEffect())
    assert not hjx.control_flow_allowed_effects.contains(Effect())
    assert hjx.MutableHiType.type_state.fun is cur_qdd
    with pytest.raises(TypeError, match="mutable hi-type CounterTy, is an argument or "
                                        "result of a transformation that cannot write"):
        spmdc.vmap(lambda c: get_p.bind(c))(c)
    with pytest.raises(TypeError, match="not a value of a mutable hi-type"):
        cur_qdd(1.0)


def test_tree_util_sees_hi_values_as_leaves():
    # as JAX's tree_util (jax.tree.leaves(q) == [q]); Optax's tree_zeros_like maps over
    # a Flax state whose leaves are mutable hi values (hijax Variables)
    q = to_q_p.bind(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    assert spmdc.tree.leaves({"q": q}) == [q]
    c = new_p.bind(jnp.array([1.0, 2.0]))
    assert spmdc.tree.map(lambda v: v, {"c": c})["c"] is c
    assert spmdc.tree_util.tree_flatten([c, 1.0])[0] == [c, 1.0]
    # the transformations still take an immutable hi value apart into its lo values
    np.testing.assert_allclose(np.asarray(spmdc.jit(lambda h: h.arr)(q)), np.asarray(q.arr))


def test_mutable_hi_argument_of_jit_takes_its_final_state():
    # JAX writes a mutable hi argument's final state back into the caller's value (Flax's
    # hijax Variables passed to jax.jit); Note [mutable hi values through jit]
    c = new_p.bind(jnp.array([1.0, 2.0]))

    @spmdc.jit
    def step(c, y):
        set_p.bind(c, get_p.bind(c) * 2.0 + y)
        return get_p.bind(c).sum()

    assert float(step(c, 1.0)) == 8.0
    np.testing.assert_array_equal(np.asarray(c.val), [3.0, 5.0])
    assert float(step(c, 1.0)) == 18.0          # the state of the first call, traced once
    np.testing.assert_array_equal(np.asarray(c.val), [7.0, 11.0])
    [(_, inner)] = step._hi_jits.values()
    assert inner.trace_count == 1

    @spmdc.jit
    def grow(c):                                 # the state's type changes
        set_p.bind(c, jnp.stack([get_p.bind(c)] * 2))

    assert grow(c) is None
    np.testing.assert_array_equal(np.asarray(c.val), [[7.0, 11.0], [7.0, 11.0]])

    @spmdc.jit
    def nested(c):                      # vmap inside jit refuses it: it cannot write back
        return spmdc.vmap(lambda x, c: x * get_p.bind(c).sum(), in_axes=(0, None))(
            jnp.ones(3), c)

    with pytest.raises(TypeError, match="cannot write its changed state back"):
        nested(c)


def test_eval_shape_of_a_function_changing_a_mutable_hi_argument():
    # Flax's test_eval_shape: nothing runs, so the caller's value keeps its state
    c = new_p.bind(jnp.array([1.0, 2.0]))

    def f(c):
        set_p.bind(c, jnp.stack([get_p.bind(c)] * 3))
        return get_p.bind(c)

    out = spmdc.eval_shape(f, c)
    assert out.shape == (3, 2) and out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(c.val), [1.0, 2.0])


def test_mutable_hi_argument_of_grad_takes_its_final_state():
    # Flax's test_mutable_hitypes_as_nondiff_grad_args; JAX gives 6.0 and 6.0
    c = new_p.bind(jnp.array(2.0))

    def loss(x, c):
        set_p.bind(c, spmdc.lax.stop_gradient(x * 2))
        return x ** 2 + get_p.bind(c)

    assert float(spmdc.grad(loss)(jnp.array(3.0), c)) == 6.0
    assert float(c.val) == 6.0

    def loss_aux(x, c):
        set_p.bind(c, get_p.bind(c) + x)
        return x * 3.0, "aux"

    (value, aux), g = spmdc.value_and_grad(loss_aux, has_aux=True)(jnp.array(1.0), c)
    assert (float(value), aux, float(g), float(c.val)) == (3.0, "aux", 3.0, 7.0)
    # under jit: grad writes back into jit's copy, which jit writes back
    assert float(spmdc.jit(lambda x, c: spmdc.grad(loss)(x, c))(jnp.array(5.0), c)) == 10.0
    assert float(c.val) == 10.0
    with pytest.raises(TypeError, match="grad: argument 1 holds a value of a mutable"):
        spmdc.grad(loss, argnums=1)(jnp.array(3.0), c)


def test_register_twice_is_an_error():
    with pytest.raises(ValueError, match="QArray is already registered"):
        hjx.register_hitype(QArray, lambda q: QArrayTy(q.arr.shape))
