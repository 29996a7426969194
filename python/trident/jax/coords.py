# SPDX-License-Identifier: Apache-2.0
"""Where a triton_call's outputs go, which inputs they alias and which are
zeroed: jax-triton's index forms and the ROCm fork's signature coordinates.

A coordinate addresses one argument of the kernel, or one element of a tuple
argument, in the kernel's signature:

    "name" or 3               the parameter (all its arrays, for a tuple)
    ("name", 1, 0) / (3, 1)   element 0 of element 1 of the tuple passed there

Outputs (out_shape / out_type, out_names):
  * a dict {parameter: shape(s)} names the output parameters (nested sequences
    of shapes for tuple parameters); out_names= names them for a sequence;
  * otherwise the outputs go, in order, to the non-constexpr parameters no
    argument was given for (jax-triton's rule): for the usual positional call
    these are the parameters after the last positional argument, which is why
    output-only parameters come last in such kernels.
Aliases (input_output_aliases):
  * the old dict {input: output ordinal}: the input is a signature coordinate;
    a plain int names a parameter holding an array, else (jax-triton 0.4) the
    int-th non-constexpr argument leaf; the output ordinal indexes out_shape;
  * coordinates (a coordinate, or a list, nested lists giving the returned
    structure): the aliased outputs' shapes come from the inputs and are
    returned after the output-only ones.
zeroed_outputs: coordinates of output parameters, or jax-triton's output
ordinals (plain ints, when every one is below the number of outputs; write
(3,) to force a coordinate). An ordinal of an output aliased to an input
zeroes that buffer before the launch, as upstream jax-triton does; a
coordinate of an input is refused, as in the ROCm fork (zeroing would
destroy the values it carries in).

Return value: the out_shape pytree as given (jax-triton) unless a fork-only
form is used (dict out_shape, out_names, coordinate aliases), which returns a
tuple with one entry per output parameter then per aliased entry, unwrapped
when there is exactly one (the fork's convention).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import jax
import numpy as np

from .errors import CoordinateError
from .tensordesc import TensorDescriptor


@dataclass(frozen=True)
class In:
    """An input array leaf: the caller's array (or Ref value) and its operand number."""
    array: Any
    operand: int


@dataclass(frozen=True)
class Out:
    """An output leaf: the index of the call's result and its shape/dtype."""
    result: int
    shape: jax.ShapeDtypeStruct


@dataclass
class ParamInfo:
    """What coords needs to know about the kernel's parameters."""
    kernel: str
    names: list[str]
    constexpr: list[bool]
    has_default: list[bool]

    def index(self, ref: Any, what: str) -> int:
        if isinstance(ref, (bool, np.bool_)) or not isinstance(ref, (int, np.integer, str)):
            raise CoordinateError(f"kernel '{self.kernel}': {what}: {ref!r} is not a parameter name or index")
        if isinstance(ref, str):
            if ref not in self.names:
                raise CoordinateError(f"kernel '{self.kernel}': {what}: '{ref}' is not a parameter of the kernel "
                                      f"({', '.join(self.names)})")
            return self.names.index(ref)
        i = int(ref)
        if not 0 <= i < len(self.names):
            raise CoordinateError(f"kernel '{self.kernel}': {what}: parameter index {i} is out of range "
                                  f"(the kernel has {len(self.names)} parameters: {', '.join(self.names)})")
        return i


def is_shape_like(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (tuple, list, dict))


def is_coordinate(spec: Any) -> bool:
    """A single coordinate (not a list of them): an int, a str, or a tuple whose first element is one."""
    if isinstance(spec, (int, np.integer, str)) and not isinstance(spec, bool):
        return True
    return isinstance(spec, tuple) and len(spec) > 0 and isinstance(spec[0], (int, np.integer, str)) \
        and not isinstance(spec[0], bool)


