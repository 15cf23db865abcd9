"""spmdc.config: the options JAX programs set with ``jax.config.update(name, value)``.

Each option is declared once here with what it accepts and what setting it does.
Options that only matter while a function runs (``jax_disable_jit``, ``jax_debug_nans``)
are read on every top-level call of a jitted or pmapped function, so they live in one
list (``runtime_checks``); no launch granted to the C++ dispatcher runs while one of
them is on (Note [config on the hot path]).

An unknown name is an error listing the known ones, never silently accepted; so is a
value of the wrong kind, and an option that can no longer take effect
(``jax_num_cpu_devices`` after the CPU client exists).

Note [config on the hot path]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``jit(f)(x)`` goes from ``Jitted.__call__`` straight to jaxlib's C++ dispatcher. Rather
than teach the dispatcher our options, ``runtime_checks`` (a list that is empty unless
disable_jit or debug_nans is on, for this thread or globally) is mirrored into one slot
of the dispatcher's key (Note [Python-path state in the jit key] in runtime/pjrt/dispatch.py):
while it is non-empty no granted launch matches, and the call takes the Python path,
which reads the options themselves (``pmap`` tests the list before its dispatcher).
``disable_jit`` is thread-local when used as a context manager (as JAX's is) and global
when set with ``config.update``.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .. import tracebacks
from ..compiler.passes import set_checks_option
from ..errors import where
from ..runtime import config_states, pjrt
from ..runtime.config_states import debug_nans, parse_bool
from . import dtypes, float_checks, leaks, precision
from . import rank_promotion as _rank_promotion

__all__ = ["config", "Config", "enable_x64", "disable_jit", "runtime_checks",
           "disable_jit_enabled", "debug_nans_enabled", "default_matmul_precision",
           "checked_call", "checked_primitive", "transfer_guard",
           "numpy_dtype_promotion", "numpy_rank_promotion", "strict_indexing_enabled"]

dtypes.on_x64_change(pjrt.set_x64_state)

runtime_checks: list[str] = []
"""Non-empty while some option needs the Python path of every call (see the Note)."""

_local = threading.local()        # this thread's disable_jit context, if any
_global = {"jax_disable_jit": False, "spmdc_strict_indexing": False}


_contexts = [0]                   # disable_jit blocks open in any thread
_lock = threading.Lock()


def _refresh() -> None:
    on = ["jax_disable_jit"] if _global["jax_disable_jit"] else []
    on += config_states.hot_states()      # debug_nans, the transfer guards ...
    if precision.default_precision() is not None:     # See Note [default precision]
        on.append("jax_default_matmul_precision")
    if dtypes.promotion_mode() == "strict":           # See Note [strict promotion]
        on.append("jax_numpy_dtype_promotion")
    if _rank_promotion.mode() != "allow":             # See Note [rank promotion]
        on.append("jax_numpy_rank_promotion")
    if _contexts[0]:
        on.append("disable_jit context")
    # one list object, updated in place, so callers may hold a reference to it
    runtime_checks[:] = on
    pjrt.set_runtime_checks(bool(on))


def disable_jit_enabled() -> bool:
    local = getattr(_local, "jax_disable_jit", None)
    return _global["jax_disable_jit"] if local is None else local


def debug_nans_enabled() -> bool:
    return debug_nans.value


def strict_indexing_enabled() -> bool:
    """Whether ``x[i]`` with a Python int out of bounds is an IndexError (spmdc's
    ``spmdc_strict_indexing`` option; off: clamped, as JAX does). See Note [out-of-bounds
    ints] in numpy/index_plan.py."""
    return _global["spmdc_strict_indexing"]


def _set_strict_indexing(name: str, value: Any) -> None:
    _global[name] = _bool(name, value)


_bool = parse_bool


def _set_x64(name: str, value: Any) -> None:
    dtypes.enable_x64(_bool(name, value))


def _set_flag(name: str, value: Any) -> None:
    _global[name] = _bool(name, value)
    with _lock:
        _refresh()


def _set_default_precision(name: str, value: Any) -> None:
    precision.set_default_precision(value)
    with _lock:
        _refresh()


def _set_promotion(name: str, value: Any) -> None:
    dtypes.set_promotion_mode(value)
    with _lock:
        _refresh()


def _set_rank_promotion(name: str, value: Any) -> None:
    _rank_promotion.set_mode(value)
    with _lock:
        _refresh()


def _set_platform(name: str, value: Any) -> None:
    if value is None or value == "":
        return
    if not isinstance(value, str):
        raise TypeError(f"config option {name} takes a platform name such as 'cpu' or "
                        f"'cuda', got {value!r}")
    wanted = [p.strip().lower() for p in value.split(",")]
    wanted = ["cuda" if p == "gpu" else p for p in wanted]
    known = [p for p in wanted if p in ("cpu", "cuda")]
    if not known or len(known) != len(wanted):
        raise ValueError(f"config option {name}={value!r}: spmdc runs on 'cpu' or 'cuda' "
                         "(one client, the first listed)")
    pjrt.set_platform(known[0])


def _set_cpu_devices(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TypeError(f"config option {name} takes a positive int, got {value!r}")
    pjrt.set_cpu_device_count(value)


def _set_cache_dir(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"config option {name} takes a directory path or None, got "
                        f"{value!r}")
    from ..runtime import cache
    cache.set_directory(value)


def _read_cache_dir() -> Any:
    from ..runtime import cache
    store = cache.cache()
    return None if store is None else store.directory


_OPTIONS: dict[str, tuple[Callable[[str, Any], None], Callable[[], Any]]] = {
    "jax_compilation_cache_dir": (_set_cache_dir, _read_cache_dir),
    "jax_enable_x64": (_set_x64, dtypes.x64_enabled),
    "jax_disable_jit": (_set_flag, lambda: _global["jax_disable_jit"]),
    "jax_platform_name": (_set_platform, pjrt.platform_wanted),
    "jax_platforms": (_set_platform, pjrt.platform_wanted),
    "jax_num_cpu_devices": (_set_cpu_devices, pjrt.device_count_env),
    "jax_default_matmul_precision": (_set_default_precision, precision.default_precision),
    "jax_numpy_dtype_promotion": (_set_promotion, dtypes.promotion_mode),
    "jax_numpy_rank_promotion": (_set_rank_promotion, _rank_promotion.mode),
    "jax_check_tracer_leaks": (leaks.set_leak_checking, leaks.leak_checking),
    "jax_traceback_filtering": (lambda name, value: tracebacks.set_traceback_filtering(value),
                                tracebacks.traceback_filtering),   # Note [library frames]
    "spmdc_strict_indexing": (_set_strict_indexing,
                              lambda: _global["spmdc_strict_indexing"]),
    # JAX's states (runtime/config_states.py): each is also a context manager
    **{name: ((lambda name, value, state=state: state._set(value)),
              (lambda state=state: state.value))
       for name, state in config_states.states.items()},
}


def _refresh_locked() -> None:
    with _lock:
        _refresh()


config_states.on_change(_refresh_locked)
set_checks_option(lambda: config_states.enable_checks.value)    # jax_enable_checks


class Config:
    """``spmdc.config``: ``update(name, value)``, ``read(name)`` and ``config.name``."""

    def update(self, name: str, value: Any) -> None:
        setter, _ = self._option(name)
        setter(name, value)

    def read(self, name: str) -> Any:
        return self._option(name)[1]()

    def parse_flags_with_absl(self) -> None:
        """Apply the ``--jax_<option>=value`` (``--jax_<flag>``, ``--nojax_<flag>`` for
        True/False options) arguments of the command line, before any ``--``, as absl
        flags would (test programs call this first); other arguments are left alone.
        Where absl is installed its flags are then marked parsed, as JAX's call leaves
        them (absltest's ``create_tempdir`` reads ``--test_tmpdir``; unparsed, that read
        is an error)."""
        _mark_absl_flags_parsed()
        for arg in itertools.takewhile(lambda a: a != "--", sys.argv[1:]):
            name, eq, text = arg[2:].partition("=")
            negated = name.startswith("nojax_") and not eq
            name = name[2:] if negated else name
            if not arg.startswith("--") or name not in _OPTIONS:
                continue
            current = _OPTIONS[name][1]()
            if not eq:
                value: Any = not negated
            elif isinstance(current, bool):
                value = text.lower() in ("1", "true", "t", "yes")
            elif isinstance(current, int):
                value = int(text)
            else:
                value = text or None
            self.update(name, value)

    @property
    def x64_enabled(self) -> bool:
        """Whether 64-bit types are on (``jax_enable_x64``): JAX's older name for it,
        which jaxopt's and distrax's test helpers read."""
        return dtypes.x64_enabled()

    def __getattr__(self, name: str) -> Any:
        if name.startswith(("jax_", "spmdc_")) and name in _OPTIONS:
            return _OPTIONS[name][1]()
        raise AttributeError(f"spmdc.config has no option {name!r}")

    @staticmethod
    def _option(name: str) -> tuple[Callable[[str, Any], None], Callable[[], Any]]:
        try:
            return _OPTIONS[name]
        except KeyError:
            raise AttributeError(
                f"unknown config option {name!r}; spmdc knows "
                f"{', '.join(sorted(_OPTIONS))}") from None

    def __repr__(self) -> str:
        return "spmdc.config(" + ", ".join(f"{n}={self.read(n)!r}" for n in _OPTIONS) + ")"


config = Config()


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Use 64-bit types inside the block (``jax.experimental.enable_x64``). The setting is
    process-wide, as spmdc's dtype canonicalisation is."""
    previous = dtypes.enable_x64(_bool("enable_x64", new_val))
    try:
        yield
    finally:
        dtypes.enable_x64(previous)


