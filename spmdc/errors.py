"""Every exception class spmdc raises, and the helper that finds the user's line.

Programs written for JAX catch JAX's public classes (``jax.errors`` resolves to this
module under the alias, see spmdc/aliases.py), so those are defined here as JAX's
``jax/_src/errors.py`` defines them, with the same hierarchy: ``JAXTypeError`` and
``JAXIndexError`` under TypeError and IndexError, ``TracerBoolConversionError`` a
``ConcretizationTypeError``, and so on. JAX appends a link to its documentation page to
every message; spmdc has no such page and keeps the message as raised. JAX's
``JaxRuntimeError`` is jaxlib's own class (``_jax.JaxRuntimeError``); this module stands
below the runtime, which hands the class over (Note [jaxlib's runtime error]).

spmdc's own classes follow, grouped by the floor that raises them. Each one subclasses
the single built-in type that JAX raises in the same situation (or, where JAX has no
such check, the built-in type that says what went wrong), so ``except TypeError`` in a
JAX program catches what it would catch under JAX. Each docstring says when the class is
raised, what to do about it, and which JAX class it corresponds to. (The command line's
``UsageError`` and ``UserCodeError`` stay in cli.py: its ``main`` reports them and they
never reach a program. Private control-flow exceptions stay beside the code that catches
them.)

Messages name the user's line: ``user_source()`` walks the Python stack to the innermost
frame outside spmdc and the libraries registered below, and ``where()`` /
``at_line(source)`` format it as `` (at file:line)``. core/tracing.py records
``user_source()`` on every equation it builds, and the compiler's messages format that
with ``at_line``; numpy and lax.control_flow use the same two functions. The tracebacks
of errors raised through a transformation leave out the same frames (Note [library
frames]).

Note [library frames]
~~~~~~~~~~~~~~~~~~~~~
An error raised while a transformation runs the user's function unwinds through spmdc's
own frames (tracing, the passes, the dispatcher) and often through a library's wrapper
(Equinox's ``filter_jit``, Flax's lifted transforms). JAX shows the user neither, and
spmdc does as JAX 0.10.2 does. Two lists of excluded paths (a file, or a folder with
everything under it) hold spmdc's package folder from the start:

- ``_exclude_paths``, grown by ``register_exclusion`` (``jax._src.traceback_util``'s,
  which Flax and Equinox call for each of their files at import; Flax also edits the
  list itself), names the frames tracebacks leave out;
- ``_source_exclude_paths``, grown by ``register_source_exclusion``
  (``jax.extend.source_info_util.register_exclusion``), names frames that are never
  the user's line. ``user_source()`` skips the frames of both lists, so a message names
  the user's line and not the library wrapper that called spmdc; the verdict per file
  name is cached, and the lists forget it on every change.

Each entry point of the API (the callables ``jit``, ``grad``, ``vmap`` ... return) is
wrapped by ``api_boundary`` (spmdc/tracebacks.py, which owns the modes below). When an
exception leaves the outermost boundary on the stack (an inner one sees an outer one
among its callers and lets the error pass), the mode of config
``jax_traceback_filtering`` (JAX_TRACEBACK_FILTERING in the environment, read at
import) decides, with JAX's meanings: ``off`` leaves it alone;
``tracebackhide`` marks the excluded frames with ``__tracebackhide__``, which pytest
and IPython honour; ``quiet_remove_frames`` relinks the traceback without them and adds
a note saying so; ``remove_frames`` does the same and chains the whole traceback as an
``UnfilteredStackTrace`` cause; ``auto`` (the default) is ``tracebackhide`` under an
IPython that honours it, else ``quiet_remove_frames``. The exception object and its
message stay as raised.

This module imports nothing from spmdc, so every floor (the compiler included) may use it.
"""
from __future__ import annotations

import os
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

