"""Check linear algebra and host callbacks on a CUDA GPU against NumPy, and against JAX on
the same GPU where jax is importable. One line per feature; the exit status is 1 if any
check failed. About 30 s:

    python tools/gpu_linalg_check.py      (SPMDC_PLATFORM=cuda unless set; =cpu: a dry run)

Linear algebra: every program of tests/cuda_lowering_cases.py (cholesky, lu, qr, eigh,
svd on both of its kernels, triangular_solve, eig), plus solve, inv, det and a gradient
through cholesky. Decompositions are checked by what defines them (reconstruction,
orthogonality, triangles) and by their unique parts against NumPy (factors up to signs:
their absolute values). JAX runs first, in a subprocess (the two clients would otherwise
share the plugin and the GPU's memory), and its results are compared the same way.
Callbacks: debug.print, pure_callback (also under vmap) and io_callback (ordered).
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import time
import types
from contextlib import redirect_stdout

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import cuda_lowering_cases as cases  # noqa: E402


def extra_cases(lib):
    """Programs built on the decompositions, as ``name -> (fn, args)``."""
    a = cases._spd(5, 5, dtype=np.float64)
    b = cases._general(5, 2, dtype=np.float64)
    return {
        "solve_f64": (lib.jnp.linalg.solve, [a, b]),
        "inv_f32": (lib.jnp.linalg.inv, [a.astype(np.float32)]),
        "det_f64": (lib.jnp.linalg.det, [a]),
        "grad_logdet_cholesky_f64": (lib.grad(
            lambda x: 2 * lib.jnp.sum(lib.jnp.log(lib.jnp.diagonal(
                lib.lax.linalg.cholesky(x))))), [a]),
    }


def all_cases(lib):
    out = {name: (make(lib), args) for name, (make, args) in cases.CASES.items()}
    out.update(extra_cases(lib))
    return out


def run_all(lib, x64) -> dict[str, list[np.ndarray]]:
    """Each case's outputs as NumPy arrays (or the error's text)."""
    results = {}
    for name, (fn, args) in all_cases(lib).items():
        try:
            with x64():
                out = lib.jit(fn)(*args)
            out = out if isinstance(out, (tuple, list)) else [out]
            results[name] = [np.asarray(o) for o in out]
        except Exception as e:       # noqa: BLE001  (reported per case)
            results[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return results


# --- what the outputs must satisfy ---------------------------------------------------------

def _tol(x) -> float:
    return 2e-3 if np.asarray(x).dtype in (np.float32, np.complex64) else 1e-9


def _close(x, y, tol) -> float:
    """The largest error of ``x`` against ``y`` relative to ``y``'s scale; inf when the
    shapes differ."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        return np.inf
    scale = max(1.0, float(np.abs(y).max())) if y.size else 1.0
    return float(np.abs(x - y).max()) / scale if x.size else 0.0


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _orthonormal_columns(q) -> float:
    k = q.shape[-1]
    return _close(_mT(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), 1)


