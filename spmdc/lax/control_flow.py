"""lax.cond, lax.switch, lax.while_loop, lax.fori_loop, lax.scan, lax.map (spmdc.lax), and
lax.platform_dependent and lax.optimization_barrier.

Each traces the user's functions into closed Funcs (trace_pytree: values they close over
become extra inputs, passed as consts) and binds one control-flow primitive
(compiler/primitives/control_flow.py). Called outside any transformation, the whole call
is staged through jit, traced once per function, as JAX does (eager_control_flow.py).

Carries follow JAX: a weakly typed initial value (a Python scalar) whose body output has
another dtype or is strongly typed is promoted and the body traced again; any other
difference between a carry's input and output types is an error naming the leaf, both
types and the user's line. Branches of cond/switch must return the same pytree of types.
fori_loop with Python int bounds is a scan (so it is differentiable, as in JAX); with
traced bounds a while loop. platform_dependent takes the ``cpu`` branch when tracing (spmdc
compiles for the CPU only); optimization_barrier binds its primitive around a pytree.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Func, TensorType, Var
from ..compiler.primitives.control_flow import cond_p, while_p
from ..compiler.primitives.remat import optimization_barrier_p
from ..compiler.primitives.scan import scan_p
from ..core import dtypes
from ..core.abstract import typeof
from ..core.explicit_sharding import Sliced
from ..core.operands import asarray, weakly_typed
from ..core.pytree_tracing import trace_pytree
from ..core.ref_scopes import Recorder, run_bound
from ..core.refs import Ref, freeze, new_ref, ref_values, write_values
from ..core.tracing import Tracer, bind, current_trace, type_of, user_source
from ..core.tree import keystr, tree_flatten, tree_flatten_with_path, tree_structure, tree_unflatten
from ..errors import at_line as _where
from ..runtime.array import Array
from ..tracebacks import api_boundary
from .eager_control_flow import staged_per_function
from .elementwise import clamp
from .shape import _concatenate

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map_", "platform_dependent",
           "optimization_barrier"]


def _type_text(t: TensorType) -> str:
    return f"{t.dtype.name}[{','.join(map(str, t.shape))}]"


def _arr(x: Any) -> Any:
    return asarray(x)


def _leaves_and_types(tree: Any) -> tuple[list[Any], Any, list[TensorType], list[bool],
                                          list[str]]:
    path_leaves, treedef = tree_flatten_with_path(tree)
    # Leaves stay as given: Python scalars then bind as literals, not as captured arrays.
    leaves = [leaf for _, leaf in path_leaves]
    sigs = [type_of(leaf) for leaf in leaves]
    return (leaves, treedef, [t for t, _ in sigs], [w for _, w in sigs],
            [keystr(p) for p, _ in path_leaves])


def _consts_first(func: Func, n_explicit: int) -> Func:
    """``func`` with its captured-value inputs (last) moved in front of the explicit ones."""
    return Func(func.name, func.inputs[n_explicit:] + func.inputs[:n_explicit], func.eqns,
                func.outputs)


def _bind(prim: Any, operands: Sequence[Any], out_weak: Sequence[bool], **params: Any
          ) -> list[Any]:
    outs = bind(prim, *operands, **params)
    for o, w in zip(outs, out_weak, strict=True):
        o.weak = w
    return outs


# --- cond, switch ----------------------------------------------------------------------------

_NO_OPERAND = object()      # ``operand=`` not given


def _keyword_operand(what: str, operands: tuple[Any, ...], operand: Any) -> tuple[Any, ...]:
    """The operands of ``cond``/``switch`` given as JAX's keyword ``operand=x`` (one
    operand, as jaxopt passes it), which excludes positional ones."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(f"{what}: if 'operand' keyword is passed then no positional "
                        f"operands can be passed, got operand={operand!r} and positional "
                        f"operands {operands}")
    return (operand,)


