"""Shrinking a program with a contradicted claim to a minimal model that still shows it.

Greedy passes, each kept only while the shrunk model still runs in onnxruntime at every binding
and inference still makes a contradicted claim of the same kind about a value made by the same
operator: keep only the contradicted value's ancestors; bypass a node (its consumers read one of
its inputs instead); replace a value that is the same at every binding by a constant; drop or
simplify attributes; move integer constants towards 0 and 1; fix or merge input variables and
shrink fixed input extents. Passes repeat until none makes progress or the time is up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper as nh

import infer
from infer.out.verify import check_run

from .check import Finding, observe
from .ortrun import OrtRunner


@dataclass
class State:
    model: onnx.ModelProto
    bindings: list[dict[str, int]]
    feeds: list[dict[str, np.ndarray]]
    finding: Finding
    observed: list[dict[str, np.ndarray]] = field(default_factory=list)


@dataclass
class Shrunk:
    state: State
    nodes_before: int
    nodes_after: int
    attempts: int
    seconds: float


def make_feeds(model: onnx.ModelProto, bindings: list[dict[str, int]], seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Random inputs at each binding (floats standard normal, integers in 0..5, as generated)."""
    out = []
    for k, b in enumerate(bindings):
        rng = np.random.default_rng((seed, k))
        feeds = {}
        for inp in model.graph.input:
            tt = inp.type.tensor_type
            shape = [b[d.dim_param] if d.dim_param else d.dim_value for d in tt.shape.dim]
            if tt.elem_type == onnx.TensorProto.INT64:
                feeds[inp.name] = rng.integers(0, 6, size=shape).astype(np.int64)
            else:
                feeds[inp.name] = rng.standard_normal(shape).astype(np.float32)
        out.append(feeds)
    return out


