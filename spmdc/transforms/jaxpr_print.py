"""JAX's jaxpr syntax: the printer of the jaxpr views (transforms/jaxpr_view.py).

``{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }``: constants in the
first binder group, arguments in the second, one equation per line once the program
does not fit in 80 columns. The layout is a Wadler-style document (text, break, group,
nest) formatted as JAX formats its own; see Note [jaxpr layout]. Variables are named
``a``, ``b``, ... ``z``, ``ba`` ... in the order they are first printed, across nested
jaxprs; literals print as ``1.0:f32[]``; a sub-jaxpr used more than once, or one of more
than ten equations, is printed once in front (``let name = { ... } in``) and referred to
by its name.
"""
from __future__ import annotations

import itertools
import re
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..compiler.ir import dtype_name

__all__ = ["PrintContext", "pp_toplevel", "pp_eqn", "format_doc", "aval_text"]

# Note [jaxpr layout]
# A document is a tree of ("text", s), ("concat", docs), ("break", s), ("group", doc) and
# ("nest", n, doc). Formatting walks it with an indent and a mode: a break in a group
# laid out flat prints its text (a space, "; " between equations), in a broken group a
# newline and the indent. A group is laid out flat when the group alone, flat, fits in
# what is left of the line (80 columns), which is JAX's rule: it checks the group, not the
# rest of the line after it. Matching JAX's document shapes (where its nests and groups
# sit) is what makes the line breaks fall where JAX's do; tests compare with text JAX
# printed.

Doc = tuple
WIDTH = 80
_FLAT, _BREAK = 0, 1


def text(s: str) -> Doc:
    return ("text", s)


def concat(docs: Sequence[Doc]) -> Doc:
    return ("concat", tuple(docs))


def brk(s: str = " ") -> Doc:
    return ("break", s)


def group(doc: Doc) -> Doc:
    return ("group", doc)


def nest(n: int, doc: Doc) -> Doc:
    return ("nest", n, doc)


NIL: Doc = ("concat", ())


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    docs = list(docs)
    if not docs:
        return NIL
    out = [docs[0]]
    for d in docs[1:]:
        out += [sep, d]
    return concat(out)


def _fits(doc: Doc, width: int) -> bool:
    agenda = [doc]
    while width >= 0 and agenda:
        d = agenda.pop()
        kind = d[0]
        if kind in ("text", "break"):
            width -= len(d[1])
        elif kind == "concat":
            agenda.extend(reversed(d[1]))
        else:                                       # group, nest
            agenda.append(d[-1])
    return width >= 0


def format_doc(doc: Doc, width: int = WIDTH) -> str:
    """The document as text (Note [jaxpr layout])."""
    lines: list[str] = []
    line: list[str] = []
    k = 0
    agenda: list[tuple[int, int, Doc]] = [(0, _BREAK, doc)]
    while agenda:
        indent, mode, d = agenda.pop()
        kind = d[0]
        if kind == "text":
            line.append(d[1])
            k += len(d[1])
        elif kind == "concat":
            agenda.extend((indent, mode, c) for c in reversed(d[1]))
        elif kind == "break":
            if mode == _BREAK:
                lines.append("".join(line))
                line, k = [" " * indent], indent
            else:
                line.append(d[1])
                k += len(d[1])
        elif kind == "group":
            agenda.append((indent, _FLAT if _fits(d, width - k) else _BREAK, d[1]))
        else:                                       # nest
            agenda.append((indent + d[1], mode, d[2]))
    lines.append("".join(line))
    return "\n".join(lines)


# --- names --------------------------------------------------------------------------------

def _alphabetic(n: int) -> str:
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class PrintContext:
    """Names given so far (Vars by identity), the shared sub-jaxprs' names, and the
    settings: ``print_shapes`` (binders with their types), ``custom_rules`` (the
    primitives' print rules, which hide params JAX hides)."""

    def __init__(self, print_shapes: bool = True, custom_rules: bool = True) -> None:
        self.print_shapes, self.custom_rules = print_shapes, custom_rules
        self.names: dict[int, str] = {}
        self.keep: list[Any] = []              # keeps named objects alive (ids stay unique)
        self.shared: dict[int, str] = {}
        self.shared_names: set[str] = set()
        self._fresh: Iterator[str] = (name for i in itertools.count()
                                      if (name := _alphabetic(i)) not in self.shared_names)

    def name(self, var: Any) -> str:
        key = id(var)
        if key not in self.names:
            self.names[key] = next(self._fresh)
            self.keep.append(var)
        return self.names[key]