def path_of(info: ParamInfo, spec: Any, what: str) -> tuple[int, ...]:
    """A coordinate as a path of ints: (parameter index, tuple index, ...)."""
    if not is_coordinate(spec):
        raise CoordinateError(f"kernel '{info.kernel}': {what}: {spec!r} is not a coordinate (a parameter name or "
                              f"index, or a tuple (name or index, i, j, ...))")
    if not isinstance(spec, tuple):
        return (info.index(spec, what),)
    rest = spec[1:]
    for r in rest:
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
            raise CoordinateError(f"kernel '{info.kernel}': {what}: {spec!r}: after the parameter, a coordinate "
                                  f"holds tuple indices (ints), not {r!r}")
    return (info.index(spec[0], what), *(int(r) for r in rest))


def _at(info: ParamInfo, values: dict[str, Any], path: tuple[int, ...], what: str) -> Any:
    name = info.names[path[0]]
    if name not in values:
        raise CoordinateError(f"kernel '{info.kernel}': {what}: parameter '{name}' has no argument")
    v = values[name]
    for depth, i in enumerate(path[1:], 1):
        if not isinstance(v, tuple) or not -len(v) <= i < len(v):
            where = name + "".join(f"[{j}]" for j in path[1:depth])
            raise CoordinateError(f"kernel '{info.kernel}': {what}: {where} is "
                                  f"{'a tuple of ' + str(len(v)) if isinstance(v, tuple) else type(v).__name__}"
                                  f", it has no element {i}")
        v = v[i]
    return v


def _leaves(v: Any) -> list[Any]:
    if isinstance(v, tuple):
        return [x for e in v for x in _leaves(e)]
    if isinstance(v, TensorDescriptor):
        return _leaves(v.base)      # a descriptor's array is its base: aliased, or zeroed, through it
    return [v]


def _array_of(v: Any) -> Any:
    """The input array a parameter's value holds directly (a descriptor holds its base)."""
    return v.base if isinstance(v, TensorDescriptor) else v


def _shape_of(x: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(x.shape), x.dtype)


def _tops_of(out_shape: Any) -> tuple[list[Any], bool]:
    """Top-level entries of a non-dict out_shape, and whether it was a single shape."""
    if out_shape is None:
        return [], False
    if is_shape_like(out_shape):
        return [out_shape], True
    if isinstance(out_shape, (tuple, list)):
        return list(out_shape), False
    raise CoordinateError(f"out_shape {out_shape!r}: expected an object with .shape and .dtype, a sequence of them "
                          f"or a dict {{parameter: shape(s)}}")


def _struct(x: Any, what: str) -> Any:
    """A nested tuple of ShapeDtypeStructs from shapes / sequences of them."""
    if is_shape_like(x):
        return _shape_of(x)
    if isinstance(x, (tuple, list)):
        return tuple(_struct(e, what) for e in x)
    raise CoordinateError(f"{what}: {x!r} has no .shape and .dtype")


@dataclass
class Plan:
    """The outputs of one call: what goes where and how the result is assembled."""
    values: dict[str, Any]                   # every given/output parameter: In/Out leaves, scalars, ...
    results: list[jax.ShapeDtypeStruct]      # the call's results, in order
    aliases: dict[int, int]                  # operand number -> result index
    ref_writes: list[tuple[Any, int]] = field(default_factory=list)   # (Ref, result index)
    assemble: Callable[[list[Any]], Any] = lambda outs: tuple(outs)
    fork_style: bool = False
    ordinals: list[int] = field(default_factory=list)   # jax-triton's output index -> result index


def _dict_out_shape(info: ParamInfo, out_shape: dict) -> Optional[dict[int, Any]]:
    """{parameter index: entry} when the dict's keys all name parameters (the fork's form), else None."""
    out = {}
    for key in out_shape:
        k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
        if isinstance(k, str) and k in info.names:
            out[info.names.index(k)] = out_shape[key]
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 0 <= k < len(info.names):
            out[int(k)] = out_shape[key]
        else:
            return None
    return out


def _build(r: Any, outs: list[Any]) -> Any:
    if isinstance(r, tuple):
        return tuple(_build(e, outs) for e in r)
    return outs[r]


