"""Private inference from Python against the fixed-point reference the protocols compute."""

import numpy as np
import pytest

import tessera

PROTOCOLS = ["a+b", "a+y", "alpha+beta", "alpha+y"]


def test_info_names_layers_and_estimates_every_protocol(minionn):
    info = minionn.info()
    assert [l["op"] for l in info["layers"]][:2] == ["Conv", "Relu"]
    assert info["input_shape"] == [1, 28, 28] and info["output_len"] == 10
    for p in PROTOCOLS:
        e = info["estimates"][p]
        assert e["setup_bytes"] > e["online_bytes"] > 0 and e["online_rounds"] > 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_simulate_equals_fixed_point_within_the_truncation_error(minionn, mnist, protocol):
    images, labels = mnist
    for i in range(2):
        want = minionn.plaintext(images[i])
        got, report = minionn.simulate(images[i], protocol=protocol)
        assert got.dtype == np.float32 and got.shape == (10,)
        assert np.max(np.abs(got - want)) < 0.05, (protocol, i, got, want)
        assert np.argmax(got) == np.argmax(want) == labels[i]
        assert report["setup_ms"] > 0 and report["online_bytes"] > 0
        assert [l["op"] for l in report["layers"]][0] == "Input"


def test_ferret_on_one_thread_equals_fixed_point_and_sends_less(minionn, mnist):
    images, labels = mnist
    want = minionn.plaintext(images[0])
    got, ferret = minionn.simulate(images[0], ot="ferret", threads=1)
    assert np.max(np.abs(got - want)) < 0.05 and np.argmax(got) == labels[0]
    _, softspoken = minionn.simulate(images[0], threads=2)
    assert ferret["setup_bytes"] < softspoken["setup_bytes"]
    with pytest.raises(tessera.InvalidInput, match="ot="):
        minionn.simulate(images[0], ot="iknp")


def test_linear_layers_by_he_and_ot_equal_fixed_point(minionn, mnist):
    images, labels = mnist
    want = minionn.plaintext(images[0])
    reports = {}
    for linear in ["he", "ot"]:
        for bits, frac in [(32, 10), (64, 13)]:
            got, report = minionn.simulate(images[0], bits=bits, frac=frac, linear=linear)
            assert np.max(np.abs(got - want)) < 0.05, (linear, bits, got, want)
            assert np.argmax(got) == labels[0]
            reports[linear, bits] = report
    # Homomorphic convolutions send a small part of Gilboa's products' bytes.
    conv = lambda r: sum(l["setup_bytes"] for l in r["layers"] if l["op"] == "Conv")
    assert 10 * conv(reports["he", 32]) < conv(reports["ot", 32])
    with pytest.raises(tessera.InvalidInput, match="linear="):
        minionn.simulate(images[0], linear="fhe")


def test_signs_by_millionaires_and_circuits_equal_fixed_point(minionn, mnist):
    images, labels = mnist
    want = minionn.plaintext(images[0])
    total = {}
    for nonlinear in ["millionaire", "circuit"]:
        got, report = minionn.simulate(images[0], nonlinear=nonlinear)
        assert np.max(np.abs(got - want)) < 0.05, (nonlinear, got, want)
        assert np.argmax(got) == labels[0]
        total[nonlinear] = report["setup_bytes"] + report["online_bytes"]
    # The millionaires' protocol sends fewer bytes than GMW's sign circuit.
    assert total["millionaire"] < total["circuit"], total
    methods = {p: e["nonlinear"] for p, e in minionn.info()["estimates"].items()}
    assert methods == {"a+b": "millionaire", "a+y": "circuit", "alpha+beta": "circuit", "alpha+y": "circuit"}
    with pytest.raises(tessera.InvalidInput, match="nonlinear="):
        minionn.simulate(images[0], nonlinear="yao")