def properties(name: str, args, outs) -> list[float]:
    """Errors (each to be below the dtype's tolerance) of ``outs`` for case ``name``."""
    a = np.asarray(args[0], np.float64)
    if name.startswith("cholesky"):
        (low,) = outs
        return [_close(low @ _mT(low), a, 1), _close(low, np.tril(low), 1),
                _close(low, np.linalg.cholesky(a), 1)]
    if name.startswith("lu"):
        lu, pivots, perm = outs
        m, n = a.shape[-2:]
        k = min(m, n)
        low = np.tril(lu[..., :, :k], -1) + np.eye(m, k)
        up = np.triu(lu[..., :k, :])
        permuted = np.take_along_axis(a, perm[..., :, None].astype(np.int64), axis=-2)
        errors = [_close(low @ up, permuted, 1)]
        try:
            from scipy.linalg import lu_factor
            for i in np.ndindex(a.shape[:-2]):
                errors.append(float(np.any(lu_factor(a[i])[1] != pivots[i])))
        except ImportError:
            pass
        return errors
    if name.startswith("qr"):
        q, r = outs
        ref_r = np.linalg.qr(a, mode="complete" if q.shape[-1] == a.shape[-2] else "reduced")[1]
        return [_close(q @ r, a, 1), _orthonormal_columns(q), _close(r, np.triu(r), 1),
                _close(np.abs(r), np.abs(ref_r), 1)]
    if name.startswith("eigh"):
        v, w = outs
        return [_close(w, np.linalg.eigvalsh(a), 1), _orthonormal_columns(v),
                _close(a @ v, v * w[..., None, :], 1)]
    if name.startswith("svd"):
        ref_s = np.linalg.svd(a, compute_uv=False)
        if len(outs) == 1:
            return [_close(outs[0], ref_s, 1)]
        u, s, vt = outs            # lax.linalg.svd's order
        k = s.shape[-1]
        return [_close(s, ref_s, 1), _orthonormal_columns(u), _orthonormal_columns(_mT(vt)),
                _close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, 1)]
    if name.startswith("triangular_solve"):
        (x,) = outs
        rhs = np.asarray(args[1], np.float64)
        if "left_lower" in name:            # a x = b, a lower triangular
            return [_close(np.tril(a) @ x, rhs, 1)]
        op = _mT(np.triu(a, 1) + np.eye(a.shape[-1]))       # x op(a) = b, unit diagonal
        return [_close(x @ op, rhs, 1)]
    if name.startswith("eig"):
        w = outs[0]
        order = np.argsort(w, axis=-1)
        ref = np.sort_complex(np.linalg.eigvals(a))
        errors = [_close(np.take_along_axis(w, order, -1), ref, 1)]
        if len(outs) == 2:
            v = outs[1]
            errors.append(_close(a.astype(v.dtype) @ v, v * w[..., None, :], 1))
        return errors
    if name == "solve_f64":
        return [_close(a @ outs[0], np.asarray(args[1]), 1)]
    if name == "inv_f32":
        return [_close(outs[0], np.linalg.inv(a), 1)]
    if name == "det_f64":
        return [_close(outs[0], np.linalg.det(a), 1)]
    if name == "grad_logdet_cholesky_f64":
        return [_close(outs[0], np.linalg.inv(a), 1)]
    raise KeyError(name)


def unique_parts(name: str, outs) -> list[np.ndarray]:
    """What two correct implementations agree on: the values, factors up to signs."""
    if name.startswith(("qr", "eigh")):
        return [np.abs(o) for o in outs]
    if name.startswith("svd") and len(outs) == 3:
        u, s, vt = outs
        k = s.shape[-1]
        return [s, np.abs(u[..., :, :k]), np.abs(vt[..., :k, :])]
    if name.startswith("eig"):
        return [np.sort_complex(outs[0])]
    return list(outs)


# --- JAX, in a subprocess ------------------------------------------------------------------

