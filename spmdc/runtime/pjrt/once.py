"""Lazily made singletons, made once under a lock (Note [threads])."""
from __future__ import annotations

import functools
import threading
from typing import Any

# Note [threads]
# ~~~~~~~~~~~~~~
# spmdc may be used from several threads at once (README, "Threads"). What the threads
# share is made safe where it lives:
# - the trace being built is per thread (Note [thread-local trace] in tracing.py);
# - lazily made singletons (the PJRT client, the devices, the shardings that the C++
#   dispatcher compares by identity, the dispatcher's config slots) are made once under a
#   lock (``once``): two threads making the first call at once used to create two CPU
#   clients and mix their devices, which crashed the process;
# - lowering to StableHLO runs one at a time (Note [one lowering at a time] in
#   compiler/stablehlo.py); XLA compiles and PJRT launches run concurrently, which PJRT
#   supports;
# - the memo tables and compile caches are dicts read with ``get`` and filled with one
#   store of a value held in a local, which the GIL makes atomic: two threads that miss
#   at once both compute, one store wins, and each uses its own (equal) value.
# - jaxlib's C++ dispatcher (Note [C++ dispatch]) keeps its own cache under its own lock
#   and calls ``cache_miss`` on the calling thread; whether a call may take it is decided
#   from that thread's trace state.

init_lock = threading.RLock()


def once(fn: Any) -> Any:
    """``functools.cache`` whose first call per argument runs once, under a lock, so
    that every thread gets the same object (Note [threads])."""
    made: dict[Any, Any] = {}

    @functools.wraps(fn)
    def cached(*args: Any) -> Any:
        try:
            return made[args]
        except KeyError:
            pass
        with init_lock:
            if args not in made:
                made[args] = fn(*args)
            return made[args]
    return cached