__all__ = [
    # JAX's public classes (jax.errors)
    "JAXTypeError", "JAXIndexError", "ConcretizationTypeError",
    "NonConcreteBooleanIndexError", "TracerArrayConversionError",
    "TracerIntegerConversionError", "TracerBoolConversionError", "UnexpectedTracerError",
    "KeyReuseError", "TypePromotionError", "JaxprTypeError", "InconclusiveDimensionOperation",
    # spmdc's own
    "EnvironmentVariableError", "IRError", "ShapeError", "ShardingTypeError", "BatchingError",
    "UnboundAxisError",
    "ReplicationError", "DivergentCollectiveError", "WhileLoopVJPError", "WindowVJPError",
    "CheckifyRuntimeError", "JaxException", "FailedCheckError", "NaNError",
    "DivisionByZeroError", "OOBError",
    "ClosedOverDifferentiationError", "CustomVJPForwardModeError", "CallbackError",
    "LoweringError", "DistributedError", "PeerLost", "StoreException",
    "UnfilteredStackTrace",
    # jax.experimental.sparse's
    "SparseEfficiencyError", "SparseEfficiencyWarning", "CuSparseEfficiencyWarning",
]


# --- JAX's public classes (jax.errors) ----------------------------------------------------

class BarrierTimeoutError(Exception):
    """The processes did not all reach a checkpoint's commit barrier in time
    (``jax.experimental.array_serialization``)."""


class JAXTypeError(TypeError):
    """The base of JAX's TypeErrors about traced values (JAX's ``JAXTypeError``)."""


class JAXIndexError(IndexError):
    """The base of JAX's IndexErrors about traced indices (JAX's ``JAXIndexError``)."""


class ConcretizationTypeError(JAXTypeError):
    """Python needed a concrete value but got a traced one: ``float(x)``, ``x.item()``,
    ``int(x)`` or a shape computed from a traced value inside jit/grad/vmap ...

    Write the computation with spmdc.numpy / lax (``jnp.where``, ``lax.cond``) instead of
    Python control flow, or mark the argument static (``jit(f, static_argnums=...)``).
    JAX's ``ConcretizationTypeError``."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """A traced boolean mask used as an index (``x[mask]``): the result's shape would
    depend on the data, which a compiled program cannot have.

    Use ``jnp.where(mask, x, fill)``, or a reduction's ``where=mask``, or pass a concrete
    (NumPy) mask. JAX's ``NonConcreteBooleanIndexError``."""


class TracerArrayConversionError(JAXTypeError):
    """A traced value was handed to NumPy (``np.asarray(x)``, a NumPy function), which
    needs the array's values.

    Use the spmdc.numpy function of the same name inside transformed functions, or
    ``pure_callback`` to run NumPy code on the host. JAX's ``TracerArrayConversionError``."""


class TracerIntegerConversionError(JAXTypeError):
    """A traced value was used where Python needs an integer index (``operator.index``:
    ``range(x)``, ``lst[x]``, ``hex(x)``).

    Use ``jnp.take`` / ``lax.dynamic_slice`` for data-dependent indexing, or mark the
    argument static. JAX's ``TracerIntegerConversionError``."""


class TracerBoolConversionError(ConcretizationTypeError):
    """A traced value was used where Python needs a bool (``if x``, ``while x``, ``and``).

    Use ``jnp.where`` / ``lax.cond`` / ``lax.while_loop``, or mark the argument static.
    JAX's ``TracerBoolConversionError``."""


class UnexpectedTracerError(JAXTypeError):
    """A traced value escaped the transformation that created it (stored in a global or
    a closure) and was used after it ended.

    Return the value from the transformed function instead. JAX's
    ``UnexpectedTracerError``."""


class KeyReuseError(JAXTypeError):
    """A PRNG key used twice where reuse is checked.

    Split the key (``random.split``) and use each piece once. JAX's ``KeyReuseError``,
    raised only under ``jax_debug_key_reuse`` (``jax.debug_key_reuse(True)``): Note
    [key reuse] in spmdc/random/key_reuse.py."""


class JaxprTypeError(TypeError):
    """A jaxpr that is not well formed: a variable used before it is defined or defined
    twice, an equation whose output types disagree with its primitive's abstract
    evaluation. Raised by ``jax.extend.core.check_jaxpr``. JAX's ``JaxprTypeError``."""


