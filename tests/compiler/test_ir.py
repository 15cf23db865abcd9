"""The IR: printer/parser round trip, verifier errors, and pass tests as IR text."""
import glob
import os

import numpy as np
import pytest

from spmdc.compiler.builder import Builder, lit
from spmdc.compiler.ir import Eqn, Func, IRError, TensorType, Var, check, parse, parse_type
from spmdc.compiler.passes.autodiff import vjp_func
from spmdc.compiler.passes.cleanup import cleanup, cse, dce
from spmdc.compiler.passes.vmap import BatchAxis, vmap_func
from spmdc.compiler.primitives.core import registry

F32 = np.dtype(np.float32)

LOSS = """func @loss(%0: f32[4,3], %1: f32[3]) -> (f32[]) {
  %2: f32[4] = dot_general(%0, %1) {contract=((1,), (0,)), batch=((), ())}
  %3: f32[4] = tanh(%2)
  %4: f32[] = reduce_sum(%3) {axes=(0,)}
  return %4
}"""


def test_round_trip_hand_written():
    func = parse(LOSS)
    assert str(func) == LOSS
    check(func)


def test_round_trip_literals_and_params():
    text = """func @f(%0: f32[2], %1: i32[]) -> (f32[2], bool[2], f32[2]) {
  %2: f32[2] = mul(%0, -inf:f32)
  %3: f32[2] = add(%2, nan:f32)
  %4: bool[2] = lt(%0, 0.5:f32)
  %5: f32[2] = convert(%4) {new_dtype=f32}
  %6: f32[2,3] = broadcast_in_dim(%5) {shape=(2, 3), broadcast_dimensions=(0,)}
  %7: f32[2] = reduce_sum(%6) {axes=(1,)}
  return %7, %4, %3
}"""
    func = parse(text)
    assert str(func) == text
    check(func)


def test_round_trip_traced_function():
    b = Builder("traced")
    x = b.input(TensorType((5, 2), F32))
    y = b.transpose(b.sin(x), permutation=(1, 0))
    z = b.reduce_sum(b.mul(y, lit(3.0, F32)), axes=(0, 1))
    func = check(b.build([z, y]))
    text = str(func)
    assert str(parse(text)) == text


def test_names_are_deterministic():
    assert str(parse(LOSS)) == str(parse(LOSS))


def test_parse_type():
    assert parse_type("f32[8,3]") == TensorType((8, 3), F32)
    assert parse_type("i32[]") == TensorType((), np.dtype(np.int32))
    with pytest.raises(IRError, match="expected"):
        parse_type("f32[8,")


def test_verifier_rejects_unbound_name():
    x = Var(TensorType((3,), F32))
    stray = Var(TensorType((3,), F32))
    out = Var(TensorType((3,), F32))
    func = Func("bad", (x,), (Eqn(registry["add"], (x, stray), {}, (out,)),), (out,))
    with pytest.raises(IRError, match="unbound"):
        check(func)


def test_verifier_rejects_wrong_output_type():
    x = Var(TensorType((3,), F32))
    out = Var(TensorType((4,), F32))
    func = Func("bad", (x,), (Eqn(registry["sin"], (x,), {}, (out,)),), (out,))
    with pytest.raises(IRError, match="wrong output type"):
        check(func)


def test_verifier_rejects_double_assignment():
    x = Var(TensorType((3,), F32))
    func = Func("bad", (x,), (Eqn(registry["sin"], (x,), {}, (x,)),), (x,))
    with pytest.raises(IRError, match="assigned twice"):
        check(func)


def test_parser_errors_name_the_line():
    with pytest.raises(IRError, match="line 2: unknown primitive 'frobnicate'"):
        parse("func @f(%0: f32[]) -> (f32[]) {\n  %1: f32[] = frobnicate(%0)\n  return %1\n}")
    with pytest.raises(IRError, match="used before it is defined"):
        parse("func @f(%0: f32[]) -> (f32[]) {\n  %1: f32[] = sin(%7)\n  return %1\n}")


def test_dce_and_cse():
    text = """func @f(%0: f32[3]) -> (f32[3]) {
  %1: f32[3] = sin(%0)
  %2: f32[3] = sin(%0)
  %3: f32[3] = cos(%0)
  %4: f32[3] = add(%1, %2)
  return %4
}"""
    assert str(dce(cse(parse(text)))) == """func @f(%0: f32[3]) -> (f32[3]) {
  %1: f32[3] = sin(%0)
  %2: f32[3] = add(%1, %1)
  return %2
}"""


# --- pass tests as IR text files -----------------------------------------------------------
# Each file under tests/compiler/ir/ holds: a first line "# pass: NAME OPTIONS", the input function,
# a line "# expect:", and the expected output function.

def _run(pass_line: str, func: Func) -> Func:
    name, *opts = pass_line.split()
    options = dict(o.split("=", 1) for o in opts)
    if name == "vmap":
        dims = [None if d == "None" else int(d) for d in options["in_dims"].split(",")]
        out = [None if d == "None" else int(d) for d in options.get("out_dims", "0").split(",")]
        axis = BatchAxis(int(options["size"]), options.get("name"))
        return cleanup(vmap_func(func, dims, axis, out))
    if name == "grad":
        wrt = [w == "1" for w in options["wrt"].split(",")]
        return cleanup(vjp_func(func, wrt))
    if name == "cleanup":
        return cleanup(func)
    raise ValueError(f"unknown pass {name}")


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(os.path.dirname(__file__),
                                                               "ir", "*.ir"))),
                         ids=os.path.basename)
def test_pass_text(path):
    with open(path) as f:
        first, rest = f.read().split("\n", 1)
    assert first.startswith("# pass: ")
    source, expected = rest.split("# expect:\n")
    got = check(_run(first[len("# pass: "):], parse(source)))
    assert str(got) == expected.strip()
