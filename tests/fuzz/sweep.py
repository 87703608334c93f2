"""Every rule at every operator version, on inputs of every rank from 0 to 5, with odd
attributes and extreme contents, through ``infer.infer_node`` in this process.

A rule must diagnose what it cannot infer (``RuleError``: ``shape-mismatch``, ``bad-attribute``,
``limit``, ...) and never raise: the engine reports an exception as ``rule-crash``, and
``infer_node`` itself is documented never to raise. Besides, what a rule claims must be within
what the engine can claim at all: a rank of at most ``MAX_RANK``, extents from 0 to
``INT64_MAX``. Numpy's runtime warnings are errors while it runs.

    python -m tests.fuzz.sweep            # the fast sweep CI runs (tests/test_rules_never_crash.py)
    python -m tests.fuzz.sweep --long     # more shapes and attribute values at every rank

Prints every finding with the call that reproduces it.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from onnx import AttributeProto, GraphProto, TensorProto, helper

import infer
import signatures
from infer.contract.registry import REGISTRY
from infer.contract.signature import ONNX_OPSET, Signature, normalize_type_str, signature
from infer.core import dims as D
from infer.core import types as T
from infer.core.dims.bounds import lower
from infer.core.limits import MAX_RANK
from infer.core.values import Known, Value

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
RANKS = range(6)
# Extents of each rank's inputs: small concrete ones, symbolic ones, all 1 (broadcasts, squeezes).
CONCRETE = ("2", "3", "4", "5", "6")
SYMBOLIC = ("N", "C", "H", "W", "D")
ONES = ("1",) * 5
# Contents of small inputs (shape tensors, scalars), one pattern over all inputs at once: Range
# with a denormal step, Slice and Pad with int64 extremes, NaN and infinities.
INT_CONTENTS = [(0,), (1,), (-1,), (INT64_MAX,), (INT64_MIN,), (2**62,), (0, 1, 2**62), (INT64_MAX, 0, -1),
                (3, -(2**62), 1), (1, INT64_MAX, INT64_MIN)]  # fmt: skip
FLOAT_CONTENTS = [(0.0,), (-0.0,), (math.nan,), (math.inf,), (-math.inf,), (5e-324,), (0.0, 1.0, 5e-324),
                  (0.0, 1e308, 1e-300), (-1e308, 1e308, 1.0), (1.0, 0.0, math.nan), (0.0, math.inf, 1.0),
                  (3.4e38,), (1e-45,)]  # fmt: skip
ODD_INTS = [0, 1, -1, 2, 3, -2, 1025, 2**31, INT64_MAX, INT64_MIN, 2**62]
ODD_FLOATS = [0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 1e308, -1e308, 3.4e38]
ODD_STRINGS = ["", "bogus", "NOTSET", "SAME_UPPER", "VALID", "\u00ff", "......", "...", "->", "...->...",
               "ab,bc->ac", "a->aa", "aa->a", "a,b", "...ab,...bc->...ac", "a...->", " , -> ", "a.b->a"]  # fmt: skip


@dataclass
class Call:
    """One ``infer_node`` call, and how to read it back."""

    op_type: str
    domain: str
    opset: int
    inputs: list[Any]
    attributes: dict[str, Any] = field(default_factory=dict)
    n_outputs: int | None = None
    what: str = ""

    def __str__(self) -> str:
        attrs = {k: _show_attr(v) for k, v in self.attributes.items()}
        extra = f", n_outputs={self.n_outputs}" if self.n_outputs is not None else ""
        return (
            f"infer.infer_node({self.op_type!r}, {self.inputs!r}, {attrs!r}, opset={self.opset}, "
            f"domain={self.domain!r}{extra})  # {self.what}"
        )

    def run(self) -> list[str]:
        """What is wrong with this call's outcome (an exception, a ``rule-crash``, a claim past the
        engine's limits); empty when nothing is."""
        try:
            out = infer.infer_node(
                self.op_type,
                self.inputs,
                self.attributes,
                opset=self.opset,
                domain=self.domain,
                n_outputs=self.n_outputs,
            )
        except Exception as e:
            return [f"raised {type(e).__name__}: {e}"]
        problems = [f"rule-crash: {d.message}" for d in out.diagnostics if d.code == "rule-crash"]
        for k, v in enumerate(out.values):
            problems += [f"output {k}: {p}" for p in _claim_problems(v.type)]
        return problems


def _show_attr(v: Any) -> Any:
    if isinstance(v, AttributeProto):
        return f"AttributeProto(type={v.type}, {str(v).strip().splitlines()[-1][:40]})"
    if isinstance(v, (GraphProto, TensorProto)):
        return f"<{type(v).__name__}>"
    return v


