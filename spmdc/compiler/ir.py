"""spmdc's IR: small, flat, typed SSA, with a printer, a parser and a verifier.

The whole IR is five frozen dataclasses:

    TensorType(shape, dtype)      a static shape and a NumPy dtype
    Var(type)                     an SSA value; compared by identity, named only when printed
    Lit(value, type)              a scalar constant written inline
    Eqn(prim, inputs, params, outputs, source)
    Func(name, inputs, eqns, outputs)

Sub-functions (loop bodies, nested maps) live in ``params``; they are closed: every value
they use is one of their inputs. Names are assigned at print time, in order of first
definition, so a dump is deterministic and ``print(parse(text)) == text``.

Text grammar (whitespace between tokens is free; one equation per line by convention)::

    func     := 'func' '@' NAME '(' [binding {',' binding}] ')'
                '->' '(' [type {',' type}] ')' '{' {eqn} 'return' [atom {',' atom}] '}'
    binding  := VAR ':' type                        e.g.  %3: f32[4,3]
    type     := DTYPE '[' [INT {',' INT}] ']'       e.g.  f32[]  i32[8]  bool[2,0]
    eqn      := [binding {',' binding} '='] PRIM '(' [atom {',' atom}] ')' [params]
    atom     := VAR | NUMBER ':' DTYPE              e.g.  %0   2.0:f32   -inf:f32   True:bool
    params   := '{' NAME '=' value {',' NAME '=' value} '}'
    value    := INT | FLOAT | STRING | 'True' | 'False' | 'None' | DTYPE
              | '(' [value {',' value} [',']] ')' | func

An equation traced under ``named_scope`` names carries them in its source
(``SourceInfo.scope``, e.g. ``outer/inner``); the printer shows them after the equation
as a comment, ``# outer/inner``, which the parser skips (comments run to the end of the
line), so names never change what a Func computes.

The verifier (``check``) enforces single assignment, that every use is bound, and that
every equation's output types equal what its primitive's shape rule says.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import ml_dtypes
import numpy as np

from ..errors import IRError

__all__ = ["TensorType", "Var", "Lit", "Eqn", "Func", "Atom", "SourceInfo",
           "dtype_name", "dtype_from_name", "dtype_kind",
           "FINITE_FLOATS", "parse", "parse_type", "check", "replace"]


# --- dtypes ----------------------------------------------------------------------------

_DTYPE_NAMES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32", np.dtype(np.uint64): "u64",
    np.dtype(ml_dtypes.bfloat16): "bf16", np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128",
    # The narrow types (Note [narrow dtypes] in core/dtypes.py), named as JAX's jaxprs do.
    **{np.dtype(getattr(ml_dtypes, name)): name.replace("float", "f").replace("uint", "u")
       .replace("int", "i") for name in (
           "int2", "int4", "uint2", "uint4", "float4_e2m1fn", "float8_e3m4", "float8_e4m3",
           "float8_e8m0fnu", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
           "float8_e5m2", "float8_e5m2fnuz")},
}
_DTYPES_BY_NAME = {name: dt for dt, name in _DTYPE_NAMES.items()}
_KINDS = {dt: "b" if name == "bool" else "f" if name[0] in "bf" else name[0]
          for dt, name in _DTYPE_NAMES.items()}


FINITE_FLOATS = frozenset(np.dtype(getattr(ml_dtypes, name)) for name in (
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float4_e2m1fn", "float8_e8m0fnu"))
"""The floats without infinities (their overflow is NaN, or saturation)."""


def dtype_kind(dtype: Any) -> str:
    """NumPy's kind letter of ``dtype``, except that bfloat16 and the narrow floats are
    'f' and the narrow integers 'i'/'u' (NumPy says 'V' for all of them; See Note
    [narrow dtypes] in core/dtypes.py)."""
    d = np.dtype(dtype)
    return _KINDS.get(d, d.kind)


def dtype_name(dtype: np.dtype) -> str:
    """The short IR name of a dtype (``f32``, ``i32``, ``bool`` ...)."""
    try:
        return _DTYPE_NAMES[np.dtype(dtype)]
    except KeyError:
        raise IRError(f"dtype {np.dtype(dtype)} is not supported by spmdc") from None


def dtype_from_name(name: str) -> np.dtype:
    try:
        return _DTYPES_BY_NAME[name]
    except KeyError:
        raise IRError(f"unknown dtype name {name!r}") from None


# --- the IR itself -----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TensorType:
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __str__(self) -> str:
        return f"{dtype_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    __repr__ = __str__


@dataclass(frozen=True, eq=False, slots=True)
class Var:
    """An SSA value. Identity is the name: two Vars are equal only if they are one object."""
    type: TensorType

    def __repr__(self) -> str:
        return f"Var({self.type})"


@dataclass(frozen=True, slots=True)
class Lit:
    """A scalar constant. ``value`` is a Python bool, int, float or complex."""
    value: Any
    type: TensorType

    def __str__(self) -> str:
        return f"{_format_scalar(self.value)}:{dtype_name(self.type.dtype)}"


Atom = Var | Lit


class SourceInfo(str):
    """An equation's source: the user's ``file:line`` (the string itself, as messages
    print it) and the ``named_scope`` names it was traced under, joined by ``/``."""
    __slots__ = ("scope",)

    def __new__(cls, where: str, scope: str) -> SourceInfo:
        self = super().__new__(cls, where)
        self.scope = scope
        return self

    def __reduce__(self) -> Any:
        return SourceInfo, (str(self), self.scope)


@dataclass(frozen=True, slots=True)
class Eqn:
    prim: Any                       # a Primitive (see primitives/core.py)
    inputs: tuple[Atom, ...]
    params: dict[str, Any]
    outputs: tuple[Var, ...]
    source: str | None = field(default=None, compare=False)   # the user's file:line


@dataclass(frozen=True, slots=True)
class Func:
    name: str
    inputs: tuple[Var, ...]
    eqns: tuple[Eqn, ...]
    outputs: tuple[Atom, ...]

    @property
    def in_types(self) -> tuple[TensorType, ...]:
        return tuple(v.type for v in self.inputs)

    @property
    def out_types(self) -> tuple[TensorType, ...]:
        return tuple(v.type for v in self.outputs)

    def __str__(self) -> str:
        return print_func(self)


# --- printer -----------------------------------------------------------------------------

def _format_scalar(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (complex, np.complexfloating)):
        return f"({_format_scalar(value.real)}+{_format_scalar(value.imag)}j)"
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def print_func(func: Func, indent: str = "",
               annotate: Callable[[Var], str] | None = None) -> str:
    """``func`` as text; ``annotate(v)``, if given, is appended to each defined value's
    type (``spmdc dump`` shows the mesh axes a value varies over that way)."""
    names: dict[Var, str] = {}

    def define(v: Var) -> str:
        if v in names:
            raise IRError(f"{func.name}: a Var is assigned twice")
        names[v] = f"%{len(names)}"
        return f"{names[v]}: {v.type}" + (annotate(v) if annotate is not None else "")

    def use(a: Atom) -> str:
        if isinstance(a, Lit):
            return str(a)
        try:
            return names[a]
        except KeyError:
            raise IRError(f"{func.name}: a Var of type {a.type} is used but never "
                          "defined") from None

    args = ", ".join(define(v) for v in func.inputs)
    lines = []
    for eqn in func.eqns:
        ins = ", ".join(use(a) for a in eqn.inputs)
        outs = ", ".join(define(v) for v in eqn.outputs)
        params = ""
        if eqn.params:
            inner = indent + "  "
            params = " {" + ", ".join(f"{k}={_format_param(v, inner)}"
                                       for k, v in eqn.params.items()) + "}"
        scope = f"  # {eqn.source.scope}" if eqn.source.__class__ is SourceInfo else ""
        head = f"{outs} = " if outs else ""         # an effect may have no outputs
        lines.append(f"{indent}  {head}{eqn.prim.name}({ins}){params}{scope}")
    rets = ", ".join(use(a) for a in func.outputs)
    out_types = ", ".join(str(a.type) for a in func.outputs)
    head = f"func @{func.name}({args}) -> ({out_types}) {{"
    return "\n".join([head, *lines, f"{indent}  return {rets}", f"{indent}}}"])


def _format_param(v: Any, indent: str) -> str:
    if isinstance(v, Func):
        return print_func(v, indent)
    if isinstance(v, tuple | list):
        items = [_format_param(x, indent) for x in v]
        return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return dtype_name(np.dtype(v))
    if isinstance(v, str):
        return repr(v)
    if v is None or isinstance(v, bool | int | float | complex | np.number | np.bool_):
        return _format_scalar(v) if v is not None else "None"
    if hasattr(v, "ir_text"):           # e.g. a custom derivative rule, traced on demand
        return v.ir_text()
    raise IRError(f"cannot print parameter value {v!r} of type {type(v).__name__}")


# --- parser ------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<var>%\d+)
  | (?P<sym>@[A-Za-z_][\w.]*)
  | (?P<arrow>->)
  | (?P<complex>\(-?[\d.e+-]+(?:inf|nan)?[+-][\d.e+-]*(?:inf|nan)?j\))
  | (?P<num>-?(?:inf|nan|\d+\.\d*(?:e[+-]?\d+)?|\d+e[+-]?\d+|\d+)(?![\w]))
  | (?P<name>[A-Za-z_][\w]*)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<punct>[()\[\]{},:=])
""", re.VERBOSE)