def aval_text(shape: Sequence[int], dtype: Any) -> str:
    """``f32[2,3]``: JAX's short form of an abstract value."""
    return f"{dtype_name(np.dtype(dtype))}[{','.join(str(d) for d in shape)}]"


def _atom_text(atom: Any, ctx: PrintContext) -> str:
    if atom.is_literal:
        value = atom.val
        shown = str(np.asarray(value).item()) if not np.shape(value) else "[...]"
        return f"{shown}:{aval_text(atom.aval.shape, atom.aval.dtype)}"
    if atom.is_dropvar:
        return "_"
    return ctx.name(atom)


def pp_vars(atoms: Sequence[Any], ctx: PrintContext, *, separator: str = "",
            shapes: bool = False) -> Doc:
    def one(a: Any) -> Doc:
        s = _atom_text(a, ctx)
        return text(s + ":" + aval_text(a.aval.shape, a.aval.dtype)) if shapes else text(s)
    return nest(2, group(join(concat([text(separator), group(brk())]),
                              [one(a) for a in atoms])))


# --- equations ----------------------------------------------------------------------------

_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def _value_doc(value: Any, ctx: PrintContext) -> Doc:
    from .jaxpr_view import ClosedJaxpr, Jaxpr
    if type(value) is tuple and value and all(isinstance(j, (Jaxpr, ClosedJaxpr))
                                              for j in value):
        docs = [pp_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, ctx) for j in value]
        return group(concat([nest(2, concat([text("("), brk(""), join(brk(), docs)])),
                             brk(""), text(")")]))
    if isinstance(value, Jaxpr):
        return pp_jaxpr(value, ctx)
    if isinstance(value, ClosedJaxpr):
        return pp_jaxpr(value.jaxpr, ctx)
    if isinstance(value, frozenset):
        return text(f"frozenset({{{', '.join(repr(e) for e in sorted(value))}}})")
    return text(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(value)))


def _kv_pairs(pairs: Sequence[tuple[str, Any]], ctx: PrintContext) -> Doc:
    if not pairs:
        return NIL
    docs = [concat([text(f"{k}="), _value_doc(v, ctx)]) for k, v in pairs]
    return group(concat([nest(2, concat([text("["), brk(""), join(brk(), docs)])),
                         brk(""), text("]")]))


def plain_eqn(eqn: Any, ctx: PrintContext, params: dict[str, Any] | None = None,
              order: Sequence[str] | None = None) -> Doc:
    """An equation as JAX prints it with no rule of its primitive's: params sorted."""
    params = eqn.params if params is None else params
    order = sorted(params) if order is None else order
    lhs = pp_vars(eqn.outvars, ctx, shapes=ctx.print_shapes)        # named first, as JAX names them
    rhs = [text(eqn.primitive.name), _kv_pairs([(k, params[k]) for k in order], ctx),
           concat([text(" "), pp_vars(eqn.invars, ctx)])]
    if eqn.outvars:
        return concat([lhs, text(" = "), *rhs])
    return concat(rhs)


PrintRule = Callable[[Any, PrintContext], Doc]
print_rules: dict[str, PrintRule] = {}
"""JAX primitive name -> how its equations print, where JAX hides or reshapes params."""


def pp_eqn(eqn: Any, ctx: PrintContext) -> Doc:
    rule = print_rules.get(eqn.primitive.name) if ctx.custom_rules else None
    return plain_eqn(eqn, ctx) if rule is None else rule(eqn, ctx)


def _without(*names: str, when: Callable[[Any], bool] = lambda v: True) -> PrintRule:
    def rule(eqn: Any, ctx: PrintContext) -> Doc:
        params = {k: v for k, v in eqn.params.items() if not (k in names and when(v))}
        return plain_eqn(eqn, ctx, params)
    return rule


for _name in ("exp", "exp2", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos",
              "tan", "sqrt", "rsqrt", "cbrt"):
    print_rules[_name] = _without("accuracy", when=lambda v: v is None)
print_rules["mul"] = _without("out_dtype", when=lambda v: v is None)
print_rules["convert_element_type"] = _without("sharding")


def _broadcast_in_dim_rule(eqn: Any, ctx: PrintContext) -> Doc:
    params = {k: v for k, v in eqn.params.items() if k not in ("shape", "sharding")}
    if not params.get("broadcast_dimensions", True):
        del params["broadcast_dimensions"]
    return plain_eqn(eqn, ctx, params)


