"""A spy on the Python path of jit / pmap, to see which calls jaxlib's C++ dispatcher
launched itself (Note [C++ dispatch] in runtime/pjrt/dispatch.py)."""


def count_python_calls(f):
    """Record every call of ``f`` (a jit or pmap result) that reaches spmdc's Python
    path, i.e. every miss of the C++ dispatcher; returns the growing list."""
    calls = []
    python_path = f._call

    def spy(args, kwargs):
        calls.append(1)
        return python_path(args, kwargs)
    f._call = spy
    return calls