class InconclusiveDimensionOperation(Exception):
    """An operation on symbolic dimensions whose result cannot be decided. JAX raises it
    for shape-polymorphic shapes; spmdc's shapes are static ints, so it never does, and
    defines the class so that programs catching it run. JAX's
    ``InconclusiveDimensionOperation``."""


class TypePromotionError(ValueError):
    """Operands whose dtypes have no implicit promotion path: under
    ``numpy_dtype_promotion('strict')`` any two different dtypes, other than a Python
    scalar joining an array of its kind.

    Cast the operands explicitly (``x.astype(y.dtype)``), or use 'standard' promotion.
    JAX's ``jax.dtypes.TypePromotionError``."""


# --- spmdc's own classes ------------------------------------------------------------------

# (leaf) environment variables

class EnvironmentVariableError(ValueError):
    """An SPMDC_* environment variable holds a value spmdc does not understand (spmdc/env.py
    lists the spellings each accepts).

    Fix or unset the variable. JAX raises a ValueError from ``bool_env`` in this case."""


# (compiler) the IR, shape rules, passes

class IRError(ValueError):
    """Malformed IR: a parse error, a dtype spmdc does not support, or a program that
    fails the verifier (``SPMDC_CHECKS=1`` runs it after every pass).

    From parsed text: fix the text at the position named. From a pass: a bug in spmdc,
    please report it. JAX's nearest is ``JaxprTypeError`` (a TypeError)."""


class ShapeError(TypeError):
    """Operands whose shapes or dtypes a primitive does not accept.

    Fix the operands as the message says. The frontend re-raises it as a TypeError naming
    the user's line; JAX's shape rules raise a TypeError too."""


class MutableHiArgument(TypeError):
    """A mutable hi value met by a transformation that cannot write its state back
    (Note [mutable hi values through jit] in spmdc/transforms/jit.py)."""


class ShardingTypeError(Exception):
    """Operands whose shardings (in their types, over Explicit mesh axes) a primitive's
    sharding rule does not accept, or from which it cannot tell the result's (JAX's
    ``jax._src.core.ShardingTypeError``; Note [shardings in types] in
    core/explicit_sharding.py). Reshard an operand, or name the result's sharding with
    the operation's ``out_sharding=``."""


class BatchingError(ValueError):
    """An ``in_axes`` or ``out_axes`` that does not fit the function being batched.
    ``output`` is the position of the offending output, so the frontend can name it by
    its pytree path, and ``batched_axis`` the axis that output is batched on.

    Change the axes to fit the function's arguments and results. JAX raises a ValueError."""

    def __init__(self, message: str, output: int | None = None,
                 batched_axis: int | None = None):
        super().__init__(message)
        self.output = output
        self.batched_axis = batched_axis


class UnboundAxisError(NameError):
    """A collective names an axis that no enclosing pmap, vmap or shard_map binds.

    Use one of the bound names the message lists, or bind the axis (``axis_name=``).
    JAX raises a NameError ("unbound axis name")."""


class ReplicationError(ValueError):
    """An output that must be the same on every device (``out_axes=None``, or a
    shard_map ``out_specs`` without the axis) may differ between devices.

    Reduce it over the axis first (``lax.pmean``/``psum``) or return it mapped. JAX's
    pmap returns device 0's copy without a check; its shard_map raises a ValueError."""


class DivergentCollectiveError(ValueError):
    """A collective inside a cond branch or a while loop that some devices of its group
    would skip, because the branch index or loop predicate may differ between them (they
    would wait for each other forever).

    Compute the predicate from a collective (``psum``/``pmax``) so every device takes the
    same path. JAX has no such check (the program deadlocks)."""


class CheckifyRuntimeError(ValueError):
    """A ``checkify.check`` failed: raised by ``Error.throw()``, ``check_error`` and by
    a check evaluated outside ``checkify``. JAX's ``checkify.JaxRuntimeError`` (a
    ValueError); fix the input the message names, or the predicate."""


class JaxException(Exception):
    """An error category of ``checkify`` (JAX's classes of the same names)."""
    kind = ""


class FailedCheckError(JaxException):
    """A ``check`` whose predicate was False."""
    kind = "check"


