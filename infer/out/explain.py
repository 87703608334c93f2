"""Why a shape is unknown: follow provenance from a value back to its root causes.

Every fresh variable records the node, output and axis that made it and the values whose unknown
contents or shapes led there; every value whose rank or contents are unknown has a note saying
why. ``explain`` walks those links to roots: graph inputs whose contents arrive at run time,
data-dependent operators, operators without a rule, inputs declared without shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infer.core import dims as D
from infer.core import types as T
from infer.core.scopes import MAIN, GraphRecord, find_record

if TYPE_CHECKING:  # pragma: no cover
    from infer.core.dimtable import DimTable

MAX_STEPS = 200


@dataclass
class Step:
    depth: int
    text: str
    value: str | None = None
    root: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"depth": self.depth, "text": self.text, "value": self.value, "root": self.root}


@dataclass
class Explanation:
    value: str
    type: str
    known: bool
    steps: list[Step] = field(default_factory=list)

    @property
    def roots(self) -> list[str]:
        return [s.text for s in self.steps if s.root]

    def __str__(self) -> str:
        head = f"`{self.value}`: {self.type}"
        if self.known:
            return head + "\nevery dim is known (as an integer or over declared variables)"
        lines = [head]
        lines += ["  " * (s.depth + 1) + ("root: " if s.root else "") + s.text for s in self.steps]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "type": self.type,
            "known": self.known,
            "steps": [s.to_dict() for s in self.steps],
            "roots": self.roots,
        }


class _Walker:
    def __init__(self, records: Mapping[str, GraphRecord], table: DimTable):
        self.records = records
        self.table = table
        self.steps: list[Step] = []
        self.seen: set[tuple[str, str]] = set()

    def add(self, depth: int, text: str, value: str | None = None, root: bool = False) -> None:
        if len(self.steps) < MAX_STEPS:
            self.steps.append(Step(depth, text, value, root))

    def why_value(self, path: str, name: str, depth: int, what: str) -> None:
        """Why ``name``'s ``what`` (contents, rank) is unknown."""
        if (path, name) in self.seen:
            self.add(depth, f"`{name}` (see above)", name)
            return
        self.seen.add((path, name))
        rec = find_record(self.records, path, name)
        if rec is None:
            self.add(depth, f"`{name}` is not defined anywhere", name, root=True)
            return
        if name in rec.inputs:
            where = "the model" if rec.path == MAIN else f"subgraph {rec.path}"
            if what == "contents":
                self.add(
                    depth, f"`{name}` is an input of {where}: its contents are only known at run time", name, root=True
                )
            else:
                self.add(depth, f"`{name}` is an input of {where} declared as {rec.values[name].type}", name, root=True)
            return
        if name in rec.initializers:
            self.add(depth, f"`{name}` is an initializer too large to track or stored externally", name, root=True)
            return
        note = rec.notes.get(name)
        idx = rec.producers.get(name)
        if note is None:
            node = rec.nodes[idx] if idx is not None and idx < len(rec.nodes) else None
            op = node.op_type if node is not None else "?"
            self.add(
                depth, f"`{name}` is computed by {op}, whose output {what} inference does not track", name, root=True
            )
            return
        self.add(
            depth, f"`{name}` ({what} unknown) from {note.site.describe()}: {note.reason}", name, root=not note.causes
        )
        for c in note.causes:
            # Whatever was unknown here, what the node needed from its inputs was their contents.
            self.why_value(rec.path, c, depth + 1, "contents")

    def why_var(self, name: str, depth: int) -> None:
        if ("var", name) in self.seen:
            self.add(depth, f"`{name}` (see above)")
            return
        self.seen.add(("var", name))
        var = self.table.get(name)
        if var is None:
            return
        o = var.origin
        where = f" at {o.site.describe()}" if o.site and o.site.node_index is not None else ""
        self.add(depth, f"`{name}` is a fresh variable{where}: {o.reason}", o.value, root=not o.causes)
        path = o.site.graph if o.site else MAIN
        for c in o.causes:
            self.why_value(path, c, depth + 1, "contents")


def explain(
    records: Mapping[str, GraphRecord], table: DimTable, path: str, name: str, dim: int | None = None
) -> Explanation:
    """Why ``name`` (as seen from graph ``path``) has unknown type, rank or dims (only axis
    ``dim`` if given), from a run's ``records`` and dimension ``table``."""
    rec = find_record(records, path, name)
    if rec is None:
        raise KeyError(name)
    v = rec.values[name]
    w = _Walker(records, table)
    t = v.type
    if isinstance(t, T.UnknownType) or (isinstance(t, (T.TensorType, T.SparseTensorType)) and t.shape is None):
        w.why_value(rec.path, name, 0, "type" if isinstance(t, T.UnknownType) else "rank")
    else:
        for axis, d in enumerate(T.dims_of(t)):
            if dim is not None and axis != dim:
                continue
            fresh = sorted(n for n in D.free_names(d) if (var := table.get(n)) and var.is_fresh)
            for n in fresh:
                w.add(0, f"dim {axis} is {D.to_str(d)}", name)
                w.why_var(n, 1)
    return Explanation(name, str(t), known=not w.steps, steps=w.steps)
