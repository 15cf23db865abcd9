"""Elementwise primitives (primitives/elementwise.py and primitives/logic.py) against
their NumPy references: one record per primitive, parametrised over lowering on PJRT,
vmap (in_dims with None and non-zero dims, rank-0 operands) and first- and second-order
grad; then the semantics that need exact inputs (integer division, shifts, conversions,
NaN), the gradients at kinks, and shape-rule errors."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primcheck import check_grad, check_lowering, check_vmap, eqn_func

import spmdc.compiler  # noqa: F401  (registers every primitive)
from spmdc.compiler.builder import Builder
from spmdc.compiler.interpreter import evaluate
from spmdc.compiler.ir import TensorType, check, parse
from spmdc.compiler.passes.autodiff import nondifferentiable, vjp_func, vjp_rules
from spmdc.compiler.passes.vmap import batch_rules
from spmdc.compiler.primitives import elementwise, logic
from spmdc.compiler.primitives.core import ShapeError, registry
from spmdc.compiler.stablehlo import lower_rules
from spmdc.runtime.executable import run_func

F32, F64, I32 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)
BOOL, U8, I8 = np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8)
FEW = settings(max_examples=4, deadline=None)
shapes = st.lists(st.integers(0, 3), max_size=3).map(tuple)
small_shapes = st.lists(st.integers(1, 2), max_size=2).map(tuple)   # for finite differences

# --- operand domains -------------------------------------------------------------------------

_SPECIAL_FLOATS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5])


def _uniform(lo, hi):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, shape).astype(dtype)


def _any(rng, shape, dtype):
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-20, 20, shape).astype(dtype)
    return (2 * rng.normal(size=shape)).astype(dtype)


def _special(rng, shape, dtype):
    """Like _any, with ties, NaN, infinities, signed zeros and integer extremes mixed in."""
    x = _any(rng, shape, dtype)
    if dtype == BOOL:
        return x
    pool = (_SPECIAL_FLOATS if dtype.kind == "f" else
            np.array([np.iinfo(dtype).min, np.iinfo(dtype).max, 0, -1, 1, 2]))
    return np.where(rng.random(shape) < 0.5, rng.choice(pool, shape), x).astype(dtype)


def _nonzero(rng, shape, dtype):
    return (rng.choice([-1, 1], shape) * rng.uniform(0.5, 2, shape)).astype(dtype)


def _halves(rng, shape, dtype):
    """Rounding ties (k/2) and ordinary values."""
    ties = rng.integers(-6, 7, shape) / 2
    return np.where(rng.random(shape) < 0.5, ties, 3 * rng.normal(size=shape)).astype(dtype)


def _divisor(rng, shape, dtype):
    return rng.integers(-5, 6, shape).astype(dtype)          # zero included


def _shift(rng, shape, dtype):
    return rng.integers(-3, 40, shape).astype(dtype)         # out of range included


def _order(rng, shape, dtype):
    return rng.integers(0, 4, shape).astype(dtype)           # polygamma's n


def _pred(rng, shape, dtype):
    return rng.random(shape) < 0.5


DOMAINS = {"any": _any, "special": _special, "nonzero": _nonzero, "halves": _halves,
           "divisor": _divisor, "shift": _shift, "order": _order, "pred": _pred,
           "pos": _uniform(0.5, 3), "unit": _uniform(-0.9, 0.9), "gt1": _uniform(1.2, 4),
           "gt_m1": _uniform(-0.7, 3), "small": _uniform(-1.3, 1.3)}


@dataclass(frozen=True)
class Case:
    """One primitive: its operands' domains, the dtypes to try, params, tolerances."""
    prim: str
    domains: tuple[str, ...]
    dtypes: tuple[np.dtype, ...] = (F32,)
    params: Any = field(default_factory=dict)      # a dict or a strategy of dicts
    grad: bool = True
    grad_domains: tuple[str, ...] | None = None    # default: domains
    grad_params: dict | None = None                # default: drawn from params
    wrt: tuple[int, ...] | None = None             # default: every float operand
    rtol: float = 1e-5
    atol: float = 1e-6
    grad_eps: float = 1e-6
    id: str = ""

    @property
    def name(self) -> str:
        return self.id or self.prim

    def dtype_of(self, k: int, dtype: np.dtype) -> np.dtype:
        return BOOL if self.domains[k] == "pred" else dtype

    def may_be_scalar(self, k: int) -> bool:
        return not (self.prim == "clamp" and k == 1)     # clamp's x fixes the shape


def unary(prim, domain="any", dtypes=(F32,), **kw):
    return Case(prim, (domain,), dtypes, **kw)


