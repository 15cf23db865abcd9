"""JAX's config states: options that are also context managers (``jax.debug_nans``,
``jax.default_device``, ``jax.log_compiles``, the transfer guards ...).

A ``State`` holds a global value (``config.update(name, value)``) and, per thread, the
value of the innermost ``with state(value):`` block; ``state.value`` reads the one in
effect. Each state is declared once here with its parser (what it accepts) and, where the
compiled programs' hot path must notice it, as ``hot`` (Note [config on the hot path] in
core/config.py): while a hot state is on, globally or in some thread's block,
``runtime_checks`` names it, so every call takes the Python path, which reads the states.
What each state does is done where it matters (the modules that read ``state.value``).
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["State", "states", "hot_states", "on_change", "debug_nans", "debug_infs",
           "log_compiles", "explain_cache_misses", "default_device", "enable_checks",
           "no_tracing", "no_execution", "transfer_guard_host_to_device",
           "transfer_guard_device_to_device", "transfer_guard_device_to_host",
           "transfer_guard_all", "TRANSFER_LEVELS", "transfer_level", "parse_bool",
           "UserConfig", "make_user_context", "jit_key_values", "softmax_custom_jvp",
           "allow_f16_reductions", "debug_key_reuse", "enable_custom_prng"]

_NO_DEFAULT = object()
_UNSET = object()
_local = threading.local()
_lock = threading.Lock()
_changed: list[Callable[[], None]] = []
states: dict[str, State] = {}
keyed: list[State] = []
_keyed_on = [False]         # whether some state of ``keyed`` is off its default somewhere


def on_change(hook: Callable[[], None]) -> None:
    """Call ``hook()`` whenever a hot state's value may have changed (core/config.py
    refreshes ``runtime_checks`` with it)."""
    _changed.append(hook)


class State:
    # One option: ``state.value``, ``with state(new_value):`` (also a decorator),
    # ``config.update(state.name, value)``. ``bool(state)`` is a TypeError, as in JAX
    # (read ``state.value``). Each instance's __doc__ is its option's help.
    __slots__ = ("_name", "__name__", "__doc__", "_parse", "_global", "_context_default",
                 "_hot", "_open", "_default", "_on_set")
    # A state in ``keyed`` (jax.make_user_context's, softmax_custom_jvp) changes what a
    # function traces to: its value is part of jit's cache key (``jit_key_values``).

    def __init__(self, name: str, default: Any, doc: str, parse: Callable[[str, Any], Any],
                 *, context_default: Any = _NO_DEFAULT, hot: bool = False,
                 on_set: Callable[[Any], None] | None = None, in_jit_key: bool = False):
        self._name = name
        self.__name__ = name[4:] if name.startswith("jax_") else name
        self.__doc__ = f"Context manager for `{name}` config option.\n\n{doc}"
        self._parse = parse
        self._default = self._global = default
        self._context_default = context_default
        self._hot = hot
        self._open = 0                  # with-blocks open in any thread
        self._on_set = on_set
        states[name] = self
        if in_jit_key:
            self._hot = True
            keyed.append(self)

    @property
    def name(self) -> str:
        return self._name

    @property
    def value(self) -> Any:
        local = getattr(_local, self._name, _UNSET)
        return self._global if local is _UNSET else local

    def get_global(self) -> Any:
        return self._global

    def get_local(self) -> Any:
        return getattr(_local, self._name, _UNSET)

    def _set(self, value: Any) -> None:
        """The global value (``config.update``)."""
        self._global = self._parse(self._name, value)
        self._notify()

    def _notify(self) -> None:
        _keyed_on[0] = any(s.is_on() for s in keyed)
        if self._on_set is not None:
            self._on_set(self.value)
        if self._hot:
            for hook in _changed:
                hook()

    def is_on(self) -> bool:
        """Whether the state differs from its default anywhere (hot states' test)."""
        return self._open > 0 or not (self._global is self._default
                                      or self._global == self._default)

    def __bool__(self) -> bool:
        raise TypeError(f"bool() not supported for instances of type 'State' (did you "
                        f"mean to use '{self.__name__}.value' instead?)")

    def __call__(self, new_val: Any = _NO_DEFAULT) -> _StateContext:
        if new_val is _NO_DEFAULT:
            if self._context_default is _NO_DEFAULT:
                raise TypeError(f"Context manager for {self.__name__} config option "
                                "requires an argument representing the new value for the "
                                "config option.")
            new_val = self._context_default
        return _StateContext(self, self._parse(self._name, new_val))

    def __repr__(self) -> str:
        return f"State({self._name}={self.value!r})"


class _StateContext:
    """``with state(value):`` in this thread; as a decorator, the block around each call."""
    __slots__ = ("state", "new_val", "prev")

    def __init__(self, state: State, new_val: Any):
        self.state = state
        self.new_val = new_val

    def __enter__(self) -> None:
        state = self.state
        self.prev = getattr(_local, state._name, _UNSET)
        setattr(_local, state._name, self.new_val)
        with _lock:
            state._open += 1
        state._notify()

    def __exit__(self, *exc: Any) -> None:
        state = self.state
        if self.prev is _UNSET:
            delattr(_local, state._name)
        else:
            setattr(_local, state._name, self.prev)
        with _lock:
            state._open -= 1
        state._notify()

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _StateContext(self.state, self.new_val):
                return func(*args, **kwargs)
        return wrapper


def transfer_level(direction: State) -> str:
    """The transfer guard level in effect for one direction: its own state's, else
    ``jax_transfer_guard``'s, else 'allow'."""
    level = direction.value
    if level is None:
        level = transfer_guard_all.value
    return "allow" if level is None else level


class UserConfig:
    """A value of the user's that jit's caches depend on (``jax.make_user_context``):
    while it differs from its default (globally, or in some thread's ``with ctx(v):``
    block) every call takes the Python path, whose cache key holds the value, so a new
    value traces and compiles again."""
    __slots__ = ("_state",)

    def __init__(self, default_value: Any):
        self._state = State(f"user_context#{len(keyed)}", default_value,
                            "A user context.", lambda name, value: value, in_jit_key=True)

    @property
    def value(self) -> Any:
        return self._state.value

    def get_global(self) -> Any:
        return self._state.get_global()

    def set_global(self, new_value: Any) -> None:
        self._state._set(new_value)

    def __call__(self, new_value: Any) -> _StateContext:
        return self._state(new_value)


def make_user_context(default_value: Any = None) -> UserConfig:
    """A context whose value is part of every jit cache key: ``ctx = make_user_context()``,
    then ``with ctx(1): f(x)`` traces and compiles ``f`` for that value."""
    return UserConfig(default_value)


def jit_key_values() -> tuple[Any, ...]:
    """The values in effect of the states jit's cache key holds; () while every one is
    at its default everywhere (the common case costs one test)."""
    return tuple(s.value for s in keyed) if _keyed_on[0] else ()


def hot_states() -> list[str]:
    """The names of the hot states that are on somewhere (for ``runtime_checks``)."""
    return [name for name, s in states.items() if s._hot and s.is_on()]


# --- parsers ---------------------------------------------------------------------------------

def parse_bool(name: str, value: Any) -> bool:
    if isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    raise TypeError(f"config option {name} takes True or False, got {value!r}")


TRANSFER_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")


def _parse_transfer(name: str, value: Any) -> str | None:
    if value is None or value in TRANSFER_LEVELS:
        return value
    raise ValueError(f"new enum value must be None or in {list(TRANSFER_LEVELS)}, got "
                     f"{value} of type {type(value)}.")


def _parse_device(name: str, value: Any) -> Any:
    """A device, a platform name, or None (JAX's check of ``jax_default_device``)."""
    if value is None or isinstance(value, str) or hasattr(value, "platform") and \
            hasattr(value, "id"):
        return value
    raise ValueError("jax.default_device must be passed either a Device object (e.g. "
                     "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                     f"'gpu', got: {value!r}")


# --- the states --------------------------------------------------------------------------------

debug_nans = State(
    "jax_debug_nans", False,
    "Add nan checks to every operation. When a nan is detected on the output of a jit-"
    "compiled computation, call into the un-compiled version in an attempt to more "
    "precisely identify the operation which produced the nan.",
    parse_bool, context_default=True, hot=True)
debug_infs = State(
    "jax_debug_infs", False,
    "Add inf checks to every operation. When an inf is detected on the output of a jit-"
    "compiled computation, call into the un-compiled version in an attempt to more "
    "precisely identify the operation which produced the inf.",
    parse_bool, context_default=True, hot=True)
log_compiles = State(
    "jax_log_compiles", False,
    "Log a message each time `jit` or `pmap` compiles an XLA computation. Logging is "
    "performed with `logging`. When this option is set, the log level is WARNING; "
    "otherwise the level is DEBUG.",
    parse_bool, context_default=True)
explain_cache_misses = State(
    "jax_explain_cache_misses", False,
    "Each time there is a miss on one of the main caches (e.g. the tracing cache), log "
    "an explanation. Logging is performed with `logging`. When this option is set, the "
    "log level is WARNING; otherwise the level is DEBUG.",
    parse_bool, context_default=True)
enable_checks = State(
    "jax_enable_checks", False,
    "Turn on invariant checking for spmdc internals: the IR verifier runs after every "
    "compiler pass (as SPMDC_CHECKS=1 does). Makes things slower.",
    parse_bool, context_default=True)
no_tracing = State(
    "jax_no_tracing", False,
    "Disallow tracing for JIT compilation.", parse_bool, context_default=True)
no_execution = State(
    "jax_no_execution", False,
    "Disallow JAX executions.", parse_bool, context_default=True, hot=True)
default_device = State(
    "jax_default_device", None,
    "Configure the default device for JAX operations. Set to a Device object (e.g. "
    "``jax.devices(\"cpu\")[0]``) to use that Device as the default device for JAX "
    "operations and jit'd function calls (there is no effect on multi-device "
    "computations, e.g. pmapped function calls). Set to None to use the system default "
    "device.", _parse_device, hot=True)

softmax_custom_jvp = State(
    "jax_softmax_custom_jvp", False,
    "Use a new custom_jvp rule for jax.nn.softmax. The new rule should improve memory "
    "usage and stability. Set True to use new behavior. See "
    "https://github.com/jax-ml/jax/pull/15677", parse_bool, context_default=True,
    in_jit_key=True)

allow_f16_reductions = State(
    "jax_allow_f16_reductions", True,
    "If False, `reduce_sum` on `f16` or `bf16` inputs will raise an error. Defaults to "
    "True. (spmdc checks the reduce_sum a program asks for, lax.reduce_sum's; those its "
    "passes add, transposing a broadcast in a gradient, are not checked.)",
    parse_bool, context_default=True, in_jit_key=True)

debug_key_reuse = State(
    "jax_debug_key_reuse", False,
    "Turn on experimental key reuse checking. With this configuration enabled, typed PRNG "
    "keys (i.e. keys created with jax.random.key()) will have their usage tracked, and "
    "incorrect reuse of a previously-used key will lead to an error. (spmdc's checker: "
    "Note [key reuse] in spmdc/random/key_reuse.py.)",
    parse_bool, context_default=True, in_jit_key=True)

enable_custom_prng = State(
    "jax_enable_custom_prng", False,
    "Enables an internal upgrade that allows one to define custom pseudo-random number "
    "generator implementations. (spmdc has only threefry2x32 keys: with this on, "
    "random.PRNGKey, random.split and random.fold_in return typed key arrays, and a raw "
    "uint32 key given to a random function warns, as in JAX.)",
    parse_bool, context_default=True)

_TRANSFER_DOC = ("Select the transfer guard level for {} transfers. Default is 'allow'. "
                 "'log': log implicit transfers; 'disallow': disallow implicit transfers; "
                 "'log_explicit' and 'disallow_explicit': explicit transfers too.")
transfer_guard_host_to_device = State(
    "jax_transfer_guard_host_to_device", None, _TRANSFER_DOC.format("host-to-device"),
    _parse_transfer, hot=True)
transfer_guard_device_to_device = State(
    "jax_transfer_guard_device_to_device", None, _TRANSFER_DOC.format("device-to-device"),
    _parse_transfer, hot=True)
transfer_guard_device_to_host = State(
    "jax_transfer_guard_device_to_host", None, _TRANSFER_DOC.format("device-to-host"),
    _parse_transfer, hot=True)
transfer_guard_all = State(
    "jax_transfer_guard", None, _TRANSFER_DOC.format("all"), _parse_transfer, hot=True)
