"""jax.sharding's explicit-axes names: AbstractDevice, use_abstract_mesh, auto_axes and
explicit_axes (Note [auto and explicit axes] in spmdc/sharding.py), with the results, the
layouts and the axis types inside that JAX 0.10.2 gives on 8 CPU devices (recorded)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc.sharding import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    NamedSharding,
    auto_axes,
    explicit_axes,
    get_abstract_mesh,
    set_mesh,
    use_abstract_mesh,
)
from spmdc.sharding import (
    PartitionSpec as P,
)

pytestmark = pytest.mark.devices(8)

X = np.arange(32.0, dtype=np.float32).reshape(8, 4)
WANT = X * 2 + 1


def _mesh(kind: AxisType) -> spmdc.sharding.Mesh:
    return spmdc.make_mesh((2, 4), ("X", "Y"), axis_types=(kind, kind))


def _recording():
    seen: list[tuple[AxisType, ...]] = []

    def f(a):
        seen.append(get_abstract_mesh().axis_types)
        return a * 2 + 1
    return f, seen


def test_auto_axes_switches_the_types_inside_and_reshards_the_results():
    f, seen = _recording()
    mesh = _mesh(AxisType.Explicit)
    with set_mesh(mesh):
        xs = spmdc.device_put(X, P("X", None))
        y = auto_axes(f, out_sharding=P(None, "Y"))(xs)
        np.testing.assert_array_equal(np.asarray(y), WANT)
        assert y.sharding == NamedSharding(mesh, P(None, "Y"))
        assert seen[-1] == (AxisType.Auto, AxisType.Auto)
        y = spmdc.jit(auto_axes(f, axes="X", out_sharding=P("X", "Y")))(xs)
        np.testing.assert_array_equal(np.asarray(y), WANT)
        assert y.sharding == NamedSharding(mesh, P("X", "Y"))
        assert seen[-1] == (AxisType.Auto, AxisType.Explicit)
        y = auto_axes(f)(xs, out_sharding=P("Y"))          # out_sharding= per call
        assert y.sharding.spec[0] == "Y" and seen[-1] == (AxisType.Auto, AxisType.Auto)
        with pytest.raises(TypeError, match="'out_sharding'"):
            auto_axes(f)(xs)
    assert get_abstract_mesh().empty


def test_explicit_axes_reshards_the_arguments_and_auto_axes_of_auto_axes_pass_through():
    f, seen = _recording()
    with set_mesh(_mesh(AxisType.Auto)):
        xs = spmdc.device_put(X, P("X", None))
        y = explicit_axes(f, in_sharding=P("X", "Y"))(xs)
        np.testing.assert_array_equal(np.asarray(y), WANT)
        assert seen[-1] == (AxisType.Explicit, AxisType.Explicit)
        y = auto_axes(f, out_sharding=P("Y"))(xs)           # already Auto: f alone, as JAX
        assert y.sharding.spec[0] == "X" and seen[-1] == (AxisType.Auto, AxisType.Auto)


def test_without_a_mesh_auto_axes_uses_the_shardings_mesh_and_explicit_axes_refuses():
    f, seen = _recording()
    out = auto_axes(f, out_sharding=P("X"))(X)              # no mesh at all: f alone
    assert isinstance(out, np.ndarray) and seen[-1] == ()
    mesh = _mesh(AxisType.Explicit)
    y = auto_axes(f, out_sharding=NamedSharding(mesh, P("X")))(X)
    assert y.sharding.spec[0] == "X" and seen[-1] == (AxisType.Auto, AxisType.Auto)
    with pytest.raises(ValueError, match="context mesh cannot be empty"):
        explicit_axes(f, in_sharding=P("X"))(X)
    with set_mesh(mesh):
        with pytest.raises(ValueError, match=r"axes \['Z'\] are not axes"):
            auto_axes(f, axes="Z", out_sharding=P("X"))(X)
        other = spmdc.make_mesh((4, 2), ("X", "Y"))
        with pytest.raises(ValueError, match="must match the mesh of the shardings"):
            auto_axes(f, out_sharding=NamedSharding(other, P("X")))(X)
    manual = AbstractMesh((2, 4), ("X", "Y"), (AxisType.Manual, AxisType.Auto))
    with use_abstract_mesh(manual), pytest.raises(NotImplementedError, match="Manual"):
        auto_axes(f, axes="X", out_sharding=P("X"))(X)


def test_use_abstract_mesh_and_the_abstract_device():
    mesh = _mesh(AxisType.Explicit)
    device = AbstractDevice(device_kind="cpu", num_cores=None, platform="cpu")
    assert repr(device) == "AbstractDevice(device_kind=cpu, num_cores=None, platform=cpu)"
    assert mesh.abstract_mesh == AbstractMesh((2, 4), ("X", "Y"), (AxisType.Explicit,) * 2,
                                              abstract_device=device)
    assert mesh.abstract_mesh != AbstractMesh((2, 4), ("X", "Y"), (AxisType.Explicit,) * 2)
    abstract = AbstractMesh((2, 4), ("X", "Y"))
    with use_abstract_mesh(abstract):
        assert get_abstract_mesh() is abstract
        assert repr(get_abstract_mesh()) == "AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto))"
        with pytest.raises(ValueError, match="cannot change the size of the mesh"):
            with use_abstract_mesh(AbstractMesh((2,), ("X",))):
                pass
        assert get_abstract_mesh() is abstract
    assert get_abstract_mesh().empty
    with pytest.raises(ValueError, match="expected a jax.sharding.AbstractMesh, got Mesh"):
        use_abstract_mesh(mesh)
    assert abstract.update_axis_types({"Y": AxisType.Manual}).manual_axes == ("Y",)
    assert abstract.explicit_axes == () and abstract.auto_axes == ("X", "Y")
