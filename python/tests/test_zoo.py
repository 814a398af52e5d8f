"""The zoo's deep networks as `tessera nn zoo write` gives them: onnxruntime reads each, and
Tessera's float and fixed-point references agree with it (full size: seconds, no secure run)."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import tessera

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEEP = ["resnet50", "squeezenet1.1", "squeezenet-cifar", "densenet121", "mobilenetv2",
        "mobilenetv3-small", "efficientnet-b0", "resnet32-cifar"]


def cli():
    return os.environ.get("TESSERA_BIN", str(ROOT / "target" / "release" / "tessera"))


@pytest.mark.parametrize("name", DEEP + [n + "-small" for n in DEEP])
def test_zoo_networks_agree_with_onnxruntime(name, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    path = tmp_path / f"{name}.onnx"
    run = subprocess.run([cli(), "nn", "zoo", "write", name, "-o", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model = tessera.Model.from_onnx(path)
    given = session.get_inputs()[0]
    x = np.random.default_rng(3).uniform(-1, 1, given.shape).astype(np.float32)
    (want,) = session.run(None, {given.name: x})
    want = want.reshape(-1)
    scale = 1 + np.max(np.abs(want))
    assert np.max(np.abs(model.plaintext(x[0], fixed=False) - want)) < 1e-3 * scale
    fixed = model.plaintext(x[0], bits=64, frac=16)
    assert np.max(np.abs(fixed - want)) < 0.02 * scale and np.argmax(fixed) == np.argmax(want)
