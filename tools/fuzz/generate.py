"""The seeded random-program generator.

``generate(seed, features)`` first chooses the wrapper stack (which axis names the body
may use, whether it is differentiated), then the body's ops, each op a template over
earlier values whose operands are found among the values so far or added as new body
inputs of the needed type, and last the wrappers' parameters (``in_axes``, ``argnums``
...) from the types at each level. The same seed always gives the same program.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable

from .program import (
    FLOATS,
    Input,
    Op,
    Program,
    Type,
    Wrapper,
    float_outs,
    is_float,
    promote,
    wrap_types,
)

DIFF = ("grad", "value_and_grad", "jacrev", "jvp", "jacfwd")
DTYPES = ("float32", "float32", "float32", "bfloat16", "int32", "int8", "uint8", "bool")


class Body:
    """The body under construction: its inputs, ops, and the axis names it may use."""

    def __init__(self, rng: random.Random, axes: list[tuple[str, int]], differentiated: bool,
                 features: frozenset[str]):
        self.rng, self.axes, self.differentiated = rng, axes, differentiated
        self.features = features
        self.values: list[Input | Op] = []

    # Values are numbered in creation order while generating; ``finish`` renumbers them
    # inputs first, as the program stores them.
    def types(self) -> list[Type]:
        return [(v.shape, v.dtype) if isinstance(v, Input) else v.out for v in self.values]

    def add_input(self, shape: tuple[int, ...], dtype: str, low: int = -4, high: int = 5) -> int:
        self.values.append(Input(tuple(shape), dtype, low, high))
        return len(self.values) - 1

    def emit(self, template: str, args: tuple[int, ...], out: Type, **kw: bool) -> int:
        self.values.append(Op(template, args, (tuple(out[0]), out[1]), **kw))
        return len(self.values) - 1

    @property
    def ops(self) -> list[Op]:
        return [v for v in self.values if isinstance(v, Op)]

    def finish(self, outputs: tuple[int, ...]) -> Program:
        order = [k for k, v in enumerate(self.values) if isinstance(v, Input)] + \
                [k for k, v in enumerate(self.values) if isinstance(v, Op)]
        new = {old: k for k, old in enumerate(order)}
        inputs = tuple(v for v in self.values if isinstance(v, Input))
        ops = tuple(Op(v.template, tuple(new[a] for a in v.args), v.out, v.collective, v.smooth)
                    for v in self.values if isinstance(v, Op))
        return Program(0, inputs, ops, tuple(new[k] for k in outputs))

    def value(self, pred: Callable[[Type], bool] = lambda t: True) -> int | None:
        """A random existing value satisfying ``pred``, recent ones more likely."""
        types = self.types()
        cands = [k for k, t in enumerate(types) if pred(t)]
        if not cands:
            return None
        weights = [1 + 2 * (k >= len(types) - 3) for k in cands]
        return self.rng.choices(cands, weights)[0]

    def operand(self, shape: tuple[int, ...], dtype: str | None = None, fresh: float = 0.4,
                low: int = -4, high: int = 5) -> int:
        """A value of this shape (and dtype): an existing one or a new input."""
        if self.rng.random() > fresh:
            k = self.value(lambda t: t[0] == tuple(shape) and (dtype is None or t[1] == dtype))
            if k is not None:
                return k
        return self.add_input(shape, dtype or self.dtype(), low, high)

    def dtype(self) -> str:
        dtype = self.rng.choice(DTYPES)
        return dtype if dtype != "bfloat16" or "bfloat16" in self.features else "float32"

    def shape(self, max_rank: int = 3) -> tuple[int, ...]:
        rank = self.rng.choices(range(max_rank + 1), [1, 3, 3, 2][:max_rank + 1])[0]
        return tuple(self.rng.choice((1, 2, 3, 4)) for _ in range(rank))


# --- op generators: each returns the new value's number, or None when it does not apply ---

UNARY_FLOAT = ["jnp.sin({0})", "jnp.cos({0})", "jnp.tanh({0})", "jnp.exp({0})", "-{0}",
               "jnp.abs({0})", "jnp.square({0})", "jnp.log1p(jnp.abs({0}))",
               "jnp.sqrt(jnp.abs({0}) + 1)", "lax.rsqrt(jnp.abs({0}) + 1)", "jnp.arctan({0})",
               "{0} ** 2", "{0} ** 3", "jnp.expm1({0})", "jnp.sinh({0})", "1 / (1 + {0} * {0})",
               "jnp.maximum({0}, 0)", "jnp.clip({0}, -0.5, 0.7)", "jnp.cbrt({0} + 3)"]
UNARY_ANY = ["jnp.floor({0})", "jnp.ceil({0})", "jnp.round({0})", "jnp.sign({0})", "jnp.abs({0})"]
BINARY = ["{0} + {1}", "{0} - {1}", "{0} * {1}", "jnp.maximum({0}, {1})", "jnp.minimum({0}, {1})"]
BINARY_FLOAT = ["{0} / (jnp.abs({1}) + 1)", "jnp.arctan2({0}, {1})"]
COMPARE = ["{0} < {1}", "{0} >= {1}", "{0} == {1}", "{0} != {1}"]


def op_unary(b: Body) -> int | None:
    x = b.value(lambda t: t[1] != "bool")
    if x is None:
        return None
    shape, dtype = b.types()[x]
    if b.rng.random() < 0.7:
        out = dtype if is_float(dtype) else "float32"
        return b.emit(b.rng.choice(UNARY_FLOAT), (x,), (shape, out))
    t = b.rng.choice(UNARY_ANY)
    return b.emit(t, (x,), (shape, dtype), smooth=False)


def broadcast_partner(b: Body, shape: tuple[int, ...]) -> tuple[int, ...]:
    r = b.rng.random()
    if r < 0.4:
        return shape
    if r < 0.6 and shape:
        return shape[b.rng.randint(0, len(shape)):]              # a suffix (lower rank)
    if r < 0.8:
        return tuple(1 if b.rng.random() < 0.5 else d for d in shape)
    return (b.rng.choice((1, 2)),) + shape if len(shape) < 3 else shape


def op_binary(b: Body) -> int | None:
    x = b.value(lambda t: t[1] != "bool")
    if x is None:
        return None
    shape, dtype = b.types()[x]
    r = b.rng.random()
    if r < 0.25:                                           # a Python scalar: weakly typed
        scalar = b.rng.choice(("2", "-1", "0.5", "3.0", "True"))
        t = b.rng.choice(("{0} + S", "S * {0}", "{0} - S", "S - {0}", "{0} * S"))
        t = t.replace("S", scalar)
        out = dtype if not ("." in scalar and not is_float(dtype)) else "float32"
        return b.emit(t, (x,), (shape, out))
    other = broadcast_partner(b, shape)
    y_dtype = dtype if b.rng.random() < 0.6 else b.rng.choice(DTYPES[:-1])
    y = b.operand(other, y_dtype)
    y_shape, y_dtype = b.types()[y]
    out_shape = broadcast(shape, y_shape)
    if out_shape is None:
        return None
    if r < 0.35:
        return b.emit(b.rng.choice(COMPARE), (x, y), (out_shape, "bool"), smooth=False)
    if r < 0.45:
        out = promote(promote(dtype, y_dtype), "float32") if not is_float(promote(dtype, y_dtype)) \
            else promote(dtype, y_dtype)
        return b.emit(b.rng.choice(BINARY_FLOAT), (x, y), (out_shape, out))
    if r < 0.55:                                          # where with a mask
        c = b.operand(broadcast_partner(b, out_shape), "bool")
        c_shape = b.types()[c][0]
        final = broadcast(out_shape, c_shape)
        if final is None:
            return None
        return b.emit("jnp.where({2}, {0}, {1})", (x, y, c), (final, promote(dtype, y_dtype)))
    return b.emit(b.rng.choice(BINARY), (x, y), (out_shape, promote(dtype, y_dtype)))


def broadcast(a: tuple[int, ...], b_: tuple[int, ...]) -> tuple[int, ...] | None:
    out = []
    for x, y in zip(((1,) * (len(b_) - len(a)) + a), ((1,) * (len(a) - len(b_)) + b_), strict=True):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def axes_choice(b: Body, rank: int) -> tuple[str, tuple[int, ...]]:
    """(source text, normalised axes) of a random ``axis=`` for a rank-``rank`` array."""
    r = b.rng.random()
    if rank == 0 or r < 0.25:
        return "None", tuple(range(rank))
    if r < 0.75:
        a = b.rng.randrange(-rank, rank)
        return str(a), (a % rank,)
    axes = tuple(sorted(b.rng.sample(range(rank), b.rng.randint(1, rank))))
    return repr(axes), axes


def op_reduce(b: Body) -> int | None:
    x = b.value()
    if x is None:
        return None
    shape, dtype = b.types()[x]
    name = b.rng.choice(("sum", "sum", "max", "min", "mean", "prod", "argmax", "any", "all",
                         "var", "std", "cumsum", "sort", "trace"))
    if name == "trace":
        if len(shape) < 2 or not is_float(dtype):
            return None
        t = "{0}.trace()" if b.rng.random() < 0.5 else "jnp.trace({0})"
        return b.emit(t, (x,), (shape[2:], dtype))
    if name == "sort" and "sort" not in b.features:
        name = "cumsum"
    if name in ("any", "all") and dtype != "bool":
        name = "sum"
    if name in ("argmax", "cumsum", "sort"):
        if not shape:
            return None
        a = b.rng.randrange(-len(shape), len(shape))
        if name == "argmax":
            fn = b.rng.choice(("argmax", "argmin"))
            return b.emit(f"jnp.{fn}({{0}}, axis={a})", (x,),
                          (shape[:a % len(shape)] + shape[a % len(shape) + 1:], "int32"),
                          smooth=False)
        out = dtype if name == "sort" or dtype in FLOATS + ("int32",) else \
            ("uint32" if dtype.startswith("u") else "int32")
        if dtype == "bool" and name == "cumsum":
            out = "int32"
        return b.emit(f"jnp.{name}({{0}}, axis={a})", (x,), (shape, out))
    axis_src, axes = axes_choice(b, len(shape))
    if name == "std" and math.prod(shape[k] for k in axes) < 2:
        name = "var"             # the std of one value is sqrt(0): its gradient is NaN
    keep = b.rng.random() < 0.3
    out_shape = tuple(1 if k in axes else d for k, d in enumerate(shape)) if keep else \
        tuple(d for k, d in enumerate(shape) if k not in axes)
    extra = ", keepdims=True" if keep else ""
    if name in ("sum", "max", "min", "prod", "mean", "any", "all") and shape \
            and b.rng.random() < 0.25 and "where" in b.features:
        mask = b.operand(broadcast_partner(b, shape), "bool")
        if broadcast(shape, b.types()[mask][0]) != shape:
            return None
        extra += ", where={1}"
        if name in ("max", "min"):
            extra += ", initial=0"
        args: tuple[int, ...] = (x, mask)
    else:
        args = (x,)
    if name in ("mean", "var", "std"):
        out = dtype if is_float(dtype) else "float32"
    elif name in ("any", "all"):
        out = "bool"
    elif name in ("sum", "prod") and not is_float(dtype):
        out = "uint32" if dtype.startswith("u") else "int32"
    else:
        out = dtype
    if b.rng.random() < 0.3:                            # the Array method form
        return b.emit(f"{{0}}.{name}(axis={axis_src}{extra})", args, (out_shape, out))
    return b.emit(f"jnp.{name}({{0}}, axis={axis_src}{extra})", args, (out_shape, out))


EINSUMS = [("ij,jk->ik", 2), ("ij->ji", 1), ("ij,ij->i", 2), ("bij,bjk->bik", 2), ("i,j->ij", 2),
           ("ij->", 1), ("ij,j->i", 2), ("...ij,jk->...ik", 2), ("ii->i", 1)]


def op_matmul(b: Body) -> int | None:
    x = b.value(lambda t: len(t[0]) >= 1 and t[1] != "bool")
    if x is None:
        return None
    shape, dtype = b.types()[x]
    r = b.rng.random()
    if r < 0.5:                                       # x @ y, 1-D and batched included
        n = b.rng.choice((1, 2, 3))
        if len(shape) == 1:
            y = b.operand((shape[0],) if b.rng.random() < 0.5 else (shape[0], n), dtype)
        else:
            y = b.operand(shape[-1:] if b.rng.random() < 0.3 else (shape[-1], n), dtype)
        ys, yd = b.types()[y]
        out = shape[:-1] + ys[1:] if len(shape) > 1 or len(ys) > 1 else ()
        if len(shape) == 1 and len(ys) == 2:
            out = ys[1:]
        return b.emit(b.rng.choice(("{0} @ {1}", "jnp.matmul({0}, {1})", "jnp.dot({0}, {1})")),
                      (x, y), (out, promote(dtype, yd)))
    spec, n_args = b.rng.choice(EINSUMS)
    ins, out_spec = spec.split("->")
    letters: dict[str, int] = {}
    subs = ins.split(",")
    first = subs[0].replace("...", "")
    ellipsis = "..." in subs[0]
    if len(first) != len(shape) - ellipsis or (ellipsis and len(shape) < 3):
        return None
    if "..." in subs[0]:
        batch = shape[:len(shape) - len(first)]
        core = shape[len(shape) - len(first):]
    else:
        batch, core = (), shape
    for ch, d in zip(first, core, strict=True):
        if letters.setdefault(ch, d) != d:
            return None
    args = [x]
    for s in subs[1:]:
        s = s.replace("...", "")
        y_shape = tuple(letters.setdefault(ch, b.rng.choice((1, 2, 3))) for ch in s)
        args.append(b.operand(y_shape, dtype))
    out = batch + tuple(letters[ch] for ch in out_spec.replace("...", ""))
    srcs = ", ".join(f"{{{k}}}" for k in range(len(args)))
    return b.emit(f"jnp.einsum({spec!r}, {srcs})", tuple(args), (out, dtype))


def op_shape(b: Body) -> int | None:
    x = b.value()
    if x is None:
        return None
    shape, dtype = b.types()[x]
    n, rank = math.prod(shape), len(shape)
    kind = b.rng.choice(("reshape", "transpose", "expand", "squeeze", "flip", "concat", "stack",
                         "broadcast_to", "swapaxes", "tile", "repeat", "pad", "ravel", "astype"))
    if kind == "reshape":
        dims = factor(b, n)
        src = list(map(str, dims))
        if dims and b.rng.random() < 0.3:
            src[b.rng.randrange(len(dims))] = "-1"
        return b.emit(f"{{0}}.reshape(({', '.join(src)}{',' if len(src) == 1 else ''}))", (x,),
                      (tuple(dims), dtype))
    if kind == "astype":
        to = b.rng.choice(("float32", "bfloat16", "int32", "int8", "bool"))
        if to == "int8" and is_float(dtype):       # out-of-range float -> int8 is undefined
            to = "int32"
        to = to if to != "bfloat16" or "bfloat16" in b.features else "float32"
        return b.emit(f"{{0}}.astype(jnp.{to if to != 'bool' else 'bool_'})", (x,), (shape, to),
                      smooth=is_float(to))
    if kind == "expand":
        a = b.rng.randint(-rank - 1, rank)
        a_n = a % (rank + 1)
        return b.emit(f"jnp.expand_dims({{0}}, {a})", (x,),
                      (shape[:a_n] + (1,) + shape[a_n:], dtype))
    if kind == "ravel":
        return b.emit("jnp.ravel({0})", (x,), ((n,), dtype))
    if kind == "broadcast_to":
        new = (b.rng.choice((1, 2, 3)),) + tuple(d if b.rng.random() < 0.8 else d for d in shape)
        return b.emit(f"jnp.broadcast_to({{0}}, {new!r})", (x,), (new, dtype))
    if rank == 0:
        return None
    a = b.rng.randrange(-rank, rank)
    an = a % rank
    if kind == "transpose":
        perm = b.rng.sample(range(rank), rank)
        t = "{0}.T" if b.rng.random() < 0.3 else f"jnp.transpose({{0}}, {tuple(perm)!r})"
        if t == "{0}.T":
            perm = list(range(rank))[::-1]
        return b.emit(t, (x,), (tuple(shape[p] for p in perm), dtype))
    if kind == "squeeze":
        ones = [k for k, d in enumerate(shape) if d == 1]
        if not ones:
            return None
        k = b.rng.choice(ones)
        return b.emit(f"jnp.squeeze({{0}}, axis={k})", (x,), (shape[:k] + shape[k + 1:], dtype))
    if kind == "flip":
        return b.emit(f"jnp.flip({{0}}, axis={a})", (x,), (shape, dtype))
    if kind == "swapaxes":
        c = b.rng.randrange(rank)
        s = list(shape)
        s[an], s[c] = s[c], s[an]
        return b.emit(f"jnp.swapaxes({{0}}, {a}, {c})", (x,), (tuple(s), dtype))
    if kind in ("concat", "stack"):
        other = list(shape)
        if kind == "concat":
            other[an] = b.rng.choice((1, 2, 3))
        y = b.operand(tuple(other), dtype if b.rng.random() < 0.8 else b.dtype())
        yd = b.types()[y][1]
        if kind == "concat":
            out = shape[:an] + (shape[an] + other[an],) + shape[an + 1:]
            return b.emit(f"jnp.concatenate([{{0}}, {{1}}], axis={a})", (x, y),
                          (out, promote(dtype, yd)))
        s = b.rng.randint(-rank - 1, rank)
        sn = s % (rank + 1)
        return b.emit(f"jnp.stack([{{0}}, {{1}}], axis={s})", (x, y),
                      (shape[:sn] + (2,) + shape[sn:], promote(dtype, yd)))
    if kind == "tile":
        reps = tuple(b.rng.choice((1, 2)) for _ in range(rank))
        tiled = tuple(d * r for d, r in zip(shape, reps, strict=True))
        return b.emit(f"jnp.tile({{0}}, {reps!r})", (x,), (tiled, dtype))
    if kind == "repeat":
        r = b.rng.choice((1, 2, 3))
        return b.emit(f"jnp.repeat({{0}}, {r}, axis={a})", (x,),
                      (shape[:an] + (shape[an] * r,) + shape[an + 1:], dtype))
    if kind == "pad":
        widths = tuple((b.rng.randint(0, 2), b.rng.randint(0, 2)) for _ in range(rank))
        out = tuple(d + lo + hi for d, (lo, hi) in zip(shape, widths, strict=True))
        return b.emit(f"jnp.pad({{0}}, {widths!r})", (x,), (out, dtype))
    return None


def factor(b: Body, n: int) -> list[int]:
    dims = []
    while n > 1 and len(dims) < 3:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        d = b.rng.choice(divs)
        dims.append(d)
        n //= d
    if n > 1:
        dims[-1] *= n
    if b.rng.random() < 0.3:
        dims.insert(b.rng.randint(0, len(dims)), 1)
    return dims


def op_index(b: Body) -> int | None:
    x = b.value(lambda t: len(t[0]) >= 1)
    if x is None:
        return None
    shape, dtype = b.types()[x]
    d = shape[0]
    kind = b.rng.choice(("int", "slice", "none", "array", "take", "at", "at", "dynamic_slice",
                         "dynamic_update_slice"))
    if kind == "int":
        return b.emit(f"{{0}}[{b.rng.randint(-d, d - 1)}]", (x,), (shape[1:], dtype))
    if kind == "slice":
        lo, hi = sorted((b.rng.randint(-d, d), b.rng.randint(-d, d)))
        step = b.rng.choice((1, 1, 2, -1))
        n = len(range(*slice(lo, hi, step).indices(d)))
        if n == 0:
            return None
        return b.emit(f"{{0}}[{lo}:{hi}:{step}]", (x,), ((n,) + shape[1:], dtype))
    if kind == "none":
        return b.emit("{0}[:, None]", (x,), ((d, 1) + shape[1:], dtype))
    modes = "modes" in b.features
    oob = modes and b.rng.random() < 0.5
    low, high = (-d - 2, d + 2) if oob else (-d, d)
    k = b.rng.choice((1, 2, 3))
    if kind == "array":
        idx = b.operand((k,), "int32", fresh=0.8, low=low if not oob else -d, high=d)
        return b.emit("{0}[{1}]", (x, idx), ((k,) + shape[1:], dtype))
    if kind == "take":
        idx = b.operand((k,), "int32", fresh=0.8, low=low, high=high)
        a = b.rng.randrange(len(shape))
        mode = b.rng.choice(("'clip'", "'fill'", "'wrap'")) if modes else None
        if mode is None and oob:
            return None
        mode_src = f", mode={mode}" if mode else ""
        return b.emit(f"jnp.take({{0}}, {{1}}, axis={a}{mode_src})", (x, idx),
                      (shape[:a] + (k,) + shape[a + 1:], dtype))
    if kind == "at":
        method = b.rng.choice(("set", "add", "mul", "min", "max", "get"))
        if method in ("set", "get"):               # a duplicate index would make set racy
            i = b.rng.randint(-d - 1, d) if oob else b.rng.randint(-d, d - 1)
            index, args, sub = str(i), (x,), shape[1:]
        else:
            idx = b.operand((k,), "int32", fresh=0.9, low=low, high=high)
            index, args, sub = "{1}", (x, idx), (k,) + shape[1:]
        mode = ""
        if modes and (oob or b.rng.random() < 0.3):
            mode = ", mode='fill', fill_value=0" if method == "get" else \
                ", mode=" + b.rng.choice(("'drop'", "'clip'",
                                          "'promise_in_bounds'" if not oob else "'drop'"))
        elif oob:
            return None
        if method == "get":
            return b.emit(f"{{0}}.at[{index}].get({mode.lstrip(', ')})", args, (sub, dtype))
        if method in ("min", "max", "mul") and dtype == "bool":
            return None
        upd_shape = sub if b.rng.random() < 0.6 else ()
        u = b.operand(upd_shape, dtype)
        args = args + (u,)
        return b.emit(f"{{0}}.at[{index}].{method}({{{len(args) - 1}}}{mode})", args,
                      (shape, dtype), smooth=method not in ("min", "max"))
    size = tuple(b.rng.randint(1, s) for s in shape)
    if kind == "dynamic_slice" or b.rng.random() < 0.3:
        starts = [b.rng.randint(-s - 1, s + 1) if modes else b.rng.randint(0, s - z)
                  for s, z in zip(shape, size, strict=True)]
        if b.rng.random() < 0.4:                        # one start traced, from an int input
            i = b.operand((), "int32", fresh=1.0, low=-d if modes else 0, high=d)
            src = ", ".join(["{1}"] + [str(s) for s in starts[1:]])
            return b.emit(f"lax.dynamic_slice({{0}}, ({src},), {size!r})", (x, i), (size, dtype))
        return b.emit(f"lax.dynamic_slice({{0}}, {tuple(starts)!r}, {size!r})", (x,), (size, dtype))
    upd = b.operand(size, dtype)
    starts = tuple(b.rng.randint(-s - 1, s + 1) if modes else b.rng.randint(0, s - z)
                   for s, z in zip(shape, size, strict=True))
    return b.emit(f"lax.dynamic_update_slice({{0}}, {{1}}, {starts!r})", (x, upd), (shape, dtype))


def op_collective(b: Body) -> int | None:
    if not b.axes:
        return None
    names = [n for n, _ in b.axes]
    r = b.rng.random()
    if r < 0.3 and len(names) > 1:
        chosen = tuple(b.rng.sample(names, b.rng.randint(2, len(names))))
        name_src, size = repr(chosen), math.prod(dict(b.axes)[n] for n in chosen)
    else:
        name = b.rng.choice(names)
        name_src, size = repr(name), dict(b.axes)[name]
    kind = b.rng.choice(("psum", "psum", "pmean", "pmax", "pmin", "all_gather", "ppermute",
                         "psum_scatter", "all_to_all", "axis_index"))
    if kind == "axis_index":
        i = b.emit(f"lax.axis_index({name_src})", (), ((), "int32"), collective=True, smooth=False)
        x = b.value(lambda t: t[1] in FLOATS)
        if x is None:
            return i
        return b.emit("{0} * (1 + {1})", (x, i), (b.types()[x][0], b.types()[x][1]))
    x = b.value(lambda t: t[1] != "bool")
    if x is None:
        return None
    shape, dtype = b.types()[x]
    if kind in ("psum", "pmean", "pmax", "pmin"):
        out = dtype if kind != "pmean" or is_float(dtype) else "float32"
        return b.emit(f"lax.{kind}({{0}}, {name_src})", (x,), (shape, out), collective=True)
    if kind == "all_gather":
        a = b.rng.randint(0, len(shape))
        tiled = b.rng.random() < 0.4 and len(shape) > 0
        if tiled:
            a = min(a, len(shape) - 1)
            out = shape[:a] + (shape[a] * size,) + shape[a + 1:]
        else:
            out = shape[:a] + (size,) + shape[a:]
        return b.emit(f"lax.all_gather({{0}}, {name_src}, axis={a}, tiled={tiled})", (x,),
                      (out, dtype), collective=True)
    if kind == "ppermute" and b.rng.random() < 0.25 and not name_src.startswith("("):
        perm = list(range(size))
        b.rng.shuffle(perm)
        return b.emit(f"lax.pshuffle({{0}}, {name_src}, {perm!r})", (x,), (shape, dtype),
                      collective=True)
    if kind == "ppermute":
        if name_src.startswith("("):
            return None
        perm = list(range(size))
        b.rng.shuffle(perm)
        pairs = [(i, p) for i, p in enumerate(perm) if b.rng.random() < 0.85]
        return b.emit(f"lax.ppermute({{0}}, {name_src}, {pairs!r})", (x,), (shape, dtype),
                      collective=True)
    # psum_scatter / all_to_all need a dimension that the axis size divides
    tiled = b.rng.random() < 0.5
    dim = size * (b.rng.choice((1, 2)) if tiled else 1)
    rank = b.rng.randint(1, 3)
    new_shape = list(b.shape(rank - 1)) if rank > 1 else []
    pos = b.rng.randint(0, len(new_shape))
    new_shape.insert(pos, dim)
    y = b.operand(tuple(new_shape), dtype if dtype != "bool" else "float32", fresh=0.7)
    shape, dtype = b.types()[y]
    if kind == "psum_scatter":
        out = shape[:pos] + ((dim // size,) if tiled else ()) + shape[pos + 1:]
        return b.emit(f"lax.psum_scatter({{0}}, {name_src}, scatter_dimension={pos}, "
                      f"tiled={tiled})",
                      (y,), (out, dtype), collective=True)
    concat = b.rng.randrange(len(shape))
    if tiled:
        s = list(shape)
        s[pos] //= size
        s[concat] *= size
        out = tuple(s)
    else:
        s = list(shape)
        del s[pos]
        s.insert(concat, size)
        out = tuple(s)
    return b.emit(f"lax.all_to_all({{0}}, {name_src}, {pos}, {concat}, tiled={tiled})", (y,),
                  (out, dtype), collective=True)


OP_GENERATORS = [(op_unary, 4), (op_binary, 5), (op_reduce, 3), (op_matmul, 2), (op_shape, 3),
                 (op_index, 3), (op_collective, 0)]


def generate_body(b: Body, n_ops: int) -> tuple[int, ...]:
    first = "float32" if b.differentiated or b.rng.random() < 0.7 else b.dtype()
    b.add_input(b.shape(), first)
    gens = [g for g, _ in OP_GENERATORS]
    weights = [w if g is not op_collective else (4 if b.axes else 0) for g, w in OP_GENERATORS]
    tries = 0
    while len(b.ops) < n_ops and tries < 10 * n_ops:
        tries += 1
        if b.differentiated and len(b.ops) == 0:
            b.emit(b.rng.choice(UNARY_FLOAT), (0,), b.types()[0])
            continue
        gen = b.rng.choices(gens, weights)[0]
        total = math.prod(b.types()[-1][0]) if b.types() else 0
        if total > 256:                       # keep arrays small: finite differences stay cheap
            b.emit("jnp.sum({0}, axis=0)", (len(b.types()) - 1,),
                   (b.types()[-1][0][1:], b.types()[-1][1]))
            continue
        gen(b)
    types = b.types()
    last = len(types) - 1
    outs = [last]
    if b.rng.random() < 0.3 and len(types) > 2:
        k = b.rng.randrange(len(types))
        if k not in outs:
            outs.append(k)
    if b.differentiated and not any(is_float(types[k][1]) for k in outs):
        outs.append(b.emit("jnp.sin({0}.astype(jnp.float32))", (last,),
                           (types[last][0], "float32")))
    return tuple(outs)


# --- the wrapper stack -----------------------------------------------------------------------

def choose_stack(rng: random.Random, features: frozenset[str], devices: int) -> list[dict]:
    """The wrappers, outermost first, with axis names and sizes; the rest is filled later."""
    kinds = {"jit": 3, "vmap": 4, "pmap": 3, "grad": 2, "value_and_grad": 1, "jacrev": 1,
             "cond": 1, "while": 1, "fori": 1, "scan": 1}
    if "jvp" in features:
        kinds.update(jvp=1, jacfwd=1)
    if "jacrev" not in features:
        del kinds["jacrev"]
    depth = rng.choices(range(5), [1, 4, 4, 3, 1])[0]
    stack: list[dict] = []
    left, n_diff, n_names = devices, 0, 0
    for _ in range(depth):
        kind = rng.choices(list(kinds), list(kinds.values()))[0]
        if kind == "pmap":
            sizes = [s for s in (1, 2, 3, 4, 8) if s <= left and left % s == 0]
            if len(sizes) <= 1:
                kind = "vmap"
            else:
                size = rng.choice(sizes[1:])
                left //= size
                stack.append({"kind": "pmap", "size": size, "axis_name": "ijkl"[n_names]})
                n_names += 1
                continue
        if kind == "vmap":
            name = "abcd"[n_names] if rng.random() < 0.6 else None
            n_names += name is not None
            stack.append({"kind": "vmap", "size": rng.choice((1, 2, 3, 4)), "axis_name": name})
            continue
        if kind in DIFF:
            if n_diff >= 2 or (kind in ("jacrev", "jacfwd") and any(
                    w["kind"] in ("jacrev", "jacfwd") for w in stack)):
                kind = "jit"
            n_diff += kind in DIFF
        stack.append({"kind": kind})
    return stack


def fill_wrapper(rng: random.Random, spec: dict, args: list[Type], outs: list[Type]) -> Wrapper:
    kind = spec["kind"]
    if kind in ("vmap", "pmap"):
        in_axes = []
        for shape, _ in args:
            if rng.random() < 0.3:
                in_axes.append(None)
            elif kind == "pmap":
                in_axes.append(rng.choice((0, 0, 0, len(shape), -1 if rng.random() < 0.05 else 0)))
            else:
                in_axes.append(rng.randint(-len(shape) - 1, len(shape)))
        if all(a is None for a in in_axes):
            in_axes[0] = 0
        out_axes = [0 if kind == "pmap" else rng.randint(-len(s) - 1, len(s)) for s, _ in outs]
        return Wrapper(kind, (("size", spec["size"]), ("axis_name", spec["axis_name"]),
                              ("in_axes", tuple(in_axes)), ("out_axes", tuple(out_axes))))
    if kind in DIFF:
        floats = [k for k, (_, d) in enumerate(args) if is_float(d)]
        if not floats or not float_outs(outs):
            return Wrapper("jit")
        nums = tuple(sorted(rng.sample(floats, rng.randint(1, min(2, len(floats))))))
        argnums = nums[0] if len(nums) == 1 and rng.random() < 0.5 else nums
        return Wrapper(kind, (("argnums", argnums),))
    if kind in ("while", "fori", "scan"):
        return Wrapper(kind, (("length", rng.randint(1, 3)),))
    return Wrapper(kind)


def generate(seed: int, features: frozenset[str] = frozenset(), devices: int = 8) -> Program:
    rng = random.Random(seed)
    stack = choose_stack(rng, features, devices)
    axes = [(w["axis_name"], w["size"]) for w in stack
            if w["kind"] in ("vmap", "pmap") and w.get("axis_name")]
    differentiated = any(w["kind"] in DIFF for w in stack)
    # Data-dependent branches on devices that then communicate cannot be run (or checked).
    collectives_ok = not any(w["kind"] == "cond" for w in stack)
    b = Body(rng, axes if collectives_ok else [], differentiated, features)
    outputs = generate_body(b, rng.randint(1, 8))
    p = b.finish(outputs).replace(seed=seed)
    args, outs = [(i.shape, i.dtype) for i in p.inputs], p.body_out_types()
    wrappers = []
    for spec in reversed(stack):
        w = fill_wrapper(rng, spec, args, outs)
        wrappers.append(w)
        args, outs = wrap_types(w, args, outs)
    return p.replace(wrappers=tuple(wrappers))
