"""Encoders and maps: CastMap, CategoryMapper, DictVectorizer, LabelEncoder, ZipMap.

Each of these decides its output element type from an attribute or from the other element type
of a string/integer pair, so the rules return full types.
"""

from __future__ import annotations

from onnx import TensorProto

from infer.contract.context import RuleContext, RuleError
from infer.core.types import MapType, SequenceType, TensorType
from signatures.ai_onnx_ml.common import ML, attr_len, positive, tensor_elem
from signatures.kit.registry import example, rule

_STRING, _INT64, _FLOAT = TensorProto.STRING, TensorProto.INT64, TensorProto.FLOAT

# -- CategoryMapper, LabelEncoder ----------------------------------------------------------------

_SWAP: dict[int | None, int] = {_STRING: _INT64, _INT64: _STRING}  # (looked up with an unknown elem too)


@rule("CategoryMapper", domain=ML)
def category_mapper(ctx: RuleContext) -> list:
    """Strings to integers or integers to strings, element by element."""
    # The map is two sequences of one length (onnxruntime refuses a node without both).
    n_int, n_str = attr_len(ctx, "cats_int64s"), attr_len(ctx, "cats_strings")
    if not ctx.has_attr("cats_int64s") or not ctx.has_attr("cats_strings") or n_int != n_str:
        raise RuleError(
            "bad-attribute",
            f"cats_int64s ({n_int} entries) and cats_strings ({n_str}) must both be given, with the same length",
        )
    return [TensorType(_SWAP.get(ctx.elem(0)), ctx.shape(0))]


_VALUES = {"values_strings": _STRING, "values_int64s": _INT64, "values_floats": _FLOAT}


@rule("LabelEncoder", domain=ML)
def label_encoder(ctx: RuleContext) -> list:
    """Maps each element; the output type is the type of the ``values_*`` attribute (version 2 on).

    Version 1 maps strings to integers and integers to strings through ``classes_strings``.
    """
    shape = ctx.shape(0)
    if ctx.version < 2:
        return [TensorType(_SWAP.get(ctx.elem(0)), shape)]
    given = [name for name in (*_VALUES, "values_tensor") if ctx.has_attr(name)]
    if len(given) > 1:
        raise RuleError("bad-attribute", f"LabelEncoder has more than one values attribute: {given}")
    if not given:
        ctx.because("LabelEncoder has no values attribute")
        return [TensorType(None, shape)]
    name = given[0]
    elem = tensor_elem(ctx.attr(name)) if name == "values_tensor" else _VALUES[name]
    if ctx.version >= 4:
        _label_encoder_4_checks(ctx, name, elem)
    return [TensorType(elem, shape)]


def _label_encoder_4_checks(ctx: RuleContext, values: str, elem: int | None) -> None:
    """LabelEncoder-4: keys and values of one length; ``default_tensor`` one value of the values' type."""
    keys = [k for k in ("keys_strings", "keys_int64s", "keys_floats", "keys_tensor") if ctx.has_attr(k)]
    if len(keys) == 1 and attr_len(ctx, keys[0]) != attr_len(ctx, values):
        raise RuleError(
            "bad-attribute",
            f"{keys[0]} has {attr_len(ctx, keys[0])} entries and {values} "
            f"{attr_len(ctx, values)}: they must have the same length",
        )
    if not ctx.has_attr("default_tensor"):
        return
    default = tensor_elem(ctx.attr("default_tensor"))
    if default is not None and elem is not None and default != elem:
        names = f"{TensorProto.DataType.Name(default)} against {TensorProto.DataType.Name(elem)}"
        raise RuleError("bad-attribute", f"default_tensor's element type must match the values' ({names})")
    if attr_len(ctx, "default_tensor") != 1:
        # One default value; onnxruntime refuses anything but a singleton.
        raise RuleError("bad-attribute", "default_tensor must hold exactly one value")


# -- maps -------------------------------------------------------------------------------------------

_CAST_TO = {"TO_FLOAT": _FLOAT, "TO_STRING": _STRING, "TO_INT64": _INT64}


@rule("CastMap", domain=ML)
def cast_map(ctx: RuleContext) -> list:
    """A map to a ``[1, n]`` tensor ordered by key (only onnxruntime implements it).

    ``n`` is the map's size (``DENSE``, not part of the map's type) or ``max_map`` (``SPARSE``).
    """
    cast_to = ctx.attr("cast_to", "TO_FLOAT")
    if cast_to not in _CAST_TO:
        raise RuleError("bad-attribute", f"CastMap cast_to {cast_to!r} is not one of {sorted(_CAST_TO)}")
    form = ctx.attr("map_form", "DENSE")
    if form == "SPARSE":
        width = positive(int(ctx.attr("max_map", 1)))
    elif form == "DENSE":
        width = None
        ctx.because("CastMap's DENSE output is as long as the map, whose size its type does not give", 0)
    else:
        raise RuleError("bad-attribute", f"CastMap map_form {form!r} is neither DENSE nor SPARSE")
    return [TensorType(_CAST_TO[cast_to], (1, width))]


