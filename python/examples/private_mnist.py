"""Classify MNIST digits privately, server and client in two terminals.

    python private_mnist.py server MODEL.onnx [--listen 127.0.0.1:7000]
    python private_mnist.py client MODEL.onnx --connect 127.0.0.1:7000 [--digit 3]

MODEL.onnx: the repository's data/nn/minionn-mnist-b.onnx, or a network trained and exported
here (``--train OUT.onnx``: a small PyTorch network on torchvision's MNIST, if both are
installed). The server holds the weights and learns nothing; the client holds the digit (from
data/nn's 16 test digits) and learns the logits; the client needs only the architecture
(``Model.strip()``), here read from the same file.
"""

import argparse
import pathlib

import numpy as np

import tessera

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "nn"


def digits():
    raw = (DATA / "mnist-t10k-16-images.idx3-ubyte").read_bytes()[16:]
    labels = (DATA / "mnist-t10k-16-labels.idx1-ubyte").read_bytes()[8:]
    return np.frombuffer(raw, np.uint8).reshape(-1, 28, 28), labels


def train(out):
    import inspect

    import torch
    import torchvision

    data = torchvision.datasets.MNIST(".", download=True, transform=torchvision.transforms.ToTensor())
    loader = torch.utils.data.DataLoader(data, batch_size=128, shuffle=True)
    net = torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    )
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    for x, y in loader:
        x = (x - 0.1307) / 0.3081
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    # Weights inside the file (recent PyTorch writes them beside it unless told otherwise).
    options = {}
    if "external_data" in inspect.signature(torch.onnx.export).parameters:
        options["external_data"] = False
    torch.onnx.export(net.eval(), torch.zeros(1, 1, 28, 28), out, **options)
    print(f"wrote {out}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["server", "client", "train"])
    p.add_argument("model")
    p.add_argument("--listen", default="127.0.0.1:7000")
    p.add_argument("--connect", default="127.0.0.1:7000")
    p.add_argument("--digit", type=int, default=0)
    p.add_argument("--protocol", default="a+b")
    a = p.parse_args()
    if a.role == "train":
        return train(a.model)
    model = tessera.Model.from_onnx(a.model)
    if a.role == "server":
        server = tessera.Server(model, a.listen, protocol=a.protocol)
        print(f"serving on {server.address}")
        report = server.serve()
        print(f"done: setup {report['setup_ms']:.0f} ms, online {report['online_ms']:.1f} ms")
    else:
        images, labels = digits()
        logits, report = tessera.infer(
            model.strip(), images[a.digit], connect=a.connect, protocol=a.protocol
        )
        print(f"digit {a.digit} (label {labels[a.digit]}): class {int(np.argmax(logits))}")
        print(f"setup {report['setup_ms']:.0f} ms, online {report['online_ms']:.1f} ms, "
              f"{report['online_rounds']} rounds")


if __name__ == "__main__":
    main()