def _dot_general_rule(eqn: Any, ctx: PrintContext) -> Doc:
    params = {k: v for k, v in eqn.params.items() if v is not None and k != "out_sharding"}
    (xc, yc), (xb, yb) = eqn.params["dimension_numbers"]
    params["dimension_numbers"] = ((list(xc), list(yc)), (list(xb), list(yb)))
    return plain_eqn(eqn, ctx, params)


def _function_name(f: Any) -> str:
    return getattr(f, "__name__", None) or getattr(f, "name", None) or str(f)


def _custom_call_rule(rules: dict[str, str]) -> PrintRule:
    """custom_jvp_call / custom_vjp_call: ``name=`` (the function's) first, then the
    params with the rule functions shown by name."""
    def rule(eqn: Any, ctx: PrintContext) -> Doc:
        params = dict(eqn.params)
        if not params.get("num_consts"):
            params.pop("num_consts", None)
        params.pop("out_trees", None)
        for param, shown in rules.items():
            if param in params:
                params[shown] = _function_name(params.pop(param))
        order = sorted(params)
        params["name"] = eqn.params["call_jaxpr"].jaxpr.name
        return plain_eqn(eqn, ctx, params, ["name", *order])
    return rule


def _custom_lin_rule(eqn: Any, ctx: PrintContext) -> Doc:
    """custom_lin as JAX prints it: without the output types, ``bwd`` by name."""
    params = {k: v for k, v in eqn.params.items() if k not in ("out_types", "perturbed")}
    params["bwd"] = _function_name(params["bwd"])
    return plain_eqn(eqn, ctx, params)


print_rules["broadcast_in_dim"] = _broadcast_in_dim_rule
print_rules["dot_general"] = _dot_general_rule
print_rules["custom_jvp_call"] = _custom_call_rule({"jvp_jaxpr_fun": "jvp"})
print_rules["custom_vjp_call"] = _custom_call_rule({"fwd_jaxpr_thunk": "fwd", "bwd": "bwd"})
print_rules["custom_lin"] = _custom_lin_rule


# --- jaxprs -------------------------------------------------------------------------------

def _skeleton(jaxpr: Any, ctx: PrintContext) -> Doc:
    constvars = pp_vars(jaxpr.constvars, ctx, shapes=ctx.print_shapes)
    invars = pp_vars(jaxpr.invars, ctx, shapes=ctx.print_shapes)
    eqns = join(brk("; "), [pp_eqn(e, ctx) for e in jaxpr.eqns])
    outvars = concat([text("("), pp_vars(jaxpr.outvars, ctx, separator=","),
                      text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return group(concat([nest(2, concat([
        text("{ "), text("lambda "), constvars, text("; "), invars, text(". "), text("let"),
        nest(2, concat([brk(), eqns])), brk(), text("in "), outvars])), text(" }")]))


def pp_jaxpr(jaxpr: Any, ctx: PrintContext) -> Doc:
    name = ctx.shared.get(id(jaxpr))
    return text(name) if name is not None else _skeleton(jaxpr, ctx)


def pp_toplevel(top: Any, print_shapes: bool = True, custom_rules: bool = True) -> Doc:
    """``top`` with its shared sub-jaxprs in front, as JAX prints a jaxpr."""
    from .jaxpr_view import jaxprs_in_params
    ctx = PrintContext(print_shapes, custom_rules)
    names: dict[int, str] = {}
    counts: Counter[int] = Counter()
    objects: dict[int, Any] = {}
    queue = deque([top])
    while queue:
        jaxpr = queue.popleft()
        objects[id(jaxpr)] = jaxpr
        counts[id(jaxpr)] += 1 + (jaxpr is not top and len(jaxpr.eqns) > 10)
        for eqn in jaxpr.eqns:
            label = eqn.params.get("name")
            for sub in jaxprs_in_params(eqn.params):
                queue.append(sub)
                if isinstance(label, str):
                    names.setdefault(id(sub), label.strip("<>"))
    used: Counter[str] = Counter()
    shared = []
    for key, count in counts.items():
        if count == 1:
            continue
        name = names.get(key, "jaxpr")
        if used[name] > 0:
            n = used[name]
            used[name] += 1
            name += str(n)
        used[name] += 1
        ctx.shared_names.add(name)
        ctx.shared[key] = name
        shared.append((name, objects[key]))
    docs = [concat([text("let "), text(name), text(" = "), _skeleton(jaxpr, ctx),
                    text(" in"), brk()]) for name, jaxpr in shared]
    return concat([*docs, pp_jaxpr(top, ctx)])
