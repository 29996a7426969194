# SPDX-License-Identifier: Apache-2.0
"""coords.plan / coords.zeroed: where outputs land, which inputs they alias,
what is zeroed and what a call returns, in jax-triton's index forms and the
ROCm fork's signature coordinates (no kernel is compiled)."""
import jax
import jax.numpy as jnp
import pytest

from trident.jax import coords as co

F = jax.ShapeDtypeStruct((4,), jnp.float32)
I = jax.ShapeDtypeStruct((4,), jnp.int32)


def info(*names, constexpr=(), defaults=()):
    return co.ParamInfo("k", list(names), [n in constexpr for n in names], [n in defaults for n in names])


def arr(dtype=jnp.float32):
    return jnp.zeros((4,), dtype)


def given(**kw):
    """Arguments with every array wrapped as an In leaf, numbered in order."""
    n = [0]

    def wrap(v):
        if isinstance(v, tuple):
            return tuple(wrap(e) for e in v)
        if hasattr(v, "shape"):
            n[0] += 1
            return co.In(v, n[0] - 1)
        return v
    return {k: wrap(v) for k, v in kw.items()}


def run(plan):
    """The assembled result, each result being its index."""
    return plan.assemble(list(range(len(plan.results))))


def test_outputs_fill_the_parameters_without_argument():
    p = co.plan(info("x", "out", "n", "B", constexpr=("B",)), given(x=arr(), n=3), F, None, None)
    assert isinstance(p.values["out"], co.Out) and run(p) == 0 and p.ordinals == [0]


@pytest.mark.parametrize("out_shape, out_names, expect", [
    ((F, F), None, (0, 1)),
    ([F, F], None, [0, 1]),
    ({"o1": F, "o2": F}, None, (0, 1)),
    ({"o2": F, 2: F}, None, (0, 1)),
    ((F, F), ("o2", "o1"), (1, 0)),    # out_shape[0] is o2's; the return follows the signature
    ([F, F], [2, 3], (0, 1)),
])
def test_out_shape_forms(out_shape, out_names, expect):
    p = co.plan(info("x", "n", "o1", "o2"), given(x=arr(), n=3), out_shape, out_names, None)
    assert run(p) == expect


@pytest.mark.parametrize("out_shape, out_names, expect", [
    ((F,), "o1", 0),             # out_names: the fork's convention unwraps one output
    ((F,), None, (0,)),          # jax-triton: the pytree as given
    ([F], None, [0]),
    (F, None, 0),
])
def test_one_output(out_shape, out_names, expect):
    p = co.plan(info("x", "n", "o1"), given(x=arr(), n=3), out_shape, out_names, None)
    assert run(p) == expect


def test_nested_out_shape_is_a_tuple_parameter_or_leaves():
    # the fork: one output parameter holding a tuple
    p = co.plan(info("x", "Ptrs", "single"), given(x=arr()), ((F, (I, F)), F), None, None)
    assert isinstance(p.values["Ptrs"], tuple) and run(p) == ((0, (1, 2)), 3)
    # jax-triton 0.4: each leaf is a parameter of its own
    p = co.plan(info("x", "a", "b", "c"), given(x=arr()), ((F, I), F), None, None)
    assert [type(p.values[n]).__name__ for n in "abc"] == ["Out"] * 3 and run(p) == ((0, 1), 2)
    # a pytree with arbitrary keys: jax-triton's out_type
    p = co.plan(info("x", "a", "b"), given(x=arr()), {"first": F, "second": I}, None, None)
    assert run(p) == {"first": 0, "second": 1}


def test_dict_aliases_keep_their_place_in_out_shape():
    g = given(x=arr(), y=arr())
    p = co.plan(info("x", "y", "n", "out"), {**g, "n": 4}, (F, F), None, {1: 0})
    assert p.aliases == {1: 1} and run(p) == (1, 0)      # out_shape[0] is y's buffer, out_shape[1] is `out`


