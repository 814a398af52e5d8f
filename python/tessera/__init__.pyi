"""Type stubs of the tessera package (the native module ``tessera._tessera``)."""

from os import PathLike
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

class Error(Exception):
    """Every error Tessera raises."""

class InvalidInput(Error):
    """This side's input, options, model or file cannot be used: what and where are named."""

class UnsupportedOperator(InvalidInput):
    """The model has an operator Tessera does not evaluate: the node and operator are named."""

class PeerAborted(Error):
    """The peer stopped and said why (its reason's fixed description)."""

class ProtocolError(Error):
    """The protocol failed: the peer misbehaved, the parties are not set up alike, or the
    connection failed."""

class Timeout(Error):
    """A wait for the peer ran out, or the run's deadline passed."""

Report = Dict[str, Any]
"""setup_ms, online_ms, setup_bytes, online_bytes, online_rounds; ``layers``: per layer its
name, operator, online time, bytes and rounds, and setup time and bytes; ``operators``: the same
by VASA's operator classes (Conv, Trunc, ReLU, MatMul, BN, MaxPool, other)."""

Progress = Union[None, bool, Callable[[str, int, int], object]]
"""A run's ``progress`` argument: ``None`` shows a bar on standard error when it is a terminal
and a phase has run for a second; ``True`` a bar, ``False`` nothing; a callable is called as
``progress(phase, done, total)``, phase "setup" or "online", with this party's bytes so far and
the phase's estimate (``done == total`` at its end), at most every 0.1 s from the protocol's
thread (with the GIL); an exception it raises stops the run, tells the peer and is raised."""


class Model:
    """An ONNX model loaded for private inference."""

    @staticmethod
    def from_onnx(source: Union[str, PathLike, bytes, Any]) -> "Model":
        """Loads an ONNX model from a path, from its bytes, or from an ``onnx.ModelProto``."""
    @staticmethod
    def from_torch(module: Any, example_input: Any, opset_version: int = 13) -> "Model":
        """Exports a ``torch.nn.Module`` through ``torch.onnx.export`` on ``example_input`` and
        loads it; raises ``InvalidInput`` naming what to do when PyTorch is not installed."""
    def info(self, bits: int = 32, frac: int = 10) -> Dict[str, Any]:
        """The layers (name, operator), input and output sizes, and each protocol's estimated
        setup bytes, online bytes and online rounds, and the truncation it chooses ("exact" or
        "local") with the elements it truncates."""
    def strip(self) -> "Model":
        """The architecture without its weights: what a client holds."""
    def plaintext(
        self,
        x: npt.ArrayLike,
        fixed: bool = True,
        bits: int = 32,
        frac: int = 10,
        normalise: Optional[str] = None,
    ) -> np.ndarray:
        """The plaintext outputs of ``x`` (one input or a batch): in fixed point, what the
        secure protocols compute exactly, or in float. For a model that starts with an
        embedding lookup (a Gather of a table by its input's token ids), ``x`` is the token ids
        (int64 or int32), which the client looks up itself."""
    def simulate(
        self,
        x: npt.ArrayLike,
        protocol: str = "a+b",
        bits: int = 32,
        frac: int = 10,
        reveal: str = "logits",
        normalise: Optional[str] = None,
        progress: Progress = None,
        ot: str = "softspoken",
        threads: int = 0,
        truncation: str = "auto",
        linear: str = "auto",
        nonlinear: str = "auto",
    ) -> Tuple[np.ndarray, Report]:
        """Private inference of ``x`` (float32, float64, or uint8 images normalised by
        ``normalise``: "mnist", "half", "unit" or "MEAN,STD"; token ids, int64 or int32, for a
        model that starts with an embedding lookup; one input or a batch run as SIMD copies)
        with the server and the client in this process. ``protocol``: "a+b", "a+y",
        "alpha+beta" or "alpha+y"; ``reveal``: "logits" or "class"; ``progress``: the client's
        (see ``Progress``); ``ot``: the setup's OT, "softspoken" or "ferret" (both parties
        alike); ``threads``: each party's local work (0: as many as the machine has);
        ``truncation``: "auto", "local" (SecureML's, ℓ = 64 only) or "exact" (both parties
        alike; "auto" is exact at ℓ = 32 and wherever local truncation would fail more than
        once in 2^10 inferences); ``linear``: how the linear layers' products are made in the
        setup, "he" (Cheetah's homomorphic convolutions and dense layers), "ot" (Gilboa's
        products) or "auto" (per layer, fewer bytes; both parties alike); ``nonlinear``: how
        the signs of ReLU and max pooling are computed, "millionaire" (a millionaires' protocol
        on random OT, as Cheetah), "circuit" (the protocol's Boolean circuit) or "auto"
        (millionaire for "a+b"; both parties alike)."""

