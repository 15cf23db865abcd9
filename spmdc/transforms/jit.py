"""jit: the wrapper, its compile cache and its C++ dispatcher; and make_ir.

``jit(f)(*args)`` at top level: flatten the arguments, look the abstract signature up in
the compile cache, and on a miss trace ``f`` into a Func, clean it up, lower it to
StableHLO and compile it (stages.py's ``compile_entry``; over a mesh, partitioned.py);
then the entry's launcher (runtime/launcher.py) places the arguments and launches. A
cache hit neither re-traces nor re-lowers. Under another transformation, ``jit(f)``
traces ``f`` and inlines the result into the enclosing trace. The ahead-of-time API
(``lower``, ``trace``) returns stages.py's objects; eager execution of single
primitives, a cached jit of one equation, is eager.py's.
"""
from __future__ import annotations

import functools
import inspect
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.ir import Func, Var, check
from ..compiler.passes import checks_enabled, observe, recording, run_pass
from ..compiler.passes.cleanup import cleanup
from ..core import dtypes, float_checks, mutable_hi, tracing
from ..core import precision as _precision
from ..core import rank_promotion as _rank_promotion
from ..core.concrete import concretisations
from ..core.config import checked_call, disable_jit_enabled, runtime_checks
from ..core.devices import check_backend, check_device
from ..core.float_checks import replay
from ..core.mutable_hi import MutableHiArgument
from ..core.pytree_tracing import fun_name as _fun_name
from ..core.pytree_tracing import trace_pytree
from ..core.ref_scopes import bound_refs
from ..core.tracing import apply_func, type_of, where
from ..core.tree import tree_flatten, tree_unflatten
from ..runtime import config_states, pjrt
from ..runtime.array import Array
from ..runtime.compile_log import fun_source, log_compile
from ..runtime.executable import ProgramCache, program_key
from ..runtime.monitoring import JAXPR_TRACE_EVENT, Elapsed
from ..runtime.pjrt import ROOM, python_path_after, recursion_reserve
from ..runtime.pjrt.recursion import restore_recursion_budget
from ..runtime.sharding import NamedSharding
from ..tracebacks import filter_at_boundary, inline_boundary
from .arguments import (
    check_array_results,
    check_not_generator,
    check_static_argnames,
    check_static_argnums,
    donated_leaves,
    explain_failed_call,
    index_tuple,
    name_tuple,
    raise_if_not_array_argument,
)
from .cache_misses import explain
from .float0_values import float0_as_structure
from .hi_arguments import call_writing_back
from .jit_inline import inlined_trace, keep_trace
from .partitioned import (
    PartitionedEntry,
    check_shardings,
    constraint_mesh,
    is_sharded_call,
    layout,
    out_requests,
    partitioned_key,
)
from .refs import _RefsFound, call_with_refs, check_no_ref_results, has_refs
from .stages import Entry, Lowered, PartitionedLowered, Traced, compile_entry, device_of

__all__ = ["jit", "make_ir", "clear_caches"]


# --- jit ---------------------------------------------------------------------------------

def _leaf_signature(x: Any) -> Any:
    # Where a value lives is not part of the signature: launching places each argument
    # (reusing buffers already on the right device), so a NumPy array and an Array of
    # the same type share one compiled program.
    if type(x) is Array:
        return x.type, x.weak
    return type_of(x)