@api_boundary  # See Note [library frames] (errors.py)
def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)``, with ``pred`` traced.
    The older form ``cond(pred, true_operand, true_fun, false_operand, false_fun)`` works
    too, as in JAX, and so does one operand given as ``operand=x``."""
    if (len(operands) == 2 and not callable(true_fun) and callable(false_fun)
            and callable(operands[1])):
        true_operand, true_body, false_operand, false_body = (true_fun, false_fun,
                                                              *operands)
        return cond(pred, lambda ops: true_body(ops[0]), lambda ops: false_body(ops[1]),
                    (true_operand, false_operand))
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun must be callable")
    operands = _keyword_operand("lax.cond", operands, operand)
    if current_trace() is None:
        return staged_per_function(_cond_program, (true_fun, false_fun), (), pred, operands)
    source = user_source()
    pred = _arr(pred)
    if pred.shape != ():
        raise TypeError(f"lax.cond: pred must be a scalar, got a value of shape {pred.shape}"
                        f"{_where(source)}")
    if pred.dtype != np.bool_ and pred.dtype.kind not in "iuf":
        raise TypeError(f"lax.cond: pred must be a boolean or a number, got "
                        f"{pred.dtype.name}{_where(source)}")
    if pred.dtype != np.bool_:
        pred = pred != 0
    index = pred.astype(np.int32)
    return _branches(index, [false_fun, true_fun], ["false_fun", "true_fun"], operands,
                     "lax.cond", source, reference=1)


@api_boundary
def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """``branches[index](*operands)``, with ``index`` clamped to ``[0, len(branches) - 1]``
    (one operand may be given as ``operand=x``)."""
    branches = list(branches)
    if not branches or not all(callable(f) for f in branches):
        raise TypeError("lax.switch: branches must be a non-empty sequence of callables")
    operands = _keyword_operand("lax.switch", operands, operand)
    if current_trace() is None:
        return staged_per_function(_switch_program, branches, (), index, operands)
    source = user_source()
    index = _arr(index)
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"lax.switch: index must be a scalar integer, got "
                        f"{_type_text(index.type)}{_where(source)}")
    if len(branches) == 1:
        return branches[0](*operands)
    index = clamp(0, index.astype(np.int32), len(branches) - 1)
    return _branches(index, branches, [f"branches[{k}]" for k in range(len(branches))],
                     operands, "lax.switch", source)


def _cond_program(true_fun: Callable[..., Any], false_fun: Callable[..., Any], pred: Any,
                  operands: tuple[Any, ...]) -> Any:
    return cond(pred, true_fun, false_fun, *operands)


def _switch_program(*funs_and_args: Any) -> Any:
    *branches, index, operands = funs_and_args
    return switch(index, branches, *operands)


def _branches(index: Any, funs: Sequence[Callable[..., Any]], names: Sequence[str],
              operands: tuple[Any, ...], what: str, source: str | None,
              reference: int = 0) -> Any:
    leaves, _, in_types, in_weak, _ = _leaves_and_types(operands)
    recorder = Recorder()           # See Note [refs as threaded state] in core/refs.py
    # A function given for several branches is traced once, as in JAX (which caches the
    # traced branch by function): its side effects (a library counting traces, creating
    # parameters) happen once per cond, and the branches share its program.
    traced = []
    for k, f in enumerate(funs):
        same = next((t for g, t in zip(funs[:k], traced, strict=False) if g is f), None)
        traced.append(same if same is not None else
                      trace_pytree(recorder.wrap(f), operands, {}, _name(f, "branch"),
                                   in_types, in_weak, typed_by=leaves,
                                   constrain=False))
    refs = recorder.written()
    if refs:                        # the refs the branches write become branch outputs
        values = ref_values(refs)
        bound: dict[int, Callable[..., Any]] = {}     # one per function, as above
        for f in funs:
            if id(f) not in bound:
                bound[id(f)] = _bound_branch(f, refs, values)
        out, finals = _branches(index, [bound[id(f)] for f in funs], names, operands, what,
                                source, reference)
        write_values(refs, finals)
        return out
    first_func, _, _, first_tree, _ = traced[reference]
    first = names[reference]
    for name, (func, _, _, out_tree, _) in zip(names, traced, strict=True):
        if out_tree != first_tree:
            # JAX's opening words, which programs match ("cond branch outputs ...").
            raise TypeError(f"{what}: {what.split('.')[-1]} branch outputs must have the "
                            f"same pytree structure, but {first} returned {first_tree} "
                            f"and {name} returned {out_tree}{_where(source)}")
        paths = _paths(out_tree)
        for path, a, c in zip(paths, first_func.out_types, func.out_types, strict=True):
            if a != c:
                raise TypeError(
                    f"{what}: {first} and {name} must return identical types, but the "
                    f"output{path} of {first} has type {_type_text(a)} and that of "
                    f"{name} has type {_type_text(c)}{_differs(a, c)}{_where(source)}")
    # One operand list for all branches: the explicit operands, then each branch's
    # captured values; a branch ignores the captures of the others.
    captured = [c for _, _, caps, _, _ in traced for c in caps]
    funcs = []
    offset = 0
    for func, _, caps, _, _ in traced:
        n = len(leaves)
        before = tuple(Var(type_of(c)[0]) for c in captured[:offset])
        after = tuple(Var(type_of(c)[0]) for c in captured[offset + len(caps):])
        funcs.append(Func(func.name, func.inputs[:n] + before + func.inputs[n:] + after,
                          func.eqns, func.outputs))
        offset += len(caps)
    # weakly typed as branch 0's outputs (cond's false_fun), as JAX's cond_p gives the
    # avals of its first branch: Equinox's error_if is a cond whose branch 0 passes the
    # value through and whose other branch is a callback
    out_weak = list(traced[0][1])
    operands_in = [*leaves, *captured]
    forwarded = _forwarded_outputs(funcs)
    kept = [j for j, fwd in enumerate(forwarded) if fwd is None]
    funcs = [Func(f.name, f.inputs, f.eqns, tuple(f.outputs[j] for j in kept)) for f in funcs]
    outs = iter(_bind(cond_p, [index, *operands_in], [out_weak[j] for j in kept],
                      branches=tuple(funcs)))
    return tree_unflatten(first_tree, [next(outs) if fwd is None else _arr(operands_in[fwd])
                                       for fwd in forwarded])


def _forwarded_outputs(funcs: Sequence[Func]) -> list[int | None]:
    """For each output of the branches, the operand every branch returns unchanged there
    (its index), else None.

    Note [cond forwards its pass-through outputs]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    An output that every branch returns as the same operand, unchanged, is that operand:
    as JAX's ``cond``, spmdc binds the primitive without it and gives the operand itself
    back. So the output depends on that operand only, not on the predicate: under ``vmap``
    an unmapped operand passed through a cond with a mapped predicate stays unmapped (Flax
    nnx's ``cond`` over a module returns every variable, the untouched ones too, and its
    ``vmap`` gives those ``out_axes=None``)."""
    forwarded = []
    for outs in zip(*(f.outputs for f in funcs), strict=True):
        places = {next((i for i, v in enumerate(f.inputs) if v is o), None)
                  for f, o in zip(funcs, outs, strict=True)}
        forwarded.append(places.pop() if len(places) == 1 else None)
    return forwarded


def _bound_branch(f: Callable[..., Any], refs: list[Any], values: list[Any]
                  ) -> Callable[..., Any]:
    return lambda *ops: run_bound(f, refs, values, *ops)


def _paths(treedef: Any) -> list[str]:
    skeleton = tree_unflatten(treedef, [0] * treedef.num_leaves)
    return [keystr(p) for p, _ in tree_flatten_with_path(skeleton)[0]]


def _differs(a: TensorType, b: TensorType) -> str:
    if a.shape != b.shape and a.dtype != b.dtype:
        return ", so the shapes and the dtypes do not match"
    return ", so the shapes do not match" if a.shape != b.shape else \
        ", so the dtypes do not match"


def _name(f: Any, default: str) -> str:
    name = getattr(f, "__name__", default)
    return name if name.isidentifier() else default


# --- carries (while_loop, scan) ----------------------------------------------------------------

def _trace_carry_body(fun: Callable[..., Any], args: tuple[Any, ...], in_types: list[TensorType],
                      in_weak: list[bool], n_carry: int, carry_of: Callable[[Any], Any],
                      what: str, carry_paths: Sequence[str], source: str | None,
                      before: Callable[[list[TensorType], list[bool]], None] | None = None,
                      typed_by: Sequence[Any] | None = None
                      ) -> tuple[Any, list[TensorType], list[bool]]:
    """Trace ``fun`` and check that its carry output matches the carry input; promote weakly
    typed initial values (once) as JAX does: a promoted value is strongly typed, and each
    pass first calls ``before`` with the pass's types (while_loop traces its cond there, as
    JAX traces cond before body). ``typed_by``: the values whose shardings the inputs'
    types take (Note [shardings in types] in core/explicit_sharding.py). Returns the
    trace_pytree result and the final carry types and weak flags."""
    for attempt in range(2):
        if before is not None:
            before(in_types, in_weak)
        out = trace_pytree(fun, args, {}, _name(fun, "body"), in_types, in_weak,
                           typed_by=typed_by, constrain=False)
        func, out_weak = out[0], out[1]
        carry_tree, in_tree = carry_of(out), tree_structure(args[0])
        if carry_tree != in_tree:
            raise TypeError(f"{what} carry output must have the same pytree structure as "
                            f"the carry input, but the input is {in_tree} and the output "
                            f"is {carry_tree}{_where(source)}")
        promoted = False
        for k in range(n_carry):
            t_in, t_out = in_types[k], func.out_types[k]
            # Only a dtype change retraces (JAX compares types without the weak flag): a
            # weak carry whose output is strong but of the same dtype is traced once, so
            # the body's side effects run once per trace, as in JAX.
            if in_weak[k] and t_in.shape == t_out.shape and t_in.dtype != t_out.dtype:
                dtype, _ = dtypes.result_type((t_in.dtype, True), (t_out.dtype, out_weak[k]))
                in_types[k], in_weak[k] = TensorType(t_in.shape, dtype), False
                promoted = True
        if not promoted or attempt == 1:
            break
    bad = [(p, a, b) for p, a, b in zip(carry_paths, in_types[:n_carry],
                                        func.out_types[:n_carry], strict=True) if a != b]
    if bad:
        lines = "".join(f"\n  * the input carry component {p} has type {_type_text(a)} but "
                        f"the corresponding output carry component has type "
                        f"{_type_text(b)}{_differs(a, b)}" for p, a, b in bad)
        raise TypeError(f"{what} carry input and carry output must have equal types, but "
                        f"they differ{_where(source)}:{lines}")
    return out, in_types[:n_carry], [w and ow for w, ow in
                                     zip(in_weak[:n_carry], out_weak[:n_carry], strict=True)]


def _carry_structure(traced: Any) -> Any:
    """The pytree structure of the carry in a scan body's (carry, y) output."""
    out_tree = traced[3]
    return tree_structure(tree_unflatten(out_tree, [0] * out_tree.num_leaves)[0])


