"""docs/user-guide.md's Python blocks run as written, in order, in one namespace (as a
reader would paste them), in a scratch directory: the guide cannot rot unnoticed."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "user-guide.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_guide_has_the_sections_the_toolkit_promises():
    text = GUIDE.read_text()
    for section in ("## Install", "## Your first device", "## Buffers, tensors and layouts",
                    "## Writing a kernel with the builder", "## Running an MLIR model", "## Tracing",
                    "## CI with the pytest plugin", "## Benchmarks"):
        assert section in text
    assert len(python_blocks(text)) >= 8


def test_guide_python_blocks_run(tmp_path):
    blocks = python_blocks(GUIDE.read_text())
    # Paths in the guide are relative to the repository root, outputs go to tmp_path.
    script = f"import os\nos.chdir({str(ROOT)!r})\n__out = {str(tmp_path)!r}\n"
    script += "\n".join(f"# ---- block {i}\n{block}" for i, block in enumerate(blocks))
    script = re.sub(r'"([\w.-]+\.(?:json|png))"', lambda m: f'os.path.join(__out, "{m.group(1)}")', script)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert (tmp_path / "relu-trace.json").exists() and (tmp_path / "chip.png").exists()
    assert (tmp_path / "graph.png").exists()


def test_guide_plugin_example_passes_under_pytest(tmp_path):
    """The CI section's test file, run by pytest with the installed plugin: one test per
    arch preset plus the small-grid test."""
    block = next(b for b in python_blocks(GUIDE.read_text()) if b.startswith("# test_my_kernels.py"))
    (tmp_path / "test_my_kernels.py").write_text(block)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            capture_output=True, text=True, timeout=900, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout[-3000:]
    assert "4 passed" in result.stdout
