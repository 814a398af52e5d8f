"""Shared fixtures: the repository's reference data (data/, sources in its SOURCE.txt files),
and a check that the tests run against the installed package, not the source tree."""

import pathlib

import numpy as np
import pytest

import tessera

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"


def pytest_configure(config):
    native = pathlib.Path(tessera._tessera.__file__)
    assert "site-packages" in native.parts, f"tessera imported from {native}, not an installed wheel"


def idx(path, header):
    return np.frombuffer(path.read_bytes()[header:], dtype=np.uint8)


@pytest.fixture(scope="session")
def mnist():
    """The first 16 MNIST test digits (28x28 uint8) and their labels."""
    images = idx(DATA / "nn" / "mnist-t10k-16-images.idx3-ubyte", 16).reshape(-1, 28, 28)
    labels = idx(DATA / "nn" / "mnist-t10k-16-labels.idx1-ubyte", 8)
    return images, labels


@pytest.fixture(scope="session")
def minionn():
    """MiniONN-MNIST's shapes (CrypTen's network B), trained weights."""
    return tessera.Model.from_onnx(DATA / "nn" / "minionn-mnist-b.onnx")