def _cast(leaves: list[Any], types: Sequence[TensorType]) -> list[Any]:
    """The initial carry, converted where a weakly typed value was promoted."""
    return [x if type_of(x)[0].dtype == t.dtype else _arr(x).astype(t.dtype)
            for x, t in zip(leaves, types, strict=True)]


@api_boundary
def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = init_val; while cond_fun(val): val = body_fun(val); return val``."""
    if current_trace() is None:
        return staged_per_function(_while_program, (body_fun, cond_fun), (), init_val)
    return _while(cond_fun, body_fun, init_val, "lax.while_loop body_fun", user_source())


def _while_program(body_fun: Callable[..., Any], cond_fun: Callable[..., Any],
                   init_val: Any) -> Any:
    return while_loop(cond_fun, body_fun, init_val)


def _while(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any,
           what: str, source: str | None,
           path_name: Callable[[str], str] = lambda p: "init_val" + p) -> Any:
    leaves, treedef, in_types, in_weak, paths = _leaves_and_types(init_val)
    init_val = tree_unflatten(treedef, leaves)
    paths = list(map(path_name, paths))
    n = len(leaves)
    recorder = Recorder()           # See Note [refs as threaded state] in core/refs.py
    traced_cond = []

    def trace_cond(types: list[TensorType], weak: list[bool]) -> None:
        traced_cond[:] = [trace_pytree(recorder.wrap(cond_fun), (init_val,), {},
                                       _name(cond_fun, "cond"), list(types), list(weak),
                                       typed_by=leaves, constrain=False)]
    body, types, weak = _trace_carry_body(
        recorder.wrap(body_fun), (init_val,), list(in_types), list(in_weak), n,
        lambda out: out[3], what, paths, source, before=trace_cond, typed_by=leaves)
    body_func, _, body_consts, _, _ = body
    cond_func, _, cond_consts, cond_tree, _ = traced_cond[0]
    refs = recorder.written()
    if refs:                        # the refs the loop writes join its carry
        def cond2(state: Any) -> Any:
            return run_bound(cond_fun, refs, state[0], state[1])[0]

        def body2(state: Any) -> Any:
            val, finals = run_bound(body_fun, refs, state[0], state[1])
            return finals, val
        finals, val = _while(cond2, body2, (ref_values(refs), init_val), what, source,
                             _ref_carry_path(path_name))
        write_values(refs, finals)
        return val
    if cond_tree.num_leaves != 1 or cond_func.out_types[0].shape != () or \
            cond_func.out_types[0].dtype != np.bool_:
        got = ", ".join(_type_text(t) for t in cond_func.out_types) or "no value"
        raise TypeError(f"lax.while_loop: cond_fun must return a boolean scalar, but it "
                        f"returned {got}{_where(source)}")
    outs = _bind(while_p, [*cond_consts, *body_consts, *_cast(leaves, types)], weak,
                 cond_func=_consts_first(cond_func, n), body_func=_consts_first(body_func, n),
                 cond_nconsts=len(cond_consts), body_nconsts=len(body_consts))
    return tree_unflatten(treedef, outs)


@api_boundary
def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any],
              init_val: Any, *, unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``. As in JAX, the bounds
    may be of any one real dtype. Concrete bounds give a scan (differentiable) over
    ``range(int(lower), int(upper))`` whose index is a weakly typed int; traced bounds a
    while loop (not reverse-differentiable) whose index has the bounds' dtype.
    ``unroll`` (a bool or an int) is for concrete bounds only, as in JAX; as with scan's,
    the loop is compiled as one loop either way, so it changes no value."""
    if current_trace() is None:     # bounds are concrete here: they choose the program
        return staged_per_function(_fori_program, (body_fun,), (lower, upper, unroll),
                                   init_val)
    source = user_source()
    dtype = _index_dtype(lower, upper, source)      # (checked in both cases, as JAX does)
    if not _static(lower, upper) and unroll not in (None, False, 1):
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         f"statically known.{_where(source)}")
    if _static(lower, upper):
        lower, upper = int(lower), int(upper)
        index = lower               # a Python int: the weakly typed default int

        def step(carry: Any, _: Any) -> Any:
            i, val = carry
            return (i + 1, body_fun(i, val)), None
        (_, val), _ = _scan(step, (index, init_val), None, max(upper - lower, 0), False,
                            "lax.fori_loop body_fun", source, _fori_path(1))
        return val
    lo, hi = _arr(lower).astype(dtype), _arr(upper).astype(dtype)

    def body(state: Any) -> Any:
        i, stop, val = state
        return i + 1, stop, body_fun(i, val)
    _, _, val = _while(lambda s: s[0] < s[1], body, (lo, hi, init_val),
                       "lax.fori_loop body_fun", source, _fori_path(2))
    return val


