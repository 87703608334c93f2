"""Generation loops and their helpers: Sampling, WhisperBeamSearch, NGramRepeatBlock,
SpeculativePrefixCommit.

Sampling and WhisperBeamSearch run a decoder subgraph in a loop; their outputs are laid out by
their inputs' contents (``max_length``, ``num_beams``, ``num_return_sequences``): sequences are
padded to ``max_length`` whatever the step the search stops at. The vocabulary is the
``vocab_size`` attribute, else the one the vocabulary masks state, else the decoder's declared
logits width (which onnxruntime reads too). Sampling, WhisperBeamSearch and NGramRepeatBlock have
CPU kernels (tests/test_contrib_b_runtime.py runs them); SpeculativePrefixCommit has none.
"""

from __future__ import annotations

import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from infer.contract.context import RuleContext, RuleError
from infer.core import dims as D
from signatures.com_microsoft import F32, FLOAT, INT, INT32, MS, REQUIRED
from signatures.com_microsoft.generation import count, vocabulary
from signatures.kit.helpers import same_dim
from signatures.kit.operator import case, operator

GRAPH = AttributeProto.GRAPH
_SEARCH = {"decoder": (GRAPH, REQUIRED), "decoder_start_token_id": (INT, -1), "encoder": (GRAPH, None),
           "eos_token_id": (INT, REQUIRED), "init_decoder": (GRAPH, None), "no_repeat_ngram_size": (INT, 0),
           "pad_token_id": (INT, REQUIRED), "vocab_size": (INT, -1)}  # fmt: skip
_TOKENS = {
    f"{name}_token_id": (INT, None)
    for name in ("beginning_timestamp", "no_speech", "no_timestamps", "start_of_lm", "transcribe", "translate")
}

# A stand-in decoder: the rules read only its declared logits (the runtime tests run real ones).
_DECODER = helper.make_graph(
    [helper.make_node("Constant", [], ["logits"], value=numpy_helper.from_array(np.zeros((1, 1, 100), np.float32)))],
    "decoder",
    [],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1, 100])],
)
_ATTRS = {"eos_token_id": 2, "pad_token_id": 0, "vocab_size": 100, "decoder": _DECODER}
_GPT = ["int32[B,S]", "int32[1]={16}"]


@operator(
    "Sampling",
    "input_ids:I max_length:I min_length?:I repetition_penalty?:T vocab_mask?:I prefix_vocab_mask?:I "
    "attention_mask?:I presence_mask?:I seed?:I",
    "sequences:I filtered_logits?:T",
    domain=MS,
    types={"T": F32, "I": INT32},
    attrs={
        **_SEARCH,
        "custom": (INT, 0),
        "filter_value": (FLOAT, -1e20),
        "min_tokens_to_keep": (INT, 0),
        "model_type": (INT, 0),
        "presence_penalty": (FLOAT, 0.0),
        "temperature": (FLOAT, 1.0),
        "top_p": (FLOAT, 0.0),
    },
    examples=[
        case(_GPT, ["int32[B,16]", "float[B,100]"], attrs=_ATTRS),
        case(
            ["int32[B,S]", "int32[1]", "", "", "int32[V]"],
            ["int32[B,?]", "float[B,V]"],
            eos_token_id=2,
            pad_token_id=0,
            decoder=_DECODER,
        ),
        case(["int32[B,16]", "int32[1]={16}"], ["int32[*]"], attrs=_ATTRS, error="shape-mismatch"),
        case(["int32[B,S]", "int32[2]"], ["int32[*]"], attrs=_ATTRS, error="shape-mismatch"),
    ],
)
def sampling(ctx: RuleContext) -> list:
    """sequences (batch, max_length), filtered_logits (batch, vocabulary); max_length must
    exceed the prompt's length."""
    ids = ctx.shape(0)
    if ids is not None and len(ids) != 2:
        raise RuleError("shape-mismatch", f"input_ids must be 2-D, has rank {len(ids)}")
    b, s = ids if ids is not None else (None, None)
    length = count(ctx, 1, "max_length")
    if ctx.less(s, length) is False:
        raise RuleError("shape-mismatch", f"max_length {D.to_str(length)} must exceed the prompt length {D.to_str(s)}")
    vocab = vocabulary(ctx, ((4, 0), (5, 1), (7, 1)))
    return [(b, length), (b, vocab)][: ctx.n_outputs]


_W = ["float[B,80,3000]", "int32[1]={448}", "", "int32[1]={4}", "int32[1]={2}"]