class _Parser:
    def __init__(self, text: str, prims: dict[str, Any]):
        self.tokens: list[tuple[str, str, int]] = []
        pos, line = 0, 1
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise IRError(f"line {line}: unexpected character {text[pos]!r}")
            if m.lastgroup != "ws":
                self.tokens.append((m.lastgroup, m.group(), line))
            line += m.group().count("\n")
            pos = m.end()
        self.i = 0
        self.prims = prims

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("eof", "", -1)

    def next(self, kind: str | None = None, text: str | None = None) -> str:
        k, t, line = self.peek()
        if (kind and k != kind) or (text and t != text):
            want = text or kind
            raise IRError(f"line {line}: expected {want!r}, found {t or 'end of input'!r}")
        self.i += 1
        return t

    def accept(self, text: str) -> bool:
        if self.peek()[1] == text:
            self.i += 1
            return True
        return False

    def type(self) -> TensorType:
        dtype = dtype_from_name(self.next("name"))
        self.next(text="[")
        dims = []
        while not self.accept("]"):
            dims.append(int(self.next("num")))
            self.accept(",")
        return TensorType(tuple(dims), dtype)

    def func(self) -> Func:
        env: dict[str, Var] = {}
        self.next(text="func")
        name = self.next("sym")[1:]
        self.next(text="(")
        inputs = []
        while not self.accept(")"):
            inputs.append(self.binding(env))
            self.accept(",")
        self.next("arrow")
        self.next(text="(")
        while not self.accept(")"):
            self.type()
            self.accept(",")
        self.next(text="{")
        eqns = []
        while self.peek()[1] != "return":
            eqns.append(self.eqn(env))
        self.next(text="return")
        outputs = []
        while self.peek()[1] != "}":
            outputs.append(self.atom(env))
            self.accept(",")
        self.next(text="}")
        return Func(name, tuple(inputs), tuple(eqns), tuple(outputs))

    def binding(self, env: dict[str, Var]) -> Var:
        _, name, line = self.peek()
        self.next("var")
        self.next(text=":")
        v = Var(self.type())
        if name in env:
            raise IRError(f"line {line}: {name} is assigned twice")
        env[name] = v
        return v

    def atom(self, env: dict[str, Var]) -> Atom:
        kind, text, line = self.peek()
        if kind == "var":
            self.i += 1
            if text not in env:
                raise IRError(f"line {line}: {text} is used before it is defined")
            return env[text]
        value = self.scalar()
        self.next(text=":")
        dtype = dtype_from_name(self.next("name"))
        return Lit(np.asarray(value, dtype).item(), TensorType((), dtype))

    def scalar(self) -> Any:
        kind, text, line = self.peek()
        self.i += 1
        if kind == "complex":
            return complex(text.replace("inf", "inf").replace("nan", "nan"))
        if kind == "num":
            return float(text) if any(c in text for c in ".en") or "inf" in text else int(text)
        if kind == "name" and text in ("True", "False"):
            return text == "True"
        raise IRError(f"line {line}: expected a number, found {text!r}")

    def eqn(self, env: dict[str, Var]) -> Eqn:
        pending = []                 # outputs are bound after the inputs are read
        while self.peek()[0] == "var":
            name = self.next("var")
            self.next(text=":")
            pending.append((name, self.type()))
            if not self.accept(","):
                break
        if pending:
            self.next(text="=")
        _, prim_name, line = self.peek()
        self.next("name")
        if prim_name not in self.prims:
            raise IRError(f"line {line}: unknown primitive {prim_name!r}")
        self.next(text="(")
        inputs = []
        while not self.accept(")"):
            inputs.append(self.atom(env))
            self.accept(",")
        params = {}
        if self.accept("{"):
            while not self.accept("}"):
                key = self.next("name")
                self.next(text="=")
                params[key] = self.value()
                self.accept(",")
        outputs = []
        for name, t in pending:
            if name in env:
                raise IRError(f"line {line}: {name} is assigned twice")
            env[name] = Var(t)
            outputs.append(env[name])
        return Eqn(self.prims[prim_name], tuple(inputs), params, tuple(outputs))

    def value(self) -> Any:
        kind, text, line = self.peek()
        if text == "func":
            return self.func()
        if text == "(":
            self.i += 1
            items = []
            while not self.accept(")"):
                items.append(self.value())
                self.accept(",")
            return tuple(items)
        if kind == "str":
            self.i += 1
            return text[1:-1].encode().decode("unicode_escape")
        if kind == "name":
            if text == "None":
                self.i += 1
                return None
            if text in _DTYPES_BY_NAME:
                self.i += 1
                return _DTYPES_BY_NAME[text]
        return self.scalar()


