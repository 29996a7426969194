# SPDX-License-Identifier: Apache-2.0
"""Calls that partition themselves: `sharding_rule=` on triton_call, kernel_call and @kernel calls.

A rule says, in the notation of Shardy's sharding rules (JAX's custom_partitioning), which dimension of each
array operand and result belongs to which factor: "i j, i j -> i j" for an elementwise kernel over matrices,
"m k, k n -> m n" for a matmul. Operands are the call's array arguments in the kernel's parameter order;
results are the call's results, flattened, in the order the call returns them. Factors named in
`need_replication_factors`, `reduction_factors` or `permutation_factors` (ShardingRule) are never split: an
operand sharded along one is resharded by XLA first. Every other factor stays split the way its operands
arrive, so under jax.jit each device launches the kernel once on its own shard and nothing is gathered.

What depends on the shard's shapes is computed from them: `local_args(*shapes)` receives the local
jax.ShapeDtypeStruct of each operand and returns {parameter name: per-shard value} (and optionally "grid");
a grid callable receives the metaparameters with those values. When a factor is split, a scalar argument
equal to its global extent and a fixed grid must come from local_args (return them unchanged to keep them):
trident refuses to guess, since a wrong guess would be a silent wrong result.

The mechanism is JAX's custom_partitioning under Shardy. The call is still triton_kernel_call_p (vmap and
grad refuse as before); its description (ShardedCall) expands, when lowered, into a custom_partitioning whose
partition callback launches the same API on the shards. jax.export cannot serialize custom_partitioning (its
partitioner is a callback into this process), so exporting such a call for several devices fails here with
the way that exports: the same kernel under jax.shard_map.
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Callable, Mapping, Optional, Sequence

import jax
import numpy as np
from jax.experimental.custom_partitioning import custom_partitioning
from jax.sharding import NamedSharding, PartitionSpec

from . import primitive as _prim
from .call import normalize_grid
from .errors import KernelCallError, ShardingRuleError

_FACTOR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclasses.dataclass(frozen=True)
class ShardingRule:
    """A sharding rule with the factors a kernel cannot split (JAX custom_partitioning's keyword names).

    rule: "i j, i j -> i j": per operand, then per result, one factor name per dimension (a rank-0 array has
        an empty entry). need_replication_factors: factors the kernel needs whole (a row a program reads in
        full). reduction_factors: factors the kernel sums over; trident keeps them whole too (no partial sums
        and all-reduce). permutation_factors: likewise kept whole."""
    rule: str
    need_replication_factors: tuple = ()
    reduction_factors: tuple = ()
    permutation_factors: tuple = ()

    def __post_init__(self) -> None:
        for field in ("need_replication_factors", "reduction_factors", "permutation_factors"):
            v = getattr(self, field)
            object.__setattr__(self, field, (v,) if isinstance(v, str) else tuple(v))


def as_rule(rule: Any, where: str) -> ShardingRule:
    if isinstance(rule, ShardingRule):
        return rule
    if isinstance(rule, str):
        return ShardingRule(rule)
    raise ShardingRuleError(f"{where}: sharding_rule must be a string such as \"i j, i j -> i j\" or a "
                            f"trident.jax.ShardingRule, not {type(rule).__name__}")


@dataclasses.dataclass(frozen=True)
class Parsed:
    operands: tuple      # per operand: a tuple of factor names, one per dimension
    results: tuple
    whole: frozenset     # factors never split


def parse(rule: ShardingRule, where: str) -> Parsed:
    text = rule.rule
    if text.count("->") != 1:
        raise ShardingRuleError(f"{where}: sharding_rule {text!r}: expected one '->' between operands and results")
    lhs, rhs = text.split("->")

    def side(s: str, what: str) -> tuple:
        out = []
        for i, entry in enumerate(s.split(",")):
            names = tuple(entry.split())
            for n in names:
                if n == "..." or "(" in n or ")" in n:
                    raise ShardingRuleError(f"{where}: sharding_rule {text!r}: {what} {i}: {n!r}: trident's rules "
                                            f"name one factor per dimension ('...' and compound factors are not "
                                            f"supported)")
                if not _FACTOR.match(n):
                    raise ShardingRuleError(f"{where}: sharding_rule {text!r}: {what} {i}: {n!r} is not a factor "
                                            f"name (letters, digits and '_', not starting with a digit)")
            out.append(names)
        return tuple(out)

    operands, results = side(lhs, "operand"), side(rhs, "result")
    known = {f for t in operands + results for f in t}
    whole = set()
    for field in ("need_replication_factors", "reduction_factors", "permutation_factors"):
        for f in getattr(rule, field):
            if f not in known:
                raise ShardingRuleError(f"{where}: sharding_rule {text!r}: {field} names {f!r}, an unknown factor "
                                        f"(the rule's factors: {', '.join(sorted(known))})")
            whole.add(f)
    return Parsed(operands, results, frozenset(whole))


def _sdy_rule(rule: ShardingRule) -> Any:
    """JAX's SdyShardingRule, the special factors in the order the rule introduces them (Shardy's verifier
    wants their indices sorted)."""
    from jax._src.custom_partitioning_sharding_rule import str_to_sdy_sharding_rule
    order = {f: i for i, f in enumerate(dict.fromkeys(rule.rule.replace("->", ",").replace(",", " ").split()))}

    def ordered(fs: tuple) -> tuple:
        return tuple(sorted(fs, key=order.__getitem__))
    return str_to_sdy_sharding_rule(rule.rule, need_replication_factors=ordered(rule.need_replication_factors),
                                    reduction_factors=ordered(rule.reduction_factors),
                                    permutation_factors=ordered(rule.permutation_factors))


class _Slot:
    """Where an array argument stood in the call's arguments (its operand number)."""
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


