"""A random program as data, and how it prints as a standalone script.

A ``Program`` is a straight-line *body* (ops over the body's inputs, each op a Python
expression template over earlier values) wrapped in a stack of *wrappers* (``jit``,
``vmap``, ``grad``, ``pmap``, control flow ...), innermost first. Everything is plain
data, so a program can be printed, compared, and shrunk by the minimiser; the script it
prints runs unchanged on spmdc and on JAX (only the import lines differ).

Every level returns a flat tuple of arrays (the helpers ``_flat``/``_total``/``_floats``
in the script's prelude see to it), so ``out_axes`` are flat tuples and comparing two
runs is comparing two lists of arrays.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

Type = tuple[tuple[int, ...], str]          # (shape, dtype name)

FLOATS = ("float32", "bfloat16")
INTS = ("int32", "int8", "uint8")


def is_float(dtype: str) -> bool:
    return dtype in FLOATS or dtype == "float16"


def promote(a: str, b: str) -> str:
    """JAX's promotion for the dtypes the generator uses (x64 off)."""
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    fa, fb = is_float(a), is_float(b)
    if fa and fb:
        return "float32"
    if fa or fb:
        return a if fa else b
    width = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32}
    if a.startswith("u") != b.startswith("u"):
        signed, unsigned = (a, b) if b.startswith("u") else (b, a)
        if width[signed] > width[unsigned]:
            return signed
        # the next signed type above the unsigned one (int64 is int32 with x64 off)
        return {8: "int16", 16: "int32", 32: "int32"}[width[unsigned]]
    return a if width[a] >= width[b] else b


@dataclass(frozen=True)
class Input:
    """One body input: its type and how its values are drawn (``normal`` or an int range)."""
    shape: tuple[int, ...]
    dtype: str
    low: int = -4                # integer inputs: values in [low, high)
    high: int = 5


@dataclass(frozen=True)
class Op:
    """``v<k> = template.format(*(names of args))``; ``out`` is the result's type."""
    template: str
    args: tuple[int, ...]
    out: Type
    collective: bool = False     # names a mapped axis (psum, axis_index ...)
    smooth: bool = True          # differentiable almost everywhere in the inputs


@dataclass(frozen=True)
class Wrapper:
    # jit vmap pmap grad value_and_grad jacrev jvp jacfwd cond while fori scan
    kind: str
    params: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.params).get(key, default)


@dataclass(frozen=True)
class Program:
    seed: int
    inputs: tuple[Input, ...]
    ops: tuple[Op, ...]
    outputs: tuple[int, ...]                 # value numbers (inputs first, then ops)
    wrappers: tuple[Wrapper, ...] = ()       # innermost first
    notes: tuple[str, ...] = field(default=())

    def replace(self, **kw: Any) -> Program:
        return dataclasses.replace(self, **kw)

    def value_types(self) -> list[Type]:
        return [(i.shape, i.dtype) for i in self.inputs] + [op.out for op in self.ops]

    def body_out_types(self) -> list[Type]:
        types = self.value_types()
        return [types[k] for k in self.outputs]

    def has_collectives(self) -> bool:
        return any(op.collective for op in self.ops)

    def size(self) -> int:
        return len(self.ops) + len(self.wrappers) + len(self.inputs)


# --- the types seen at every level ---------------------------------------------------------

def float_outs(types: list[Type]) -> list[Type]:
    return [t for t in types if is_float(t[1])]


def total_dtype(types: list[Type]) -> str:
    dtype = None
    for _, d in float_outs(types):
        dtype = d if dtype is None else promote(dtype, d)
    return dtype or "float32"


def argnums_of(w: Wrapper) -> tuple[int, ...]:
    a = w.get("argnums", 0)
    return a if isinstance(a, tuple) else (a,)


