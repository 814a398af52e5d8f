"""Smooth functions (issue 60, item 2), each in a graph of its own written by onnx's helper:
tessera's float reference computes the function itself and equals onnxruntime's; fixed point
(ℓ = 64, f = 16) runs CrypTen's methods within their stated error of it; private inference
equals fixed point."""

import numpy as np
import pytest

import tessera

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(602)


def graph(nodes, inits=(), opset=13):
    nodes = list(nodes) + [helper.make_node("Flatten", [nodes[-1].output[0]], ["y"], name="flat")]
    g = helper.make_graph(
        nodes, "smooth",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None])],
        list(inits),
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def node(op, inputs, output, **attributes):
    return helper.make_node(op, inputs, [output], name=output, **attributes)


def reals(name, values):
    return numpy_helper.from_array(np.array(values, np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


GAMMA = reals("gamma", 1 + RNG.standard_normal(4) / 4)
BETA = reals("beta", RNG.standard_normal(4) / 4)


# Each case: the graph, how inputs are drawn, the method's error bound against float.
CASES = {
    "exp": (graph([node("Exp", ["x"], "e")]), lambda s: -4 * np.abs(RNG.standard_normal(s)), 4e-3),
    "sigmoid": (graph([node("Sigmoid", ["x"], "s")]), lambda s: 6 * RNG.standard_normal(s), 2e-3),
    "silu": (graph([node("Sigmoid", ["x"], "s"), node("Mul", ["x", "s"], "m")]),
             lambda s: 3 * RNG.standard_normal(s), 1e-2),
    "tanh": (graph([node("Tanh", ["x"], "t")]), lambda s: 3 * RNG.standard_normal(s), 3.5e-3),
    "reciprocal": (graph([node("Reciprocal", ["x"], "r")]),
                   lambda s: RNG.uniform(0.5, 100, s), 1e-4 * 3),
    "softmax inside": (graph([node("Softmax", ["x"], "s", axis=2), node("Mul", ["s", "x"], "m")]),
                       lambda s: 3 * RNG.standard_normal(s), 1e-2),
    "layer norm": (graph([node("LayerNormalization", ["x", "gamma", "beta"], "n", axis=-1)],
                         [GAMMA, BETA], opset=17), lambda s: 2 * RNG.standard_normal(s), 5e-3),
    # As PyTorch exports LayerNorm before opset 17.
    "layer norm, decomposed": (graph([
        node("ReduceMean", ["x"], "mu", axes=[-1]),
        node("Sub", ["x", "mu"], "d"),
        node("Pow", ["d", "two"], "d2"),
        node("ReduceMean", ["d2"], "var", axes=[-1]),
        node("Add", ["var", "eps"], "ve"),
        node("Sqrt", ["ve"], "sd"),
        node("Div", ["d", "sd"], "n"),
        node("Mul", ["n", "gamma"], "g"),
        node("Add", ["g", "beta"], "b"),
    ], [GAMMA, BETA, reals("two", 2.0), reals("eps", 1e-5)]), lambda s: 2 * RNG.standard_normal(s), 5e-3),
    "gelu": (graph([node("Gelu", ["x"], "g")], opset=20), lambda s: 3 * RNG.standard_normal(s), 3e-3),
    "gelu, tanh form": (graph([node("Gelu", ["x"], "g", approximate="tanh")], opset=20),
                        lambda s: 3 * RNG.standard_normal(s), 3e-3),
    "erf": (graph([node("Erf", ["x"], "e")]), lambda s: RNG.standard_normal(s), 4e-3),
    "inverse square root": (graph([node("Pow", ["x", "p"], "r")], [reals("p", -0.5)]),
                            lambda s: RNG.uniform(0.1, 50, s), 3e-3),
    # x divided by 1 + (its rows' sums)²: a quotient of computed tensors, broadcast.
    "quotient": (graph([
        node("ReduceSum", ["x", "a"], "s", keepdims=1),
        node("Mul", ["s", "s"], "q"),
        node("Add", ["q", "one"], "d"),
        node("Div", ["x", "d"], "r"),
    ], [ints("a", [3]), reals("one", 1.0)]), lambda s: RNG.standard_normal(s), 1e-3),
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


def test_strip_keeps_a_pow_exponent_and_the_client_runs_with_the_server():
    data = CASES["layer norm, decomposed"][0]
    model = tessera.Model.from_onnx(data)
    arch = model.strip()
    assert arch.info()["layers"] == model.info()["layers"]
    server = tessera.Server(model, "127.0.0.1:0", timeout=20, bits=64, frac=16)
    import threading

    t = threading.Thread(target=lambda: server.serve(progress=False))
    t.start()
    x = 2 * RNG.standard_normal((2, 4, 4)).astype(np.float32)
    got, _ = tessera.infer(arch, x, connect=server.address, progress=False, bits=64, frac=16)
    t.join()
    fixed = model.plaintext(x, bits=64, frac=16)
    assert np.max(np.abs(got - fixed)) < 1e-2