def binary(prim, x="any", y="any", dtypes=(F32,), **kw):
    return Case(prim, (x, y), dtypes, **kw)


NUMBERS, INTEGRAL, ORDERED = (F32, I32), (I32, BOOL), (F32, I32, BOOL)
NOGRAD = dict(grad=False)
LOOSE = dict(rtol=1e-4, atol=1e-5)
CASES = [
    # unary float math
    unary("sin"), unary("cos"), unary("tan", "small"), unary("asin", "unit"),
    unary("acos", "unit"), unary("atan"), unary("sinh"), unary("cosh"), unary("tanh"),
    unary("asinh"), unary("acosh", "gt1"), unary("atanh", "unit"), unary("exp"),
    unary("exp2"), unary("log", "pos"), unary("log1p", "gt_m1"), unary("expm1"),
    unary("sqrt", "pos"), unary("rsqrt", "pos"), unary("cbrt", grad_domains=("nonzero",)),
    unary("logistic"), unary("erf"), unary("erf_inv", "unit", **LOOSE),
    unary("lgamma", "pos", **LOOSE), unary("digamma", "pos", **LOOSE),
    binary("polygamma", "order", "pos", wrt=(1,), **LOOSE),
    # unary numeric
    unary("neg", "special", NUMBERS, grad_domains=("any",)),
    unary("abs", "special", NUMBERS, grad_domains=("any",)),
    unary("sign", "special", NUMBERS, grad_domains=("any",)),
    unary("floor", "special", grad_domains=("any",)),
    unary("ceil", "special", grad_domains=("any",)),
    unary("round", "halves", params=st.fixed_dictionaries(
        {"rounding_method": st.sampled_from([0, 1])}), grad_domains=("any",)),
    unary("is_finite", "special", **NOGRAD),
    unary("not", "special", INTEGRAL, **NOGRAD),
    unary("population_count", "special", (I32, U8), **NOGRAD),
    unary("integer_pow", "nonzero", params=st.fixed_dictionaries(
        {"y": st.integers(-3, 5)}), id="integer_pow-float", **LOOSE),
    unary("integer_pow", "special", (I32,), params=st.fixed_dictionaries(
        {"y": st.integers(0, 13)}), id="integer_pow-int", **NOGRAD),
    unary("stop_gradient", "special", ORDERED, **NOGRAD),    # grad: see its own test
    unary("bitcast_convert", "special", (F32,), params={"new_dtype": I32}, **NOGRAD),
    unary("convert", "special", ORDERED, params=st.fixed_dictionaries(
        {"new_dtype": st.sampled_from([F32, F64, I32, I8, U8, BOOL])}),
        grad_domains=("any",), grad_params={"new_dtype": F32}, grad_eps=1e-2,
        rtol=1e-3),
    # binary math
    binary("add", dtypes=NUMBERS), binary("sub", dtypes=NUMBERS),
    binary("mul", dtypes=NUMBERS),
    binary("div", "any", "nonzero", id="div-float"),
    binary("div", "special", "divisor", (I32,), id="div-int", **NOGRAD),
    binary("rem", "any", "nonzero", id="rem-float"),
    binary("rem", "special", "divisor", (I32,), id="rem-int", **NOGRAD),
    binary("pow", "pos", "any", **LOOSE),
    binary("max", "special", "special", ORDERED, grad_domains=("any", "any")),
    binary("min", "special", "special", ORDERED, grad_domains=("any", "any")),
    binary("atan2"), binary("nextafter"),
    # logic
    binary("and", "special", "special", INTEGRAL, **NOGRAD),
    binary("or", "special", "special", INTEGRAL, **NOGRAD),
    binary("xor", "special", "special", INTEGRAL, **NOGRAD),
    *[binary(p, "special", "shift", (I32, U8), **NOGRAD)
      for p in ("shift_left", "shift_right_arithmetic", "shift_right_logical")],
    *[binary(p, "special", "special", ORDERED, **NOGRAD)
      for p in ("eq", "ne", "lt", "le", "gt", "ge")],
    Case("select", ("pred", "special", "special"), ORDERED, grad_domains=("pred", "any", "any")),
    Case("clamp", ("special", "special", "special"), (F32, I32),
         grad_domains=("any", "any", "any")),
]
GRAD_CASES = [c for c in CASES if c.grad]


def _ids(cases):
    return [c.name for c in cases]


def _draw_params(data, case: Case) -> dict:
    return case.params if isinstance(case.params, dict) else data.draw(case.params, "params")


