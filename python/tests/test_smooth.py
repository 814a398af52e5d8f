"""Smooth functions (issue 60, item 2), each in a graph of its own written by onnx's helper:
tessera's float reference computes the function itself and equals onnxruntime's; fixed point
(ℓ = 64, f = 16) runs CrypTen's methods within their stated error of it; private inference
equals fixed point."""

import numpy as np
import pytest

import tessera

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

RNG = np.random.default_rng(602)


def graph(nodes):
    nodes = list(nodes) + [helper.make_node("Flatten", [nodes[-1].output[0]], ["y"], name="flat")]
    g = helper.make_graph(
        nodes, "smooth",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def node(op, inputs, output):
    return helper.make_node(op, inputs, [output], name=output)


# Each case: the graph, how inputs are drawn, the method's error bound against float.
CASES = {
    "exp": (graph([node("Exp", ["x"], "e")]), lambda s: -4 * np.abs(RNG.standard_normal(s)), 4e-3),
    "sigmoid": (graph([node("Sigmoid", ["x"], "s")]), lambda s: 6 * RNG.standard_normal(s), 2e-3),
    "silu": (graph([node("Sigmoid", ["x"], "s"), node("Mul", ["x", "s"], "m")]),
             lambda s: 3 * RNG.standard_normal(s), 1e-2),
    "tanh": (graph([node("Tanh", ["x"], "t")]), lambda s: 3 * RNG.standard_normal(s), 3.5e-3),
    "reciprocal": (graph([node("Reciprocal", ["x"], "r")]),
                   lambda s: RNG.uniform(0.5, 100, s), 1e-4 * 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float_equals_onnxruntime_and_fixed_point_is_within_the_method(name):
    ort = pytest.importorskip("onnxruntime")
    data, draw, bound = CASES[name]
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    model = tessera.Model.from_onnx(data)
    x = draw((1, 2, 4, 4)).astype(np.float32)
    (want,) = session.run(None, {"x": x})
    assert np.max(np.abs(model.plaintext(x[0], fixed=False) - want[0]) / (1 + np.abs(want[0]))) < 1e-5
    fixed = model.plaintext(x[0], bits=64, frac=16)
    assert np.max(np.abs(fixed - want[0]) / (1 + np.abs(want[0]))) < bound, name


@pytest.mark.parametrize("name", sorted(CASES))
def test_private_equals_fixed_point(name):
    data, draw, _ = CASES[name]
    model = tessera.Model.from_onnx(data)
    x = draw((2, 4, 4)).astype(np.float32)
    fixed = model.plaintext(x, bits=64, frac=16)
    for protocol in ["a+b", "alpha+y"]:
        got, _ = model.simulate(x, protocol=protocol, bits=64, frac=16)
        assert np.max(np.abs(got - fixed) / (1 + np.abs(fixed))) < 1e-2, (name, protocol)