def wrap_types(w: Wrapper, args: list[Type], outs: list[Type]) -> tuple[list[Type], list[Type]]:
    """(outer argument types, outer output types) of ``w`` around a level (args, outs)."""
    k = w.kind
    if k in ("jit", "cond", "while", "fori"):
        return args, outs
    if k in ("vmap", "pmap"):
        size = w.get("size")
        in_axes, out_axes = w.get("in_axes"), w.get("out_axes")
        new_args = []
        for (shape, dtype), ax in zip(args, in_axes, strict=True):
            if ax is not None:
                ax = ax % (len(shape) + 1)
                shape = shape[:ax] + (size,) + shape[ax:]
            new_args.append((shape, dtype))
        new_outs = []
        for (shape, dtype), ax in zip(outs, out_axes, strict=True):
            ax = ax % (len(shape) + 1)
            new_outs.append((shape[:ax] + (size,) + shape[ax:], dtype))
        return new_args, new_outs
    nums = argnums_of(w)
    if k == "grad":
        return args, [args[i] for i in nums]
    if k == "value_and_grad":
        return args, [((), total_dtype(outs))] + [args[i] for i in nums]
    if k == "jacrev":
        return args, [(o[0] + args[i][0], args[i][1]) for o in float_outs(outs) for i in nums]
    if k == "jacfwd":
        return args, [(o[0] + args[i][0], o[1]) for o in float_outs(outs) for i in nums]
    if k == "jvp":
        return args, float_outs(outs) + float_outs(outs)
    if k == "scan":
        n = w.get("length")
        return ([((n,) + args[0][0], args[0][1])] + args[1:],
                outs + [((n,) + s, d) for s, d in outs])
    raise ValueError(f"unknown wrapper {k}")


def level_types(p: Program) -> list[tuple[list[Type], list[Type]]]:
    """(argument types, output types) at the body and then outside each wrapper."""
    args = [(i.shape, i.dtype) for i in p.inputs]
    outs = p.body_out_types()
    levels = [(args, outs)]
    for w in p.wrappers:
        args, outs = wrap_types(w, args, outs)
        levels.append((args, outs))
    return levels


def bound_axes(p: Program) -> list[tuple[str, int]]:
    """The axis names the body may use: those of the mapping wrappers, outermost first."""
    return [(w.get("axis_name"), w.get("size")) for w in reversed(p.wrappers)
            if w.kind in ("vmap", "pmap") and w.get("axis_name")]


# --- printing ------------------------------------------------------------------------------

PRELUDE = '''\
def _flat(f):
    return lambda *a: tuple(jax.tree_util.tree_leaves(f(*a)))


def _isfloat(x):
    return jnp.issubdtype(x.dtype, jnp.floating)


def _floats(f):
    return lambda *a: tuple(o for o in f(*a) if _isfloat(o))


def _total(f):
    return lambda *a: sum(jnp.sum(o) for o in _floats(f)(*a))


def _neg(outs):
    return tuple(o if o.dtype == jnp.bool_ else -o for o in outs)


def _acc(acc, new):
    return tuple(a | b if a.dtype == jnp.bool_ else a + b for a, b in zip(acc, new))


def _bump(args, i):
    return tuple(x * (1 + 0.25 * i).astype(x.dtype) if _isfloat(x) else x for x in args)


def _only(args, nums, diff):
    args = list(args)
    for k, d in zip(nums, diff):
        args[k] = d
    return args
'''


def prelude(code: str) -> str:
    """The helpers that ``code`` calls, directly or through another helper."""
    helpers = ["def " + h for h in PRELUDE.split("\ndef ") if h]
    helpers = [h[4:] if h.startswith("def def ") else h for h in helpers]
    used: list[str] = []
    text = code
    changed = True
    while changed:
        changed = False
        for h in helpers:
            name = h.split("(")[0][4:]
            if h not in used and name + "(" in text:
                used.append(h)
                text += h
                changed = True
    return "".join(h.rstrip() + "\n\n\n" for h in helpers if h in used)


