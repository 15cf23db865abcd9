"""The package layering, checked by parsing every import in spmdc (deferred ones included).

The floors, bottom to top (docs/ARCHITECTURE.md says what each owns):

    compiler < runtime < core < transforms < lax < numpy < random < nn
             < scipy, example_libraries, experimental < the top level (__init__, cli, launch)

A module may import its own floor and the floors below it, nothing above. The leaves
env.py and errors.py import nothing from spmdc but each other, so every floor may use
them. The public faces at the top of the package (tree_util.py, callbacks.py ...) stand
on the floor of what they wrap. Besides the order: only lax/, transforms/ and the
compiler itself bind primitives (no string look-ups of primitives outside compiler/);
no import circle crosses a package; jaxlib is reached only through runtime/pjrt/ and
compiler/stablehlo.py; and spmdc never imports jax.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2] / "spmdc"

# Each floor's rank: a module may import modules of a lower rank, or of its own floor.
RANK = {
    "env": 0, "errors": 0, "aliases": 0,                      # leaves
    "compiler": 1, "runtime": 2, "core": 3, "transforms": 4, "lax": 5, "numpy": 6,
    "random": 7, "nn": 8, "scipy": 9, "example_libraries": 9, "experimental": 9,
    "extend": 9, "interpreters": 9,                          # JAX's extension API
    "_src": 10,                          # the jax._src names: may map to either of those
    "export": 10,                  # jax.export: its call primitive is an extension primitive
    "top": 11,                                               # __init__, cli, launch
}
# The public modules at the top of spmdc/ stand on the floor of what they wrap.
FACES = {
    "tree_util": "core", "tree": "core", "distributed": "runtime",
    "callbacks": "transforms", "ad_checkpoint": "transforms",
    "custom_derivatives": "transforms", "sharding": "transforms", "dtypes": "transforms",
    "debug": "transforms", "test_util": "transforms", "typing": "runtime", "lib": "runtime",
    "stages": "transforms", "flatten_util": "numpy", "ops": "numpy",
    "dlpack": "numpy",
    "image": "numpy", "version": "top",
    "monitoring": "runtime", "profiler": "core", "ffi": "transforms",
    "custom_batching": "lax", "ref": "core", "tracebacks": "errors", "api_util": "extend",
    "__init__": "top", "cli": "top", "launch": "top",
    "env": "env", "errors": "errors", "aliases": "aliases",
}
LEAVES = {"env", "errors", "aliases"}
# The modules of a floor allowed a floor above it: the Jacobians build their basis
# and blocks with spmdc.numpy, as JAX's api.py does.
# jax.experimental.hijax's HiPrimitive is jax.extend.core's Primitive with its methods put
# in JAX's rule tables (jax.interpreters), as JAX's is; so is custom_partitioning_p (with
# jax.extend.sharding's GSPMDSharding for the layouts its callbacks see).
# jax.extend.lowering names jax.interpreters.mlir's LoweringRuleContext, as JAX's does.
# jax.extend.core's call primitives put their DCE rules in jax.interpreters.partial_eval's
# table, as JAX's do.
EXCEPTIONS = {"transforms/jacobians.py": {"numpy"},
              "experimental/hijax.py": {"extend", "interpreters"},
              "experimental/custom_partitioning.py": {"extend", "interpreters"},
              "extend/lowering.py": {"interpreters"},
              "extend/core/primitives.py": {"interpreters"}}
# Who may bind primitives (import compiler.primitives, or core.tracing's bind): lax,
# transforms and the compiler, the tracer (core/tracing.py holds bind) and the public
# faces of transforms; numpy and every floor above it bind through lax.
PRIMITIVE_FLOORS = {"compiler", "lax", "transforms"}
PRIMITIVE_MODULES = {"core/tracing.py"} | {
    f"{name}.py" for name, floor in FACES.items() if floor == "transforms"}
# What numpy and every floor above lax stand on: values become operands (converted and
# broadcast) in core/operands.py, which lax uses too.
PRIMITIVE_MODULES |= {"core/operands.py"}
# JAX's Primitive class (jax.extend.core.Primitive) is spmdc's, with JAX's definers.
PRIMITIVE_MODULES |= {"extend/core/__init__.py"}
# The sharding rules of types over Explicit mesh axes, keyed by primitive and run by
# ``bind`` (Note [shardings in types]), which constrain a trace's outputs to their types.
PRIMITIVE_MODULES |= {"core/explicit_sharding.py", "core/sharding_rules.py"}
JAXLIB_USERS = {"compiler/stablehlo.py", *(  # and every module of the runtime/pjrt package
    f"runtime/pjrt/{p.name}" for p in (ROOT / "runtime" / "pjrt").glob("*.py"))}


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


@functools.cache     # every check reads every module: parse each file once per process
def _imports(path: Path) -> tuple[tuple[int, str], ...]:
    return tuple(_parse_imports(path.read_text(), path.relative_to(ROOT.parent)))


def _parse_imports(source: str, rel: PurePosixPath | Path) -> list[tuple[int, str]]:
    """(line, absolute dotted name) for every import in ``source`` (the file ``rel``,
    e.g. spmdc/numpy/core.py), relative ones resolved; ``from m import x`` counts as
    importing ``m.x`` (x may be a module or a name in m: both have m's floor)."""
    package = list(rel.parts[:-1])
    out = []
    for node in ast.walk(ast.parse(source, str(rel))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            out += [(node.lineno, f"{prefix}.{alias.name}") for alias in node.names]
    return out


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _floor(module: str) -> str | None:
    """The floor of the spmdc module ``module`` names (a dotted name), if it is spmdc's."""
    parts = module.split(".")
    if parts[0] != "spmdc":
        return None
    if len(parts) == 1:
        return "top"
    return FACES.get(parts[1], parts[1])


def _floor_of(path: Path) -> str:
    return _floor("spmdc." + ".".join(path.relative_to(ROOT).with_suffix("").parts))


def test_every_module_has_a_floor() -> None:
    unknown = sorted({_floor_of(p) for p in _modules()} - set(RANK))
    assert not unknown, f"give {unknown} a place in RANK or FACES (and docs/ARCHITECTURE.md)"


def test_imports_resolve_to_real_modules() -> None:
    # The checker itself: every resolved spmdc import names a file or a name in one.
    for path in _modules():
        for line, module in _imports(path):
            if _floor(module) is None or module == "spmdc":
                continue
            parts = module.split(".")[1:]
            candidates = [ROOT.joinpath(*parts[:k]) for k in range(len(parts), 0, -1)]
            assert any(c.with_suffix(".py").exists() or (c / "__init__.py").exists()
                       for c in candidates), f"{_where(path)}:{line}: {module}"


def _upward(where: str, floor: str, imports: tuple[tuple[int, str], ...]) -> list[str]:
    """The imports of the module ``where`` (on ``floor``) that reach above its floor."""
    allowed = EXCEPTIONS.get(where, set())
    bad = []
    for line, module in imports:
        target = _floor(module)
        if target is None or target == floor or target in allowed:
            continue
        ok = target in LEAVES if floor in LEAVES else (
            target in LEAVES or RANK[target] < RANK[floor])
        if not ok:
            bad.append(f"{where}:{line} ({floor}) imports {module} ({target})")
    return bad


@pytest.mark.parametrize("floor", sorted(set(RANK) - {"top"}))
def test_no_floor_imports_a_floor_above_it(floor: str) -> None:
    bad = [b for p in _modules() if _floor_of(p) == floor
           for b in _upward(_where(p), floor, _imports(p))]
    assert not bad, f"{floor} may import only the floors below it:\n" + "\n".join(bad)


def _binds(module: str) -> bool:
    """Whether the import of ``module`` is of a primitive or of ``bind``, which applies one."""
    return module.startswith("spmdc.compiler.primitives") or module == "spmdc.core.tracing.bind"


def test_only_lax_and_transforms_bind_primitives() -> None:
    bad = [f"{_where(p)}:{line} imports {module}"
           for p in _modules()
           if _floor_of(p) not in PRIMITIVE_FLOORS and _where(p) not in PRIMITIVE_MODULES
           for line, module in _imports(p) if _binds(module)]
    assert not bad, "bind primitives through spmdc.lax (or add the wrapper there):\n" \
        + "\n".join(bad)


def test_checker_sees_a_bind_above_lax() -> None:
    source = "from ..core.tracing import bind\nfrom ..compiler.primitives.logic import or_p\n"
    found = [m for _, m in _parse_imports(source, PurePosixPath("spmdc/numpy/probe.py"))]
    assert [_binds(m) for m in found] == [True, True]
    assert not _binds("spmdc.core.tracing.Tracer")


def _string_lookups(path: Path) -> list[str]:
    return [f"{_where(path)}:{n}: {text.strip()}"
            for n, text in enumerate(path.read_text().splitlines(), 1)
            if "_prims[" in text or "registry[" in text]


def test_no_primitive_is_looked_up_by_name_outside_the_compiler() -> None:
    bad = [b for p in _modules() if _floor_of(p) != "compiler" for b in _string_lookups(p)]
    assert not bad, "import the primitive object (name_p) instead:\n" + "\n".join(bad)


def _graph() -> dict[str, set[str]]:
    names = {}
    for p in _modules():
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph = {}
    for name, path in names.items():
        edges = set()
        for _, module in _imports(path):
            while module and module not in names:   # `from .x import name` names x
                module = module.rpartition(".")[0]
            if module and module != name:
                edges.add(module)
        graph[name] = edges
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    with an explicit stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_circle_crosses_a_package() -> None:
    def package(module: str) -> str:
        return module.split(".")[1] if module.count(".") else "top"
    crossing = [c for c in _circles(_graph()) if len({package(m) for m in c}) > 1]
    assert not crossing, f"import circles across packages: {crossing}"


def test_circle_finder_finds_circles() -> None:
    graph = {"a.x": {"a.y"}, "a.y": {"b.z"}, "b.z": {"a.x"}, "c.w": {"a.x"}}
    assert _circles(graph) == [["a.x", "a.y", "b.z"]]


def test_jaxlib_only_in_pjrt_and_stablehlo() -> None:
    bad = [f"{_where(p)}:{line} imports {module}"
           for p in _modules() if _where(p) not in JAXLIB_USERS
           for line, module in _imports(p) if module.split(".")[0] == "jaxlib"]
    assert not bad, "jaxlib belongs to runtime/pjrt/ and compiler/stablehlo.py:\n" \
        + "\n".join(bad)


def test_spmdc_never_imports_jax() -> None:
    bad = [f"{_where(p)}:{line} imports {module}"
           for p in _modules() for line, module in _imports(p)
           if module.split(".")[0] == "jax"]
    assert not bad, "spmdc must run without jax:\n" + "\n".join(bad)


def test_checker_sees_deferred_and_relative_imports() -> None:
    source = ("from ..numpy import core as jnp\n"
              "from ..runtime.array import Array\n"
              "def f():\n    from . import tracing\n    import jax.numpy\n")
    found = [m for _, m in _parse_imports(source, PurePosixPath("spmdc/core/probe.py"))]
    assert sorted(found) == ["jax.numpy", "spmdc.core.tracing", "spmdc.numpy.core",
                             "spmdc.runtime.array.Array"]
    assert _floor("spmdc.numpy.core") == "numpy" and _floor("numpy") is None
    assert _floor("spmdc.tree_util") == "core" and _floor("spmdc") == "top"


def test_checker_refuses_an_upward_import() -> None:
    source = ("from ..numpy import asarray\n"
              "from ..transforms.jit import jit\nfrom .. import errors\n")
    imports = _parse_imports(source, PurePosixPath("spmdc/lax/probe.py"))
    assert _upward("lax/probe.py", "lax", imports) == [
        "lax/probe.py:1 (lax) imports spmdc.numpy.asarray (numpy)"]
    imports = _parse_imports("from . import tracing\n", PurePosixPath("spmdc/errors.py"))
    assert _upward("errors.py", "errors", imports) == [
        "errors.py:1 (errors) imports spmdc.tracing (tracing)"]
