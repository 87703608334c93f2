"""One record per operator version: its signature, its rule and its examples together.

``onnx.defs`` knows the standard domains only; an operator of another domain (a custom domain of
``signatures/custom``, onnxruntime's ``com.microsoft``) needs its signature (arity, type
constraints, attributes) declared before a rule can be found for it. ``operator`` declares all
three at once, the arity derived from the formals::

    @operator("Patchify", "image:T", "patches:T", domain="com.example", types={"T": FLOATS},
              attrs={"patch": (INT, REQUIRED)},
              examples=[case(["float[N,3,H,W]"], ["float[N,floor(H/16)*floor(W/16),768]"], patch=16)])
    def patchify(ctx): ...

    operator("ScaledGelu", "X:T", "Y:T", domain="com.example", types={"T": FLOATS},
             rule="X[*s] -> Y[*s]", examples=[case(["float[N,S]"], ["float[N,S]"])])

    operator("Opaque", "X:T", "Y:T", domain="com.example", types={"T": FLOATS},
             unsupported="its outputs are those of a payload the model does not describe",
             examples=[case(["float[N]"], ["float[*]"], error="unsupported")])

A rule function shared by several operators carries one record per operator (stacked
decorators), or a later record names it with ``rule=fn``; each version of an operator is a record
of its own (``since=``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from onnx import AttributeProto

from infer.contract.signature import AttrSpec, Formal, Signature, canonical_domain, declare
from signatures.kit import registry
from signatures.kit.registry import Example, RuleFn, RuleT, caller_module

INT, FLOAT, STRING = AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING
INTS, FLOATS, STRINGS = AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS
REQUIRED = object()  # an attribute default meaning "the node must give it"

_VARIADIC_MAX = 2147483647  # onnx's bound for "no limit"


def formals(spec: str) -> tuple[Formal, ...]:
    """``"input:T bias?:T inputs...:TV"``: ``?`` optional, ``...`` variadic (one or more), ``...?``
    variadic that may be empty, a ``~`` after either variadic of mixed types; a type that is no
    constraint's name is a literal such as ``tensor(int64)``."""
    out = []
    for item in spec.split():
        name, _, type_str = item.rpartition(":")
        if not name or not type_str:
            raise ValueError(f"formal {item!r} is not name:Type")
        mixed = name.endswith("~")
        base = name[:-1] if mixed else name
        if base.endswith("...?"):
            out.append(Formal(base[:-4], type_str, "variadic", 0, not mixed))
        elif base.endswith("..."):
            out.append(Formal(base[:-3], type_str, "variadic", 1, not mixed))
        elif mixed:
            raise ValueError(f"formal {item!r}: only a variadic formal has mixed types")
        elif name.endswith("?"):
            out.append(Formal(name[:-1], type_str, "optional"))
        else:
            out.append(Formal(name, type_str, "single"))
    return tuple(out)


def arity(spec: tuple[Formal, ...]) -> tuple[int, int]:
    """(min, max) count: up to the last required formal; unbounded when the last is variadic."""
    required = [i for i, f in enumerate(spec) if f.option != "optional"]
    low = required[-1] + 1 if required else 0
    if spec and spec[-1].option == "variadic":
        return low - 1 + spec[-1].min_arity, _VARIADIC_MAX
    return low, len(spec)


def declare_signature(
    name: str,
    inputs: str,
    outputs: str,
    types: Mapping[str, Sequence[str]] | None = None,
    attrs: Mapping[str, tuple[int, Any]] | None = None,
    domain: str = "",
    since: int = 1,
) -> Signature:
    """Declare one operator version's signature.

    ``inputs``/``outputs``: ``name:Type`` items (see ``formals``). ``attrs``: name -> (AttributeProto
    type, default), the default ``REQUIRED`` for a required attribute or ``None`` for none.
    """
    ins, outs = formals(inputs), formals(outputs)
    min_in, max_in = arity(ins)
    min_out, max_out = arity(outs)
    specs = {n: AttrSpec(n, t, d is REQUIRED, None if d is REQUIRED else d) for n, (t, d) in (attrs or {}).items()}
    return declare(
        Signature(
            domain=domain,
            name=name,
            since_version=since,
            inputs=ins,
            outputs=outs,
            constraints={k: tuple(v) for k, v in (types or {}).items()},
            attributes=specs,
            min_inputs=min_in,
            max_inputs=max_in,
            min_outputs=min_out,
            max_outputs=max_out,
        )
    )


@dataclass(frozen=True)
class Case:
    """One example of an operator's record (see ``registry.Example`` for what the strings say)."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...] = ()
    opset: int | None = None
    error: str | None = None


def case(
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    opset: int | None = None,
    error: str | None = None,
    attrs: Mapping[str, Any] | None = None,
    **attributes: Any,
) -> Case:
    """An example: input types in, expected output types out, the node's attributes as keywords
    (``attrs=`` holds those named like a parameter here: QLinearSoftmax's ``opset``)."""
    return Case(tuple(inputs), tuple(outputs), tuple({**(attrs or {}), **attributes}.items()), opset, error)


def operator(
    name: str,
    inputs: str,
    outputs: str,
    *,
    domain: str,
    types: Mapping[str, Sequence[str]] | None = None,
    attrs: Mapping[str, tuple[int, Any]] | None = None,
    since: int = 1,
    rule: str | Sequence[str] | RuleFn | None = None,
    unsupported: str | None = None,
    pure: bool = True,
    examples: Sequence[Case] = (),
) -> Callable[[RuleT], RuleT]:
    """Declare an operator version in one record: its signature (as ``declare_signature``), its
    rule and its examples (``case``, run by tests/test_rule_examples.py).

    The rule is a pattern of ``signatures.kit.dsl`` or a function (``rule=``), the function the
    result decorates (no ``rule=``), or none: ``unsupported=`` says why the outputs stay unknown.
    ``pure=False`` marks a rule whose result rests on more than the node and its inputs (see
    ``registry.rule``); a pattern is always pure.
    """
    where = f"{domain}:{name} since {since}"
    if not examples:
        raise ValueError(f"{where}: an operator's record needs at least one example")
    if rule is not None and unsupported is not None:
        raise ValueError(f"{where}: a record has a rule or a reason it is unsupported, not both")
    if not pure and (unsupported is not None or (rule is not None and not callable(rule))):
        raise ValueError(f"{where}: only a rule function can be impure")
    declare_signature(name, inputs, outputs, types, attrs, domain, since)
    module = caller_module()
    for c in examples:
        example = Example(name, c.inputs, c.outputs, c.attrs, c.opset, canonical_domain(domain), c.error, module)
        registry.EXAMPLES.append(example)

    def register(fn: RuleT) -> RuleT:
        return registry.rule(name, since=since, domain=domain, pure=pure)(fn)

    def complete(fn: RuleT) -> RuleT:
        raise TypeError(f"{where}: the record has its rule already; it decorates no function")

    if unsupported is not None:
        registry.unsupported(name, unsupported, since=since, domain=domain, module=module)
    elif callable(rule):
        register(rule)
    elif rule is not None:
        registry.shape_rule(name, rule, since=since, domain=domain, module=module)
    else:
        return register
    return complete