def _draw_shapes(data, case: Case, shape_strategy) -> list[tuple[int, ...]]:
    """The output shape for every operand, except some drawn to be rank 0."""
    shape = data.draw(shape_strategy, "shape")
    return [() if case.may_be_scalar(k) and data.draw(st.booleans(), f"rank-0 operand {k}")
            else shape for k in range(len(case.domains))]


def _make(rng, case: Case, shapes, dtype, domains=None) -> list[np.ndarray]:
    domains = domains or case.domains
    return [DOMAINS[d](rng, s, case.dtype_of(k, dtype))
            for k, (d, s) in enumerate(zip(domains, shapes, strict=True))]


def _rng(data):
    return np.random.default_rng(data.draw(st.integers(0, 2**31), "seed"))


# --- the table-driven checks -----------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
@FEW
@given(data=st.data())
def test_lowering(case, data):
    dtype = data.draw(st.sampled_from(case.dtypes), "dtype")
    args = _make(_rng(data), case, _draw_shapes(data, case, shapes), dtype)
    with np.errstate(all="ignore"):
        check_lowering(registry[case.prim], args, _draw_params(data, case), case.rtol, case.atol)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
@FEW
@given(data=st.data())
def test_vmap(case, data):
    dtype = data.draw(st.sampled_from(case.dtypes), "dtype")
    logical = _draw_shapes(data, case, shapes)
    dims = [data.draw(st.none() | st.integers(0, len(s)), f"in_dim {k}")
            for k, s in enumerate(logical)]
    if all(d is None for d in dims):
        dims[0] = data.draw(st.integers(0, len(logical[0])), "in_dim 0")
    size = data.draw(st.integers(1, 3), "axis_size")
    rng = _rng(data)
    samples = [_make(rng, case, logical, dtype) for _ in range(size)]
    args = [samples[0][k] if d is None else np.stack([s[k] for s in samples], axis=d)
            for k, d in enumerate(dims)]
    with np.errstate(all="ignore"):
        check_vmap(registry[case.prim], args, _draw_params(data, case), dims, size,
                   case.rtol, case.atol)


@pytest.mark.parametrize("case", GRAD_CASES, ids=_ids(GRAD_CASES))
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_grad(case, data):
    args = _make(_rng(data), case, _draw_shapes(data, case, small_shapes), F64,
                 case.grad_domains)
    params = case.grad_params or _draw_params(data, case)
    check_grad(registry[case.prim], args, params, wrt=case.wrt, eps=case.grad_eps,
               second_order=True)


@pytest.mark.parametrize("y", range(-3, 6))
def test_integer_pow_grad_for_every_exponent(y):
    # The table draws a few exponents; each one takes its own path through the VJP rule.
    x = np.array([[0.7, -1.3], [1.9, -0.6]])
    check_grad(registry["integer_pow"], [x], {"y": y}, second_order=True)


COMPLEX_OPS = ["neg", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
               "asinh", "acosh", "atanh", "exp", "exp2", "log", "log1p", "expm1", "sqrt",
               "rsqrt", "add", "sub", "mul", "div", "pow", "eq", "ne"]


def test_complex_operands_lower():
    # The shape rules accept complex operands for these; the table tests real ones.
    x = np.array([0.5 + 0.2j, 1.5 - 1j, -0.25 + 2j], np.complex64)
    for op in COMPLEX_OPS:
        prim = registry[op]
        args = [x, x[::-1]][:2 if op in ("add", "sub", "mul", "div", "pow", "eq", "ne") else 1]
        with np.errstate(all="ignore"):
            check_lowering(prim, args, {}, rtol=1e-4, atol=1e-5)
    check_lowering(registry["integer_pow"], [x], {"y": -2}, rtol=1e-4, atol=1e-5)


def test_every_primitive_has_its_rules():
    for module in (elementwise, logic):
        for name in module.__all__:
            prim = getattr(module, name)
            assert prim in batch_rules, f"{prim.name} has no batching rule"
            assert prim in lower_rules, f"{prim.name} has no lowering rule"
            assert (prim in vjp_rules) != (prim in nondifferentiable), \
                f"{prim.name} needs exactly one of a VJP rule and a nondifferentiable reason"
            assert any(c.prim == prim.name for c in CASES), f"{prim.name} has no test record"


# --- exact semantics -------------------------------------------------------------------------

def _run(prim: str, *args, **params) -> tuple[np.ndarray, np.ndarray]:
    """(compiled, reference) for one equation."""
    func = eqn_func(registry[prim], [TensorType(np.shape(a), np.asarray(a).dtype)
                                     for a in args], params)
    with np.errstate(all="ignore"):
        return run_func(func, *args)[0], evaluate(func, *args)[0]


