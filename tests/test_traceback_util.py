"""Traceback filtering (Note [library frames] in spmdc/errors.py; the boundaries are
spmdc/tracebacks.py's): an error raised in the user's function under a transformation
reaches the caller without spmdc's frames or the frames of files a library registered,
in each mode of ``jax_traceback_filtering``, and the line a message names skips the
registered files too.

The expected frames are JAX 0.10.2's: under ``auto`` (outside IPython) the traceback of
``jax.jit(f)(1.0)``, ``jax.grad(f)(1.0)``, ``jax.vmap(f)(x)`` and ``jax.jit(jax.grad(f))``
holds only the caller's frames and ``f``'s, with one note; under ``off`` it holds JAX's
own frames; under ``remove_frames`` it is filtered and its cause is an
``UnfilteredStackTrace``."""
from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import textwrap
import traceback

import alias_programs
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import errors, lax, tracebacks
from spmdc._src import traceback_util
from spmdc.extend import source_info_util

SPMDC_DIR = os.path.dirname(spmdc.__file__)


def _raises(x):
    raise ValueError("boom")


def _files(tb):
    return [frame.filename for frame in traceback.extract_tb(tb)]


@contextlib.contextmanager
def _filtering(mode):
    before = spmdc.config.jax_traceback_filtering
    spmdc.config.update("jax_traceback_filtering", mode)
    try:
        yield
    finally:
        spmdc.config.update("jax_traceback_filtering", before)


_custom_jvp = spmdc.custom_jvp(_raises)
_custom_jvp.defjvp(lambda primals, tangents: (primals[0], tangents[0]))
_custom_vjp = spmdc.custom_vjp(_raises)
_custom_vjp.defvjp(lambda x: (x, None), lambda _, g: (g,))

