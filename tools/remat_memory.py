"""XLA's memory figures for the gradient of a deep MLP, with and without ``checkpoint``
(issue 14; the figures are in docs/PERFORMANCE.md).

Eight residual blocks ``h + tanh(h @ W1) @ W2`` (256 -> 1024 -> 256) at batch 4096, the
gradient with respect to the input (so the parameters' gradients, which XLA may place in
the output buffers, do not hide the residuals). Each block is run plain or under
``checkpoint`` with a policy; the figure is ``temp_size_in_bytes`` of the compiled
executable's memory analysis (the buffers XLA allocates besides arguments and outputs),
and the number of dot instructions in the optimized HLO shows what XLA recomputes.

Usage: tools/remat_memory.py [--no-jax]    (JAX side by side when it is importable)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WIDTH, HIDDEN, BLOCKS, BATCH = 256, 1024, 8, 4096


def figures(lib: Any) -> list[tuple[str, float, int]]:
    jnp = lib.numpy
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(WIDTH, HIDDEN)).astype(np.float32) / 16,
               rng.normal(size=(HIDDEN, WIDTH)).astype(np.float32) / 32)
              for _ in range(BLOCKS)]
    x = rng.normal(size=(BATCH, WIDTH)).astype(np.float32)

    def block(w, h):
        return h + jnp.tanh(h @ w[0]) @ w[1]

    policies = lib.checkpoint_policies
    out = []
    for name, policy in [("plain", None), ("checkpoint (nothing_saveable)",
                                           policies.nothing_saveable),
                         ("checkpoint (dots_saveable)", policies.dots_saveable)]:
        layer = block if policy is None else lib.checkpoint(block, policy=policy)

        def loss(params, x, layer=layer):
            for w in params:
                x = layer(w, x)
            return jnp.sum(x ** 2)
        compiled = lib.jit(lib.grad(loss, argnums=1)).lower(params, x).compile()
        temp = compiled.memory_analysis().temp_size_in_bytes / 2 ** 20
        dots = len(re.findall(r"\bdot\(", compiled.as_text()))
        out.append((name, temp, dots))
    return out


def main() -> int:
    import spmdc
    libs = {"spmdc": spmdc}
    if "--no-jax" not in sys.argv:
        try:
            import jax
            libs["jax"] = jax
        except ImportError:
            pass
    print(f"grad of {BLOCKS} blocks h + tanh(h @ W1) @ W2, {WIDTH}->{HIDDEN}->{WIDTH}, "
          f"batch {BATCH}: XLA temp buffers (MiB), dot instructions")
    for lib_name, lib in libs.items():
        for name, temp, dots in figures(lib):
            print(f"  {lib_name:6} {name:32} {temp:8.1f} MiB  {dots:3d} dots")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