class Shrinker:
    def __init__(self, runner: OrtRunner, signature: tuple[str, str], budget: float = 90.0):
        self.runner = runner
        self.signature = signature
        self.deadline = time.monotonic() + budget
        self.attempts = 0

    # -- the predicate ---------------------------------------------------------------------------

    def test(
        self, model: onnx.ModelProto, bindings: list[dict[str, int]], feeds: list[dict[str, np.ndarray]]
    ) -> State | None:
        """The state of ``model`` if it runs everywhere and still shows a finding of the signature."""
        self.attempts += 1
        outcome = observe(model, feeds, self.runner)
        if outcome.outputs is None:
            return None
        for f in self.findings(model, bindings, outcome.outputs):
            if f.signature == self.signature:
                return State(_typed_outputs(model, outcome.outputs[0]), bindings, feeds, f, outcome.outputs)
        return None

    def findings(
        self, model: onnx.ModelProto, bindings: list[dict[str, int]], observed: list[dict[str, np.ndarray]]
    ) -> list[Finding]:
        """Every contradicted claim of inference on ``model`` in the runs ``observed``."""
        try:
            result = infer.infer_model(model)
        except Exception:
            return []
        producers = {o: n.op_type for n in model.graph.node for o in n.output}
        out = []
        for k, (b, obs) in enumerate(zip(bindings, observed)):
            rc = check_run(result, b, obs)
            if rc.skipped is None:
                out += [Finding.of(c, producers, k) for c in rc.contradictions]
        return out

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    # -- the passes ------------------------------------------------------------------------------

    def run(self, state: State) -> State:
        passes: list[Callable[[State], State | None]] = [
            self.cone,
            self.bypass,
            self.fold,
            self.attributes,
            self.constants,
            self.variables,
            self.extents,
        ]
        cone = self.cone(state)
        state = cone or state
        progress = True
        while progress and not self.out_of_time():
            progress = False
            for p in passes:
                if self.out_of_time():
                    break
                better = p(state)
                if better is not None:
                    state, progress = better, True
        return state

    def cone(self, state: State) -> State | None:
        """Only the contradicted value's ancestors, with it as the one output."""
        model = _cone(state.model, state.finding.value)
        if _size(model) >= _size(state.model) and len(model.graph.output) == len(state.model.graph.output):
            return None
        return self.test(model, state.bindings, _feeds_for(model, state.feeds))

    def _after_edit(self, state: State, model: onnx.ModelProto) -> State | None:
        model = _cone(model, state.finding.value) if _produces(model, state.finding.value) else _prune(model)
        return self.test(model, state.bindings, _feeds_for(model, state.feeds))

    def bypass(self, state: State) -> State | None:
        """Drop a node: its consumers read one of its inputs (same element type) instead."""
        progress = None
        i = len(state.model.graph.node) - 1
        while i >= 0 and not self.out_of_time():
            nodes = state.model.graph.node
            if i >= len(nodes):
                i = len(nodes) - 1
                continue
            node = nodes[i]
            types = _elem_types(state)
            done = False
            for out in node.output:
                for inp in dict.fromkeys(node.input):
                    if not inp or not out or types.get(inp) != types.get(out):
                        continue
                    model = _rewire(state.model, i, out, inp)
                    better = self._after_edit(state, model)
                    if better is not None:
                        state, progress, done = better, better, True
                        break
                if done:
                    break
            i -= 1
        return progress

    def fold(self, state: State) -> State | None:
        """Replace a node output that is the same at every binding by a constant."""
        progress = None
        for name in [o for n in state.model.graph.node for o in n.output if n.op_type != "Constant"]:
            if self.out_of_time():
                break
            if not _produces(state.model, name) or name == state.finding.value or not state.observed:
                continue
            values = [obs.get(name) for obs in state.observed]
            if any(v is None for v in values) or not all(
                v.shape == values[0].shape and np.array_equal(v, values[0]) for v in values
            ):
                continue
            model = _fold(state.model, name, np.asarray(values[0]))
            better = self._after_edit(state, model)
            if better is not None:
                state = progress = better
        return progress

    def attributes(self, state: State) -> State | None:
        """Drop an attribute, or move its integers towards 0 and 1."""
        progress = None
        for i in range(len(state.model.graph.node)):
            if self.out_of_time():
                break
            if i >= len(state.model.graph.node):
                break
            node = state.model.graph.node[i]
            for a in list(node.attribute):
                if a.name in ("value", "to"):
                    continue
                for variant in _attribute_variants(a):
                    model = onnx.ModelProto()
                    model.CopyFrom(state.model)
                    n2 = model.graph.node[i]
                    attrs = [x for x in n2.attribute if x.name != a.name]
                    if variant is not None:
                        attrs.append(variant)
                    del n2.attribute[:]
                    n2.attribute.extend(attrs)
                    better = self._after_edit(state, model)
                    if better is not None:
                        state = progress = better
                        break
        return progress

    def constants(self, state: State) -> State | None:
        """Integer initializers with elements nearer 0 and 1."""
        progress = None
        for j in range(len(state.model.graph.initializer)):
            if self.out_of_time():
                break
            if j >= len(state.model.graph.initializer):
                break
            init = state.model.graph.initializer[j]
            arr = nh.to_array(init)
            if arr.dtype.kind not in "iu" or arr.size > 8:
                continue
            for pos in range(arr.size):
                for v in _smaller_ints(int(arr.reshape(-1)[pos])):
                    new = arr.copy().reshape(-1)
                    new[pos] = v
                    model = onnx.ModelProto()
                    model.CopyFrom(state.model)
                    model.graph.initializer[j].CopyFrom(nh.from_array(new.reshape(arr.shape), init.name))
                    better = self._after_edit(state, model)
                    if better is not None:
                        state = progress = better
                        arr = new.reshape(arr.shape)
                        break
        return progress

    def variables(self, state: State) -> State | None:
        """Fix a variable to a number, or merge it into another."""
        progress = None
        for name in _variables(state.model):
            names = _variables(state.model)
            if self.out_of_time() or name not in names:
                continue
            others = [n for n in names if n != name]
            for repl in [*others, 1, 2, 3]:
                model = _replace_dim(state.model, name, repl)
                bindings = [{k: v for k, v in b.items() if k != name} for b in state.bindings]
                better = self.test(model, bindings, make_feeds(model, bindings))
                if better is not None:
                    state = progress = better
                    break
        return progress

    def extents(self, state: State) -> State | None:
        """Fixed input extents made smaller."""
        progress = None
        for i, inp in enumerate(state.model.graph.input):
            for axis, d in enumerate(inp.type.tensor_type.shape.dim):
                if self.out_of_time() or d.dim_param or d.dim_value <= 1:
                    continue
                for v in sorted({1, 2, d.dim_value // 2} - {d.dim_value}):
                    model = onnx.ModelProto()
                    model.CopyFrom(state.model)
                    model.graph.input[i].type.tensor_type.shape.dim[axis].dim_value = v
                    better = self.test(model, state.bindings, make_feeds(model, state.bindings))
                    if better is not None:
                        state = progress = better
                        break
        return progress


def shrink(
    model: onnx.ModelProto,
    bindings: list[dict[str, int]],
    feeds: list[dict[str, np.ndarray]],
    finding: Finding,
    runner: OrtRunner,
    budget: float = 90.0,
    shrinker: type[Shrinker] = Shrinker,
) -> Shrunk:
    """The smallest model the passes reach that still shows ``finding``'s kind of contradiction."""
    start = time.perf_counter()
    s = shrinker(runner, finding.signature, budget)
    state = State(model, bindings, feeds, finding)
    first = s.test(model, bindings, feeds)
    if first is not None:
        state = s.run(first)
    return Shrunk(state, len(model.graph.node), len(state.model.graph.node), s.attempts, time.perf_counter() - start)


# -- model surgery ---------------------------------------------------------------------------------


def _size(model: onnx.ModelProto) -> int:
    return len(model.graph.node) + len(model.graph.initializer) + len(model.graph.input)


def _produces(model: onnx.ModelProto, name: str) -> bool:
    return any(name in n.output for n in model.graph.node)


def _cone(model: onnx.ModelProto, target: str) -> onnx.ModelProto:
    """``model`` cut down to the nodes ``target`` depends on, with ``target`` the one output."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    elem = {o.name: o.type.tensor_type.elem_type for o in g.output}
    del g.output[:]
    g.output.append(h.make_tensor_value_info(target, elem.get(target, 0), None))
    if not elem.get(target):
        g.output[0].ClearField("type")  # typed by the caller's run (``_typed_outputs``)
    return _prune(m)


def _typed_outputs(model: onnx.ModelProto, observed: dict[str, np.ndarray]) -> onnx.ModelProto:
    """Untyped graph outputs given the element type they had in a run (so onnx's checker passes)."""
    for o in model.graph.output:
        if not o.type.tensor_type.elem_type and o.name in observed:
            arr = np.asarray(observed[o.name])
            o.CopyFrom(h.make_tensor_value_info(o.name, h.np_dtype_to_tensor_dtype(arr.dtype), [None] * arr.ndim))
    return model


def _prune(model: onnx.ModelProto) -> onnx.ModelProto:
    """Nodes, initializers and inputs no graph output depends on removed (in place)."""
    g = model.graph
    if not g.output:
        return model
    need = {o.name for o in g.output}
    keep = []
    for n in reversed(g.node):
        if any(o in need for o in n.output):
            keep.append(n)
            need.update(i for i in n.input if i)
    keep.reverse()
    nodes = [onnx.NodeProto() for _ in keep]
    for a, b in zip(nodes, keep):
        a.CopyFrom(b)
    del g.node[:]
    g.node.extend(nodes)
    inits = [t for t in g.initializer if t.name in need]
    inputs = [i for i in g.input if i.name in need]
    outputs = [o for o in g.output if _produces(model, o.name)]
    for field_, items in ((g.initializer, inits), (g.input, inputs), (g.output, outputs)):
        copies = [type(x)() for x in items]
        for a, b in zip(copies, items):
            a.CopyFrom(b)
        del field_[:]
        field_.extend(copies)
    return model


def _rewire(model: onnx.ModelProto, index: int, old: str, new: str) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    del g.node[index]
    for n in g.node:
        for j, i in enumerate(n.input):
            if i == old:
                n.input[j] = new
    for o in g.output:
        if o.name == old:
            o.name = new
    return m


def _fold(model: onnx.ModelProto, name: str, value: np.ndarray) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    for j, n in enumerate(g.node):
        if name in n.output:
            const = h.make_node("Constant", [], [name], value=nh.from_array(value, name))
            if len(n.output) == 1:
                g.node[j].CopyFrom(const)
            else:
                g.node.insert(j + 1, const)
                g.node[j].output[list(g.node[j].output).index(name)] = ""
            break
    return m


def _attribute_variants(a: onnx.AttributeProto) -> list[onnx.AttributeProto | None]:
    out: list[onnx.AttributeProto | None] = [None]
    if a.type == onnx.AttributeProto.INTS and a.ints:
        for target in (1, 0):
            if any(v != target for v in a.ints):
                out.append(h.make_attribute(a.name, [target] * len(a.ints)))
    elif a.type == onnx.AttributeProto.INT and a.i not in (0, 1):
        out.append(h.make_attribute(a.name, 1))
    return out


def _smaller_ints(v: int) -> list[int]:
    cands = [0, 1, -1, v // 2 if abs(v) < 2**31 else (2**31 - 1 if v > 0 else -(2**31))]
    return [c for c in dict.fromkeys(cands) if abs(c) < abs(v) or (c == 1 and v not in (0, 1, -1))]


def _replace_dim(model: onnx.ModelProto, name: str, repl: str | int) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for inp in m.graph.input:
        for d in inp.type.tensor_type.shape.dim:
            if d.dim_param == name:
                if isinstance(repl, str):
                    d.dim_param = repl
                else:
                    d.Clear()
                    d.dim_value = repl
    return m


def _variables(model: onnx.ModelProto) -> list[str]:
    return sorted({d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param})


def _feeds_for(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    names = {i.name for i in model.graph.input}
    return [{k: v for k, v in f.items() if k in names} for f in feeds]


def _elem_types(state: State) -> dict[str, Any]:
    """Element type (numpy dtype) of every value, from the last run and the inputs."""
    out: dict[str, Any] = {}
    if state.observed:
        out.update({k: np.asarray(v).dtype for k, v in state.observed[0].items()})
    out.update({k: v.dtype for k, v in state.feeds[0].items()})
    out.update({t.name: nh.to_array(t).dtype for t in state.model.graph.initializer})
    return out