def _fori_program(body_fun: Callable[..., Any], lower: Any, upper: Any, unroll: Any,
                  init_val: Any) -> Any:
    return fori_loop(lower, upper, body_fun, init_val, unroll=unroll)


def _index_dtype(lower: Any, upper: Any, source: Any) -> np.dtype:
    """The loop index's dtype, as JAX picks it: the bounds' one dtype, or, for two signed
    integer dtypes where one bound is weakly typed (a Python int), the other's."""
    (lo, lo_weak), (hi, hi_weak) = (type_of(_arr(v)) for v in (lower, upper))
    for name, t in (("lower", lo), ("upper", hi)):
        if t.shape != () or t.dtype.kind not in "iuf" and t.dtype != dtypes.bfloat16:
            raise TypeError(f"lax.fori_loop: {name} must be a real scalar, got "
                            f"{_type_text(t)}{_where(source)}")
    if lo.dtype == hi.dtype:
        return lo.dtype
    if lo.dtype.kind == hi.dtype.kind == "i" and lo_weak != hi_weak:
        return hi.dtype if lo_weak else lo.dtype
    raise TypeError(f"lax.fori_loop: lower and upper must have equal types, got "
                    f"{lo.dtype.name} and {hi.dtype.name}; convert one of them"
                    f"{_where(source)}")


