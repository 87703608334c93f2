"""One contrib-domain node against onnxruntime: its run where the CPU build has a kernel, its
schema inference where it has none.

``Case`` describes the node (inputs as ``tests.support.onenode.In``, attributes, graph
attributes, which outputs are asked for). ``ort_run`` runs it on the CPU (inputs fed as sparse
tensors and outputs bound to their inputs' buffers where the kernel needs it); ``claims_hold``
infers it with concrete input shapes (every dim must be an integer unless the case says the
output is data-dependent) and with every dim symbolic, and compares every claim with the run
through ``infer.out.verify.check_run``. ``ort_schema_inference`` reads what onnxruntime's own schema
inference gives a node it cannot run: element types from its type errors, shapes from the
warning it logs when a declared output shape clashes with the inferred one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

import infer
from infer.core import types as T
from tests.support.hardware import hardware_refusal, skip_lacking
from tests.support.onenode import In, graph_inputs
from tests.support.runtime import check

MS = "com.microsoft"


class Refused(Exception):
    """onnxruntime refused the node (at load or at run)."""


class HardwareRefused(Refused):
    """onnxruntime refused the node for want of a CPU feature (tests/support/hardware.py)."""


@dataclass(frozen=True)
class Case:
    """One node of ``domain``: input ``i`` is named ``x{i}``, output ``k`` ``y{k}`` (or omitted)."""

    op: str
    inputs: Sequence[In | None]
    attrs: dict[str, Any] = field(default_factory=dict)
    n_out: int = 1
    domain: str = MS
    omit: frozenset[int] = frozenset()  # outputs left unnamed (optional outputs not asked for)
    graphs: dict[str, onnx.GraphProto] = field(default_factory=dict)
    sparse: frozenset[int] = frozenset()  # inputs that are sparse tensors (COO)
    shared: tuple[tuple[int, int], ...] = ()  # (input, output) pairs onnxruntime must give one buffer
    data_dependent: frozenset[int] = frozenset()  # outputs whose extents depend on contents
    opset: int = 18

    @property
    def outputs(self) -> list[str]:
        return ["" if k in self.omit else f"y{k}" for k in range(self.n_out)]

    def model(self, symbolic: bool = False) -> tuple[onnx.ModelProto, dict[str, int]]:
        names, declared, inits, bindings = graph_inputs(self.inputs, symbolic, self.sparse)
        node = helper.make_node(self.op, names, self.outputs, domain=self.domain, **self.attrs)
        for key, g in self.graphs.items():
            node.attribute.append(helper.make_attribute(key, g))
        outs = [onnx.ValueInfoProto(name=o) for o in self.outputs if o]
        graph = helper.make_graph([node], "g", declared, outs, inits)
        opsets = [helper.make_opsetid("", self.opset)]
        if self.domain:
            opsets.append(helper.make_opsetid(self.domain, 1))
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = 10
        return model, bindings

    def feeds(self, seed: int = 0) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        return {f"x{i}": x.data(rng) for i, x in enumerate(self.inputs) if x is not None and x.array is None}

    def __str__(self) -> str:
        shapes = [
            None
            if x is None
            else (
                x.array.tolist()
                if x.array is not None and x.array.size < 9
                else list(x.shape if x.array is None else x.array.shape)
            )
            for x in self.inputs
        ]
        return f"{self.op} {self.attrs} on {shapes}"


def _ort() -> Any:
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    return ort


@cache
def cpu_kernels() -> frozenset[tuple[str, str]]:
    """(domain, op) pairs the installed onnxruntime's CPU build has a kernel for."""
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    return frozenset((k.domain, k.op_name) for k in C.get_all_opkernel_def() if k.provider == "CPUExecutionProvider")


def ort_run(case: Case, seed: int = 0) -> dict[str, Any]:
    """The node's outputs by name; ``Refused`` where onnxruntime refuses it (``HardwareRefused``
    where this machine's CPU lacks the kernel)."""
    ort = _ort()
    model, _ = case.model()
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    try:
        session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        feeds = case.feeds(seed)
        if not case.sparse and not case.shared:
            return dict(zip([o for o in case.outputs if o], session.run(None, feeds)))
        binding = session.io_binding()
        bound = {}
        for name, arr in feeds.items():
            i = int(name[1:])
            if i in case.sparse:
                coo = np.ascontiguousarray(np.argwhere(arr != 0).astype(np.int64))
                st = ort.SparseTensor.sparse_coo_from_numpy(
                    list(arr.shape), arr[arr != 0], coo, ort.OrtDevice.make("cpu", 0)
                )
                value = ort.OrtValue.ort_value_from_sparse_tensor(st)
            else:
                value = ort.OrtValue.ortvalue_from_numpy(arr)
            binding.bind_ortvalue_input(name, value)
            bound[i] = value
        shared = dict((o, i) for i, o in case.shared)
        for k, name in enumerate(case.outputs):
            if not name:
                continue
            if k in shared:
                binding.bind_ortvalue_output(name, bound[shared[k]])
            else:
                binding.bind_output(name)
        session.run_with_iobinding(binding)
        outs = binding.get_outputs()
        return {name: outs[j].numpy() for j, name in enumerate(o for o in case.outputs if o)}
    except Exception as e:  # onnxruntime's errors have several types
        message = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        raise (HardwareRefused if hardware_refusal(str(e)) else Refused)(message) from None


