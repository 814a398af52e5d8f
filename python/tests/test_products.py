"""Products of computed tensors and the operators around them (issue 60, item 1), each in a
graph of its own written by onnx's helper: tessera's float reference equals onnxruntime's on
random inputs, and private inference equals fixed point."""

import numpy as np
import pytest

import tessera

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(60)
# Private against fixed point: truncations a unit off, carried through a product or a sum.
TRUNCATION = 0.05
# An input of any batch size.
BATCH = ("N", 2, 4, 4)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def reals(name, values):
    return numpy_helper.from_array(np.array(values, np.float32), name)


def graph(nodes, inits=(), shape=(1, 2, 4, 4), opset=13):
    """`nodes` on x of `shape`, their last output flattened to the graph's output."""
    nodes = list(nodes) + [helper.make_node("Flatten", [nodes[-1].output[0]], ["y"], name="flat")]
    g = helper.make_graph(
        nodes,
        "products",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None])],
        list(inits),
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def node(op, inputs, output, **attributes):
    return helper.make_node(op, inputs, [output], name=output, **attributes)


CASES = {
    # Squeeze-excite's scale: each channel times its mean.
    "mul broadcast": graph([
        node("ReduceMean", ["x"], "m", axes=[2, 3], keepdims=1),
        node("Mul", ["x", "m"], "p"),
    ]),
    # HardSwish as MobileNetV3's PyTorch export writes it before opset 14: x·clip(x/6 + 0.5).
    "hard swish": graph([
        node("Div", ["x", "six"], "d"),
        node("Add", ["d", "half"], "a"),
        node("Clip", ["a", "zero", "one"], "h"),
        node("Mul", ["x", "h"], "p"),
    ], [reals("six", 6.0), reals("half", 0.5), reals("zero", 0.0), reals("one", 1.0)]),
    "mul by channel constants": graph([
        node("Mul", ["x", "k"], "p"),
    ], [reals("k", [[[0.5]], [[-1.5]]])]),
    "neg and square": graph([
        node("Neg", ["x"], "n"),
        node("Mul", ["n", "x"], "p"),
    ]),
    "reductions": graph([
        node("ReduceSum", ["x", "axes"], "s", keepdims=0),
        node("ReduceMax", ["x"], "m", axes=[-1], keepdims=0),
        node("Add", ["s", "m"], "p"),
    ], [ints("axes", [3])]),
    "slice": graph([
        node("Slice", ["x", "starts", "ends", "axes", "steps"], "s"),
    ], [ints("starts", [3, 1]), ints("ends", [-100, 4]), ints("axes", [2, 3]),
        ints("steps", [-2, 2])]),
    "gather and expand": graph([
        node("Gather", ["x", "i"], "g", axis=2),
        node("ReduceMean", ["g"], "m", axes=[1], keepdims=1),
        node("Expand", ["m", "to"], "e"),
        node("Sub", ["e", "g"], "p"),
    ], [ints("i", [[3, 0], [1, 1]]), ints("to", [1, 2, 2, 2, 4])]),
    "unsqueeze and squeeze": graph([
        node("Unsqueeze", ["x", "a1"], "u"),
        node("ReduceMax", ["u"], "m", axes=[2], keepdims=1),
        node("Squeeze", ["m", "a1"], "s"),
        node("Mul", ["s", "x"], "p"),
    ], [ints("a1", [1])]),
    # Split into unequal parts (opset 13's input), equal parts (opset 18's num_outputs).
    "split": graph([
        helper.make_node("Split", ["x", "sizes"], ["s0", "s1"], name="split", axis=3),
        node("Mul", ["s0", "s1"], "p"),
    ], [ints("sizes", [1, 3])]),
    "split equally": graph([
        helper.make_node("Split", ["x"], ["s0", "s1"], name="split", axis=1, num_outputs=2),
        node("Sub", ["s0", "s1"], "p"),
    ], opset=18),
    # Attention's causal mask as torch.nn.functional.scaled_dot_product_attention writes it:
    # Where(mask, -inf, scores) before a Softmax.
    "where mask before softmax": graph([
        node("Where", ["causal", "minus_inf", "x"], "w"),
        node("Softmax", ["w"], "p", axis=-1),
    ], [numpy_helper.from_array(np.triu(np.ones((4, 4), bool), 1), "causal"),
        reals("minus_inf", -np.inf)]),
    "where of two computed": graph([
        node("Neg", ["x"], "n"),
        node("Where", ["checker", "x", "n"], "p"),
    ], [numpy_helper.from_array((np.indices((2, 1, 4)).sum(0) % 2).astype(bool), "checker")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float_reference_equals_onnxruntime(name):
    ort = pytest.importorskip("onnxruntime")
    data = CASES[name]
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    model = tessera.Model.from_onnx(data)
    for _ in range(3):
        x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        got = model.plaintext(x[0], fixed=False)
        assert np.max(np.abs(got - want[0])) < 1e-5, name


# Softmax's exp and reciprocal need ℓ = 64: at ℓ = 32 they are refused.
WIDE = {"where mask before softmax"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_private_equals_fixed_point(name):
    model = tessera.Model.from_onnx(CASES[name])
    x = RNG.standard_normal((2, 4, 4)).astype(np.float32)
    ring = {"bits": 64, "frac": 16} if name in WIDE else {}
    fixed = model.plaintext(x, **ring)
    assert np.max(np.abs(fixed - model.plaintext(x, fixed=False))) < 0.05, name
    for protocol in ["a+b", "alpha+y"]:
        got, _ = model.simulate(x, protocol=protocol, **ring)
        assert np.max(np.abs(got - fixed)) < TRUNCATION, (name, protocol)
    if name in WIDE:
        with pytest.raises(tessera.InvalidInput, match="--bits 64"):
            model.simulate(x, protocol="a+b")


def test_products_that_do_not_fit_are_named():
    cases = [
        (graph([node("Div", ["one", "x"], "d")], [reals("one", 1.0)]), "divides a constant"),
        (graph([node("Div", ["x", "z"], "d")], [reals("z", [0.0, 1.0, 2.0, 3.0])]), "divides by zero"),
        # (Along a batch axis of 1, these would be the sample's: the batch here is N.)
        (graph([node("ReduceMean", ["x"], "m", axes=[0])], shape=BATCH), "not the batch"),
        (graph([node("Squeeze", ["x"], "s")]), "name the axes"),
        (graph([node("Squeeze", ["x", "a"], "s")], [ints("a", [2])]), "squeezes axis 2 of size 4"),
        (graph([node("Slice", ["x", "b", "e", "a"], "s")], [ints("b", [0]), ints("e", [0]),
                                                            ints("a", [0])], shape=BATCH),
         "batch"),
        (graph([node("Gather", ["x", "i"], "g", axis=3)], [ints("i", [4])]), "outside"),
        (graph([node("Mul", ["x", "s"], "p")], [reals("s", np.ones((3,), np.float32))]),
         "does not broadcast"),
        (graph([helper.make_node("Split", ["x", "sizes"], ["s0", "s1"], name="s", axis=3),
                node("Add", ["s0", "s1"], "p")], [ints("sizes", [1, 2])]), "summing to 4"),
        (graph([helper.make_node("Split", ["x"], ["s0", "s1"], name="s", axis=0),
                node("Add", ["s0", "s1"], "p")], shape=BATCH), "batch axis"),
        (graph([node("Where", ["x", "x", "x"], "w")]), "condition is computed"),
        # Folding is held to 2^20 elements, whatever the file asks for.
        (graph([node("ConstantOfShape", ["huge"], "z"), node("Add", ["x", "z"], "p")],
               [ints("huge", [1 << 15, 1 << 15])]), "at most 1048576"),
        (graph([node("Mod", ["seven", "zero_i"], "m"), node("Reshape", ["x", "m"], "p")],
               [ints("seven", [7]), ints("zero_i", [0])]), "divide by zero"),
        (graph([node("Where", ["c", "x", "x"], "w")],
               [numpy_helper.from_array(np.ones((3,), bool), "c")]), "does not broadcast"),
    ]
    for data, message in cases:
        with pytest.raises(tessera.InvalidInput, match=message):
            tessera.Model.from_onnx(data)


def test_an_input_of_another_shape_is_refused_naming_both(minionn, mnist):
    images, _ = mnist
    x = np.zeros((1, 3, 28, 28), np.float32)
    with pytest.raises(tessera.InvalidInput, match=r"\[1, 3, 28, 28\].*\[1, 28, 28\]"):
        minionn.plaintext(x)
    with pytest.raises(tessera.InvalidInput, match=r"\[2, 2, 28, 28\]"):
        minionn.simulate(np.zeros((2, 2, 28, 28), np.float32))
    # The sample's shape with or without its axes of 1, flattened, or stacked on a leading axis.
    one = minionn.plaintext(images[0])
    assert np.array_equal(minionn.plaintext(images[0][None]), one)
    assert np.array_equal(minionn.plaintext(images[0].reshape(-1)), one)
    assert minionn.plaintext(images[:2, None]).shape == (2, 10)
    assert minionn.plaintext(images[:2]).shape == (2, 10)
