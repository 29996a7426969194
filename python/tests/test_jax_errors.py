# SPDX-License-Identifier: Apache-2.0
"""trident.jax's exceptions live in trident.jax.errors; the names callers import them by (trident.jax and the
module that raises each) stay the same classes."""
import importlib

import pytest

import trident.jax as jt
from trident.jax import errors

# each exception, and the module that raises it (where it was importable from before errors.py held it)
RAISED_BY = {
    "CompileError": "platforms", "InterpretError": "interpret", "KernelCallError": "errors", "BoundsError": "bounds",
    "CoordinateError": "coords", "OptionError": "routing", "AutotuneError": "autotune",
    "ShardingRuleError": "sharding", "UntrustedError": "cache",
}


def test_errors_holds_every_exception_of_trident_jax():
    defined = {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, BaseException)}
    assert defined == set(RAISED_BY)
    for name in defined:
        assert getattr(errors, name).__module__ == "trident.jax.errors", name


@pytest.mark.parametrize("name", sorted(RAISED_BY))
def test_old_import_paths_name_the_same_class(name):
    assert getattr(importlib.import_module(f"trident.jax.{RAISED_BY[name]}"), name) is getattr(errors, name)
    if name in jt.__all__:
        assert getattr(jt, name) is getattr(errors, name)


def test_compile_still_names_compile_error_and_the_subclasses_stay():
    from trident.jax import compile as jt_compile
    assert jt_compile.CompileError is errors.CompileError
    assert issubclass(errors.InterpretError, errors.CompileError)
    assert issubclass(errors.BoundsError, errors.KernelCallError)
