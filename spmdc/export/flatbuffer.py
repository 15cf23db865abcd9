"""A small reader and writer of the FlatBuffers binary format, enough for the schema of
JAX's serialized exports (spmdc/export/serialization.py): tables of scalars, strings,
vectors of scalars, strings and tables, and nested tables. spmdc does not depend on the
``flatbuffers`` package; this module is written from the format's description.

Note [FlatBuffers layout]
~~~~~~~~~~~~~~~~~~~~~~~~~
Everything is little-endian. A buffer starts with a ``u32`` offset to its root table. An
offset stored in a field (to a string, a vector or a table) is a ``u32`` counted from the
field's own position forward. A table starts with an ``i32`` that, subtracted from the
table's position, gives its vtable: ``u16`` vtable size in bytes, ``u16`` inline size of the
table, then one ``u16`` per field slot, the field's offset from the table's start (0: the
field is absent and reads as its default). A vector is a ``u32`` element count followed by
its elements (a vector of tables or strings holds offsets, each counted from its own
slot); a string is a ``u32`` byte count, the UTF-8 bytes and a terminating 0.

The official builders write back to front; ``Builder`` here writes front to back: a
table's vtable comes just before it (so the table's ``i32`` is positive), and everything
a table refers to is written after it, the referring offsets patched once their targets
have a place, so every offset points forward as the format requires. Scalars are
aligned to their size and vectors and tables to 4 bytes, from the start of the buffer.
"""
from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Table", "Vector", "Builder", "encode", "Reader"]

# Scalar kinds: the struct format of each (little-endian).
_FORMATS = {"bool": "<?", "i8": "<b", "u8": "<B", "i16": "<h", "u16": "<H", "i32": "<i",
            "u32": "<I", "i64": "<q", "u64": "<Q"}


@dataclass
class Vector:
    """A vector to write: ``kind`` is a scalar kind (``'u8'``, ``'u32'`` ...), ``'string'``
    or ``'table'``; ``items`` its elements (ints, strs, or Tables)."""
    kind: str
    items: Sequence[Any]


@dataclass
class Table:
    """A table to write: ``fields`` maps a slot number to ``(kind, value)``, where kind is
    a scalar kind, ``'string'``, ``'table'`` (value a Table) or ``'vector'`` (a Vector).
    Absent slots read as their defaults."""
    fields: dict[int, tuple[str, Any]] = field(default_factory=dict)

    def set(self, slot: int, kind: str, value: Any) -> Table:
        if value is not None:
            self.fields[slot] = (kind, value)
        return self


class Builder:
    """Writes one buffer front to back (Note [FlatBuffers layout])."""

    def __init__(self) -> None:
        self.buf = bytearray(4)       # the root offset, patched by ``finish``
        self.pending: list[tuple[int, str, Any]] = []   # (offset position, kind, target)

    def _align(self, n: int) -> None:
        self.buf.extend(b"\0" * (-len(self.buf) % n))

    def _later(self, kind: str, value: Any) -> int:
        """Reserve a ``u32`` offset to ``value`` (written later); return its position."""
        self._align(4)
        pos = len(self.buf)
        self.buf.extend(b"\0\0\0\0")
        self.pending.append((pos, kind, value))
        return pos

    def _write(self, kind: str, value: Any) -> int:
        """Write a string, vector or table now; return the position offsets point at."""
        if kind == "string":
            data = value.encode("utf-8")
            self._align(4)
            pos = len(self.buf)
            self.buf += struct.pack("<I", len(data)) + data + b"\0"
            return pos
        if kind == "vector":
            return self._vector(value)
        return self._table(value)

    def _vector(self, vec: Vector) -> int:
        if vec.kind in _FORMATS:
            size = struct.calcsize(_FORMATS[vec.kind])
            # the length is followed directly by the elements, aligned to their size
            while (len(self.buf) + 4) % max(size, 4):
                self.buf.append(0)
            pos = len(self.buf)
            self.buf += struct.pack("<I", len(vec.items))
            for x in vec.items:
                self.buf += struct.pack(_FORMATS[vec.kind], x)
            return pos
        self._align(4)
        pos = len(self.buf)
        self.buf += struct.pack("<I", len(vec.items))
        for x in vec.items:
            self.pending.append((len(self.buf), vec.kind, x))
            self.buf.extend(b"\0\0\0\0")
        return pos

    def _table(self, table: Table) -> int:
        slots = sorted(table.fields)
        n_slots = slots[-1] + 1 if slots else 0
        vtable_size = 4 + 2 * n_slots
        self._align(4)
        vtable_pos = len(self.buf)
        self.buf.extend(b"\0" * vtable_size)
        self._align(8 if any(k in ("i64", "u64") for k, _ in table.fields.values()) else 4)
        table_pos = len(self.buf)
        self.buf += struct.pack("<i", table_pos - vtable_pos)
        offsets = {}
        for slot in slots:
            kind, value = table.fields[slot]
            if kind in _FORMATS:
                fmt = _FORMATS[kind]
                self._align(struct.calcsize(fmt))
                offsets[slot] = len(self.buf) - table_pos
                self.buf += struct.pack(fmt, value)
            else:
                offsets[slot] = self._later(kind, value) - table_pos
        vtable = [vtable_size, len(self.buf) - table_pos] + [offsets.get(s, 0)
                                                             for s in range(n_slots)]
        self.buf[vtable_pos:vtable_pos + vtable_size] = struct.pack(
            f"<{len(vtable)}H", *vtable)
        return table_pos

    def finish(self, root: Table) -> bytes:
        self.pending.append((0, "table", root))
        while self.pending:
            batch, self.pending = self.pending, []
            for at, kind, value in batch:
                target = self._write(kind, value)
                self.buf[at:at + 4] = struct.pack("<I", target - at)
        return bytes(self.buf)