def _claim_problems(t: T.Type) -> list[str]:
    """Claims no rule may make: a rank past the limit, an extent outside 0 .. INT64_MAX."""
    if isinstance(t, (T.SequenceType, T.OptionalType)):
        return _claim_problems(t.elem)
    if not isinstance(t, (T.TensorType, T.SparseTensorType)) or t.shape is None:
        return []
    if len(t.shape) > MAX_RANK:
        return [f"rank {len(t.shape)} claimed, past the rank limit {MAX_RANK}"]
    out = []
    for axis, d in enumerate(t.shape):
        if d is None:
            continue
        low = d if isinstance(d, int) else lower(d)
        if isinstance(d, int) and d < 0:
            out.append(f"extent {d} at axis {axis}")
        elif low is not None and low > INT64_MAX:
            out.append(f"extent {D.to_str(d)} at axis {axis} exceeds int64")
    return out


# -- inputs ---------------------------------------------------------------------------------------

_PREFERRED = ("tensor(float)", "tensor(int64)", "tensor(int32)", "tensor(double)", "tensor(bool)")


def _representative(sig: Signature, type_str: str) -> str:
    """One type a formal admits (a float or int64 tensor when it may be one)."""
    allowed = [normalize_type_str(s) for s in sig.constraints.get(type_str, (type_str,))]
    for p in _PREFERRED:
        if p in allowed:
            return p
    tensors = [s for s in allowed if s.startswith("tensor(")]
    return (tensors or allowed)[0]


def _type_string(kind: str, dims: tuple[str, ...], contents: tuple[Any, ...] | None = None) -> Any:
    """An input of type ``kind`` (a schema type string) with ``dims``; a map as a ``Type``."""
    if kind.startswith("tensor(") or kind.startswith("sparse_tensor("):
        elem = kind[kind.index("(") + 1 : -1]
        text = f"{elem}[{','.join(dims)}]"
        if contents is not None:
            text += "={" + ",".join(_element(elem, c) for c in contents) + "}"
        return text
    for prefix in ("seq(", "optional("):
        if kind.startswith(prefix):
            inner = _type_string(kind[len(prefix) : -1], dims)
            return f"{prefix}{inner})" if isinstance(inner, str) else None
    from infer.contract.signature import parse_type_str

    return parse_type_str(kind)


def _element(elem: str, c: Any) -> str:
    if elem in ("float", "double", "float16", "bfloat16"):
        return repr(float(c))
    if elem == "bool":
        return "true" if c else "false"
    return str(int(c))


def _formals(sig: Signature, optional: bool) -> list[tuple[int, str]]:
    """(formal index, type string) per input position: every formal (a variadic one twice), or
    the required ones only."""
    out: list[tuple[int, str]] = []
    for i, f in enumerate(sig.inputs):
        if f.option == "optional" and not optional:
            out.append((i, ""))
        elif f.option == "variadic":
            out += [(i, f.type_str)] * max(2, f.min_arity)
        else:
            out.append((i, f.type_str))
    while out and not out[-1][1]:
        out.pop()
    return out


def _inputs(
    sig: Signature,
    ranks: list[int],
    dims: tuple[str, ...],
    optional: bool = True,
    contents: tuple[Any, ...] | None = None,
) -> list[Any]:
    """Inputs for ``sig``: position ``k`` of rank ``ranks[k % len(ranks)]``; ``contents``: the
    elements of every numeric input, drawn in turn from the pattern (vectors of one element)."""
    reps: dict[str, str] = {}
    out: list[Any] = []
    for k, (_, ts) in enumerate(_formals(sig, optional)):
        if not ts:
            out.append(None)
            continue
        kind = reps.setdefault(ts, _representative(sig, ts))
        rank = ranks[k % len(ranks)]
        filled = _fill(kind, contents[k % len(contents)]) if contents is not None and rank <= 1 else None
        shape = dims[:rank] if filled is None or rank == 0 else ("1",)
        out.append(_type_string(kind, shape, filled))
    return out


_FLOAT_NAMES = ("float", "double", "float16", "bfloat16")
_INT_RANGES = {"int64": (INT64_MIN, INT64_MAX), "int32": (-(2**31), 2**31 - 1)}


def _fill(kind: str, value: Any) -> tuple[Any, ...] | None:
    """``value`` as the one element of an input of type ``kind``, if it is one of that type."""
    elem = kind[7:-1] if kind.startswith("tensor(") else ""
    if elem in _FLOAT_NAMES:
        return (float(value),)
    low, high = _INT_RANGES.get(elem, (1, 0))
    return (value,) if isinstance(value, int) and low <= value <= high else None


# -- odd attributes -------------------------------------------------------------------------------


