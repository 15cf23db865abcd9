"""The search that explains a flatten that ran out of recursion (Note [linear cycle
search] in spmdc/core/tree_cycles.py): linear in the depth, so a deep acyclic tree gets
its "too deep" error at once (the path kept per node took 11.6 s at 16,000 levels and
was killed at 50,000), and a cycle deep down is still named by its path."""
from __future__ import annotations

import gc
import re
import time

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import tree_util
from spmdc.core.tree_cycles import _find_cycle


def _nested(depth, leaf=1.0):
    tree = [leaf]
    for _ in range(depth):
        tree = [tree]
    return tree


@pytest.mark.parametrize("call, name, depth", [
    (lambda t: tree_util.tree_flatten(t), "a pytree", 50_000),
    (lambda t: tree_util.tree_flatten_with_path(t), "a pytree", 50_000),
    (lambda t: spmdc.jit(lambda a: a)(t), "the pytree args", 50_001),
    (lambda t: jnp.array(t), "a pytree", 50_000),
])
def test_a_deep_tree_is_too_deep_at_once(call, name, depth):
    tree = _nested(50_000)
    start = time.perf_counter()
    with pytest.raises(RecursionError, match=re.escape(
            f"{name} nests containers {depth} levels deep (at ") + r".*test_tree_cycles"
            r"\.py:\d+\), too deep to flatten within Python's recursion limit"):
        call(tree)
    # Under a second on an idle core; the bound leaves room for a shared test host.
    assert time.perf_counter() - start < 5.0
    assert float(spmdc.jit(lambda a: a[0][0] * 2)(_nested(1, np.float32(3)))) == 6.0


def test_the_search_is_linear_in_depth():
    # The best of three runs in CPU time with the collector off: a collection of the
    # 40,000 nested lists, or another process on a loaded host, made one run 14 times
    # slower than the 10,000-deep one.
    timings = {}
    for depth in (10_000, 40_000):
        tree = _nested(depth)
        runs = []
        gc.disable()
        try:
            for _ in range(3):
                start = time.process_time()
                assert _find_cycle(tree, None) == (None, depth)
                runs.append(time.process_time() - start)
        finally:
            gc.enable()
        timings[depth] = min(runs)
    # Quadratic would be 16 times slower at four times the depth.
    assert timings[40_000] < 8 * timings[10_000] + 0.05, timings


def test_a_cycle_deep_down_is_named_by_its_path():
    tree = _nested(3_000)
    inner = tree
    for _ in range(2_000):
        inner = inner[0]
    inner.append(inner)            # the list 2,000 levels down holds itself
    with pytest.raises(ValueError, match=re.escape(
            "a pytree contains itself: the value at " + "[0]" * 2_000 + "[1] is the list at "
            + "[0]" * 2_000 + " (at ")):
        tree_util.tree_leaves(tree)


def test_a_shallow_tree_keeps_the_original_error():
    class Node:                  # its flatten recurses without end, the first time only
        calls = 0

    def flatten(node):
        Node.calls += 1
        return (_recurse() if Node.calls == 1 else []), None
    tree_util.register_pytree_node(Node, flatten, lambda aux, children: Node())
    with pytest.raises(RecursionError, match="maximum recursion depth exceeded"):
        tree_util.tree_leaves([Node()])
    assert Node.calls == 2       # the search looked, found the tree shallow, and kept it


def _recurse():
    return _recurse()
