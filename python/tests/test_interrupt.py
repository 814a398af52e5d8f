"""Ctrl-C stops a run: the caller gets KeyboardInterrupt promptly, the peer is told its user
stopped the run, and the next run works."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tessera
from conftest import DATA

MODEL = DATA / "nn" / "minionn-mnist-b.onnx"


@pytest.fixture(autouse=True)
def ctrl_c_raises():
    """SIGINT as Python's KeyboardInterrupt for each test, whatever the process inherited (a
    shell starts its background jobs with SIGINT ignored, and Python then leaves it so)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def interrupt_after(seconds):
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_stops_a_simulation_and_the_next_one_runs(minionn, mnist):
    images, labels = mnist
    batch = np.repeat(images[:1], 16, axis=0)
    start = time.monotonic()
    timer = interrupt_after(0.2)
    with pytest.raises(KeyboardInterrupt):
        minionn.simulate(batch, protocol="a+b")
    timer.join()
    assert time.monotonic() - start < 5
    got, _ = minionn.simulate(images[0])
    assert np.argmax(got) == labels[0]


SERVER = """
import sys, tessera
m = tessera.Model.from_onnx(sys.argv[1])
s = tessera.Server(m, "127.0.0.1:0", batch=16, timeout=20)
print(s.address, flush=True)
try:
    s.serve()
except tessera.Error as e:
    print(type(e).__name__, e, flush=True)
"""


def test_ctrl_c_at_the_client_tells_the_server(minionn, mnist):
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(MODEL)], stdout=subprocess.PIPE, text=True
    )
    address = server.stdout.readline().strip()
    batch = np.repeat(mnist[0][:1], 16, axis=0)
    timer = interrupt_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        tessera.infer(minionn.strip(), batch, connect=address)
    timer.join()
    out, _ = server.communicate(timeout=30)
    assert "PeerAborted" in out and "its user stopped the run" in out, out


def test_ctrl_c_stops_a_server_waiting_for_its_client(minionn):
    server = tessera.Server(minionn, "127.0.0.1:0", timeout=30)
    start = time.monotonic()
    timer = interrupt_after(0.3)
    with pytest.raises(KeyboardInterrupt):
        server.serve()
    timer.join()
    assert time.monotonic() - start < 5