def _untyped(spec_type: int) -> AttributeProto:
    """An attribute whose value field is set but whose type field is UNDEFINED."""
    a = helper.make_attribute("x", _plain_value(spec_type)) if _plain_value(spec_type) is not None else None
    if a is None:
        a = AttributeProto(name="x", i=1)
    a.type = AttributeProto.UNDEFINED
    return a


def _plain_value(spec_type: int) -> Any:
    return {
        AttributeProto.INT: 1,
        AttributeProto.INTS: [1, 1],
        AttributeProto.FLOAT: 1.0,
        AttributeProto.FLOATS: [1.0],
        AttributeProto.STRING: "a",
        AttributeProto.STRINGS: ["a"],
        AttributeProto.TENSOR: helper.make_tensor("t", TensorProto.INT64, [1], [1]),
    }.get(spec_type)


def _odd_tensors() -> list[TensorProto]:
    return [
        helper.make_tensor("t", TensorProto.FLOAT, [0], []),
        helper.make_tensor("t", TensorProto.INT64, [], [INT64_MAX]),
        helper.make_tensor("t", TensorProto.INT64, [1], [INT64_MIN]),
        helper.make_tensor("t", TensorProto.DOUBLE, [], [5e-324]),
        helper.make_tensor("t", TensorProto.FLOAT, [2], [math.nan, math.inf]),
        helper.make_tensor("t", TensorProto.STRING, [1], [b"x"]),
        helper.make_tensor("t", TensorProto.BOOL, [1], [True]),
        helper.make_tensor("t", TensorProto.INT64, [2, 3], [0] * 6),
        TensorProto(name="t", data_type=TensorProto.FLOAT, dims=[3]),  # no data
        TensorProto(name="t", data_type=0, dims=[1]),
    ]


def _odd_graphs() -> list[GraphProto]:
    identity = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["b"])],
        "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)],
    )
    return [GraphProto(name="empty"), identity]


def odd_values(spec_type: int, rank: int, long: bool) -> list[Any]:
    """Odd values of an attribute of ``spec_type`` (a list of ``rank`` entries where a list)."""
    ints = ODD_INTS if long else [0, -1, INT64_MAX, INT64_MIN, 1025]
    floats = ODD_FLOATS if long else [math.nan, math.inf, 5e-324, 1e308, -0.0]
    out: list[Any] = [_untyped(spec_type), AttributeProto(name="x", type=AttributeProto.UNDEFINED)]
    if spec_type == AttributeProto.INT:
        out += ints
    elif spec_type == AttributeProto.INTS:
        out += [
            [],
            [0] * rank,
            [-1] * max(rank, 1),
            [INT64_MAX] * max(rank, 1),
            [INT64_MIN] * max(rank, 1),
            [2**62] * (2 * max(rank, 1)),
            list(range(rank + 2)),
            [1] * 1030,
        ]
        if long:
            out += [[v] * k for v in ints for k in (1, rank, 2 * rank) if k]
    elif spec_type == AttributeProto.FLOAT:
        out += floats
    elif spec_type == AttributeProto.FLOATS:
        out += [[], [math.nan] * max(rank, 1), [math.inf] * max(rank, 1), [5e-324] * 2, [1e308] * (2 * max(rank, 1))]
    elif spec_type == AttributeProto.STRING:
        out += ODD_STRINGS if long else ["", "bogus", "......", "->", "a,b", "aa->a"]
    elif spec_type == AttributeProto.STRINGS:
        out += [[], [""], ["bogus"] * max(rank, 1)]
    elif spec_type == AttributeProto.TENSOR:
        out += _odd_tensors()
    elif spec_type == AttributeProto.GRAPH:
        out += _odd_graphs()
    if spec_type != AttributeProto.STRING:
        out.append("wrong type")
    return out


# -- the sweep ------------------------------------------------------------------------------------


def versions() -> Iterator[tuple[str, str, Signature]]:
    """(domain, op_type, signature) of every operator version a registered rule covers."""
    signatures.load_all()
    for e in sorted(REGISTRY.entries(), key=lambda e: (e.domain, e.op_type, e.since)):
        if e.rule is None:
            continue
        later = [
            x.since for x in REGISTRY.entries() if (x.domain, x.op_type) == (e.domain, e.op_type) and x.since > e.since
        ]
        upper = min(later) if later else (ONNX_OPSET + 1 if e.domain == "" else e.since + 8)
        seen: set[int] = set()
        for v in range(e.since, upper):
            sig = signature(e.domain, e.op_type, v)
            if sig is not None and sig.since_version >= e.since and sig.since_version not in seen:
                seen.add(sig.since_version)
                yield e.domain, e.op_type, sig


