"""The type lattice: join, refine, and the round trip through TypeProto."""

from __future__ import annotations

from onnx import TensorProto, helper

from infer.core import dims as D
from infer.core import types as T

F, I64 = TensorProto.FLOAT, TensorProto.INT64
N, M = D.symbol("N"), D.symbol("M")


def test_join_keeps_what_both_agree_on():
    assert T.join(T.tensor(F, (N, 3)), T.tensor(F, (N, 3))) == T.tensor(F, (N, 3))
    assert T.join(T.tensor(F, (N, 3)), T.tensor(F, (N, 4))) == T.TensorType(F, (N, None))
    assert T.join(T.tensor(F, (N,)), T.tensor(F, (N, 4))) == T.TensorType(F, None)
    assert T.join(T.tensor(F, (2,)), T.tensor(I64, (2,))) == T.TensorType(None, (2,))
    assert T.join(T.tensor(F), T.SequenceType(T.tensor(F))) is T.UNKNOWN
    seq = T.join(T.SequenceType(T.tensor(F, (N, 3))), T.SequenceType(T.tensor(F, (N, 5))))
    assert seq == T.SequenceType(T.TensorType(F, (N, None)))


def test_join_uses_the_dim_callback():
    joined = T.join(T.tensor(F, (N,)), T.tensor(F, (M,)), lambda axis, a, b: D.dmax(a, b))
    assert joined == T.tensor(F, (D.dmax(N, M),))


def test_refine_fills_gaps_and_reports_clashes():
    t, clashes = T.refine(T.TensorType(F, (N, None)), T.TensorType(F, (None, 4)))
    assert t == T.tensor(F, (N, 4)) and not clashes
    t, clashes = T.refine(T.tensor(F, (3, 4)), T.tensor(F, (3, 5)))
    assert [c.what for c in clashes] == ["dim"] and clashes[0].axis == 1
    _, clashes = T.refine(T.tensor(I64, (3,)), T.tensor(F, (3,)))
    assert [c.what for c in clashes] == ["element type"]
    _, clashes = T.refine(T.tensor(F, (3,)), T.tensor(F, (3, 1)))
    assert [c.what for c in clashes] == ["rank"]
    _, clashes = T.refine(T.SequenceType(T.tensor(F)), T.tensor(F))
    assert [c.what for c in clashes] == ["kind"]
    assert T.refine(T.UNKNOWN, T.tensor(F))[0] == T.tensor(F)


def _roundtrip(t: T.Type) -> T.Type:
    def write(d):
        return d if isinstance(d, int) or d is None else D.to_str(d)

    def read(tt, axis):
        dim = tt.shape.dim[axis]
        if dim.HasField("dim_value"):
            return dim.dim_value
        return D.symbol(dim.dim_param) if dim.dim_param else None

    return T.from_proto(T.to_proto(t, write), read)


def test_proto_roundtrip_of_every_kind():
    kinds = [
        T.tensor(F, (N, 3)),
        T.TensorType(F, None),
        T.tensor(I64, ()),
        T.SparseTensorType(F, (4, 4)),
        T.SequenceType(T.tensor(F, (N,))),
        T.SequenceType(T.UNKNOWN),
        T.MapType(TensorProto.STRING, T.tensor(F, ())),
        T.OptionalType(T.SequenceType(T.tensor(I64, (2,)))),
        T.OpaqueType("com.example", "handle"),
    ]
    for t in kinds:
        assert _roundtrip(t) == t, t
    assert T.to_proto(T.UNKNOWN, str) is None


def test_from_proto_reads_helper_types():
    tp = helper.make_tensor_type_proto(F, ["batch", 3, None])
    t = T.from_proto(tp, lambda tt, i: tt.shape.dim[i].dim_value or (tt.shape.dim[i].dim_param or None))
    assert t == T.TensorType(F, ("batch", 3, None))
    assert str(T.tensor(F, (N, 3))) == "float[N,3]"
    assert str(T.TensorType(F, None)) == "float[*]"
