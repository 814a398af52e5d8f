"""What the Python layer adds: MiniONN-MNIST through ``Model.simulate`` against ``tessera nn
bench`` (both parties in one process, their sessions kept across samples), and through
``Server``/``infer`` (two processes over loopback TCP, a connection and a session per inference)
against ``tessera nn run`` server and client processes (the same), alternated round by round
in the same run.
Prints one JSON line per round and a summary: medians of setup and online time and their
ratios to the command line's.

    python benches/overhead.py [--rounds 5] [--samples 5] [--protocol a+b] [--bin target/release/tessera]
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys

import numpy as np

import tessera

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "data" / "nn" / "minionn-mnist-b.onnx"
IMAGES = ROOT / "data" / "nn" / "mnist-t10k-16-images.idx3-ubyte"

SERVER = """
import sys, tessera
m = tessera.Model.from_onnx(sys.argv[1])
s = tessera.Server(m, "127.0.0.1:0", protocol=sys.argv[2])
print(s.address, flush=True)
for _ in range(int(sys.argv[3])):
    s.serve()
"""


def cli_bench(binary, protocol, samples):
    out = subprocess.run(
        [binary, "nn", "bench", "--model", str(MODEL), "--protocol", protocol,
         "--samples", str(samples), "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    j = json.loads(out.strip().splitlines()[-1])
    return j["setup_ms"], j["online_ms"]


def cli_remote(binary, protocol, samples):
    runs = []
    for _ in range(samples + 1):
        server = subprocess.Popen(
            [binary, "nn", "run", "--role", "server", "--listen", "127.0.0.1:0",
             "--model", str(MODEL), "--protocol", protocol],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        address = server.stderr.readline().split("listening on ")[1].strip()
        out = subprocess.run(
            [binary, "nn", "run", "--role", "client", "--connect", address, "--model", str(MODEL),
             "--input", str(IMAGES), "--index", "0", "--protocol", protocol, "--json"],
            capture_output=True, text=True, check=True,
        ).stdout
        server.wait()
        runs.append(json.loads(out))
    runs = runs[1:]
    return (statistics.median(r["setup_ms"] for r in runs),
            statistics.median(r["online_ms"] for r in runs))


def simulate(model, x, protocol, samples):
    runs = [model.simulate(x, protocol=protocol)[1] for _ in range(samples + 1)][1:]
    return (statistics.median(r["setup_ms"] for r in runs),
            statistics.median(r["online_ms"] for r in runs))


def remote(model, x, protocol, samples):
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(MODEL), protocol, str(samples + 1)],
        stdout=subprocess.PIPE, text=True,
    )
    address = server.stdout.readline().strip()
    arch = model.strip()
    runs = [tessera.infer(arch, x, connect=address, protocol=protocol)[1]
            for _ in range(samples + 1)][1:]
    server.wait()
    return (statistics.median(r["setup_ms"] for r in runs),
            statistics.median(r["online_ms"] for r in runs))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--protocol", default="a+b")
    p.add_argument("--bin", default=str(ROOT / "target" / "release" / "tessera"))
    a = p.parse_args()
    model = tessera.Model.from_onnx(MODEL)
    x = np.frombuffer(IMAGES.read_bytes()[16:], np.uint8).reshape(-1, 28, 28)[0]
    rows = {"cli_bench": [], "simulate": [], "cli_run": [], "remote": []}
    for r in range(a.rounds):
        rows["cli_bench"].append(cli_bench(a.bin, a.protocol, a.samples))
        rows["simulate"].append(simulate(model, x, a.protocol, a.samples))
        rows["cli_run"].append(cli_remote(a.bin, a.protocol, a.samples))
        rows["remote"].append(remote(model, x, a.protocol, a.samples))
        print(json.dumps({"round": r, **{k: v[-1] for k, v in rows.items()}}))
    med = {k: (statistics.median(s for s, _ in v), statistics.median(o for _, o in v))
           for k, v in rows.items()}
    against = {"cli_bench": "cli_bench", "simulate": "cli_bench", "cli_run": "cli_run",
               "remote": "cli_run"}
    summary = {k: {"setup_ms": s, "online_ms": o,
                   "setup_ratio": s / med[against[k]][0], "online_ratio": o / med[against[k]][1]}
               for k, (s, o) in med.items()}
    print(json.dumps({"protocol": a.protocol, "rounds": a.rounds, "samples": a.samples,
                      "summary": summary}))


if __name__ == "__main__":
    main()