@dataclasses.dataclass(eq=False)
class Spec:
    """One rule-partitioned call: what the partitioner needs, compared by identity."""
    where: str                          # "trident.jax.triton_call of kernel 'k'", for messages
    rule: ShardingRule
    parsed: Parsed
    operand_names: tuple                # per operand, the parameter it came from
    operand_shapes: tuple               # global ShapeDtypeStructs
    result_shapes: tuple
    args: tuple                         # the call's arguments, arrays replaced by _Slot
    kwargs: dict
    positions: dict                     # parameter name -> index in args, for those given positionally
    scalars: dict                       # parameter name -> an integer the call was given
    fixed_grid: Optional[Any]           # a grid that is not a callable, else None
    local_args: Optional[Callable]
    run: Callable                       # run(args, kwargs, out_shapes or None[, grid]) -> the result pytree
    params: frozenset                   # the names local_args may return
    grid_of: Optional[Callable] = None  # grid_of(args, kwargs): the grid a grid callable gives those arguments

    def substitute(self, arrays: Sequence[Any], overrides: Mapping[str, Any]) -> tuple:
        return substitute(self.args, self.kwargs, self.positions, arrays, overrides)


def substitute(args: tuple, kwargs: dict, positions: Mapping[str, int], arrays: Sequence[Any],
               overrides: Mapping[str, Any]) -> tuple:
    """(args, kwargs) with each _Slot replaced by its array and the overridden parameters set."""
    def put(v: Any) -> Any:
        return arrays[v.index] if isinstance(v, _Slot) else v
    args = list(jax.tree_util.tree_map(put, args, is_leaf=lambda v: isinstance(v, _Slot)))
    kwargs = jax.tree_util.tree_map(put, kwargs, is_leaf=lambda v: isinstance(v, _Slot))
    for name, value in overrides.items():
        if name in positions:
            args[positions[name]] = value
        else:
            kwargs[name] = value
    return tuple(args), kwargs


_KEEP: Any = object()


def local_out_shape(out_shape: Any, outs: Sequence[Any]) -> Any:
    """The call's out_shape with its i-th shape replaced by the i-th result's local shape: the results a call
    returns begin with its out_shape's, in order (aliased inputs follow)."""
    from .coords import is_shape_like
    leaves, tree = jax.tree_util.tree_flatten(out_shape, is_leaf=is_shape_like)
    return jax.tree_util.tree_unflatten(tree, list(outs[:len(leaves)]))


def is_array(v: Any) -> bool:
    return isinstance(v, (jax.Array, np.ndarray, jax.core.Tracer))


