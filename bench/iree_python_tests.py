"""How much of IREE's own Python runtime tests pass with `import hal as rt` (issue 18's
measure of "drop-in").

    python bench/iree_python_tests.py [--iree /work/.mirror/iree-org+iree/repo] [--json out.json]

Each of IREE's `runtime/bindings/python/tests/{hal_test,array_interop_test,
system_setup_test,hal_device_loop_test}.py` (read from a local checkout or git
directory of IREE, not copied into this project) is run twice with pytest in a
temporary directory: as it is, on iree.runtime and its "local-task" device, and
rewritten so that only the import and the device change (`iree.runtime` -> `hal`,
"local-task" -> "tenstorrent"). Prints, per file, the tests that pass on each, and the
names of those that pass on iree.runtime but not here.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_IREE = Path("/work/.mirror/iree-org+iree/repo")
FILES = ("hal_test.py", "array_interop_test.py", "system_setup_test.py", "hal_device_loop_test.py")
FOLDER = "runtime/bindings/python/tests"


def read(iree: Path, name: str) -> str:
    path = iree / FOLDER / name
    if path.exists():
        return path.read_text()
    return subprocess.run(["git", "-C", str(iree), "show", f"HEAD:{FOLDER}/{name}"], check=True, capture_output=True,
                          text=True).stdout


def as_hal(text: str) -> str:
    """The test with only the runtime and the device changed."""
    text = re.sub(r"^import iree\.runtime$", "import hal as _hal_runtime", text, flags=re.MULTILINE)
    text = re.sub(r"^import iree\.runtime as (\w+)$", r"import hal as \1", text, flags=re.MULTILINE)
    text = re.sub(r"^from iree\.runtime(\._binding)? import", "from hal import", text, flags=re.MULTILINE)
    text = text.replace("iree.runtime.", "_hal_runtime.")
    # IREE's two CPU drivers (and URIs of them) become the one driver here.
    return re.sub(r"""(["'])local-(task|sync)""", r"\1tenstorrent", text)


def run(path: Path) -> dict[str, str]:
    """test id -> outcome (passed, failed, error, skipped) of one pytest run of `path`."""
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                             str(path), "-rA"], cwd=path.parent, capture_output=True, text=True, timeout=1800)
    outcomes = {}
    for line in result.stdout.splitlines():
        match = re.match(r"(PASSED|FAILED|ERROR|SKIPPED)\s+(\S+::\S+)", line)
        if match:
            outcomes[match.group(2).split("::", 1)[1]] = match.group(1).lower()
    if not outcomes:  # the file did not import: one entry says why
        outcomes["<import>"] = "error: " + (result.stdout.strip().splitlines() or ["?"])[-1]
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iree", type=Path, default=DEFAULT_IREE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in FILES:
            text = read(args.iree, name)
            original, ours = Path(folder) / f"iree_{name}", Path(folder) / f"hal_{name}"
            original.write_text(text)
            ours.write_text(as_hal(text))
            results[name] = {"iree.runtime": run(original), "hal": run(ours)}
    print("| file | iree.runtime (local-task) | hal (tenstorrent) |\n|---|---:|---:|")
    for name, runs in results.items():
        counts = {k: sum(v == "passed" for v in r.values()) for k, r in runs.items()}
        print(f"| {name} | {counts['iree.runtime']}/{len(runs['iree.runtime'])} | "
              f"{counts['hal']}/{len(runs['hal'])} |")
    for name, runs in results.items():
        missing = sorted(t for t, v in runs["iree.runtime"].items() if v == "passed" and runs["hal"].get(t) != "passed")
        if missing:
            print(f"\n{name}: passes on iree.runtime, not here: {', '.join(missing)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
