# SPDX-License-Identifier: Apache-2.0
"""triton_kernel_call_p: a kernel call as a JAX primitive (jax-triton's design).

Its parameters are static: `call`, the call's description (a TritonCall from
triton_call, a PrebuiltCall from kernel_call; both compare by value, so that
JAX reuses what it compiled for an eager call made again), and what JAX and
jax-triton's users inspect: `metaparams` (the constexpr and other
non-argument keywords of a triton_call), `has_side_effect`, `name`,
`cost_estimate`, `vmap_method`. The operands are the call's arrays only;
scalars stay in the description and are compiled into the call.

Rules:
  * abstract evaluation: the results' shapes and dtypes, nothing compiled
    (jax.eval_shape and jax.make_jaxpr never compile a kernel);
  * dead-code elimination keeps the call whatever its results' use (a kernel
    may have side effects);
  * jax.grad and jax.vmap fail with jax-triton's guidance, except that
    vmap_method="sequential" runs the call once per batch element;
  * lowering, registered per platform (cuda, rocm, cpu): the description
    expands, for the platform being lowered, into the custom call (its kernels
    compiled there, for that platform's devices; on cpu a host image or
    Triton's interpreter) through mlir.lower_fun, so that what the expansion
    traces (jax.ffi.ffi_call, the values a hook fills an input with) is
    lowered like any JAX code.
"""
from __future__ import annotations

import functools
from typing import Any, Mapping, Optional, Protocol, Sequence

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax._src import dispatch
from jax._src.interpreters import partial_eval as pe
from jax.interpreters import ad, batching, mlir

from . import protocol as _protocol
from .values import FrozenMap

try:  # public in the JAX releases this supports; keep working if it moves
    _ShapedArray = jax.core.ShapedArray
except AttributeError:  # pragma: no cover
    from jax._src.core import ShapedArray as _ShapedArray

PLATFORMS = ("cuda", "rocm", "cpu")


class Call(Protocol):
    """What the primitive needs of a call's description."""
    api: str                    # the function the user called, for messages
    out_shapes: tuple           # the results (ShapeDtypeStructs)

    def expand(self, platform: str, operands: Sequence[Any], has_side_effect: bool,
               cost_estimate: Optional[Mapping[str, int]]) -> list: ...


triton_kernel_call_p = Primitive("triton_kernel_call")
# a call partitioned by a sharding rule (sharding.py): the same rules; its lowering needs the devices (JAX's
# custom_partitioning does), which JAX provides only to primitives that say so, so it is a primitive of its own
triton_kernel_call_sharded_p = Primitive("triton_kernel_call_sharded")
dispatch.prim_requires_devices_during_lowering.add(triton_kernel_call_sharded_p)
_PRIMITIVES = (triton_kernel_call_p, triton_kernel_call_sharded_p)
for _p in _PRIMITIVES:
    _p.multiple_results = True
    _p.def_impl(functools.partial(dispatch.apply_primitive, _p))


def bind(operands: Sequence[Any], call: Call, *, name: str = "", has_side_effect: bool = False,
         cost_estimate: Optional[Mapping[str, int]] = None, vmap_method: Optional[str] = None,
         metaparams: Optional[Mapping[str, Any]] = None) -> list:
    """The call's results, as a list in call.out_shapes order."""
    if vmap_method not in (None, "sequential"):
        raise ValueError(f"{call.api}: vmap_method must be None or 'sequential', not {vmap_method!r}")
    cost = None
    if cost_estimate:
        bad = [k for k, v in dict(cost_estimate).items() if not isinstance(k, str) or isinstance(v, bool)
               or not isinstance(v, int)]
        if bad:
            raise TypeError(f"{call.api}: cost_estimate {dict(cost_estimate)!r}: expected integer counts by name "
                            f"('flops', 'bytes_accessed')")
        cost = FrozenMap(cost_estimate)
    prim = triton_kernel_call_sharded_p if getattr(call, "partitioned", False) else triton_kernel_call_p
    return prim.bind(*operands, call=call, name=name, has_side_effect=bool(has_side_effect),
                                     cost_estimate=cost, vmap_method=vmap_method,
                                     metaparams=FrozenMap(metaparams or {}))


def _abstract_eval(*avals: Any, call: Call, **_: Any) -> list:
    del avals
    return [_ShapedArray(tuple(s.shape), s.dtype) for s in call.out_shapes]


def _dce(used_outputs: list[bool], *rest: Any) -> tuple[list[bool], Any]:
    """Never removed, and every operand stays used: the kernel may write memory or have other effects. The
    equation comes last: (used_outputs, eqn) up to jax 0.11, (used_outputs, live_inputs, eqn) from 0.12."""
    del used_outputs
    eqn = rest[-1]
    return [True] * len(eqn.invars), eqn




def _no_jvp(primals: Any, tangents: Any, *, call: Call, **_: Any) -> Any:
    del primals, tangents
    raise NotImplementedError(
        f"{call.api} does not support automatic differentiation. Use jax.custom_jvp or jax.custom_vjp to implement "
        f"a custom automatic differentiation rule for your kernel.")




def _batch(args: Sequence[Any], dims: Sequence[Any], *, call: Call, vmap_method: Optional[str],
           **params: Any) -> tuple[list, list]:
    if vmap_method != "sequential":
        raise NotImplementedError(
            f"{call.api} does not support batching with jax.vmap. Use jax.custom_batching.custom_vmap to implement a "
            f"custom batching rule for your kernel (or pass vmap_method='sequential' to launch it once per batch "
            f"element).")
    prim = triton_kernel_call_sharded_p if getattr(call, "partitioned", False) else triton_kernel_call_p
    moved = [a if d is None else jnp.moveaxis(a, d, 0) for a, d in zip(args, dims)]
    mapped = [i for i, d in enumerate(dims) if d is not None]   # None: not mapped

    def one(xs: Sequence[Any]) -> list:
        full = list(moved)
        for i, x in zip(mapped, xs):
            full[i] = x
        return prim.bind(*full, call=call, vmap_method=vmap_method, **params)

    outs = jax.lax.map(one, [moved[i] for i in mapped])
    return list(outs), [0] * len(outs)




def _lowering(platform: str, ctx: Any, *args: Any, call: Call, has_side_effect: bool,
              cost_estimate: Optional[Mapping[str, int]], **_: Any) -> Any:
    check = getattr(call, "check_lowering", None)   # a call that cannot be lowered in this context says why
    if check is not None:
        check(ctx)

    def expand(*operands: Any) -> list:
        return call.expand(platform, operands, has_side_effect, cost_estimate)
    params = getattr(ctx.module_context, "lowering_parameters", None)
    with _protocol.exporting(getattr(params, "for_export", False)):
        return mlir.lower_fun(expand, multiple_results=True)(ctx, *args)


for _p in _PRIMITIVES:
    _p.def_abstract_eval(_abstract_eval)
    pe.dce_rules[_p] = _dce
    ad.primitive_jvps[_p] = _no_jvp
    batching.primitive_batchers[_p] = _batch
    for _platform in PLATFORMS:
        mlir.register_lowering(_p, functools.partial(_lowering, _platform), platform=_platform)
