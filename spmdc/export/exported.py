"""``jax.export``'s ``Exported``: a jit program lowered to StableHLO and kept as a portable
artifact (versioned StableHLO bytecode) with its calling convention: the pytrees and
abstract values of its inputs and outputs, the platforms it was lowered for, its
shardings, and a way to get the exported VJP. ``export(jit(f))(*specs)`` makes one from
an spmdc program; ``deserialize`` (spmdc/export/serialization.py) one from JAX's bytes.

Note [spmdc's exports]
~~~~~~~~~~~~~~~~~~~~~~
An export spmdc makes follows JAX 0.10.2's calling convention (version 10) so that JAX
loads and calls it: ``@main`` takes the array arguments (all of them:
``module_kept_var_idx`` is every index) and returns the array results; the module
carries ``jax.uses_shape_polymorphism``. Lowered for several platforms
(Note [lowering per platform] in compiler/stablehlo.py), ``@main`` first takes a
``tensor<i32>`` platform index (marked ``jax.global_constant = "_platform_index"``,
as JAX marks it) and switches with ``stablehlo.case`` to the module lowered for that
platform; JAX then marks the export ``uses_global_constants``.

What spmdc does not export: programs over a mesh (jit with shardings: ``nr_devices`` is
1 and the shardings are unspecified), symbolic shapes (spmdc's shapes are static), and
effects (host callbacks are custom calls without compatibility guarantees, which JAX
refuses to serialize too). Custom calls are checked against JAX's list of targets with
compatibility guarantees (LAPACK's and cuSOLVER's FFI kernels among them);
``DisabledSafetyCheck.custom_call(name)`` allows another.

As in JAX, the function exported must be the result of ``jit``; JAX's own functions
often are (JAX's docs export ``jnp.sin``), so spmdc's API functions (``spmdc.numpy``,
``spmdc.lax`` ...) are jitted for the export.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.stablehlo import PLATFORMS, hlo, ir, lowering_lock, mlir_context
from ..core.abstract import ShapedArray, ShapeDtypeStruct
from ..numpy import zeros
from ..runtime import pjrt
from ..runtime.sharding import NamedSharding, PartitionSpec
from ..transforms.forward import float0
from ..transforms.grad import vjp
from ..transforms.jaxpr_view import jaxpr_as_fun
from ..transforms.jit import Jitted, jit

__all__ = ["Exported", "DisabledSafetyCheck", "export", "default_export_platform",
           "minimum_supported_calling_convention_version",
           "maximum_supported_calling_convention_version", "ExportSharding"]

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
_CALLING_CONVENTION = 10        # the version spmdc's exports use (JAX 0.10.2's default)
_FLOAT0 = np.dtype(float0)


class DisabledSafetyCheck:
    """A safety check skipped on export or on call: ``platform()`` (call an export on a
    platform it was not lowered for) or ``custom_call(target)`` (export a custom call
    whose target has no compatibility guarantee)."""
    __slots__ = ("_impl",)

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom call target this check allows, or None."""
        m = re.match(r"custom_call:(.+)$", self._impl)
        return m.group(1) if m else None

    def __str__(self) -> str:
        return self._impl
    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


@dataclasses.dataclass(frozen=True)
class ExportSharding:
    """A sharding recorded in an export: JAX's NamedSharding over an abstract mesh."""
    axis_sizes: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: tuple[int, ...]          # JAX's AxisType enum values (1 Auto ...)
    spec: tuple[Any, ...]                # per dimension: None, a name, or a tuple of names
    memory_kind: str | None = None
    device: tuple[str, int | None, str] | None = None   # kind, cores, platform


@dataclasses.dataclass(frozen=True)
class Exported:
    """A jit program lowered to StableHLO, with its calling convention (see JAX's
    ``jax.export.Exported``; Note [spmdc's exports])."""
    fun_name: str
    in_tree: Any
    in_avals: tuple[ShapedArray, ...]
    out_tree: Any
    out_avals: tuple[ShapedArray, ...]
    _has_named_shardings: bool
    _in_named_shardings: tuple[ExportSharding | None, ...]
    _out_named_shardings: tuple[ExportSharding | None, ...]
    in_shardings_hlo: tuple[None, ...]
    out_shardings_hlo: tuple[None, ...]
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple[Any, ...]
    unordered_effects: tuple[Any, ...]
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None

    def mlir_module(self, serialized: bool = True) -> Any:
        """The StableHLO module: its text (the default), or the module object."""
        with lowering_lock, mlir_context():
            module = hlo.deserialize_portable_artifact(ir.Context.current,
                                                       self.mlir_module_serialized)
            return str(module) if serialized else module

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"

    def __repr__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, module={self._digest()}, ...)"

    def ir_text(self) -> str:
        """How spmdc's IR printer shows this export as a parameter of a call."""
        return f"@{self.fun_name}#{self._digest()}"

    def _digest(self) -> str:
        return hashlib.sha256(self.mlir_module_serialized).hexdigest()[:12]

    def in_shardings_jax(self, mesh: Any) -> tuple[NamedSharding | None, ...]:
        """The input shardings over ``mesh`` (None where unspecified)."""
        return tuple(_on_mesh(s, mesh) for s in self._in_named_shardings)

    def out_shardings_jax(self, mesh: Any) -> tuple[NamedSharding | None, ...]:
        return tuple(_on_mesh(s, mesh) for s in self._out_named_shardings)

    def has_vjp(self) -> bool:
        """Whether this export can give its VJP (``vjp()``)."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The exported VJP: takes the primal inputs and a cotangent per output (flat),
        returns a cotangent per input."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        made = _vjps.get(self)
        if made is None:                # made once per Exported: each call of grad uses it
            made = _vjps[self] = self._get_vjp(self)
        return made

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """JAX's serialized form, with ``vjp_order`` orders of VJPs (2 for
        ``grad(grad(...))`` of the deserialized function)."""
        from .serialization import serialize
        return serialize(self, vjp_order=vjp_order)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Call the exported function (under jit, grad, vmap or eagerly)."""
        from .calling import call
        return call(self)(*args, **kwargs)