def parse(text: str, prims: dict[str, Any] | None = None) -> Func:
    """Parse the text form of one function (see the module docstring)."""
    if prims is None:
        from .primitives.core import registry as prims
    p = _Parser(text, prims)
    func = p.func()
    if p.peek()[0] != "eof":
        raise IRError(f"line {p.peek()[2]}: unexpected {p.peek()[1]!r} after the function")
    return func


def parse_type(text: str) -> TensorType:
    """Parse a type such as ``f32[8,3]``."""
    p = _Parser(text.strip(), {})
    t = p.type()
    if p.peek()[0] != "eof":
        raise IRError(f"unexpected {p.peek()[1]!r} after type {t}")
    return t


# --- verifier ----------------------------------------------------------------------------

def check(func: Func) -> Func:
    """Verify single assignment, bound uses and shape rules; return ``func`` unchanged."""
    defined: set[Var] = set()
    where = f"func @{func.name}"

    def define(v: Var, what: str) -> None:
        if not isinstance(v, Var):
            raise IRError(f"{where}: {what} is {v!r}, not a Var")
        if v in defined:
            raise IRError(f"{where}: {what} ({v.type}) is assigned twice")
        defined.add(v)

    def use(a: Atom, what: str) -> None:
        if isinstance(a, Lit):
            if a.type.shape != ():
                raise IRError(f"{where}: {what} is a literal of non-scalar type {a.type}")
        elif a not in defined:
            raise IRError(f"{where}: {what} of type {a.type} is used but not bound "
                          "(unbound name)")

    for k, v in enumerate(func.inputs):
        define(v, f"input {k}")
    for n, eqn in enumerate(func.eqns):
        here = f"equation {n} ({eqn.prim.name})"
        for k, a in enumerate(eqn.inputs):
            use(a, f"{here} operand {k}")
        for value in eqn.params.values():
            if isinstance(value, Func):
                check(value)
        try:
            expected = eqn.prim.out_types(*(a.type for a in eqn.inputs), **eqn.params)
        except Exception as e:        # the shape rule's own message says what is wrong
            raise IRError(f"{where}: {here} fails its shape rule: {e}") from e
        got = tuple(v.type for v in eqn.outputs)
        if got != tuple(expected):
            raise IRError(f"{where}: {here} has output types {list(map(str, got))} but its "
                          f"shape rule gives {list(map(str, expected))} (wrong output type)")
        for k, v in enumerate(eqn.outputs):
            define(v, f"{here} output {k}")
    for k, a in enumerate(func.outputs):
        use(a, f"output {k}")
    return func
