"""What `pip install .` installs, used as a user would: from a script whose own
directory holds packages named `sim`, `compiler` and `native` (the names tt-lang's
simulator or a user's project may take). The install claims only `hal` and
`tt_hal`, so none of them shadows ours: the script opens the simulated device,
compiles a model through IREE and runs it, beside its own `sim` and `compiler`.

Installs into a temporary --target directory (the C++ conversions build included)
and runs the script with only that directory added to the path; about a minute.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent('''
    import numpy as np
    import hal
    from tt_hal import compiler, runtime
    import compiler as users_compiler, native as users_native, sim as users_sim

    MLIR = """func.func @main(%a: tensor<64x96xf32>, %b: tensor<64x96xf32>) -> tensor<64x96xf32> {
      %0 = stablehlo.add %a, %b : tensor<64x96xf32>
      return %0 : tensor<64x96xf32>
    }"""
    device = hal.create_device("tenstorrent")
    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(MLIR), driver="tenstorrent")
    a, b = np.random.default_rng(0).standard_normal((2, 64, 96)).astype(np.float32)
    assert np.array_equal(module.main(a, b), a + b)
    print(hal.__file__, device.backend.mode, users_sim.NAME, users_compiler.NAME, users_native.NAME)
''')


def test_an_installed_tt_hal_runs_beside_a_users_sim_and_compiler_packages(tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(ROOT)],
                   check=True, timeout=600, capture_output=True)
    assert sorted(p.name for p in site.iterdir() if not p.name.endswith(".dist-info") and p.name != "bin") == [
        "hal", "tt_hal"]
    project = tmp_path / "project"
    for name in ("sim", "compiler", "native"):
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f"NAME = 'the user\\'s {name}'\n")
    (project / "script.py").write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("TT_HAL_MODE", None)
    result = subprocess.run([sys.executable, "script.py"], cwd=project, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    hal_file, mode, *names = result.stdout.strip().split(maxsplit=2)
    assert hal_file == str(site / "hal" / "__init__.py") and mode == "mock"
    assert names == ["the user's sim the user's compiler the user's native"]