def _both(prim: str, *args, **params) -> np.ndarray:
    """The compiled result, after checking that the reference agrees bit for bit."""
    got, want = _run(prim, *args, **params)
    np.testing.assert_array_equal(got, want, err_msg=prim)
    return got


IMIN = np.iinfo(np.int32).min


def test_integer_division_truncates_and_defines_overflow():
    x = np.array([7, -7, 7, -7, IMIN, IMIN, 5, -5], np.int32)
    y = np.array([2, 2, -2, -2, -1, 1, 0, 0], np.int32)
    np.testing.assert_array_equal(_both("div", x, y), [3, -3, -3, 3, IMIN, IMIN, -1, -1])
    np.testing.assert_array_equal(_both("rem", x, y), [1, -1, 1, -1, 0, 0, 5, -5])
    u = np.array([7, 5], np.uint32)
    np.testing.assert_array_equal(_both("div", u, np.array([2, 0], np.uint32)), [3, 2**32 - 1])
    np.testing.assert_array_equal(_both("rem", np.float32(-7.5), np.float32(2)), -1.5)


def test_shifts_past_the_width():
    x = np.array([1, -8, -8, 5, -5, IMIN], np.int32)
    s = np.array([31, 32, 33, -1, 40, 1], np.int32)
    np.testing.assert_array_equal(_both("shift_left", x, s), [IMIN, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(_both("shift_right_arithmetic", x, s),
                                  [0, -1, -1, 0, -1, IMIN // 2])
    np.testing.assert_array_equal(_both("shift_right_logical", x, s), [0, 0, 0, 0, 0, 2**30])


def test_conversions():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.25, -1.5, 3e9, 300.7], np.float32)
    np.testing.assert_array_equal(_both("convert", x, new_dtype=BOOL),
                                  [True, True, True, False, False, True, True, True, True])
    np.testing.assert_array_equal(_both("convert", x, new_dtype=I32),
                                  [0, 2**31 - 1, IMIN, 0, 0, 0, -1, 2**31 - 1, 300])
    np.testing.assert_array_equal(_both("convert", x, new_dtype=U8),
                                  [0, 255, 0, 0, 0, 0, 0, 255, 255])
    flags = np.array([True, False])
    np.testing.assert_array_equal(_both("convert", flags, new_dtype=F32), [1.0, 0.0])
    np.testing.assert_array_equal(_both("convert", flags, new_dtype=I32), [1, 0])
    np.testing.assert_array_equal(_both("convert", np.array([0, 256, -3], np.int32),
                                        new_dtype=BOOL), [False, True, True])
    np.testing.assert_array_equal(_both("convert", np.array([300, -1], np.int32),
                                        new_dtype=U8), [44, 255])


def test_bitcast_convert_reinterprets_bits():
    one_half = np.array([1.0, -2.0, 0.5], np.float32)
    got = _both("bitcast_convert", one_half, new_dtype=np.dtype(np.uint32))
    np.testing.assert_array_equal(got, one_half.view(np.uint32))
    back = _both("bitcast_convert", got, new_dtype=F32)
    np.testing.assert_array_equal(back, one_half)
    with pytest.raises(ShapeError, match="bit width"):
        registry["bitcast_convert"].shape_rule(TensorType((3,), F32), new_dtype=U8)


def test_nan_comparisons_and_extrema():
    x = np.array([np.nan, 1.0, np.nan, 2.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, 2.0], np.float32)
    for op, want in [("eq", [0, 0, 0, 1]), ("ne", [1, 1, 1, 0]), ("lt", [0, 0, 0, 0]),
                     ("le", [0, 0, 0, 1]), ("gt", [0, 0, 0, 0]), ("ge", [0, 0, 0, 1])]:
        np.testing.assert_array_equal(_both(op, x, y), np.array(want, bool), err_msg=op)
    got, _ = _run("max", x, y)
    np.testing.assert_array_equal(np.isnan(got), [True, True, True, False])
    np.testing.assert_array_equal(_both("is_finite", np.array([np.nan, np.inf, 1.0],
                                                              np.float32)), [False, False, True])


def test_rounding_methods():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -1.4999999], np.float32)
    np.testing.assert_array_equal(_both("round", x, rounding_method=0),
                                  [1, 2, 3, -1, -3, 0, -1])
    np.testing.assert_array_equal(_both("round", x, rounding_method=1),
                                  [0, 2, 2, -0.0, -2, 0, -1])


def test_integer_pow_of_zero_is_ones():
    np.testing.assert_array_equal(_both("integer_pow", np.array([0, -3], np.int32), y=0), [1, 1])