class Jitted:
    """The callable returned by ``jit``."""

    def __init__(self, fun: Callable[..., Any], static_argnums: Any = None,
                 static_argnames: Any = None, donate_argnums: Any = (),
                 in_shardings: Any = None, out_shardings: Any = None, device: Any = None,
                 _concrete: bool = False, donate_argnames: Any = ()):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
        check_not_generator(fun)
        # fun's name, docstring and attributes first, so that the attributes of a callable
        # object (its own in_shardings, fun, ...) never replace the jitted function's
        functools.update_wrapper(self, fun)
        self.device = device                # run on this device (jit(device=...))
        # Note [jit over sharded arrays] in partitioned.py
        self.in_shardings = check_shardings("in_shardings", in_shardings)
        self.out_shardings = check_shardings("out_shardings", out_shardings)
        # a tree of Nones (Flax's nnx.jit passes ``(None, None, None)``) asks for nothing
        self._partitioned = any(
            s is not None for s in tree_flatten((in_shardings, out_shardings))[0])
        self.fun = fun
        # JAX completes the numbers from the names (or the names from the numbers) only
        # when one of the two is given: given both, each names just what it names
        infer_statics = static_argnums is None or static_argnames is None
        self.static_argnums = index_tuple("jit", "static_argnums",
                                          () if static_argnums is None else static_argnums)
        self.static_argnames = name_tuple("jit", "static_argnames",
                                          () if static_argnames is None else static_argnames)
        donate_nums = index_tuple("jit", "donate_argnums",
                                  () if donate_argnums is None else donate_argnums)
        donate_names = name_tuple("jit", "donate_argnames",
                                  () if donate_argnames is None else donate_argnames)
        check_static_argnums("jit", "static_argnums", fun, self.static_argnums)
        check_static_argnames("jit", fun, self.static_argnames)
        check_static_argnums("jit", "donate_argnums", fun, donate_nums)
        check_static_argnames("jit", fun, donate_names, "donate_argnames")
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        positional = [p.name for p in params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        # static_argnames also name positional parameters, and static_argnums name keywords
        if infer_statics:
            self.static_argnums += tuple(positional.index(n) for n in self.static_argnames
                                         if n in positional)
            self.static_argnames += tuple(positional[i] for i in self.static_argnums
                                          if 0 <= i < len(positional))
        # Note [donation] in compiler/stablehlo.py; the same two ways of naming arguments
        npos = len(positional)
        donate_nums = tuple(i % npos if npos and -npos <= i < 0 else i for i in donate_nums)
        self.donate_argnums = tuple(sorted({*donate_nums, *(
            positional.index(n) for n in donate_names if n in positional)}))
        self.donate_argnames = tuple(sorted({*donate_names, *(
            positional[i] for i in donate_nums if 0 <= i < npos)}))
        self._donates = bool(self.donate_argnums or self.donate_argnames)
        both = sorted(set(self.donate_argnames) & set(self.static_argnames)) or sorted(
            set(self.donate_argnums) & {i % npos if npos else i for i in self.static_argnums})
        if both:
            raise ValueError(f"jit: argument{'s' if len(both) > 1 else ''} {both} "
                             f"{'are' if len(both) > 1 else 'is'} both static and donated"
                             f"{where()}; a static argument has no buffer to donate")
        donated = (self.donate_argnums, self.donate_argnames)
        # the outermost trace of an eager transformation (Note [concrete values while
        # tracing] in core/concrete.py): its inputs' values may be read while tracing,
        # and it traces every call (Note [eager transformations trace every call] in eager.py)
        self._concrete = _concrete
        # shared by every wrapper of the same function and options (Note [shared jit cache])
        self._cache: dict[Any, Entry] = {} if self._partitioned or _concrete else \
            _shared_cache(fun, (self.static_argnums, self.static_argnames, donated, device))
        self._has_statics = bool(self.static_argnums or self.static_argnames)
        # mutable array references (Note [refs as threaded state] in core/refs.py): the
        # refs fun closes over, and the pure jitted functions calls with refs run
        self._closed_refs: list[Any] = []
        self._ref_jits: dict[Any, Any] = {} if self._partitioned or _concrete else \
            _shared_cache(fun, ("refs", self.static_argnums, self.static_argnames, donated,
                                device))
        self._threads_refs = not _concrete     # False for a pure function of refs itself
        # calls with mutable hi values as arguments, by where they are among the leaves
        # (Note [mutable hi values through jit] in core/mutable_hi.py)
        self._hi_jits: dict[Any, Any] = {} if self._partitioned or _concrete else \
            _shared_cache(fun, ("mutable hi", self.static_argnums, self.static_argnames,
                                device))
        # traces inlined under transformations (Note [inlined jit traces once per signature])
        self._inlined: dict[Any, Any] = {} if _concrete else \
            _shared_cache(fun, ("inlined", self.static_argnums, self.static_argnames))
        self.trace_count = 0          # how many times fun was traced (tests read it)
        # traces made by lower() that the next call with their key compiles (Note [a call
        # after lower])
        self._lowered_traces: dict[Any, Any] = {} if _concrete else \
            _shared_cache(fun, ("lowered", self.static_argnums, self.static_argnames))
        # jaxlib's C++ dispatcher in front of the Python path (Note [dispatch fast path]).
        # Static arguments counted from the end depend on the call, so with one of those
        # it sees every argument as dynamic and is never granted a launch.
        self._from_end = any(i < 0 for i in self.static_argnums)
        self._dispatch = pjrt.dispatcher(
            _fun_name(fun), self._cache_miss, () if self._from_end else self.static_argnums,
            () if self._from_end else self.static_argnames)
        _dispatchers.add(self._dispatch)

    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[tuple[Any, ...], tuple[Any, ...], dict[str, Any]]:
        if not self.static_argnums and not self.static_argnames:
            return (), args, kwargs
        n = len(args)
        nums = {i % n if -n <= i < n else i for i in self.static_argnums}
        statics = [(i, args[i]) for i in sorted(nums) if i < n]
        statics += sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames)
        for at, v in statics:
            try:
                hash(v)
            except TypeError:
                what = f"argument {at}" if isinstance(at, int) else f"argument {at!r}"
                raise ValueError(
                    f"static {what} of jit({_fun_name(self.fun)}) has unhashable type "
                    f"{type(v).__name__}; static arguments must be hashable (use a tuple "
                    "instead of a list), or pass it as a regular (traced) argument") from None
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return tuple(statics), dyn_args, dyn_kwargs

    def _with_statics(self, statics: tuple[Any, ...]) -> Callable[..., Any]:
        if not statics:
            return self.fun
        positional = [(i, v) for i, v in statics if isinstance(i, int)]
        named = {k: v for k, v in statics if isinstance(k, str)}

        def fun(*args: Any, **kwargs: Any) -> Any:
            full = list(args)
            for i, v in positional:
                full.insert(i, v)
            return self.fun(*full, **kwargs, **named)
        return fun

    def _trace(self, statics: tuple[Any, ...], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> tuple[Func, list[bool], list[Any], Any, list[Any]]:
        if not self._concrete and config_states.no_tracing.value:
            raise RuntimeError(f"re-tracing function {self._log_name()} at "
                               f"{fun_source(self.fun)} for `jit`, but 'no_tracing' is set")
        self.trace_count += 1
        fun = self._with_statics(statics)
        if not self._concrete:             # the user's jit (not an eager transformation's)
            user_fun = fun

            def fun(*a: Any, **k: Any) -> Any:
                if self._threads_refs:          # See Note [refs as threaded state]
                    with bound_refs((), ()):
                        out = user_fun(*a, **k)
                        check_no_ref_results("jit", self.fun, _display_name(self.fun), out)
                else:
                    out = user_fun(*a, **k)
                out, _ = float0_as_structure(out)    # See Note [float0 through jit]
                check_array_results("jit", self.fun, _display_name(self.fun), out)
                return out
        started = time.perf_counter()
        top = JAXPR_TRACE_EVENT if tracing._state.current is None else None
        with Elapsed(top, getattr(self, "__name__", "fun")):  # Note [JAX's compile events]
            out = trace_pytree(fun, args, kwargs, _fun_name(self.fun),
                               concrete=self._concrete and tracing._state.current is None)
        observe("traced", out[0])
        log_compile("Finished tracing %s for jit in %.9f sec", self._log_name(),
                    time.perf_counter() - started)
        return out

    def _log_name(self) -> str:
        """The name the compile log and no_tracing give (an eager operation's jit is
        named after its primitive)."""
        return getattr(self, "__name__", None) or _display_name(self.fun)

    def __repr__(self) -> str:
        # JAX's repr of a jitted function; chex's is_traceable (and so its
        # assert_max_traces) recognises a jitted function by it.
        return f"<PjitFunction of {self.fun!r}>"

    @property
    def __signature__(self) -> inspect.Signature:
        """``fun``'s signature, which inspect.signature gives even with
        ``follow_wrapped=False`` (as for JAX's jitted functions; chex's fake_pmap asks so):
        without it, inspect takes this object, which has ``__get__``, for a builtin."""
        return inspect.signature(self.fun)

    @inline_boundary  # See Note [library frames] (errors.py)
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Nothing but the C++ dispatcher on the way in (Note [dispatch fast path]); the
        # handlers below run only when it raised.
        __tracebackhide__ = True            # noqa: F841  (read by pytest and IPython)
        try:
            return self._dispatch(*args, **kwargs)
        except Exception as e:
            recursion_reserve.value += ROOM   # before any call: see python_path_after
            if isinstance(e, MutableHiArgument):      # Note [mutable hi values through jit]
                restore_recursion_budget()
            elif not python_path_after(e, lambda error, deleted: explain_failed_call(
                    args, kwargs, error, deleted)):
                filter_at_boundary(e, sys._getframe())
                raise
        try:
            return self._python_path(args, kwargs)[0]
        except Exception as e:
            filter_at_boundary(e, sys._getframe())
            raise

    def _cache_miss(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, bool]:
        """What the C++ dispatcher calls for a call it cannot launch itself: the Python
        path, and the C++ launch granted for calls like this one where it is safe."""
        out, entry = self._python_path(args, kwargs)
        if entry is None or self._from_end or self._concrete:
            return out, None, False
        _, args, kwargs = self._split(args, kwargs)          # the dynamic arguments
        return out, entry.fast_path((args, kwargs), out), False

    def _python_path(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                     ) -> tuple[Any, Entry | None]:
        """A call the C++ dispatcher did not launch: inlined under a transformation,
        through the runtime checks while they are on (Note [config on the hot path]),
        else compiled (once per signature) and run. The entry that ran, if any, may be
        granted to the C++ dispatcher; none is while tracing or checking, where the
        dispatcher's key differs anyway (Note [dispatch fast path])."""
        if self._threads_refs and (self._closed_refs or has_refs((args, kwargs))):
            return self._call_with_refs(args, kwargs), None
        if (runtime_checks and not self._concrete and tracing._state.current is not None
                and disable_jit_enabled()):
            # As JAX's: under disable_jit a jit called inside another transformation
            # runs its function there too, traced anew (Haiku's summaries count the
            # modules a jitted step calls by tracing it under eval_shape)
            return self.fun(*args, **kwargs), None
        try:
            if runtime_checks and tracing._state.current is None:
                # disable_jit turns off jit, not the eager transformations' own jit (vmap,
                # grad ... at top level), which would otherwise call their function again
                kind = "eager transformation" if self._concrete else "jit"
                return checked_call(kind, _fun_name(self.fun), self.fun,
                                    lambda a, k: self._call(a, k)[0], args, kwargs,
                                    self._replay(args, kwargs) if self._concrete else None
                                    ), None
            return self._call(args, kwargs)
        except MutableHiArgument:     # See Note [mutable hi values through jit]
            if self._concrete or self._partitioned or mutable_hi.flatten_allowed():
                raise
            return self._call_writing_back(args, kwargs), None
        except TypeError:
            self._raise_if_not_array_argument(args, kwargs)
            raise
        except _RefsFound as found:          # fun closes over refs: thread them
            if not self._threads_refs:
                raise
            self._closed_refs.extend(found.refs)
            return self._call_with_refs(args, kwargs), None

    def _replay(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], None]:
        """The call traced again and run op by op, for debug_nans (Note [finding the
        operation that made a nan] in core/float_checks.py)."""
        def run() -> None:
            func, _, consts, _, leaves = self._trace(*self._split(args, kwargs))
            replay(func, [*leaves, *consts], tracing.run_eagerly)
        return run

    def _call_with_refs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call whose function takes or closes over mutable array references (Note
        [refs as threaded state] in core/refs.py). Its arguments are not donated (JAX
        ignores donations it cannot use too)."""
        if self._partitioned:
            raise ValueError(
                f"jit({_display_name(self.fun)}): a function taking or closing over mutable "
                "array references runs without in_shardings/out_shardings in spmdc; drop "
                f"them, or pass ref[...] and write the result back{where()}")
        statics, args, kwargs = self._split(args, kwargs)

        def make_jit(pure: Callable[..., Any]) -> Jitted:
            inner = Jitted(pure, device=self.device)
            inner._threads_refs = False
            return inner
        return call_with_refs(self, statics, args, kwargs, self._closed_refs, make_jit,
                              _display_name(self.fun))

    def _call_writing_back(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call with values of mutable hi-types among its arguments (Note [mutable hi
        values through jit] in core/mutable_hi.py). Its arguments are not donated."""
        def make_jit(wrapper: Callable[..., Any]) -> Jitted:
            return Jitted(wrapper, static_argnums=self.static_argnums,
                          static_argnames=self.static_argnames, device=self.device)
        return call_writing_back(self.fun, args, kwargs, self._hi_jits, make_jit)

    def _raise_if_not_array_argument(self, args: tuple[Any, ...],
                                     kwargs: dict[str, Any]) -> None:
        """After a TypeError: the error naming the argument that is not an array, if
        one is (the user's jit; an eager transformation's names its own)."""
        if not self._concrete:
            raise_if_not_array_argument("jit", _display_name(self.fun), args, kwargs,
                                        self.static_argnums, self.static_argnames)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[Any, Entry | None]:
        """The Python path: the outputs, and the entry that ran (None when inlined)."""
        if self._has_statics:
            statics, args, kwargs = self._split(args, kwargs)
        else:
            statics = ()
        had_float0 = False
        if not self._concrete:                        # See Note [float0 through jit]
            (args, kwargs), had_float0 = float0_as_structure((args, kwargs))
        if tracing._state.current is not None:        # inside another transformation: inline
            func, out_weak, captured, out_tree, leaves = inlined_trace(
                self._inlined, statics, args, kwargs, self._trace)
            outs = apply_func(func, [*leaves, *captured], out_weak)
            return tree_unflatten(out_tree, outs), None
        leaves, in_tree = tree_flatten((args, kwargs))
        tracing.raise_if_escaped(leaves)
        if self._partitioned or is_sharded_call(leaves):   # Note [jit over sharded arrays]
            ran = self._call_partitioned(statics, args, kwargs, leaves, in_tree)
            if ran is not None:
                return (ran[0], None) if self._concrete else ran
        device = self.device or device_of(leaves)
        if self._concrete:
            return self._call_eager(statics, args, kwargs, leaves, device), None
        key = self._key(in_tree, statics, device, leaves)
        entry = self._cache.get(key)
        if entry is None:
            if config_states.explain_cache_misses.value:    # Note [explaining a retrace]
                explain(self.fun, _display_name(self.fun), list(self._cache), key, args,
                        kwargs)
            traced = self._lowered_traces.pop(key, None)    # Note [a call after lower]
            if traced is None:
                read = concretisations()
                traced = self._trace(statics, args, kwargs)
                if concretisations() != read:   # specialised to these values: never cache
                    return _evaluate_specialised(*traced), None
            entry = self._cache[key] = self._compile_traced(
                traced, device, self._donated_leaves(statics, args, kwargs))
        return entry(leaves), None if had_float0 else entry

    def _key(self, in_tree: Any, statics: tuple[Any, ...], device: Any,
             leaves: list[Any]) -> tuple[Any, ...]:
        """The cache key of a call on one device (Note [dispatch fast path])."""
        keyed = config_states.jit_key_values()    # softmax_custom_jvp, user contexts
        if self._donates and float_checks.checking():
            keyed = (*keyed, "debug_nans: no donation")   # as JAX's (see _donated_leaves)
        return (in_tree, statics, device, dtypes._x64,    # the program depends on x64,
                dtypes._promotion[0],                     # the promotion modes
                _rank_promotion._mode[0],                 # (Note [rank promotion])
                _precision._default[0],                   # and the default precision
                keyed,
                *[(x.type, x.weak) if type(x) is Array else type_of(x) for x in leaves])

    def _call_eager(self, statics: tuple[Any, ...], args: tuple[Any, ...],
                    kwargs: dict[str, Any], leaves: list[Any], device: Any) -> Any:
        """An eager transformation's call on one device: traced, and run by the program
        compiled for an equal one (Note [eager transformations trace every call] in eager.py)."""
        read = concretisations()
        traced = self._trace(statics, args, kwargs)
        if concretisations() != read:       # specialised to these values
            return _evaluate_specialised(*traced)
        func, out_weak, consts, out_tree, _ = traced
        donated = self._donated_leaves(statics, args, kwargs)
        # keyed before the cleanup, which the traced program determines (and which keeps
        # its signature), so a call that finds its program skips it
        structure = program_key(func)
        if structure is None:
            outs = self._compile_traced(traced, device, donated)(leaves)
            return _forwarding_inputs(func, out_weak, leaves, donated, outs)
        key = (structure, len(leaves), device, donated, dtypes._x64, _precision._default[0])
        known = _compiled.get(key)
        if known is not None:               # (executable, the donations it takes)
            outs = Entry(known[0], func, consts, out_weak, out_tree, len(leaves),
                         known[1])(leaves)
            return _forwarding_inputs(func, out_weak, leaves, donated, outs)
        traced_func, func = func, run_pass("cleanup", cleanup, func)
        if constraint_mesh(func) is not None:         # over a mesh: for this call alone
            return self._compile_traced((func, *traced[1:]), device, donated)(leaves)
        entry = compile_entry(func, device, consts, out_weak, out_tree, len(leaves), donated)
        _compiled.put(key, (entry.executable, entry.donated))   # not the captured values
        return _forwarding_inputs(traced_func, out_weak, leaves, donated, entry(leaves))

    def _call_partitioned(self, statics: tuple[Any, ...], args: tuple[Any, ...],
                          kwargs: dict[str, Any], leaves: list[Any], in_tree: Any
                          ) -> tuple[Any, PartitionedEntry] | None:
        """The Python path of a call over sharded arrays (Note [jit over sharded arrays]):
        the outputs and the entry that ran, or None if the call is not one."""
        found = layout(self.in_shardings, self.out_shardings, args, kwargs, leaves)
        if found is None:
            return None
        mesh, shardings = found
        key = partitioned_key(in_tree, statics, mesh, leaves, shardings)
        entry = None if self._concrete else self._cache.get(key)
        if entry is None:
            func, out_weak, consts, out_tree, _ = self._trace(statics, args, kwargs)
            func = run_pass("cleanup", cleanup, func)
            # An eager call reuses the entry of an equal program that captures nothing (an
            # entry holds its captured values). See Note [eager transformations trace every
            # call] in eager.py.
            structure = program_key(func) if self._concrete and not consts else None
            if structure is not None:
                structure = (structure, key, tuple(out_weak), out_tree)
                entry = _compiled.get(structure)
            if entry is None:
                entry = PartitionedEntry(
                    func, mesh, shardings, out_requests(self.out_shardings, out_tree), consts,
                    out_weak, out_tree, self._donated_leaves(statics, args, kwargs))
                if structure is not None:
                    _compiled.put(structure, entry)
            if not self._concrete:
                self._cache[key] = entry
        return entry(leaves), entry

    def _compile(self, statics: tuple[Any, ...], args: tuple[Any, ...],
                 kwargs: dict[str, Any], device: Any) -> Entry:
        return self._compile_traced(self._trace(statics, args, kwargs), device,
                                    self._donated_leaves(statics, args, kwargs))

    def _donated_leaves(self, statics: tuple[Any, ...], args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> tuple[int, ...]:
        if float_checks.checking():     # as JAX: the de-optimized call needs the arguments
            return ()
        return donated_leaves(statics, args, kwargs, self.donate_argnums,
                              self.donate_argnames)

    def _compile_traced(self, traced: tuple[Func, list[bool], list[Any], Any, list[Any]],
                        device: Any, donated: tuple[int, ...] = ()) -> Entry:
        func, out_weak, consts, out_tree, leaves = traced
        func = run_pass("cleanup", cleanup, func)
        mesh = constraint_mesh(func)        # Note [jit over sharded arrays]
        if mesh is not None:
            return PartitionedEntry(func, mesh, [NamedSharding(mesh)] * len(leaves),
                                    [None] * len(func.outputs), consts, out_weak, out_tree,
                                    donated)
        # jit's programs hold their captured arrays as constants, an eager
        # transformation's take them as arguments (Note [captured arrays are constants])
        return compile_entry(func, device, consts, out_weak, out_tree, len(leaves), donated,
                             embed=not self._concrete)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        try:
            return self._lower(args, kwargs)
        except TypeError:
            self._raise_if_not_array_argument(args, kwargs)
            raise

    def _lower(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Lowered:
        statics, args, kwargs = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((args, kwargs))
        device = self.device or device_of(leaves)
        read = concretisations()
        with recording() as stages:
            traced = self._trace(statics, args, kwargs)
            func, out_weak, consts, out_tree, leaves = traced
            func = run_pass("cleanup", cleanup, func)
        # Note [jit over sharded arrays]: the program that would run over a mesh
        found = (layout(self.in_shardings, self.out_shardings, args, kwargs, leaves)
                 if self._partitioned or is_sharded_call(leaves) else None)
        if found is None and (mesh := constraint_mesh(func)) is not None:
            found = mesh, [NamedSharding(mesh)] * len(leaves)
        if found is not None:
            mesh, shardings = found
            requests = ([None] * len(func.outputs) if not self._partitioned
                        else out_requests(self.out_shardings, out_tree))
            return PartitionedLowered(func, mesh, shardings, requests, consts, out_weak,
                                      out_tree, len(leaves), stages,
                                      self._donated_leaves(statics, args, kwargs))
        if (not self._concrete and concretisations() == read
                and not float0_as_structure((args, kwargs))[1]):
            # See Note [a call after lower]
            if tracing._state.current is None:
                self._lowered_traces[self._key(in_tree, statics, device, leaves)] = traced
            else:
                keep_trace(self._inlined, statics, args, kwargs, traced)
        return Lowered(func, [device], consts, out_weak, out_tree, len(leaves),
                       recorded=stages, donated=self._donated_leaves(statics, args, kwargs),
                       embedded=not self._concrete, in_tree=in_tree)

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """The traced program at ``args`` (``.jaxpr``, ``.lower()``): see stages.py."""
        statics, args, kwargs = self._split(args, kwargs)
        in_leaves, in_tree = tree_flatten((args, kwargs))
        with recording() as stages:
            func, out_weak, consts, out_tree, leaves = self._trace(statics, args, kwargs)
        if checks_enabled():
            check(func)
        return Traced(getattr(self, "__name__", "fun"), func, out_weak, consts, in_tree,
                      out_tree, leaves, device_of(in_leaves), stages,
                      self._donated_leaves(statics, args, kwargs))

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """What a call would return, as ShapeDtypeStructs; nothing is compiled or run."""
        return self.trace(*args, **kwargs).out_info

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # jit applied to a method: bind like a function would
        return self if obj is None else functools.partial(self, obj)


# Note [a call after lower]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX traces a jitted function once per signature whether lower() or a call asks first
# (both go through one cached trace), so ``f.lower(x)`` then ``f(x)`` runs ``f``'s Python
# once; libraries count traces (Flax's nnx summary lowers then calls each submodule,
# inside the enclosing module's trace). lower() on one device keeps its trace under the
# key the call would have, and the first call with that key compiles it instead of
# tracing again (and drops it: the compiled entry is cached from then on). Under a
# transformation, lower() keeps its trace with the inlined calls' (Note [inlined jit
# traces once per signature] in jit_inline.py), where the call that follows finds it. A
# trace that read concrete values, or took float0 arguments, is not kept.


# Note [dispatch fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# A call of a jitted function with a cached executable should cost little more than
# PJRT's own launch (about 7 us here). So the path from
# Jitted.__call__ to the launch avoids per-leaf helper calls and method lookups: the
# cache key is one flat tuple (treedef, statics, device, then each leaf's type and weak
# flag), Arrays already on the device hand over their
# buffer directly, and the single-replica launch returns a flat list of buffers.
#
# In front of that path sits jaxlib's C++ dispatcher (Note [C++ dispatch] in
# runtime/pjrt/dispatch.py), and Jitted.__call__ does nothing else before calling it: it
# launches signatures it has been granted (device-resident Array arguments) entirely in
# C++ and sends everything else to ``_cache_miss``, i.e. to the Python path above, which
# then decides whether to grant the signature. Whether this thread is tracing (the call
# is then inlined) and whether a runtime check is on are part of the dispatcher's key
# (Note [Python-path state in the jit key] in runtime/pjrt/dispatch.py), so no granted
# launch runs then; functions with a static argument counted from the end are never
# granted one. What is left of Python per call is the one frame of __call__ (its
# handler runs only when the dispatcher raised) and, per Array leaf, the registry's
# flatten and unflatten (Array._flatten, runtime/array.py's _unflatten), about 0.1 us
# each.

# Note [shared jit cache]
# ~~~~~~~~~~~~~~~~~~~~~~~
# ``jit(f)(x)`` inside a loop makes a new Jitted each time; as in JAX, that must not
# re-trace and re-compile. So the compiled entries live not in the wrapper but in
# ``_shared``, keyed weakly by the function and then by the jit options: every wrapper of
# the same function with the same options uses one dict of entries, and the entries go
# when the function does. (The values must not refer to the function, or it would never
# go; entries hold the traced Func, constants and executable only.) A callable that
# cannot be hashed or weakly referenced gets a private dict: no sharing. Like JAX, a
# value the function read from a global at trace time stays baked into the entry until
# ``clear_caches()``. Each wrapper still has its own C++ dispatcher, so its first call
# takes the Python path once: a cache lookup, then the fast path is granted again.

# JAX's jitted functions are jaxlib's ``PjitFunction``s, and libraries tell them by that
# type name (chex's ``is_traceable``, which ``assert_max_traces`` uses to refuse wrapping
# a jitted function, looks for it in ``str(type(f))``), so the class answers to it, as
# its repr does.
Jitted.__name__ = Jitted.__qualname__ = "PjitFunction"


_shared: weakref.WeakKeyDictionary[Any, dict[Any, dict[Any, Entry]]] = \
    weakref.WeakKeyDictionary()
_dispatchers: weakref.WeakSet[Any] = weakref.WeakSet()


# The programs of eager transformations, by structure: see Note [eager transformations
# trace every call] in eager.py.
_compiled: ProgramCache = ProgramCache(256)


def _shared_cache(fun: Any, options: tuple[Any, ...]) -> dict[Any, Entry]:
    try:
        per_fun = _shared.get(fun)
        if per_fun is None:
            per_fun = _shared[fun] = {}
        return per_fun.setdefault(options, {})
    except TypeError:               # unhashable, or not weakly referenceable
        return {}


_registered_caches: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""Caches of other code cleared with jit's (``jax.extend.backend.register_backend_cache``),
each with what it caches."""


def register_cache(cache: Any, for_what: str) -> None:
    """Clear ``cache`` (anything with ``cache_clear()``, as an ``lru_cache``) whenever
    ``clear_caches`` runs; ``for_what`` says what it caches."""
    if not callable(getattr(cache, "cache_clear", None)):
        raise TypeError(f"register_backend_cache: {cache!r} has no cache_clear() method; "
                        "register a functools.lru_cache or an object with one")
    _registered_caches[cache] = for_what


def clear_caches() -> None:
    """Drop every compiled program and trace cached by jit (as ``jax.clear_caches``),
    and clear the caches registered with ``register_cache``: later calls, of existing
    wrappers too, trace and compile again."""
    for cache in list(_registered_caches.keys()):
        cache.cache_clear()
    for per_fun in list(_shared.values()):
        for entries in per_fun.values():
            entries.clear()
    _compiled.clear()
    for d in list(_dispatchers):
        d._clear_cache()


def eager_jit(fun: Callable[..., Any]) -> Jitted:
    """``jit(fun)`` for the outermost trace of an eager transformation (grad, vjp, jvp,
    vmap ... at top level), whose values Python may read (Note [concrete values while
    tracing] in core/concrete.py), traced every call (Note [eager transformations trace
    every call] in eager.py)."""
    return Jitted(fun, _concrete=True)


def _forwarding_inputs(func: Func, out_weak: list[bool], leaves: list[Any],
                       donated: tuple[int, ...], outs: Any) -> Any:
    """``outs`` of an eager transformation's program ``func``, with each output that is an
    argument passed through (the same variable, type and weak type) the argument's Array
    itself, as JAX's eager transformations return it (``vmap(lambda x: x)(y) is y``;
    Lineax's and Optimistix's ``inexact_asarray`` rely on it). A donated argument is not
    forwarded: its buffer is gone."""
    position = {id(v): j for j, v in enumerate(func.inputs[:len(leaves)])}
    if not any(id(a) in position for a in func.outputs):
        return outs
    flat, tree = tree_flatten(outs)
    if len(flat) != len(func.outputs):
        return outs
    for i, (a, weak) in enumerate(zip(func.outputs, out_weak, strict=True)):
        j = position.get(id(a))
        if j is None or j in donated:
            continue
        leaf = leaves[j]
        if type(leaf) is Array and type(flat[i]) is Array and leaf.weak == weak \
                and leaf.type == flat[i].type:
            flat[i] = leaf
    return tree_unflatten(tree, flat)


def _evaluate_specialised(func: Func, out_weak: list[bool], consts: list[Any], out_tree: Any,
                          leaves: list[Any]) -> Any:
    """Run a program specialised to its arguments' values once, op by op with the eager
    primitives, as JAX's eager autodiff does (Note [concrete values while tracing])."""
    func = run_pass("cleanup", cleanup, func)
    env: dict[Var, Any] = dict(zip(func.inputs, [*leaves, *consts], strict=True))

    def read(a: Any) -> Any:
        return env[a] if isinstance(a, Var) else np.asarray(a.value, a.type.dtype)

    for eqn in func.eqns:
        out = tracing.run_eagerly(eqn.prim, [read(a) for a in eqn.inputs], eqn.params, False)
        env.update(zip(eqn.outputs, out if eqn.prim.multiple_results else [out],
                       strict=True))
    outs = []
    for a, w in zip(func.outputs, out_weak, strict=True):
        x = read(a)
        if type(x) is Array:
            outs.append(Array(x._buffers, x.type, w, x._devices, x.split))
        else:                           # an input or a literal, returned as it is
            outs.append(Array.from_host(np.asarray(x, a.type.dtype), pjrt.local_devices()[0], w))
    return tree_unflatten(out_tree, outs)


def _display_name(fun: Callable[..., Any]) -> str:
    """The function's own name for messages (``<lambda>`` too, as JAX prints it)."""
    name = getattr(fun, "__name__", None)
    return name if isinstance(name, str) and name else type(fun).__name__


def jit(fun: Callable[..., Any] | None = None, *, in_shardings: Any = None,
        out_shardings: Any = None, static_argnums: Any = None, static_argnames: Any = None,
        donate_argnums: Any = (), donate_argnames: Any = (), keep_unused: bool = False,
        device: Any = None, backend: str | None = None, inline: bool = False) -> Any:
    """Compile ``fun`` with XLA; see the module docstring. Usable as a decorator.
    ``in_shardings``/``out_shardings`` (pytree prefixes of the positional arguments and
    of the result: NamedSharding, PartitionSpec over the current mesh, or None) run the
    program over a mesh (Note [jit over sharded arrays] in partitioned.py); ``device``
    runs it on that device, ``backend`` must name the platform spmdc runs on.
    ``donate_argnums`` / ``donate_argnames`` give those arguments' buffers to the program,
    which writes outputs of the same shape and dtype into them; the donated Arrays are
    deleted by the call (Note [donation] in compiler/stablehlo.py). ``keep_unused`` and
    ``inline`` change nothing: spmdc passes every argument to the executable, and a jit
    called under another transformation is always inlined."""
    check_backend("jit", backend)
    for name, flag in (("keep_unused", keep_unused), ("inline", inline)):
        if not isinstance(flag, bool):
            raise TypeError(f"jit: {name} must be True or False, got {flag!r}{where()}")
    if device is not None:
        if in_shardings is not None or out_shardings is not None:
            raise ValueError(f"jit: device= cannot be combined with in_shardings / "
                             f"out_shardings{where()}")
        check_device("jit", device)
        if isinstance(device, (list, tuple)):
            raise TypeError(f"jit: device= must be one device, got {device!r}{where()}")
    if fun is None:
        return lambda f: Jitted(f, static_argnums, static_argnames, donate_argnums,
                                in_shardings, out_shardings, device,
                                donate_argnames=donate_argnames)
    return Jitted(fun, static_argnums, static_argnames, donate_argnums, in_shardings,
                  out_shardings, device, donate_argnames=donate_argnames)


# --- make_ir -----------------------------------------------------------------------------

def make_ir(fun: Callable[..., Any], static_argnums: Any = ()) -> Callable[..., Func]:
    """``make_ir(f)(*args)`` returns the Func that tracing ``f`` gives (like make_jaxpr)."""
    jitted = Jitted(fun, static_argnums)

    def make(*args: Any, **kwargs: Any) -> Func:
        statics, args, kwargs = jitted._split(args, kwargs)
        func = jitted._trace(statics, args, kwargs)[0]
        return check(func) if checks_enabled() else func
    return make
