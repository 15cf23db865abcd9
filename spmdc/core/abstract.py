"""Abstract values users see: ``ShapeDtypeStruct`` (a shape and dtype standing in for an
array, as ``eval_shape`` and AOT lowering take and return) and ``ShapedArray`` (what
``typeof`` says of a value: shape, dtype, weak type and, over Explicit mesh axes, its
sharding, printed ``float32[8@X,4]`` as JAX prints its abstract values)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.ir import TensorType, dtype_kind
from ..runtime.array import Array
from ..runtime.mesh_axes import AbstractMesh
from ..runtime.sharding import NamedSharding, PartitionSpec
from . import dtypes
from .explicit_sharding import array_sharding, restrict, spec_text, to_partition_spec
from .tracing import Tracer, type_of

__all__ = ["ShapeDtypeStruct", "AbstractValue", "ShapedArray", "typeof",
           "extended_dtype_classes", "aval_rules", "struct_values"]

extended_dtype_classes: list[type] = []
"""The classes of dtypes that are not NumPy's, which a ShapedArray keeps as they are
(spmdc/dtypes.py registers ``ExtendedDType``: the typed keys' ``key<fry>``)."""

aval_rules: dict[type, Callable[[Any], Any]] = {}
"""``typeof`` of the array types the floors above define, which the tracer does not
know (spmdc/random/keys.py registers its typed key arrays)."""


struct_values: dict[type, Callable[[Any], Any]] = {}
"""For a ShapeDtypeStruct of an extended dtype (by the dtype's class), the abstract value
a transformation traces in its place (spmdc/random/keys.py registers the typed keys':
a key array around the struct of its data), since such a struct has no IR type."""


def _abstract_dtype(dtype: Any) -> Any:
    return dtype if isinstance(dtype, tuple(extended_dtype_classes)) else np.dtype(dtype)


def _struct_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as a NumPy dtype, uncanonicalized: Python's int and float are the 64-bit
    types, as ``np.dtype`` makes them; JAX's weak scalar types (``jnp.float64``) too."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(dtype.dtype)


class ShapeDtypeStruct:
    """A shape and a dtype (and whether the type is weak), standing in for an array."""
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: Any, dtype: Any, *, sharding: Any = None,
                 weak_type: bool = False):
        try:
            self.shape = tuple(int(d) for d in shape)
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct shape must be a sequence of ints, got "
                            f"{shape!r}") from None
        if any(d < 0 for d in self.shape):
            raise ValueError(f"ShapeDtypeStruct shape {self.shape} has a negative dimension")
        if dtype is None:
            raise TypeError("ShapeDtypeStruct needs a dtype")
        # The dtype as given (int is int64, float64 stays float64 with x64 off), as
        # JAX keeps it; a value traced from this struct has the canonical one (``type``).
        self.dtype = dtype if isinstance(dtype, tuple(extended_dtype_classes)) else \
            _struct_dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    @property
    def type(self) -> TensorType:
        """The IR type of an array of this shape and dtype; a typed key's (an extended
        dtype, such as eval_shape returns for keys) has none: spmdc's IR holds keys as
        their uint32 data (Note [array nodes] in core/tree.py)."""
        if not isinstance(self.dtype, np.dtype):
            raise TypeError(f"a ShapeDtypeStruct of dtype {self.dtype} stands for no array "
                            "spmdc can trace; pass a key array (or its key_data) instead")
        return TensorType(self.shape, np.dtype(dtypes.canonicalize(self.dtype)))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        sharding = "" if self.sharding is None else f", sharding={self.sharding!r}"
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapeDtypeStruct and self.shape == other.shape and
                self.dtype == other.dtype and self.weak_type == other.weak_type and
                self.sharding == other.sharding)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]


# JAX's float0 (equal to transforms/forward.py's, which this floor may not import).
_FLOAT0 = np.dtype([("float0", np.void, 0)])


class AbstractValue:
    """What every abstract value is (JAX's ``jax.core.AbstractValue``, for type tests)."""
    __slots__ = ()


