"""``jax.experimental.serialize_executable``: a compiled program
(``jit(f).lower(*args).compile()``) as bytes, and loaded back, in this process or
another with the same jaxlib and platform, without tracing or compiling again.

Note [serialized executables]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Single-device programs are serialized (a program over a mesh is not; its
``compile()`` is not a ``Compiled``). ``serialize(compiled)`` returns
``(bytes, in_tree, out_tree)`` as JAX's does: pytrees are
not serialized, the caller keeps them. The bytes are ``spmdc-serialized-executable-1\\n``,
an 8-byte length, a JSON header, then the executable as jaxlib's client serializes it.
The header holds what the launch needs besides the machine code: the program in spmdc's
IR text (its input and output types; ``compiler/ir.py`` parses it back), its StableHLO
text, the number of arguments, which outputs are weakly typed, the donated arguments
and the platform. Programs that call Python on the host (their executable refers to
this process's callables) and programs whose captured arrays are passed at launch
(JAX's ``const_args``) are refused, as JAX refuses them. Loading a serialized
executable runs machine code from the bytes: pass only bytes you made.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..compiler.ir import IRError, parse, print_func
from ..runtime import pjrt
from ..runtime.executable import Executable
from ..transforms.stages import Compiled, Entry

__all__ = ["serialize", "deserialize_and_load"]

_MAGIC = b"spmdc-serialized-executable-1\n"
_CALLBACK_TARGETS = ("xla_ffi_python_cpu_callback", "xla_ffi_python_gpu_callback")


def serialize(compiled: Compiled) -> tuple[bytes, Any, Any]:
    """``(bytes, in_tree, out_tree)`` of a compiled single-device program (Note
    [serialized executables])."""
    if not isinstance(compiled, Compiled):
        raise TypeError(f"serialize: expected a compiled program (jit(f).lower(...)"
                        f".compile()), got {type(compiled).__name__}")
    entry = compiled._entry
    exe = entry.executable
    if len(entry.in_types) != entry.n_args:
        raise NotImplementedError("serialize_executables with const_args")
    if any(t in exe.module_text for t in _CALLBACK_TARGETS):
        raise ValueError("Compilation does not support serialization: the program calls "
                         "Python on the host (a callback or debug.print), and its "
                         "executable refers to this process's callables")
    ir_text = print_func(exe.func)
    try:
        parse(ir_text)
    except (IRError, KeyError, ValueError) as e:
        raise ValueError(f"Compilation does not support serialization: its program does "
                         f"not read back from spmdc's IR text ({e})") from None
    header = json.dumps({
        "ir": ir_text, "module": exe.module_text, "n_args": entry.n_args,
        "n_embedded": len(exe.func.inputs) - entry.n_args,
        "out_weak": list(entry.launcher.out_weak), "donated": list(entry.donated),
        "executable_donated": list(exe.donated), "platform": pjrt.platform_wanted(),
    }).encode("utf-8")
    payload = pjrt.serialize_executable(exe.exe)
    blob = _MAGIC + len(header).to_bytes(8, "little") + header + payload
    return blob, compiled.in_tree, entry.out_tree


def deserialize_and_load(serialized: bytes, in_tree: Any, out_tree: Any,
                         backend: str | None = None,
                         execution_devices: Sequence[Any] | None = None) -> Compiled:
    """The compiled program ``serialize`` gave (with its ``in_tree`` and ``out_tree``),
    loaded for the first of ``execution_devices`` (default: this process's first
    device). Trusted input only: it is machine code this process runs."""
    data = bytes(serialized)
    if not data.startswith(_MAGIC):
        raise ValueError("deserialize_and_load: these bytes are not a serialized spmdc "
                         "executable (jax.experimental.serialize_executable.serialize "
                         "makes them)")
    start = len(_MAGIC)
    size = int.from_bytes(data[start:start + 8], "little")
    header = json.loads(data[start + 8:start + 8 + size].decode("utf-8"))
    payload = data[start + 8 + size:]
    platform = pjrt.platform_wanted()
    if isinstance(backend, str):
        if {"gpu": "cuda"}.get(backend, backend) != platform:
            raise ValueError(f"deserialize_and_load: backend {backend!r} is not this "
                             f"process's platform, {platform}")
    elif backend is not None and backend is not pjrt.client():
        raise ValueError(f"deserialize_and_load: backend must be a platform name or this "
                         f"process's client, got {backend!r}")
    if header["platform"] != platform:
        raise ValueError(f"deserialize_and_load: the executable was compiled for "
                         f"{header['platform']}, and this process runs on {platform}")
    devices = list(execution_devices) if execution_devices else pjrt.local_devices()[:1]
    func = parse(header["ir"])
    exe = Executable(pjrt.deserialize_executable(payload, devices[:1]), tuple(devices[:1]),
                     func, header["module"], tuple(header["executable_donated"]),
                     header["n_embedded"])
    entry = Entry(exe, func, [], list(header["out_weak"]), out_tree, header["n_args"],
                  tuple(header["donated"]))
    return Compiled(entry, in_tree)
