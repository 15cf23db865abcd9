"""The ``names`` case set: the public names of JAX 0.10.2's public modules, which
tests/e2e/test_coverage.py compares with spmdc's (and ``make sz`` counts).

The modules are those of JAX's API reference (docs/jax.rst and the pages it links:
jax.numpy ... jax.experimental.*, every jax.scipy submodule and each distribution of
jax.scipy.stats), plus the public modules it does not document that programs import
(jax.errors, jax.monitoring, jax.custom_derivatives, jax.custom_batching, jax.api_util,
jax.core, jax.interpreters.*, jax.lax.linalg, jax.numpy.linalg/fft, the experimental
shard_map, pjit, layout, ode, compute_on, xla_metadata). Left out, with the reason:

- Pallas (jax.experimental.pallas and its tpu, triton, mosaic_gpu backends,
  jax.extend.pallas): a kernel language lowered to Mosaic/Triton, outside spmdc's scope;
- jax.experimental.topologies, colocated_python, transfer, buffer_callback and
  jax.extend.ifrt_programs: TPU topologies and IFRT/Pathways runtimes spmdc's PJRT client
  does not have;
- jax.experimental.{fused, scheduling_groups, hijax, array_serialization}, jax.lib: not in
  JAX's API reference (internals or empty packages whose contents move between releases).

A public name is one of ``dir(module)`` that does not start with an underscore, less the
modules it merely imports (a submodule counts as a name of its parent) and the objects of
Python's standard library it imports (``partial``, ``Any``, ``Callable`` ...).
"""
from __future__ import annotations

import importlib
import json
import types

NAMESPACES = """
    jax jax.numpy jax.numpy.linalg jax.numpy.fft jax.lax jax.lax.linalg jax.random
    jax.sharding jax.ad_checkpoint jax.debug jax.dlpack jax.distributed jax.dtypes jax.ffi
    jax.flatten_util jax.image jax.nn jax.nn.initializers jax.ops jax.profiler jax.ref
    jax.stages jax.test_util jax.tree jax.tree_util jax.typing jax.export jax.errors
    jax.monitoring jax.custom_derivatives jax.custom_batching jax.api_util jax.core
    jax.scipy jax.scipy.cluster jax.scipy.cluster.vq jax.scipy.fft jax.scipy.integrate
    jax.scipy.interpolate jax.scipy.linalg jax.scipy.ndimage jax.scipy.optimize
    jax.scipy.signal jax.scipy.spatial.transform jax.scipy.sparse jax.scipy.sparse.linalg
    jax.scipy.special jax.scipy.stats
    jax.scipy.stats.bernoulli jax.scipy.stats.beta jax.scipy.stats.betabinom
    jax.scipy.stats.binom jax.scipy.stats.cauchy jax.scipy.stats.chi2
    jax.scipy.stats.dirichlet jax.scipy.stats.expon jax.scipy.stats.gamma
    jax.scipy.stats.gennorm jax.scipy.stats.geom jax.scipy.stats.gumbel_l
    jax.scipy.stats.gumbel_r jax.scipy.stats.laplace jax.scipy.stats.logistic
    jax.scipy.stats.multinomial jax.scipy.stats.multivariate_normal jax.scipy.stats.nbinom
    jax.scipy.stats.norm jax.scipy.stats.pareto jax.scipy.stats.poisson jax.scipy.stats.t
    jax.scipy.stats.truncnorm jax.scipy.stats.uniform jax.scipy.stats.vonmises
    jax.scipy.stats.wrapcauchy
    jax.extend jax.extend.backend jax.extend.core jax.extend.core.primitives
    jax.extend.linear_util jax.extend.mlir jax.extend.random jax.extend.source_info_util
    jax.extend.lowering jax.extend.xla jax.extend.sharding
    jax.example_libraries.optimizers jax.example_libraries.stax
    jax.experimental jax.experimental.checkify jax.experimental.compilation_cache
    jax.experimental.compilation_cache.compilation_cache jax.experimental.custom_partitioning
    jax.experimental.jet jax.experimental.mesh_utils jax.experimental.multihost_utils
    jax.experimental.random jax.experimental.serialize_executable jax.experimental.sparse
    jax.experimental.sparse.linalg jax.experimental.shard_map jax.experimental.layout
    jax.experimental.ode jax.experimental.xla_metadata jax.experimental.compute_on
    jax.interpreters jax.interpreters.ad jax.interpreters.batching jax.interpreters.mlir
    jax.interpreters.partial_eval jax.interpreters.pxla jax.interpreters.xla
    """.split()


def public_names(namespace: str) -> list[str]:
    """The public names of one of JAX's modules (this module's docstring says which)."""
    import __future__

    import builtins
    import collections
    import collections.abc
    import functools
    import operator
    import typing
    standard = {id(getattr(m, n)) for m in (typing, collections, collections.abc, functools,
                                            builtins, operator, __future__)
                for n in dir(m) if not n.startswith("_") and (
                    callable(getattr(m, n)) or m is __future__)}
    module = importlib.import_module(namespace)
    names = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType) and not value.__name__.startswith(
                namespace + "."):
            continue
        if id(value) in standard:
            continue
        names.append(name)
    return sorted(names)


def record_names(cases: types.ModuleType, paths, mode) -> None:
    import jax
    names = {ns: public_names(ns) for ns in NAMESPACES}
    with open(paths[0], "w", encoding="utf-8") as fh:
        json.dump({"jax_version": jax.__version__, "names": names}, fh, indent=0)
        fh.write("\n")
    for ns, ns_names in names.items():
        print(f"{ns:52} {len(ns_names)} names")
    print(f"{'all':52} {sum(map(len, names.values()))} names")


def namespace_names(cases: types.ModuleType, mode) -> list[str]:
    return list(NAMESPACES)
