"""Text operators: Tokenizer, WordConvEmbedding.

Tokenizer splits each string of a [C] or [N, C] tensor into tokens along a new last axis as long
as the most tokens any string gives (plus the two markers with ``mark``): that length depends on
the strings. WordConvEmbedding embeds each word of a (words, characters) tensor of character ids
with a convolution over its characters. Both have CPU kernels (tests/test_contrib_b_runtime.py).
"""

from __future__ import annotations

from infer.contract.context import RuleContext, RuleError
from signatures.com_microsoft import F32, INT, INT32, MS, REQUIRED, STRING, STRINGS
from signatures.kit.helpers import NONZERO, flag, same_dim
from signatures.kit.operator import case, operator

_TOK = {"mark": 0, "pad_value": "#", "mincharnum": 1, "separators": [" "]}


@operator(
    "Tokenizer",
    "X:T",
    "Y:T",
    domain=MS,
    types={"T": ("tensor(string)",)},
    attrs={
        "mark": (INT, REQUIRED),
        "mincharnum": (INT, REQUIRED),
        "pad_value": (STRING, REQUIRED),
        "separators": (STRINGS, None),
        "tokenexp": (STRING, None),
    },
    examples=[
        case(["string[N,C]"], ["string[N,C,?]"], attrs=_TOK),
        case(["string[2,0]"], ["string[2,0]"], attrs={**_TOK, "mark": 1}),
        case(["string[N,C,3]"], ["string[*]"], attrs=_TOK, error="shape-mismatch"),
        case(["string[C]"], ["string[*]"], mark=0, pad_value="#", mincharnum=1, error="bad-attribute"),
    ],
)
def tokenizer(ctx: RuleContext) -> list:
    """[C] -> [C, D], [N, C] -> [N, C, D], D the most tokens of a string (with two markers when
    ``mark``, none at all when no string has a token); an empty C gives the input's shape."""
    if ctx.attr("separators") is None and ctx.attr("tokenexp") is None:
        raise RuleError("bad-attribute", "Tokenizer needs separators or tokenexp")
    if ctx.require("mincharnum") <= 0:
        raise RuleError("bad-attribute", "mincharnum must be positive")
    flag(ctx, "mark", 0, NONZERO)
    x = ctx.shape(0)
    if x is None:
        return [None]
    if len(x) not in (1, 2):
        raise RuleError("shape-mismatch", f"the input must be [C] or [N, C], has rank {len(x)}")
    if x[-1] == 0:
        return [x]
    if (ctx.lower_bound(x[-1]) or 0) < 1:
        ctx.because("an empty input keeps its rank, any other gains the token axis")
        return [None]
    ctx.because("the number of tokens depends on the strings")
    return [x + (None,)]


_WCE = ["float[4,1,2,3]", "float[4]", "float[10,3]"]


@operator(
    "WordConvEmbedding",
    "Sequence:T W:T1 B:T1 C:T1",
    "Y:T1",
    domain=MS,
    types={"T": INT32, "T1": F32},
    attrs={"char_embedding_size": (INT, None), "conv_window_size": (INT, None), "embedding_size": (INT, None)},
    examples=[
        case(["int32[W,L]", *_WCE], ["float[W,4]"]),
        case(["int32[W,L]", "float[E,1,K,D]", "float[E]", "float[V,D]"], ["float[W,E]"], embedding_size=-1),
        case(["int32[W,L]", *_WCE], ["float[W,4]"], embedding_size=5, error="shape-mismatch"),
        case(["int32[W,1]", *_WCE], ["float[*]"], error="shape-mismatch"),
        case(["int32[W]", *_WCE], ["float[*]"], error="shape-mismatch"),
    ],
)
def word_conv_embedding(ctx: RuleContext) -> list:
    """Sequence (words, characters, ...) and W (embedding, 1, window, char_embedding):
    (words, embedding). The attributes, the bias (embedding), the character table C
    (vocabulary, char_embedding) and a window no wider than a word are checked against W."""
    seq, w, b, c = (ctx.shape(i) for i in range(4))
    if seq is not None and len(seq) < 2:
        raise RuleError("shape-mismatch", f"Sequence must have rank >= 2, has {len(seq)}")
    if w is not None and len(w) != 4:
        raise RuleError("shape-mismatch", f"W must be 4-D (embedding, 1, window, char embedding), has rank {len(w)}")
    emb = None if w is None else w[0]
    if w is not None:
        for attr, axis in (("embedding_size", 0), ("conv_window_size", 2), ("char_embedding_size", 3)):
            v = ctx.attr(attr)
            if v is not None and v != -1:
                same_dim(ctx, w[axis], v, f"W's extent {axis} and {attr}")
        if c is not None and len(c) == 2:
            same_dim(ctx, c[1], w[3], "C's char embedding and W's")
        if seq is not None and ctx.less(seq[1], w[2]) is True:
            raise RuleError("shape-mismatch", f"the window {w[2]} is wider than a word ({seq[1]} characters)")
    if b is not None:
        if len(b) != 1:
            raise RuleError("shape-mismatch", f"B must be 1-D, has rank {len(b)}")
        emb = b[0] if emb is None else same_dim(ctx, emb, b[0], "B's length and the embedding size")
    return [(None if seq is None else seq[0], emb)]
