"""Today's networks as PyTorch exports them (issue 60, items 3 and 6): a
``torch.nn.TransformerEncoder`` (multi-head attention through ``torch.onnx.export``'s
reshapes, which move the batch axis; GELU, LayerNorm, residuals, a causal mask of -inf) and a
MobileNetV3 block as torchvision writes it (squeeze-and-excitation, HardSwish,
HardSigmoid), torchvision's ViT (a patch convolution and a class token), each through ``Model.from_torch``: tessera's float reference equals PyTorch's
output, fixed point stays within its methods' error and keeps the class, and private
inference equals fixed point. Skipped where PyTorch is not installed."""

import numpy as np
import pytest

import tessera

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

# ℓ = 64 with 16 fractional bits: the smooth functions' squares need the room.
RING = {"bits": 64, "frac": 16}


class Encoder(torch.nn.Module):
    """Two post-norm encoder layers, mean-pooled, and a classification head."""

    def __init__(self, causal, d=32, heads=4, sequence=12, classes=3):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(
            d, heads, dim_feedforward=64, dropout=0.0, batch_first=True, activation="gelu"
        )
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d, classes)
        mask = torch.nn.Transformer.generate_square_subsequent_mask(sequence)
        self.register_buffer("mask", mask if causal else None)

    def forward(self, x):
        return self.head(self.encoder(x, mask=self.mask).mean(dim=1))


class SqueezeExcite(torch.nn.Module):
    """torchvision's SqueezeExcitation with MobileNetV3's HardSigmoid gate."""

    def __init__(self, channels, squeezed):
        super().__init__()
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc1 = torch.nn.Conv2d(channels, squeezed, 1)
        self.fc2 = torch.nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        s = torch.nn.functional.relu(self.fc1(self.pool(x)))
        return x * torch.nn.functional.hardsigmoid(self.fc2(s))


def mobilenet_block():
    """A stem and one inverted residual of MobileNetV3-Small (expand, depthwise, SE,
    project), then its classifier: HardSwish throughout."""
    bn = torch.nn.BatchNorm2d
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), bn(8), torch.nn.Hardswish(),
        torch.nn.Conv2d(8, 16, 1, bias=False), bn(16), torch.nn.Hardswish(),
        torch.nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False), bn(16),
        torch.nn.Hardswish(),
        SqueezeExcite(16, 8),
        torch.nn.Conv2d(16, 8, 1, bias=False), bn(8),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(8, 16), torch.nn.Hardswish(), torch.nn.Linear(16, 4),
    )


def calibrated(net, shape):
    """The network with BatchNorm statistics of its own, as after training."""
    net.train()
    with torch.no_grad():
        net(torch.randn(32, *shape[1:]))
    return net.eval()


def check(net, shape, tolerance):
    torch.manual_seed(3)
    model = tessera.Model.from_torch(net, torch.zeros(*shape))
    x = torch.randn(*shape)
    with torch.no_grad():
        want = net(x).numpy().reshape(-1)
    sample = x.numpy()[0]
    got = model.plaintext(sample, fixed=False).reshape(-1)
    assert np.max(np.abs(got - want)) < 1e-4, (got, want)
    fixed = model.plaintext(sample, **RING).reshape(-1)
    assert np.max(np.abs(fixed - want)) < tolerance, (fixed, want)
    assert np.argmax(fixed) == np.argmax(want)
    # Local truncations a unit off, carried through softmax's and LayerNorm's Newton steps.
    bound = 2e-3 * (1 + np.max(np.abs(fixed)))
    for protocol in ["a+b", "alpha+beta"]:
        private, _ = model.simulate(sample, protocol=protocol, **RING)
        assert np.max(np.abs(private.reshape(-1) - fixed)) < bound, protocol


@pytest.mark.parametrize("causal", [False, True], ids=["unmasked", "causal"])
def test_transformer_encoder_from_torch(causal):
    torch.manual_seed(0)
    check(Encoder(causal).eval(), (1, 12, 32), tolerance=0.02)


def test_mobilenetv3_block_from_torch():
    torch.manual_seed(1)
    check(calibrated(mobilenet_block(), (1, 3, 16, 16)), (1, 3, 16, 16), tolerance=0.02)


def test_torchvision_mobilenet_v3_small_from_torch():
    models = pytest.importorskip("torchvision.models", reason="torchvision is not installed")
    torch.manual_seed(2)
    net = models.mobilenet_v3_small(num_classes=10)
    # torchvision's classifier starts at N(0, 0.01): logits of 1e-5, below fixed point's
    # resolution. Of order 1, as after training.
    torch.nn.init.normal_(net.classifier[-1].weight, std=0.5)
    net = calibrated(net, (1, 3, 64, 64))
    model = tessera.Model.from_torch(net, torch.zeros(1, 3, 64, 64))
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        want = net(x).numpy()[0]
    got = model.plaintext(x.numpy()[0], fixed=False)
    assert np.max(np.abs(got - want)) < 1e-3
    assert np.argmax(model.plaintext(x.numpy()[0], **RING)) == np.argmax(want)


def test_torchvision_vision_transformer_from_torch():
    """torchvision's ViT: a patch Conv in a graph whose attention moves the batch axis, and a
    learned class token joined to the patches (the server's tensor)."""
    models = pytest.importorskip("torchvision.models", reason="torchvision is not installed")
    torch.manual_seed(4)
    net = models.VisionTransformer(
        image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
        num_classes=10,
    )
    # torchvision's head starts at zeros; the class token too: of order 1, as after training.
    torch.nn.init.normal_(net.heads.head.weight, std=0.5)
    torch.nn.init.normal_(net.class_token, std=0.5)
    check(net.eval(), (1, 3, 32, 32), 0.1)


def test_huggingface_bert_from_torch():
    """A BertForSequenceClassification as Hugging Face's transformers builds it, from token
    ids: the word embedding the client's lookup, the position and token-type embeddings and
    the attention mask of ones folded at import."""
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    torch.manual_seed(4)
    config = transformers.BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, num_labels=3,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )
    bert = transformers.BertForSequenceClassification(config).eval()
    # Hugging Face starts weights at N(0, 0.02): logits of 10⁻²; of order 1, as after training.
    torch.nn.init.normal_(bert.classifier.weight, std=1.0)

    class Logits(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids):
            return self.m(input_ids=ids).logits

    net = Logits(bert)
    ids = torch.randint(0, 100, (1, 12))
    model = tessera.Model.from_torch(net, ids)
    with torch.no_grad():
        want = net(ids).numpy()[0]
    sample = ids.numpy()[0]
    assert np.max(np.abs(model.plaintext(sample, fixed=False) - want)) < 1e-4
    fixed = model.plaintext(sample, **RING)
    assert np.max(np.abs(fixed - want)) < 0.02
    assert np.argmax(fixed) == np.argmax(want)
    # Within 2 % of the logits' scale, as the zoo's transformers (two layers of truncations
    # amplified by a classifier of unit weights).
    private, _ = model.simulate(sample, protocol="a+b", **RING)
    assert np.max(np.abs(private - fixed)) < 0.02 * (1 + np.max(np.abs(fixed)))
    assert np.argmax(private) == np.argmax(fixed)
