"""An array's memory layout (``Layout``) and the pair of a layout and a sharding
(``Format``), as values (``jax.experimental.layout`` re-exports them). spmdc lays every
array out in the default (row-major) order, so a Format's use is to carry its sharding:
Flax's sharding helpers rebuild one around a renamed sharding (``Format(f.layout,
g(f.sharding))``), and its variables pass one where a sharding goes. ``format_sharding``
gives that sharding, refusing a layout other than the default one (Note [formats])."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["Layout", "Format", "format_sharding"]


class Layout:
    """The order of an array's dimensions in memory, most major first, and its tiling."""

    def __init__(self, major_to_minor: Sequence[int],
                 tiling: Sequence[Sequence[int]] = (),
                 sub_byte_element_size_in_bits: int = 0):
        self.major_to_minor = tuple(int(d) for d in major_to_minor)
        self.tiling = tuple(tuple(int(t) for t in tile) for tile in tiling)
        self.sub_byte_element_size_in_bits = int(sub_byte_element_size_in_bits)

    def _key(self) -> tuple[Any, ...]:
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")


class Format:
    """A layout (None: the default) and a sharding (None: unspecified)."""

    def __init__(self, layout: Layout | None = None, sharding: Any = None):
        if layout is not None and not isinstance(layout, Layout):
            raise TypeError(f"Format: layout must be a Layout or None, got "
                            f"{type(layout).__name__}")
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Format) and self.layout == other.layout
                and self.sharding == other.sharding)

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))

    def __repr__(self) -> str:
        return f"Format({self.layout!r}, {self.sharding!r})"


def format_sharding(f: Format, what: str) -> Any:
    """Note [formats]
    ~~~~~~~~~~~~~~~~~
    Where JAX takes a sharding it also takes a Format, whose layout says the order of the
    array's dimensions in memory. spmdc's arrays, programs and launches all use the
    default order (row-major: ``major_to_minor=(0, 1, ..., n-1)``, no tiling), which
    XLA's CPU client picks for every buffer; honouring another order would take a layout
    on every Array and on every program's inputs and outputs. So a Format stands for its
    sharding when its layout is None or the default one, and any other layout is a
    ValueError naming it (``what`` says where it was given)."""
    layout = f.layout
    if layout is not None and (
            layout.major_to_minor != tuple(range(len(layout.major_to_minor)))
            or layout.tiling or layout.sub_byte_element_size_in_bits):
        raise ValueError(
            f"{what}: {f!r} asks for the memory layout {layout!r}, but spmdc lays every "
            f"array out in the default row-major order (major_to_minor="
            f"{tuple(range(len(layout.major_to_minor)))}, no tiling); pass the sharding "
            f"alone, or Format(None, sharding)")
    return f.sharding