_vjps: weakref.WeakKeyDictionary[Exported, Exported] = weakref.WeakKeyDictionary()


def _on_mesh(s: ExportSharding | None, mesh: Any) -> NamedSharding | None:
    if s is None:
        return None
    return NamedSharding(mesh, PartitionSpec(*s.spec))


def default_export_platform() -> str:
    """The platform exports are lowered for by default: ``'cpu'`` or ``'cuda'``."""
    return pjrt.platform_wanted()


_PLATFORM_NAMES = {"cpu": "cpu", "cuda": "cuda", "gpu": "cuda"}


def _platforms(platforms: Sequence[str] | None) -> tuple[str, ...]:
    if platforms is None:
        return (default_export_platform(),)
    if isinstance(platforms, str):
        raise TypeError(f"export: platforms must be a sequence of platform names, got the "
                        f"string {platforms!r}; write platforms=({platforms!r},)")
    names = tuple(_PLATFORM_NAMES.get(str(p).lower(), str(p).lower()) for p in platforms)
    for p in names:
        if p not in PLATFORMS:
            raise ValueError(f"export: spmdc lowers for the platforms "
                             f"{', '.join(PLATFORMS)}, not {p!r} (platforms={platforms!r})")
    if not names or len(set(names)) != len(names):
        raise ValueError(f"export: platforms must name each platform once, got {platforms!r}")
    return names


def _jitted(fun: Any) -> Jitted:
    """``fun`` as a jit function: JAX exports only the results of ``jit``, and many of its
    own functions are (``jnp.sin``, as JAX's docs export it); spmdc's own API functions
    are plain functions, so one of those is jitted here. See Note [spmdc's exports]."""
    if isinstance(fun, Jitted):
        return fun
    if callable(fun) and str(getattr(fun, "__module__", "")).startswith("spmdc."):
        return jit(fun)
    raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun!r}")


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()) -> Callable[..., Exported]:
    """``export(jit(f), platforms=...)(*specs, **kwspecs)``: the Exported of ``f`` at the
    given ShapeDtypeStructs (or arrays), lowered for ``platforms`` (default: this
    client's). Note [spmdc's exports]."""
    fun_jit = _jitted(fun_jit)
    if fun_jit._partitioned:
        raise ValueError("export: spmdc exports single-device programs; this jit has "
                         "in_shardings or out_shardings over a mesh (export the function "
                         "jitted without them)")
    names = _platforms(platforms)
    checks = tuple(disabled_checks)
    for c in checks:
        if not isinstance(c, DisabledSafetyCheck):
            raise TypeError(f"export: disabled_checks must hold DisabledSafetyChecks, got "
                            f"{c!r}")

    def do_export(*args_specs: Any, **kwargs_specs: Any) -> Exported:
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        texts = [traced.lower(lowering_platforms=(p,)).as_text() for p in names]
        serialized = _module_bytes(texts, checks)
        n_in, n_out = len(traced.in_avals), len(traced.out_avals)
        in_avals = tuple(ShapedArray(a.shape, a.dtype) for a in traced.in_avals)
        out_avals = tuple(ShapedArray(a.shape, a.dtype) for a in traced.out_avals)
        primal = jaxpr_as_fun(traced.jaxpr)

        def get_vjp(exp: Exported) -> Exported:
            return _export_vjp(primal, exp)
        return Exported(
            fun_name=traced.fun_name, in_tree=traced.in_tree, in_avals=in_avals,
            out_tree=traced.out_tree, out_avals=out_avals, _has_named_shardings=True,
            _in_named_shardings=(None,) * n_in, _out_named_shardings=(None,) * n_out,
            in_shardings_hlo=(None,) * n_in, out_shardings_hlo=(None,) * n_out,
            nr_devices=1, platforms=names, ordered_effects=(), unordered_effects=(),
            disabled_safety_checks=checks, mlir_module_serialized=serialized,
            calling_convention_version=_CALLING_CONVENTION,
            module_kept_var_idx=tuple(range(n_in)), uses_global_constants=len(names) > 1,
            _get_vjp=get_vjp)
    return do_export


