"""Writes torch_mobilenetv2.mlir: a MobileNetV2-style network (two inverted-residual blocks)
exported by iree-turbine with its defaults.

    x: [1, 3, 32, 32] float32 (NCHW)
    stem: Conv2d(3, 16, 3, stride 2, padding 1) -> BatchNorm2d -> ReLU6          -> [1, 16, 16, 16]
    InvertedResidual 16->16, stride 1, expand 4, + residual                        -> [1, 16, 16, 16]
    InvertedResidual 16->24, stride 2, expand 4, no residual                       -> [1, 24, 8, 8]
        (1x1 conv 16->64 -> BN -> ReLU6, 3x3 depthwise conv (groups 64) -> BN -> ReLU6,
         1x1 project conv 64->out -> BN)
    global average pool -> Linear(24, 10)                                          -> [1, 10]
Weights from torch.manual_seed(0) (the modules' default init); every BatchNorm's running
mean 0.1 N(0, 1), running var 1 + 0.25 U(0, 1), gamma 1 + 0.1 N(0, 1), beta 0.1 N(0, 1), so
they are not the identity. Convolutions without bias, as torchvision's MobileNetV2.

Export: `iree.turbine.aot.export(model, x)` then `save_mlir`, nothing else: torch-dialect
MLIR with one `func.func @main`; the depthwise convolutions are `torch.aten.conv2d` with
groups 64, ReLU6 `torch.aten.hardtanh` (0, 6), each eval-mode BatchNorm decomposed into
elementwise ops on its constants; the 24x64 projection weight is a `util.global private`
from a `dense_resource` blob, the other weights `torch.vtensor.literal(dense_resource<...>)`
(turbine keeps only tensors over 1024 elements as globals). IREE's torch input
conversion turns @main into `@main$async` (coarse-fences ABI) plus a synchronous `@main`
wrapper.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_mobilenetv2.py          # rewrites torch_mobilenetv2.mlir, then checks it
    python examples/models/exports/torch_mobilenetv2.py --check  # checks the torch_mobilenetv2.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with a seeded N(0, 1) input, against the model in torch.
"""


import iree_check
import numpy as np
import torch
import torch_export
from torch import nn

BATCH, CHANNELS, SIZE, CLASSES, EXPAND = 1, 3, 32, 10, 4


def conv_bn(c_in, c_out, kernel, stride=1, groups=1, relu6=True):
    layers = [nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(c_out)]
    return nn.Sequential(*layers, nn.ReLU6()) if relu6 else nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        hidden = c_in * EXPAND
        self.residual = stride == 1 and c_in == c_out
        self.block = nn.Sequential(
            conv_bn(c_in, hidden, 1),                                  # expand
            conv_bn(hidden, hidden, 3, stride=stride, groups=hidden),  # depthwise
            conv_bn(hidden, c_out, 1, relu6=False),                    # project (linear bottleneck)
        )

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(CHANNELS, 16, 3, stride=2)
        self.blocks = nn.Sequential(InvertedResidual(16, 16, 1), InvertedResidual(16, 24, 2))
        self.fc = nn.Linear(24, CLASSES)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(x.mean(dim=(2, 3)))

def build():
    """The model: seeded weights and BatchNorm statistics, eval mode."""
    torch.manual_seed(0)
    return torch_export.seeded_batch_norms(MobileNetV2()).eval()


def inputs() -> list[np.ndarray]:
    return [iree_check.random_input((BATCH, CHANNELS, SIZE, SIZE))]


if __name__ == "__main__":
    what = (f"MobileNetV2-style: conv-BN-ReLU6 stem /2, inverted residuals 16->16 (+residual) and 16->24 /2 "
            f"(expand {EXPAND}, depthwise 3x3), avg pool, Linear(24, {CLASSES}); "
            f"x: {BATCH}x{CHANNELS}x{SIZE}x{SIZE} f32.")
    torch_export.cli(__file__, __doc__, build, inputs, what)
