"""Actively secure circuits across processes (authenticated garbling: KRRW18 between two,
WRK17b among more), Python with Python and with `tessera ag run` on either side."""

import os
import pathlib
import socket
import subprocess
import sys
import threading

import pytest

import tessera

KEY = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
PLAIN = bytes.fromhex("00112233445566778899aabbccddeeff")
CIPHER = bytes.fromhex("69c4e0d86a7b0430d8cdb78070b4c55a")
ROOT = pathlib.Path(__file__).resolve().parents[2]


def free_addresses(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    addresses = ["%s:%d" % s.getsockname() for s in socks]
    for s in socks:
        s.close()
    return addresses


def cli():
    return os.environ.get("TESSERA_BIN", str(ROOT / "target" / "release" / "tessera"))


def in_threads(runs):
    """Runs each zero-argument callable on its own thread; their results (or exceptions)."""
    results = [None] * len(runs)

    def call(k):
        try:
            results[k] = runs[k]()
        except Exception as e:  # noqa: BLE001 - handed back to the test
            results[k] = e

    threads = [threading.Thread(target=call, args=(k,)) for k in range(len(runs))]
    for t in threads:
        t.start()
    return threads, results


PARTY = """
import sys, tessera
c = tessera.Circuit.load("aes128")
me, addresses = int(sys.argv[1]), sys.argv[2].split(",")
value = bytes.fromhex(sys.argv[3]) if sys.argv[3] else None
out = c.run(value, protocol="ag", party=me, parties=addresses)
print(out[0].hex(), flush=True)
"""


def test_three_python_processes_compute_aes128():
    addresses = free_addresses(3)
    inputs = [KEY.hex(), PLAIN.hex(), ""]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PARTY, str(me), ",".join(addresses), inputs[me]],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me in range(3)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == CIPHER.hex()


def test_python_and_the_command_line_between_two_parties():
    c = tessera.Circuit.load("aes128")
    addresses = free_addresses(2)
    threads, results = in_threads(
        [lambda: c.run(KEY, protocol="ag", party=0, parties=addresses, reveal="connector")]
    )
    run = subprocess.run(
        [cli(), "ag", "run", "--party", "1", "--parties", ",".join(addresses), "--circuit",
         "aes128", "--input", PLAIN.hex(), "--output", "evaluator"],
        capture_output=True, text=True, timeout=120,
    )
    threads[0].join()
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == CIPHER.hex()
    assert results[0] is None


def test_the_command_line_with_two_python_parties():
    c = tessera.Circuit.load("aes128")
    addresses = free_addresses(3)
    cli_party = subprocess.Popen(
        [cli(), "ag", "run", "--party", "0", "--parties", ",".join(addresses), "--circuit",
         "aes128", "--input", KEY.hex(), "--cot", "kos"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    threads, results = in_threads([
        lambda: c.run(PLAIN, protocol="ag", party=1, parties=addresses, cot="kos"),
        lambda: c.run(None, protocol="ag", party=2, parties=addresses, cot="kos"),
    ])
    out, err = cli_party.communicate(timeout=120)
    for t in threads:
        t.join()
    assert cli_party.returncode == 0, err
    assert out.strip() == CIPHER.hex()
    assert results == [[CIPHER], [CIPHER]]


def test_authenticated_runs_name_their_mistakes():
    c = tessera.Circuit.load("aes128")
    two = free_addresses(2)
    cases = [
        (dict(listen=two[0]), "not listen"),
        (dict(party=0), "parties="),
        (dict(party=2, parties=two), "party=2"),
        (dict(party=0, parties=two, cot="iknp"), "iknp"),
        (dict(party=0, parties=two[:1]), "parties=1"),
        (dict(party=0, parties=two, reveal="nobody"), "reveal"),
    ]
    for options, message in cases:
        with pytest.raises(tessera.InvalidInput, match=message):
            c.run(KEY, protocol="ag", **options)
    with pytest.raises(tessera.InvalidInput, match="gives no input"):
        c.run(KEY, protocol="ag", party=2, parties=free_addresses(3))
    with pytest.raises(tessera.InvalidInput, match="party= and parties= are for"):
        c.run(KEY, listen=two[0], party=0)
