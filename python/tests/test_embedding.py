"""The embedding lookup at a transformer's start (issue 60, item 3): a Gather of a constant
table by the graph input's token ids is the client's, done in the clear before the protocol
(the table is the architecture's: the client learns it, the server learns nothing of the
ids). Position embeddings gathered by constant positions fold at import. The float reference
equals onnxruntime on the same ids, private inference equals fixed point, and ids outside the
vocabulary are refused by position."""

import numpy as np
import pytest

import tessera

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

VOCABULARY, POSITIONS, TOKENS, WIDTH = 20, 10, 6, 8
RNG = np.random.default_rng(62)


def reals(name, values):
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


def encoder(reads_ids_again=False):
    """ids [1, 6] → word + position embeddings → LayerNorm → a linear map → mean over tokens."""
    nodes = [
        helper.make_node("Gather", ["words", "ids"], ["w"], name="word_embeddings"),
        helper.make_node("Gather", ["positions", "position_ids"], ["p"], name="position_embeddings"),
        helper.make_node("Add", ["w", "p"], ["e"], name="sum"),
        helper.make_node("LayerNormalization", ["e", "gamma", "beta"], ["n"], name="norm", axis=-1),
        helper.make_node("MatMul", ["n", "dense"], ["d"], name="dense"),
        helper.make_node("ReduceMean", ["d"], ["y"], name="pool", axes=[1], keepdims=0),
    ]
    if reads_ids_again:
        nodes.insert(1, helper.make_node("Gather", ["words", "ids"], ["w2"], name="again"))
        nodes[3] = helper.make_node("Add", ["w", "w2"], ["e"], name="sum")
    inits = [
        reals("words", RNG.normal(0, 1, (VOCABULARY, WIDTH))),
        reals("positions", RNG.normal(0, 0.5, (POSITIONS, WIDTH))),
        numpy_helper.from_array(np.arange(TOKENS, dtype=np.int64)[None], "position_ids"),
        reals("gamma", RNG.normal(1, 0.1, WIDTH)),
        reals("beta", RNG.normal(0, 0.1, WIDTH)),
        reals("dense", RNG.normal(0, 0.5, (WIDTH, 3))),
    ]
    g = helper.make_graph(
        nodes,
        "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, TOKENS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def test_the_lookup_is_the_clients_and_the_rest_private():
    data = encoder()
    model = tessera.Model.from_onnx(data)
    ids = RNG.integers(0, VOCABULARY, (1, TOKENS), dtype=np.int64)
    ort = pytest.importorskip("onnxruntime")
    (want,) = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(
        None, {"ids": ids})
    got = model.plaintext(ids[0], fixed=False)
    assert np.max(np.abs(got - want[0])) < 1e-5
    fixed = model.plaintext(ids[0], bits=64, frac=16)
    assert np.max(np.abs(fixed - got)) < 1e-2
    for protocol in ["a+b", "alpha+beta"]:
        private, _ = model.simulate(ids[0], protocol=protocol, bits=64, frac=16)
        assert np.max(np.abs(private - fixed)) < 1e-2, protocol
    # A batch of id rows; negative ids count from the vocabulary's end, as ONNX's Gather does.
    rows = np.stack([ids[0], ids[0] - VOCABULARY])
    assert np.array_equal(model.plaintext(rows, fixed=False), np.stack([got, got]))


def test_ids_outside_the_vocabulary_are_refused():
    model = tessera.Model.from_onnx(encoder())
    ids = np.zeros(TOKENS, np.int64)
    ids[4] = VOCABULARY
    with pytest.raises(tessera.InvalidInput, match=f"token id {VOCABULARY} at 4"):
        model.plaintext(ids)
    with pytest.raises(tessera.InvalidInput, match=r"shape \[7\]"):
        model.plaintext(np.zeros(TOKENS + 1, np.int64))


def test_the_ids_are_read_by_the_lookup_alone():
    with pytest.raises(tessera.InvalidInput, match="again.*only the embedding lookup"):
        tessera.Model.from_onnx(encoder(reads_ids_again=True))
