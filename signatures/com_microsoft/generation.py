"""Generation loops over a decoder subgraph: BeamSearch and GreedySearch.

The outputs are laid out by input contents, not by the decoded text: sequences are padded to
``max_length`` whatever step the search stops at, for ``num_return_sequences`` of the beams. The
vocabulary of BeamSearch's scores is the ``vocab_size`` attribute, else the length a vocabulary
mask states, else the decoder's declared logits width (which onnxruntime's kernels read too). Both
run on onnxruntime's CPU kernels with a GPT-2 style decoder (tests/test_contrib_a_runtime.py).
Sampling and WhisperBeamSearch, the other loops, are in ``sampling``.
"""

from __future__ import annotations

from typing import Any

from onnx import AttributeProto, GraphProto

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from infer.core.dims import Dim
from signatures.com_microsoft import F32, INT, INT32, MS, REQUIRED
from signatures.kit.helpers import require_single, same_dim
from signatures.kit.operator import case, operator

GRAPH = AttributeProto.GRAPH
_LOOP = {"vocab_size": (INT, -1), "decoder": (GRAPH, REQUIRED), "init_decoder": (GRAPH, None), "encoder": (GRAPH, None),
         "model_type": (INT, 0), "no_repeat_ngram_size": (INT, 0), "decoder_start_token_id": (INT, -1),
         "pad_token_id": (INT, REQUIRED), "eos_token_id": (INT, REQUIRED)}  # fmt: skip

_GPT = 0  # model_type of decoder-only models, whose prompt is input_ids


def count(ctx: RuleContext, i: int, what: str) -> Dim:
    """The one positive value of input ``i`` (max_length, num_beams, ...), where its contents are
    known; ``None`` for an absent input."""
    if not ctx.has(i):
        return None
    require_single(ctx, i, what)
    dims = ctx.known_dims(i)
    if dims is None or len(dims) != 1:
        ctx.contents_unknown(i, what)
        return None
    if isinstance(dims[0], int) and dims[0] <= 0:
        raise RuleError("shape-mismatch", f"{what} must be positive, is {dims[0]}")
    return dims[0]


def _prompt(ctx: RuleContext) -> tuple[Dim, Dim]:
    """(batch, sequence_length) of a decoder-only model's input_ids; the batch alone otherwise."""
    ids = ctx.shape(0)
    gpt = ctx.attr("model_type", 0) == _GPT
    if ids is not None and gpt and len(ids) != 2:
        raise RuleError("shape-mismatch", f"input_ids must be (batch, sequence), has rank {len(ids)}")
    if ids is None or not ids:
        return None, None
    return ids[0], ids[1] if gpt else None


def _longer(ctx: RuleContext, length: Dim, prompt: Dim) -> None:
    if ctx.less(prompt, length) is False:
        raise RuleError("shape-mismatch", f"max_length {D.to_str(length)} must exceed the prompt's {D.to_str(prompt)}")


def vocabulary(ctx: RuleContext, masks: tuple[tuple[int, int], ...]) -> Dim:
    """vocab_size, else the length the given masks (input, axis) state, else the decoder's
    declared logits width (onnxruntime's kernels read that declaration too)."""
    size = ctx.attr("vocab_size", -1)
    vocab: Dim = size if isinstance(size, int) and size > 0 else None
    for i, axis in masks:
        s = ctx.shape(i) if ctx.has(i) else None
        if s is not None and len(s) > axis:
            vocab = s[axis] if vocab is None else same_dim(ctx, vocab, s[axis], f"the vocabulary of input {i}")
    return vocab if vocab is not None else _declared_logits_width(ctx.attr("decoder"))


def _declared_logits_width(graph: Any) -> Dim:
    """The last extent the decoder declares for its first output (its logits), if an integer."""
    if not isinstance(graph, GraphProto) or not graph.output:
        return None
    t = graph.output[0].type.tensor_type
    dims = t.shape.dim if t.HasField("shape") else []
    return dims[-1].dim_value if dims and dims[-1].HasField("dim_value") else None