def encode(root: Table) -> bytes:
    """The buffer whose root is ``root``."""
    return Builder().finish(root)


class Reader:
    """A table in a buffer: reads its fields by slot (Note [FlatBuffers layout])."""
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int | None = None):
        self.buf = bytes(buf) if not isinstance(buf, bytes) else buf
        self.pos = struct.unpack_from("<I", self.buf, 0)[0] if pos is None else pos

    def _field(self, slot: int) -> int | None:
        vtable = self.pos - struct.unpack_from("<i", self.buf, self.pos)[0]
        at = 4 + 2 * slot
        if at >= struct.unpack_from("<H", self.buf, vtable)[0]:
            return None
        off = struct.unpack_from("<H", self.buf, vtable + at)[0]
        return self.pos + off if off else None

    def _deref(self, at: int) -> int:
        return at + struct.unpack_from("<I", self.buf, at)[0]

    def scalar(self, slot: int, kind: str, default: Any = 0) -> Any:
        at = self._field(slot)
        return default if at is None else struct.unpack_from(_FORMATS[kind], self.buf, at)[0]

    def _string_at(self, at: int) -> str:
        n = struct.unpack_from("<I", self.buf, at)[0]
        return self.buf[at + 4:at + 4 + n].decode("utf-8")

    def string(self, slot: int) -> str | None:
        at = self._field(slot)
        return None if at is None else self._string_at(self._deref(at))

    def table(self, slot: int) -> Reader | None:
        at = self._field(slot)
        return None if at is None else Reader(self.buf, self._deref(at))

    def has(self, slot: int) -> bool:
        return self._field(slot) is not None

    def _vector(self, slot: int) -> tuple[int, int]:
        at = self._field(slot)
        if at is None:
            return 0, 0
        start = self._deref(at)
        return struct.unpack_from("<I", self.buf, start)[0], start + 4

    def scalars(self, slot: int, kind: str) -> list[Any]:
        n, start = self._vector(slot)
        fmt = _FORMATS[kind]
        return list(struct.unpack_from(f"<{n}{fmt[1]}", self.buf, start)) if n else []

    def raw_bytes(self, slot: int) -> bytes:
        n, start = self._vector(slot)
        return self.buf[start:start + n]

    def strings(self, slot: int) -> list[str]:
        n, start = self._vector(slot)
        return [self._string_at(self._deref(start + 4 * i)) for i in range(n)]

    def tables(self, slot: int) -> list[Reader]:
        n, start = self._vector(slot)
        return [Reader(self.buf, self._deref(start + 4 * i)) for i in range(n)]