def refusal(case: Case) -> Refused:
    """onnxruntime's refusal of ``case``: the test fails where onnxruntime runs it, and skips where
    the refusal is only this machine's CPU lacking the kernel (it would say nothing of the node)."""
    try:
        ort_run(case)
    except HardwareRefused as e:
        skip_lacking([f"{case}: {e}"], 1)
        raise
    except Refused as e:
        return e
    raise AssertionError(f"onnxruntime runs {case}, which is meant to be refused")


def errors(result: infer.InferenceResult) -> list[str]:
    return [f"{d.code}: {d.message}" for d in result.diagnostics if d.severity == "error"]


def claims_hold(case: Case, observed: dict[str, Any]) -> list[str]:
    """What inference gets wrong about a node onnxruntime ran, concretely and symbolically."""
    problems = []
    for symbolic in (False, True):
        model, bindings = case.model(symbolic)
        if 0 in bindings.values():
            continue  # declared extents are positive: the symbolic claims say nothing of an empty axis
        result = infer.infer_model(model)
        problems += [f"{case} (symbolic={symbolic}): error on a node onnxruntime runs: {e}" for e in errors(result)]
        verdict = check(result, [(bindings, observed)])
        problems += [f"{case}: {w}" for w in verdict.wrong]
        problems += [f"{case}: a claim rests on an assumption this run violates: {s}" for s in verdict.skipped_runs]
        for k, name in enumerate(case.outputs):
            if not name:
                continue
            t = result.type_of(name)
            if not isinstance(t, T.TensorType) or t.elem is None or t.shape is None:
                problems.append(f"{case} (symbolic={symbolic}): `{name}` is {t}, runtime {np.shape(observed[name])}")
            elif not symbolic and k not in case.data_dependent and any(not isinstance(d, int) for d in t.shape):
                problems.append(f"{case}: `{name}` is {t} with concrete inputs, runtime {np.shape(observed[name])}")
    return problems


def refused_too(case: Case) -> list[str]:
    """Inference must report an error on a node onnxruntime refuses (with concrete shapes)."""
    model, _ = case.model()
    return [] if errors(infer.infer_model(model)) else [f"{case}: onnxruntime refuses it, inference finds no error"]


# -- onnxruntime's schema inference of a node it cannot run ---------------------------------------

_TYPE_ERROR = re.compile(
    r"Type \((tensor\([^)]*\))\) of output arg \(([^)]*)\) of node \([^)]*\) does not match "
    r"expected type \((tensor\([^)]*\))\)"
)
_MERGE = r"Error merging shape info for output\. '{}' source:\{{([^}}]*)\}} target"
_ELEM_OF = {f"tensor({T.elem_name(e)})": e for e in TensorProto.DataType.values() if e}
_ELEM_OF["tensor(float)"] = TensorProto.FLOAT
_ELEM_OF["tensor(double)"] = TensorProto.DOUBLE


def _load_logged(model: onnx.ModelProto) -> tuple[str | None, str]:
    """Create a session, logging at warning level into a pipe: (the error, the log)."""
    ort = _ort()
    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    err = None
    try:
        ort.set_default_logger_severity(1)
        so = ort.SessionOptions()
        so.log_severity_level = 1
        try:
            ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime's errors have several types
            err = str(e)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(w)
        ort.set_default_logger_severity(4)
    chunks = []
    while chunk := os.read(r, 1 << 16):
        chunks.append(chunk)
    os.close(r)
    return err, b"".join(chunks).decode(errors="replace")


@dataclass
class SchemaInference:
    """What onnxruntime's schema inference says of each output: element type and shape, where it
    says it (``-1`` for an extent it leaves symbolic), and its error, if it refuses the node."""

    elems: dict[str, int | None]
    shapes: dict[str, tuple[int, ...] | None]
    error: str | None  # None when only the kernel is missing


def ort_schema_inference(case: Case) -> SchemaInference:
    model, _ = case.model()
    names = [o for o in case.outputs if o]
    seen: list[dict[str, int]] = []
    err, log = None, ""
    for guess in (TensorProto.INT8, TensorProto.UINT8):  # an output no type error corrects has no inferred type
        elems = dict.fromkeys(names, guess)
        for _ in range(len(names) + 2):
            for o in model.graph.output:
                o.CopyFrom(helper.make_tensor_value_info(o.name, elems[o.name], [12345] * 9))
            err, log = _load_logged(model)
            m = _TYPE_ERROR.search(err or "")
            if not m:
                break
            elems[m.group(2)] = _ELEM_OF[m.group(3)]
        seen.append(elems)
    typed = {n: seen[0][n] if seen[0][n] == seen[1][n] else None for n in names}
    shapes: dict[str, tuple[int, ...] | None] = {}
    for n in names:
        s = re.search(_MERGE.format(re.escape(n)), log)
        shapes[n] = None if s is None else tuple(int(v) for v in s.group(1).split(",") if v.strip())
    if err is not None and "NOT_IMPLEMENTED" in err:
        err = None
    return SchemaInference(typed, shapes, err)