def _fori_path(position: int) -> Callable[[str], str]:
    """Names for the leaves of fori_loop's internal carry: init_val sits at ``position``."""
    prefix = f"[{position}]"
    return lambda p: "init_val" + p[len(prefix):] if p.startswith(prefix) else "the loop index"


def _static(lower: Any, upper: Any) -> bool:
    """Both bounds are concrete (not traced; as in JAX, not only Python ints)."""
    return not any(isinstance(v, Tracer) for v in (lower, upper))


# --- scan ------------------------------------------------------------------------------------

@api_boundary
def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False, unroll: int = 1,
         _split_transpose: bool = False) -> Any:
    """``carry = init; for x in xs: carry, y = f(carry, x)``; returns ``(carry, stacked ys)``.
    ``_split_transpose`` is JAX's: False (the transpose is one loop, as spmdc's is);
    True, JAX's transpose split in two loops, is a ValueError."""
    if _split_transpose:
        raise ValueError("scan: spmdc transposes a scan as one loop; _split_transpose=True "
                         "(JAX's two-loop transpose) is not available: leave it False")
    if current_trace() is None:
        return staged_per_function(_scan_program, (f,), (length, reverse, unroll), init, xs)
    source = user_source()
    shapes = [type_of(x)[0].shape for x in tree_flatten(xs)[0]]
    lengths = {shape[0] for shape in shapes if shape}
    if any(shape == () for shape in shapes):
        raise ValueError(f"lax.scan: every leaf of xs must have a leading axis to scan over, "
                         f"got a scalar{_where(source)}")
    if length is not None:
        length = int(length)
        if lengths and lengths != {length}:
            raise ValueError(f"lax.scan: length={length} but xs have leading axis sizes "
                             f"{sorted(lengths)}{_where(source)}")
    elif len(lengths) > 1:
        raise ValueError(f"lax.scan: all leaves of xs must have the same leading axis size, "
                         f"got sizes {sorted(lengths)}{_where(source)}")
    elif not lengths:
        raise ValueError(f"lax.scan: got no xs to scan over and no length=; give length= "
                         f"for a scan without xs{_where(source)}")
    else:
        length = lengths.pop()
    x_leaves, x_tree = tree_flatten(xs)
    if any(isinstance(leaf, Ref) for leaf in x_leaves):
        return _scan_over_refs(f, init, x_leaves, x_tree, length, bool(reverse), source)
    return _scan(f, init, xs, length, bool(reverse), "lax.scan body function", source)


