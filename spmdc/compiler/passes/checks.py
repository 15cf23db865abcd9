"""Discharging checks: the pass that turns a program's ``check`` equations (and, when
asked, automatic checks of division by zero and of NaNs) into an error value that the
program returns. See Note [checks as error values]."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..builder import Builder, lit
from ..ir import Atom, Eqn, Func, TensorType, Var, dtype_kind
from ..primitives.checks import CheckSite, check_p
from ..primitives.core import registry
from .autodiff import zeros
from .checks_index import INDEXING_PRIMITIVES, checkable, index_check

__all__ = ["discharge_checks", "NAN_PRIMITIVES"]

# Note [checks as error values]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``checkify.check`` binds ``check(failed, *payload, site)``, an effect that no program
# may run (its lowering is JAX's "not functionalized" error). ``checkify(f)`` traces
# ``f`` and runs ``discharge_checks`` over the program: every check site (a ``check``
# equation, or an automatic check the pass adds after a division, a primitive that may
# make a NaN, or an indexing primitive: passes/checks_index.py) gets an index, and the
# program threads one error state through its
# equations: ``code`` (int32, -1 while nothing failed, else the index of the site that
# failed first) and one payload slot per site (the values the site's message is
# formatted with). A site that fails while ``code`` is -1 sets ``code`` and its payload;
# later failures change nothing, so the error is the first failure in execution order
# (for straight-line code, JAX's order, which is the order the checks were traced in).
# The state enters cond branches, while bodies and scan bodies as extra operands and
# carries, so a check inside them reports its first failing iteration. The program's
# outputs are its own, then ``code``, then the payloads; the frontend
# (transforms/checkify.py) wraps them as the ``Error`` value, whose static part lists
# the sites. The other transformations see ``check`` as an effect with no results:
# ``vmap`` makes a batch of checks one check (the last failing element's payload),
# differentiation keeps it where the primal runs, and ``jit`` inlines it into the
# enclosing trace, so that checkify of jit, jit of checkify, vmap and grad compose.
# A custom_jvp / custom_vjp function or a checkpoint holding a site is discharged by
# inlining the function it applies (its ``call``), so the checks inside it run.
# The checks of a while loop's cond_fun run where it runs (``_while``).
# Differences from JAX: a derivative taken *outside* checkify of such a function then
# differentiates its primal code instead of its custom rule (inside checkify, the rule
# was already applied), and loses the rematerialisation; sub-programs of shard_map and
# pmap are left as they are (a check there stays undischarged); among failures of
# different sites in one loop, the first executed wins (JAX keeps the earliest traced).

NAN_PRIMITIVES = frozenset(registry[n] for n in (
    "acos", "acosh", "add", "asin", "asinh", "atan2", "atan", "atanh", "bessel_i0e",
    "bessel_i1e", "cbrt", "conv_general_dilated", "cos", "cosh", "cummax", "cummin",
    "cumprod", "cumsum", "digamma", "div", "dot_general", "erf_inv", "erf", "erfc", "exp",
    "expm1", "fft", "integer_pow", "lgamma", "log1p", "log", "logistic", "mul", "pad",
    "pow", "psum", "reduce_prod", "reduce_sum", "reduce_window", "reduce_window_sum",
    "rem", "rsqrt", "sin", "sinh", "sqrt", "sub", "tan", "tanh") if n in registry)
"""The primitives whose floating results the NaN checks inspect (JAX's list)."""

_and_p, _or_p, _div_p = registry["and"], registry["or"], registry["div"]
_cond_p, _while_p, _scan_p = registry["cond"], registry["while"], registry["scan"]
_CALLS = frozenset({registry["custom_jvp_call"], registry["custom_vjp_call"],
                    registry["checkpoint"]})          # primitives that apply ``call``
_I32 = np.dtype(np.int32)


class _Discharge:
    def __init__(self, enabled: frozenset[str]):
        self.enabled = enabled
        self.sites: list[CheckSite] = []
        self.payload_types: list[tuple[TensorType, ...]] = []
        self.at: dict[int, list[int]] = {}          # id(eqn) -> its sites
        self.holds: dict[int, bool] = {}            # id(func) -> has a site inside

    # --- sites ---------------------------------------------------------------------------

    def _add(self, eqn: Eqn, site: CheckSite, payload: tuple[TensorType, ...] = ()) -> None:
        self.at.setdefault(id(eqn), []).append(len(self.sites))
        self.sites.append(site)
        self.payload_types.append(payload)

    def collect(self, func: Func) -> bool:
        """Give every site of ``func`` an index; whether ``func`` holds one."""
        if id(func) in self.holds:
            return self.holds[id(func)]
        found = False
        for eqn in func.eqns:
            if eqn.prim is check_p:
                if "check" in self.enabled:      # else it stays, an effect (as JAX)
                    self._add(eqn, eqn.params["site"], tuple(a.type for a in eqn.inputs[1:]))
            elif eqn.prim is _cond_p:
                inner = [self.collect(br) for br in eqn.params["branches"]]
                found = found or any(inner)
            elif eqn.prim is _while_p:
                in_cond = self.collect(eqn.params["cond_func"])
                found = self.collect(eqn.params["body_func"]) or in_cond or found
            elif eqn.prim is _scan_p:
                found = self.collect(eqn.params["body"]) or found
            elif eqn.prim in _CALLS:
                found = self.collect(eqn.params["call"]) or found
            else:
                if "div" in self.enabled and eqn.prim is _div_p:
                    self._add(eqn, CheckSite("div"))
                if "oob" in self.enabled and eqn.prim in INDEXING_PRIMITIVES and checkable(eqn):
                    self._add(eqn, CheckSite("oob", prim_name=eqn.prim.name,
                                             operand_shape=eqn.inputs[0].type.shape),
                              (TensorType((3,), _I32),))
                if ("nan" in self.enabled and eqn.prim in NAN_PRIMITIVES
                        and any(_is_float(v.type) for v in eqn.outputs)):
                    self._add(eqn, CheckSite("nan", prim_name=eqn.prim.name))
            found = found or id(eqn) in self.at
        self.holds[id(func)] = found
        return found

    # --- the error state -----------------------------------------------------------------

    def state_types(self) -> list[TensorType]:
        return [TensorType((), _I32), *[t for ts in self.payload_types for t in ts]]

    def initial_state(self, b: Builder) -> list[Atom]:
        return [lit(-1, _I32), *[zeros(b, t) for ts in self.payload_types for t in ts]]

    def _update(self, b: Builder, state: list[Atom], k: int, failed: Atom,
                payload: list[Atom]) -> list[Atom]:
        code = state[0]
        fresh = b.bind(_and_p, b.eq(code, lit(-1, _I32)), failed)
        new = [b.select(fresh, lit(k, _I32), code), *state[1:]]
        start = 1 + sum(len(ts) for ts in self.payload_types[:k])
        if len(payload) == len(self.payload_types[k]):
            for j, x in enumerate(payload):
                new[start + j] = b.select(fresh, x, state[start + j])
        return new

    # --- rewriting -----------------------------------------------------------------------

    def emit(self, b: Builder, func: Func, args: list[Atom], state: list[Atom]
             ) -> tuple[list[Atom], list[Atom]]:
        env: dict[Var, Atom] = dict(zip(func.inputs, args, strict=True))

        def read(a: Any) -> Atom:
            return env[a] if isinstance(a, Var) else a

        for eqn in func.eqns:
            ins = [read(a) for a in eqn.inputs]
            if eqn.prim is check_p and id(eqn) in self.at:
                for k in self.at[id(eqn)]:
                    state = self._update(b, state, k, ins[0], ins[1:])
                continue
            if eqn.prim in _CALLS and self.holds[id(eqn.params["call"])]:
                outs, state = self.emit(b, eqn.params["call"], ins, state)
            elif eqn.prim in (_cond_p, _while_p, _scan_p) and self._holds_inside(eqn):
                outs, state = self._control_flow(b, eqn, ins, state)
            else:
                res = b.bind(eqn.prim, *ins, **eqn.params)
                outs = list(res) if eqn.prim.multiple_results else [res]
                for k in self.at.get(id(eqn), ()):
                    if self.sites[k].kind == "oob":
                        failed, payload = index_check(b, eqn, ins)
                    else:
                        failed, payload = self._automatic(b, self.sites[k], ins, outs), []
                    state = self._update(b, state, k, failed, payload)
            env.update(zip(eqn.outputs, outs, strict=True))
        return [read(a) for a in func.outputs], state

    def _holds_inside(self, eqn: Eqn) -> bool:
        p = eqn.params
        subs = (p["branches"] if eqn.prim is _cond_p else
                [p["body_func"], p["cond_func"]] if eqn.prim is _while_p else [p["body"]])
        return any(self.holds[id(f)] for f in subs)

    def _automatic(self, b: Builder, site: CheckSite, ins: list[Atom],
                   outs: list[Atom]) -> Atom:
        if site.kind == "div":
            y = ins[1]
            return _any(b, b.eq(y, lit(0, y.type.dtype)))
        flags = [_any(b, b.ne(o, o)) for o in outs if _is_float(o.type)]
        failed = flags[0]
        for f in flags[1:]:
            failed = b.bind(_or_p, failed, f)
        return failed

    def _while(self, b: Builder, eqn: Eqn, ins: list[Atom], state: list[Atom]
               ) -> tuple[list[Atom], list[Atom]]:
        """A while loop with the state as extra carry. The checks of ``cond_fun`` run
        where it runs: once on the initial carry, and after every step of the body (the
        body gets the condition's constants as constants of its own)."""
        p, n = eqn.params, len(state)
        nc, nb_ = p["cond_nconsts"], p["body_nconsts"]
        cond_consts, body_consts, carry = ins[:nc], ins[nc:nc + nb_], ins[nc + nb_:]
        cond_checked = self.thread(p["cond_func"])
        state = b.inline(cond_checked, [*cond_consts, *carry, *state])[1:]
        step = Builder(p["body_func"].name)
        b_consts = [step.input(a.type) for a in body_consts]
        c_consts = [step.input(a.type) for a in cond_consts]
        c_carry = [step.input(a.type) for a in carry]
        c_state = [step.input(t) for t in self.state_types()]
        new = step.inline(self.thread(p["body_func"]), [*b_consts, *c_carry, *c_state])
        new_carry, new_state = new[:len(carry)], new[len(carry):]
        new_state = step.inline(cond_checked, [*c_consts, *new_carry, *new_state])[1:]
        body = step.build([*new_carry, *new_state])
        test = Builder(p["cond_func"].name)         # the condition alone: checks ran above
        args = [test.input(t) for t in (*p["cond_func"].in_types, *self.state_types())]
        cond = test.build(test.inline(cond_checked, args)[:1])
        res = list(b.bind(_while_p, *cond_consts, *body_consts, *cond_consts, *carry, *state,
                          cond_func=cond, body_func=body, cond_nconsts=nc,
                          body_nconsts=nb_ + nc))
        return res[:-n], res[-n:]

    def thread(self, func: Func) -> Func:
        """``func`` taking and returning the error state after its own operands/results."""
        nb = Builder(func.name)
        args = [nb.input(t) for t in func.in_types]
        state = [nb.input(t) for t in self.state_types()]
        outs, state = self.emit(nb, func, args, state)
        return nb.build([*outs, *state])

    def _control_flow(self, b: Builder, eqn: Eqn, ins: list[Atom], state: list[Atom]
                      ) -> tuple[list[Atom], list[Atom]]:
        p, n = eqn.params, len(state)
        if eqn.prim is _cond_p:
            branches = tuple(self.thread(br) for br in p["branches"])
            res = list(b.bind(_cond_p, *ins, *state, branches=branches))
            return res[:-n], res[-n:]
        if eqn.prim is _while_p:
            return self._while(b, eqn, ins, state)
        nc, ncarry = p["num_consts"], p["num_carry"]
        body = self.thread(p["body"])
        consts, carry, xs = ins[:nc], ins[nc:nc + ncarry], ins[nc + ncarry:]
        # the threaded body takes consts, carry, xs, state: reorder to consts, carry+state, xs
        body = _state_after_carry(body, nc, ncarry, n)
        res = list(b.bind(_scan_p, *consts, *carry, *state, *xs, body=body,
                          length=p["length"], reverse=p["reverse"], num_consts=nc,
                          num_carry=ncarry + n))
        return res[:ncarry] + res[ncarry + n:], res[ncarry:ncarry + n]


def _is_float(t: TensorType) -> bool:
    return dtype_kind(t.dtype) in "fc"


def _any(b: Builder, x: Atom) -> Atom:
    return x if x.type.ndim == 0 else b.reduce_or(x, axes=tuple(range(x.type.ndim)))


def _state_after_carry(body: Func, nc: int, ncarry: int, n: int) -> Func:
    """A scan body threaded as (consts, carry, xs, state) -> (carry, ys, state), made
    (consts, carry, state, xs) -> (carry, state, ys)."""
    ins = list(body.inputs)
    xs_end = len(ins) - n
    order = ins[:nc + ncarry] + ins[xs_end:] + ins[nc + ncarry:xs_end]
    outs = list(body.outputs)
    outs = outs[:ncarry] + outs[len(outs) - n:] + outs[ncarry:len(outs) - n]
    return Func(body.name, tuple(order), body.eqns, tuple(outs))


def discharge_checks(func: Func, enabled: frozenset[str]) -> tuple[Func, list[CheckSite]]:
    """``func`` returning, after its outputs, the error code and the payloads of its check
    sites; the sites. ``enabled`` holds ``'check'``, ``'div'``, ``'nan'``, ``'oob'``. See Note
    [checks as error values]."""
    d = _Discharge(enabled)
    d.collect(func)
    b = Builder(func.name)
    args = [b.input(t) for t in func.in_types]
    outs, state = d.emit(b, func, args, d.initial_state(b))
    return b.build([*outs, *state]), d.sites
