"""``jax.extend.backend.get_compile_options`` / ``register_backend_cache``,
``jax.interpreters.pxla.create_compile_options``, ``jax.interpreters.xla.Backend`` /
``apply_primitive``, ``jax.extend.random`` and ``jax.extend.sharding``, against values
recorded from JAX 0.10.2."""
import functools

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.core.abstract import ShapedArray
from spmdc.extend import backend, core
from spmdc.extend import random as xrandom
from spmdc.extend import sharding as xsharding
from spmdc.interpreters import mlir, pxla, xla


def test_compile_options_as_jax_makes_them():
    opts = backend.get_compile_options(2, 1, device_assignment=spmdc.devices()[:2],
                                       env_options_overrides={"xla_cpu_enable_fast_math":
                                                              "false"})
    # JAX 0.10.2: 2 1 DeviceAssignment{... Computation0{0 1}} -1 [(...)] True True
    assert (opts.num_replicas, opts.num_partitions) == (2, 1)
    assert "Computation0{0 1}" in str(opts.device_assignment)
    assert opts.profile_version == -1
    assert opts.env_option_overrides == [("xla_cpu_enable_fast_math", "false")]
    build = opts.executable_build_options
    assert build.use_spmd_partitioning and build.debug_options.xla_detailed_logging
    assert backend.get_compile_options(
        1, 1, env_options_overrides={"optimization_level": 1}
    ).executable_build_options.optimization_level == 1
    with pytest.raises(ValueError, match="does not match num_replicas"):
        backend.get_compile_options(3, 1, device_assignment=spmdc.devices()[:2])
    with pytest.raises(TypeError, match="backend must be the client"):
        backend.get_compile_options(1, 1, backend="cpu")


@pytest.mark.devices(4)
def test_create_compile_options_of_a_module():
    module = spmdc.jit(lambda x: x * 2 + 1).lower(1.0).compiler_ir()
    opts = pxla.create_compile_options(module, True, [False], [True], None,
                                       np.array(spmdc.devices()[:4]), {})
    build = opts.executable_build_options
    # JAX 0.10.2: 4 True [False] [True] False (two operations: no detailed logging)
    assert opts.num_partitions == 4 and opts.parameter_is_tupled_arguments
    assert build.allow_spmd_sharding_propagation_to_parameters == [False]
    assert build.allow_spmd_sharding_propagation_to_output == [True]
    assert not build.debug_options.xla_detailed_logging
    options = {"fdo_profile": b"", "xla_cpu_enable_fast_math": "false"}
    pxla.create_compile_options(module, False, [], [], None, np.array(spmdc.devices()[:1]),
                                options)
    assert options == {"xla_cpu_enable_fast_math": "false"}        # fdo_profile taken out


def test_registered_cache_is_cleared_with_the_compiled_programs():
    @functools.lru_cache
    def square(n):
        return n * n
    square(3)
    backend.register_backend_cache(square, "squares")
    assert square.cache_info().currsize == 1
    spmdc.clear_caches()
    assert square.cache_info().currsize == 0
    with pytest.raises(TypeError, match="no cache_clear"):
        backend.register_backend_cache({}, "a dict")


def test_backend_is_the_client_class_and_apply_primitive_compiles_one_primitive():
    assert isinstance(backend.get_backend(), xla.Backend)
    p = core.Primitive("test_apply_twice")
    calls = []

    def twice(x):
        calls.append(1)
        return x * 2
    p.def_impl(functools.partial(xla.apply_primitive, p))      # as libraries write it
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(twice, multiple_results=False))
    out = p.bind(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])
    assert calls == [1]                          # traced once, into the lowering
    np.testing.assert_array_equal(np.asarray(spmdc.jit(p.bind)(np.ones(2, np.float32))),
                                  [2, 2])
    with pytest.raises(TypeError, match="expected a primitive"):
        xla.apply_primitive(len, 1)


def test_threefry_2x32_is_jaxs():
    out = xrandom.threefry_2x32((np.uint32(1), np.uint32(2)), jnp.arange(5, dtype=np.uint32))
    assert np.asarray(out).tolist() == [2052595727, 3504730591, 2527474599, 1880214352,
                                        1914734168]
    out = xrandom.threefry_2x32((np.uint32(0x12345678), np.uint32(7)),
                                jnp.arange(6, dtype=np.uint32).reshape(2, 3))
    assert np.asarray(out).tolist() == [[677542639, 1937949975, 3356722250],
                                        [921435343, 1406254459, 2699987999]]
    with pytest.raises(TypeError, match="requires uint32"):
        xrandom.threefry_2x32((np.uint32(1), np.uint32(2)), np.arange(3))