def call(where: str, rule: Any, local_args: Optional[Callable], args: tuple, kwargs: dict,
         bind: Callable[[tuple, dict], Any], param_names: Sequence[str], grid: Any,
         run: Callable[[tuple, dict, Optional[list]], Any], *, has_side_effect: bool = False,
         name: str = "", grid_of: Optional[Callable] = None) -> Any:
    """A rule-partitioned call: the arrays of (args, kwargs) are the operands, in parameter order.

    bind(args, kwargs): the call's arguments bound to parameter names, in parameter order (an OrderedDict).
    run(args, kwargs, out_shapes[, grid]): the call without a rule; out_shapes, where given, are the results'
    local shapes in result order (local_out_shape puts them into the call's out_shape), grid a per-shard grid.
    grid_of(args, kwargs): where the grid is a callable, what it gives for those arguments (arrays as their
    shapes), so that a grid that ignores the shard (built from captured global sizes) is caught."""
    rule = as_rule(rule, where)
    parsed = parse(rule, where)
    if not jax.config.jax_use_shardy_partitioner:
        raise ShardingRuleError(f"{where}: sharding_rule needs JAX's Shardy partitioner "
                                f"(jax.config.update('jax_use_shardy_partitioner', True))")
    if local_args is not None and not callable(local_args):
        raise ShardingRuleError(f"{where}: local_args must be a callable of the operands' local shapes, not "
                                f"{type(local_args).__name__}")

    # arrays -> slots, numbered in flattening order, then renumbered in parameter order
    found: list[Any] = []

    def slot(v: Any) -> Any:
        if getattr(jax, "Ref", None) is not None and isinstance(v, jax.Ref):
            raise ShardingRuleError(f"{where}: jax.Ref arguments cannot be combined with sharding_rule")
        if type(v).__name__ == "TensorDescriptor":
            raise ShardingRuleError(f"{where}: TensorDescriptor arguments cannot be combined with sharding_rule "
                                    f"(their shapes and strides are the global array's)")
        if is_array(v):
            found.append(v)
            return _Slot(len(found) - 1)
        return v

    leaf = lambda v: is_array(v) or type(v).__name__ == "TensorDescriptor"  # noqa: E731
    s_args = tuple(jax.tree_util.tree_map(slot, list(args), is_leaf=leaf))
    s_kwargs = jax.tree_util.tree_map(slot, dict(kwargs), is_leaf=leaf)
    bound = bind(s_args, s_kwargs)
    order: list[int] = []
    names: list[str] = []
    for pname, value in bound.items():
        for v in jax.tree_util.tree_leaves(value, is_leaf=lambda v: isinstance(v, _Slot)):
            if isinstance(v, _Slot):
                order.append(v.index)
                names.append(pname)
    if len(order) != len(found):
        raise ShardingRuleError(f"{where}: an array is given to a keyword that is not a parameter of the kernel: "
                                f"with sharding_rule, every array argument is an operand of the rule")
    renumber = {old: new for new, old in enumerate(order)}
    for s in jax.tree_util.tree_leaves((s_args, s_kwargs), is_leaf=lambda v: isinstance(v, _Slot)):
        if isinstance(s, _Slot):
            s.index = renumber[s.index]
    operands = [found[i] for i in order]
    op_shapes = tuple(jax.ShapeDtypeStruct(tuple(a.shape), a.dtype) for a in operands)

    # the rule against the operands
    if len(parsed.operands) != len(operands):
        raise ShardingRuleError(f"{where}: sharding_rule {rule.rule!r} has {len(parsed.operands)} operand(s); the "
                                f"call has {len(operands)} array argument(s) ({', '.join(names) or 'none'})")
    sizes: dict[str, tuple[int, str]] = {}

    def fit(factors: tuple, s: Any, what: str) -> None:
        """One array against its factors: its rank, and each factor's extent the same everywhere."""
        if len(factors) != len(s.shape):
            raise ShardingRuleError(f"{where}: sharding_rule {rule.rule!r}: {what} has rank {len(s.shape)} "
                                    f"(shape {s.shape}); the rule gives it {len(factors)} factor(s) "
                                    f"({' '.join(factors) or 'none'})")
        for f, d in zip(factors, s.shape):
            if f in sizes and sizes[f][0] != d:
                raise ShardingRuleError(f"{where}: sharding_rule {rule.rule!r}: factor {f!r} is {sizes[f][0]} in "
                                        f"{sizes[f][1]} but {d} in {what}")
            sizes.setdefault(f, (d, what))

    for i, (factors, s) in enumerate(zip(parsed.operands, op_shapes)):
        fit(factors, s, f"operand {i} '{names[i]}'")

    # the global results: the call traced abstractly
    s_positions = {p: i for i, p in enumerate(param_names[:len(args)])}

    def run_global(*arrays: Any) -> Any:
        a, kw = substitute(s_args, s_kwargs, {}, arrays, {})
        return run(a, kw, None)

    out = jax.eval_shape(run_global, *op_shapes)
    leaves, tree = jax.tree_util.tree_flatten(out)
    res_shapes = tuple(jax.ShapeDtypeStruct(tuple(o.shape), o.dtype) for o in leaves)
    if len(parsed.results) != len(res_shapes):
        raise ShardingRuleError(f"{where}: sharding_rule {rule.rule!r} has {len(parsed.results)} result(s); the "
                                f"call returns {len(res_shapes)}")
    for i, (factors, s) in enumerate(zip(parsed.results, res_shapes)):
        fit(factors, s, f"result {i}")

    scalars = {p: int(v) for p, v in bound.items()
               if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))}
    spec = Spec(where=where, rule=rule, parsed=parsed, operand_names=tuple(names), operand_shapes=op_shapes,
                result_shapes=res_shapes, args=s_args, kwargs=s_kwargs, positions=s_positions,
                scalars=scalars, fixed_grid=None if callable(grid) else grid, local_args=local_args, run=run,
                params=frozenset(param_names), grid_of=grid_of if callable(grid) else None)
    outs = _prim.bind(operands, ShardedCall(spec), name=name, has_side_effect=has_side_effect)
    return jax.tree_util.tree_unflatten(tree, list(outs))


