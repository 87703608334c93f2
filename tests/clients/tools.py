"""Each client tool driven the way its users drive it, in one of three shape-inference modes.

- ``onnx``: onnx's own inference (``onnx.shape_inference``), the tool's symbolic inference off;
- ``dropin``: onnx-infer in its place (``infer.ort_compat.installed(onnx_shape_inference=True)``);
- ``stock``: the tool as it ships (onnxruntime's symbolic inference, or onnxslim's copy of it,
  falling back to onnx's).

Each driver returns the tool's output with what it counted: optimization passes (onnxslim's
loop iterations, polygraphy's constant-folding passes), fallbacks to onnx's inference, and CPU
seconds (this process's, so that other work on the machine does not count).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import onnx

from infer import onnx_compat, ort_compat

MODES = ("onnx", "dropin", "stock")


@dataclass
class Run:
    model: onnx.ModelProto
    passes: int = 0
    fallbacks: int = 0  # polygraphy: onnx's inference run after the symbolic one failed
    cpu: float = 0.0  # CPU seconds of the whole tool run
    inference_cpu: float = 0.0  # of which in shape inference


class _Refused:
    """A symbolic inference that always fails, so the tool falls back to onnx's."""

    @staticmethod
    def infer_shapes(*args: object, **kwargs: object) -> onnx.ModelProto:
        raise RuntimeError("symbolic shape inference off: onnx's inference only")


@contextlib.contextmanager
def _patched(obj: object, name: str, value: object) -> Iterator[None]:
    saved = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, saved)


def _mode(mode: str) -> contextlib.AbstractContextManager:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    return ort_compat.installed(onnx_shape_inference=True) if mode == "dropin" else contextlib.nullcontext()


def onnxslim(model: onnx.ModelProto, mode: str) -> Run:
    """``onnxslim.slim(model)``; ``passes`` counts its optimize-and-infer loop's iterations."""
    import onnxslim as slim_module
    import onnxslim.core as core

    run = Run(model)
    optimize, shape_infer = core.optimize, core.shape_infer

    def counted_optimize(*args, **kwargs):
        run.passes += 1
        return optimize(*args, **kwargs)

    def timed_shape_infer(m):
        start = time.process_time()
        try:
            return shape_infer(m)
        finally:
            run.inference_cpu += time.process_time() - start

    copy = onnx.ModelProto()
    copy.CopyFrom(model)  # slim() edits the model it is given
    with contextlib.ExitStack() as stack:
        stack.enter_context(_patched(core, "optimize", counted_optimize))
        stack.enter_context(_patched(core, "shape_infer", timed_shape_infer))
        if mode == "onnx":
            stack.enter_context(_patched(core, "SymbolicShapeInference", _Refused))
        stack.enter_context(_mode(mode))
        start = time.process_time()
        run.model = slim_module.slim(copy)
        run.cpu = time.process_time() - start
    return run


def polygraphy(model: onnx.ModelProto, mode: str) -> Run:
    """What ``polygraphy surgeon sanitize --fold-constants`` runs: shape inference, then constant
    folding passes until the node count stops changing; ``passes`` counts the folding passes."""
    from polygraphy.backend.onnx import loader

    run = Run(model)
    infer_shapes, onnx_inference = loader.infer_shapes, loader.InferShapes._run_onnx_shape_inference

    def counted_infer_shapes(*args, **kwargs):
        run.passes += 1  # FoldConstants infers shapes once after each folding pass
        return infer_shapes(*args, **kwargs)

    def counted_fallback(self, *args, **kwargs):
        run.fallbacks += 1
        return onnx_inference(self, *args, **kwargs)

    allow_onnxruntime = mode != "onnx"
    with contextlib.ExitStack() as stack:
        stack.enter_context(_patched(loader, "infer_shapes", counted_infer_shapes))
        if allow_onnxruntime:
            stack.enter_context(_patched(loader.InferShapes, "_run_onnx_shape_inference", counted_fallback))
        stack.enter_context(_mode(mode))
        start = time.process_time()
        inferred = loader.InferShapes(model, allow_onnxruntime=allow_onnxruntime)()
        run.model = loader.FoldConstants(
            inferred, allow_onnxruntime_shape_inference=allow_onnxruntime, error_ok=False
        )()
        run.cpu = time.process_time() - start
    return run


def graphsurgeon(model: onnx.ModelProto, mode: str) -> Run:
    """The onnx-graphsurgeon idiom: infer shapes, import, fold constants, clean up, export,
    until the node count stops changing; ``passes`` counts the folding passes."""
    import onnx_graphsurgeon as gs

    infer_shapes = onnx_compat.infer_shapes if mode == "dropin" else onnx.shape_inference.infer_shapes
    run = Run(model)
    start = time.process_time()
    current, before = model, -1
    while len(current.graph.node) != before and run.passes < 10:
        before = len(current.graph.node)
        graph = gs.import_onnx(infer_shapes(current))
        graph.fold_constants().cleanup().toposort()
        current = gs.export_onnx(graph)
        run.passes += 1
    run.model, run.cpu = current, time.process_time() - start
    return run


def onnxoptimizer(model: onnx.ModelProto, mode: str) -> Run:
    """onnxoptimizer's fuse-and-eliminate passes to a fixed point, on the inferred model."""
    import onnxoptimizer as optimizer

    infer_shapes = onnx_compat.infer_shapes if mode == "dropin" else onnx.shape_inference.infer_shapes
    start = time.process_time()
    out = optimizer.optimize(infer_shapes(model), optimizer.get_fuse_and_elimination_passes(), fixed_point=True)
    return Run(out, passes=1, cpu=time.process_time() - start)


def onnxsim(model: onnx.ModelProto, mode: str) -> Run:
    """``onnxsim.simplify`` on the inferred model (onnxsim then runs onnx's inference itself,
    over the value_info it is given); raises if onnxsim's own check fails."""
    import onnxsim as simplifier

    infer_shapes = onnx_compat.infer_shapes if mode == "dropin" else onnx.shape_inference.infer_shapes
    start = time.process_time()
    out, ok = simplifier.simplify(infer_shapes(model))
    if not ok:
        raise AssertionError("onnxsim's check of the simplified model failed")
    return Run(out, passes=1, cpu=time.process_time() - start)
