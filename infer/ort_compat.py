"""A stand-in for onnxruntime's ``SymbolicShapeInference`` backed by this engine.

    from infer import ort_compat
    model = ort_compat.SymbolicShapeInference.infer_shapes(model)   # as onnxruntime's tool
    ort_compat.install()    # quant_pre_process, the transformers optimizer, polygraphy, onnxslim
    ort_compat.uninstall()  # ... back to onnxruntime's own

``onnxruntime.tools.symbolic_shape_infer.SymbolicShapeInference`` is what onnxruntime's
``quant_pre_process``, its transformers optimizer, polygraphy and onnxslim (a vendored copy)
call. This module has the same entry points and returns the model the way that tool does
(docs/onnx-compat.md):

- ``infer_shapes`` returns an inferred copy (the input is never modified); every node output of
  every graph, graph outputs included, has a ``value_info`` entry, and graph outputs are typed;
- every extent is a ``dim_value`` or a ``dim_param`` (the names ``infer.onnx_compat`` writes);
- it raises ``IncompleteInference``, an ``Exception`` whose message starts with onnxruntime's
  ``"Incomplete symbolic shape inference"``, where a node output of the main graph is left
  without an element type or with an unnamed extent (the model it got so far is on the
  exception); unlike onnxruntime, it writes no ``sym_shape_infer_temp.onnx`` then.

Arguments are accepted as onnxruntime's tool takes them, and mean less: ``auto_merge`` is never
needed (distinct extents are never merged: where an operator needs two equal, the result is
their ``max``, Clause 9.3), ``guess_output_rank`` is never honoured (a rank the model does not
entail is not claimed), and ``int_max`` is not used (Slice ends past the axis are read as the
operator definition reads them). Models of opset below 7 are inferred, not refused.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import onnx
from onnx import GraphProto, ModelProto, TensorProto, ValueInfoProto

from infer import onnx_compat
from infer.core import dims as D
from infer.core import imports
from infer.walk.engine import collector_paused

__all__ = [
    "IncompleteInference",
    "SymbolicShapeInference",
    "SymbolicShapeInferenceHelper",
    "install",
    "installed",
    "uninstall",
]

logger = logging.getLogger(__name__)

INCOMPLETE = "Incomplete symbolic shape inference"

# Outputs onnxruntime's tool does not require to be inferred (training outputs of the fused
# layer norms, the extra outputs of an exported RotaryEmbedding function).
_OPTIONAL_OUTPUTS = {"SkipLayerNormalization": {1, 2}, "SkipSimplifiedLayerNormalization": {1, 2}}


class IncompleteInference(Exception):
    """Some node output of the main graph has no element type or an unnamed extent.

    ``model`` is the inferred model so far; ``values`` names the incomplete outputs.
    """

    def __init__(self, model: ModelProto, values: list[str]):
        shown = ", ".join(f"`{_text(v)}`" for v in values[:5])
        shown += f" and {len(values) - 5} more" if len(values) > 5 else ""
        super().__init__(f"{INCOMPLETE}: {shown} without an element type or with an unnamed extent")
        self.model = model
        self.values = values


def _text(name: str | bytes) -> str:
    """A value name as text (one that is not UTF-8 is bytes: its invalid bytes are escaped)."""
    return name if type(name) is str else name.decode("utf-8", "backslashreplace")  # type: ignore[union-attr]


class SymbolicShapeInference:
    """onnxruntime's ``SymbolicShapeInference``, backed by onnx-infer.

    The constructor and the members callers build on (``_preprocess``, ``run_``,
    ``_infer_impl``, ``_update_output_from_vi``, ``out_mp_``, ``known_vi_``,
    ``symbolic_dims_``) behave as onnxruntime's: one ``_infer_impl`` infers the whole model.
    """

    def __init__(
        self,
        int_max: int = 2**31 - 1,
        auto_merge: bool = False,
        guess_output_rank: bool = False,
        verbose: int = 0,
        prefix: str = "",
    ):
        self.int_max_ = int_max
        self.auto_merge_ = auto_merge
        self.guess_output_rank_ = guess_output_rank
        self.verbose_ = verbose
        self.prefix_ = prefix
        self.run_ = True
        self.suggested_merge_: dict[str, object] = {}  # never filled: extents are not merged
        self.incomplete_: list[str] = []
        self.out_mp_ = ModelProto()
        self._known: dict[str, ValueInfoProto] | None = None
        self._symbols: dict[str, Any] | None = None

    def _preprocess(self, in_mp: ModelProto) -> None:
        if not isinstance(in_mp, ModelProto):
            raise TypeError(f"SymbolicShapeInference takes an onnx.ModelProto, not {type(in_mp).__name__}")
        self.out_mp_ = ModelProto()
        self.out_mp_.CopyFrom(in_mp)
        self.run_ = True
        self.graph_inputs_ = {i.name: i for i in self.out_mp_.graph.input}
        self.initializers_ = {t.name: t for t in self.out_mp_.graph.initializer}
        self._known = self._symbols = None

    def _infer_impl(self, start_sympy_data: object = None) -> bool:
        """Infer the whole model once; whether every node output of the main graph is complete."""
        del start_sympy_data  # contents are propagated by the engine itself
        self.out_mp_ = _annotate(self.out_mp_)
        self._known = self._symbols = None
        self.incomplete_ = _incomplete(self.out_mp_.graph)
        if self.incomplete_ and self.verbose_ > 0:
            logger.warning("%s: %s", INCOMPLETE, ", ".join(self.incomplete_))
        self.run_ = False
        return not self.incomplete_

    def _update_output_from_vi(self) -> None:
        if self._known is None:
            return  # nobody has read known_vi_, so nobody has changed an entry of it
        for output in self.out_mp_.graph.output:
            vi = self._known.get(output.name)
            if vi is not None and vi is not output and vi.HasField("type"):
                output.type.CopyFrom(vi.type)

    @property
    def known_vi_(self) -> dict[str, ValueInfoProto]:
        """Name to ``ValueInfoProto`` over the main graph's initializers, inputs, value_info and
        outputs (made on first use: most callers never read it)."""
        if self._known is None:
            g = self.out_mp_.graph
            known: dict[str, ValueInfoProto] = {}
            for t in g.initializer:
                known[t.name] = onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            for vi in (*g.input, *g.value_info, *g.output):
                if vi.HasField("type") or vi.name not in known:
                    known[vi.name] = vi
            self._known = known
        return self._known

    @property
    def symbolic_dims_(self) -> dict[str, Any]:
        """Every ``dim_param`` of ``known_vi_`` as a sympy symbol, as onnxruntime's tool keeps them:
        the graph inputs' names positive, the others non-negative (converted at the edge,
        ``infer.core.dims.to_sympy``: this attribute is read as sympy by the tools that use it)."""
        if self._symbols is None:
            names = {d.dim_param for vi in self.known_vi_.values() for d in _dims(vi) if d.HasField("dim_param")}
            inputs = {d.dim_param for vi in self.out_mp_.graph.input for d in _dims(vi) if d.HasField("dim_param")}
            self._symbols = {n: _symbol(n, positive=n in inputs) for n in sorted(names)}
        return self._symbols

    @staticmethod
    def infer_shapes(
        in_mp: ModelProto,
        int_max: int = 2**31 - 1,
        auto_merge: bool = False,
        guess_output_rank: bool = False,
        verbose: int = 0,
    ) -> ModelProto:
        """The inferred copy of ``in_mp``; ``IncompleteInference`` where it is incomplete. The
        collector waits for the whole call (``infer.walk.engine.collector_paused``)."""
        inference = SymbolicShapeInference(int_max, auto_merge, guess_output_rank, verbose)
        with collector_paused():
            inference._preprocess(in_mp)
            while inference.run_:
                inference._infer_impl()
            inference._update_output_from_vi()
        if inference.incomplete_:
            raise IncompleteInference(inference.out_mp_, inference.incomplete_)
        return inference.out_mp_


class SymbolicShapeInferenceHelper(SymbolicShapeInference):
    """onnxruntime's transformers ``SymbolicShapeInferenceHelper`` on this engine.

    ``infer(dynamic_axis_mapping)`` infers with the graph inputs' named extents bound as the
    mapping says (``{"batch_size": 4}``); ``get_edge_shape`` and ``compare_shape`` read the
    result, with mapped names replaced by their integers.
    """

    def __init__(
        self,
        model: ModelProto,
        verbose: int = 0,
        int_max: int = 2**31 - 1,
        auto_merge: bool = True,
        guess_output_rank: bool = False,
    ):
        super().__init__(int_max, auto_merge, guess_output_rank, verbose)
        self.model_ = model
        self.all_shapes_inferred_ = False
        self.is_inferred_ = False
        self.dynamic_axis_mapping_: dict[str, int] = {}

    def infer(self, dynamic_axis_mapping: dict[str, int], max_runs: int = 200) -> bool:
        """Infer once per mapping; whether every node output of the main graph is complete."""
        assert dynamic_axis_mapping is not None
        del max_runs  # one run infers everything
        if self.is_inferred_ and self.dynamic_axis_mapping_ == dynamic_axis_mapping:
            return self.all_shapes_inferred_
        self.dynamic_axis_mapping_ = dict(dynamic_axis_mapping)
        self._preprocess(_bound(self.model_, self.dynamic_axis_mapping_))
        while self.run_:
            self.all_shapes_inferred_ = self._infer_impl()
        self.is_inferred_ = True
        return self.all_shapes_inferred_

    def get_edge_shape(self, edge: str) -> list[int | str | None] | None:
        """The shape of value ``edge`` (mapped names as integers), ``None`` if unknown."""
        assert self.all_shapes_inferred_
        vi = self.known_vi_.get(edge)
        if vi is None or vi.type.WhichOneof("value") != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
            print("Cannot retrieve the shape of " + str(edge))  # onnxruntime's helper prints this too
            return None
        shape: list[int | str | None] = []
        for d in vi.type.tensor_type.shape.dim:
            kind = d.WhichOneof("value")
            if kind == "dim_value":
                shape.append(d.dim_value)
            elif kind == "dim_param":
                shape.append(self.dynamic_axis_mapping_.get(d.dim_param, d.dim_param))
            else:
                shape.append(None)
        return shape

    def compare_shape(self, edge: str, edge_other: str) -> bool:
        """Whether two values have the same shape (an exception if either is unknown)."""
        assert self.all_shapes_inferred_
        shape, other = self.get_edge_shape(edge), self.get_edge_shape(edge_other)
        if shape is None or other is None:
            raise Exception("At least one shape is missed for edges to compare")
        return shape == other


# -- inference ------------------------------------------------------------------------------------


def _annotate(model: ModelProto) -> ModelProto:
    """``onnx_compat``'s inference of ``model`` (this tool's own copy, annotated in place), with
    every graph's typed outputs listed in ``value_info`` as onnxruntime's tool lists them.

    A domain that nodes use but the model does not import is read at version 1 for the run and
    left unimported in the result: onnxruntime's transformers optimizer infers its models
    halfway through fusing, before it imports ``com.microsoft`` (version 1) for the fused
    operators it added, and onnxruntime's tool does not look at imports.
    """
    missing = _unimported_domains(model)
    model.opset_import.extend(onnx.helper.make_opsetid(d, 1) for d in missing)
    try:
        out = onnx_compat.inferred(model, (False, False, True, True), owned=True)  # data_prop, as onnxruntime's
    finally:
        _unimport(model, missing)
    _unimport(out, missing)  # (a recent call's answer is a model of its own)
    for g in _graphs(out.graph):
        listed = {vi.name for vi in g.value_info}
        for o in g.output:
            if o.HasField("type") and o.name not in listed:
                g.value_info.add().CopyFrom(o)
    return out


def _unimport(model: ModelProto, domains: list[str]) -> None:
    """Remove the imports of ``domains`` from ``model``."""
    if domains and any(o.domain in domains for o in model.opset_import):
        kept = [o for o in model.opset_import if o.domain not in domains]
        del model.opset_import[:]
        model.opset_import.extend(kept)


def _unimported_domains(model: ModelProto) -> list[str]:
    """Domains other than the default one that nodes use and neither an import nor a model-local
    function defines."""
    known = {o.domain for o in model.opset_import} | {f.domain for f in model.functions} | {"", "ai.onnx"}
    used = {n.domain for g in _graphs(model.graph) for n in g.node}
    used |= {n.domain for f in model.functions for n in f.node}
    # A domain that is not UTF-8 (protobuf hands it out as bytes) is no domain a tool imports
    # late: it stays unimported, which onnx_compat reports as onnx does.
    return sorted(d for d in used - known if type(d) is str)


def _graphs(g: GraphProto) -> Iterator[GraphProto]:
    """``g`` and every graph its nodes hold, in depth-first order; iterative, so that a model
    nested deeper than Python recurses (1,000 levels of If) reaches inference, which refuses it."""
    stack = [g]
    while stack:
        g = stack.pop()
        yield g
        held: list[GraphProto] = []
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    held.append(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    held.extend(a.graphs)
        stack.extend(reversed(held))


def _symbol(name: str, positive: bool) -> Any:
    return D.to_sympy(D.symbol(name) if positive else D.fresh_symbol(name))


def _dims(vi: ValueInfoProto) -> list[onnx.TensorShapeProto.Dimension]:
    tp = vi.type
    while tp.WhichOneof("value") in ("sequence_type", "optional_type"):
        tp = getattr(tp, tp.WhichOneof("value")).elem_type
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        return list(getattr(tp, kind).shape.dim)
    return []


def _incomplete(g: GraphProto) -> list[str]:
    """Node outputs of ``g`` that onnxruntime's tool would call incomplete: without a type, a
    tensor without an element type, or a tensor extent with neither a value nor a name."""
    complete = {vi.name for vi in (*g.value_info, *g.output) if _complete(vi)}
    out = []
    for node in g.node:
        outputs = node.output
        if node.op_type == "RotaryEmbedding" and len(outputs) > 1:
            continue  # onnxruntime's tool skips an exported RotaryEmbedding function's outputs
        optional = _OPTIONAL_OUTPUTS.get(node.op_type, ())
        out += [name for i, name in enumerate(outputs) if name and name not in complete and i not in optional]
    return out


def _complete(vi: ValueInfoProto) -> bool:
    kind = vi.type.WhichOneof("value")
    if kind not in ("tensor_type", "sparse_tensor_type"):
        return kind is not None
    t = getattr(vi.type, kind)
    return t.elem_type != TensorProto.UNDEFINED and all(d.WhichOneof("value") is not None for d in t.shape.dim)


def _bound(model: ModelProto, mapping: dict[str, int]) -> ModelProto:
    """A copy whose graph inputs have the mapped named extents as integers."""
    if not mapping:
        return model
    out = ModelProto()
    out.CopyFrom(model)
    for vi in out.graph.input:
        for d in _dims(vi):
            if d.HasField("dim_param") and d.dim_param in mapping:
                d.dim_value = int(mapping[d.dim_param])
    return out


# -- switching tools over -------------------------------------------------------------------------

# (module, attribute, replacement): onnxruntime's tool under both names it is imported by (the
# transformers package puts onnxruntime/tools on sys.path and imports it as a top-level module),
# the transformers helper likewise, and onnxslim's vendored copy.
_TARGETS = (
    ("onnxruntime.tools.symbolic_shape_infer", "SymbolicShapeInference", SymbolicShapeInference),
    ("onnxruntime.transformers.shape_infer_helper", "SymbolicShapeInferenceHelper", SymbolicShapeInferenceHelper),
    ("symbolic_shape_infer", "SymbolicShapeInference", SymbolicShapeInference),
    ("shape_infer_helper", "SymbolicShapeInferenceHelper", SymbolicShapeInferenceHelper),
    ("onnxslim.third_party.symbolic_shape_infer", "SymbolicShapeInference", SymbolicShapeInference),
    ("onnxslim.core", "SymbolicShapeInference", SymbolicShapeInference),
)
_ONNX_TARGETS = (
    ("onnx.shape_inference", "infer_shapes", onnx_compat.infer_shapes),
    ("onnx.shape_inference", "infer_shapes_path", onnx_compat.infer_shapes_path),
)
_saved: dict[tuple[str, str], tuple[ModuleType, object]] = {}


def install(*, onnx_shape_inference: bool = False) -> list[str]:
    """Put this module's classes where onnxruntime's tool and its copies are looked up.

    Patches the modules of onnxruntime's symbolic shape inference and transformers helper, and
    onnxslim's vendored copy, where installed (they are imported first, so that later imports
    see the patch). With ``onnx_shape_inference``, ``onnx.shape_inference.infer_shapes`` and
    ``infer_shapes_path`` become ``infer.onnx_compat``'s too (the tools fall back to them).
    Returns the ``module.attribute`` names patched; ``uninstall`` restores them.
    """
    targets = _TARGETS + (_ONNX_TARGETS if onnx_shape_inference else ())
    patched = []
    for module_name, attr, replacement in targets:
        module = _module(module_name)
        if module is None or not hasattr(module, attr):
            continue
        key = (module_name, attr)
        if key not in _saved:
            _saved[key] = (module, getattr(module, attr))
        setattr(module, attr, replacement)
        patched.append(f"{module_name}.{attr}")
    return patched


def uninstall() -> None:
    """Restore every attribute ``install`` patched."""
    while _saved:
        (_, attr), (module, original) = _saved.popitem()
        setattr(module, attr, original)


@contextmanager
def installed(*, onnx_shape_inference: bool = False) -> Iterator[list[str]]:
    """``install`` for the duration of a ``with`` block."""
    try:
        yield install(onnx_shape_inference=onnx_shape_inference)
    finally:
        uninstall()


def _module(name: str) -> ModuleType | None:
    """The module ``name``, imported if it is installed; ``None`` if it is not."""
    found = imports.loaded(name)
    if found is not None:
        return found
    if name.split(".")[0] in ("symbolic_shape_infer", "shape_infer_helper"):
        # Importable only once onnxruntime.transformers has put its folders on sys.path.
        if imports.optional("onnxruntime.transformers.shape_infer_helper") is None:
            return None
        try:
            return imports.module(name)
        except ImportError:  # installed without what it needs (sympy for onnxruntime's)
            return None
    return imports.optional(name)
