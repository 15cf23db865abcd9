"""spmdc.Array: a device-resident value, on one device or split over several.

An Array holds one jaxlib buffer per device. ``split=False``: the buffers are copies of one
value (the usual case: a jit result on one device). ``split=True``: buffer k is slice k of
the leading axis (a pmap result), so the logical shape is ``(len(devices), *buffer shape)``.
With a ``NamedSharding`` (``device_put(x, NamedSharding(mesh, spec))``, shard_map's
results), buffer k is the block ``sharding.devices_indices_map(shape)`` gives device k of
``mesh.devices.flat``; ``split`` is then False, and ``buffer_on`` finds the whole value on
a device only where the sharding replicates it.
Arithmetic, indexing and the NumPy-like methods are installed by spmdc.numpy
(numpy/array_methods.py, from numpy/__init__.py), because the runtime must not import it.

Note [arrays over processes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
In a computation over several processes (spmdc.distributed) an Array may be laid out by
a NamedSharding over a mesh that spans them, as in JAX. Its type is the global one, and it
holds the buffers of this process's devices only: ``_devices`` is the sharding's
``_addressable_assignment`` (its devices that are this process's, in mesh order), and
buffer k is the block of ``_devices[k]``. The other blocks live in other processes, which
hold their own Array for the same global value; a program launched over the mesh by every
process (jit over sharded arrays, shard_map) sees the whole of it. Reading the value on the
host needs every block, so it works only for a value this process holds whole (one
replicated over the mesh, or one whose blocks are all this process's); otherwise it is an
error that says how to get the value (``multihost_utils.process_allgather``) or the local
blocks (``addressable_shards``).
"""
from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np

from ..compiler.ir import TensorType
from . import pjrt, transfers
from .sharding import Mesh, NamedSharding, PartitionSpec, Shard, Sharding, SingleDeviceSharding

__all__ = ["Array", "is_concrete", "set_traced_type", "array_text"]


# Note [traced values are Arrays]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# In JAX, ``isinstance(x, jax.Array)`` is true of a traced value as well as of an array
# on devices, and libraries rely on it: Equinox's filters (``is_array``) pick the leaves
# a transformation or a primitive works on with it, so with a False answer every traced
# array is silently taken for static data. spmdc's Tracer (core/tracing.py) is not a
# subclass of Array (it holds no buffers), so Array's type answers isinstance for it:
# the core, which the runtime may not import, hands its Tracer class to
# ``set_traced_type`` when it is imported (the same turned-around dependency as Note
# [eager execution] in core/tracing.py). An Array itself passes isinstance by Python's
# exact-type fast path, before this check. spmdc's own code that needs an array with
# buffers asks ``is_concrete``.
# Typed PRNG key arrays (spmdc/random/keys.py's PRNGKeyArray) are Arrays too, as in JAX
# (Flax tells a key from other values by ``isinstance(rng, jnp.ndarray)``, Orbax picks
# a key's handler by ``issubclass(type(key), jax.Array)``); the random package registers
# its class with ``register_array_type``.
class _ArrayType(type):
    traced: type | None = None      # the core's Tracer, once set_traced_type ran
    others: tuple[type, ...] = ()   # registered array types (typed key arrays)

    def __instancecheck__(cls, x: Any) -> bool:
        # An Array never gets here (exact type); the common other case is one test.
        return (x.__class__ is _ArrayType.traced or type.__instancecheck__(cls, x)
                or isinstance(x, _ArrayType.others))

    def __subclasscheck__(cls, t: type) -> bool:
        # A registered array type is a subclass, as JAX's PRNGKeyArray subclasses
        # jax.Array (Orbax picks its handler by issubclass(type(value), jax.Array)).
        return type.__subclasscheck__(cls, t) or (
            isinstance(t, type) and issubclass(t, _ArrayType.others))


def register_array_type(t: type) -> None:
    """Make ``isinstance(x, Array)`` true for instances of ``t`` (an array type that
    holds its data in Arrays, such as the typed key arrays). See Note [traced values
    are Arrays]."""
    _ArrayType.others = (*_ArrayType.others, t)


