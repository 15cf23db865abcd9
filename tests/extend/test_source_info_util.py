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


def test_transform_names_wrap_what_follows_them():
    # JAX 0.10.2's forms
    s = siu.new_name_stack("outer").transform("jvp").extend("inner")
    assert str(s) == "outer/jvp(inner)"
    assert repr(s) == ("NameStack(stack=(Scope(name='outer'), Transform(name='jvp'), "
                       "Scope(name='inner')))")
    assert str(siu.new_name_stack("a").transform("vmap")) == "a/vmap()"
    assert str(s[1:]) == "jvp(inner)"
    assert str(s.transform("grad").extend("x")) == "outer/jvp(inner)/grad(x)"
    with siu.extend_name_stack("o"), siu.transform_name_stack("jvp") as t:
        assert repr(t) == "NameStack(stack=(Scope(name='o'), Transform(name='jvp')))"
        assert str(siu.current_name_stack()) == "o/jvp()"
        with siu.set_name_stack(s):
            assert siu.current_name_stack() == s

    def f(x):
        with siu.transform_name_stack("jvp"), siu.extend_name_stack("inner"):
            return jnp.sin(x)
    assert "sin(%0)  # jvp(inner)" in str(spmdc.make_ir(f)(1.0))
    # JAX: loc("jit(f)/jvp(inner)/sin"(...)); spmdc's locations name no jit
    assert '"jvp(inner)/sin"' in spmdc.jit(f).lower(1.0).as_text(debug_info=True)


def _elsewhere():
    return siu.current().traceback


ELSEWHERE = _elsewhere()


def test_user_context_says_where_operations_come_from():
    def f(x):
        with siu.user_context(ELSEWHERE, name_stack=siu.new_name_stack("blk")):
            return jnp.cos(x)
    text = spmdc.jit(f).lower(1.0).as_text(debug_info=True)
    line = _elsewhere.__code__.co_firstlineno + 1
    assert '"blk/cosine"' in text or '"blk/cos"' in text
    assert f'{__file__}":{line}' in text
    try:
        with siu.user_context(ELSEWHERE):
            jnp.add(jnp.ones(2), jnp.ones(3))
    except TypeError as e:
        assert f"(at {__file__}:{line})" in str(e)
        assert e.__notes__ == [f"(the operation comes from {__file__}:{line}:11 (_elsewhere))"]
    else:
        raise AssertionError("no error")
    assert siu.current().traceback != ELSEWHERE           # unpinned afterwards


def test_jaxpr_equations_carry_jaxs_source_info():
    # Haiku's jaxpr_info nests equations under their modules by
    # str(eqn.source_info.name_stack) (regression: spmdc's file:line string was the
    # source_info, without name_stack). JAX 0.10.2 gives 'outer/inner', 'outer', ''.
    def f(x):
        with spmdc.named_scope("outer"):
            with spmdc.named_scope("inner"):
                y = jnp.sin(x)
            z = jnp.cos(y)
        return z + 1
    eqns = spmdc.make_jaxpr(f)(1.0).eqns
    assert [(e.primitive.name, str(e.source_info.name_stack)) for e in eqns] == [
        ("sin", "outer/inner"), ("cos", "outer"), ("add", "")]
    assert all(isinstance(e.source_info, siu.SourceInfo) for e in eqns)
    first = f.__code__.co_firstlineno
    assert [str(e.source_info.traceback).rsplit(":", 1)[1] for e in eqns] == [
        str(first + 3), str(first + 4), str(first + 5)]
    assert siu.summarize(eqns[0].source_info).endswith(f"test_source_info_util.py:{first + 3}")