def _scan_program(f: Callable[..., Any], length: Any, reverse: Any, unroll: Any, init: Any,
                  xs: Any) -> Any:
    return scan(f, init, xs, length, reverse, unroll)


def _scan_over_refs(f: Callable[[Any, Any], Any], init: Any, x_leaves: list[Any],
                    x_tree: Any, length: int, reverse: bool, source: str | None) -> Any:
    """A scan over ``xs`` holding refs: the body gets, for each, a ref of the slice of this
    step, whose final value is written back into the whole one, threaded as a carry (as
    JAX's scan over refs does; Note [refs as threaded state] in core/refs.py)."""
    at_refs = [k for k, leaf in enumerate(x_leaves) if isinstance(leaf, Ref)]
    refs = [x_leaves[k] for k in at_refs]
    plain = [leaf for k, leaf in enumerate(x_leaves) if k not in at_refs]

    def step(carry: Any, xs: list[Any]) -> Any:
        i, wholes, c = carry
        at = length - 1 - i if reverse else i
        views = [new_ref(w[at]) for w in wholes]
        given, leaves = iter(xs), iter(views)
        x = tree_unflatten(x_tree, [next(leaves) if k in at_refs else next(given)
                                    for k in range(len(x_leaves))])
        c, y = f(c, x)
        return (i + 1, [w.at[at].set(freeze(v)) for w, v in zip(wholes, views, strict=True)],
                c), y
    (_, finals, c), ys = _scan(step, (0, ref_values(refs), init), plain, length, reverse,
                               "lax.scan body function", source,
                               lambda p: "init" + p[3:] if p.startswith("[2]") else
                               "a scanned ref's value")
    write_values(refs, finals)
    return c, ys


