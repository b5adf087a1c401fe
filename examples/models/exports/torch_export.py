"""What the PyTorch exports share: `build()` returns the model (seeded weights, eval
mode), `inputs()` its seeded numpy inputs; the model is exported by iree-turbine with
those inputs as examples (`aot.export(model, *inputs)` then `save_mlir`, or `export`
where a script needs more) and checked against torch on IREE's llvm-cpu with the same
inputs (iree_check.py), every result.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.
"""

from __future__ import annotations

from pathlib import Path

import iree_check
import torch
from iree.turbine import aot

GENERATOR = "iree-turbine aot.export defaults"


def seeded_layer_norms(model: torch.nn.Module) -> torch.nn.Module:
    """Each LayerNorm's weight 1 + N(0, 0.1^2) and bias N(0, 0.1^2) (not 1 and 0, so the
    check sees them), drawn in module order from torch's seeded generator."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape))
    return model


def seeded_batch_norms(model: torch.nn.Module) -> torch.nn.Module:
    """Each BatchNorm2d's running mean N(0, 0.1^2), variance 1 + U(0, 0.25), weight
    1 + N(0, 0.1^2), bias N(0, 0.1^2) (an eval-mode BatchNorm is then no identity), drawn
    in module order from torch's seeded generator."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                n = m.num_features
                m.running_mean.copy_(0.1 * torch.randn(n))
                m.running_var.copy_(1 + 0.25 * torch.rand(n))
                m.weight.copy_(1 + 0.1 * torch.randn(n))
                m.bias.copy_(0.1 * torch.randn(n))
    return model


def cli(script: str, doc: str, build, inputs, what: str, generator: str = GENERATOR, export=aot.export) -> None:
    """Exports (unless --check) and checks build()'s model on inputs()."""
    name = Path(script).stem

    def write(out: Path) -> None:
        export(build(), *map(torch.from_numpy, inputs())).save_mlir(out)
        out.write_text(iree_check.header(script, f"torch {torch.__version__}, {generator}", what) + out.read_text())

    def check(text: str) -> None:
        args = inputs()
        with torch.no_grad():
            want = build()(*map(torch.from_numpy, args))
        want = [want] if isinstance(want, torch.Tensor) else list(want)
        module = iree_check.load(iree_check.compile_llvm_cpu(text, "torch"))
        got = iree_check.call(module["main"], *args)
        if len(got) != len(want):
            raise SystemExit(f"{name}: IREE returned {len(got)} results, torch {len(want)}")
        for k, (result, expected) in enumerate(zip(got, want)):
            label = f"{name} llvm-cpu" + (f" result {k}" if len(want) > 1 else "")
            iree_check.compare(label, result, expected.numpy())

    iree_check.cli(script, write, check, doc)
