"""One call of inference: the options checked, the model loaded, a kept run reused or the model
walked, the result made (``infer.infer_model``, the package's main entry)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from onnx import ModelProto

from infer.core.diagnostics import Diagnostic
from infer.core.dims.budget import Budget
from infer.core.limits import Limits
from infer.load.loader import ModelSource
from infer.out.result import InferenceResult
from infer.walk import reuse
from infer.walk.engine import Engine, Options, collector_paused


def infer_model(
    model: ModelSource,
    *,
    dims_style: str = "expressions",
    dims: Mapping[str, int] | None = None,
    limits: Limits | None = None,
    max_depth: int | None = None,
    max_rank: int | None = None,
    max_nodes: int | None = None,
    max_node_visits: int | None = None,
    max_expression_size: int | None = None,
    max_model_bytes: int | None = None,
    max_node_seconds: float | None = None,
    max_seconds: float | None = None,
    max_node_values: int | None = None,
    max_graph_values: int | None = None,
    read_external_data: bool = False,
    external_data_dir: str | os.PathLike | None = None,
    progress: Callable[[int, int], None] | None = None,
    previous: InferenceResult | None = None,
) -> InferenceResult:
    """Infer the type and shape of every value of ``model``.

    ``model`` is a ``ModelProto`` (never modified), serialized bytes, or a path. ``dims_style``
    chooses how symbolic dims are written into ``result.model`` (``"expressions"`` or
    ``"strict"``); ``dims`` binds dimension variables to integers. Raises ``ModelLoadError``
    when the input is not a readable model; everything wrong *inside* a model is reported in
    ``result.diagnostics`` instead.

    Resource limits (Clause 15.4, docs/limits.md) are ``limits``, an ``infer.Limits`` (its
    defaults when not given), each of which a keyword argument of the same name overrides when
    given (not ``None``): ``max_depth`` (subgraph and function nesting), ``max_rank``,
    ``max_nodes`` (function calls expanded), ``max_node_visits`` (node inferences in the run;
    by default 4 per node plus 10,000), ``max_expression_size`` (terms of one symbolic extent; a
    larger one becomes a fresh variable), ``max_model_bytes`` (a model file),
    ``max_node_seconds`` (wall-clock seconds of one node's rule, 10 by default; 0 disables it
    here, as ``Limits(max_node_seconds=None)`` does), ``max_seconds`` (wall-clock seconds of the
    whole run, none by default), ``max_node_values`` (inputs and outputs of one node),
    ``max_graph_values`` (graph inputs, outputs and initializers). A model past one gets a ``limit``
    diagnostic, never an exception; a limit that is not a non-negative number is a
    ``ValueError``.

    External data (Clauses 13, 15.3): with ``read_external_data=True`` the small integer
    initializers a model keeps in external files (possible shapes) are read, after every check
    of ``infer.external``, relative to the model file's directory, or to ``external_data_dir``
    when given (needed for bytes and ``ModelProto`` inputs). Off by default: a model is
    untrusted (Clause 15.5). A reference that fails a check is an ``external-data`` error.

    ``progress(done, total)`` is called after each node of the main graph (a progress bar).

    Calling again (``infer.reuse``): a ``ModelProto`` whose content and options are those of a
    recent call gets that call's result again (of models up to ``infer.reuse.MAX_KEPT_BYTES``),
    as does one equal to ``previous``, an earlier result the caller passes (of any size).
    """
    # Named one by one, not read from locals(): compiled with mypyc, locals() is not this
    # function's frame, and the keywords were silently dropped.
    given: dict[str, Any] = {
        "max_depth": max_depth,
        "max_rank": max_rank,
        "max_nodes": max_nodes,
        "max_node_visits": max_node_visits,
        "max_expression_size": max_expression_size,
        "max_model_bytes": max_model_bytes,
        "max_node_seconds": max_node_seconds,
        "max_seconds": max_seconds,
        "max_node_values": max_node_values,
        "max_graph_values": max_graph_values,
    }
    run_limits = _checked_options(dims_style, limits, given)
    # The run's budget (its clock counts the reading too); the collector waits (collector_paused).
    with collector_paused(), Budget(run_limits.max_expression_size, run_limits.max_seconds).active() as b:
        return _infer(model, dims_style, dims, run_limits, read_external_data, external_data_dir, progress, previous, b)


def _checked_options(dims_style: str, limits: Limits | None, given: dict[str, Any]) -> Limits:
    """The run's limits, after the options are checked (a bad one is a ``ValueError``)."""
    from infer.out.annotate import STYLES

    if dims_style not in STYLES:
        raise ValueError(f"dims_style must be one of {STYLES}, not {dims_style!r}")
    if limits is not None and not isinstance(limits, Limits):
        raise ValueError(f"limits must be an infer.Limits, not {type(limits).__name__}")
    return Limits.from_overrides({k: v for k, v in given.items() if v is not None}, limits)