class NaNError(JaxException):
    """A primitive made a NaN."""
    kind = "nan"


class DivisionByZeroError(JaxException):
    """A division by zero."""
    kind = "div"


class OOBError(JaxException):
    """An index out of bounds (dynamic_slice, dynamic_update_slice, gather, scatter)."""
    kind = "oob"


class WhileLoopVJPError(ValueError):
    """Reverse-mode differentiation reached a while loop (or a fori_loop with traced
    bounds), whose trip count is unknown ahead of time.

    Use ``lax.scan`` or a ``fori_loop`` with Python int bounds, or forward mode
    (``jvp``/``jacfwd``). JAX raises a ValueError."""


class WindowVJPError(NotImplementedError):
    """Reverse-mode differentiation of a windowed reduction that has no VJP: a general
    ``reduce_window`` computation, or a windowed max/min with dilation.

    Use ``lax.add``/``lax.max``/``lax.min`` with their identity, dilations of 1, or forward
    mode (``jvp``/``jacfwd``). JAX raises a NotImplementedError (a missing transpose rule)."""


class ClosedOverDifferentiationError(TypeError):
    """A derivative reached a value that a ``custom_jvp``/``custom_vjp`` function closes
    over: its rule says how it depends on its explicit arguments only.

    Pass the value as an argument of the function. JAX raises a TypeError."""


class CustomVJPForwardModeError(TypeError):
    """Forward mode (``jvp``, ``jacfwd``, ``linearize``) reached a ``custom_vjp`` function,
    which has only a reverse-mode rule.

    Use reverse mode, or ``custom_jvp``. JAX raises a TypeError."""


class CallbackError(RuntimeError):
    """A host callback returned values that do not match its declared results (shapes,
    dtypes or pytree).

    Return what ``result_shape_dtypes`` declares. JAX's is a ``JaxRuntimeError`` (a
    RuntimeError) from the launch."""


class LoweringError(RuntimeError):
    """A program that cannot be lowered to StableHLO: a primitive with no lowering rule
    for the platform, or a module that fails MLIR's verifier.

    A bug in spmdc or an unsupported platform; please report it. JAX raises a
    NotImplementedError for a missing lowering rule."""


# (jax.experimental.sparse)

class SparseEfficiencyError(ValueError):
    """A sparse layout change that would store far more elements than its input (JAX's
    class, raised by ``bcoo_update_layout`` with ``on_inefficient='error'``).

    Pass ``on_inefficient='warn'`` or ``None`` to accept the larger layout, or keep the
    batch and dense dimensions as they are."""


