"""The models in ../shared/models on the first 100 MNIST test digits: private inference (one
batch of 25 at a time) within the truncation error of the fixed-point reference and of the
same class, and the fixed-point class that of onnxruntime on the float model. Runs where
TESSERA_SHARED names the shared folder (the extra step of .ci/run, with onnxruntime
installed); the README's test command leaves it out, as the clone alone lacks the files."""

import os
import pathlib

import numpy as np
import pytest

import tessera

SHARED = os.environ.get("TESSERA_SHARED")
pytestmark = pytest.mark.skipif(not SHARED, reason="TESSERA_SHARED is not set")

MNIST_MODELS = [
    "minionn-ssgaalto/S_opset13.onnx",
    "minionn-ssgaalto/R_S_opset13.onnx",
    "minionn-ssgaalto/R2_S_opset13.onnx",
    "crypten-derived/crypten_tfe_networkA_mnist.onnx",
    "crypten-derived/crypten_tfe_networkB_minionn_mnist.onnx",
    "crypten-derived/crypten_tfe_networkC_lenet_mnist.onnx",
]


def digits(n=100):
    root = pathlib.Path(SHARED) / "datasets" / "mnist"
    images = np.frombuffer((root / "t10k-images.idx3-ubyte").read_bytes()[16:], np.uint8)
    labels = np.frombuffer((root / "t10k-labels.idx1-ubyte").read_bytes()[8:], np.uint8)
    return images.reshape(-1, 28, 28)[:n], labels[:n]


@pytest.mark.parametrize("name", MNIST_MODELS)
def test_shared_model_private_equals_fixed_and_onnxruntime(name):
    ort = pytest.importorskip("onnxruntime")
    path = pathlib.Path(SHARED) / "models" / name
    model = tessera.Model.from_onnx(path)
    images, _ = digits()
    fixed = model.plaintext(images, normalise="mnist")
    secure = np.concatenate(
        [model.simulate(images[k : k + 25], normalise="mnist")[0] for k in range(0, 100, 25)]
    )
    assert np.max(np.abs(secure - fixed)) < 0.05, name
    assert (np.argmax(secure, 1) == np.argmax(fixed, 1)).all(), name
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = ((images.astype(np.float32) / 255.0 - 0.1307) / 0.3081).reshape(-1, 1, 28, 28)
    want = session.run(None, {session.get_inputs()[0].name: x})[0]
    agree = (np.argmax(want, 1) == np.argmax(fixed, 1)).mean()
    assert agree >= 0.99, f"{name}: fixed point and onnxruntime agree on {agree:.0%}"