@operator(
    "WhisperBeamSearch",
    "input_ids:F max_length:I min_length?:I num_beams:I num_return_sequences:I length_penalty?:T "
    "repetition_penalty?:T vocab_mask?:M prefix_vocab_mask?:M attention_mask?:I decoder_input_ids?:I "
    "logits_processor?:I cross_qk_layer_head?:I extra_decoding_ids?:I temperature?:T",
    "sequences:I sequences_scores?:T scores?:T cross_qk?:V non_speech_probs?:T",
    domain=MS,
    types={
        "T": ("tensor(float)", "tensor(float16)"),
        "F": ("tensor(float)", "tensor(int32)", "tensor(float16)"),
        "I": INT32,
        "M": INT32,
        "V": F32,
    },
    attrs={
        **_SEARCH,
        **_TOKENS,
        "decoder_output_cross_qk": (INT, None),
        "early_stopping": (INT, 0),
        "model_type": (INT, 2),
    },
    examples=[
        case([*_W, "float[1]"], ["int32[B,2,448]", "float[B,2]", "float[447,B,4,100]"], attrs=_ATTRS),
        case(_W[:3] + ["int32[1]={2}", "int32[1]={4}"], ["int32[*]"], attrs=_ATTRS, error="shape-mismatch"),
    ],
)
def whisper_beam_search(ctx: RuleContext) -> list:
    """sequences (batch, num_return_sequences, max_length), sequences_scores (batch,
    num_return_sequences), scores (max_length - the decoder's prompt length, batch, num_beams,
    vocabulary), cross_qk (batch, num_return_sequences, kept layer-heads, decoded length, frames),
    non_speech_probs (batch). The decoded length and the frames depend on the run."""
    x = ctx.shape(0)
    b = x[0] if x is not None and x else None
    length = count(ctx, 1, "max_length")
    beams, ret = count(ctx, 3, "num_beams"), count(ctx, 4, "num_return_sequences")
    if isinstance(beams, int) and isinstance(ret, int) and ret > beams:
        raise RuleError("shape-mismatch", f"num_return_sequences {ret} exceeds num_beams {beams}")
    vocab = vocabulary(ctx, ((7, 0), (8, 1)))
    heads = ctx.shape(12) if ctx.has(12) else None
    kept = heads[0] if heads is not None and len(heads) == 2 else None
    # The decoder starts from decoder_input_ids, else from the start token alone; a score is
    # kept for every step from there to max_length.
    prompt = ctx.shape(10) if ctx.has(10) else (None, 1)
    steps = D.sub(length, prompt[1]) if prompt is not None and len(prompt) == 2 else None
    ctx.because("cross_qk's decoded length and frames depend on the run")
    return [(b, ret, length), (b, ret), (steps, b, beams, vocab), (b, ret, kept, None, None), (b,)][: ctx.n_outputs]


@operator(
    "NGramRepeatBlock",
    "input_ids:Tid scores:T",
    "scores_out:T",
    domain=MS,
    types={"Tid": ("tensor(int64)",), "T": F32},
    attrs={"ngram_size": (INT, REQUIRED)},
    examples=[
        case(["int64[B,S]", "float[B,V]"], ["float[B,V]"], ngram_size=3),
        case(["int64[2,S]", "float[3,V]"], ["float[3,V]"], ngram_size=3, error="shape-mismatch"),
        case(["int64[B,S]", "float[B,V]"], ["float[*]"], ngram_size=0, error="bad-attribute"),
    ],
)
def ngram_repeat_block(ctx: RuleContext) -> list:
    """scores_out has the scores' shape (batch, vocabulary); input_ids is (batch, sequence)."""
    if ctx.require("ngram_size") <= 0:
        raise RuleError("bad-attribute", "ngram_size must be positive")
    ids, scores = ctx.shape(0), ctx.shape(1)
    for what, s in (("input_ids", ids), ("scores", scores)):
        if s is not None and len(s) != 2:
            raise RuleError("shape-mismatch", f"{what} must be 2-D, has rank {len(s)}")
    if ids is not None and scores is not None:
        same_dim(ctx, ids[0], scores[0], "the batch of input_ids and scores")
    return [scores]


_SPC = ["int64[B,8]", "int64[B,8]", "int32[4]", "int64[B,16]", "int64[B,2]", "int64[B,16]", "int64[2]"]


@operator(
    "SpeculativePrefixCommit",
    "next_tokens:I64 input_ids:I64 status:I32 ctl:I64 ctx_commit:I64 prefixes:I64 ptrs:I64",
    "head_c:I32 updated_ctl:I64 updated_ctx_commit:I64",
    domain=MS,
    types={"I64": ("tensor(int64)",), "I32": INT32},
    attrs={"head_rows": (INT, 8)},
    examples=[
        case(_SPC, ["int32[B]", "int64[B,16]", "int64[B,2]"]),
        case(
            ["int64[8]", "int64[8]", "int32[4]", "int64[16]", "int64[2]", "int64[16]", "int64[2]"],
            ["int32[1]", "int64[16]", "int64[2]"],
        ),
        case(_SPC, ["int32[*]", "int64[*]", "int64[*]"], head_rows=9, error="bad-attribute"),
    ],
)
def speculative_prefix_commit(ctx: RuleContext) -> list:
    """head_c (batch): batch is next_tokens' first extent, 1 for a 1-D next_tokens; the updated
    state has the state's shape. No CPU kernel: onnxruntime's schema inference says the same."""
    rows = ctx.attr("head_rows", 8)
    if not 3 <= rows <= 8:
        raise RuleError("bad-attribute", f"head_rows must be 3 to 8, is {rows}")
    nt = ctx.shape(0)
    if nt is not None and len(nt) not in (1, 2):
        raise RuleError("shape-mismatch", f"next_tokens must be 1-D or 2-D, has rank {len(nt)}")
    batch = None if nt is None else (1 if len(nt) == 1 else nt[0])
    return [(batch,), ctx.shape(3), ctx.shape(4)]