def plan(info: ParamInfo, given: dict[str, Any], out_shape: Any, out_names: Any,
         input_output_aliases: Any) -> Plan:
    """Places the outputs among the parameters and resolves the aliases.

    given: the arguments bound to parameter names, array leaves wrapped as In."""
    k = info.kernel
    values = dict(given)
    spec = input_output_aliases
    alias_dict = spec if isinstance(spec, dict) and spec else None
    alias_coords = None if spec is None or isinstance(spec, dict) or (
        isinstance(spec, (list, tuple)) and len(spec) == 0) else spec
    # out_names: one name or index, or a sequence of them (a tuple is always a sequence here)
    if isinstance(out_names, (str, int, np.integer)) and not isinstance(out_names, bool):
        out_names = (out_names,)
    elif isinstance(out_names, list):
        out_names = tuple(out_names)
    if out_names is not None and not isinstance(out_names, tuple):
        raise CoordinateError(f"kernel '{k}': out_names {out_names!r}: expected a parameter name or index, or a "
                              f"sequence of them")
    missing = [i for i, n in enumerate(info.names) if not info.constexpr[i] and n not in given]
    results: list[jax.ShapeDtypeStruct] = []

    def place(struct: Any) -> Any:
        if isinstance(struct, tuple):
            return tuple(place(e) for e in struct)
        results.append(struct)
        return Out(len(results) - 1, struct)

    def result_struct(v: Any) -> Any:
        return tuple(result_struct(e) for e in v) if isinstance(v, tuple) else v.result

    fork_style = alias_coords is not None or out_names is not None
    dict_form = _dict_out_shape(info, out_shape) if isinstance(out_shape, dict) else None
    tree = None
    single = False
    tops: list[Any] = []
    alias_ords: list[int] = []
    if dict_form is not None:
        # the fork's {parameter: shape(s)}: output order is the signature's
        fork_style = True
        if out_names is not None:
            want = {path_of(info, n, "out_names")[0] for n in out_names}
            if want != set(dict_form):
                raise CoordinateError(f"kernel '{k}': out_names {list(out_names)} and the keys of out_shape "
                                      f"{list(out_shape)} must name the same parameters")
        if alias_dict:
            raise CoordinateError(f"kernel '{k}': with a dict out_shape, give input_output_aliases as coordinates "
                                  f"(the aliased shapes come from the inputs), not as a dict")
        out_params = sorted(dict_form)
        structs = [_struct(dict_form[p], f"kernel '{k}': out_shape['{info.names[p]}']") for p in out_params]
        pure_idx = list(range(len(out_params)))
    else:
        if isinstance(out_shape, dict):
            if out_names is not None:
                raise CoordinateError(f"kernel '{k}': out_shape keys {list(out_shape)} must name output parameters")
            # an arbitrary pytree (jax-triton's out_type): its leaves are the outputs
            tops, tree = jax.tree_util.tree_flatten(out_shape, is_leaf=is_shape_like)
        else:
            tops, single = _tops_of(out_shape)
        if alias_dict:
            for o in alias_dict.values():
                if isinstance(o, bool) or not isinstance(o, (int, np.integer)) or not 0 <= o < len(tops):
                    raise CoordinateError(f"kernel '{k}': input_output_aliases: output {o!r} is not an index into "
                                          f"out_shape ({len(tops)} entries)")
            alias_ords = sorted({int(o) for o in alias_dict.values()})
            if len(alias_ords) != len(alias_dict):
                raise CoordinateError(f"kernel '{k}': input_output_aliases maps two inputs to one output")
        pure_idx = [t for t in range(len(tops)) if t not in alias_ords]
        if out_names is not None:
            out_params = []
            for n in out_names:
                p = path_of(info, n, "out_names")
                if len(p) != 1:
                    raise CoordinateError(f"kernel '{k}': out_names: {n!r} addresses an element of a tuple "
                                          f"parameter; name the whole parameter and give a nested out_shape")
                out_params.append(p[0])
            if len(set(out_params)) != len(out_params):
                raise CoordinateError(f"kernel '{k}': out_names names a parameter twice: {list(out_names)}")
            if len(out_params) != len(pure_idx):
                raise CoordinateError(f"kernel '{k}': out_names names {len(out_params)} output parameter(s); "
                                      f"out_shape has {len(pure_idx)} entries not aliased to an input")
        else:
            if tree is None and len(missing) != len(pure_idx) and any(not is_shape_like(tops[t]) for t in pure_idx):
                # jax-triton: every leaf of a nested out_type is a parameter of its own
                if alias_dict:
                    raise CoordinateError(f"kernel '{k}': a nested out_shape with a dict input_output_aliases is "
                                          f"ambiguous")
                tops, tree = jax.tree_util.tree_flatten(out_shape, is_leaf=is_shape_like)
                single = False
                pure_idx = list(range(len(tops)))
            if len(missing) < len(pure_idx):
                raise CoordinateError(
                    f"kernel '{k}': out_shape has {len(pure_idx)} output(s) not aliased to an input, but "
                    f"{len(missing)} non-constexpr parameter(s) have no argument "
                    f"({', '.join(info.names[i] for i in missing) or 'none'})")
            out_params = missing[:len(pure_idx)]
            for i in missing[len(pure_idx):]:
                if not info.has_default[i]:
                    hint = (" (an aliased output needs no parameter of its own since jax-triton 0.3.1: drop it "
                            "from the kernel)") if spec else ""
                    raise CoordinateError(
                        f"kernel '{k}': parameter '{info.names[i]}' has no argument, no default and no output "
                        f"lands on it (out_shape has {len(pure_idx)} output(s) for the parameters without an "
                        f"argument: {', '.join(info.names[j] for j in missing)}){hint}")
        structs = [_struct(tops[t], f"kernel '{k}': out_shape[{t}]") for t in pure_idx]
    for p in out_params:
        if info.constexpr[p]:
            raise CoordinateError(f"kernel '{k}': output parameter '{info.names[p]}' is a constexpr")
        if info.names[p] in given:
            raise CoordinateError(f"kernel '{k}': parameter '{info.names[p]}' is given an argument and named as an "
                                  f"output; outputs are not passed to the launcher")

    # output-only leaves are the first results, in out_shape's order
    placed = [place(st) for st in structs]
    for p, v in zip(out_params, placed):
        values[info.names[p]] = v

    aliases: dict[int, int] = {}
    top_result: dict[int, Any] = {t: result_struct(v) for t, v in zip(pure_idx, placed)}
    if alias_dict:
        # the old form: {input: output ordinal}; aliased outputs keep their place in out_shape
        operand_leaves = [leaf for i, n in enumerate(info.names) if not info.constexpr[i] and n in given
                          for leaf in _leaves(given[n])]
        for key, o in alias_dict.items():
            if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
                i = int(key)
                if 0 <= i < len(info.names) and isinstance(_array_of(given.get(info.names[i])), In):
                    leaf = _array_of(given[info.names[i]])
                elif 0 <= i < len(operand_leaves) and isinstance(operand_leaves[i], In):
                    leaf = operand_leaves[i]
                else:
                    raise CoordinateError(f"kernel '{k}': input_output_aliases: input {i} is neither a parameter "
                                          f"holding an array nor an array among the {len(operand_leaves)} "
                                          f"non-constexpr argument leaves")
            else:
                leaf = _array_of(_at(info, given, path_of(info, key, "input_output_aliases"),
                                     "input_output_aliases"))
                if not isinstance(leaf, In):
                    raise CoordinateError(f"kernel '{k}': input_output_aliases: input {key!r} is not an array "
                                          f"({type(leaf).__name__})")
            if leaf.operand in aliases:
                raise CoordinateError(f"kernel '{k}': input_output_aliases: input {key!r} is aliased twice")
            want = tops[int(o)]
            if not is_shape_like(want):
                raise CoordinateError(f"kernel '{k}': input_output_aliases: out_shape[{o}] is not a single shape")
            got = _shape_of(leaf.array)
            if tuple(want.shape) != got.shape or np.dtype(want.dtype) != np.dtype(got.dtype):
                raise CoordinateError(f"kernel '{k}': input_output_aliases: input {key!r} "
                                      f"({np.dtype(got.dtype).name}{list(got.shape)}) cannot alias out_shape[{o}] "
                                      f"({np.dtype(want.dtype).name}{list(want.shape)})")
            results.append(got)
            aliases[leaf.operand] = len(results) - 1
            top_result[int(o)] = len(results) - 1

    alias_tree: list[Any] = []
    if alias_coords is not None:
        def alias_at(v: Any, where: Any) -> Any:
            arrays = [x for x in _leaves(v) if isinstance(x, In)]
            if not arrays:
                raise CoordinateError(f"kernel '{k}': input_output_aliases: {where!r} holds no array "
                                      f"({type(v).__name__})")
            rs = []
            for a in arrays:
                if a.operand in aliases:
                    raise CoordinateError(f"kernel '{k}': input_output_aliases: the array at {where!r} is aliased "
                                          f"twice")
                results.append(_shape_of(a.array))
                aliases[a.operand] = len(results) - 1
                rs.append(len(results) - 1)
            return rs[0] if len(rs) == 1 else tuple(rs)     # the fork unwraps a tuple holding one array

        def walk(s: Any) -> Any:
            if is_coordinate(s):
                return alias_at(_at(info, given, path_of(info, s, "input_output_aliases"), "input_output_aliases"), s)
            if isinstance(s, (list, tuple)):
                return tuple(walk(e) for e in s)
            raise CoordinateError(f"kernel '{k}': input_output_aliases: {s!r} is not a coordinate or a list of them")

        alias_tree = [walk(s) for s in ([alias_coords] if is_coordinate(alias_coords) else alias_coords)]

    def flat(r: Any) -> list[int]:
        return [x for e in r for x in flat(e)] if isinstance(r, tuple) else [r]

    if dict_form is not None:
        ordinals = [x for _, t in sorted(zip(out_params, pure_idx)) for x in flat(top_result[t])]
    else:
        ordinals = [x for t in range(len(tops)) for x in flat(top_result[t])]

    if fork_style:
        entries = [top_result[t] for _, t in sorted(zip(out_params, pure_idx))]
        entries += [top_result[o] for o in alias_ords] + alias_tree

        def assemble(outs: list[Any]) -> Any:
            ret = tuple(_build(r, outs) for r in entries)
            return ret[0] if len(ret) == 1 else ret
    else:
        flat = [top_result[t] for t in range(len(tops))]
        kind = type(out_shape) if isinstance(out_shape, (tuple, list)) and tree is None else None

        def assemble(outs: list[Any]) -> Any:
            leaves = [_build(r, outs) for r in flat]
            if tree is not None:
                return jax.tree_util.tree_unflatten(tree, leaves)
            if single:
                return leaves[0]
            if kind is not None:
                return kind(leaves)
            return tuple(leaves)

    return Plan(values=values, results=results, aliases=aliases, assemble=assemble, fork_style=fork_style,
                ordinals=ordinals)


