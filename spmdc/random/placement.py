"""JAX's ``out_sharding`` keyword of the samplers (``random.normal(key, shape,
out_sharding=P('X'))``): the draw laid out by a NamedSharding or a PartitionSpec over the
mesh in context; over Explicit mesh axes the result's type carries it (Note [shardings
in types] in core/explicit_sharding.py)."""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from ..transforms.partitioned import place_computed

__all__ = ["placed", "takes_out_sharding"]

F = TypeVar("F", bound=Callable[..., Any])


def placed(compute: Callable[[], Any], out_sharding: Any) -> Any:
    """``compute()`` laid out by ``out_sharding``: None, or a sharding over a mesh without
    axes (an unsharded value's ``jax.typeof(x).sharding``), asks for nothing."""
    if out_sharding is not None and getattr(getattr(out_sharding, "mesh", None),
                                            "axis_names", None) == ():
        out_sharding = None
    return place_computed(compute, out_sharding)


def takes_out_sharding(sampler: F) -> F:
    """``sampler`` with JAX's keyword-only ``out_sharding`` last: the draw it makes, laid
    out as that keyword says (``placed``)."""
    @functools.wraps(sampler)
    def draw(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        return placed(lambda: sampler(*args, **kwargs), out_sharding)
    signature = inspect.signature(sampler)
    draw.__signature__ = signature.replace(parameters=[  # type: ignore[attr-defined]
        *signature.parameters.values(),
        inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return draw  # type: ignore[return-value]