def map_(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    """``lax.map``: ``f`` applied to each slice of ``xs`` along the leading axis, the
    results stacked, as one scan (a loop in the compiled program, unlike vmap, so memory
    stays that of one application). ``batch_size=b`` vmaps ``f`` over chunks of ``b``
    slices and scans over the chunks; a remainder is one more vmapped call."""
    if current_trace() is None:
        return staged_per_function(_map_program, (f,), (batch_size,), xs)
    source = user_source()
    shapes = [type_of(x)[0].shape for x in tree_flatten(xs)[0]]
    if not shapes or any(shape == () for shape in shapes):
        raise ValueError(f"lax.map: xs must have at least one leaf, each with a leading axis "
                         f"to map over{_where(source)}")
    lengths = sorted({shape[0] for shape in shapes})
    if len(lengths) > 1:
        raise ValueError(f"lax.map: all leaves of xs must have the same leading axis size, "
                         f"got sizes {lengths}{_where(source)}")
    if batch_size is None:
        return _scan(lambda c, x: (c, f(x)), (), xs, lengths[0], False,
                     "lax.map function", source)[1]
    if int(batch_size) < 1:
        raise ValueError(f"lax.map: batch_size must be a positive integer, got "
                         f"{batch_size!r}{_where(source)}")
    from ..transforms.vmap import vmap
    n, b = lengths[0], int(batch_size)
    chunks, rest = divmod(n, b)
    leaves, treedef = tree_flatten(xs)
    ys = None
    if chunks:
        main = tree_unflatten(treedef, [x[:chunks * b].reshape(chunks, b, *x.shape[1:])
                                        for x in leaves])
        ys = _scan(lambda c, x: (c, vmap(f)(x)), (), main, chunks, False,
                   "lax.map function", source)[1]
        ys = _tree_map(lambda y: y.reshape(chunks * b, *y.shape[2:]), ys)
    if rest:
        tail = vmap(f)(tree_unflatten(treedef, [x[chunks * b:] for x in leaves]))
        ys = tail if ys is None else _tree_map(lambda y, t: _concatenate([y, t], 0), ys, tail)
    return ys


def _map_program(f: Callable[..., Any], batch_size: Any, xs: Any) -> Any:
    return map_(f, xs, batch_size=batch_size)


def _tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    leaves, treedef = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others, strict=True)])