class ShapedArray(AbstractValue):
    """The abstract value of an array: shape, dtype, weak type (``jax.typeof``) and its
    sharding over Explicit mesh axes (Note [the sharding of an abstract value])."""
    __slots__ = ("shape", "dtype", "weak_type", "_sharding")

    def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool = False, *,
                 sharding: Any = None):
        self.shape, self.dtype, self.weak_type = tuple(shape), _abstract_dtype(dtype), weak_type
        self._sharding = None if sharding is None else _typed_sharding(sharding, self.shape)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    # Note [the sharding of an abstract value]
    # In JAX a type may carry a sharding over a mesh of Explicit axes, and
    # ``jax.typeof(x).sharding`` is a NamedSharding over that mesh's AbstractMesh
    # (``float32[8@X,4]``); libraries read it (Optax's tree_vdot takes its explicitly
    # sharded path when ``sharding.mesh.are_all_axes_explicit``, Flax's Dropout draws its
    # mask with the input's sharding). spmdc's abstract values carry one the same way:
    # what Note [shardings in types] (core/explicit_sharding.py) gives a traced value or
    # an Array laid out over Explicit axes, or what ``ShapedArray(..., sharding=)`` is
    # given (over an AbstractMesh, with only its Explicit axes kept, as JAX's
    # ``get_sharding``). Every other value's sharding is what JAX gives an unsharded one:
    # the empty AbstractMesh, one ``None`` per dimension, which answers False to
    # ``are_all_axes_explicit``.
    @property
    def sharding(self) -> NamedSharding:
        """The sharding in this type (See Note [the sharding of an abstract value])."""
        if self._sharding is not None:
            return self._sharding
        return NamedSharding(AbstractMesh((), ()), PartitionSpec(*(None,) * self.ndim))

    def update(self, shape: Any = None, dtype: Any = None, weak_type: bool | None = None,
               sharding: Any = None) -> ShapedArray:
        """This abstract value with the given fields replaced (the sharding kept when the
        shape is)."""
        if sharding is None and shape is None:
            sharding = self._sharding
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           sharding=sharding)

    def to_tangent_aval(self) -> ShapedArray:
        """The abstract value of this one's tangents: itself for inexact dtypes, JAX's
        ``float0`` for integers, bools and keys (their tangents carry no information)."""
        if isinstance(self.dtype, np.dtype) and (
                dtype_kind(self.dtype) in "fc"):
            return ShapedArray(self.shape, self.dtype, self.weak_type)
        return ShapedArray(self.shape, _FLOAT0)

    to_ct_aval = at_least_vspace = to_tangent_aval

    def strip_weak_type(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, sharding=self._sharding)

    def _dims(self) -> str:
        if self._sharding is None:
            return ",".join(str(d) for d in self.shape)
        return spec_text(self.shape, self._sharding.spec)

    normalize = strip_weak_type

    # an array type is its own lo type (the hi-type protocol, Note [hi-types as their lo
    # values] in spmdc/experimental/hitypes.py: Flax's hijax Variable holds arrays)
    def lo_ty(self) -> list[ShapedArray]:
        return [self]

    def lower_val(self, val: Any) -> list[Any]:
        return [val]

    def raise_val(self, val: Any) -> Any:
        return val

    def str_short(self) -> str:
        return f"{'~' if self.weak_type else ''}{self.dtype.name}[{self._dims()}]"

    __str__ = str_short

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.dtype.name}[{self._dims()}]{weak})"

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape and
                self.dtype == other.dtype and self.weak_type == other.weak_type and
                self._sharding == other._sharding)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type, self._sharding))


def _typed_sharding(sharding: Any, shape: tuple[int, ...]) -> NamedSharding:
    """A type's sharding from ``sharding=`` (JAX's ``get_sharding``): a NamedSharding over
    an AbstractMesh, its spec one entry per dimension with only Explicit axes."""
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"ShapedArray: sharding must be a NamedSharding, got {sharding!r}")
    if not isinstance(sharding.mesh, AbstractMesh):
        raise ValueError(f"Mesh of an aval must be an AbstractMesh. Got {sharding.mesh} of "
                         f"type {type(sharding.mesh).__name__}; use mesh.abstract_mesh")
    if len(sharding.spec) > len(shape):
        raise ValueError(f"Length of sharding.spec must be equal to aval's ndim. Got "
                         f"sharding.spec {sharding.spec} and aval.ndim {len(shape)}")
    spec = restrict([sharding.spec.axes_of(d) for d in range(len(shape))], sharding.mesh)
    typed = NamedSharding(sharding.mesh, to_partition_spec(spec))
    typed.check_shape(shape, "ShapedArray")
    return typed


def typeof(x: Any) -> ShapedArray:
    """The abstract value of ``x`` (an Array, a traced value, a NumPy array or a Python
    scalar, which is weakly typed)."""
    if isinstance(x, ShapedArray):
        return x
    if isinstance(x, ShapeDtypeStruct):
        sharding = x.sharding if isinstance(x.sharding, NamedSharding) and isinstance(
            x.sharding.mesh, AbstractMesh) else None
        return ShapedArray(x.shape, x.dtype, x.weak_type, sharding=sharding)
    if x.__class__ is Tracer:
        return x.aval
    if x.__class__ is Array:
        return ShapedArray(x.shape, x.dtype, x.weak, sharding=array_sharding(x))
    rule = aval_rules.get(type(x))
    if rule is not None:
        return rule(x)
    try:
        t, weak = type_of(x)
    except TypeError as e:
        raise TypeError(f"typeof: {type(x).__name__} is not an array-like value ({e})"
                        ) from None
    return ShapedArray(t.shape, t.dtype, weak)
