"""``JAXSparse``, the base class of every sparse format (JAX's
``jax.experimental.sparse.JAXSparse``): the array attributes derived from ``shape`` and
``nse``, ``T``, ``block_until_ready``, and the rule that a sparse array is not hashable."""
from __future__ import annotations

import math
from typing import Any

__all__ = ["JAXSparse"]


class JAXSparse:
    """A sparse array: subclasses hold ``data`` and index buffers, ``shape`` and ``nse``,
    and define ``todense``, ``transpose`` and the pytree methods."""
    data: Any
    shape: tuple[int, ...]
    nse: int
    __hash__ = None                        # type: ignore[assignment]
    # NumPy operands defer to the sparse array's reflected operators (``u @ s``)
    __array_ufunc__ = None

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        # JAX's array functions refuse a sparse operand with a TypeError; without this,
        # NumPy would read the array as a nested sequence through __len__/__getitem__
        raise TypeError(f"{type(self).__name__} is a sparse array: jnp and NumPy functions "
                        f"take dense arrays; call .todense(), or wrap the function with "
                        f"sparse.sparsify")

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def T(self) -> Any:                             # noqa: N802  (NumPy's name)
        return self.transpose()               # type: ignore[attr-defined]

    def block_until_ready(self) -> JAXSparse:
        for leaf in self.tree_flatten()[0]:    # type: ignore[attr-defined]
            if hasattr(leaf, "block_until_ready"):
                leaf.block_until_ready()
        return self

    def __repr__(self) -> str:
        dtype = getattr(self.data, "dtype", None)
        return f"{type(self).__name__}({dtype}{list(self.shape)}, nse={self.nse})"
