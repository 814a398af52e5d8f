"""Private inference between processes: Python with Python, and Python with `tessera nn run`
on either side; a peer set up for another computation, or gone, is named."""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import tessera
from conftest import DATA

MODEL = DATA / "nn" / "minionn-mnist-b.onnx"
IMAGES = DATA / "nn" / "mnist-t10k-16-images.idx3-ubyte"
ROOT = pathlib.Path(__file__).resolve().parents[2]

SERVER = """
import sys, tessera
m = tessera.Model.from_onnx(sys.argv[1])
s = tessera.Server(m, "127.0.0.1:0", protocol=sys.argv[2], timeout=20)
print(s.address, flush=True)
heard = []
r = s.serve(progress=lambda phase, done, total: heard.append(phase))
print("served", r["setup_bytes"] > 0, sorted(set(heard)), flush=True)
"""


def python_server(protocol="a+b"):
    p = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(MODEL), protocol],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return p, p.stdout.readline().strip()


def cli():
    """The command line built by the README's test command (cargo test builds it)."""
    path = pathlib.Path(os.environ.get("TESSERA_BIN", ROOT / "target" / "release" / "tessera"))
    assert path.exists(), f"{path}: build the command line first (cargo build --release)"
    return str(path)


def test_python_server_and_python_client(minionn, mnist):
    server, address = python_server("alpha+beta")
    arch = minionn.strip()
    heard = []
    got, report = tessera.infer(
        arch,
        mnist[0][2],
        connect=address,
        protocol="alpha+beta",
        progress=lambda phase, done, total: heard.append((phase, done == total)),
    )
    out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    # Both ends hear of both phases; the client's ends with the online phase done.
    assert "served True ['online', 'setup']" in out, out
    assert heard[0] == ("setup", False) and heard[-1] == ("online", True), heard
    want = minionn.plaintext(mnist[0][2])
    assert np.max(np.abs(got - want)) < 0.05 and np.argmax(got) == mnist[1][2]
    assert report["online_rounds"] > 0


def test_python_server_and_the_command_line_client(minionn):
    server, address = python_server()
    done = subprocess.run(
        [cli(), "nn", "run", "--role", "client", "--connect", address, "--model", str(MODEL),
         "--input", str(IMAGES), "--index", "4", "--json"],
        capture_output=True, text=True, timeout=60,
    )
    out, err = server.communicate(timeout=60)
    assert done.returncode == 0 and server.returncode == 0, (done.stderr, err)
    import json

    result = json.loads(done.stdout)
    want = minionn.plaintext(np.frombuffer(IMAGES.read_bytes()[16:], np.uint8).reshape(-1, 784)[4])
    assert result["class"] == int(np.argmax(want)) == 4


def test_command_line_server_and_python_client(minionn, mnist):
    server = subprocess.Popen(
        [cli(), "nn", "run", "--role", "server", "--listen", "127.0.0.1:0", "--model", str(MODEL),
         "--timeout", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    line = server.stderr.readline()
    address = re.search(r"listening on (\S+)", line).group(1)
    got, _ = tessera.infer(minionn.strip(), mnist[0][6], connect=address)
    server.communicate(timeout=60)
    assert server.returncode == 0
    assert np.argmax(got) == np.argmax(minionn.plaintext(mnist[0][6]))


def test_a_server_set_up_for_another_protocol_is_named(minionn, mnist):
    server, address = python_server("a+y")
    with pytest.raises(tessera.ProtocolError, match="another hybrid program|fingerprint"):
        tessera.infer(minionn.strip(), mnist[0][0], connect=address, protocol="a+b")
    server.communicate(timeout=60)
    assert server.returncode != 0


def test_a_server_that_hangs_up_is_named(minionn, mnist):
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    address = "%s:%d" % listener.getsockname()

    def hang_up():
        conn, _ = listener.accept()
        conn.close()

    t = threading.Thread(target=hang_up)
    t.start()
    with pytest.raises(tessera.ProtocolError):
        tessera.infer(minionn.strip(), mnist[0][0], connect=address, timeout=5)
    t.join()
    listener.close()


def test_nobody_listening_is_a_protocol_error_within_the_timeout(minionn, mnist):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    address = "%s:%d" % s.getsockname()
    s.close()
    with pytest.raises(tessera.ProtocolError, match="connecting"):
        tessera.infer(minionn.strip(), mnist[0][0], connect=address, timeout=1)


def test_a_server_needs_the_weights(minionn):
    with pytest.raises(tessera.InvalidInput, match="without weights"):
        tessera.Server(minionn.strip(), "127.0.0.1:0")