@dataclasses.dataclass(frozen=True, eq=False)
class ShardedCall:
    """The description of a rule-partitioned call (primitive.Call), bound as triton_kernel_call_sharded_p."""
    spec: Spec
    partitioned = True

    @property
    def api(self) -> str:
        return self.spec.where

    @property
    def out_shapes(self) -> tuple:
        return self.spec.result_shapes

    def check_lowering(self, ctx: Any) -> None:
        """jax.export cannot serialize custom_partitioning's callback: say so, and what exports."""
        params = getattr(ctx.module_context, "lowering_parameters", None)
        axis = ctx.module_context.axis_context
        ndev = getattr(axis, "num_devices", None)
        if ndev is None:
            mesh = getattr(axis, "mesh", None)
            ndev = mesh.size if mesh is not None else 1
        if getattr(params, "for_export", False) and ndev > 1:
            raise NotImplementedError(
                f"{self.spec.where}: a call partitioned by sharding_rule cannot be exported for {ndev} devices: "
                f"jax.export cannot serialize JAX's custom_partitioning, whose partitioner runs as a callback in "
                f"this process. Export the same kernel under jax.shard_map instead (each shard launches it with "
                f"its local shapes); that exports and runs again on the same mesh.")

    def expand(self, platform: str, operands: Sequence[Any], has_side_effect: bool,
               cost_estimate: Optional[Mapping[str, int]]) -> list:
        del platform, has_side_effect, cost_estimate   # the calls inside carry their own
        return list(_partitioned(self.spec, *operands))


def _global(spec: Spec, *arrays: Any) -> list:
    a, kw = spec.substitute(arrays, {})
    return jax.tree_util.tree_leaves(spec.run(a, kw, None))


def _rule_of(spec: Spec, mesh: Any, value_types: Any, result_types: Any) -> Any:
    del mesh, value_types, result_types
    return _sdy_rule(spec.rule)


def _axes(entry: Any) -> tuple:
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def factor_axes(spec: Spec, mesh: Any, arg_shardings: Sequence[Any]) -> dict[str, tuple]:
    """Each splittable factor's mesh axes: as the first operand sharded along it has them, where its extent
    divides evenly and no other factor took those axes first."""
    taken: set = set()
    out: dict[str, tuple] = {}
    for factors, sharding, s in zip(spec.parsed.operands, arg_shardings, spec.operand_shapes):
        if not isinstance(sharding, NamedSharding):
            continue
        pspec = tuple(sharding.spec) + (None,) * (len(factors) - len(sharding.spec))
        for f, entry, d in zip(factors, pspec, s.shape):
            axes = _axes(entry)
            if not axes or f in out or f in spec.parsed.whole or taken & set(axes):
                continue
            ways = math.prod(mesh.shape[a] for a in axes)
            if ways > 1 and d % ways == 0:
                out[f] = axes
                taken |= set(axes)
    return out


def _sharding(mesh: Any, factors: tuple, axes: Mapping[str, tuple]) -> NamedSharding:
    entries = []
    for f in factors:
        a = axes.get(f, ())
        entries.append(None if not a else a[0] if len(a) == 1 else a)
    return NamedSharding(mesh, PartitionSpec(*entries))


def _partition(spec: Spec, mesh: Any, arg_shapes: Sequence[Any], result_shape: Any) -> tuple:
    del result_shape
    axes = factor_axes(spec, mesh, [getattr(s, "sharding", None) for s in arg_shapes])
    arg_shardings = tuple(_sharding(mesh, f, axes) for f in spec.parsed.operands)
    res_shardings = [_sharding(mesh, f, axes) for f in spec.parsed.results]
    ways = {f: math.prod(mesh.shape[a] for a in ax) for f, ax in axes.items()}
    local_results = [s.shard_shape(r.shape) for s, r in zip(res_shardings, spec.result_shapes)]

    def lower(*arrays: Any) -> list:
        shapes = [jax.ShapeDtypeStruct(tuple(a.shape), a.dtype) for a in arrays]
        overrides = local_values(spec, shapes, ways)
        grid = overrides.pop("grid", _KEEP)
        a, kw = spec.substitute(arrays, overrides)
        outs = [jax.ShapeDtypeStruct(shape, r.dtype) for shape, r in zip(local_results, spec.result_shapes)]
        res = spec.run(a, kw, outs) if grid is _KEEP else spec.run(a, kw, outs, grid)
        return jax.tree_util.tree_leaves(res)

    return mesh, lower, list(res_shardings), arg_shardings


