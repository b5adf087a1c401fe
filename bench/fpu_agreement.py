"""How many FPU results of the simulator are bit-identical to the chip's, per
configuration: the fast and the exact numerics against wolfpine's datapath (its FPU
matches ttsim's), on the data sets of tests/fpu_reference.py, in the LLK's
instruction order. Needs the test extra (`pip install -e ".[test]"`: wolfpine).

    python bench/fpu_agreement.py [--tiles N] [--ops matmul,add,sub,mul] [--json out.json]

Each matmul case runs K = 1, 2 and 5 tiles, `--tiles` times each with fresh random
operands; each eltwise case `--tiles` tiles. "Dst" counts Dst values after the last
instruction, "packed" the bf16 tile the packer writes from them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import fpu_reference as ref  # noqa: E402
from tt_hal.sim.numerics import FpuModel  # noqa: E402
from tt_hal.target.isa import MathFidelity  # noqa: E402

MODELS = {"fast": FpuModel.FAST, "exact": FpuModel.WORMHOLE}
OPS = ("matmul", "add", "sub", "mul")


def cases(op: str, tiles: int):
    """(fidelity, fp32_dest, data set, [(simulated Dst per model, wolfpine's Dst)])."""
    fidelities = list(MathFidelity) if op in ("matmul", "mul") else [MathFidelity.LoFi]
    for fidelity in fidelities:
        for fp32_dest in (True, False):
            for name, data in ref.DATA_SETS.items():
                rng = np.random.default_rng([int(fidelity), fp32_dest, len(name), OPS.index(op)])
                runs = []
                for _ in range(tiles):
                    for k in (ref.KS if op == "matmul" else (1,)):
                        a, b = data(rng, (k, 32, 32)), data(rng, (k, 32, 32))
                        if op == "matmul":
                            want = ref.matmul_tiles(a.view(np.uint32), b.view(np.uint32), int(fidelity), fp32_dest)
                            got = {m: ref.simulate_matmul(a, b, int(fidelity), fp32_dest, model)
                                   for m, model in MODELS.items()}
                        else:
                            want = ref.eltwise(op, a[0].view(np.uint32), b[0].view(np.uint32), int(fidelity),
                                               fp32_dest)
                            got = {m: ref.simulate_eltwise(op, a[0], b[0], int(fidelity), fp32_dest, model)
                                   for m, model in MODELS.items()}
                        runs.append((got, want))
                yield fidelity, fp32_dest, name, runs


def agreement(runs, fp32_dest: bool) -> dict:
    """{(model, "dst" | "packed"): fraction of bit-identical values}."""
    result = {}
    for m in MODELS:
        dst = np.mean([np.mean(got[m] == want) for got, want in runs])
        packed = np.mean([np.mean(ref.simulate_pack_bf16(got[m]) == ref.pack_bf16(want, fp32_dest))
                          for got, want in runs])
        result[m, "dst"], result[m, "packed"] = float(dst), float(packed)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiles", type=int, default=2)
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    rows = []
    print("| op | fidelity | Dst | data | fast Dst | fast packed | exact Dst | exact packed |")
    print("|---|---|---|---|---|---|---|---|")
    for op in args.ops.split(","):
        for fidelity, fp32_dest, name, runs in cases(op, args.tiles):
            a = agreement(runs, fp32_dest)
            rows.append({"op": op, "fidelity": fidelity.name, "dst": "fp32" if fp32_dest else "bf16", "data": name,
                         **{f"{m}_{what}": value for (m, what), value in a.items()}})
            print(f"| {op} | {fidelity.name} | {rows[-1]['dst']} | {name} | "
                  + " | ".join(f"{100 * a[m, w]:.1f}%" for m in MODELS for w in ("dst", "packed")) + " |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
