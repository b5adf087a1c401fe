"""What the single-input JAX exports share: `build()` returns the model as a function of
one float32 array of SHAPE (weights drawn inside, as constants), lowered by
`jax.jit(model).lower(x).as_text()` and checked against JAX on IREE's llvm-cpu with a
seeded input (iree_check.py).

Needs (a separate virtualenv, Python 3.11): jax[cpu] 0.10.2, iree-base-compiler 3.13.0,
iree-base-runtime 3.13.0, numpy.
"""

from __future__ import annotations

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import numpy as np


def cli(script: str, doc: str, build, shape, what: str) -> None:
    """Exports (unless --check) and checks the model build() returns."""
    name = Path(script).stem

    def export(out: Path) -> None:
        model = build()
        text = jax.jit(model).lower(jax.ShapeDtypeStruct(shape, jnp.float32)).as_text()
        generator = f"jax {jax.__version__}, jax.jit({model.__name__}).lower(x).as_text()"
        out.write_text(iree_check.header(script, generator, what) + text)

    def check(text: str) -> None:
        x = iree_check.random_input(shape)
        want = np.asarray(jax.jit(build())(x))
        module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
        (got,) = iree_check.call(module["main"], x)
        iree_check.compare(f"{name} llvm-cpu", got, want)

    iree_check.cli(script, export, check, doc)
