"""``lax.custom_root`` and ``lax.custom_linear_solve``: solutions of equations found by a
user's solver, differentiated implicitly (never through the solver's iterations), as in
JAX.

custom_root: ``x* = solve(f, initial_guess)`` with ``f(x*) = 0``. Its tangent, by the
implicit function theorem, is ``-J^{-1} (df/dparams . dparams)`` with ``J`` the
Jacobian of ``f`` in ``x`` at ``x*``; ``tangent_solve(g, y)`` applies ``J^{-1}`` given
``g``, the linearization of ``f`` there. The initial guess has no influence on the
solution, so no derivative.

custom_linear_solve: ``x = solve(matvec, b)`` with ``matvec(x) = b`` for a linear
``matvec``. Differentiating ``matvec(x) = b`` gives ``dx = solve(matvec, db - dmatvec(x))``
(forward mode); its transpose (reverse mode) solves with ``transpose_solve`` and the
transposed ``matvec`` (``solve`` itself when ``symmetric``).

Both closure-convert the functions (``closure_convert``), so the parameters they close
over (a model's weights, the matrix of a linear map) get their derivatives.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.operands import dtype_of, full, shape_of
from ..core.tracing import where
from ..core.tree import tree_flatten, tree_map, tree_structure
from ..transforms.custom_derivatives import closure_convert, custom_jvp, custom_vjp
from ..transforms.forward import jvp, linear_transpose, linearize

__all__ = ["custom_root", "custom_linear_solve"]


def _zeros_like(x: Any) -> Any:
    return full(shape_of(x), 0, dtype_of(x))


def _check_tree(what: str, got: Any, want: Any) -> None:
    if tree_structure(got) != tree_structure(want):
        raise TypeError(f"{what} must have the same structure as the initial guess / b: "
                        f"{tree_structure(got)} vs {tree_structure(want)}{where()}")


def custom_root(f: Callable[[Any], Any], initial_guess: Any,
                solve: Callable[[Callable[[Any], Any], Any], Any],
                tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
                has_aux: bool = False) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, differentiated implicitly (module
    docstring); with ``has_aux``, ``solve`` returns ``(solution, aux)`` and aux gets no
    derivative."""
    _check_tree("f's output", f(initial_guess), initial_guess)
    f_conv, f_params = closure_convert(f, initial_guess)
    # the solver's own closed-over values are arguments too (never differentiated)
    solve_conv, s_params = closure_convert(lambda g: solve(f, g), initial_guess)

    @custom_jvp
    def root(params: list[Any], solver: list[Any], guess: Any) -> Any:
        return solve_conv(guess, *solver)

    def root_jvp(primals: Any, tangents: Any) -> Any:
        params, solver, guess = primals
        d_params = tangents[0]
        out = root(params, solver, guess)
        solution = out[0] if has_aux else out
        _, rhs = jvp(lambda *p: f_conv(solution, *p), tuple(params), tuple(d_params))
        _, f_lin = linearize(lambda x: f_conv(x, *params), solution)
        d_solution = tree_map(lambda v: -v, tangent_solve(f_lin, rhs))
        if has_aux:
            return out, (d_solution, tree_map(_zeros_like, out[1]))
        return out, d_solution
    root.defjvp(root_jvp)
    out = root(list(f_params), list(s_params), initial_guess)
    _check_tree("solve's solution", out[0] if has_aux else out, initial_guess)
    return out


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any,
                        solve: Callable[[Callable[[Any], Any], Any], Any],
                        transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None
                        = None, symmetric: bool = False, has_aux: bool = False) -> Any:
    """``solve(matvec, b)``, the ``x`` with ``matvec(x) = b``, differentiated implicitly
    (module docstring); reverse mode needs ``transpose_solve`` (or ``symmetric=True``);
    with ``has_aux``, ``solve`` returns ``(x, aux)``."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    leaves, _ = tree_flatten(b)
    if not leaves:
        raise ValueError(f"custom_linear_solve: b must hold at least one array{where()}")
    _check_tree("matvec's output", matvec(b), b)
    mv_conv, mv_params = closure_convert(matvec, b)
    solve_conv, s_params = closure_convert(lambda rhs: solve(matvec, rhs), b)
    if transpose_solve is not None:
        vecmat = linear_transpose(matvec, b)
        tsolve = transpose_solve
        t_conv, t_params = closure_convert(lambda ct: tsolve(lambda y: vecmat(y)[0], ct), b)
    else:
        t_conv, t_params = None, []

    def plain(out: Any) -> Any:
        return out[0] if has_aux else out

    @custom_vjp
    def linear(solver: list[Any], transposer: list[Any], rhs: Any) -> Any:
        """x(rhs): linear in rhs, transposed by transpose_solve."""
        return plain(solve_conv(rhs, *solver))

    def linear_fwd(solver: list[Any], transposer: list[Any], rhs: Any) -> Any:
        return linear(solver, transposer, rhs), (solver, transposer)

    def linear_bwd(res: Any, ct: Any) -> Any:
        solver, transposer = res
        if t_conv is None:
            raise TypeError(f"custom_linear_solve: reverse mode needs transpose_solve= (or "
                            f"symmetric=True for a symmetric matvec){where()}")
        return (tree_map(_zeros_like, solver), tree_map(_zeros_like, transposer),
                plain(t_conv(ct, *transposer)))
    linear.defvjp(linear_fwd, linear_bwd)

    @custom_jvp
    def solve_all(params: list[Any], solver: list[Any], transposer: list[Any],
                  rhs: Any) -> Any:
        return solve_conv(rhs, *solver)

    def solve_jvp(primals: Any, tangents: Any) -> Any:
        params, solver, transposer, rhs = primals
        d_params, d_rhs = tangents[0], tangents[3]
        out = solve_all(params, solver, transposer, rhs)
        x = plain(out)
        _, d_matvec = jvp(lambda *p: mv_conv(x, *p), tuple(params), tuple(d_params))
        dx = linear(solver, transposer, tree_map(lambda u, v: u - v, d_rhs, d_matvec))
        if has_aux:
            return out, (dx, tree_map(_zeros_like, out[1]))
        return out, dx
    solve_all.defjvp(solve_jvp)
    out = solve_all(list(mv_params), list(s_params), list(t_params), b)
    _check_tree("solve's solution", plain(out), b)
    return out
