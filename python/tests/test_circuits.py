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
