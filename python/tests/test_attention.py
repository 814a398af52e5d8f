"""Multi-head attention laid out as ``torch.onnx.export`` writes ``nn.MultiheadAttention``
(issue 60, item 3), built here with onnx's helper so that it runs where PyTorch does not: the
batch axis of 1 moved among the others (a Transpose to sequence-first, the heads merged with
it by a Reshape), the scale 1/√d read off a Shape (Slice, Cast, Sqrt, Div), a causal mask made
from the sequence's length (Expand, Trilu, Equal, Where of −∞) and the Mod, Add and empty Slice
of PyTorch's shape arithmetic, all folded at import. tessera's float reference equals
onnxruntime's, and private inference equals fixed point."""

import numpy as np
import pytest

import tessera

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

S, E, H = 6, 8, 2
D = E // H
BIG = 9223372036854775807
RNG = np.random.default_rng(61)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def reals(name, values):
    return numpy_helper.from_array(np.array(values, np.float32), name)


def node(op, inputs, output, **attributes):
    return helper.make_node(op, inputs, [output], name=output, **attributes)


def heads(source, name):
    """`source` [S, 1, E] to [1, H, S, D], as PyTorch does: the batch merged with the heads."""
    return [
        node("MatMul", [source, f"w_{name}"], f"{name}"),
        node("Reshape", [name, "to_heads"], f"{name}_h"),
        node("Transpose", [f"{name}_h"], f"{name}_t", perm=[1, 0, 2]),
        node("Reshape", [f"{name}_t", "to_4d"], f"{name}4"),
    ]


def attention(causal):
    nodes = [
        node("Transpose", ["x"], "t", perm=[1, 0, 2]),
        # PyTorch's `unflatten` of the last axis: its shape from Shape, Mod and Slices.
        node("Shape", ["t"], "shape_t"),
        node("Mod", ["minus_one", "three"], "last"),
        node("Add", ["last", "one_i"], "after"),
        node("Slice", ["shape_t", "zero_i", "last"], "before_last"),
        node("Slice", ["shape_t", "after", "big"], "none_after"),
        node("Concat", ["before_last", "e", "none_after"], "same", axis=0),
        node("Reshape", ["t", "same"], "t2"),
        *heads("t2", "q"), *heads("t2", "k"), *heads("t2", "v"),
        node("Shape", ["q4"], "shape_q"),
        node("Slice", ["shape_q", "minus_one", "big"], "d"),
        node("Cast", ["d"], "d_real", to=TensorProto.FLOAT),
        node("Sqrt", ["d_real"], "root_d"),
        node("Div", ["one_f", "root_d"], "scale"),
        node("Sqrt", ["scale"], "root_scale"),
        node("Mul", ["q4", "root_scale"], "qs"),
        node("Transpose", ["k4"], "kt", perm=[0, 1, 3, 2]),
        node("Mul", ["kt", "root_scale"], "ks"),
        node("MatMul", ["qs", "ks"], "scores"),
    ]
    if causal:
        nodes += [
            node("Slice", ["shape_q", "minus_two", "minus_one"], "s"),
            node("Concat", ["s", "s"], "square", axis=0),
            node("Expand", ["one_f", "square"], "ones"),
            node("Trilu", ["ones"], "lower", upper=0),
            node("Equal", ["lower", "zero_f"], "above"),
            node("Where", ["above", "minus_inf", "zero_f"], "mask"),
            node("Add", ["scores", "mask"], "masked"),
        ]
    nodes += [
        node("Softmax", ["masked" if causal else "scores"], "p", axis=-1),
        node("MatMul", ["p", "v4"], "o"),
        node("Transpose", ["o"], "o_t", perm=[2, 0, 1, 3]),
        node("Reshape", ["o_t", "to_rows"], "rows"),
        node("Gemm", ["rows", "w_o", "b_o"], "proj", transB=1),
        node("Reshape", ["proj", "to_seq_first"], "proj3"),
        node("Transpose", ["proj3"], "back", perm=[1, 0, 2]),
        node("ReduceMean", ["back"], "y", axes=[1], keepdims=0),
    ]
    weights = [
        numpy_helper.from_array(RNG.normal(0, 0.5, (E, E)).astype(np.float32), f"w_{n}")
        for n in "qkvo"
    ]
    constants = [
        ints("minus_one", [-1]), ints("minus_two", [-2]), ints("three", [3]),
        ints("one_i", [1]), ints("zero_i", [0]), ints("big", [BIG]), ints("e", [E]),
        ints("to_heads", [S, H, D]), ints("to_4d", [1, H, S, D]), ints("to_rows", [S, E]),
        ints("to_seq_first", [S, 1, E]), reals("one_f", 1.0), reals("zero_f", 0.0),
        reals("minus_inf", -np.inf), reals("b_o", RNG.normal(0, 0.1, E)),
    ]
    g = helper.make_graph(
        nodes,
        "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, S, E])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, E])],
        weights + constants,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


@pytest.mark.parametrize("causal", [False, True], ids=["unmasked", "causal"])
def test_pytorch_attention_layout_imports_and_runs(causal):
    data = attention(causal)
    model = tessera.Model.from_onnx(data)
    x = RNG.standard_normal((1, S, E)).astype(np.float32)
    got = model.plaintext(x[0], fixed=False).reshape(-1)
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    assert np.max(np.abs(got - want.reshape(-1))) < 1e-5
    fixed = model.plaintext(x[0], bits=64, frac=16).reshape(-1)
    assert np.max(np.abs(fixed - got)) < 5e-3
    # Local truncations a unit off, carried through the softmax's Newton steps.
    bound = 2e-3 * (1 + np.max(np.abs(fixed)))
    for protocol in ["a+b", "alpha+y"]:
        private, _ = model.simulate(x[0], protocol=protocol, bits=64, frac=16)
        assert np.max(np.abs(private.reshape(-1) - fixed)) < bound, protocol


def test_the_mask_matters():
    """The causal mask changes the output: its folding is not a no-op."""
    x = RNG.standard_normal((1, S, E)).astype(np.float32)
    plain, causal = (tessera.Model.from_onnx(attention(c)) for c in (False, True))
    assert np.max(np.abs(plain.plaintext(x[0], fixed=False)
                         - causal.plaintext(x[0], fixed=False))) > 1e-2


def test_a_batch_axis_that_is_not_1_stays_the_batch():
    """A graph that moves its batch axis is read only for a batch of 1."""
    data = attention(False)
    model = onnx.load_from_string(data)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2
    with pytest.raises(tessera.InvalidInput, match="keep the batch axis first"):
        tessera.Model.from_onnx(model.SerializeToString())
