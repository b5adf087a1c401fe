"""Writes torch_mixer.mlir: an MLP-Mixer (two mixer layers) exported by iree-turbine with its
defaults.

    x: [1, 3, 32, 32] float32 (NCHW)
    patch embedding Conv2d(3, 32, 8, stride 8) -> flatten, transpose     -> 16 tokens x 32 channels
    2 mixer layers:
        h = h + (Linear(32, 16) . GELU . Linear(16, 32))(LayerNorm(h)^T)^T   (token mixing 16->32->16)
        h = h + (Linear(64, 32) . GELU . Linear(32, 64))(LayerNorm(h))       (channel mixing 32->64->32)
    LayerNorm -> mean over tokens -> Linear(32, 10)                       -> [1, 10]
GELU is nn.GELU() (erf). Weights from torch.manual_seed(0) (the modules' default init);
every LayerNorm's gamma 1 + 0.1 N(0, 1), beta 0.1 N(0, 1), so they are not the identity.

Export: `iree.turbine.aot.export(model, x)` then `save_mlir`, nothing else: torch-dialect
MLIR with one `func.func @main`; the patch embedding is a strided `torch.aten.conv2d`, the
token-mixing Linears act on the transposed [1, 32, 16] tensor; the 32x3x8x8 conv weight and
the 64x32, 32x64 channel-mixing weights are `util.global private` from `dense_resource`
blobs, the smaller weights, biases and LayerNorm parameters
`torch.vtensor.literal(dense_resource<...>)`. IREE's torch input conversion turns @main
into `@main$async` (coarse-fences ABI) plus a synchronous `@main` wrapper.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_mixer.py          # rewrites torch_mixer.mlir, then checks it
    python examples/models/exports/torch_mixer.py --check  # checks the torch_mixer.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with a seeded N(0, 1) input, against the model in torch.
"""


import iree_check
import numpy as np
import torch
import torch_export
from torch import nn

BATCH, CHANNELS, SIZE, PATCH, D, CLASSES, LAYERS = 1, 3, 32, 8, 32, 10, 2
TOKENS = (SIZE // PATCH) ** 2
TOKEN_HIDDEN, CHANNEL_HIDDEN = 32, 64


def mlp(d, hidden):
    return nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))


class MixerLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.token_mlp = nn.LayerNorm(D), mlp(TOKENS, TOKEN_HIDDEN)
        self.norm2, self.channel_mlp = nn.LayerNorm(D), mlp(D, CHANNEL_HIDDEN)

    def forward(self, h):
        h = h + self.token_mlp(self.norm1(h).transpose(1, 2)).transpose(1, 2)
        return h + self.channel_mlp(self.norm2(h))


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(CHANNELS, D, PATCH, stride=PATCH)
        self.layers = nn.Sequential(*(MixerLayer() for _ in range(LAYERS)))
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x):
        h = self.patch(x).flatten(2).transpose(1, 2)  # [B, TOKENS, D]
        h = self.norm(self.layers(h))
        return self.head(h.mean(dim=1))

def build():
    """The model: seeded weights, eval mode."""
    torch.manual_seed(0)
    return torch_export.seeded_layer_norms(Mixer()).eval()


def inputs() -> list[np.ndarray]:
    return [iree_check.random_input((BATCH, CHANNELS, SIZE, SIZE))]


if __name__ == "__main__":
    what = (f"MLP-Mixer: {PATCH}x{PATCH} patch conv -> {TOKENS} tokens x {D}, {LAYERS} mixer layers "
            f"(token MLP {TOKENS}->{TOKEN_HIDDEN}->{TOKENS}, channel MLP {D}->{CHANNEL_HIDDEN}->{D}, erf GELU), "
            f"LayerNorm, token mean, Linear({D}, {CLASSES}); x: {BATCH}x{CHANNELS}x{SIZE}x{SIZE} f32.")
    torch_export.cli(__file__, __doc__, build, inputs, what)