def jax_main(path: str) -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_enable_x64", True)
    lib = types.SimpleNamespace(jit=jax.jit, grad=jax.grad, lax=lax, jnp=jnp)
    results = run_all(lib, lambda: _nothing())
    arrays = {"#backend": np.array(jax.default_backend())}
    for name, outs in results.items():
        if isinstance(outs, str):
            arrays[f"{name}#error"] = np.array(outs)
        else:
            for i, o in enumerate(outs):
                arrays[f"{name}#{i}"] = o
    np.savez(path, **arrays)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def jax_results(platform: str, timeout: float) -> tuple[dict, str]:
    try:
        import importlib.util
        if importlib.util.find_spec("jax") is None:
            return {}, "jax is not installed"
    except ImportError:
        return {}, "jax is not importable"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "jax.npz")
        env = dict(os.environ, JAX_PLATFORMS=platform, XLA_PYTHON_CLIENT_PREALLOCATE="false")
        try:
            done = subprocess.run([sys.executable, __file__, "--jax", path], env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {}, f"JAX took more than {timeout:.0f} s"
        if done.returncode != 0:
            return {}, "JAX failed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:200]
        data = np.load(path)
        backend = str(data["#backend"])
        out: dict = {}
        for key in data.files:
            if key == "#backend":
                continue
            name, _, index = key.rpartition("#")
            if index == "error":
                out[name] = str(data[key])
            else:
                out.setdefault(name, {})[int(index)] = data[key]
        return ({n: v if isinstance(v, str) else [v[i] for i in sorted(v)]
                 for n, v in out.items()}, f"JAX {backend}")


# --- callbacks ------------------------------------------------------------------------------

def check_callbacks(jax, jnp) -> list[tuple[str, bool, str]]:
    lines = []
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def printing(a):
        jax.debug.print("sum={s}", s=a.sum())
        return a * 2
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        out = jax.jit(printing)(x)
        jax.effects_barrier()
    ok = "sum=15" in buffer.getvalue() and np.array_equal(np.asarray(out), x * 2)
    lines.append(("debug.print", ok, repr(buffer.getvalue().strip())))

    def pure(a):
        shape = jax.ShapeDtypeStruct(a.shape, a.dtype)
        return jax.pure_callback(lambda v: np.sin(v).astype(v.dtype), shape, a,
                                 vmap_method="sequential") + 1
    got = np.asarray(jax.jit(pure)(x))
    err = _close(got, np.sin(x) + 1, 1)
    lines.append(("pure_callback", err < 1e-6, f"max error {err:.1e}"))
    got = np.asarray(jax.jit(jax.vmap(pure))(x))
    err = _close(got, np.sin(x) + 1, 1)
    lines.append(("pure_callback under vmap", err < 1e-6, f"max error {err:.1e}"))

    seen = []

    def record(v):
        seen.append(np.array(v))
        return np.array(v.sum(), dtype=v.dtype)

    def effects(a):
        first = jax.experimental.io_callback(record, jax.ShapeDtypeStruct((), a.dtype), a,
                                             ordered=True)
        second = jax.experimental.io_callback(record, jax.ShapeDtypeStruct((), a.dtype),
                                              a * first, ordered=True)
        return second
    got = float(jax.jit(effects)(x))
    ok = len(seen) == 2 and got == 15.0 * 15.0 and np.array_equal(seen[1], x * 15)
    lines.append(("io_callback (ordered)", ok, f"{len(seen)} calls, result {got}"))
    return lines


# --- main -----------------------------------------------------------------------------------

def main() -> int:
    start = time.time()
    os.environ.setdefault("SPMDC_PLATFORM", "cuda")       # SPMDC_PLATFORM=cpu: a dry run
    theirs, jax_note = jax_results(os.environ["SPMDC_PLATFORM"], timeout=40)
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import spmdc as jax
    import spmdc.experimental  # noqa: F401
    import spmdc.numpy as jnp
    from spmdc import lax
    print(f"spmdc on {jax.default_backend()}: {jax.devices()}; reference: NumPy, {jax_note}")
    lib = types.SimpleNamespace(jit=jax.jit, grad=jax.grad, lax=lax, jnp=jnp)
    ours = run_all(lib, jax.enable_x64)
    failures = 0
    args_of = {name: args for name, (_, args) in all_cases(lib).items()}
    for name, outs in ours.items():
        if isinstance(outs, str):
            failures += 1
            print(f"FAIL {name}: {outs}")
            continue
        tol = _tol(outs[0])
        worst = max(properties(name, args_of[name], outs))
        ok = worst < tol
        line = f"numpy {worst:.1e}"
        other = theirs.get(name)
        if isinstance(other, str):
            line += f"; JAX failed: {other}"
        elif other is not None:
            mine, ref = unique_parts(name, outs), unique_parts(name, other)
            diff = max((_close(x, y, 1) for x, y in zip(mine, ref, strict=True)),
                       default=0.0) if len(mine) == len(ref) else np.inf
            jax_worst = max(properties(name, args_of[name], other))
            ok = ok and diff < 10 * tol
            line += f"; vs JAX {diff:.1e} (JAX vs numpy {jax_worst:.1e})"
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {line} (tolerance {tol:.0e})")
    for what, ok, detail in check_callbacks(jax, jnp):
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {detail}")
    print(f"{'all passed' if not failures else f'{failures} FAILED'} "
          f"in {time.time() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--jax":
        jax_main(sys.argv[2])
    else:
        sys.exit(main())