class SparseEfficiencyWarning(UserWarning):
    """The warning form of ``SparseEfficiencyError`` (``on_inefficient='warn'``)."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """JAX's warning for a cuSPARSE fallback; spmdc has no cuSPARSE path, so it never
    issues it (the class exists for code that filters it)."""


# Note [jaxlib's runtime error]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# What fails inside jaxlib (a compile with an unknown option, a launch whose host
# callback raised, a buffer used after deletion) reaches the user as jaxlib raised it: an
# instance of jaxlib's ``_jax.JaxRuntimeError`` (a RuntimeError). JAX names that very
# class ``jax.errors.JaxRuntimeError``, and programs catch it by that name (Equinox's
# ``filter_jit`` turns its runtime checks' failures into readable errors that way). This
# module stands below jaxlib's two doors (docs/ARCHITECTURE.md), so the runtime's door,
# runtime/pjrt/backend.py, hands the class over with ``adopt_runtime_error`` as it loads
# jaxlib, which loading spmdc always does before a user can reach this module; its
# ``__module__`` becomes this module's, as JAX makes it ``jax.errors``. A class of our own
# would be caught by nothing jaxlib raises.

def adopt_runtime_error(cls: type[RuntimeError]) -> None:
    """Make jaxlib's runtime error class this module's ``JaxRuntimeError`` (JAX's
    ``jax.errors.JaxRuntimeError``). See Note [jaxlib's runtime error]."""
    if not (isinstance(cls, type) and issubclass(cls, RuntimeError)):
        raise TypeError(f"adopt_runtime_error: expected a RuntimeError subclass, got {cls!r}")
    cls.__module__ = __name__      # as JAX names it jax.errors's
    globals()["JaxRuntimeError"] = cls
    if "JaxRuntimeError" not in __all__:
        __all__.insert(__all__.index("TypePromotionError") + 1, "JaxRuntimeError")


# (runtime) several processes

class DistributedError(RuntimeError):
    """The processes of a multi-process computation could not start or go on together:
    ``initialize`` called twice or too late, a coordinator that does not answer, a
    process that never joins.

    Do what the message says (the call order, or the SPMDC_COORDINATOR_ADDRESS /
    SPMDC_NUM_PROCESSES / SPMDC_PROCESS_ID settings). JAX raises a RuntimeError (jaxlib's
    ``JaxRuntimeError`` from its distributed client)."""


class PeerLost(DistributedError):
    """Another process of the computation stopped: raised in the main thread by the
    watchdog (runtime/distributed_watchdog.py), which sets ``message`` first
    (Note [failing fast] in runtime/distributed.py). ``delivered`` is set once one has
    been raised.

    Look at the other process's output for its error. JAX's processes wait for the
    coordination service's heartbeat timeout instead."""
    message = "another process of this computation stopped"
    delivered = threading.Event()

    def __init__(self, *args: Any):
        PeerLost.delivered.set()
        super().__init__(*(args or (PeerLost.message,)))


class ProcessFailureError(Exception):
    """Raised by ``multihost_utils.live_devices`` when one or more processes have failed;
    ``failed_devices`` is the set of their devices (JAX's class of that name, public in
    ``jax.experimental.multihost_utils``)."""

    def __init__(self, failed_devices: set[Any]):
        self.failed_devices = failed_devices
        super().__init__(f"Devices failed: {failed_devices}")


class StoreException(Exception):
    """The auxiliary-output store of a wrapped function (``jax.extend.linear_util``) was
    read before the function ran, or written twice: call ``call_wrapped`` once before
    reading the thunk a ``transformation_with_aux`` gave. JAX's ``StoreException``."""


# (any floor) filtered tracebacks (spmdc/tracebacks.py)

class UnfilteredStackTrace(Exception):
    """The cause attached to an error under ``remove_frames`` filtering: the whole
    traceback, spmdc's and the libraries' frames included (JAX's class of that name)."""


# --- the user's line, and the frames tracebacks leave out ---------------------------------

# See Note [library frames].

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# co_filename -> excluded? (cleared on any change of the lists below)
_library_file: dict[str, bool] = {}      # from messages (either list)
_hidden_file: dict[str, bool] = {}       # from tracebacks (_exclude_paths)


class _PathList(list):
    """A list of excluded paths that forgets the cached verdicts whenever it changes:
    libraries append to and remove from it directly (Flax's ``hide_flax_in_tracebacks``
    edits ``jax._src.traceback_util._exclude_paths``)."""

    def _changed(self, result: Any = None) -> Any:
        _library_file.clear()
        _hidden_file.clear()
        return result


def _forgetting(method: Callable[..., Any]) -> Callable[..., Any]:
    def mutate(self: _PathList, *args: Any, **kwargs: Any) -> Any:
        return self._changed(method(self, *args, **kwargs))
    return mutate


for _name in ("append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
              "__setitem__", "__delitem__", "__iadd__", "__imul__"):
    setattr(_PathList, _name, _forgetting(getattr(list, _name)))
del _name

_exclude_paths: list[str] = _PathList([_PACKAGE_DIR])
"""Files and folders whose frames tracebacks leave out (``jax._src.traceback_util``'s)."""
_source_exclude_paths: list[str] = _PathList([_PACKAGE_DIR])
"""Files and folders that are never the user's line (``jax.extend.source_info_util``'s)."""


def register_exclusion(path: str) -> None:
    """Leave the frames of ``path`` (a file, or a folder and everything under it) out of the
    tracebacks of errors raised through a transformation (JAX's
    ``traceback_util.register_exclusion``, which Flax and Equinox call at import)."""
    _exclude_paths.append(_checked_path(path, "register_exclusion"))


def register_source_exclusion(path: str) -> None:
    """Never name a line of ``path`` as the user's line in a message (JAX's
    ``source_info_util.register_exclusion``)."""
    _source_exclude_paths.append(_checked_path(path, "source_info_util.register_exclusion"))


def _checked_path(path: Any, what: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} takes a file or folder path (a str), got "
                        f"{type(path).__name__} {path!r}")
    return os.fspath(path)