def local_values(spec: Spec, shapes: Sequence[Any], ways: Mapping[str, int]) -> dict[str, Any]:
    """local_args' values for one shard, checked; the scalars and the grid a split factor makes ambiguous
    refused with the reason."""
    overrides: dict[str, Any] = {}
    if spec.local_args is not None:
        try:
            got = spec.local_args(*shapes)
        except Exception as e:
            raise ShardingRuleError(f"{spec.where}: local_args raised {type(e).__name__}: {e} (local shapes: "
                                    f"{', '.join(str(s.shape) for s in shapes)})") from e
        if not isinstance(got, Mapping):
            raise ShardingRuleError(f"{spec.where}: local_args returned {type(got).__name__}; expected a dict "
                                    f"{{parameter name: value}}")
        for k, v in got.items():
            if k == "grid":
                continue
            if k not in spec.params:
                raise ShardingRuleError(f"{spec.where}: local_args returned {k!r}, which is not a parameter of the "
                                        f"kernel (nor 'grid')")
            if k in spec.operand_names:
                raise ShardingRuleError(f"{spec.where}: local_args returned {k!r}, an array argument: the shard "
                                        f"itself is passed there")
        overrides = dict(got)
        if "grid" in overrides:
            overrides["grid"] = _check_grid(spec, overrides["grid"])
    if not ways:
        return overrides
    split = ", ".join(f"{f!r} {n} ways" for f, n in ways.items())
    for p, v in spec.scalars.items():
        if p in overrides:
            continue
        for f in ways:
            extent = _extent(spec, f)
            sizes = {extent} | {math.prod(s.shape) for s, fs in zip(spec.operand_shapes, spec.parsed.operands)
                                if f in fs}
            if v in sizes and v > 1:
                raise ShardingRuleError(
                    f"{spec.where}: scalar argument '{p}' = {v} is a global extent of factor {f!r}, which this "
                    f"call splits ({split}): give its per-shard value through local_args (return it unchanged "
                    f"if it does not depend on the shard)")
    if spec.fixed_grid is not None and "grid" not in overrides:
        raise ShardingRuleError(
            f"{spec.where}: the grid {spec.fixed_grid!r} is fixed, but this call splits {split}: give the grid "
            f"as a callable of the metaparameters or return 'grid' from local_args (unchanged if it does not "
            f"depend on the shard)")
    if spec.grid_of is not None and "grid" not in overrides:
        # a grid callable that gives the shard what it gives the whole call reads global sizes it captured
        try:
            whole = spec.grid_of(*spec.substitute(spec.operand_shapes, {}))
            shard = spec.grid_of(*spec.substitute(shapes, overrides))
        except Exception:   # it needs what only the lowering knows (an autotuner's config): the lowering checks it
            whole = shard = None
        if whole is not None and whole == shard:
            raise ShardingRuleError(
                f"{spec.where}: the grid callable gives {whole!r} for a shard as for the whole call, but this call "
                f"splits {split}: it may read global sizes it captured; make it use the metaparameters local_args "
                f"sets, or return 'grid' from local_args (unchanged if it does not depend on the shard)")
    return overrides


def _extent(spec: Spec, factor: str) -> int:
    for fs, s in zip(spec.parsed.operands + spec.parsed.results, spec.operand_shapes + spec.result_shapes):
        if factor in fs:
            return s.shape[fs.index(factor)]
    return 0


def _check_grid(spec: Spec, grid: Any) -> Any:
    """An int, a sequence of ints, or (an autotuned kernel_call's) a list of such sequences."""
    if isinstance(grid, list) and grid and all(isinstance(g, (tuple, list)) for g in grid):
        return [_check_grid(spec, g) for g in grid]
    try:
        normalize_grid(grid)   # the rule of every launch's grid
    except KernelCallError as e:
        raise ShardingRuleError(f"{spec.where}: local_args returned a bad grid: {e}") from None
    return grid


_partitioned = custom_partitioning(_global, static_argnums=(0,))
_partitioned.def_partition(partition=_partition, sharding_rule=_rule_of)
