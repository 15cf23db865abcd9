"""Names Flax reads at import and in its sharding helpers: jax.sharding.AbstractMesh and
get_abstract_mesh (the current mesh without devices; empty when none), and
jax.experimental.layout's Layout and Format (Flax rebuilds a Format around a renamed
sharding); jnp's float8 type names (Flax's fp8 layers' class defaults), which spmdc's
arrays do not take."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.experimental.layout import Format, Layout
from spmdc.sharding import AbstractMesh, AxisType, PartitionSpec, get_abstract_mesh


def test_get_abstract_mesh_is_empty_without_a_mesh_and_follows_set_mesh():
    mesh = get_abstract_mesh()
    assert mesh.empty and mesh.size == 1 and mesh.axis_names == ()
    devices = spmdc.devices()[:1]
    with spmdc.sharding.set_mesh(spmdc.make_mesh((1,), ("data",), devices=devices)):
        inside = get_abstract_mesh()
        assert not inside.empty
        assert inside.shape == {"data": 1} and inside.axis_types == (AxisType.Explicit,)
        assert inside == AbstractMesh((1,), ("data",), AxisType.Explicit,
                                      abstract_device=inside.abstract_device)
        assert inside.abstract_device.platform == devices[0].platform
    assert get_abstract_mesh().empty


def test_abstract_mesh_shape_and_errors():
    m = AbstractMesh((2, 4), ("x", "y"))
    assert m.size == 8 and m.shape_tuple == (("x", 2), ("y", 4))
    assert m.axis_types == (AxisType.Auto, AxisType.Auto)
    assert hash(m) == hash(AbstractMesh((2, 4), ("x", "y")))
    with pytest.raises(ValueError, match="2 axis sizes"):
        AbstractMesh((2, 4), ("x",))


def test_format_carries_a_layout_and_a_sharding():
    spec = PartitionSpec("x")
    f = Format(Layout((1, 0)), spec)
    rebuilt = Format(f.layout, PartitionSpec("y"))
    assert rebuilt.layout == Layout((1, 0)) and rebuilt.sharding == PartitionSpec("y")
    assert Format(None, spec) == Format(sharding=spec) != f
    with pytest.raises(TypeError, match="layout must be a Layout"):
        Format((1, 0), spec)


def test_float8_names_stand_for_the_ml_dtypes_types_and_arrays_take_them():
    import ml_dtypes
    assert jnp.float8_e4m3fn == ml_dtypes.float8_e4m3fn
    assert np.dtype(jnp.float8_e5m2).itemsize == 1
    x = jnp.asarray([1.0, 448.0], jnp.float8_e4m3fn)      # JAX 0.10.2: the same values
    assert x.dtype == ml_dtypes.float8_e4m3fn and np.asarray(x).tolist() == [1.0, 448.0]


def test_partition_spec_index_count_and_concatenation():
    # Flax linen's logical axis rules look a logical name up with spec.index(name);
    # values as JAX 0.10.2 gives them
    p = PartitionSpec("batch", ("embed", "mlp"), None)
    assert p.index("batch") == 0 and p.index(("embed", "mlp")) == 1 and p.count(None) == 1
    assert p.partitions == ("batch", ("embed", "mlp"), None)
    with pytest.raises(ValueError):
        p.index("heads")
    assert p + ("kv",) == PartitionSpec("batch", ("embed", "mlp"), None, "kv")
    assert ("kv",) + p == PartitionSpec("kv", "batch", ("embed", "mlp"), None)
    assert isinstance(p + PartitionSpec("kv"), PartitionSpec)
    assert repr(p + PartitionSpec("kv")) == "P('batch', ('embed', 'mlp'), None, 'kv')"


@pytest.mark.devices(4)
def test_with_sharding_constraint_takes_a_format_of_the_default_layout_only():
    # Flax's Variable(value, out_sharding=Format(layout, sharding)) constrains the value
    # with the Format (Note [formats] in spmdc/runtime/layouts.py)
    mesh = spmdc.make_mesh((2, 2), ("data", "model"))
    ns = spmdc.sharding.NamedSharding(mesh, PartitionSpec("data", None))
    x = jnp.arange(16.0).reshape(4, 4)
    for layout in (None, Layout((0, 1))):
        y = spmdc.lax.with_sharding_constraint(x, Format(layout, ns))
        assert y.sharding == ns
        np.testing.assert_array_equal(np.asarray(y), np.arange(16.0).reshape(4, 4))
    with pytest.raises(ValueError, match=r"memory layout .*major_to_minor=\(1, 0\).* "
                                         r"default row-major order"):
        spmdc.lax.with_sharding_constraint(x, Format(Layout((1, 0)), ns))