def test_select_and_clamp_broadcast_rank0_operands():
    pred = np.array([True, False, True])
    np.testing.assert_array_equal(_both("select", pred, np.float32(1), np.zeros(3, np.float32)),
                                  [1, 0, 1])
    np.testing.assert_array_equal(_both("select", np.bool_(False), np.ones(3, np.int32),
                                        np.int32(7)), [7, 7, 7])
    np.testing.assert_array_equal(_both("clamp", np.float32(0), np.array([-1, .5, 3], np.float32),
                                        np.array([1, 1, 2], np.float32)), [0, .5, 2])


# --- gradients at kinks ----------------------------------------------------------------------

def _grads(prim: str, *args: np.ndarray, **params) -> list[np.ndarray]:
    """Gradients of sum(prim(*args)) with respect to every operand."""
    b = Builder("g")
    ins = [b.input(TensorType(np.shape(a), np.asarray(a).dtype)) for a in args]
    out = b.bind(registry[prim], *ins, **params)
    func = check(b.build([b.reduce_sum(out, axes=tuple(range(out.type.ndim)))]))
    grad = check(vjp_func(func, [True] * len(args)))
    return evaluate(grad, *args, np.float64(1))[1:]


def test_max_min_split_ties_half_half():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0])
    gx, gy = _grads("max", x, y)
    np.testing.assert_array_equal(gx, [0.5, 0, 1])
    np.testing.assert_array_equal(gy, [0.5, 1, 0])
    gx, gy = _grads("min", x, np.float64(2.0))               # a rank-0 operand sums
    np.testing.assert_array_equal(gx, [1, 0.5, 0])
    assert gy == 1.5


def test_clamp_gives_ties_to_x():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    glo, gx, ghi = _grads("clamp", np.float64(0), x, np.float64(1))
    np.testing.assert_array_equal(gx, [0, 1, 1, 1, 0])
    assert (glo, ghi) == (1, 1)
    glo, gx, ghi = _grads("clamp", np.float64(2), x, np.float64(1))   # lo > hi: result hi
    np.testing.assert_array_equal(gx, np.zeros(5))
    assert (glo, ghi) == (0, 5)


def test_pow_gradients_at_zero_are_finite():
    gx, gy = _grads("pow", np.array([0.0, 2.0]), np.array([2.0, 0.0]))
    np.testing.assert_array_equal(gx, [0, 0])
    np.testing.assert_allclose(gy, [0, np.log(2)])


def test_stop_gradient_blocks_the_gradient():
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(_both("stop_gradient", x), x)
    np.testing.assert_array_equal(_grads("stop_gradient", x)[0], [0, 0])


def test_abs_gradient_at_zero_is_one_as_in_jax():
    np.testing.assert_array_equal(_grads("abs", np.array([-2.0, 0.0, -0.0, 3.0]))[0],
                                  [-1, 1, 1, 1])


# --- shape rules and printing ----------------------------------------------------------------

T = TensorType


@pytest.mark.parametrize("prim, types, params, fragment", [
    ("add", [T((2,), F32), T((2,), I32)], {}, "needs operands of one dtype"),
    ("mul", [T((2,), F32), T((3,), F32)], {}, "incompatible shapes"),
    ("log", [T((2,), I32)], {}, "does not accept dtype i32"),
    ("shift_left", [T((2,), F32), T((2,), F32)], {}, "does not accept dtype f32"),
    ("lt", [T((), np.dtype(np.complex64)), T((), np.dtype(np.complex64))], {}, "c64"),
    ("select", [T((2,), I32), T((2,), F32), T((2,), F32)], {}, "bool predicate"),
    ("select", [T((2,), BOOL), T((2,), F32), T((2,), I32)], {}, "one dtype"),
    ("clamp", [T((2,), F32), T((), F32), T((), F32)], {}, "bounds must be rank 0"),
    ("integer_pow", [T((2,), I32)], {"y": -1}, "negative exponent"),
    ("integer_pow", [T((2,), F32)], {"y": 1.5}, "must be an int"),
    ("round", [T((2,), F32)], {"rounding_method": 2}, "rounding_method"),
    ("floor", [T((2,), I32)], {}, "floor does not accept"),
])
def test_shape_errors(prim, types, params, fragment):
    with pytest.raises(ShapeError, match=fragment):
        registry[prim].abstract_eval(*types, **params)


@pytest.mark.parametrize("prim, params", [("round", {"rounding_method": 1}),
                                          ("integer_pow", {"y": -2}),
                                          ("convert", {"new_dtype": U8})])
def test_params_print_and_parse_back(prim, params):
    func = eqn_func(registry[prim], [T((2,), F32)], params)
    text = str(func)
    assert str(parse(text)) == text and prim in text
