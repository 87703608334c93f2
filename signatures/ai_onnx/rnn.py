"""Recurrent layers: RNN, GRU and LSTM, every version.

``X`` is ``[seq, batch, input]`` (``layout`` 0, the only layout before opset 14) or
``[batch, seq, input]`` (``layout`` 1). The outputs are

- ``Y``: ``[seq, num_directions, batch, hidden]`` (layout 1: ``[batch, seq, num_directions, hidden]``);
- ``Y_h`` and LSTM's ``Y_c``: ``[num_directions, batch, hidden]`` (layout 1: ``[batch, num_directions,
  hidden]``).

``Y`` always spans the whole input sequence: ``sequence_lens`` only decides which steps are
zero-padded, never an extent. ``hidden_size`` is an optional attribute; where it is absent the
weights carry it (``R`` is ``[num_directions, gates*hidden, hidden]``). onnxruntime requires the
attribute and refuses layout 1; the reference evaluator reads the extent off ``R``. Both agree
on every valid node, and a node whose attribute contradicts its weights is reported.
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from signatures.kit.helpers import same_dim
from signatures.kit.registry import example, rule

# Gates per operator: the row blocks of W and R.
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
# GRU-1's schema spells its default direction "foward"; it means forward.
DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2, "foward": 1}


def _rank3(ctx: RuleContext, i: int, what: str) -> tuple[Dim, ...] | None:
    s = ctx.shape(i) if ctx.has(i) else None
    if s is not None and len(s) != 3:
        raise RuleError("shape-mismatch", f"{what} must have rank 3, has rank {len(s)}")
    return s


def _num_directions(ctx: RuleContext) -> int:
    direction = ctx.attr("direction", "forward")
    if direction not in DIRECTIONS:
        raise RuleError("bad-attribute", f"direction {direction!r} is not forward, reverse or bidirectional")
    return DIRECTIONS[direction]


def _layout(ctx: RuleContext) -> int:
    layout = ctx.attr("layout", 0) if ctx.version >= 14 else 0
    if layout not in (0, 1):
        raise RuleError("bad-attribute", f"layout {layout} is neither 0 nor 1")
    return layout


def _hidden(ctx: RuleContext, gates: int, w: tuple[Dim, ...] | None, r: tuple[Dim, ...] | None) -> Dim:
    """The hidden size: the attribute, checked against the weights, else read off them."""
    attr = ctx.attr("hidden_size")
    if attr is not None and attr <= 0:
        raise RuleError("bad-attribute", f"hidden_size {attr} is not positive")
    from_r = r[2] if r is not None else None
    rows = r[1] if r is not None else (w[1] if w is not None else None)
    from_rows = D.floordiv(rows, gates) if rows is not None else None
    if isinstance(rows, int) and rows % gates:
        raise RuleError("shape-mismatch", f"weights have {rows} rows, not a multiple of {gates} gates")
    hidden: Dim = attr
    for d, what in ((from_r, "hidden_size and R's last dim"), (from_rows, f"hidden_size and R's rows / {gates}")):
        if d is None:
            continue
        hidden = d if hidden is None else same_dim(ctx, hidden, d, what)
    return hidden


@rule(["RNN", "GRU", "LSTM"])
def recurrent(ctx: RuleContext) -> list:
    gates = GATES[ctx.op_type]
    ndir = _num_directions(ctx)
    layout = _layout(ctx)
    x = _rank3(ctx, 0, "X")
    w = _rank3(ctx, 1, "W")
    r = _rank3(ctx, 2, "R")
    for s, what in ((w, "W"), (r, "R")):
        if s is not None:
            same_dim(ctx, s[0], ndir, f"{what}'s dim 0 and num_directions")
    if w is not None and r is not None:
        same_dim(ctx, w[1], r[1], "the rows of W and R")
    hidden = _hidden(ctx, gates, w, r)
    seq = batch = None
    if x is not None:
        seq, batch = (x[0], x[1]) if layout == 0 else (x[1], x[0])
        if w is not None:
            same_dim(ctx, x[2], w[2], "X's input size and W's dim 2")
    batch = _batch_elsewhere(ctx, batch, layout)
    y: tuple[Dim, ...]
    y_h: tuple[Dim, ...]
    if layout == 0:
        y, y_h = (seq, ndir, batch, hidden), (ndir, batch, hidden)
    else:
        y, y_h = (batch, seq, ndir, hidden), (batch, ndir, hidden)
    return [y, y_h, y_h][: ctx.n_outputs]


def _batch_elsewhere(ctx: RuleContext, batch: Dim, layout: int) -> Dim:
    """The batch extent from ``sequence_lens`` or ``initial_h`` when X does not give it."""
    if batch is not None:
        return batch
    lens = ctx.shape(4) if ctx.has(4) else None
    if lens is not None and len(lens) == 1:
        return lens[0]
    h0 = ctx.shape(5) if ctx.has(5) else None
    if h0 is not None and len(h0) == 3:
        return h0[1] if layout == 0 else h0[0]
    return None


example(
    "RNN",
    ["float[S,B,8]", "float[1,16,8]", "float[1,16,16]"],
    ["float[S,1,B,16]", "float[1,B,16]"],
    attrs={"hidden_size": 16},
)
example(
    "RNN",
    ["float[S,B,8]", "float[2,16,8]", "float[2,16,16]"],
    ["float[S,2,B,16]", "float[2,B,16]"],
    attrs={"direction": "bidirectional"},
)
example(
    "RNN",
    ["float[B,S,8]", "float[1,16,8]", "float[1,16,16]"],
    ["float[B,S,1,16]", "float[B,1,16]"],
    attrs={"hidden_size": 16, "layout": 1},
    opset=14,
)
example(
    "RNN", ["float[S,B,8]", "float[1,16,8]", "float[1,16,16]"], ["float[S,1,B,16]"], attrs={"hidden_size": 16}, opset=1
)
example(
    "RNN", ["float[S,B,8]", "float[1,16,8]", "float[1,16,16]"], ["float[S,1,B,16]"], attrs={"hidden_size": 16}, opset=22
)
example(
    "GRU",
    ["float[S,B,8]", "float[1,48,8]", "float[1,48,16]"],
    ["float[S,1,B,16]", "float[1,B,16]"],
    attrs={"hidden_size": 16},
    opset=7,
)
example("GRU", ["float[S,B,8]", "float[1,48,8]", "float[1,48,16]"], ["float[S,1,B,16]", "float[1,B,16]"], opset=1)
example("GRU", ["float[S,B,8]", "float[1,48,8]", "float[1,48,16]"], ["float[S,1,B,16]", "float[1,B,16]"], opset=3)
example(
    "GRU",
    ["double[B,S,8]", "double[2,3*H,8]", "double[2,3*H,H]"],
    ["double[B,S,2,H]", "double[B,2,H]"],
    attrs={"layout": 1, "direction": "bidirectional"},
    opset=14,
)
example(
    "GRU",
    ["float[S,B,8]", "float[1,48,8]", "float[1,48,16]"],
    ["float[S,1,B,16]", "float[1,B,16]"],
    attrs={"direction": "reverse"},
    opset=22,
)
example(
    "LSTM",
    ["float[S,B,8]", "float[2,64,8]", "float[2,64,16]"],
    ["float[S,2,B,16]", "float[2,B,16]", "float[2,B,16]"],
    attrs={"hidden_size": 16, "direction": "bidirectional"},
    opset=7,
)
example(
    "LSTM",
    ["float[S,B,8]", "float[1,64,8]", "float[1,64,16]"],
    ["float[S,1,B,16]", "float[1,B,16]", "float[1,B,16]"],
    opset=1,
)
example(
    "LSTM",
    ["float[B,S,8]", "float[1,64,8]", "float[1,64,16]"],
    ["float[B,S,1,16]", "float[B,1,16]", "float[B,1,16]"],
    attrs={"layout": 1},
    opset=14,
)
example(
    "LSTM",
    ["float[*]", "float[1,64,8]", "float[1,64,16]", "", "int32[B]"],
    ["float[?,1,B,16]", "float[1,B,16]", "float[1,B,16]"],
    opset=22,
)
example(
    "LSTM",
    ["float[S,B,8]", "float[1,64,8]", "float[1,64,16]"],
    ["float[S,1,B,32]"],
    attrs={"hidden_size": 32},
    error="shape-mismatch",
)
example(
    "LSTM",
    ["float[S,B,8]", "float[1,64,8]", "float[1,64,16]"],
    ["float[*]"],
    attrs={"direction": "sideways"},
    error="bad-attribute",
)
example("RNN", ["float[S,B,8]", "float[2,16,8]", "float[2,16,16]"], ["float[S,1,B,16]"], error="shape-mismatch")
