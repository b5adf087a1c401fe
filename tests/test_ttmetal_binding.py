"""The binding (native/src/tt_metal.cpp), compiled against the host API stubs
(native/api_stubs/host), against the real libtt_metal.so of PyPI's ttnn==0.81.1 wheel:

- every TT-Metal symbol the object needs (nm -u) is exported by the library (nm -D
  --defined-only), compared mangled, i.e. with exact parameter types, namespaces and
  const-ness; what is inline in the real headers must be inline in the stubs;
- every virtual function the stubs declare on MeshCommandQueue (the only class the binding
  calls virtually) sits in the slot the real vtables give it (FDMeshCommandQueue's and
  SDMeshCommandQueue's, read from the library's relocations), so a virtual call lands on
  the function it names.

What neither can see: the layout of the types the binding builds itself (ShardDataTransfer,
DeviceLocalBufferConfig, MeshCoordinate, ...) and the semantics of the calls. Skipped like
tests/test_ttmetal_kernels.py when clang-19, nm or the wheel are missing, failing instead
when TT_HAL_REQUIRE_TTMETAL_CHECK is set.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sysconfig

import pybind11
import pytest

from tt_hal.native import ttmetal_check

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUBS = ROOT / "native" / "api_stubs" / "host"
QUEUE = "tt::tt_metal::distributed::MeshCommandQueue"
QUEUE_IMPLEMENTATIONS = ("_ZTVN2tt8tt_metal11distributed18FDMeshCommandQueueE",
                         "_ZTVN2tt8tt_metal11distributed18SDMeshCommandQueueE")


@pytest.fixture(scope="module")
def library() -> pathlib.Path:
    """libtt_metal.so, with the tools that read it present."""
    found = ttmetal_check.find_toolchain()
    missing = found if isinstance(found, str) else next(
        (f"missing {tool}: {ttmetal_check.HOW_TO_GET}" for tool in ("nm", "c++filt", "readelf")
         if shutil.which(tool) is None), None)
    if missing:
        if os.environ.get(ttmetal_check.REQUIRE_ENV):
            pytest.fail(f"{ttmetal_check.REQUIRE_ENV} is set but {missing}")
        pytest.skip(missing)
    return found.runtime_root / "build" / "lib" / "libtt_metal.so"


def _run(*command: str, stdin: str | None = None) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True, input=stdin).stdout


def _demangle(symbols: list[str]) -> list[str]:
    return _run("c++filt", stdin="\n".join(symbols)).splitlines()


def _compile(source: pathlib.Path, output: pathlib.Path, *flags: str) -> None:
    """A host object (or program) built against the stubs, as the real build would compile it."""
    subprocess.run([ttmetal_check.CLANG, "-x", "c++", "-std=c++20", "-fPIC", "-O0", "-Wall", "-Werror",
                    f"-I{STUBS}", f"-I{pybind11.get_include()}", f"-I{sysconfig.get_paths()['include']}",
                    str(source), "-o", str(output), *flags], check=True)


def tt_metal_symbols_needed(tmp_path: pathlib.Path) -> list[str]:
    """The mangled TT-Metal symbols (namespaces tt and ttsl) the binding's object leaves undefined."""
    objects = tmp_path / "tt_metal.o"
    _compile(ROOT / "native" / "src" / "tt_metal.cpp", objects, "-c")
    undefined = _run("nm", "-u", "--format=just-symbols", str(objects)).split()
    return [s for s, d in zip(undefined, _demangle(undefined)) if re.match(r"^(\w+ for )?(tt|ttsl)::", d)]


def test_every_symbol_the_binding_needs_is_exported_by_libtt_metal(library, tmp_path):
    needed = tt_metal_symbols_needed(tmp_path)
    exported = set(_run("nm", "-D", "--defined-only", "--format=just-symbols", str(library)).split())
    assert len(needed) > 30  # the binding's calls, not an empty object
    missing = [s for s in needed if s not in exported]
    assert not missing, "not exported by libtt_metal.so 0.81.1:\n" + "\n".join(_demangle(missing))


def vtable_slots(library: pathlib.Path, vtable: str) -> list[str]:
    """The demangled function in each slot of `vtable` (a mangled vtable symbol): its words
    after the offset-to-top and the typeinfo are filled by relocations, whose first value
    is the function's address (R_X86_64_RELATIVE's addend, R_X86_64_64's symbol value)."""
    by_address, start, size = {}, None, None
    for line in _run("nm", "-S", "--defined-only", str(library)).splitlines():
        fields = line.split()
        if len(fields) == 4:
            by_address.setdefault(int(fields[0], 16), fields[3])
            if fields[3] == vtable:
                start, size = int(fields[0], 16), int(fields[1], 16)
    assert start is not None, f"{vtable} is not in {library.name}"
    words = {}
    for line in _run("readelf", "-rW", str(library)).splitlines():
        match = re.match(r"^([0-9a-f]{16})\s+[0-9a-f]+\s+R_X86_64_\w+\s+([0-9a-f]+)", line)
        if match and start <= int(match[1], 16) < start + size:
            words[int(match[1], 16)] = by_address.get(int(match[2], 16), match[2])
    return _demangle([words.get(start + 8 * i, "?") for i in range(2, size // 8)])


_SLOT_PROBE = """
#include <cstdio>
#include <cstring>
#include <tt-metalium/mesh_command_queue.hpp>
using Queue = tt::tt_metal::distributed::MeshCommandQueue;
// Itanium C++ ABI: a pointer to a virtual member function holds 1 + the slot's byte offset.
template <typename F> long slot(F f) { long word; std::memcpy(&word, &f, sizeof word); return (word - 1) / 8; }
int main() {
%s
}
"""


def stub_slots(tmp_path: pathlib.Path, methods: list[str]) -> dict[str, int]:
    """The vtable slot of each of MeshCommandQueue's `methods` in the stubs."""
    probe = tmp_path / "slots.cpp"
    probe.write_text(_SLOT_PROBE % "\n".join(f'  std::printf("{m} %ld\\n", slot(&Queue::{m}));' for m in methods))
    _compile(probe, tmp_path / "slots", "-lstdc++")
    return {name: int(slot) for name, slot in (line.split() for line in _run(str(tmp_path / "slots")).splitlines())}


def test_mesh_command_queue_virtual_slots_match_the_real_vtables(library, tmp_path):
    header = re.sub(r"//.*", "", (STUBS / "tt-metalium" / "mesh_command_queue.hpp").read_text())
    declared = [name for name in re.findall(r"virtual [^;]*?(\w+)\(", header.split("class MeshCommandQueue {")[1])
                if name != "MeshCommandQueue"]  # the destructor's two slots have no member pointer
    assert {"enqueue_write_shards", "enqueue_read_shards", "enqueue_record_event_to_host",
            "enqueue_wait_for_event"} <= set(declared)  # the binding's virtual calls
    ours = stub_slots(tmp_path, declared)
    for vtable in QUEUE_IMPLEMENTATIONS:
        real = [re.sub(r"\(.*", "", slot).rsplit("::", 1)[-1] for slot in vtable_slots(library, vtable)]
        wrong = {name: (slot, real[slot]) for name, slot in ours.items() if real[slot] != name}
        assert not wrong, f"{vtable}: stub slot -> real function {wrong}"
