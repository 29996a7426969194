# SPDX-License-Identifier: Apache-2.0
"""Static values in a primitive's parameters: JAX caches what it compiled for
an eager call by the parameters' hash and equality, so a call's static
description must compare by value, and by type too (1, 1.0 and True are equal
in Python but specialize differently in Triton). Values that cannot be hashed
compare by identity (the description holds them, so the identity stays
valid)."""
from __future__ import annotations

from typing import Any, Iterator, Mapping

import numpy as np


def freeze(v: Any) -> Any:
    """A hashable key of v that differs where Triton would see a difference."""
    if isinstance(v, (bool, int, float, complex, str, bytes, np.generic)) or v is None:
        return (type(v).__qualname__, v)
    if isinstance(v, (tuple, list)):
        return (type(v).__qualname__, tuple(freeze(e) for e in v))
    if isinstance(v, Mapping):
        return ("map", tuple(sorted(((repr(k), freeze(x)) for k, x in v.items()), key=lambda kv: kv[0])))
    if isinstance(v, (set, frozenset)):
        return ("set", frozenset(freeze(e) for e in v))
    try:
        hash(v)
    except TypeError:
        return ("id", type(v).__qualname__, id(v))
    return (type(v).__qualname__, v)


class FrozenMap(Mapping):
    """A read-only mapping, hashable by value (jax-triton's FrozenDict, for the `metaparams` parameter)."""

    __slots__ = ("_d", "_key")

    def __init__(self, items: Any = ()):
        self._d = dict(items)
        self._key = freeze(self._d)

    def __getitem__(self, k: Any) -> Any:
        return self._d[k]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, FrozenMap) and self._key == other._key

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"


class ByValue:
    """A base for static call descriptions: equal and hashed by `key()`, computed once."""

    _key_cache: Any = None

    def key(self) -> Any:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _k(self) -> Any:
        k = self.__dict__.get("_key_cache")
        if k is None:
            k = freeze(self.key())
            object.__setattr__(self, "_key_cache", k)
        return k

    def __hash__(self) -> int:
        return hash(self._k())

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self._k() == other._k()


def plain(v: Any) -> Any:
    """A NumPy or JAX scalar type as Python's own (Triton's binder specializes on Python's types)."""
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer) or (isinstance(v, int) and type(v) not in (int, bool)):
        return int(v)
    if isinstance(v, np.floating) or (isinstance(v, float) and type(v) is not float):
        return float(v)
    return v