def _walked_copy(model: ModelProto) -> ModelProto:
    """The model a kept run walks: the caller's own unless it has functions.

    Kept for later calls, the run must not hold the caller's object, which the caller may change:
    a function call's nodes are not found again in the next caller's model (``reuse.rebound``),
    so a model with functions is walked in a copy (one small enough to keep costs little to copy).
    """
    if not len(model.functions):
        return model
    copy = ModelProto()
    copy.CopyFrom(model)
    return copy


def _infer(
    model: ModelSource,
    dims_style: str,
    dims: Mapping[str, int] | None,
    limits: Limits,
    read_external_data: bool,
    external_data_dir: str | os.PathLike | None,
    progress: Callable[[int, int], None] | None,
    previous: InferenceResult | None,
    budget: Budget,
) -> InferenceResult:
    from dataclasses import replace
    from pathlib import Path

    from infer.load.loader import load

    loaded = load(model, max_bytes=limits.max_model_bytes)
    options = Options(
        dims_style=dims_style,
        bindings=dict(dims or {}),
        limits=limits,
        read_external_data=read_external_data,
        progress=progress,
    )
    directory = Path(external_data_dir) if external_data_dir is not None else loaded.directory
    key, size = None, 0
    if loaded.weightless is not None and not read_external_data:
        run_options = (sorted(options.bindings.items()), limits, None if directory is None else str(directory))
        key, size = reuse.model_key(loaded.model, loaded.weightless, run_options)
        engine = _reused(previous, key, loaded.model)
        if engine is not None:
            if progress is not None:
                progress(len(loaded.model.graph.node), len(loaded.model.graph.node))
            return InferenceResult(engine, loaded.model, loaded.owned, dims_style)
    # The weightless copy made the key; the scan reads the nodes' bytes split from it, each
    # dropped as it is read, so the copy itself is not held through the scan beside them.
    loaded = replace(loaded, weightless=None)
    keep = key is not None and size <= reuse.MAX_KEPT_BYTES and reuse.RECENT.enabled
    source = _walked_copy(loaded.model) if keep and not loaded.owned else loaded.model
    engine = Engine(
        source,
        options,
        directory=directory,
        light_nodes=loaded.light_nodes,
        previous=None if previous is None else previous._engine,
        budget=budget,
    )
    loaded = replace(loaded, light_nodes=None)  # read by the engine's scan; not kept through the walk
    engine.run()
    if options.bindings and any(d.severity == "error" for d in engine.state.diagnostics):
        _blame_bindings(engine, source, options, directory)
    if key is not None and engine.reusable:
        engine.reuse_key = key
        if keep:
            reuse.RECENT.put(key, engine.snapshot())  # (the caller may change what its result holds)
    return InferenceResult(engine, loaded.model, loaded.owned, dims_style)


def _reused(previous: InferenceResult | None, key: bytes, source: ModelProto) -> Engine | None:
    """The run of an earlier call on a model of this content and these options, if one is kept
    (``previous``'s, else a recent one's), as a run of ``source``."""
    if previous is not None and previous._engine.reuse_key == key:
        engine: Engine = reuse.rebound(previous._engine, source)  # (reuse cannot name the engine)
        return engine
    kept = reuse.RECENT.get(key)  # what _infer keeps for such a key: an engine's snapshot
    if kept is None:
        return None
    engine = reuse.rebound(kept, source)
    return engine


def _blame_bindings(engine: Any, model: Any, options: Any, directory: Any) -> None:
    """Say which errors the bindings cause: those a run without them does not have (Clause 9.3).

    The model with its variables free is the reference; an error that appears only once
    ``batch`` is 1 is the binding contradicting the model, and is reported as such.
    """
    from dataclasses import replace

    from infer.core import diagnostics as diag

    free = Engine(model, replace(options, bindings={}), directory=directory)
    free.run()

    def key(d: Diagnostic) -> tuple:
        loc = d.location
        return (d.code, loc.graph, loc.node_index, loc.value, loc.attribute)

    before = {key(d) for d in free.state.diagnostics if d.severity == "error"}
    bound = ", ".join(f"{n}={v}" for n, v in sorted(options.bindings.items()))
    for d in list(engine.state.diagnostics):
        if d.severity == "error" and key(d) not in before:
            engine.state.diagnostics.append(
                diag.make(
                    "binding-clash",
                    f"the binding {bound} contradicts the model: {d.message}",
                    d.location,
                    "check the value bound to the dimension variable",
                )
            )
