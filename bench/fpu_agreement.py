"""How many FPU results of the simulator are bit-identical to the chip's, per
configuration: the fast and the exact numerics against wolfpine's datapath (its FPU
matches ttsim's), on the data sets of tests/fpu_reference.py, in the LLK's
instruction order. Needs the test extra (`pip install -e ".[test]"`: wolfpine).

    python bench/fpu_agreement.py [--tiles N] [--ops matmul,add,sub,mul,sum_row,...] [--json out.json]

Each matmul case runs K = 1, 2 and 5 tiles, `--tiles` times each with fresh random
operands; each eltwise case `--tiles` tiles; each reduce case (sum_row ... max_scalar:
reduce_tile<SUM|MAX, ROW|COL|SCALAR>, scaler 1.0) 3 tiles into one Dst tile, `--tiles`
times. "Dst" counts Dst values after the last instruction (a reduction's results only),
"packed" the bf16 values the packer writes from them.
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
from tt_hal.target.isa import MathFidelity, ReduceKind  # noqa: E402

MODELS = {"fast": FpuModel.FAST, "exact": FpuModel.WORMHOLE}
REDUCTIONS = tuple(kind.name.lower() for kind in ReduceKind)
OPS = ("matmul", "add", "sub", "mul", *REDUCTIONS)
ONE = np.full((32, 32), 1.0, np.float32).view(np.uint32)  # the kernels' scaler tile


def reduce_run(kind: ReduceKind, a, fidelity: MathFidelity, fp32_dest: bool):
    """(simulated Dst per model, wolfpine's Dst, where the results are) of reduce_tile
    over the tiles a, from Dst 0 (SUM) or -inf (MAX: the kernels' fill_tile)."""
    start = np.full((32, 32), -np.inf if kind >= ReduceKind.MAX_ROW else 0.0, np.float32).view(np.uint32)
    want = ref.reduce_tiles(kind, a.view(np.uint32), ONE, int(fidelity), fp32_dest, start)
    got = {m: ref.simulate_reduce(kind, a, ONE, int(fidelity), fp32_dest, model, start) for m, model in MODELS.items()}
    return got, want, ref.reduce_results(kind)


def cases(op: str, tiles: int):
    """(fidelity, fp32_dest, data set, [(simulated Dst per model, wolfpine's Dst, where
    to compare)])."""
    phased = op in ("matmul", "mul") or op.startswith("sum")
    fidelities = list(MathFidelity) if phased else [MathFidelity.LoFi]
    for fidelity in fidelities:
        for fp32_dest in (True, False):
            for name, data in ref.DATA_SETS.items():
                rng = np.random.default_rng([int(fidelity), fp32_dest, len(name), OPS.index(op)])
                runs = []
                for _ in range(tiles):
                    for k in (ref.KS if op == "matmul" else (3,) if op in REDUCTIONS else (1,)):
                        a, b = data(rng, (k, 32, 32)), data(rng, (k, 32, 32))
                        if op in REDUCTIONS:
                            runs.append(reduce_run(ReduceKind[op.upper()], a, fidelity, fp32_dest))
                            continue
                        if op == "matmul":
                            want = ref.matmul_tiles(a.view(np.uint32), b.view(np.uint32), int(fidelity), fp32_dest)
                            got = {m: ref.simulate_matmul(a, b, int(fidelity), fp32_dest, model)
                                   for m, model in MODELS.items()}
                        else:
                            want = ref.eltwise(op, a[0].view(np.uint32), b[0].view(np.uint32), int(fidelity),
                                               fp32_dest)
                            got = {m: ref.simulate_eltwise(op, a[0], b[0], int(fidelity), fp32_dest, model)
                                   for m, model in MODELS.items()}
                        runs.append((got, want, np.ones((32, 32), bool)))
                yield fidelity, fp32_dest, name, runs


def agreement(runs, fp32_dest: bool) -> dict:
    """{(model, "dst" | "packed"): fraction of bit-identical values}."""
    result = {}
    for m in MODELS:
        dst = np.mean([np.mean((got[m] == want)[where]) for got, want, where in runs])
        packed = np.mean([np.mean((ref.simulate_pack_bf16(got[m]) == ref.pack_bf16(want, fp32_dest))[where])
                          for got, want, where in runs])
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
