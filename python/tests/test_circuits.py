"""Two-party circuits from Python: FIPS-197 AES-128 and SHA-256("abc") in Yao, B and β."""

import hashlib

import pytest

import tessera

KEY = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
PLAIN = bytes.fromhex("00112233445566778899aabbccddeeff")
CIPHER = bytes.fromhex("69c4e0d86a7b0430d8cdb78070b4c55a")


def test_aes128_info_and_plaintext():
    c = tessera.Circuit.load("aes128")
    info = c.info()
    assert info["inputs"] == [128, 128] and info["outputs"] == [128] and info["and"] == 6400
    assert c.eval([KEY, PLAIN]) == [CIPHER]
    assert c.eval([KEY.hex(), PLAIN.hex()]) == [CIPHER]


@pytest.mark.parametrize("protocol", ["yao", "b", "beta"])
def test_aes128_fips197_in_every_protocol(protocol):
    assert tessera.Circuit.load("aes128").simulate([KEY, PLAIN], protocol=protocol) == [CIPHER]


IV = bytes.fromhex("6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19")


def sha256_block(message: bytes) -> bytes:
    """One padded 512-bit block of a message of at most 55 bytes."""
    length = (8 * len(message)).to_bytes(8, "big")
    return message + b"\x80" + bytes(55 - len(message)) + length


@pytest.mark.parametrize("protocol", ["yao", "b", "beta"])
def test_sha256_abc_in_every_protocol(protocol):
    # The compression function of one block from SHA-256's initial chaining value.
    c = tessera.Circuit.load("sha256")
    assert c.info()["inputs"] == [512, 256]
    inputs = [sha256_block(b"abc"), IV]
    assert c.eval(inputs) == [hashlib.sha256(b"abc").digest()]
    assert c.simulate(inputs, protocol=protocol) == [hashlib.sha256(b"abc").digest()]


RUNNER = """
import sys, tessera
c = tessera.Circuit.load("aes128")
out = c.run(bytes.fromhex(sys.argv[1]), connect=sys.argv[2], protocol=sys.argv[3])
print(out[0].hex(), flush=True)
"""


@pytest.mark.parametrize("protocol", ["yao", "b", "beta"])
def test_two_processes_run_aes128(protocol):
    import subprocess
    import sys
    import threading

    import socket

    c = tessera.Circuit.load("aes128")
    # Party 0 listens on a free port the test picks first.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    address = "%s:%d" % s.getsockname()
    s.close()
    result = {}
    t = threading.Thread(target=lambda: result.update(out=c.run(KEY, listen=address, protocol=protocol)))
    t.start()
    other = subprocess.run(
        [sys.executable, "-c", RUNNER, PLAIN.hex(), address, protocol],
        capture_output=True, text=True, timeout=60,
    )
    t.join()
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == CIPHER.hex()
    assert result["out"] == [CIPHER]


def test_python_with_the_command_line(tmp_path):
    import os
    import pathlib
    import socket
    import subprocess
    import threading

    root = pathlib.Path(__file__).resolve().parents[2]
    binary = os.environ.get("TESSERA_BIN", str(root / "target" / "release" / "tessera"))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    address = "%s:%d" % s.getsockname()
    s.close()
    c = tessera.Circuit.load("aes128")
    result = {}
    t = threading.Thread(
        target=lambda: result.update(out=c.run(KEY, listen=address, protocol="beta", reveal="connector"))
    )
    t.start()
    cli = subprocess.run(
        [binary, "mpc", "run", "--protocol", "beta", "--connect", address, "--circuit", "aes128",
         "--input", PLAIN.hex(), "--output", "connector"],
        capture_output=True, text=True, timeout=60,
    )
    t.join()
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.strip() == CIPHER.hex()
    assert result["out"] is None


def test_run_names_its_mistakes():
    c = tessera.Circuit.load("aes128")
    with pytest.raises(tessera.InvalidInput, match="one of listen"):
        c.run(KEY)
    with pytest.raises(tessera.InvalidInput, match="reveal"):
        c.run(KEY, connect="127.0.0.1:1", reveal="nobody")
    with pytest.raises(tessera.InvalidInput, match="input"):
        c.run(bytes(3), connect="127.0.0.1:1")


def test_inputs_as_numpy_bit_arrays():
    import numpy as np

    c = tessera.Circuit.load("aes128")

    def bits(value):
        # Bit k of the value at index k: bit k mod 8 of byte k div 8.
        return np.unpackbits(np.frombuffer(value, np.uint8), bitorder="little")

    assert c.eval([bits(KEY), bits(PLAIN).astype(bool)]) == [CIPHER]
    assert c.simulate([bits(KEY), PLAIN], protocol="b") == [CIPHER]
    with pytest.raises(tessera.InvalidInput, match="0 or 1"):
        c.eval([bits(KEY) * 2, PLAIN])
    with pytest.raises(tessera.InvalidInput, match="127 bits"):
        c.eval([bits(KEY)[:127], PLAIN])


@pytest.mark.parametrize("parties", [2, 3])
def test_aes128_actively_secure_among_parties(parties):
    c = tessera.Circuit.load("aes128")
    assert c.simulate([KEY, PLAIN], protocol="ag", parties=parties) == [CIPHER]


def test_authenticated_garbling_names_its_mistakes():
    c = tessera.Circuit.load("aes128")
    with pytest.raises(tessera.InvalidInput, match="parties=17"):
        c.simulate([KEY, PLAIN], protocol="ag", parties=17)
    with pytest.raises(tessera.InvalidInput, match="two parties"):
        c.simulate([KEY, PLAIN], protocol="b", parties=3)