def _scan(f: Callable[[Any, Any], Any], init: Any, xs: Any, length: int, reverse: bool,
          what: str, source: str | None,
          path_name: Callable[[str], str] = lambda p: "init" + p) -> Any:
    c_leaves, c_tree, c_types, c_weak, paths = _leaves_and_types(init)
    x_leaves, x_tree, x_types, x_weak, _ = _leaves_and_types(xs)
    init = tree_unflatten(c_tree, c_leaves)
    xs = tree_unflatten(x_tree, x_leaves)
    n = len(c_leaves)
    for x in x_leaves:          # See Note [shardings in types] in core/explicit_sharding.py
        spec = typeof(x).sharding.spec if isinstance(x, (Tracer, Array)) else ()
        if len(spec) and spec[0] is not None:
            raise ValueError(f"0th dimension of all xs should be replicated. Got "
                             f"{spec!r}{_where(source)}")
    slices = [TensorType(t.shape[1:], t.dtype) for t in x_types]
    y_tree_box: list[Any] = []

    def body(carry: Any, x: Any) -> Any:
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"{what} must return a pair (carry, y), but it returned "
                            f"{type(out).__name__}{_where(source)}")
        y_tree_box.append(tree_structure(out[1]))
        return out[0], out[1]

    recorder = Recorder()           # See Note [refs as threaded state] in core/refs.py
    traced, types, weak = _trace_carry_body(
        recorder.wrap(body), (init, xs), [*c_types, *slices], [*c_weak, *x_weak], n,
        _carry_structure, what, list(map(path_name, paths)), source,
        typed_by=[*c_leaves, *map(Sliced, x_leaves)])
    refs = recorder.written()
    if refs:                        # the refs the body writes join its carry
        def step(carry: Any, x: Any) -> Any:
            (c, y), finals = run_bound(f, refs, carry[0], carry[1], x)
            return (finals, c), y
        (finals, c), ys = _scan(step, (ref_values(refs), init), xs, length, reverse, what,
                                source, _ref_carry_path(path_name))
        write_values(refs, finals)
        return c, ys
    func, out_weak, consts, _, _ = traced
    n_explicit = n + len(x_leaves)
    outs = _bind(scan_p, [*consts, *_cast(c_leaves, types), *x_leaves],
                 [*weak, *out_weak[n:]], body=_consts_first(func, n_explicit),
                 length=length, reverse=reverse, num_consts=len(consts), num_carry=n)
    return tree_unflatten(c_tree, outs[:n]), tree_unflatten(y_tree_box[-1], outs[n:])


def _ref_carry_path(path_name: Callable[[str], str]) -> Callable[[str], str]:
    """Names for a carry ``(ref values, carry)``: the carry's own, or a ref's value."""
    return lambda p: path_name(p[3:]) if p.startswith("[1]") else "a written ref's value"


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """``per_platform['cpu'](*args)``, or ``default(*args)`` without a ``cpu`` branch:
    spmdc compiles for the CPU only, so the choice is made when tracing (JAX makes it when
    lowering, for the platform lowered for). Only the chosen branch is traced."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise ValueError("lax.platform_dependent: no branch for the 'cpu' platform (got "
                         f"{', '.join(sorted(per_platform)) or 'none'}); pass cpu= or "
                         "default=")
    return branch(*args)


def optimization_barrier(operand: Any) -> Any:
    """``operand`` (a pytree) unchanged, but XLA may not move computations across it."""
    leaves, tree = tree_flatten(operand)
    if not leaves:
        return operand
    arrays = [asarray(v) for v in leaves]
    if current_trace() is None:
        return tree_unflatten(tree, arrays)      # eager: nothing to reorder
    outs = bind(optimization_barrier_p, *arrays, prevent_cse=True)
    # each output weakly typed as its operand, as JAX's (Equinox's error_if passes values
    # through a barrier)
    return tree_unflatten(tree, [weakly_typed(o) if a.weak else o
                                 for a, o in zip(arrays, outs, strict=True)])
