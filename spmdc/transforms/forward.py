"""jvp, linearize, linear_transpose: forward mode through the forward pass.

``jvp`` traces the function into a Func, runs ``jvp_func`` (passes/forward.py, the
``jvp`` stage of ``spmdc dump``) and applies the result: inlined under another
transformation, compiled at top level. ``linearize`` splits the JVP program by partial
evaluation (Note [linearize] in passes/forward.py): the primal half runs once, and the
linear function it returns runs only the tangent half, on the saved residuals, compiled
once and reusable. ``linear_transpose`` is the VJP of a linear function, after checking
that the function is linear. (``jacfwd``, built on ``jvp``, is in jacobians.py.)

Note [integer tangents]
~~~~~~~~~~~~~~~~~~~~~~~
As in JAX, integer and bool values have no tangent space: ``jvp`` wants tangents of dtype
``float0`` for integer or bool primals (and says so otherwise), and returns ``float0``
zeros (host NumPy arrays, as JAX's) as the tangents of integer or bool outputs. The IR has
no ``float0``: those tangents never enter the program. ``jacfwd`` rejects integer inputs
and gives integer outputs a Jacobian of integer zeros, as JAX does.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Func, TensorType
from ..compiler.passes import run_pass
from ..compiler.passes.autodiff import is_float, transposing, vjp_func
from ..compiler.passes.cleanup import cleanup
from ..compiler.passes.forward import jvp_func, partial_eval
from ..core.tracer_text import TracerView
from ..core.tracing import apply_func, current_trace, type_of, where
from ..core.tree import tree_flatten, tree_leaves, tree_unflatten
from ..tracebacks import api_boundary
from ..tree_util import Partial
from .arguments import check_array_arguments, checking_results
from .jit import Jitted, _display_name, _fun_name, eager_jit, trace_pytree
from .mapping import refuse_in_shard_map_body
from .refs import refs_as_aux

__all__ = ["jvp", "linearize", "linear_transpose", "float0"]

float0 = np.dtype([("float0", np.void, 0)])
"""The dtype of the tangent of an integer or bool value (JAX's ``jax.dtypes.float0``)."""


def _is_float0(x: Any) -> bool:
    return getattr(x, "dtype", None) == float0


def _float0_zeros(t: TensorType) -> np.ndarray:
    return np.zeros(t.shape, float0)


def _callable(fun: Any, what: str) -> None:
    if not callable(fun):
        raise TypeError(f"{what} expects a callable, got {type(fun).__name__}")


def _check_tangents(primal_types: list[TensorType], tangents: list[Any], what: str
                    ) -> list[Any]:
    """Validate tangent leaves against the primal leaves' types; return the floating
    ones."""
    kept = []
    for k, (pt, t) in enumerate(zip(primal_types, tangents, strict=True)):
        if not is_float(pt):
            if not _is_float0(t):
                got = getattr(t, "dtype", type(t).__name__)
                raise TypeError(
                    f"{what}: primal {k} has dtype {pt.dtype.name}, so its tangent must have "
                    f"dtype float0 (spmdc.float0, like jax.dtypes.float0), got {got}. "
                    f"Pass np.zeros({pt.shape}, dtype=float0){where()}")
            if tuple(np.shape(t)) != pt.shape:
                raise ValueError(f"{what}: tangent {k} has shape {np.shape(t)}, but its primal "
                                 f"has shape {pt.shape}{where()}")
            continue
        tt = type_of(t)[0]
        if tt.shape != pt.shape:
            raise ValueError(f"{what}: tangent {k} has shape {tt.shape}, but its primal has "
                             f"shape {pt.shape}; tangents must match the primals{where()}")
        if tt.dtype != pt.dtype:
            raise TypeError(f"{what}: primal and tangent {k} do not match: the primal has "
                            f"dtype {pt.dtype.name} and the tangent {tt.dtype.name}; give the "
                            f"tangent the primal's dtype{where()}")
        kept.append(t)
    return kept


def _trace_jvp(fun: Callable[..., Any], name: str, primals: Sequence[Any],
               linearizing: bool = False, float_tangents: Sequence[Any] = ()
               ) -> tuple[Func, list[bool], list[Any], Any, list[Any], list[bool], set[Any]]:
    """Trace ``fun(*primals)`` and run the forward pass over it, a tangent for every
    floating point leaf. Returns (jvp Func, out weak flags, captured values, out treedef,
    primal leaves, which outputs are floats, the jvp Func's tangent Vars).
    The traced values print as JAX's linearize tracers when ``linearizing``, else as its
    JVPTracers of the ``float_tangents`` (Note [tracer text] in core/tracer_text.py)."""
    floats = [is_float(type_of(v)[0]) for v in tree_leaves(tuple(primals))]
    dims = tuple(0 if f else None for f in floats)
    if linearizing:
        view = TracerView("grad", dims)
    else:
        given = iter(float_tangents)
        view = TracerView("jvp", dims, tangents=tuple(next(given, None) if f else None
                                                      for f in floats))
    func, out_weak, captured, out_tree, leaves = trace_pytree(fun, tuple(primals), {}, name,
                                                              concrete=True, view=view)
    tangent_in = [is_float(type_of(v)[0]) for v in leaves] + [False] * len(captured)
    float_out = [is_float(t) for t in func.out_types]
    tangent_vars: set[Any] = set()
    jf = run_pass("jvp", jvp_func, func, tangent_in, float_out, tangent_vars)
    return jf, out_weak, captured, out_tree, leaves, float_out, tangent_vars


def _jvp_core(fun: Callable[..., Any], name: str, primals: tuple[Any, ...],
              float_tangents: list[Any]) -> tuple[Any, list[Any]]:
    """(primal outputs as a pytree, tangents of the floating point output leaves)."""
    jf, out_weak, captured, out_tree, leaves, float_out, _ = _trace_jvp(
        fun, name, primals, float_tangents=float_tangents)
    jf = run_pass("cleanup", cleanup, jf)
    tangent_weak = [w for w, f in zip(out_weak, float_out, strict=True) if f]
    outs = apply_func(jf, [*leaves, *captured, *float_tangents], [*out_weak, *tangent_weak])
    n = len(out_weak)
    return tree_unflatten(out_tree, outs[:n]), outs[n:]


def _run_jvp(fun: Callable[..., Any], has_aux: bool, primals: tuple[Any, ...],
             float_tangents: list[Any]) -> tuple[Any, list[Any]]:
    """Inline under a trace; at top level compile and run one program. That program is not
    kept for later calls: ``fun`` may read Python values that change between calls (JAX
    evaluates jvp afresh each time too), which a cached program would not see."""
    name = _fun_name(fun)
    target = _aux_split(fun) if has_aux else fun
    if current_trace() is not None:
        return _jvp_core(target, name, primals, float_tangents)

    def jvp_program(primals_: tuple[Any, ...], tangents_: list[Any]) -> Any:
        return _jvp_core(target, name, primals_, tangents_)
    jvp_program.__name__ = jvp_program.__qualname__ = name
    return eager_jit(jvp_program)(primals, float_tangents)


def _with_float0(out: Any, float_tangents: list[Any]) -> Any:
    """The tangent pytree of ``out``: the computed tangents where leaves are floats,
    float0 zeros elsewhere (Note [integer tangents])."""
    leaves, tree = tree_flatten(out)
    it = iter(float_tangents)
    full = [next(it) if is_float(type_of(v)[0]) else _float0_zeros(type_of(v)[0])
            for v in leaves]
    return tree_unflatten(tree, full)


@api_boundary  # See Note [library frames] (errors.py)
def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> Any:
    """``(fun(*primals), J tangents)``: the value and the Jacobian-vector product, by
    forward mode; with ``has_aux`` also ``fun``'s auxiliary output."""
    _callable(fun, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists, with one entry "
                        "per positional argument of the function, e.g. jvp(f, (x,), (v,)); "
                        f"got {type(primals).__name__} and {type(tangents).__name__}")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents; give one "
                        "tangent per primal")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"jvp: primal and tangent arguments must have the same tree "
                        f"structure; got {p_tree} and {t_tree}")
    shown = _display_name(fun)     # See Note [arguments that are not arrays]
    try:
        float_tangents = _check_tangents([type_of(p)[0] for p in p_leaves], t_leaves, "jvp")
    except TypeError:
        check_array_arguments("jvp", shown, [("primals", tuple(primals)),
                                             ("tangents", tuple(tangents))])
        raise

    def run(f: Callable[..., Any], with_aux: bool) -> Any:
        out, tangents_out = _run_jvp(checking_results("jvp", f, shown, with_aux), with_aux,
                                     tuple(primals), float_tangents)
        if with_aux:
            main, aux = out
            return main, _with_float0(main, tangents_out[:_n_float(main)]), aux
        return out, _with_float0(out, tangents_out)

    def unpack(r: Any) -> tuple[Any, list[Any]]:
        main, t, (aux, finals) = r
        return ((main, t, aux) if has_aux else (main, t)), finals
    # refs fun closes over and writes are updated: Note [refs as threaded state]
    return refs_as_aux(fun, has_aux, run, unpack)


