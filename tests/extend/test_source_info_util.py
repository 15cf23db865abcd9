"""jax.extend.source_info_util: name stacks over spmdc's named_scope stack, and the
user's frame (forms as JAX 0.10.2 prints them)."""
import spmdc
import spmdc.numpy as jnp
from spmdc.extend import source_info_util as siu


def test_name_stacks_read_and_set_the_named_scopes():
    assert repr(siu.new_name_stack("a")) == "NameStack(stack=(Scope(name='a'),))"
    both = siu.new_name_stack("a").extend("b")
    assert (str(both), len(both), str(both + both)) == ("a/b", 2, "a/b/a/b")
    assert repr(siu.current_name_stack()) == "NameStack(stack=())"
    with siu.extend_name_stack("outer") as stack:
        assert str(stack) == "outer" and str(siu.current_name_stack()) == "outer"
        with siu.reset_name_stack():
            assert repr(siu.current_name_stack()) == "NameStack(stack=())"
        with siu.set_name_stack(siu.new_name_stack("zz")):
            ir = str(spmdc.make_ir(lambda x: jnp.sin(x))(1.0))
        assert str(siu.current_name_stack()) == "outer"
    assert "sin(%0)  # zz" in ir


def test_current_and_summarize():
    here = siu.current()
    line = test_current_and_summarize.__code__.co_firstlineno + 1
    assert siu.summarize(here) == f"{__file__}:{line}:11 (test_current_and_summarize)"
    assert siu.summarize(siu.new_source_info()) == ""
    assert repr(siu.new_source_info()) == ("SourceInfo(traceback=None, "
                                           "name_stack=NameStack(stack=()))")
