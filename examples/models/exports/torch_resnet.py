"""Writes torch_resnet.mlir: a small ResNet (two BasicBlocks) exported by iree-turbine with
its defaults.

    x: [1, 3, 16, 16] float32 (NCHW)
    stem: Conv2d(3, 16, 3, padding=1) -> BatchNorm2d(16) -> ReLU
    BasicBlock 16->16, stride 1: conv3x3-BN-ReLU-conv3x3-BN, + identity, ReLU
    BasicBlock 16->32, stride 2: conv3x3/2-BN-ReLU-conv3x3-BN, + (Conv2d 1x1/2 -> BN), ReLU
    AdaptiveAvgPool2d(1) -> flatten -> Linear(32, 10)      -> [1, 10]
Weights from torch.manual_seed(0) (the modules' default init); every BatchNorm's running
mean 0.1 N(0, 1), running var 1 + 0.25 U(0, 1), gamma 1 + 0.1 N(0, 1), beta 0.1 N(0, 1), so
they are not the identity. Convolutions without bias, as torchvision's ResNet.

Export: `iree.turbine.aot.export(model, x)` then `save_mlir`, nothing else: torch-dialect
MLIR with one `func.func @main`; turbine's decompositions turn each eval-mode BatchNorm
into elementwise `sub`/`mul`/`sqrt`/`reciprocal`/`add` on its [C] constants unsqueezed to
[C, 1, 1]. The four block 3x3 conv weights (over 1024 elements) are `util.global private`
from `dense_resource` blobs; the stem and 1x1 conv weights, the BatchNorm constants and
the Linear are `torch.vtensor.literal(dense_resource<...>)`. IREE's torch input
conversion turns @main into `@main$async` (coarse-fences ABI) plus a synchronous `@main`
wrapper.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_resnet.py          # rewrites torch_resnet.mlir, then checks it
    python examples/models/exports/torch_resnet.py --check  # checks the torch_resnet.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with a seeded N(0, 1) input, against the model in torch.
"""


import iree_check
import numpy as np
import torch
import torch_export
from torch import nn

BATCH, CHANNELS, SIZE, CLASSES = 1, 3, 16, 10


def conv3x3(c_in, c_out, stride=1):
    return nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1, self.bn1 = conv3x3(c_in, c_out, stride), nn.BatchNorm2d(c_out)
        self.conv2, self.bn2 = conv3x3(c_out, c_out), nn.BatchNorm2d(c_out)
        self.shortcut = nn.Identity()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(c_out))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(CHANNELS, 16, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(16), nn.ReLU())
        self.layer1 = BasicBlock(16, 16, 1)
        self.layer2 = BasicBlock(16, 32, 2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, CLASSES)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))

def build():
    """The model: seeded weights and BatchNorm statistics, eval mode."""
    torch.manual_seed(0)
    return torch_export.seeded_batch_norms(ResNet()).eval()


def inputs() -> list[np.ndarray]:
    return [iree_check.random_input((BATCH, CHANNELS, SIZE, SIZE))]


if __name__ == "__main__":
    what = (f"ResNet: conv-BN-ReLU stem, BasicBlock 16->16, BasicBlock 16->32 stride 2 (1x1 projection), "
            f"avg pool, Linear(32, {CLASSES}); x: {BATCH}x{CHANNELS}x{SIZE}x{SIZE} f32.")
    torch_export.cli(__file__, __doc__, build, inputs, what)