class Circuit:
    """A Boolean circuit from the library or a Bristol file."""

    @staticmethod
    def load(spec: Union[str, PathLike]) -> "Circuit":
        """A circuit of the library by name ("aes128", "sha256", ...) or a Bristol file."""
    def info(self) -> Dict[str, Any]:
        """Name, input and output widths, wires and gates by kind."""
    def eval(self, inputs: Sequence[Union[bytes, str, np.ndarray]]) -> List[Union[bytes, str]]:
        """The outputs of ``inputs`` in plaintext: each value as bytes or a hex string in the
        command line's order (bit k is bit k mod 8 of byte k div 8), or a numpy array of its
        bits (bool or 0/1, bit k at index k); outputs as bytes for whole-byte widths, hex
        otherwise."""
    def simulate(
        self,
        inputs: Sequence[Union[bytes, str, np.ndarray]],
        protocol: str = "yao",
        parties: Optional[int] = None,
    ) -> List[Union[bytes, str]]:
        """The outputs computed by parties in this process: "yao" (party 0 garbles, in the
        setup), "b" (GMW) or "beta" (ABY2.0) between two parties, party v holding input value
        v; or "ag", actively secure authenticated garbling among ``parties`` (2 to 16, at least
        one per input value; the rest give no input): KRRW18 between two, WRK17b among more."""
    def run(
        self,
        input: Union[None, bytes, str, np.ndarray],
        listen: Optional[str] = None,
        connect: Optional[str] = None,
        protocol: str = "yao",
        reveal: str = "both",
        tls: Optional["Tls"] = None,
        timeout: float = 30.0,
        deadline: float = 3600.0,
        party: Optional[int] = None,
        parties: Optional[Sequence[str]] = None,
        cot: str = "softspoken",
    ) -> Optional[List[Union[bytes, str]]]:
        """One party with peers elsewhere. "yao", "b" or "beta", interoperable with ``tessera
        mpc run``: ``listen`` makes it party 0 (input value 0, the garbler in Yao), ``connect``
        party 1. "ag" (actively secure authenticated garbling), interoperable with ``tessera ag
        run``: it is party ``party`` of every party at ``parties`` (addresses in party order;
        it listens on its own unless it is the last), KRRW18 between two (party 0 garbles),
        WRK17b among more (every party learns the outputs), its correlated OT ``cot``:
        "softspoken", "ferret" or "kos". ``input``: this party's value (None past the
        circuit's input values). ``reveal``: "both" (or "all"), "listener" (party 0) or
        "connector" (party 1). The outputs, or None where this party learns none."""

class Tls:
    """This party's TLS: the directory of its key.pem and cert.pem (``tessera keygen``) and the
    peer's certificate, pinned; among more than two parties (``Circuit.run(protocol="ag")``),
    every party's certificate in party order (this party's own entry is ignored)."""

    def __init__(
        self,
        dir: Union[str, PathLike],
        peer_cert: Union[str, PathLike, Sequence[Union[str, PathLike]]],
    ) -> None: ...

class Server:
    """A server listening for clients, one private inference each; it holds the weights and
    learns nothing. The options must be the client's."""

    def __init__(
        self,
        model: Model,
        listen: str,
        protocol: str = "a+b",
        bits: int = 32,
        frac: int = 10,
        reveal: str = "logits",
        batch: int = 1,
        tls: Optional[Tls] = None,
        timeout: float = 30.0,
        deadline: float = 3600.0,
        ot: str = "softspoken",
        threads: int = 0,
        truncation: str = "auto",
        linear: str = "auto",
        nonlinear: str = "auto",
    ) -> None: ...
    @property
    def address(self) -> str:
        """The address it listens on (the port the system picked for port 0)."""
    def serve(self, progress: Progress = None) -> Report:
        """Waits for one client and runs one private inference; the server's report."""

def serve(model: Model, listen: str, progress: Progress = None, **options: Any) -> Report:
    """``Server(model, listen, **options).serve(progress)``."""

def infer(
    model: Model,
    x: npt.ArrayLike,
    connect: str,
    protocol: str = "a+b",
    bits: int = 32,
    frac: int = 10,
    reveal: str = "logits",
    normalise: Optional[str] = None,
    tls: Optional[Tls] = None,
    timeout: float = 30.0,
    deadline: float = 3600.0,
    progress: Progress = None,
    ot: str = "softspoken",
    threads: int = 0,
    truncation: str = "auto",
    linear: str = "auto",
    nonlinear: str = "auto",
) -> Tuple[np.ndarray, Report]:
    """The client's side: connects to the server and runs one private inference of ``x``
    (the architecture, ``model.strip()``, is enough); the result and the client's report."""
