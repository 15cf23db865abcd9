"""spmdc.example_libraries.optimizers against JAX 0.10.2: the same programs
(tests/libs_programs.py) give JAX's numbers, recorded by `tools/record.py libs`."""
from __future__ import annotations

import libs_programs
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.example_libraries import optimizers

REF = oracle.recorded("libs_reference.npz")


def test_tutorial_mlp_trained_with_adam_gives_jax_numbers():
    losses, final = libs_programs.mlp_adam(spmdc)
    np.testing.assert_allclose(losses, REF["examples.mlp_adam.losses"], rtol=2e-5)
    assert losses[-1] < 0.5 * losses[0]
    for k, leaf in enumerate(final):
        np.testing.assert_allclose(leaf, REF[f"examples.mlp_adam.param{k}"], rtol=2e-4,
                                   atol=2e-6)


def test_every_optimizer_and_schedule_gives_jax_numbers():
    for name, value in libs_programs.every_optimizer(spmdc).items():
        np.testing.assert_allclose(value, REF[f"examples.optimizer.{name}"], rtol=1e-5,
                                   atol=1e-6, err_msg=name)


def test_optimizer_state_is_a_pytree_through_jit_and_pack_unpack():
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    params = {"w": jnp.ones((2, 2)), "b": [jnp.zeros(2), jnp.ones(())]}
    state = opt_init(params)
    leaves = spmdc.tree_util.tree_leaves(state)
    assert len(leaves) == 9                       # (x, m, v) for each of 3 arrays
    grads = spmdc.tree_util.tree_map(jnp.ones_like, params)
    state = spmdc.jit(opt_update)(0, grads, state)
    again = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    assert isinstance(again, optimizers.OptimizerState)
    for a, b in zip(spmdc.tree_util.tree_leaves(again), spmdc.tree_util.tree_leaves(state),
                    strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(get_params(state)["w"], 0.9, rtol=1e-5)


def test_optimizer_errors():
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init({"a": jnp.ones(2)})
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        opt_update(0, {"b": jnp.ones(2)}, state)
    with pytest.raises(TypeError, match="step_size must be a scalar or a schedule"):
        optimizers.sgd(jnp.ones(3))
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(TypeError, match="JoinPoints"):
        optimizers.pack_optimizer_state({"a": 1})


def test_l2_norm_and_clip_grads():
    tree = {"a": jnp.array([3., 0.]), "b": jnp.array(4.)}
    assert float(optimizers.l2_norm(tree)) == pytest.approx(5.)
    clipped = optimizers.clip_grads(tree, 1.)
    assert float(optimizers.l2_norm(clipped)) == pytest.approx(1.)
    np.testing.assert_allclose(optimizers.clip_grads(tree, 10.)["a"], [3., 0.])