def set_traced_type(t: type) -> None:
    """Make ``isinstance(x, Array)`` true for instances of ``t`` (the core's Tracer).
    See Note [traced values are Arrays]."""
    _ArrayType.traced = t


def is_concrete(x: Any) -> bool:
    """Whether ``x`` is an Array holding device buffers (not a traced value)."""
    return type.__instancecheck__(Array, x)


class Array(metaclass=_ArrayType):
    __slots__ = ("_bufs", "type", "_weak", "_devices", "split", "_host", "_copies",
                 "_group", "_aux", "_sharding", "_kids", "_committed", "__weakref__")
    __array_priority__ = 100

    def __init__(self, buffers: tuple[Any, ...] | None, type: TensorType, weak: bool,
                 devices: tuple[Any, ...], split: bool = False,
                 sharding: Sharding | None = None, committed: bool = False):
        self._bufs: tuple[Any, ...] | None = buffers      # None: still only in _group
        self.type = type           # the logical type
        self._weak = weak
        self._devices = devices
        self.split = split
        self._host: np.ndarray | None = None
        # Extra copies of an unsplit value on other devices (device -> buffer), kept by
        # whoever made them (a replicated pmap output) so placement can reuse them.
        self._copies: dict[Any, Any] | None = None
        # The buffers of a split or replicated value as one multi-device array, the form
        # a replicated program's launch takes (made on first use, see group()).
        self._group: Any = None
        self._aux: tuple[Any, ...] | None = None     # see _node_aux
        self._sharding = sharding      # the Sharding laying out the buffers, or None
        self._committed = committed    # See Note [committed arrays]
        self._kids: Any = _Pending(self)     # see Note [leaves read in C++]

    @classmethod
    def from_host(cls, value: np.ndarray, device: Any, weak: bool = False) -> Array:
        value = np.asarray(value)
        return cls((pjrt.put(value, device),), TensorType(value.shape, value.dtype), weak,
                   (device,))

    # --- what it is -----------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> np.dtype:
        return self.type.dtype

    @property
    def weak(self) -> bool:
        """Whether the dtype is weak (a Python scalar's), as JAX's ``weak_type``."""
        return self._weak

    @weak.setter
    def weak(self, weak: bool) -> None:
        self._weak = weak
        self._aux = None            # it is part of the C++ signature (see _node_aux)
        self._kids = _Pending(self)

    @property
    def committed(self) -> bool:
        """Whether the Array is committed to its devices (Note [committed arrays])."""
        return self._committed

    @property
    def weak_type(self) -> bool:
        """JAX's ``jax.Array.weak_type``: ``weak`` under JAX's name (Optax keeps a
        hyperparameter's dtype only where it is not weak)."""
        return self._weak

    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def size(self) -> int:
        return self.type.size

    @property
    def nbytes(self) -> int:
        return self.type.size * self.type.dtype.itemsize

    @property
    def itemsize(self) -> int:
        """The bytes of one element (JAX's ``Array.itemsize``, which Orbax reads)."""
        return self.type.dtype.itemsize

    def devices(self) -> set[Any]:
        """Every device holding a block, this process's or not."""
        if self._sharding is not None:
            return set(self._sharding._device_assignment)
        return set(self._devices)

    @property
    def device_list(self) -> tuple[Any, ...]:
        """The devices in replica order."""
        return self._devices

    @property
    def _buffers(self) -> tuple[Any, ...]:
        """One buffer per device of ``_devices``."""
        if self._bufs is None:
            # A result of a C++ launch (Array._unflatten_grouped) or of a partitioned one:
            # take the buffers out of the group only now, because doing so before the
            # launch has finished waits for it.
            if self._group.is_deleted():
                self.check_not_deleted()
            shards = pjrt.shards(self._group)
            if self.split or self._sharding is not None:
                self._bufs = tuple(shards)
            else:
                self._bufs = (shards[0],)
                self._copies = dict(zip(pjrt.group_devices(self._group), shards,
                                        strict=True))
        return self._bufs

    def buffer_on(self, device: Any) -> Any | None:
        """This Array's whole value on ``device``, if it is there already, else None."""
        if self._sharding is not None and not self._sharding.is_fully_replicated:
            return None
        if not self.split:
            for d, buf in zip(self._devices, self._buffers, strict=True):
                if d == device:
                    return buf
            if self._copies is not None:
                return self._copies.get(device)
        return None

    def shard_buffers(self) -> tuple[Any, ...]:
        return self._buffers

    def unsafe_buffer_pointer(self) -> int:
        """The address of the one device buffer holding this Array (JAX's method, for an
        Array on one device; tests read it to see that a donated buffer was reused)."""
        self.check_not_deleted(" (unsafe_buffer_pointer)")
        if len(self._buffers) != 1:
            raise ValueError("unsafe_buffer_pointer() is supported only for unsharded "
                             f"arrays; this one has {len(self._buffers)} buffers, one per "
                             "device: read addressable_shards[k].data's instead")
        return self._buffers[0].unsafe_buffer_pointer()

    # --- deletion (Note [donation] in compiler/stablehlo.py) ------------------------------
    def is_deleted(self) -> bool:
        """Whether the buffers are gone: deleted, or donated to a program."""
        if self._bufs is None:
            return self._group.is_deleted()
        return any(b.is_deleted() for b in self._bufs)

    def delete(self) -> None:
        """Free the device buffers now; using the Array afterwards is an error."""
        for b in (*(self._bufs or ()), *(self._copies or {}).values()):
            b.delete()
        if self._group is not None:
            self._group.delete()
        self._host = None

    def check_not_deleted(self, where: str = "") -> None:
        if self.is_deleted():
            raise RuntimeError(
                f"Array has been deleted with shape={self.dtype.name}{list(self.shape)}"
                f"{where}: it was donated to a jitted call (donate_argnums) or deleted; "
                "use the call's result instead, or do not donate it")

    # --- host access ----------------------------------------------------------------------
    def _value(self) -> np.ndarray:
        self.check_not_deleted()
        if self._host is None:      # See Note [transfer guards] in runtime/transfers.py
            transfers.guard(transfers.DEVICE_TO_HOST, False, self.shape, self.dtype,
                            self._weak, self._devices[0])
            if self.split:
                host = np.stack([pjrt.to_numpy(b) for b in self._buffers]) if self._buffers \
                    else np.zeros(self.shape, self.dtype)
            elif self._sharding is not None and not self._sharding.is_fully_replicated:
                host = self._assemble()
            else:
                host = pjrt.to_numpy(self._buffers[0])
            host = host.reshape(self.shape)
            host.flags.writeable = False
            self._host = host
        return self._host

    def _assemble(self) -> np.ndarray:
        """The value of a laid-out Array, from one copy of each block."""
        host = np.empty(self.shape, self.dtype)
        index = self._sharding.devices_indices_map(self.shape)

        def key(d: Any) -> tuple[Any, ...]:
            return tuple((s.start, s.stop) for s in index[d])
        filled = set()
        for d, b in zip(self._devices, self._buffers, strict=True):
            if key(d) not in filled:       # a replicated block: the first copy
                filled.add(key(d))
                block = host[index[d]]
                # (an uneven tile of the partitioner's may come padded)
                block[...] = pjrt.to_numpy(b)[tuple(map(slice, block.shape))]
        if len(filled) < len({key(d) for d in index}):
            raise RuntimeError(
                f"this {self.dtype.name}{list(self.shape)} Array is laid out over devices "
                f"of several processes, and this process holds only some of its blocks, "
                f"so its value cannot be read here (Note [arrays over processes]). Gather "
                f"it with spmdc.experimental.multihost_utils.process_allgather(x), compute "
                f"a replicated result (e.g. jit with out_shardings=NamedSharding(mesh, "
                f"P())), or read this process's blocks from x.addressable_shards")
        return host

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self._value()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def block_until_ready(self) -> Array:
        try:
            if self._bufs is None:
                self._group.block_until_ready()
            else:
                for b in self._bufs:
                    b.block_until_ready()
        except Exception as e:
            pjrt.explain(e)
            raise
        return self

    def copy_to_host_async(self) -> None:
        """Start copying the value to the host, so a later read need not wait for it."""
        for b in self._buffers:
            pjrt.copy_to_host_async(b)

    def is_ready(self) -> bool:
        return all(pjrt.is_ready(b) for b in self._buffers)

    def tolist(self) -> Any:
        return self._value().tolist()

    def item(self, *args: Any) -> Any:
        return self._value().item(*args)

    def __repr__(self) -> str:
        return array_text(self._value(), self.weak)

    def __str__(self) -> str:
        return str(self._value())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self._value().item(), spec)
        return format(str(self), spec)

    def __float__(self) -> float:
        return float(self._scalar("float()"))

    def __int__(self) -> int:
        return int(self._scalar("int()"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex()"))

    def __bool__(self) -> bool:
        return bool(self._scalar("bool()"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        return int(self._scalar("an index"))

    def _scalar(self, what: str) -> Any:
        if self.size != 1:
            raise TypeError(f"{what} needs an array with one element, got shape {self.shape}")
        return self._value().reshape(()).item()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self) -> Any:
        # Explicit, as JAX's: indexing clamps (Note [out-of-bounds ints] in
        # numpy/index_plan.py), so Python's fallback of indexing until IndexError would
        # never end.
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self) -> int:
        raise TypeError("spmdc.Array is not hashable; use a tuple or a NumPy value as a "
                        "static argument")

    def __reduce__(self) -> Any:
        return (np.asarray, (self._value(),))

    def group(self) -> Any | None:
        """This value as one jaxlib array with a buffer per replica, in replica order:
        the slices of a split Array, or the copies of a replicated pmap result (None for
        a value on one device)."""
        if self._group is None:
            if self.split:
                self._group = pjrt.group_array(self._buffers, self._devices,
                                               self.type.shape[1:], self.type.dtype)
            elif self._copies is not None:
                self._group = pjrt.group_array(list(self._copies.values()),
                                               tuple(self._copies), self.type.shape,
                                               self.type.dtype)
        return self._group

    # --- layout over devices ---------------------------------------------------------------
    @property
    def sharding(self) -> Any:
        """A NamedSharding, or a SingleDeviceSharding for a value on one device. A pmap
        result split over n devices has a one-axis mesh of them, the axis named 'pmap'."""
        if self._sharding is not None:
            return self._sharding
        if self.split:
            mesh = Mesh(np.array(self._devices, dtype=object), ("pmap",))
            return NamedSharding(mesh, PartitionSpec("pmap"))
        return SingleDeviceSharding(self._devices[0])

    @property
    def device(self) -> Any:
        """The one device holding the array, or its sharding when it spans several (as
        JAX's ``Array.device``)."""
        self.check_not_deleted()
        sharding = self.sharding
        devices = sharding.device_set
        return next(iter(devices)) if len(devices) == 1 else sharding

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every block is this process's (Note [arrays over processes])."""
        return self._sharding is None or len(self._devices) == len(
            self._sharding._device_assignment)

    @property
    def addressable_shards(self) -> list[Shard]:
        """Each of this process's devices' blocks, in device order (as a one-device
        Array)."""
        sharding = self.sharding
        if self.split:
            index = {d: (slice(k, k + 1),) + (slice(None),) * (self.ndim - 1)
                     for k, d in enumerate(self._devices)}
            replica = dict.fromkeys(self._devices, 0)
            block = TensorType((1, *self.shape[1:]), self.dtype)
        else:
            index = sharding.devices_indices_map(self.shape)
            replica = (sharding.replica_ids(self.shape)
                       if hasattr(sharding, "replica_ids") else {self._devices[0]: 0})
            block = TensorType(sharding.shard_shape(self.shape), self.dtype)
        out = []
        for d, b in zip(self._devices, self._buffers, strict=True):
            data = Array((b,), block, self.weak, (d,))
            out.append(Shard(d, index[d], replica[d], data))
        return out

    @property
    def global_shards(self) -> list[Shard]:
        """Every device's block, in device order; the data of another process's block is
        None (Note [arrays over processes])."""
        if self.is_fully_addressable:
            return self.addressable_shards
        mine = {s.device: s for s in self.addressable_shards}
        index = self._sharding.devices_indices_map(self.shape)
        replica = self._sharding.replica_ids(self.shape)
        return [mine.get(d) or Shard(d, index[d], replica[d], None)
                for d in self._sharding._device_assignment]

    def addressable_data(self, index: int) -> Array:
        return self.addressable_shards[index].data

    # --- as a node of the C++ dispatchers' pytrees (Note [C++ dispatch] in pjrt/dispatch.py) --
    # The node's aux data is part of every call's signature, which the dispatcher compares
    # with the cached one; one shared tuple per distinct aux (_node_aux), kept by the
    # Array and handed on to the Arrays unflattened from it, makes that an identity test.
    #
    # Note [leaves read in C++]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~
    # A single-device launch's dispatcher flattens its arguments with a registry that
    # reads an Array's slots in C++ (pjrt.register_fields), calling no Python: its aux
    # data is ``_aux`` and its children the pytree in ``_kids`` (issue 18, W7: a call
    # over 100 + 100 small Arrays made 200 Python flatten calls). ``_kids`` holds the
    # buffers themselves (the one buffer, else the tuple of them) only where that is
    # exactly what _flatten would return: a value not laid out by a sharding, whose
    # ``_bufs`` and ``_aux`` are known (set together, by _unflatten or by the first
    # flatten). Everywhere else it is a _Pending: a weak reference to the Array (no
    # cycle to keep buffers alive), a node of its own whose Python flatten is the
    # Array's _flatten, which returns the real aux data (so the signature is whole
    # whatever ``_aux`` holds) and sets ``_kids`` once it can. An Array laid out by a
    # sharding stays _Pending: its child is one multi-device group_array, and jaxlib
    # crashes launching a donated one (Note [donation] in stablehlo.py), so _flatten
    # checks it on every call, as before. (Measured with jaxlib 0.10.2 on CPU: the
    # crash is in the Python-level launch; the C++ dispatcher, handed a deleted or
    # donated array whose signature it has granted, launches nothing and calls
    # ``cache_miss``, whose Python path explains it. The check stays, because that is
    # jaxlib's behaviour, not a promise.) So a deleted or donated single-device buffer
    # is safe to hand over: the dispatcher goes to the Python path, as before.
    # ``_kids`` goes back to _Pending wherever the aux data changes (the weak setter).
    # Results are rebuilt by _unflatten, registered in a second registry, because the
    # C++ registry rebuilds a node it reads by slots only by calling Array(**slots).
    def _node_aux(self) -> tuple[Any, ...]:
        if self._aux is None:
            self._aux = _interned_aux(self.type, self.weak, self._devices, self.split,
                                      self._sharding, self._committed)
        return self._aux

    def _flatten(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        # (an argument through _Pending, a result for fast_path; Note [leaves read in C++])
        if self._sharding is not None:
            # a partitioned program's argument: one group_array (Note [grouped launch] in
            # runtime/launcher.py). jaxlib crashes launching a deleted multi-device
            # array, so a donated one stops here (Note [donation] in stablehlo.py).
            group = self._group
            if group is None:
                group = self._group = pjrt.group_array(
                    list(self._buffers), self._devices, self._sharding.shard_shape(self.shape),
                    self.dtype)
            if group.is_deleted() and not pjrt.granting():
                self.check_not_deleted()
            return (group,), self._node_aux()
        bufs, aux = self._buffers, self._node_aux()
        self._kids = bufs[0] if len(bufs) == 1 else bufs     # Note [leaves read in C++]
        return bufs, aux

    def _flatten_grouped(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        group = self.group()
        if group is not None and group.is_deleted() and not pjrt.granting():   # as _flatten
            self.check_not_deleted()
        return (self._buffers if group is None else (group,)), self._node_aux()

    @classmethod
    def _unflatten_grouped(cls, aux: tuple[Any, ...], children: Any) -> Array:
        # Only outputs of replicated launches come back this way, one group_array each;
        # the per-device buffers are taken out of it on first use (see _buffers).
        out = cls(None, *aux)
        out._group = children[0]
        out._aux = aux
        return out


class _Pending(weakref.ref):
    """An Array's ``_kids`` where C++ may not read its leaves directly (Note [leaves read
    in C++]); a node flattened by the Array's _flatten."""
    __slots__ = ()


def _flatten_pending(pending: _Pending) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return pending()._flatten()


def _unflatten_pending(aux: tuple[Any, ...], children: Any) -> Any:
    # The argument registry only flattens (pjrt.register_fields).
    raise AssertionError("spmdc: an Array's argument node was unflattened")


def _unflatten(aux: tuple[Any, ...], buffers: tuple[Any, ...]) -> Array:
    # Runs for every output of every C++ launch, so it is a plain function that sets the
    # slots as Array.__init__ would, without calling it (which would double the cost).
    out = _new_array(Array)
    out.type, out._weak, out._devices, out.split, out._sharding, out._committed = aux
    if aux[4] is None:              # a single-device program's result: one buffer
        out._bufs = (out._kids,) = buffers
        out._group = None
    else:                           # a partitioned program's result: one group_array
        out._bufs, out._group = None, buffers[0]
        out._kids = _Pending(out)
    out._host = out._copies = None
    out._aux = aux
    return out


_new_array = object.__new__


@functools.lru_cache(maxsize=4096)
def _interned_aux(type: TensorType, weak: bool, devices: tuple[Any, ...],
                  split: bool, sharding: Sharding | None, committed: bool
                  ) -> tuple[Any, ...]:
    return (type, weak, devices, split, sharding, committed)


pjrt.register_fields(Array, "_kids", "_aux", "one")
pjrt.register_node(_Pending, _flatten_pending, _unflatten_pending, "one")
pjrt.register_node(Array, Array._flatten, _unflatten, "one results")
pjrt.register_node(Array, Array._flatten_grouped, Array._unflatten_grouped, "replicated")


# Note [committed arrays]
# ~~~~~~~~~~~~~~~~~~~~~~~
# As JAX's ``Array.committed``: an Array is committed when it was placed on its devices
# on purpose, so operations must not move it. ``device_put`` with a device or sharding
# commits (with none, it keeps a committed Array committed and leaves a host value
# uncommitted); ``jnp.array`` and other values put on the default device implicitly are
# uncommitted; a jitted program's results on one device are committed when any argument
# is; a program over several devices (a mesh, pmap) commits its results. The flag is
# part of an Array's aux data, so the C++ dispatcher's signature tells committed
# arguments from uncommitted ones and the results it rebuilds carry the flag of the
# call that granted it (Note [dispatch fast path] in transforms/jit.py).


# Note [Array text]
# ~~~~~~~~~~~~~~~~~~
# An Array prints as JAX's: NumPy's array2string of the value under NumPy's print
# options (line width, threshold), with ``Array(`` as prefix and the ``,`` that
# follows as suffix, so the wrapping is NumPy's; then ``dtype=...`` (and
# ``weak_type=True``) on the last line if it fits the line width, else on a line of
# its own indented under the values. An empty array names its shape instead.

def array_text(value: np.ndarray, weak: bool) -> str:
    """``repr`` of an Array holding ``value`` (Note [Array text]); also the text of a
    traced value JAX would hold as an Array (core/tracer_text.py)."""
    prefix = "Array("
    dtype_text = f"dtype={value.dtype.name}{', weak_type=True' if weak else ''}"
    line_width = np.get_printoptions()["linewidth"]
    if value.size == 0:
        body = f"[], shape={value.shape}"
    else:
        body = np.array2string(value, prefix=prefix, suffix=",", separator=", ",
                               max_line_width=line_width)
    last_line = len(body) - body.rfind("\n") + 1
    sep = " " * len(prefix) if last_line + len(dtype_text) + 2 > line_width else " "
    return f"{prefix}{body},{sep}{dtype_text})"
