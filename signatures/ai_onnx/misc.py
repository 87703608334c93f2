"""Scans, EyeLike, Det, TfIdfVectorizer and the string operators.

StringNormalizer and StringSplit have data-dependent extents (how many elements are stopwords,
how many substrings the longest element splits into); they are computed where the strings are
known at inference time, limited to printable ASCII text, where every runtime agrees on what a
whitespace or a case change is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from infer.core.types import TensorType
from infer.core.values import MAX_KNOWN_ELEMENTS, Known, Value
from signatures.ai_onnx.random import output_elem
from signatures.kit import spans
from signatures.kit import valueops as V
from signatures.kit.helpers import STRICT, broadcast, elements, flag, norm_axis, same_dim
from signatures.kit.registry import example, rule


def _known(arr: np.ndarray) -> Known:
    return Known(tuple(int(s) for s in arr.shape), tuple(arr.reshape(-1).tolist()))


# -- CumSum, CumProd ------------------------------------------------------------------------------


def _scan(
    k: Known, axis: int, op: Callable[[Any, Any], Any], unit: int, exclusive: bool, reverse: bool
) -> Known | None:
    """Cumulative ``op`` along ``axis`` of known contents (``None`` where numpy cannot hold them)."""
    whole = V.as_array(k)
    if whole is None:
        return None
    arr = np.moveaxis(whole, axis, -1)
    out = np.empty(arr.shape, dtype=object)
    floats = any(isinstance(e, float) for e in k.elems)
    start = float(unit) if floats else unit
    for pos in np.ndindex(arr.shape[:-1]):
        row = list(arr[pos])[::-1] if reverse else list(arr[pos])
        acc, sums = start, []
        for e in row:
            if exclusive:
                sums.append(acc)
                acc = op(acc, e)
            else:
                acc = op(acc, e)
                sums.append(acc)
        out[pos] = sums[::-1] if reverse else sums
    return _known(np.moveaxis(out, -1, axis))


@rule("CumSum", since=11)
@rule("CumProd", since=26)
def cumulative(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    axis_shape = ctx.shape(1)
    if axis_shape is not None and len(axis_shape) > 1:
        raise RuleError("shape-mismatch", f"axis must be a scalar, has rank {len(axis_shape)}")
    # onnxruntime refuses exclusive or reverse other than 0 and 1 when it loads the node.
    exclusive, reverse = flag(ctx, "exclusive", 0, STRICT), flag(ctx, "reverse", 0, STRICT)
    axis = ctx.known_ints(1)
    if s is None:
        return [None]
    known = None
    if axis is not None and len(axis) == 1:
        a = norm_axis(ctx, axis[0], len(s))
        x = ctx.known(0)
        if x is not None and all(e is not None for e in x.elems):
            ops = V.ops_of(ctx)  # rounded at every step, as it runs
            op, unit = (ops.add, 0) if ctx.op_type == "CumSum" else (ops.mul, 1)
            known = _scan(x, a, op, unit, exclusive, reverse)
        elif ctx.op_type == "CumSum" and ctx.elem(0) in spans.INTS:
            span = spans.cumsum(ctx, spans.span_of(ctx.value(0)), s[a], bool(exclusive))
            return [Value(TensorType(None, s), None, span)]
    return [Value(TensorType(None, s), known)]


# -- EyeLike, Det ---------------------------------------------------------------------------------

_FLOATS = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16}
_INTS = {TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
         TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64}  # fmt: skip


@rule("EyeLike", since=9)
def eye_like(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    elem = output_elem(ctx, ctx.elem(0))
    if s is not None and len(s) != 2:
        raise RuleError("shape-mismatch", f"input must be 2-D, has rank {len(s)}")
    known = None
    rows, cols = s if s is not None else (None, None)
    if isinstance(rows, int) and isinstance(cols, int) and rows * cols <= MAX_KNOWN_ELEMENTS:
        eye = np.eye(rows, cols, k=int(ctx.attr("k", 0)), dtype=np.bool_)
        if elem in _FLOATS:
            known = _known(eye.astype(float).astype(object))
        elif elem in _INTS:
            known = _known(eye.astype(int).astype(object))
        elif elem == TensorProto.BOOL:
            known = _known(eye.astype(object))
    return [Value(TensorType(elem, s), known)]


@rule("Det", since=11)
def det(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [None]
    if len(s) < 2:
        raise RuleError("shape-mismatch", f"input must have rank >= 2, has rank {len(s)}")
    same_dim(ctx, s[-2], s[-1], "the matrix extents (a square matrix)")
    return [s[:-2]]


# -- TfIdfVectorizer ------------------------------------------------------------------------------


@rule("TfIdfVectorizer", since=9)
def tfidf(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    indexes = list(ctx.require("ngram_indexes"))
    if not indexes:
        raise RuleError("bad-attribute", "ngram_indexes is empty")
    width = max(indexes) + 1
    if s is None:
        return [None]
    if len(s) not in (1, 2):
        raise RuleError("shape-mismatch", f"input must be [C] or [N, C], has rank {len(s)}")
    return [(width,) if len(s) == 1 else (s[0], width)]


# -- strings --------------------------------------------------------------------------------------


def _plain(x: Any) -> bool:
    """Printable ASCII, the only whitespace a space: text whose splitting and case every runtime
    agrees on (onnxruntime splits on spaces alone, the reference evaluator on any whitespace)."""
    return isinstance(x, str) and all(" " <= c <= "~" for c in x)


def _concat(a: Any, b: Any) -> Any:
    return a + b if isinstance(a, str) and isinstance(b, str) else None


@rule("StringConcat", since=20)
def string_concat(ctx: RuleContext) -> list:
    shape = broadcast(ctx, ctx.shape(0), ctx.shape(1))
    return [Value(TensorType(None, shape), V.elementwise(_concat, ctx.known(0), ctx.known(1)))]


@rule("RegexFullMatch", since=20)
def regex_full_match(ctx: RuleContext) -> list:
    # Runtimes match with RE2, not Python's re: contents are not computed.
    return [ctx.shape(0)]


_CASE = {"NONE": lambda x: x, "LOWER": str.lower, "UPPER": str.upper}


def _normalized(ctx: RuleContext, k: Known | None) -> tuple[Dim, Known | None]:
    """Elements left after removing stopwords (at least 1) and their contents, where computable.

    The reference evaluator differs from the definition (and onnxruntime) in three ways: it
    removes stopwords from the space-separated words of an element, drops elements that end up
    (or start) empty, and without case sensitivity compares after the case change rather than
    case-insensitively. Only inputs on which all readings agree are computed: non-empty ASCII
    elements without spaces, and case-insensitive matches that come out the same both ways.
    """
    stopwords = list(ctx.attr("stopwords") or [])
    if k is None or not all(_plain(e) and e and " " not in e for e in k.elems):
        return None, None
    if not all(_plain(w) for w in stopwords):
        return None, None
    change = _CASE[ctx.attr("case_change_action", "NONE")]
    if ctx.attr("is_case_sensitive", 0):
        removed = [e in set(stopwords) for e in k.elems]
    else:
        removed = [e.lower() in {w.lower() for w in stopwords} for e in k.elems]
        if removed != [change(e) in {change(w) for w in stopwords} for e in k.elems]:
            return None, None
    kept = [change(e) for e, r in zip(k.elems, removed) if not r]
    if not kept:
        return 1, Known((1,), ("",))  # everything removed: one empty string remains
    return len(kept), Known((len(kept),), tuple(kept))


@rule("StringNormalizer", since=10)
def string_normalizer(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    action = ctx.attr("case_change_action", "NONE")
    if action not in _CASE:
        raise RuleError("bad-attribute", f"case_change_action {action!r} is not NONE, LOWER or UPPER")
    if s is None:
        return [None]
    if len(s) not in (1, 2) or (len(s) == 2 and ctx.equal(s[0], 1) is False):
        raise RuleError("shape-mismatch", f"input must be [C] or [1, C], is {[D.to_str(d) for d in s]}")
    count, known = _normalized(ctx, ctx.known(0))
    if count is None:
        if ctx.attr("stopwords"):
            ctx.because(f"how many elements of `{ctx.input_name(0)}` are stopwords", 0)
        else:
            # Even without stopwords the reference evaluator drops empty strings (onnxruntime
            # keeps them, as the definition says), so the extent depends on the data.
            ctx.because(f"how many elements of `{ctx.input_name(0)}` are empty strings", 0)
        return [s[:-1] + (None,)]
    shape = s[:-1] + (count,)
    if known is not None and all(isinstance(d, int) for d in shape):
        known = Known(tuple(shape), known.elems)  # type: ignore[arg-type]
    else:
        known = None
    return [Value(TensorType(None, shape), known)]


def _split_one(x: str, delimiter: str | None, maxsplit: int) -> list[str] | None:
    """The substrings of one element; ``None`` where runtimes disagree (an empty element)."""
    if delimiter:
        if x == "":
            return None  # onnxruntime gives no substring, the reference evaluator one empty one
        return x.split(delimiter, maxsplit)
    return x.split(None, maxsplit)


def _token(t: str, delimiter: str | None) -> str | None:
    """A substring's contents: on whitespace, the last one of a ``maxsplit``-limited split keeps
    its trailing whitespace in the reference evaluator but not in onnxruntime."""
    return t if delimiter or t == t.rstrip(" ") else None


def _split_known(ctx: RuleContext, k: Known) -> tuple[Dim, Known | None, Known] | None:
    """(largest substring count, Y contents, Z contents), or ``None`` if not computable."""
    delimiter = ctx.attr("delimiter") or None
    maxsplit = ctx.attr("maxsplit")
    if maxsplit is not None and maxsplit < 0:
        return None
    if not all(_plain(e) for e in k.elems) or (delimiter is not None and not _plain(delimiter)):
        return None
    parts = [_split_one(e, delimiter, -1 if maxsplit is None else maxsplit) for e in k.elems]
    counts = [None if p is None else len(p) for p in parts]
    widest = max((c for c in counts if c is not None), default=0)
    if None in counts and widest == 0:
        return None  # only empty elements: 0 substrings (onnxruntime) or 1 (reference)
    rows = [[""] * widest if p is None else p + [""] * (widest - len(p)) for p in parts]
    y = Known((*k.shape, widest), tuple(_token(t, delimiter) for row in rows for t in row))
    return widest, y if y.size <= MAX_KNOWN_ELEMENTS else None, Known(k.shape, tuple(counts))


@rule("StringSplit", since=20)
def string_split(ctx: RuleContext) -> list:
    s = ctx.shape(0)
    if s is None:
        return [None, None]
    k = ctx.known(0)
    got = _split_known(ctx, k) if k is not None else None
    if got is not None:
        widest, y, z = got
        return [Value(TensorType(None, (*s, widest)), y), Value(TensorType(None, s), z)]
    if elements(s) == 0:
        return [(*s, 0), s]
    ctx.because(f"the largest number of substrings an element of `{ctx.input_name(0)}` splits into", 0)
    return [(*s, None), s]


example("CumSum", ["float[N,C]", "int32[]"], ["float[N,C]"], opset=11)
example("CumSum", ["int64[3]={B,S,4}", "int64[]={0}"], ["int64[3]={B,B + S,B + S + 4}"], opset=14)
example("CumSum", ["int64[3]={1,2,3}", "int32[]={0}"], ["int64[3]={5,3,0}"], attrs={"exclusive": 1, "reverse": 1})
example("CumSum", ["float[2,2]={1.0,2.0,3.0,4.0}", "int64[]={-1}"], ["float[2,2]={1.0,3.0,3.0,7.0}"])
example("CumSum", ["float[N,C]", "int64[]={2}"], ["float[*]"], error="bad-attribute")
example("CumProd", ["float[N,C]", "int64[]"], ["float[N,C]"], opset=26)
example("CumProd", ["int64[3]={2,S,4}", "int64[]={0}"], ["int64[3]={1,2,2*S}"], attrs={"exclusive": 1})
example("EyeLike", ["float[N,M]"], ["float[N,M]"], opset=9)
example("EyeLike", ["float[2,3]"], ["int32[2,3]={1,0,0,0,1,0}"], attrs={"dtype": TensorProto.INT32}, opset=22)
example("EyeLike", ["int64[2,2]"], ["int64[2,2]={0,1,0,0}"], attrs={"k": 1})
example("EyeLike", ["float[N,M]"], ["unknown"], attrs={"dtype": TensorProto.STRING}, error="bad-attribute")
example("EyeLike", ["float[N]"], ["unknown"], error="shape-mismatch")
example("Det", ["float[B,N,N]"], ["float[B]"], opset=11)
example("Det", ["double[3,3]"], ["double[]"], opset=22)
example("Det", ["float[B,3,4]"], ["float[B]"], error="shape-mismatch")
example(
    "TfIdfVectorizer",
    ["int64[N,C]"],
    ["float[N,7]"],
    attrs={
        "mode": "TF",
        "ngram_indexes": [0, 1, 2, 3, 4, 5, 6],
        "ngram_counts": [0, 4],
        "max_skip_count": 0,
        "min_gram_length": 2,
        "max_gram_length": 2,
        "pool_int64s": [2, 3, 5, 4, 5, 6, 7, 8, 6, 7],
    },
)
example(
    "TfIdfVectorizer",
    ["string[C]"],
    ["float[3]"],
    attrs={
        "mode": "TF",
        "ngram_indexes": [2, 0, 1],
        "ngram_counts": [0],
        "max_skip_count": 0,
        "min_gram_length": 1,
        "max_gram_length": 1,
        "pool_strings": ["a", "b", "c"],
    },
)
example(
    "TfIdfVectorizer",
    ["int32[A,B,C]"],
    ["float[*]"],
    attrs={
        "mode": "TF",
        "ngram_indexes": [2, 0, 1],
        "ngram_counts": [0],
        "max_skip_count": 0,
        "min_gram_length": 1,
        "max_gram_length": 1,
        "pool_int64s": [1, 2, 3],
    },
    error="shape-mismatch",
)
example("StringConcat", ["string[N,1]", "string[M]"], ["string[N,M]"])
example("StringConcat", ["string[N,2]", "string[3]"], ["string[N,?]"], error="shape-mismatch")
example("RegexFullMatch", ["string[N,3]"], ["bool[N,3]"], attrs={"pattern": "a+"})
example("StringNormalizer", ["string[C]"], ["string[?]"], attrs={"case_change_action": "LOWER"})
example("StringNormalizer", ["string[C]"], ["string[*]"], attrs={"case_change_action": "lower"}, error="bad-attribute")
example("StringNormalizer", ["string[1,C]"], ["string[1,?]"], attrs={"stopwords": ["the"]})
example("StringNormalizer", ["string[0]"], ["string[?]"])
example("StringNormalizer", ["string[2,C]"], ["string[*]"], error="shape-mismatch")
example("StringSplit", ["string[N,2]"], ["string[N,2,?]", "int64[N,2]"], attrs={"delimiter": ","})
example("StringSplit", ["string[0]"], ["string[0,0]", "int64[0]"])
example("CumSum", ["int64[3]={1,2,3}", "int64[]={0}"], ["int64[*]"], attrs={"exclusive": 2}, error="bad-attribute")
