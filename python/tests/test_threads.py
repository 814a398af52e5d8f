"""A protocol run releases the GIL: another Python thread keeps running meanwhile."""

import threading

import tessera


def test_another_thread_runs_while_a_protocol_runs(minionn, mnist):
    done = threading.Event()
    result = {}

    def run():
        result["out"] = minionn.simulate(mnist[0][0], protocol="a+y")
        done.set()

    worker = threading.Thread(target=run)
    count = 0
    worker.start()
    while not done.is_set():
        count += 1
    worker.join()
    assert result["out"][0].shape == (10,)
    # The run takes a few hundred milliseconds; with the GIL held this loop would barely move.
    assert count > 100_000, count