def zeroed(info: ParamInfo, values: dict[str, Any], spec: Any, ordinals: Sequence[int],
           aliased: set[int]) -> list[int]:
    """Result indices to zero, from coordinates of output parameters or jax-triton's output ordinals
    (ordinals[i]: the result of out_shape's i-th leaf)."""
    n_outputs = len(ordinals)
    k = info.kernel
    if spec is None:
        return []
    # a sequence of coordinates (a tuple is a sequence here, as in the fork), or one name or index
    spec = [spec] if isinstance(spec, (str, int, np.integer)) and not isinstance(spec, bool) else list(spec)
    plain = [s for s in spec if isinstance(s, (int, np.integer)) and not isinstance(s, bool)]
    by_ordinal = bool(plain) and all(0 <= int(s) < n_outputs for s in plain)
    out: list[int] = []
    for s in spec:
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool) and by_ordinal:
            # jax-triton: an output aliased to an input is zeroed too (its buffer, before the launch)
            out.append(ordinals[int(s)])
            continue
        path = path_of(info, s, "zeroed_outputs")
        v = _at(info, values, path, "zeroed_outputs")
        leaves = _leaves(v)
        if any(isinstance(x, In) for x in leaves):
            raise CoordinateError(f"kernel '{k}': zeroed_outputs: {s!r} is an input (aliased buffers are not "
                                  f"zeroed: that would destroy the values they carry in); zero it before the call")
        outs = [x.result for x in leaves if isinstance(x, Out)]
        if not outs:
            raise CoordinateError(f"kernel '{k}': zeroed_outputs: {s!r} is not an output parameter")
        out.extend(outs)
    return sorted(set(out))
