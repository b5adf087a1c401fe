"""Writes torch_stateful.mlir: a PyTorch module with mutable state, two exported functions
sharing it, exported by iree-turbine.

    step(x: [8, 64] f32) -> y = tanh(Linear(64, 64)(x)); and, per call,
        total += y      (buffer [8, 64] f32, the accumulator)
        calls += 1      (buffer [1] f32, the running counter)
    read() -> (total, calls)
Weights from torch.manual_seed(0) (nn.Linear's default init); both buffers start at zero.

Export: `aot.FxProgramsBuilder(model)` with `step` and `read` as `export_program`s, then
`aot.export(fxb)`: torch.export turns the in-place buffer updates into mutations, and
turbine makes each mutated buffer a `util.global private mutable` (initialised from a
dense_resource) that `step` stores with `util.global.store` and `read` loads; the weight
matrix is an immutable `util.global`, the bias a dense_resource literal. IREE packs the two
mutable globals into one `!stream.resource<variable>` (the counter at byte 2048).

Why not `aot.CompiledModule` + `export_global(..., mutable=True)`: with iree-turbine 3.9.0
and iree-base-compiler 3.13.0, `aot.jittable` (needed to compute inside a procedure) and a
scalar `export_global(AbstractI64, mutable=True)` both fail in turbine with
"AttributeError: type object 'RankedTensorType' has no attribute 'isinstance'" (MLIR's
Python API no longer has it). The data-dependent branch the task asked for is in
jax_control_flow.py: torch.cond is not importable (iree.compiler.extras.fx_importer
has no `_import_hop_cond`), and a torch while_loop imports but IREE 3.13 cannot compile it
(see README.md).

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/torch_stateful.py          # rewrites torch_stateful.mlir, then checks it
    python examples/models/exports/torch_stateful.py --check  # checks the torch_stateful.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), loaded once
on iree.runtime's local-task driver; `step` called with three seeded N(0, 1) inputs, then
`read`, each result against a fresh torch copy of the model called the same way.
"""

from pathlib import Path

import iree_check
import torch
from iree.turbine import aot
from torch import nn

BATCH, D = 8, 64
STEPS = 3


class Accumulator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.register_buffer("total", torch.zeros(BATCH, D))
        self.register_buffer("calls", torch.zeros(1))

    def forward(self, x):
        y = torch.tanh(self.fc(x))
        self.total.add_(y)
        self.calls.add_(1.0)
        return y


def build() -> Accumulator:
    """The model, seeded weights, zero state."""
    torch.manual_seed(0)
    return Accumulator().eval()


def export(out: Path) -> None:
    fxb = aot.FxProgramsBuilder(build())

    @fxb.export_program(args=(torch.zeros(BATCH, D),))
    def step(module, x):
        return module(x)

    @fxb.export_program(args=())
    def read(module):
        return module.total.clone(), module.calls.clone()

    aot.export(fxb).save_mlir(out)
    what = (f"step(x: {BATCH}x{D} f32) -> tanh(Linear(x)), total += y, calls += 1 (mutable globals); "
            f"read() -> (total, calls).")
    out.write_text(iree_check.header(__file__, f"torch {torch.__version__}, iree-turbine FxProgramsBuilder + "
                                               f"aot.export", what) + out.read_text())


def check(text: str) -> None:
    model = build()
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "torch"))
    for i in range(STEPS):
        x = iree_check.random_input((BATCH, D), seed=iree_check.SEED + i)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        (got,) = iree_check.call(module["step"], x)
        iree_check.compare(f"torch_stateful llvm-cpu step {i + 1}", got, want)
    total, calls = iree_check.call(module["read"])
    iree_check.compare(f"torch_stateful llvm-cpu read total after {STEPS} steps", total, model.total.numpy())
    iree_check.compare("torch_stateful llvm-cpu read calls", calls, model.calls.numpy())


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
