# SPDX-License-Identifier: Apache-2.0
"""Kernel.signature: the empty signature of a kernel without parameters, pointers to pointers, and a signature
given for a kernel that has its own."""
from __future__ import annotations

import pytest

import trident


def test_zero_parameters(host_kernel):
    k = trident.Kernel(host_kernel("noparams_kernel"), name="noparams_kernel", signature="")
    assert k.signature == ""
    assert k.params == [] and k.launch_params == []
    again = trident.Kernel(k.bundle())
    assert again.signature == "" and again.name == "noparams_kernel"
    both = trident.Kernel.combine([k, again], signature="")
    assert both.signature == "" and len(both.targets) == 2


def test_pointers_to_pointers(undeclared_kernel):
    k = trident.Kernel(undeclared_kernel, name="undeclared_kernel", signature="pp:**fp32,q:*k*i8,n:i32")
    assert k.signature == "pp:**fp32,q:**i8,n:i32"
    assert [p.type for p in k.params] == ["**fp32", "**i8", "i32"]
    with pytest.raises(trident.TridentError, match=r"entry 0 'p:\*\*\*.*' is a pointer 1001 levels deep"):
        trident.Kernel(undeclared_kernel, name="undeclared_kernel", signature="p:" + "*" * 1001 + "fp32")


def test_given_signature_must_agree(host_kernel):
    own = trident.Kernel(host_kernel("add_kernel"), name="add_kernel", signature="x:*fp32,y:*fp32,out:*fp32,n:i32")
    data = own.bundle()
    with pytest.raises(trident.TridentError, match=r"the signature given \(i64,i64,i64,i32\) contradicts the "
                                                   r"kernel's own \(x:\*fp32,y:\*fp32,out:\*fp32,n:i32\)"):
        trident.Kernel(data, signature="i64,i64,i64,i32")
    k = trident.Kernel(data, signature="*fp32,*fp32,*fp32,u32")
    assert k.signature == "x:*fp32,y:*fp32,out:*fp32,n:u32"