def _under(filename: str, paths: list[str]) -> bool:
    filename = os.path.abspath(filename)
    for path in paths:
        prefix = os.path.abspath(path)
        if filename == prefix or filename.startswith(prefix.rstrip(os.sep) + os.sep):
            return True
    return False


def include_filename(filename: str) -> bool:
    """Whether a traceback keeps frames of ``filename`` (JAX's ``include_filename``)."""
    hidden = _hidden_file.get(filename)
    if hidden is None:
        hidden = _hidden_file[filename] = _under(filename, _exclude_paths)
    return not hidden


def include_frame(frame: types.FrameType) -> bool:
    """Whether a traceback keeps ``frame`` (JAX's ``traceback_util.include_frame``)."""
    return include_filename(frame.f_code.co_filename)


def _is_library(filename: str) -> bool:
    excluded = _library_file.get(filename)
    if excluded is None:
        excluded = _library_file[filename] = (_under(filename, _source_exclude_paths)
                                              or _under(filename, _exclude_paths))
    return excluded


def is_library_file(filename: str) -> bool:
    """Whether ``filename`` is spmdc's or a registered library's (not the user's code)."""
    return _is_library(filename)


class UserSource(str):
    """The user's ``file:line`` (the string itself, as messages print it), with the code
    and instruction of the frame it was read from, for JAX's longer form."""
    __slots__ = ("code", "instruction")

    def __new__(cls, frame: types.FrameType) -> UserSource:
        self = super().__new__(cls, f"{frame.f_code.co_filename}:{frame.f_lineno}")
        self.code = frame.f_code
        self.instruction = frame.f_lasti
        return self

    def __reduce__(self) -> Any:
        return str, (str(self),)            # a plain file:line once stored

    def located(self) -> str:
        """JAX's ``file:line:column (function)`` of a source (``print_saved_residuals``):
        the column where the expression being evaluated starts."""
        positions = list(self.code.co_positions())
        index = self.instruction // 2       # one position per 2-byte code unit
        column = positions[index][2] if 0 <= index < len(positions) else None
        where = str(self) if column is None else f"{self}:{column}"
        return f"{where} ({self.code.co_name})"


# The source a thread's operations are pinned to (jax.extend.source_info_util's
# user_context), by thread id; empty in the common case, so user_source pays one test.
_pinned_sources: dict[int, str] = {}


def pin_source(source: str | None) -> str | None:
    """Make ``source`` what ``user_source()`` gives in this thread (None: find the
    caller again); returns the source pinned before."""
    ident = threading.get_ident()
    before = _pinned_sources.pop(ident, None)
    if source is not None:
        _pinned_sources[ident] = source
    return before


def user_source() -> str | None:
    """``file:line`` of the innermost caller outside spmdc and the registered libraries
    (where the user's op is), as a ``UserSource``; the source ``pin_source`` pinned,
    if any."""
    if _pinned_sources:
        pinned = _pinned_sources.get(threading.get_ident())
        if pinned is not None:
            return pinned
    frame = sys._getframe(1)
    known = _library_file
    while frame is not None:       # every bind walks here: the cache is read inline
        filename = frame.f_code.co_filename
        library = known.get(filename)
        if not (_is_library(filename) if library is None else library):
            return UserSource(frame)
        frame = frame.f_back
    return None


def at_line(source: str | None) -> str:
    """`` (at file:line)`` for a ``source`` found by ``user_source()`` (empty for None)."""
    return f" (at {source})" if source else ""


def where() -> str:
    """`` (at file:line)`` of the user's code that called into spmdc, for messages."""
    return at_line(user_source())
