"""The XLA options a program is compiled with (Note [programs without floating-point
arithmetic] in runtime/pjrt/compilation.py): a small program that only moves data and computes
on integers compiles without XLA:CPU's fusion emitters, and gives the same bits as one compiled
with them."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import spmdc
from spmdc.compiler.stablehlo import ir, lowering_lock, mlir_context
from spmdc.runtime import pjrt
from spmdc.runtime.pjrt import compilation

pytestmark = pytest.mark.cpu_platform

FUSION_EMITTERS = {"xla_cpu_use_fusion_emitters": True}

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-310, 1.5, -2.5, 3e38]


def _values(dtype: object, shape: tuple[int, ...]) -> np.ndarray:
    """Values of ``dtype`` with NaN, infinities, signed zeros and denormals among them."""
    n = int(np.prod(shape))
    if np.dtype(dtype).kind in "iub":
        info = np.iinfo(dtype) if np.dtype(dtype).kind != "b" else None
        v = (np.arange(n) % 2 == 0) if info is None else \
            np.linspace(info.min, info.max, n).astype(dtype)
        return v.reshape(shape)
    v = np.resize(np.asarray(SPECIAL, np.float64), n)
    with np.errstate(over="ignore"):
        return v.astype(dtype).reshape(shape)


# Every data movement of Note [programs without floating-point arithmetic] on a (3, 4)
# array of one element type E: gather and scatter (an overwrite) with an index out of range,
# dynamic slices starting out of range (XLA clamps them).
MOVES = """module {
  func.func public @main(%x: tensor<3x4xE>, %m: tensor<3x4xi1>, %i: tensor<4x1xi32>,
                         %u: tensor<4xE>, %s: tensor<i32>) -> (tensor<3x2xE>, tensor<4x3xE>,
      tensor<3x2x4xE>, tensor<6x4xE>, tensor<5x8xE>, tensor<3x4xE>, tensor<4xE>,
      tensor<12xE>, tensor<2x2xE>, tensor<3x4xE>) {
    %0 = stablehlo.slice %x [0:3, 1:4:2] : (tensor<3x4xE>) -> tensor<3x2xE>
    %1 = stablehlo.transpose %x, dims = [1, 0] : (tensor<3x4xE>) -> tensor<4x3xE>
    %2 = stablehlo.broadcast_in_dim %x, dims = [0, 2] : (tensor<3x4xE>) -> tensor<3x2x4xE>
    %3 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<3x4xE>, tensor<3x4xE>) -> tensor<6x4xE>
    %p = stablehlo.slice %x [0:1, 0:1] : (tensor<3x4xE>) -> tensor<1x1xE>
    %q = stablehlo.reshape %p : (tensor<1x1xE>) -> tensor<E>
    %4 = stablehlo.pad %x, %q, low = [1, 0], high = [1, 1], interior = [0, 1]
        : (tensor<3x4xE>, tensor<E>) -> tensor<5x8xE>
    %r = stablehlo.reverse %x, dims = [0] : tensor<3x4xE>
    %5 = stablehlo.select %m, %x, %r : tensor<3x4xi1>, tensor<3x4xE>
    %f = stablehlo.reshape %x : (tensor<3x4xE>) -> tensor<12xE>
    %6 = "stablehlo.gather"(%f, %i) <{dimension_numbers = #stablehlo.gather<
        collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
        indices_are_sorted = false, slice_sizes = array<i64: 1>}>
        : (tensor<12xE>, tensor<4x1xi32>) -> tensor<4xE>
    %7 = "stablehlo.scatter"(%f, %i, %u) <{indices_are_sorted = false,
        scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
        scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
      ^bb0(%old: tensor<E>, %new: tensor<E>):
        stablehlo.return %new : tensor<E>
    }) : (tensor<12xE>, tensor<4x1xi32>, tensor<4xE>) -> tensor<12xE>
    %8 = stablehlo.dynamic_slice %x, %s, %s, sizes = [2, 2]
        : (tensor<3x4xE>, tensor<i32>, tensor<i32>) -> tensor<2x2xE>
    %d = stablehlo.slice %x [1:3, 2:4] : (tensor<3x4xE>) -> tensor<2x2xE>
    %9 = stablehlo.dynamic_update_slice %x, %d, %s, %s
        : (tensor<3x4xE>, tensor<2x2xE>, tensor<i32>, tensor<i32>) -> tensor<3x4xE>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<3x2xE>, tensor<4x3xE>,
      tensor<3x2x4xE>, tensor<6x4xE>, tensor<5x8xE>, tensor<3x4xE>, tensor<4xE>,
      tensor<12xE>, tensor<2x2xE>, tensor<3x4xE>
  }
}"""
ELEMENT = {np.float32: "f32", np.float64: "f64", ml_dtypes.bfloat16: "bf16", np.float16: "f16",
           np.int8: "i8", np.uint32: "ui32", np.bool_: "i1", np.complex64: "complex<f32>"}


def _run(text: str, args: list[np.ndarray], **options: object) -> list[np.ndarray]:
    device = pjrt.local_devices()[0]
    exe = compilation.compile(text, [device], **options)
    outs = pjrt.execute(exe, [[pjrt.put(a, device)] for a in args], (device,))
    return [pjrt.to_numpy(o[0]) for o in outs]


@pytest.mark.parametrize("dtype", [
    d if d in (np.float32, ml_dtypes.bfloat16, np.int8) else pytest.param(d, marks=pytest.mark.slow)
    for d in ELEMENT])
def test_data_movement_gives_the_bits_of_the_fusion_emitters(dtype: object) -> None:
    text = MOVES.replace("xE>", f"x{ELEMENT[dtype]}>").replace("<E>", f"<{ELEMENT[dtype]}>")
    with lowering_lock, mlir_context():
        text = str(ir.Module.parse(text))               # one operation a line, as lowered
    assert compilation.without_float_arithmetic(text)
    x = _values(dtype, (3, 4))
    if np.dtype(dtype).kind == "c":
        with np.errstate(invalid="ignore"):
            x = x + 1j * x[::-1]
    args = [x, np.arange(12).reshape(3, 4) % 3 == 0,
            np.array([[2], [0], [11], [12]], np.int32), x.reshape(-1)[3:7][::-1].copy(),
            np.array(2, np.int32)]                    # 12, and 2 for a (2, 2) of 3x4: out of range
    default = _run(text, args)
    with_emitters = _run(text, args, compiler_options=FUSION_EMITTERS)
    for a, b in zip(default, with_emitters, strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


# Every integer operation of the Note on (2, 8) arrays of one integer type E: x holds the
# extreme values, zero and -1, y zeros (division by zero) and shift counts past the width.
INTEGERS = """module {
  func.func public @main(%x: tensor<2x8xE>, %y: tensor<2x8xE>) -> (tensor<2x8xE>, tensor<2x8xE>,
      tensor<2x8xE>, tensor<2x8xE>, tensor<2x8xE>, tensor<2x8xE>, tensor<2x8xi1>,
      tensor<2x8xi8>, tensor<2x8xE>, tensor<2x8xE>) {
    %0 = stablehlo.add %x, %y : tensor<2x8xE>
    %1 = stablehlo.multiply %x, %y : tensor<2x8xE>
    %2 = stablehlo.divide %x, %y : tensor<2x8xE>
    %3 = stablehlo.remainder %x, %y : tensor<2x8xE>
    %4 = stablehlo.shift_left %x, %y : tensor<2x8xE>
    %5 = stablehlo.shift_right_arithmetic %x, %y : tensor<2x8xE>
    %6 = stablehlo.compare LT, %x, %y : (tensor<2x8xE>, tensor<2x8xE>) -> tensor<2x8xi1>
    %7 = stablehlo.convert %x : (tensor<2x8xE>) -> tensor<2x8xi8>
    %n = stablehlo.negate %x : tensor<2x8xE>
    %a = stablehlo.abs %n : tensor<2x8xE>
    %8 = stablehlo.xor %a, %y : tensor<2x8xE>
    %i = stablehlo.iota dim = 1 : tensor<2x8xE>
    %9 = stablehlo.clamp %y, %i, %x : tensor<2x8xE>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<2x8xE>, tensor<2x8xE>,
      tensor<2x8xE>, tensor<2x8xE>, tensor<2x8xE>, tensor<2x8xE>, tensor<2x8xi1>,
      tensor<2x8xi8>, tensor<2x8xE>, tensor<2x8xE>
  }
}"""


INTEGER = {np.int32: "i32", np.int8: "i8", np.int16: "i16", np.int64: "i64"}   # abs: signed


@pytest.mark.parametrize("dtype", [
    np.int32, np.int8, *(pytest.param(d, marks=pytest.mark.slow) for d in (np.int16, np.int64))])
def test_integer_arithmetic_gives_the_bits_of_the_fusion_emitters(dtype: object) -> None:
    text = INTEGERS.replace("xE>", f"x{INTEGER[dtype]}>")
    with lowering_lock, mlir_context():
        text = str(ir.Module.parse(text))
    assert compilation.without_float_arithmetic(text)
    info = np.iinfo(dtype)
    x = np.resize(np.array([info.min, info.max, 0, 1, info.max // 3, info.min // 5], dtype),
                  (2, 8))
    y = np.resize(np.array([0, 1, 7, info.bits - 1, info.bits, 2 * info.bits, 3], dtype), (2, 8))
    y[1] = y[1][::-1]
    x[1, :2] = [info.min, info.min]
    y[1, :2] = [-1 if info.min else 2, 0]                  # the most negative over -1, and 0
    default = _run(text, [x, y])
    with_emitters = _run(text, [x, y], compiler_options=FUSION_EMITTERS)
    for a, b in zip(default, with_emitters, strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_which_programs_compile_without_the_fusion_emitters(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    def text(f: object, *args: object) -> str:
        return spmdc.jit(f).lower(*args).as_text()
    x = np.ones((4, 8), np.float32)
    assert compilation.without_float_arithmetic(text(lambda a: a.T[1:], x))
    assert compilation.without_float_arithmetic(text(lambda a: a.at[1].set(2.0), x))
    assert not compilation.without_float_arithmetic(text(lambda a: a.at[1].add(2.0), x))
    assert not compilation.without_float_arithmetic(text(lambda a: a.T + 1, x))
    assert not compilation.without_float_arithmetic(text(lambda a: a.astype(np.int32), x))
    assert not compilation.without_float_arithmetic(text(lambda a: a < 3, x))
    n = np.arange(32, dtype=np.int32).reshape(4, 8)
    assert compilation.without_float_arithmetic(text(lambda v: (v < 3) & (v % 2 == 0), n))
    assert compilation.without_float_arithmetic(text(lambda v: (v * 2 + 1).T[::-1], n))
    assert not compilation.without_float_arithmetic(text(lambda a: a, x))      # nothing to compile
    big = np.ones((compilation.SMALL_ELEMENTS + 1,), np.float32)
    assert not compilation.without_float_arithmetic(text(lambda a: a[::-1], big))

    seen = []

    class Spy:
        """The client, noting the options of each compile."""
        def __init__(self, client: object):
            self.client = client

        def compile_and_load(self, module: object, devices: object, options: object,
                             **kw: object) -> object:
            seen.append(list(options.env_option_overrides))
            return self.client.compile_and_load(module, devices, options, **kw)

        def __getattr__(self, name: str) -> object:
            return getattr(self.client, name)
    spy = Spy(compilation.client())
    monkeypatch.setattr(compilation, "client", lambda: spy)
    spmdc.jit(lambda a: a[::-1, 2:])(np.ones((3, 5), np.float32))
    spmdc.jit(lambda a: a[::-1, 2:] * 2)(np.ones((3, 5), np.float32))
    spmdc.jit(lambda a: a[::-1, 2:]).lower(np.ones((3, 5), np.float32)).compile(
        compiler_options={"xla_embed_ir_in_executable": False})
    assert seen == [[("xla_cpu_use_fusion_emitters", False)], [],
                    [("xla_embed_ir_in_executable", False)]]