def test_dict_alias_int_keys_signature_index_then_operand_index():
    # jax-triton 0.4: a constexpr before the array; the key counts non-constexpr arguments
    g = given(x=arr(), y=arr())
    p = co.plan(info("x", "B", "y", constexpr=("B",)), {"x": g["x"], "B": 8, "y": g["y"]}, (F,), None, {1: 0})
    assert p.aliases == {1: 0}
    # the fork: the key is the parameter's index
    p = co.plan(info("x", "B", "y", constexpr=("B",)), {"x": g["x"], "B": 8, "y": g["y"]}, (F,), None, {2: 0})
    assert p.aliases == {1: 0}


@pytest.mark.parametrize("spec, expect", [
    ("p1", 1), (1, 1), (("p1",), 1), ([1], 1), ([0, [1, 2]], (0, (1, 2))), ([[1, 0], 2], ((1, 0), 2)),
])
def test_coordinate_aliases(spec, expect):
    g = given(p0=arr(), p1=arr(), p2=arr())
    p = co.plan(info("p0", "p1", "p2"), g, None, None, spec)
    ops = {r: o for o, r in p.aliases.items()}
    assert jax.tree.map(lambda r: ops[r], run(p)) == expect


def test_coordinate_alias_into_a_tuple_argument():
    g = given(Ptrs=(arr(), arr(jnp.int32)), v=arr())
    p = co.plan(info("Ptrs", "v"), g, None, None, [("Ptrs", 1)])
    assert p.aliases == {1: 0} and p.results[0].dtype == jnp.int32
    p = co.plan(info("Ptrs", "v"), g, None, None, "Ptrs")     # the whole tuple: its arrays, flat
    assert p.aliases == {0: 0, 1: 1} and run(p) == (0, 1)
    g = given(T=(arr(), (16, 16), (16, 1)))
    p = co.plan(info("T"), g, None, None, "T")                 # one array in the tuple: returned alone
    assert p.aliases == {0: 0} and run(p) == 0


def test_pure_and_aliased_outputs_return_in_order():
    g = given(i=arr(), io=arr())
    p = co.plan(info("i", "io", "o"), g, F, "o", "io")
    assert run(p) == (0, 1) and p.aliases == {1: 1}


def test_errors_name_the_kernel_and_the_problem():
    g = given(x=arr())
    with pytest.raises(co.CoordinateError, match="'k'.*2 output.*1 non-constexpr"):
        co.plan(info("x", "o"), g, (F, F), None, None)
    with pytest.raises(co.CoordinateError, match="'nope' is not a parameter"):
        co.plan(info("x", "o"), g, F, "nope", None)
    with pytest.raises(co.CoordinateError, match="aliased twice"):
        co.plan(info("x"), g, None, None, ["x", "x"])
    with pytest.raises(co.CoordinateError, match="'o' has no argument, no default"):
        co.plan(info("x", "o", "n"), g, None, None, "x")
    with pytest.raises(co.CoordinateError, match="is a constexpr"):
        co.plan(info("x", "O", constexpr=("O",)), g, {"O": F}, None, None)


def test_zeroed_forms():
    i = info("x", "n", "o1", "o2")
    p = co.plan(i, given(x=arr(), n=3), (F, F), None, None)
    assert co.zeroed(i, p.values, ("o1",), p.ordinals, set()) == [0]
    assert co.zeroed(i, p.values, "o2", p.ordinals, set()) == [1]
    assert co.zeroed(i, p.values, (1,), p.ordinals, set()) == [1]          # an output index (jax-triton)
    assert co.zeroed(i, p.values, (2, 3), p.ordinals, set()) == [0, 1]     # parameter indices
    assert co.zeroed(i, p.values, [(3,)], p.ordinals, set()) == [1]        # a 1-tuple is a coordinate
    t = info("x", "outs")
    p = co.plan(t, given(x=arr()), [(F, F)], None, None)
    assert co.zeroed(t, p.values, [("outs", 1)], p.ordinals, set()) == [1]
    with pytest.raises(co.CoordinateError, match="is an input"):
        co.zeroed(i, p.values, ["x"], p.ordinals, set())
