"""The recursion-budget repair: a ctypes view of CPython's thread state that gives back the
recursion levels jaxlib's C++ pytree registry leaks when a flatten fails (Note [recursion
budget after a failed flatten]). The one module of spmdc that knows CPython's private
struct layouts; runtime/pjrt/dispatch.py's ``python_path_after`` is its one user.
"""
from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any

# Note [recursion budget after a failed flatten]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# jaxlib's C++ pytree registry guards each level of its recursion with
# Py_EnterRecursiveCall, but an error thrown from a deeper level (a dict whose keys do
# not compare, a node's flatten that raises) unwinds the levels above it without their
# Py_LeaveRecursiveCall, and the thread keeps that much less of its recursion limit:
# - Python 3.11 (jaxlib 0.10.2), where Python frames and C recursion share one counter:
#   a dict with keys 1 and "a" inside a list leaks a level per call, and after ~1000
#   calls every call in that thread raises RecursionError; arguments that contain
#   themselves recurse to the limit, and when the limit is reached while comparing a
#   dict's keys (which depends on how deep the caller was) the whole budget leaks at once.
# - Python 3.12 (jaxlib 0.11.2) counts C recursion on its own (1500 levels): the nested
#   keys stopped C-level recursion in the thread after 1483 calls.
#
# So the error path of a dispatcher call (Jitted.__call__, Pmapped.__call__) repairs the
# counter. After a whole leak on 3.11 the handler has no level left for even one call (a
# threading.local's attribute, a comparison, all count), so its first statement adds
# ROOM levels with no call at all: ``recursion_reserve.value += ROOM``, where
# ``recursion_reserve`` is a ctypes int over the counter in ``main_thread_state``, a
# ctypes view of the main thread's PyThreadState (its layout checked when spmdc is
# imported: the counter must drop one C call deeper); reading or setting either calls
# nothing. Then the handler calls ``python_path_after`` (runtime/pjrt/dispatch.py), whose
# ``restore_recursion_budget()`` estimates the leak (``_leaked``) and gives it back when
# it is more than _LEAK_SEEN levels, else takes the ROOM levels back; a leak of a few
# levels is so repaired once ~_LEAK_SEEN have gathered. On 3.11 the estimate is the
# counter less the Python frames on the stack and the C calls it can tell (each call
# through an object's ``__call__``, and the script's entry); on 3.12 it is the C levels
# in use beyond those in use when spmdc was imported. Either may be off by a C call or
# two, which leaves the limit a level or two from where it was, where a leak left alone
# stops the thread. In another thread the handler's ROOM went to the main thread and is
# taken back there; that thread is repaired through a view of its own, made for the
# repair, when the handler still has a few levels, so a whole leak at once is repaired in
# the main thread only. Other Python versions' layouts are not known: nothing is done
# (tests/core/test_tree.py checks the leaks).
ROOM = 100
_LEAK_SEEN = 100


class _Head311(ctypes.Structure):
    # The head of CPython 3.11's PyThreadState (Include/cpython/pystate.h): ``remaining``
    # is recursion_remaining, which Python frames and C recursion share.
    _fields_ = [("prev", ctypes.c_void_p), ("next", ctypes.c_void_p),
                ("interp", ctypes.c_void_p), ("_initialized", ctypes.c_int),
                ("_static", ctypes.c_int), ("remaining", ctypes.c_int),
                ("limit", ctypes.c_int), ("headroom", ctypes.c_int)]


class _Head312(ctypes.Structure):
    # 3.12's: ``remaining`` is c_recursion_remaining, C recursion's own counter.
    _fields_ = [("prev", ctypes.c_void_p), ("next", ctypes.c_void_p),
                ("interp", ctypes.c_void_p), ("_status", ctypes.c_int),
                ("py_remaining", ctypes.c_int), ("limit", ctypes.c_int),
                ("remaining", ctypes.c_int), ("headroom", ctypes.c_int)]


_VERSION = sys.version_info[:2]
_ThreadState = _Head312 if _VERSION == (3, 12) else _Head311


class _InRepr:
    """Reads a thread state's ``remaining`` from inside repr(), one C call deeper."""
    def __init__(self, ts: Any) -> None:
        self.ts, self.seen = ts, 0

    def __repr__(self) -> str:
        self.seen = self.ts.remaining
        return ""


def _view_of_this_thread() -> Any:
    """A view of this thread's PyThreadState where its layout is known and checks out (a
    C call deeper, the counter the leak hits is lower), else a dummy (``limit`` 0)."""
    if _VERSION in ((3, 11), (3, 12)):
        get = ctypes.pythonapi.PyThreadState_Get
        get.restype = ctypes.c_void_p
        ts = _ThreadState.from_address(get())
        before, probe = ts.remaining, _InRepr(ts)
        repr(probe)
        if ts.limit == sys.getrecursionlimit() and 0 < probe.seen < before:
            return ts
    return _ThreadState()


# (a view of a thread that ends would point at freed memory: the main thread's only)
main_thread_state = (_view_of_this_thread()
                     if threading.current_thread() is threading.main_thread()
                     else _ThreadState())
# What a dispatcher call's error handler adds ROOM to before any call: the counter above,
# as one ctypes int (in a dummy view, a harmless int of its own).
recursion_reserve = ctypes.c_int.from_address(ctypes.addressof(main_thread_state)
                                              + _ThreadState.remaining.offset)
_main_at_import = main_thread_state.remaining       # 3.12: C recursion free at import
if _VERSION == (3, 12) and not main_thread_state.limit:          # (imported by a thread)
    _main_at_import = _view_of_this_thread().remaining


def _leaked(ts: Any) -> int:
    """How many more levels ``ts`` has in use than the stack accounts for (an estimate)."""
    if _VERSION == (3, 12):
        return _main_at_import - ts.remaining
    frames, calls, frame = 0, 1, sys._getframe()
    while frame is not None:
        frames += 1
        calls += frame.f_code.co_name == "__call__"
        frame = frame.f_back
    return ts.limit - ts.remaining - frames - calls


def restore_recursion_budget() -> None:
    """Give back the recursion levels a failed C++ flatten leaked; the caller has just
    added ROOM to ``recursion_reserve.value`` (Note [recursion budget after a failed
    flatten])."""
    ts, given = main_thread_state, ROOM
    if threading.current_thread() is not threading.main_thread():
        main_thread_state.remaining -= ROOM                 # (not this thread's)
        ts, given = _view_of_this_thread(), 0
    if ts.limit == 0:                                       # a dummy
        return
    leaked = _leaked(ts)
    if leaked + given > _LEAK_SEEN:
        ts.remaining += leaked
    else:
        ts.remaining -= given