def _is_float0(aval: Any) -> bool:
    return np.dtype(aval.dtype) == _FLOAT0


def _export_vjp(primal: Callable[..., Any], exp: Exported) -> Exported:
    """The export of the VJP of ``primal`` (the flat function of ``exp``): it takes the
    primal inputs then one cotangent per output, and returns one per input. Integer and
    boolean values have float0 cotangents (Note [float0 in exports])."""
    n = len(exp.in_avals)
    ct_avals = [a.to_tangent_aval() for a in exp.out_avals]
    in_ct_avals = [a.to_tangent_aval() for a in exp.in_avals]

    def fun_vjp(*args_and_cts: Any) -> Any:
        _, pullback = vjp(primal, *args_and_cts[:n])
        cts = [np.zeros(a.shape, _FLOAT0) if _is_float0(a) else ct
               for a, ct in zip(ct_avals, args_and_cts[n:], strict=True)]
        return tuple(zeros(a.shape, np.bool_) if _is_float0(a) else ct
                     for a, ct in zip(in_ct_avals, pullback(cts), strict=True))
    fun_vjp.__name__ = "fun_vjp_jax"
    vjp_in_avals = (*exp.in_avals, *ct_avals)
    specs = [ShapeDtypeStruct(a.shape, np.bool_ if _is_float0(a) else a.dtype)
             for a in vjp_in_avals]
    made = export(jit(fun_vjp), platforms=exp.platforms,
                  disabled_checks=exp.disabled_safety_checks)(*specs)
    return dataclasses.replace(made, in_avals=tuple(vjp_in_avals),
                               out_avals=tuple(in_ct_avals))


# Note [float0 in exports]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# JAX gives integer and boolean values float0 cotangents, and an exported VJP's abstract
# values say so, while its module carries each float0 value as a ``tensor<i1>`` of the
# same shape (all false). spmdc's arrays have no float0 dtype, so spmdc traces an
# exported VJP with boolean arrays where its abstract values say float0, and a call of
# an export passes boolean zeros for float0 inputs and gives float0 zeros for float0
# outputs (spmdc/export/calling.py), which is what JAX's call does with the module.


# The custom call targets JAX guarantees compatibility for (jax/_src/export/_export.py):
# the LAPACK and GPU solver FFI kernels and a few of XLA's own.
_LAPACK = ("potrf geqrf {o}gqr {e}evd geev gesdd getrf {e}trd gehrd gees trsm gtsv")
_STABLE_TARGETS = frozenset(
    {f"lapack_{t}{k.format(o='or' if t in 'sd' else 'un', e='sy' if t in 'sd' else 'he')}_ffi"
     for t in "sdcz" for k in _LAPACK.split()}
    | {f"{p}solver_{k}_ffi" for p in ("cu", "hip")
       for k in ("getrf", "geqrf", "orgqr", "potrf", "syevd", "gesvd", "gesvdj", "sytrd")}
    | {"cu_lu_pivots_to_permutation", "hip_lu_pivots_to_permutation", "hipsolver_gesdd_ffi",
       "cusparse_gtsv2_ffi", "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
       "annotate_device_placement", "cu_threefry2x32_ffi", "hip_threefry2x32_ffi", "Eigh",
       "Qr", "ProductOfElementaryHouseholderReflectors", "LuDecomposition", "ApproxTopK",
       "stablehlo.dynamic_approx_top_k", "AllocateBuffer", "stablehlo.dynamic_reduce_window",
       "stablehlo.dynamic_rng_bit_generator", "stablehlo.dynamic_top_k", "shape_assertion"})


def _check_custom_calls(module: Any, checks: Sequence[DisabledSafetyCheck]) -> None:
    allowed = _STABLE_TARGETS | {c.is_custom_call() for c in checks if c.is_custom_call()}
    bad: list[str] = []

    def walk(op: Any) -> None:
        if op.name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if "ALL" not in allowed and target not in allowed:
                bad.append(target)
        for region in op.regions:
            for block in region:
                for inner in block:
                    walk(inner.operation)
    walk(module.operation)
    if bad:
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no compatibility "
            f"guarantees: {', '.join(sorted(set(bad)))} (host callbacks such as "
            "debug.print and pure_callback are among them). Allow one with "
            "disabled_checks=[export.DisabledSafetyCheck.custom_call(target)].")


def _module_bytes(texts: Sequence[str], checks: Sequence[DisabledSafetyCheck]) -> bytes:
    """The portable artifact of the module (one per platform: then joined behind a
    platform index, Note [spmdc's exports])."""
    from .modules import join_platforms
    with lowering_lock, mlir_context(), ir.Location.unknown():
        modules = [ir.Module.parse(t) for t in texts]
        for m in modules:
            _check_custom_calls(m, checks)
        module = modules[0] if len(modules) == 1 else join_platforms(modules)
        module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(
            len(modules) > 1)
        target = hlo.get_version_from_compatibility_requirement(
            hlo.StablehloCompatibilityRequirement.WEEK_4)
        text = str(module)
    return pjrt.serialize_portable_artifact(text, target)
