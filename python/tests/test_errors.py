"""Bad inputs raise the package's named exceptions, naming what is wrong; never a crash."""

import numpy as np
import pytest

import tessera


def test_the_hierarchy():
    for e in (tessera.InvalidInput, tessera.PeerAborted, tessera.ProtocolError, tessera.Timeout):
        assert issubclass(e, tessera.Error)
    assert issubclass(tessera.UnsupportedOperator, tessera.InvalidInput)


@pytest.mark.parametrize(
    "x, words",
    [
        (np.zeros(5, dtype=np.float32), r"shape \[5\]; the model takes inputs of shape \[1, 28, 28\]"),
        (np.zeros((2, 700), dtype=np.float32), r"shape \[2, 700\]"),
        (np.full(784, np.nan, dtype=np.float32), "NaN"),
        (np.full(784, np.inf), "inf"),
        (np.zeros(784, dtype=np.int64), "float32, float64 or uint8"),
        ([0.0] * 784, "numpy array"),
    ],
)
def test_wrong_inputs_are_named(minionn, x, words):
    with pytest.raises(tessera.InvalidInput, match=words):
        minionn.simulate(x)


def test_wrong_options_are_named(minionn, mnist):
    x = mnist[0][0]
    for kwargs, words in [
        ({"protocol": "a+z"}, "a\\+b, a\\+y, alpha\\+beta, alpha\\+y"),
        ({"bits": 48}, "bits=48"),
        ({"reveal": "all"}, "reveal"),
        ({"normalise": "0,0"}, "normalise"),
    ]:
        with pytest.raises(tessera.InvalidInput, match=words):
            minionn.simulate(x, **kwargs)


def test_missing_and_corrupt_files_are_named(tmp_path):
    with pytest.raises(tessera.InvalidInput, match="nothing.onnx"):
        tessera.Model.from_onnx(tmp_path / "nothing.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    with pytest.raises(tessera.InvalidInput, match="bad.onnx"):
        tessera.Model.from_onnx(bad)
    with pytest.raises(tessera.InvalidInput, match="from_onnx takes"):
        tessera.Model.from_onnx(42)
    with pytest.raises(tessera.InvalidInput, match="nothing.txt"):
        tessera.Circuit.load(str(tmp_path / "nothing.txt"))


def test_an_unsupported_operator_names_the_node():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    node = helper.make_node("Sin", ["x"], ["y"], name="the_sin")
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]))
    with pytest.raises(tessera.UnsupportedOperator, match="the_sin.*Sin"):
        tessera.Model.from_onnx(model)


def test_circuit_inputs_are_checked():
    c = tessera.Circuit.load("aes128")
    with pytest.raises(tessera.InvalidInput, match="1 inputs"):
        c.eval([bytes(16)])
    with pytest.raises(tessera.InvalidInput, match="input 1"):
        c.simulate([bytes(16), bytes(3)])
    with pytest.raises(tessera.InvalidInput, match="protocol"):
        c.simulate([bytes(16), bytes(16)], protocol="gmw3")


def test_from_torch_without_torch_says_what_to_do():
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(tessera.InvalidInput, match="needs PyTorch"):
            tessera.Model.from_torch(object(), None)
        return
    pytest.skip("PyTorch is installed: test_models covers from_torch")