def calls(long: bool = False) -> Iterator[Call]:
    """The sweep: per operator version, every input rank 0..5 (all inputs at once, the required
    ones only, and the first against the others at another rank), extreme contents of scalars
    and vectors, and odd values of every attribute. The long mode tries every shape at every
    rank, every content pattern, and every odd value at every rank; the fast one takes turns."""
    int_contents, float_contents = (INT_CONTENTS, FLOAT_CONTENTS) if long else (INT_CONTENTS[::2], FLOAT_CONTENTS[::2])
    for domain, op, sig in versions():
        opset = sig.since_version

        def call(
            inputs: list[Any],
            what: str,
            attrs: dict[str, Any] | None = None,
            n_out: int | None = None,
            op: str = op,
            domain: str = domain,
            opset: int = opset,
        ) -> Call:
            return Call(op, domain, opset, inputs, attrs or {}, n_out, what)

        variadic_out = bool(sig.outputs) and sig.outputs[-1].option == "variadic"
        for rank in RANKS:
            for dims in (CONCRETE, SYMBOLIC, ONES) if long else ((SYMBOLIC, CONCRETE)[rank % 2],):
                yield call(_inputs(sig, [rank], dims), f"rank {rank}")
                yield call(_inputs(sig, [rank], dims, optional=False), f"rank {rank}, required inputs only")
                for other in (0, 1, 2, 4) if long else ((rank + 3) % 6, 0 if rank else 1):
                    if other != rank:
                        yield call(_inputs(sig, [rank, other], dims), f"first input rank {rank}, others {other}")
                if variadic_out:
                    yield call(_inputs(sig, [rank], dims), f"rank {rank}, 3 outputs", n_out=3)
        for kind in (T.SequenceType, T.OptionalType):  # containers, their items tracked, where tensors go
            item = Value(T.tensor(TensorProto.INT64, (2,)), Known((2,), (3, 4)))
            held = Value(kind(item.type), Known((1,), (item,)))
            yield call([held] * len(_formals(sig, True)), f"every input a {kind.__name__} of tracked items")
        for pattern in int_contents + float_contents:
            for rank in (0, 1):
                yield call(_inputs(sig, [rank], CONCRETE, contents=pattern), f"contents {pattern} at rank {rank}")
        for name, spec in sig.attributes.items():
            for rank in RANKS if long else (0, 2, 4):
                base = _inputs(sig, [rank], SYMBOLIC if rank % 4 else CONCRETE)
                for k, value in enumerate(odd_values(spec.type, rank, long)):
                    if not long and k % 3 != rank // 2:
                        continue  # the fast sweep tries each value at one of the ranks
                    if isinstance(value, str) and value == "wrong type":
                        value = "s" if spec.type != AttributeProto.STRING else 1
                    yield call(base, f"attribute {name} odd at rank {rank}", {name: value})


def part_of(i: int, n: int) -> int:
    """The part, of ``n``, of the sweep's ``i``-th call: spread by a multiplicative hash of ``i``,
    so that no part is a fixed pattern of the calls (every other call would be the same kind of
    call at each rank)."""
    return ((i * 2654435761) & 0xFFFFFFFF) * n >> 32


def run(
    long: bool = False, limit: int | None = None, part: tuple[int, int] = (0, 1)
) -> tuple[int, dict[str, tuple[str, list[str]]]]:
    """(calls made, findings): per distinct problem, one call that shows it. ``part=(k, n)``
    makes the calls of part ``k`` of ``n``, about one in ``n`` of every rule's (``part_of``)."""
    made = 0
    findings: dict[str, tuple[str, list[str]]] = {}
    with warnings.catch_warnings():
        # numpy's overflow and invalid-value warnings too: a rule computes with infinities quietly,
        # and one that does not would fail (``rule-crash``) where warnings are errors.
        warnings.simplefilter("error", RuntimeWarning)
        k, n = part
        for i, c in enumerate(itertools.islice(calls(long), limit)):
            if part_of(i, n) != k:
                continue
            made += 1
            problems = c.run()
            if problems:
                key = f"{c.domain}:{c.op_type}: {problems[0][:90]}"
                findings.setdefault(key, (str(c), problems))
    return made, findings


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.sweep", description=__doc__.split("\n\n")[0])
    p.add_argument("--long", action="store_true", help="more shapes and attribute values at every rank")
    p.add_argument("--limit", type=int, default=None, help="stop after this many calls")
    args = p.parse_args(argv)
    start = time.monotonic()
    made, findings = run(args.long, args.limit)
    for key, (call, problems) in sorted(findings.items()):
        print(f"{key}\n    {call}\n    " + "\n    ".join(problems[:3]))
    print(f"{made} calls in {time.monotonic() - start:.0f} s; {len(findings)} distinct problems")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