@contextlib.contextmanager
def default_matmul_precision(value: Any) -> Iterator[None]:
    """Inside the block, dots and convolutions traced with ``precision=None`` use
    ``value`` (a precision name such as 'highest', or None); see Note [default precision]
    in core/precision.py. Process-wide, as spmdc's x64 setting is."""
    previous = precision.set_default_precision(value)
    with _lock:
        _refresh()
    try:
        yield
    finally:
        precision._default[0] = previous
        with _lock:
            _refresh()


@contextlib.contextmanager
def numpy_dtype_promotion(mode: str) -> Iterator[None]:
    """Inside the block, implicit dtype promotion follows ``mode``: 'standard' (JAX's
    lattice) or 'strict', where combining different dtypes is a TypePromotionError
    (Note [strict promotion] in core/dtypes.py). Process-wide, as enable_x64 is."""
    previous = dtypes.set_promotion_mode(mode)
    with _lock:
        _refresh()
    try:
        yield
    finally:
        dtypes.set_promotion_mode(previous)
        with _lock:
            _refresh()


@contextlib.contextmanager
def numpy_rank_promotion(mode: str) -> Iterator[None]:
    """Inside the block, jnp's elementwise functions combine operands of different
    ranks as ``mode`` says: 'allow', 'warn' or 'raise' (Note [rank promotion] in
    core/rank_promotion.py). Process-wide, as numpy_dtype_promotion is."""
    previous = _rank_promotion.set_mode(mode)
    with _lock:
        _refresh()
    try:
        yield
    finally:
        _rank_promotion.set_mode(previous)
        with _lock:
            _refresh()


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside the block (in this thread), ``jit`` calls run their Python function op by
    op, so Python control flow on values and ``print`` work; ``jit`` is a no-op."""
    previous = getattr(_local, "jax_disable_jit", None)
    _local.jax_disable_jit = _bool("disable_jit", disable)
    with _lock:
        _contexts[0] += 1
        _refresh()
    try:
        yield
    finally:
        if previous is None:
            del _local.jax_disable_jit
        else:
            _local.jax_disable_jit = previous
        with _lock:
            _contexts[0] -= 1
            _refresh()


def checked_call(kind: str, name: str, fun: Callable[..., Any],
                 call: Callable[[tuple[Any, ...], dict[str, Any]], Any],
                 args: tuple[Any, ...], kwargs: dict[str, Any],
                 locate: Callable[[], Any] | None = None) -> Any:
    """A top-level call of ``jit``/``pmap`` (``kind``) of ``fun`` while ``runtime_checks``
    is non-empty: ``fun`` itself under disable_jit (jit only, as in JAX), else ``call``
    (the compiled path), whose outputs debug_nans/debug_infs then check; ``locate`` runs
    the call op by op to find the operation that made a nan (Note [finding the operation
    that made a nan] in core/float_checks.py; jit's is ``fun`` itself)."""
    if kind == "jit" and disable_jit_enabled():
        return fun(*args, **kwargs)
    _check_execution(f"{kind}({name})")
    out = call(args, kwargs)
    if float_checks.checking():
        float_checks.check_call(kind, name, out, locate or (lambda: fun(*args, **kwargs)))
    return out


def _check_execution(name: str) -> None:
    if config_states.no_execution.value:
        raise RuntimeError(f"JAX tried to execute function {name}, but the no_execution "
                           f"config option is set{where()}")


def checked_primitive(name: str, run: Callable[[], Any]) -> Any:
    """One primitive run eagerly (``run()``) while ``runtime_checks`` is non-empty: its
    outputs checked by debug_nans/debug_infs, naming it and the user's line."""
    _check_execution(name)
    out = run()
    if float_checks.checking():
        float_checks.check_primitive(name, out)
    return out


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Set the transfer guard level of every direction inside the block (this thread):
    'allow', 'log', 'disallow', 'log_explicit' or 'disallow_explicit' (Note [transfer
    guards] in runtime/transfers.py)."""
    with contextlib.ExitStack() as stack:
        for state in (config_states.transfer_guard_host_to_device,
                      config_states.transfer_guard_device_to_device,
                      config_states.transfer_guard_device_to_host,
                      config_states.transfer_guard_all):
            stack.enter_context(state(new_val))
        yield


def _mark_absl_flags_parsed() -> None:
    """Parse absl's flags from the ``--jax*`` arguments alone (``known_only``: others are
    skipped), once, when absl is installed (spmdc does not need it)."""
    try:
        from absl import flags
    except ImportError:
        return
    if not flags.FLAGS.is_parsed():
        argv = itertools.takewhile(lambda a: a != "--", sys.argv)
        flags.FLAGS(["", *(a for a in argv if a.startswith("--jax"))], known_only=True)