_STAND_IN = GraphProto(name="decoder")  # the rules read only the declared logits of a real decoder
_ATTRS = {"eos_token_id": 2, "pad_token_id": 0, "vocab_size": 100, "decoder": _STAND_IN}
_BEAM = ["int32[B,S]", "int32[1]={16}", "", "int32[1]={4}", "int32[1]={2}", "float[1]", "float[1]"]


@operator(
    "BeamSearch",
    "input_ids:F max_length:I min_length?:I num_beams:I num_return_sequences:I length_penalty?:T "
    "repetition_penalty?:T vocab_mask?:M prefix_vocab_mask?:M attention_mask?:I decoder_input_ids?:I "
    "logits_processor?:I",
    "sequences:I sequences_scores?:T scores?:T",
    domain=MS,
    types={
        "T": ("tensor(float)", "tensor(float16)"),
        "F": ("tensor(float)", "tensor(int32)", "tensor(float16)"),
        "I": INT32,
        "M": INT32,
    },
    attrs={**_LOOP, "early_stopping": (INT, 0)},
    examples=[
        case(_BEAM, ["int32[B,2,16]", "float[B,2]", "float[16 - S,B,4,100]"], attrs=_ATTRS),
        case(
            ["int32[B,S]", "int32[1]", "", "int32[1]", "int32[1]", "float16[1]", "float16[1]", "int32[V]"],
            ["int32[B,?,?]", "float16[B,?]", "float16[?,B,?,V]"],
            eos_token_id=2,
            pad_token_id=0,
            decoder=_STAND_IN,
        ),
        case(_BEAM[:3] + ["int32[1]={2}", "int32[1]={4}"], ["int32[*]"], attrs=_ATTRS, error="shape-mismatch"),
        case(
            ["int32[B,16]", "int32[1]={16}", "", "int32[1]={4}", "int32[1]={2}"],
            ["int32[*]"],
            attrs=_ATTRS,
            error="shape-mismatch",
        ),
    ],
)
def beam_search(ctx: RuleContext) -> list:
    """sequences (batch, num_return_sequences, max_length), sequences_scores (batch,
    num_return_sequences), scores (max_length - prompt length, batch, num_beams, vocabulary) for a
    decoder-only model (the steps of an encoder-decoder model are not claimed)."""
    b, s = _prompt(ctx)
    length = count(ctx, 1, "max_length")
    beams, ret = count(ctx, 3, "num_beams"), count(ctx, 4, "num_return_sequences")
    if ctx.less(beams, ret) is True:
        raise RuleError("shape-mismatch", f"num_return_sequences {D.to_str(ret)} exceeds num_beams {D.to_str(beams)}")
    _longer(ctx, length, s)
    steps = None if length is None or s is None else D.sub(length, s)
    if steps is None:
        ctx.because("the number of steps is max_length less the prompt, for decoder-only models")
    vocab = vocabulary(ctx, ((7, 0), (8, 1)))
    return [(b, ret, length), (b, ret), (steps, b, beams, vocab)][: ctx.n_outputs]


@operator(
    "GreedySearch",
    "input_ids:I max_length:I min_length?:I repetition_penalty?:T vocab_mask?:I prefix_vocab_mask?:I attention_mask?:I",
    "sequences:I",
    domain=MS,
    types={"T": F32, "I": INT32},
    attrs=_LOOP,
    examples=[
        case(["int32[B,S]", "int32[1]={32}"], ["int32[B,32]"], attrs=_ATTRS),
        case(["int32[B,S]", "int32[]"], ["int32[B,?]"], attrs=_ATTRS),
        case(["int32[B,8]", "int32[1]={8}"], ["int32[*]"], attrs=_ATTRS, error="shape-mismatch"),
        case(["int32[B,S]", "int32[2]"], ["int32[*]"], attrs=_ATTRS, error="shape-mismatch"),
    ],
)
def greedy_search(ctx: RuleContext) -> list:
    """sequences (batch, max_length); max_length must exceed the prompt's length."""
    b, s = _prompt(ctx)
    length = count(ctx, 1, "max_length")
    _longer(ctx, length, s)
    return [(b, length)]
