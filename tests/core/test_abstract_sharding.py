"""The sharding of an abstract value (Note [the sharding of an abstract value]):
``typeof(x).sharding`` is a NamedSharding over the empty AbstractMesh with one ``None``
per dimension, as JAX gives an unsharded value, eagerly and under jit; and the axis-type
questions meshes answer (``are_all_axes_explicit`` ..., False for a mesh without axes),
which Optax's tree_vdot and microbatching ask of it."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec


def test_typeof_sharding_is_the_empty_mesh_one_none_per_dimension():
    s = spmdc.typeof(jnp.ones((2, 3))).sharding
    assert isinstance(s, NamedSharding)
    assert s.mesh == AbstractMesh((), ()) and s.spec == PartitionSpec(None, None)
    assert not s.mesh.are_all_axes_explicit and s.is_fully_replicated
    assert s.shard_shape((2, 3)) == (2, 3)
    assert repr(s.mesh) == "AbstractMesh((), axis_types=())"
    seen = []

    def f(x):
        seen.append(spmdc.typeof(x).sharding)
        mesh = spmdc.typeof(x).sharding.mesh       # Optax's _vdot, step by step
        out = None if not mesh.are_all_axes_explicit else NamedSharding(mesh, PartitionSpec())
        assert out is None
        return jnp.tensordot(x, x, x.ndim)
    np.testing.assert_allclose(spmdc.jit(f)(jnp.arange(3.0)), 5.0)
    assert seen[0].spec == PartitionSpec(None) and seen[0].mesh.empty


def test_axis_type_questions_of_meshes():
    explicit = AbstractMesh((2, 4), ("x", "y"), AxisType.Explicit)
    assert explicit.are_all_axes_explicit and not explicit.are_all_axes_auto
    mixed = AbstractMesh((2, 4), ("x", "y"), (AxisType.Explicit, AxisType.Auto))
    assert not (mixed.are_all_axes_explicit or mixed.are_all_axes_auto)
    assert AbstractMesh((2,), ("x",), AxisType.Manual).are_all_axes_manual
    empty = AbstractMesh((), ())
    assert not (empty.are_all_axes_explicit or empty.are_all_axes_auto
                or empty.are_all_axes_manual)
    mesh = spmdc.make_mesh((1,), ("data",), devices=spmdc.devices()[:1])
    assert mesh.are_all_axes_explicit           # make_mesh's default, as in JAX


def test_a_sharding_over_an_abstract_mesh_has_block_shapes_not_devices():
    s = NamedSharding(AbstractMesh((2, 4), ("x", "y")), PartitionSpec("y", "x"))
    assert s.shard_shape((8, 6)) == (2, 3) and not s.is_fully_replicated
    with pytest.raises(ValueError, match="not divisible by 4"):
        s.shard_shape((6, 6))
    with pytest.raises(ValueError, match="names mesh axis 'z'"):
        NamedSharding(AbstractMesh((2,), ("x",)), PartitionSpec("z"))
    with pytest.raises(TypeError, match="Mesh or AbstractMesh"):
        NamedSharding("mesh", PartitionSpec())