@rule("DictVectorizer", domain=ML)
def dict_vectorizer(ctx: RuleContext) -> list:
    """A map to a vector of the map's value type, one entry per vocabulary word.

    The definition and onnx.reference give ``[V]``, onnxruntime ``[1, V]``: the rank stays unknown.
    """
    t = ctx.type(0)
    elem = t.value.elem if isinstance(t, MapType) and isinstance(t.value, TensorType) else None
    if attr_len(ctx, "int64_vocabulary") and attr_len(ctx, "string_vocabulary"):
        raise RuleError("bad-attribute", "DictVectorizer has both int64_vocabulary and string_vocabulary")
    ctx.because("DictVectorizer gives [V] by its definition but [1, V] in onnxruntime", 0)
    return [TensorType(elem, None)]


@rule("ZipMap", domain=ML)
def zip_map(ctx: RuleContext) -> list:
    """Each row of ``[N, C]`` (a ``[C]`` input is one row) becomes a map from the C labels."""
    n_str, n_int = attr_len(ctx, "classlabels_strings"), attr_len(ctx, "classlabels_int64s")
    if bool(n_str) == bool(n_int):
        raise RuleError("bad-attribute", "ZipMap needs exactly one of classlabels_strings and classlabels_int64s")
    s = ctx.shape(0)
    if s is not None:
        if len(s) not in (1, 2):
            raise RuleError("shape-mismatch", f"ZipMap takes [N, C] or [C], got rank {len(s)}")
        n = n_str or n_int
        if isinstance(s[-1], int) and s[-1] != n:
            raise RuleError("shape-mismatch", f"ZipMap has {n} labels for {s[-1]} columns")
    key = _STRING if n_str else _INT64
    return [SequenceType(MapType(key, TensorType(_FLOAT, ())))]


# -- examples (maps and sequences have no type-string form: tests/test_ml_models.py covers them) --

example("CategoryMapper", ["string[N,3]"], ["int64[N,3]"], {"cats_strings": ["a"], "cats_int64s": [1]}, domain=ML)
example("CategoryMapper", ["int64[N]"], ["string[N]"], {"cats_strings": ["a"], "cats_int64s": [1]}, domain=ML)
example(
    "CategoryMapper",
    ["int64[N]"],
    ["unknown"],
    {"cats_strings": ["a"], "cats_int64s": [1, 2]},
    domain=ML,
    error="bad-attribute",
)
example("CategoryMapper", ["int64[N]"], ["unknown"], {"cats_int64s": [1, 2]}, domain=ML, error="bad-attribute")
example("LabelEncoder", ["string[N]"], ["int64[N]"], {"classes_strings": ["a", "b"]}, opset=1, domain=ML)
example("LabelEncoder", ["int64[N,2]"], ["string[N,2]"], {"classes_strings": ["a", "b"]}, opset=1, domain=ML)
example(
    "LabelEncoder", ["string[N]"], ["float[N]"], {"keys_strings": ["a"], "values_floats": [1.0]}, opset=2, domain=ML
)
example(
    "LabelEncoder", ["float[N]"], ["string[N]"], {"keys_floats": [1.0], "values_strings": ["a"]}, opset=3, domain=ML
)
example("LabelEncoder", ["int64[N]"], ["int64[N]"], {"keys_int64s": [1], "values_int64s": [2]}, opset=4, domain=ML)
_V16 = {"keys_strings": ["a"], "values_tensor": TensorProto(data_type=TensorProto.INT16, dims=[1], int32_data=[3])}
example("LabelEncoder", ["string[2,N]"], ["int16[2,N]"], _V16, opset=4, domain=ML)
example(
    "LabelEncoder", ["string[N]"], ["string[N]"], {"keys_strings": ["a"], "values_strings": ["b"]}, opset=5, domain=ML
)
_I64 = {"keys_strings": ["a"], "values_int64s": [1],
        "default_tensor": TensorProto(data_type=TensorProto.INT64, dims=[1], int64_data=[-1])}  # fmt: skip
example("LabelEncoder", ["string[N]"], ["int64[N]"], _I64, opset=4, domain=ML)
_I32 = {**_I64, "default_tensor": TensorProto(data_type=TensorProto.INT32, dims=[1], int32_data=[-1])}
example("LabelEncoder", ["string[N]"], ["unknown"], _I32, opset=4, domain=ML, error="bad-attribute")
_PAIR = {**_I64, "default_tensor": TensorProto(data_type=TensorProto.INT64, dims=[1, 2], int64_data=[-1, -2])}
example("LabelEncoder", ["string[N]"], ["unknown"], _PAIR, opset=4, domain=ML, error="bad-attribute")
example(
    "LabelEncoder",
    ["string[N]"],
    ["unknown"],
    {"keys_strings": ["a", "b"], "values_int64s": [1]},
    opset=4,
    domain=ML,
    error="bad-attribute",
)
_TWO = {"keys_strings": ["a"], "values_strings": ["b"], "values_int64s": [1]}
example("LabelEncoder", ["string[N]"], ["unknown"], _TWO, opset=2, domain=ML, error="bad-attribute")
