"""What Orbax's save and restore read from JAX besides array_serialization, each as JAX
0.10.2 has it: ``Array.device`` (the one device, or the sharding), a sharding's
``_addressable_device_assignment``, ``make_single_device_sharding(memory_kind=)``,
``device_put`` to a ``Format``, ``multihost_utils.reached_preemption_sync_point`` (False in
one process), ``jax._src.distributed.global_state`` and ``jax._src.tree_util`` as
attributes, and ``jax.extend.ifrt_programs``."""
import numpy as np
import pytest
from needs import needs_devices

import spmdc
from spmdc.experimental import multihost_utils
from spmdc.experimental.layout import Format, Layout
from spmdc.sharding import NamedSharding, make_single_device_sharding
from spmdc.sharding import PartitionSpec as P


def test_array_device_is_the_device_or_the_sharding():
    needs_devices(2)
    d = spmdc.devices()
    assert spmdc.device_put(np.ones(2), d[1]).device == d[1]
    mesh = spmdc.make_mesh((2,), ("x",))
    s = NamedSharding(mesh, P("x"))
    x = spmdc.device_put(np.ones(4), s)
    assert x.device == s
    assert s._addressable_device_assignment == list(mesh.devices.flat)


def test_single_device_sharding_memory_kind_and_format_targets():
    d = spmdc.devices()[0]
    s = make_single_device_sharding(d, memory_kind="device")
    assert s.memory_kind == "device" and s.device_set == {d}
    x = spmdc.device_put(np.arange(3.0), Format(None, s))
    assert x.sharding == s and np.asarray(x).tolist() == [0.0, 1.0, 2.0]
    y = spmdc.device_put(np.ones((2, 2)), Format(Layout((0, 1)), s))
    assert y.device == d
    with pytest.raises(ValueError, match="default row-major order"):
        spmdc.device_put(np.ones((2, 2)), Format(Layout((1, 0)), s))


def test_preemption_and_distributed_state_in_one_process():
    assert multihost_utils.reached_preemption_sync_point(7) is False
    state = spmdc._src.distributed.global_state
    assert state.client is None and state.process_id == 0 and state.num_processes == 1
    children, _ = spmdc._src.tree_util.flatten_one_level({"a": 1, "b": 2})
    assert children == [1, 2]


def test_ifrt_programs_is_jaxlibs():
    from spmdc.extend import ifrt_programs
    assert callable(ifrt_programs.ifrt_programs.make_plugin_program)
    assert ifrt_programs.ifrt_programs.__name__.endswith("ifrt_programs")


def test_itemsize():
    assert spmdc.numpy.ones(3, spmdc.numpy.int16).itemsize == 2
    assert spmdc.numpy.ones((), spmdc.numpy.float32).itemsize == 4


class _Flags:
    """absl.flags.FLAGS as parse_flags_with_absl uses it (absl is not installed here)."""

    def __init__(self):
        self.calls = []

    def is_parsed(self):
        return bool(self.calls)

    def __call__(self, argv, known_only=False):
        self.calls.append((list(argv), known_only))


def test_parse_flags_with_absl_marks_absl_flags_parsed(monkeypatch):
    import sys
    import types
    flags = types.ModuleType("absl.flags")
    flags.FLAGS = _Flags()
    absl = types.ModuleType("absl")
    absl.flags = flags
    monkeypatch.setitem(sys.modules, "absl", absl)
    monkeypatch.setitem(sys.modules, "absl.flags", flags)
    monkeypatch.setattr(sys, "argv", ["prog", "-q", "--jax_numpy_rank_promotion=allow",
                                      "--", "--jax_other"])
    spmdc.config.parse_flags_with_absl()
    spmdc.config.parse_flags_with_absl()
    assert flags.FLAGS.calls == [(["", "--jax_numpy_rank_promotion=allow"], True)]
    assert spmdc.config.jax_numpy_rank_promotion == "allow"


def test_shape_dtype_struct_keeps_the_dtype_given():
    # JAX 0.10.2 (x64 off): ShapeDtypeStruct((3,), np.float64).dtype is float64, int is
    # int64; a value traced from it is float32 / int32 (Orbax restores a NumPy leaf with
    # the struct's dtype).
    s = spmdc.ShapeDtypeStruct((3,), np.float64)
    assert s.dtype == np.float64 and spmdc.ShapeDtypeStruct((), int).dtype == np.int64
    assert spmdc.ShapeDtypeStruct((), spmdc.numpy.float64).dtype == np.float64
    assert spmdc.ShapeDtypeStruct((), spmdc.numpy.bfloat16).dtype == spmdc.numpy.bfloat16
    assert spmdc.eval_shape(lambda x: x * 2, s).dtype == np.float32
    assert str(spmdc.make_jaxpr(lambda x: x + 1)(s)).startswith("{ lambda ; a:f32[3].")


def test_make_array_from_callback_scalar_with_unsharding_spec_entries():
    needs_devices(2)
    mesh = spmdc.make_mesh((2,), ("x",))
    x = spmdc.make_array_from_callback((), NamedSharding(mesh, P(None)),
                                       lambda idx: np.asarray(5.0)[idx])
    assert float(x) == 5.0 and x.sharding.spec == P()
    with pytest.raises(ValueError, match="has 1 entries"):
        spmdc.make_array_from_callback((), NamedSharding(mesh, P("x")),
                                       lambda idx: np.asarray(5.0)[idx])


def test_key_arrays_are_arrays_with_a_logical_sharding():
    needs_devices(4)
    from spmdc.random.keys import PRNGKeyArray
    assert issubclass(PRNGKeyArray, spmdc.Array) and not issubclass(int, spmdc.Array)
    keys = spmdc.random.split(spmdc.random.key(0), 4)
    assert keys.sharding == spmdc.sharding.SingleDeviceSharding(spmdc.devices()[0])
    mesh = spmdc.make_mesh((4,), ("x",))
    placed = spmdc.device_put(keys, NamedSharding(mesh, P("x")))
    assert placed.sharding == NamedSharding(mesh, P("x"))


def test_eval_shape_of_a_struct_of_key_dtype():
    # Orbax reads a saved key's data shape this way (JAX: ((3, 2), uint32)).
    struct = spmdc.ShapeDtypeStruct((3,), spmdc.random.key(0).dtype)
    data = spmdc.eval_shape(spmdc.random.key_data, struct)
    assert data.shape == (3, 2) and data.dtype == np.uint32
    assert spmdc.eval_shape(lambda k: k, struct) == struct
    split = spmdc.eval_shape(lambda k: spmdc.random.split(k[0], 5), struct)
    assert split.shape == (5,) and split.dtype == struct.dtype


def test_jnp_array_device():
    needs_devices(2)
    d = spmdc.devices()[1]
    x = spmdc.numpy.array([1.0, 2.0], device=d)
    assert x.device == d and np.asarray(x).tolist() == [1.0, 2.0]
    keys = spmdc.numpy.array(spmdc.random.split(spmdc.random.key(1), 2), device=d)
    assert keys.sharding == spmdc.sharding.SingleDeviceSharding(d)