CALLS = {
    "jit": lambda: spmdc.jit(_raises)(1.0),
    "grad": lambda: spmdc.grad(_raises)(1.0),
    "value_and_grad": lambda: spmdc.value_and_grad(_raises)(1.0),
    "vmap": lambda: spmdc.vmap(_raises)(jnp.ones(2)),
    "jit of grad": lambda: spmdc.jit(spmdc.grad(_raises))(1.0),
    "jvp": lambda: spmdc.jvp(_raises, (1.0,), (1.0,)),
    "linearize": lambda: spmdc.linearize(_raises, 1.0),
    "jacrev": lambda: spmdc.jacrev(_raises)(1.0),
    "jacfwd": lambda: spmdc.jacfwd(_raises)(1.0),
    "eval_shape": lambda: spmdc.eval_shape(_raises, 1.0),
    "pmap": lambda: spmdc.pmap(_raises)(jnp.ones(1)),
    "cond": lambda: lax.cond(True, _raises, _raises, 1.0),
    "switch": lambda: lax.switch(0, [_raises], 1.0),
    "scan": lambda: lax.scan(lambda c, x: (_raises(c), x), 1.0, jnp.ones(2)),
    "while_loop": lambda: lax.while_loop(_raises, lambda c: c, 1.0),
    "fori_loop": lambda: lax.fori_loop(0, 2, lambda i, c: _raises(c), 1.0),
    "custom_jvp": lambda: _custom_jvp(1.0),
    "custom_vjp": lambda: _custom_vjp(1.0),
    "checkpoint": lambda: spmdc.checkpoint(_raises)(1.0),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_default_mode_keeps_only_the_users_frames(name):
    assert spmdc.config.jax_traceback_filtering == "auto"
    with pytest.raises(ValueError, match="boom") as info:
        CALLS[name]()
    files = _files(info.value.__traceback__)
    assert files and all(f == __file__ for f in files), files
    assert traceback.extract_tb(info.value.__traceback__)[-1].name == "_raises"
    assert info.value.__notes__ == [tracebacks.SIMPLIFIED_NOTE]


def test_off_keeps_spmdcs_frames():
    with _filtering("off"), pytest.raises(ValueError) as info:
        spmdc.jit(_raises)(1.0)
    files = _files(info.value.__traceback__)
    assert any(f.startswith(SPMDC_DIR) for f in files)
    assert not hasattr(info.value, "__notes__")


def test_remove_frames_chains_the_whole_traceback():
    with _filtering("remove_frames"), pytest.raises(ValueError) as info:
        spmdc.grad(_raises)(1.0)
    assert all(f == __file__ for f in _files(info.value.__traceback__))
    cause = info.value.__cause__
    assert isinstance(cause, traceback_util.UnfilteredStackTrace)
    assert str(cause).startswith("ValueError: boom\n")
    assert any(f.startswith(SPMDC_DIR) for f in _files(cause.__traceback__))


def test_tracebackhide_marks_the_hidden_frames():
    with _filtering("tracebackhide"), pytest.raises(ValueError) as info:
        spmdc.jit(_raises)(1.0)
    hidden = {frame.f_code.co_filename: frame.f_locals.get("__tracebackhide__", False)
              for frame, _ in traceback.walk_tb(info.value.__traceback__)}
    assert any(f.startswith(SPMDC_DIR) for f in hidden)
    for filename, hide in hidden.items():
        assert hide == filename.startswith(SPMDC_DIR), filename


def test_a_bad_mode_is_a_value_error():
    with pytest.raises(ValueError, match="jax_traceback_filtering takes one of"):
        spmdc.config.update("jax_traceback_filtering", "quiet")
    assert spmdc.config.jax_traceback_filtering == "auto"


def test_the_environment_sets_the_mode():
    env = {**os.environ, "JAX_TRACEBACK_FILTERING": "off"}
    out = subprocess.run([sys.executable, "-c", "import spmdc; "
                          "print(spmdc.config.jax_traceback_filtering)"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip() == "off", out.stderr
    env["JAX_TRACEBACK_FILTERING"] = "loud"
    out = subprocess.run([sys.executable, "-c", "import spmdc"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert "JAX_TRACEBACK_FILTERING='loud' is not a mode" in out.stderr


LIBRARY = '''
import spmdc, spmdc.numpy as jnp

def library_jit(f):
    def call_user(*args):
        return f(*args)
    return spmdc.jit(call_user)

def library_add(x):
    return x + jnp.ones(3)
'''


@pytest.fixture
def library(tmp_path):
    """A module standing for a library's wrapper (Equinox's filter_jit), loaded from its
    own file: its frame runs below jit's boundary, between spmdc's and the user's. The
    paths registered while the test runs are removed after it."""
    path = tmp_path / "fake_library.py"
    path.write_text(LIBRARY)
    spec = importlib.util.spec_from_file_location("fake_library", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    before = (list(errors._exclude_paths), list(errors._source_exclude_paths))
    yield module
    errors._exclude_paths[:] = before[0]
    errors._source_exclude_paths[:] = before[1]


def test_a_registered_library_is_left_out_of_tracebacks(library):
    with pytest.raises(ValueError) as info:
        library.library_jit(_raises)(1.0)
    assert library.__file__ in _files(info.value.__traceback__)   # not registered yet
    traceback_util.register_exclusion(library.__file__)
    with pytest.raises(ValueError) as info:
        library.library_jit(_raises)(1.0)
    assert library.__file__ not in _files(info.value.__traceback__)
    assert _files(info.value.__traceback__)[-1] == __file__


def test_flax_edits_the_exclusion_list_itself(library, tmp_path):
    # flax.traceback_util.show_flax_in_tracebacks removes its paths from the list.
    traceback_util.register_exclusion(str(tmp_path))          # a folder: all under it
    frame_file = library.__file__
    assert not traceback_util.include_filename(frame_file)
    traceback_util._exclude_paths.remove(str(tmp_path))
    assert traceback_util.include_filename(frame_file)
    traceback_util._exclude_paths.append(str(tmp_path))
    assert not traceback_util.include_filename(frame_file)
    assert traceback_util.include_frame(sys._getframe())       # this test's own frame


def test_messages_name_the_users_line_past_a_registered_library(library):
    with pytest.raises(TypeError) as info:
        spmdc.jit(library.library_add)(jnp.ones(2))
    assert f"(at {library.__file__}:" in str(info.value)
    source_info_util.register_exclusion(library.__file__)
    with pytest.raises(TypeError) as info:
        spmdc.jit(library.library_add)(jnp.ones(2))
    assert f"(at {__file__}:" in str(info.value)


def test_register_exclusion_takes_a_path():
    with pytest.raises(TypeError, match="takes a file or folder path"):
        traceback_util.register_exclusion(3)


def test_api_boundary_wraps_a_librarys_entry_point(library):
    traceback_util.register_exclusion(library.__file__)

    @traceback_util.api_boundary
    def entry(x):
        return library.library_jit(_raises)(x)
    with pytest.raises(ValueError) as info:
        entry(1.0)
    assert all(f == __file__ for f in _files(info.value.__traceback__))
    assert entry.__name__ == "entry"
    np.testing.assert_allclose(traceback_util.api_boundary(lambda x: x * 2)(3.0), 6.0)


ALIAS_PROGRAM = alias_programs.register("traceback_util", textwrap.dedent("""
    import sys, spmdc
    sys.modules['jax'] = spmdc
    import jax._src.traceback_util as traceback_util
    from jax._src import traceback_util as tu
    from jax.extend import source_info_util
    traceback_util.register_exclusion("/lib/a.py")
    source_info_util.register_exclusion("/lib/b.py")
    assert tu is spmdc._src.traceback_util
    print("/lib/a.py" in spmdc.errors._exclude_paths,
          "/lib/b.py" in spmdc.errors._source_exclude_paths)
    """))


def test_the_library_names_resolve_under_the_jax_alias():
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.split() == ["True", "True"], out.stderr