def test_truncation_is_chosen_alike_and_checked(minionn, mnist):
    images, labels = mnist
    assert minionn.info()["estimates"]["a+b"]["truncation"] == "exact"
    local, local_report = minionn.simulate(images[0], bits=64, frac=13, truncation="local")
    exact, exact_report = minionn.simulate(images[0], bits=64, frac=13, truncation="exact")
    assert np.argmax(local) == np.argmax(exact) == labels[0]
    assert np.max(np.abs(local - exact)) < 0.05
    # Exact truncation takes a round of its own after each ReLU.
    assert exact_report["online_rounds"] > local_report["online_rounds"]
    with pytest.raises(tessera.InvalidInput, match="truncation="):
        minionn.simulate(images[0], truncation="round")
    with pytest.raises(tessera.InvalidInput, match="local truncation at"):
        minionn.simulate(images[0], truncation="local")


def test_float_and_uint8_inputs_agree(minionn, mnist):
    images, _ = mnist
    scaled = (images[0].astype(np.float32) / 255.0 - 0.1307) / 0.3081
    assert np.array_equal(minionn.plaintext(scaled), minionn.plaintext(images[0], normalise="mnist"))
    assert np.allclose(minionn.plaintext(scaled, fixed=False), minionn.plaintext(images[0], fixed=False))


def test_a_batch_runs_as_one_inference(minionn, mnist):
    images, labels = mnist
    got, report = minionn.simulate(images[:4], protocol="alpha+beta")
    assert got.shape == (4, 10)
    assert list(np.argmax(got, axis=1)) == list(labels[:4])
    want = minionn.plaintext(images[:4])
    assert want.shape == (4, 10) and np.max(np.abs(got - want)) < 0.05


def test_reveal_class_gives_only_the_class(minionn, mnist):
    images, labels = mnist
    got, _ = minionn.simulate(images[3], reveal="class")
    assert got.shape == (1,) and int(got[0]) == labels[3]


def test_strip_keeps_the_architecture_not_the_weights(minionn):
    arch = minionn.strip()
    assert not arch.info()["has_weights"]
    assert [l["op"] for l in arch.info()["layers"]] == [l["op"] for l in minionn.info()["layers"]]



def test_from_bytes_equals_from_path(minionn, mnist):
    from conftest import DATA

    raw = (DATA / "nn" / "minionn-mnist-b.onnx").read_bytes()

    class Proto:
        def SerializeToString(self):
            return raw

    for m in (tessera.Model.from_onnx(raw), tessera.Model.from_onnx(Proto())):
        assert np.array_equal(m.plaintext(mnist[0][5]), minionn.plaintext(mnist[0][5]))


def test_from_torch_exports_and_loads_a_module(mnist):
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(784, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10)
    )
    model = tessera.Model.from_torch(net, torch.zeros(1, 1, 28, 28))
    x = mnist[0][0].astype(np.float32) / 255.0
    with torch.no_grad():
        want = net(torch.from_numpy(x).reshape(1, 1, 28, 28)).numpy()[0]
    assert np.max(np.abs(model.plaintext(x, fixed=False) - want)) < 1e-4
    got, _ = model.simulate(x)
    assert np.max(np.abs(got - want)) < 0.05


def test_from_torch_exports_convolutions_pooling_and_batch_norm(mnist):
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 5, stride=2, padding=2),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 7 * 7, 10),
    )
    # Statistics of its own, as after training.
    net.train()
    with torch.no_grad():
        net(torch.randn(64, 1, 28, 28))
    net.eval()
    model = tessera.Model.from_torch(net, torch.zeros(1, 1, 28, 28))
    x = mnist[0][1].astype(np.float32) / 255.0
    with torch.no_grad():
        want = net(torch.from_numpy(x).reshape(1, 1, 28, 28)).numpy()[0]
    assert np.max(np.abs(model.plaintext(x, fixed=False) - want)) < 1e-3
    got, _ = model.simulate(x)
    assert np.max(np.abs(got - want)) < 0.05
