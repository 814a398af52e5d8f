"""Tessera from Python: private inference of ONNX models and two-party circuits.

Both parties of a run can live in this process (``simulate``), each on its own thread, or in
two processes or machines (``serve`` / ``Server`` and ``infer``, interoperable with ``tessera
nn run``), with the interpreter free while they run (the GIL is released); Ctrl-C stops a run
and tells the peer.

>>> import tessera
>>> model = tessera.Model.from_onnx("net.onnx")          # doctest: +SKIP
>>> logits, report = model.simulate(x)                   # doctest: +SKIP
>>> c = tessera.Circuit.load("aes128")
>>> c.simulate([bytes(16), bytes(16)], protocol="yao").pop().hex()
'66e94bd4ef8a2c3b884cfa59ca342b2e'
"""

from ._tessera import (
    Circuit,
    Error,
    InvalidInput,
    Model,
    PeerAborted,
    ProtocolError,
    Server,
    Timeout,
    Tls,
    UnsupportedOperator,
    __version__,
    infer,
)


def _from_torch(module, example_input, opset_version=None):
    """Exports ``module`` (a ``torch.nn.Module``) with ``torch.onnx.export`` on
    ``example_input`` (one input, its batch axis of 1; ``opset_version``: PyTorch's default
    unless given) and loads the ONNX model it gives."""
    try:
        import torch
    except ImportError as e:
        raise InvalidInput(
            "Model.from_torch needs PyTorch (pip install torch); "
            "or export the model to ONNX yourself and use Model.from_onnx"
        ) from e
    import inspect
    import pathlib
    import tempfile

    module.eval()
    # Through a file: exporting to a buffer is deprecated in recent PyTorch. Not under
    # no_grad: there PyTorch's TransformerEncoderLayer takes its fused fast path, which has no
    # ONNX export.
    with tempfile.TemporaryDirectory() as scratch:
        path = pathlib.Path(scratch) / "model.onnx"
        options = {} if opset_version is None else {"opset_version": opset_version}
        # Weights inside the file: Tessera reads no external data.
        if "external_data" in inspect.signature(torch.onnx.export).parameters:
            options["external_data"] = False
        torch.onnx.export(module, example_input, str(path), **options)
        return Model.from_onnx(path.read_bytes())


Model.from_torch = staticmethod(_from_torch)


def serve(model, listen, progress=None, **options):
    """Listens on ``listen`` for one client and runs one private inference with it (the
    server holds the weights and learns nothing); returns the server's report. The options
    are ``Server``'s, ``progress`` is ``Server.serve``'s; use ``Server`` itself to learn the
    address of port 0 or to serve many."""
    return Server(model, listen, **options).serve(progress=progress)


__all__ = [
    "Circuit",
    "Error",
    "InvalidInput",
    "Model",
    "PeerAborted",
    "ProtocolError",
    "Server",
    "Timeout",
    "Tls",
    "UnsupportedOperator",
    "__version__",
    "infer",
    "serve",
]