def _n_float(tree: Any) -> int:
    return sum(is_float(type_of(v)[0]) for v in tree_flatten(tree)[0])


def _aux_split(fun: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fun)
    def with_aux(*args: Any) -> Any:
        out = fun(*args)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("has_aux=True expects the function to return a pair (output, aux), "
                            f"but it returned {type(out).__name__}{where()}")
        return out[0], out[1]
    return with_aux


@api_boundary  # See Note [library frames] (errors.py)
def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``.

    The primal work happens once, here; ``f_jvp`` evaluates only the tangent half of the
    JVP program on the saved residuals (compiled once, reusable)."""
    _callable(fun, "linearize")
    name = _fun_name(fun)
    target = _aux_split(fun) if has_aux else fun
    jf, out_weak, captured, out_tree, leaves, float_out, tangent_vars = _trace_jvp(
        target, name, primals, linearizing=True)
    n_known = len(leaves) + len(captured)
    n_out = len(out_weak)
    known = [True] * n_known + [False] * (len(jf.inputs) - n_known)
    unknown_out = [False] * n_out + [True] * (len(jf.outputs) - n_out)
    known_func, linear_func, n_res = partial_eval(jf, known, tangent_vars, unknown_out)
    known_func = run_pass("cleanup", cleanup, known_func)
    linear_func = run_pass("cleanup", cleanup, linear_func)
    tangent_weak = [w for w, f in zip(out_weak, float_out, strict=True) if f]
    known_weak = [*out_weak, *([False] * n_res)]

    def primal_program(*args: Any) -> list[Any]:
        return apply_func(known_func, list(args), known_weak)

    if current_trace() is None:
        outs = Jitted(primal_program)(*leaves, *captured)
    else:
        outs = primal_program(*leaves, *captured)
    out, residuals = tree_unflatten(out_tree, outs[:n_out]), outs[n_out:]
    main = out[0] if has_aux else out
    p_leaves, p_tree = tree_flatten(tuple(primals))
    p_types = [type_of(v)[0] for v in p_leaves]
    main_leaves, main_tree = tree_flatten(main)
    float0_zeros = [None if is_float(type_of(v)[0]) else _float0_zeros(type_of(v)[0])
                    for v in main_leaves]

    def linear_program(residuals_: list[Any], tangents_: list[Any]) -> list[Any]:
        return apply_func(linear_func, [*residuals_, *tangents_], tangent_weak)

    linear_jitted = Jitted(linear_program)

    def f_jvp(residuals_: list[Any], *tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        if t_tree != p_tree:
            raise TypeError(f"linearize: the linear function takes tangents shaped like the "
                            f"primals, {p_tree}; got {t_tree}")
        float_tangents = _check_tangents(p_types, t_leaves, "linearize")
        run = linear_program if current_trace() is not None else linear_jitted
        computed = iter(run(residuals_, float_tangents))
        return tree_unflatten(main_tree, [next(computed) if z is None else z
                                          for z in float0_zeros])

    # See Note [the linear function of linearize is a Partial]
    linear_fn = Partial(f_jvp, list(residuals))
    return (main, linear_fn, out[1]) if has_aux else (main, linear_fn)


# Note [the linear function of linearize is a Partial]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As JAX's, the linear function ``linearize`` returns is a ``tree_util.Partial`` whose
# children are the residuals of the primal half, so it is a pytree that ``vmap`` and
# ``jit`` can return (Equinox's ``jit(vmap(lambda ...: linearize(loop, xs)))``) and that
# can cross into another function. Its function, the aux data, keeps only what is known
# without values: the linear program, the primals' types and the output tree (a Partial
# returned from a trace must not hold the trace's values there).


def linear_transpose(fun: Callable[..., Any], *primals: Any,
                     reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The transpose of the linear function ``fun`` at the types of ``primals`` (values
    or anything with ``.shape`` and ``.dtype``): ``f_t(ct)`` returns a tuple with one
    cotangent per primal. Raises TypeError if ``fun`` is not linear."""
    _callable(fun, "linear_transpose")
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported (JAX "
                                  "deprecated it); leave it empty")
    name = _fun_name(fun)
    examples = tuple(_example(p) for p in primals)
    p_leaves, p_tree = tree_flatten(examples)
    for leaf in p_leaves:
        if not is_float(type_of(leaf)[0]):
            raise TypeError(f"linear_transpose: primals must be floating point, got "
                            f"{type_of(leaf)[0].dtype.name}")
    func, _, captured, out_tree, leaves = trace_pytree(fun, examples, {}, name)
    n_in, n_out = len(leaves), len(func.outputs)
    refuse_in_shard_map_body("linear_transpose")
    # a library primitive is transposed by its transpose rule, even where it has a JVP
    # rule too, as in JAX (Note [linearize and transpose] in interpreters/ad.py)
    with transposing(True):
        transposed = run_pass("grad", vjp_func, func, [True] * n_in + [False] * len(captured))
    transposed = Func(transposed.name, transposed.inputs, transposed.eqns,
                      transposed.outputs[n_out:])
    transposed = run_pass("cleanup", cleanup, transposed)
    used = {a for e in transposed.eqns for a in e.inputs} | set(transposed.outputs)
    if any(v in used for v in transposed.inputs[:n_in]):
        raise TypeError(f"linear_transpose: {name} is not linear in its inputs (its "
                        "transpose would depend on the point); only linear functions have "
                        "a transpose")
    out_types = func.out_types

    def transpose_program(captured_: list[Any], cts: list[Any]) -> tuple[Any, ...]:
        zeros = [np.zeros(t.shape, t.dtype) for t in func.in_types[:n_in]]
        outs = apply_func(transposed, [*zeros, *captured_, *cts], [False] * n_in)
        return tree_unflatten(p_tree, outs)

    jitted = Jitted(transpose_program)

    @api_boundary
    def transpose_fn(ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"linear_transpose: the cotangent has structure {ct_tree}, but "
                            f"{name} returns {out_tree}")
        for c, t in zip(ct_leaves, out_types, strict=True):
            ct_type = type_of(c)[0]
            if ct_type.shape != t.shape or ct_type.dtype != t.dtype:
                raise TypeError(f"linear_transpose: cotangent of type {ct_type} for an output "
                                f"of type {t}; they must match")
        run = transpose_program if current_trace() is not None else jitted
        return run(list(captured), ct_leaves)

    return transpose_fn


def _example(p: Any) -> Any:
    """A value of ``p``'s type (``p`` may be a ShapeDtypeStruct-like description)."""
    leaves, tree = tree_flatten(p)
    made = [np.zeros(v.shape, v.dtype) if not isinstance(v, (np.ndarray, np.generic))
            and hasattr(v, "shape") and hasattr(v, "dtype") and not hasattr(v, "type")
            else v for v in leaves]
    return tree_unflatten(tree, made)