def test_random_seed_makes_a_key_per_seed():
    keys = xrandom.random_seed(jnp.array([[1, 2], [3, 40]]), "threefry2x32")
    assert keys.shape == (2, 2) and str(keys.dtype) == "key<fry>"
    assert np.asarray(spmdc.random.key_data(keys)).tolist() == \
        [[[0, 1], [0, 2]], [[0, 3], [0, 40]]]
    key = xrandom.random_seed(5, spmdc.random.key_dtype())
    np.testing.assert_allclose(np.asarray(spmdc.random.uniform(key, (3,))),
                               [0.46637988090515137, 0.9208810329437256, 0.7358101606369019])
    with pytest.raises(TypeError, match="impl must name"):
        xrandom.random_seed(5, None)


# JAX 0.10.2: NamedSharding(mesh (4, 2), P('x', None))._to_xla_hlo_sharding(2), serialized
PROTO = b"\x08\x03\x1a\x03\x04\x01\x020\x01J\x01\x08R\x01\x00"


def test_sharding_protos_round_trip():
    op = xsharding.get_op_sharding_from_serialized_proto(PROTO)
    assert list(op.tile_assignment_dimensions) == [4, 1, 2] and op.replicate_on_last_tile_dim
    hlo = xsharding.get_hlo_sharding_from_serialized_proto(PROTO)
    assert list(hlo.tile_assignment_dimensions()) == [4, 1, 2]
    assert repr(hlo) == "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
    again = xsharding.get_serialized_proto_from_hlo_sharding(hlo)
    assert xsharding.get_hlo_sharding_from_serialized_proto(again) == hlo
    with pytest.raises(TypeError, match="serialized OpSharding proto"):
        xsharding.get_op_sharding_from_serialized_proto("text")
    with pytest.raises(TypeError, match="HloSharding"):
        xsharding.get_serialized_proto_from_hlo_sharding(op)


def test_extend_names_its_submodules():
    import spmdc.extend as extend
    assert extend.random is xrandom and extend.sharding is xsharding


# JAX 0.10.2: NamedSharding(Mesh(devices[::-1].reshape(4, 2), ('x', 'y')), P('y', 'x')),
# a transposed tile assignment {devices=[2,4]<=[4,2]T(1,0)}
TRANSPOSED = b"\x08\x03\x1a\x02\x02\x04J\x02\x04\x02R\x02\x01\x00"


@pytest.mark.devices(8)
def test_gspmd_sharding_places_as_jaxs():
    from spmdc.extend.sharding import GSPMDSharding
    devices = spmdc.devices()[:8]
    s = GSPMDSharding(devices, xsharding.get_hlo_sharding_from_serialized_proto(PROTO))
    assert repr(s) == ("GSPMDSharding({devices=[4,1,2]<=[8] last_tile_dim_replicate}, "
                       "memory_kind=device)")
    assert (s.num_devices, s.is_fully_replicated, s.memory_kind) == (8, False, "device")
    assert s.shard_shape((8, 3)) == (2, 3)
    index = s.devices_indices_map((8, 3))
    assert index[devices[0]] == index[devices[1]] == (slice(0, 2), slice(None))
    assert index[devices[3]] == (slice(2, 4), slice(None))
    x = spmdc.device_put(np.arange(24.0, dtype=np.float32).reshape(8, 3), s)
    assert float(np.asarray(x * 2).sum()) == 552.0
    assert s == GSPMDSharding(devices, s._to_xla_hlo_sharding(2))
    assert hash(s) == hash(GSPMDSharding(devices, s._to_xla_hlo_sharding(2)))
    t = GSPMDSharding(devices, xsharding.get_op_sharding_from_serialized_proto(TRANSPOSED))
    got = {d.id: idx for d, idx in t.devices_indices_map((4, 8)).items()}
    assert got == {k: (slice(2 * (k % 2), 2 * (k % 2) + 2), slice(2 * (k // 2), 2 * (k // 2) + 2))
                   for k in range(8)}
    r = GSPMDSharding.get_replicated(devices[:2])
    assert repr(r) == "GSPMDSharding({replicated}, memory_kind=device)"
    assert r.is_fully_replicated and r != s
    with pytest.raises(ValueError, match="only valid for values of rank at least 2"):
        s.check_compatible_aval((8,))
    with pytest.raises(ValueError, match="assigns tiles to 8 devices, but 4"):
        GSPMDSharding(devices[:4], s._to_xla_hlo_sharding(2))
    with pytest.raises(TypeError, match="HloSharding or OpSharding"):
        GSPMDSharding(devices, "replicated")
