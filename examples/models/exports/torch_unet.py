"""Writes torch_unet.mlir: a small U-Net block built from torch's nn modules (NCHW)
exported by iree-turbine with its defaults.

    x: [1, 4, 16, 16] float32
    a = silu(GroupNorm(4, 8)(Conv2d(4, 8, 3, padding 1)(x)))
    b = silu(GroupNorm(4, 16)(Conv2d(8, 16, 3, stride 2, padding 1)(a)))          -> [1, 16, 8, 8]
    u = F.interpolate(b, scale 2, bilinear) + ConvTranspose2d(16, 16, 2, stride 2)(b)
    y = Conv2d(24, 8, 3, padding 1)(cat([a, u], channels))                        -> [1, 8, 16, 16]
Weights from torch.manual_seed(0) (the modules' default init). IREE splits the transposed
convolution into a store of b into every other row and column of a zero buffer (a
strided slice whose rows are not contiguous in NCHW) and a convolution; interpolate
computes its source indices in float and converts them to int64.

Export: `iree.turbine.aot.export(model, x)` then `save_mlir`, nothing else.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_unet.py          # rewrites torch_unet.mlir, then checks it
    python examples/models/exports/torch_unet.py --check  # checks the torch_unet.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with a seeded N(0, 1) input, against torch on CPU.
"""


import iree_check
import numpy as np
import torch
import torch.nn.functional as F
import torch_export
from torch import nn

SHAPE = (1, 4, 16, 16)


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in, self.norm_in = nn.Conv2d(4, 8, 3, padding=1), nn.GroupNorm(4, 8)
        self.down, self.norm_down = nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.GroupNorm(4, 16)
        self.up = nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.conv_out = nn.Conv2d(24, 8, 3, padding=1)

    def forward(self, x):
        a = F.silu(self.norm_in(self.conv_in(x)))
        b = F.silu(self.norm_down(self.down(a)))
        u = F.interpolate(b, scale_factor=2, mode="bilinear", align_corners=False) + self.up(b)
        return self.conv_out(torch.cat([a, u], dim=1))

def build():
    """The model: seeded weights, eval mode."""
    torch.manual_seed(0)
    return UNet().eval()


def inputs() -> list[np.ndarray]:
    return [iree_check.random_input(SHAPE)]


if __name__ == "__main__":
    what = ("U-Net block (NCHW): Conv2d, GroupNorm, SiLU, a stride-2 Conv2d down, bilinear F.interpolate and a "
            "stride-2 ConvTranspose2d up, a skip concatenation; x: 1x4x16x16 f32.")
    torch_export.cli(__file__, __doc__, build, inputs, what)