def wrapper_source(w: Wrapper) -> str:
    """The statement that wraps ``f`` in ``w``."""
    k = w.kind
    if k == "jit":
        return "f = jax.jit(f)"
    if k in ("vmap", "pmap"):
        parts = [f"in_axes={tuple(w.get('in_axes'))!r}"]
        if k == "vmap":
            parts.append(f"out_axes={tuple(w.get('out_axes'))!r}")
        if w.get("axis_name"):
            parts.append(f"axis_name={w.get('axis_name')!r}")
        return f"f = jax.{k}(f, {', '.join(parts)})"
    if k in ("grad", "value_and_grad"):
        return f"f = _flat(jax.{k}(_total(f), argnums={w.get('argnums')!r}))"
    if k in ("jacrev", "jacfwd"):
        return f"f = _flat(jax.{k}(_floats(f), argnums={w.get('argnums')!r}))"
    if k == "jvp":
        nums = argnums_of(w)
        return (f"f = (lambda f: lambda *a: _flat(jax.jvp)(\n"
                f"    lambda *d: _floats(f)(*_only(a, {nums!r}, d)),\n"
                f"    tuple(a[k] for k in {nums!r}), tuple(jnp.cos(a[k]) for k in {nums!r})))(f)")
    if k == "cond":
        return ("f = (lambda f: lambda *a: lax.cond(jnp.sum(a[0]) > 0, f,\n"
                "    lambda *b: _neg(f(*b)), *a))(f)")
    if k == "while":
        n = w.get("length")
        return (f"f = (lambda f: lambda *a: lax.while_loop(lambda c: c[0] < {n},\n"
                "    lambda c: (c[0] + 1, _acc(c[1], f(*_bump(a, c[0])))),\n"
                "    (jnp.int32(0), f(*a)))[1])(f)")
    if k == "fori":
        n = w.get("length")
        return (f"f = (lambda f: lambda *a: lax.fori_loop(0, {n},\n"
                "    lambda i, acc: _acc(acc, f(*_bump(a, i))), f(*a)))(f)")
    if k == "scan":
        return ("f = (lambda f: lambda xs, *r: _flat(lax.scan)(\n"
                "    lambda acc, x: (lambda y: (_acc(acc, y), y))(f(x, *r)),\n"
                "    f(xs[0], *r), xs))(f)")
    raise ValueError(f"unknown wrapper {k}")


def arg_source(k: int, shape: tuple[int, ...], inp: Input) -> str:
    if is_float(inp.dtype):
        draw = f"rng.standard_normal({shape!r})"
    elif inp.dtype == "bool":
        draw = f"rng.random({shape!r}) < 0.5"
    else:
        draw = f"rng.integers({inp.low}, {inp.high}, {shape!r})"
    dtype = "ml_dtypes.bfloat16" if inp.dtype == "bfloat16" else f"np.{inp.dtype}"
    if inp.dtype == "bool":
        dtype = "np.bool_"
    # On the device from the start: an op on a bare NumPy argument would follow NumPy's
    # rules, not the library's, in both runs.
    return f"a{k} = jnp.asarray(np.asarray({draw}, {dtype}))"


HEADERS = {
    "spmdc": "import spmdc as jax\nimport spmdc.numpy as jnp\nfrom spmdc import lax\n",
    "jax": ("import os\nos.environ.setdefault('XLA_FLAGS', "
            "'--xla_force_host_platform_device_count=8')\n"
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n"),
}


def body_source(p: Program) -> str:
    names = [f"a{k}" for k in range(len(p.inputs))]
    lines = [f"def body({', '.join(names)}):"]
    for k, op in enumerate(p.ops):
        name = f"v{len(p.inputs) + k}"
        names.append(name)
        lines.append(f"    {name} = " + op.template.format(*(names[a] for a in op.args)))
    outs = ", ".join(names[k] for k in p.outputs)
    lines.append(f"    return ({outs},)")
    return "\n".join(lines) + "\n"


def to_source(p: Program, backend: str = "spmdc") -> str:
    """A standalone script; ``out`` holds the results (a tuple of arrays)."""
    outer_args = level_types(p)[-1][0]
    args = [arg_source(k, shape, inp)
            for k, ((shape, _), inp) in enumerate(zip(outer_args, _outer_inputs(p), strict=True))]
    wrappers = "\n".join(wrapper_source(w) for w in p.wrappers)
    names = ", ".join(f"a{k}" for k in range(len(outer_args)))
    rest = body_source(p) + wrappers
    return (f"# fuzz program, seed {p.seed}\n" + HEADERS[backend] +
            "import ml_dtypes\nimport numpy as np\n\n\n" + prelude(rest) + body_source(p) +
            "\n\nf = body\n" + (wrappers + "\n" if wrappers else "") +
            f"rng = np.random.default_rng({p.seed})\n" + "\n".join(args) + "\n" +
            f"out = f({names})\n\n"
            "if __name__ == '__main__':\n"
            "    for o in out:\n"
            "        print(o.dtype, o.shape)\n"
            "        print(np.asarray(o))\n")


def _outer_inputs(p: Program) -> list[Input]:
    # Wrappers keep the number and order of arguments, so each outer argument draws its
    # values like the body input it feeds.
    return list(p.inputs)
