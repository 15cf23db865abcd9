"""``jax_explain_cache_misses``: why a jitted function was traced again.

Note [explaining a retrace]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
With the option on, JAX logs a WARNING for every miss of its tracing cache: "TRACING
CACHE MISS at <the call's file:line:column (function)>:", then either "never seen
function: <name> id=<id> defined at <file:line>" (the first trace; with a hint when
another function defined on the same line was traced before, a function re-created
every step) or "for <name> defined at <file:line>", "all previously seen cache keys
differ. For the closest previous key:" and what differs from the closest previous key:
the tracing context (x64, promotion, precision), the input pytree, or the input types,
one line per argument (``* at x, now f32[4] and before f32[3]``).

spmdc's jit keys its cache by the call's pytree, static arguments, device, the
options a program depends on, and each leaf's type (``Jitted._call`` in jit.py, whose
key this module reads in that order). ``explain`` compares a missing key with each key
the function's cache holds, ranks the differences as JAX does (context, then pytree,
then static arguments, then types; fewer differences first) and logs JAX's text for
the closest. Static arguments are part of JAX's pytree; spmdc names them apart.
"""
from __future__ import annotations

import inspect
import logging
from typing import Any

from ..core.tree import keystr, tree_leaves_with_path
from ..errors import is_library_file, user_source
from ..runtime.compile_log import fun_source

__all__ = ["explain"]

_log = logging.getLogger("jax._src.interpreters.partial_eval")     # JAX's (compile_log.py)
_CONTEXT = ("device", "jax_enable_x64", "jax_numpy_dtype_promotion",
            "jax_numpy_rank_promotion", "jax_default_matmul_precision",
            "jax_softmax_custom_jvp and the user contexts")
_TYPES = 2 + len(_CONTEXT)          # where the leaves' types start in jit's key
_callsites_missed: set[str] = set()


def _type_text(leaf_type: Any) -> str:
    t, weak = leaf_type
    return f"{t}{{weak_type=True}}" if weak else str(t)


def _arg_names(fun: Any, statics: tuple[Any, ...], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> list[str]:
    """A name per leaf of the dynamic ``(args, kwargs)``: the parameter's (counted with
    the static arguments taken out) and the path inside it."""
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    static_at = {i for i, _ in statics if isinstance(i, int)}
    positions = [i for i in range(len(args) + len(static_at)) if i not in static_at]
    names = []
    for path, _ in tree_leaves_with_path((args, kwargs)):
        where, inner = path[1], keystr(path[2:])
        if getattr(path[0], "idx", None) == 0:
            at = positions[where.idx]
            names.append((params[at] if at < len(params) else f"args[{at}]") + inner)
        else:
            names.append(f"{where.key}{inner}")
    return names


def _differences(new: tuple[Any, ...], old: tuple[Any, ...], names: list[str]
                 ) -> tuple[int, int, str]:
    """(severity, how many, text) of what differs between two keys of jit's cache."""
    (new_tree, new_statics, *new_ctx), (old_tree, old_statics, *old_ctx) = \
        new[:_TYPES], old[:_TYPES]
    changed = [(n, a, b) for n, a, b in zip(_CONTEXT, new_ctx, old_ctx, strict=True)
               if a != b]
    if changed:
        return 0, len(changed), ("Tracing context doesn't match, e.g. due to config or "
                                 "context manager.\n" + "\n".join(
                                     f"  * {n} differs: now {a} and before {b}"
                                     for n, a, b in changed))
    if new_tree != old_tree:
        return 1, 1, (f"different input pytree:\n  * now {new_tree} and before "
                      f"{old_tree}, so the structures do not match")
    if new_statics != old_statics:
        old_map = dict(old_statics)
        missing = object()
        lines = [f"  * at static argument {at!r}, now {v!r} and before "
                 + ("not given" if old_map.get(at, missing) is missing else repr(old_map[at]))
                 for at, v in new_statics if old_map.get(at, missing) != v]
        return 2, len(lines), "different static arguments:\n" + "\n".join(lines)
    lines = [f"  * at {name}, now {_type_text(a)} and before {_type_text(b)}"
             for name, a, b in zip(names, new[_TYPES:], old[_TYPES:], strict=True) if a != b]
    weak = any(a[1] != b[1] for a, b in zip(new[_TYPES:], old[_TYPES:], strict=True))
    text = "different input types:\n" + "\n".join(lines)
    if weak:
        text += "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
    return 3, len(lines), text


def explain(fun: Any, name: str, seen: list[Any], key: tuple[Any, ...],
            args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Log why the call with cache key ``key`` missed ``fun``'s cache, whose keys are
    ``seen`` (See Note [explaining a retrace])."""
    code = getattr(inspect.unwrap(fun), "__code__", None)
    if code is not None and is_library_file(code.co_filename):
        return                  # spmdc's own jits (an eager operation's), as JAX skips its
    source = user_source()
    callsite = source.located() if hasattr(source, "located") else str(source)
    lines = [f"TRACING CACHE MISS at {callsite}:"]
    defined = f" defined at {fun_source(fun)}"
    if not seen:
        lines.append(f"  never seen function:\n    {name} id={id(fun)}{defined}")
        if callsite in _callsites_missed:
            lines.append("  but seen another function defined on the same line; maybe the "
                         "function is\n  being re-defined repeatedly, preventing caching?")
        else:
            _callsites_missed.add(callsite)
    else:
        names = _arg_names(fun, key[1], args, kwargs)
        closest = min(_differences(key, old, names) for old in seen)
        lines.append(f"  for {name}{defined}")
        lines.append("  all previously seen cache keys differ. For the closest previous "
                     "key:")
        lines.append("  " + closest[2])
    _log.warning("\n".join(lines))
