"""Fuzzing every loader (issue 21): the .ttx reader and preparing (and dispatching)
what it accepts, the .vmfb loader and calling what it loads, and the public HAL API
with well-typed wrong values. Byte mutations and structure-aware ones (the values of
FlatBuffer fields, found by reading the seed file) from a fixed seed. Each case ends
in success or a hal.HalError - never another exception, a crash or a hang (a case
over HANG_SECONDS is one; a case stuck for good ends the run with every thread's
stack, by faulthandler).

CI runs a fixed number of cases per loader; the long mode runs 20k per loader:

    TT_HAL_FUZZ_SCALE=long python -m pytest tests/test_fuzz.py -s

TT_HAL_FUZZ_CASES sets the cases per loader, TT_HAL_FUZZ_SEED the seed. The project
has no .ttm loader (the .ttm host programs were replaced by .vmfb).
"""

from __future__ import annotations

import collections
import faulthandler
import gc
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import flatbuffers.table
import numpy as np
import pytest

import hal
from hal.status import HalError, StatusCode
from tt_hal.kernels.eltwise import eltwise_binary
from tt_hal.runtime.bytecode import instructions
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import Export, ExportTensor, Stage
from tt_hal.target.ttx import EXECUTABLE_FORMAT, FILE_IDENTIFIER, read_executable, write_executable

LONG = os.environ.get("TT_HAL_FUZZ_SCALE", "ci") == "long"
SEED = int(os.environ.get("TT_HAL_FUZZ_SEED", 21))
HANG_SECONDS = 10
SECOND = 10**9
_CASES = os.environ.get("TT_HAL_FUZZ_CASES")


def cases(ci: int) -> int:
    return int(_CASES) if _CASES else 20_000 if LONG else ci


class Outcomes:
    """Runs cases and tallies how each ended: success, a HalError's code, IREE's unchecked
    integer division (IreeVmDivision), or a failure (another exception type, or longer than
    HANG_SECONDS)."""

    def __init__(self, name: str):
        self.name = name
        self.counts: collections.Counter = collections.Counter()
        self.failures: list[str] = []
        self.slowest = 0.0
        self.start = time.perf_counter()

    def run(self, case: str, action, data: bytes | None = None) -> object:
        """Runs one case; `data`, the case's input file, is kept in $TT_HAL_FUZZ_FAILURES
        (when set) if the case fails, and while it runs as `<loader>-running.bin` beside its
        name, so that a case that crashes the process leaves both behind."""
        failures = len(self.failures)
        keep = os.environ.get("TT_HAL_FUZZ_FAILURES")
        if keep and data is not None:
            with open(os.path.join(keep, f"{self.name.strip('.')}-running.bin"), "wb") as f:
                f.write(data)
            with open(os.path.join(keep, f"{self.name.strip('.')}-running.txt"), "w") as f:
                f.write(case)
        faulthandler.dump_traceback_later(6 * HANG_SECONDS, exit=True)  # stuck for good: end the run, with stacks
        start = time.perf_counter()
        result = None
        try:
            result = action()
            self.counts["ok"] += 1
        except HalError as error:
            self.counts[error.code.name] += 1
        except IreeVmDivision:
            self.counts["SIGFPE (IREE VM division)"] += 1
        except Exception as error:  # noqa: BLE001 - the finding: reported with the case
            stack = "".join(traceback.format_exception(error)[-4:])
            self.failures.append(f"{case}: {type(error).__name__}: {error}\n{stack}")
        finally:
            faulthandler.cancel_dump_traceback_later()
        elapsed = time.perf_counter() - start
        self.slowest = max(self.slowest, elapsed)
        if elapsed > HANG_SECONDS:
            self.failures.append(f"{case}: took {elapsed:.1f} s (a hang)")
        if len(self.failures) > failures and keep and data is not None:
            path = os.path.join(keep, f"{self.name.strip('.')}-{len(self.failures)}.bin")
            with open(path, "wb") as f:
                f.write(data)
        return result

    def check(self) -> None:
        total = sum(self.counts.values()) + len(self.failures)
        seconds = time.perf_counter() - self.start
        print(f"\n{self.name}: {total} cases in {seconds:.1f} s, slowest {self.slowest:.2f} s; "
              f"{len(self.failures)} failures; outcomes {dict(self.counts.most_common())}")
        assert not self.failures, f"{len(self.failures)} of {total} cases failed:\n" + "\n".join(self.failures[:10])


# ---------------------------------------------------------------------------
# Mutators.
# ---------------------------------------------------------------------------

INTERESTING = {
    1: (0, 1, 0x7F, 0x80, 0xFF),
    2: (0, 1, 0x7FFF, 0x8000, 0xFFFF),
    4: (0, 1, 2, 3, 7, 32, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE),
    8: (0, 1, 2, 32, 1 << 31, 1 << 32, 1 << 51, (1 << 63) - 8, 1 << 63, (1 << 64) - 1),
}


def pick(rng: np.random.Generator, values):
    """One of `values` as it is (numpy's choice would convert them to one dtype)."""
    return values[int(rng.integers(len(values)))]


def mutate_bytes(data: bytes, rng: np.random.Generator, keep_prefix: bool = True) -> bytes:
    """1-4 byte-level changes: bit flips, interesting or random bytes and words, a
    deleted, duplicated or truncated stretch. With `keep_prefix`, a size-prefixed
    file's prefix is made to match again after a change of length (else the reader
    rejects every such file at its first check)."""
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 5))):
        kind, at = int(rng.integers(8)), int(rng.integers(len(out)))
        if kind == 0:
            out[at] ^= 1 << int(rng.integers(8))
        elif kind == 1:
            out[at] = pick(rng, INTERESTING[1])
        elif kind == 2:
            out[at] = int(rng.integers(256))
        elif kind in (3, 4):
            width = 4 if kind == 3 else 8
            at -= at % width
            value = pick(rng, INTERESTING[width]) if rng.random() < 0.7 else int(rng.integers(0, 1 << 16))
            out[at:at + width] = (value % (1 << (8 * width))).to_bytes(width, "little")
        elif kind == 5:
            del out[at:at + int(rng.integers(1, 64))]
        elif kind == 6:
            stretch = out[at:at + int(rng.integers(1, 64))]
            out[at:at] = stretch
        else:
            del out[at:]
        if len(out) < 16:
            break
    if keep_prefix and len(out) >= 4 and rng.random() < 0.8:
        out[:4] = (len(out) - 4).to_bytes(4, "little")
    return bytes(out)


def flatbuffer_fields(read, data: bytes) -> list[tuple[int, int]]:
    """(position, byte width) of every scalar, vector element, vtable entry and offset
    that `read(data)` reads: found by watching FlatBuffers' table accessors."""
    fields: dict[int, int] = {}
    table = flatbuffers.table.Table
    originals = {name: getattr(table, name) for name in ("Get", "Offset", "Indirect", "Vector", "GetVectorAsNumpy")}

    def get(self, flags, off):
        fields[off] = flags.bytewidth
        return originals["Get"](self, flags, off)

    def offset(self, vtable_offset):
        fields[self.Pos - flatbuffers.encode.Get(flatbuffers.packer.soffset, self.Bytes, self.Pos) + vtable_offset] = 2
        return originals["Offset"](self, vtable_offset)

    def indirect(self, off):
        fields[off] = 4
        return originals["Indirect"](self, off)

    def vector(self, off):
        fields[off + self.Pos] = 4
        start = originals["Vector"](self, off)
        fields[start - 4] = 4  # the length
        return start

    def vector_numpy(self, flags, off):
        array = originals["GetVectorAsNumpy"](self, flags, off)
        start = originals["Vector"](self, off)
        for k in range(min(len(array), 64)):
            fields[start + k * flags.bytewidth] = flags.bytewidth
        return array

    try:
        table.Get, table.Offset, table.Indirect = get, offset, indirect
        table.Vector, table.GetVectorAsNumpy = vector, vector_numpy
        read(data)
    finally:
        for name, function in originals.items():
            setattr(table, name, function)
    return sorted((p, w) for p, w in fields.items() if 0 <= p and p + w <= len(data))


def mutate_fields(data: bytes, fields, rng: np.random.Generator) -> bytes:
    """1-3 fields set to an interesting value of their width, a small one, or their
    value plus or minus a little (counts, sizes, indices, offsets, code words)."""
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        position, width = fields[int(rng.integers(len(fields)))]
        old = int.from_bytes(out[position:position + width], "little")
        roll = rng.random()
        if roll < 0.5:
            value = pick(rng, INTERESTING[width])
        elif roll < 0.75:
            value = int(rng.integers(0, 64))
        else:
            value = old + int(rng.integers(-4, 5))
        out[position:position + width] = (value % (1 << (8 * width))).to_bytes(width, "little")
    return bytes(out)


# ---------------------------------------------------------------------------
# .ttx: read, prepare on a device, dispatch what prepares.
# ---------------------------------------------------------------------------

def _seed_executables() -> dict[str, bytes]:
    from test_stress import _copy_program  # the stress suite's copy kernel (and its faulting twin)

    staged = Export("staged", 1, 2, (1, 1, 1), (
        Stage(_copy_program(0)),
        Stage(_copy_program(0), (2, 1, 1))),
        (ExportTensor((2, 3), DataFormat.float32, np.arange(6, dtype=np.float32).reshape(2, 3)),
         ExportTensor((32, 32), DataFormat.bfloat16)))
    eltwise = eltwise_binary("add", DataFormat.bfloat16, DataFormat.bfloat16, DataFormat.bfloat16)
    return {"copy": write_executable([Export("copy", 0, 2, (1, 1, 1), (Stage(_copy_program(0)),))]),
            "staged": write_executable([staged]),
            "eltwise": write_executable([eltwise])}


def prepare_and_dispatch(device, data: bytes) -> None:
    """Prepares the executable and dispatches each export once, with its bindings as
    buffers of random bytes and its push constants small; a dispatch must end (done or
    failed) within HANG_SECONDS."""
    executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, data)
    rng = np.random.default_rng(len(data))
    for ordinal in range(min(executable.export_count, 4)):
        info = executable.export_info(ordinal)
        if info.binding_count > 16 or info.constant_count > 64:
            continue
        bindings = []
        for _ in range(info.binding_count):
            buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 8192)
            buffer.map_write(0, rng.integers(0, 256, 8192, np.uint8))
            bindings.append(buffer)
        constants = np.asarray(rng.integers(0, 4, info.constant_count), np.uint32).tobytes()
        cb = hal.HalCommandBuffer(device)
        cb.dispatch(executable, ordinal, (1, 1, 1), constants, bindings)
        cb.end()
        sem = device.create_semaphore(0)
        device.queue_execute(cb, [], [(sem, 1)])
        if not sem.wait(1, timeout=HANG_SECONDS * SECOND):
            raise AssertionError(f"dispatch of export {ordinal} ({info.name}) still running after {HANG_SECONDS} s")
        for buffer in bindings:
            buffer.release()


# A mutated kernel often loops: at the default budget (200M units) a scalar loop runs ~6 s
# before DEADLINE_EXCEEDED on an idle core and past HANG_SECONDS on a loaded one, so the fuzz
# device has a tenth of it (the seeds' programs need a few thousand).
FUZZ_INSTRUCTION_BUDGET = 20_000_000


@pytest.fixture(scope="module")
def fuzz_device():
    device = hal.create_device("tenstorrent")
    device.backend.instruction_budget = FUZZ_INSTRUCTION_BUDGET
    yield device
    device.close()


def test_ttx_loader(fuzz_device):
    """Byte and field mutations of three .ttx files: read_executable, then (what it
    accepts) prepared through the executable cache and dispatched."""
    outcomes = Outcomes(".ttx")
    rng = np.random.default_rng(SEED)
    seeds = _seed_executables()
    fields = {name: flatbuffer_fields(read_executable, data) for name, data in seeds.items()}
    total = cases(5000)
    for case in range(total):
        name = list(seeds)[case % len(seeds)]
        if case % 2:
            data = mutate_fields(seeds[name], fields[name], rng)
        else:
            data = mutate_bytes(seeds[name], rng)
        outcomes.run(f".ttx case {case} ({name}, {'fields' if case % 2 else 'bytes'}; seed {SEED})",
                     lambda: prepare_and_dispatch(fuzz_device, data), data)  # noqa: B023 - run at once
    outcomes.check()
    assert outcomes.counts["ok"] and outcomes.counts["INVALID_ARGUMENT"]
    _device_still_works(fuzz_device)


def _device_still_works(device) -> None:
    data = _seed_executables()["copy"]
    executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, data)
    a, b = (device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 256)
            for _ in range(2))
    a.map_write(0, bytes(range(256)))
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(executable, 0, (1, 1, 1), b"", [a, b])
    cb.end()
    sem = device.create_semaphore(0)
    device.queue_execute(cb, [], [(sem, 1)])
    assert sem.wait(1, timeout=600 * SECOND)  # the first dispatch of a fresh install compiles the simulator
    assert b.map_read(0, 256) == bytes(range(256))
    a.release()
    b.release()


# ---------------------------------------------------------------------------
# .vmfb: load, and call what loads.
# ---------------------------------------------------------------------------

VMFB_SOURCE = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = arith.addf %a, %b : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
"""


@pytest.fixture(scope="module")
def small_vmfb() -> bytes:
    compiler = pytest.importorskip("tt_hal.compiler")
    return compiler.compile_vmfb(VMFB_SOURCE)


def _ttx_inside(vmfb: bytes) -> tuple[int, int]:
    """(start, end) of the .ttx a .vmfb embeds (its size prefix, then TTX0)."""
    at = vmfb.find(FILE_IDENTIFIER) - 8
    assert at >= 0, "the .vmfb embeds no .ttx"
    return at, at + 4 + int.from_bytes(vmfb[at:at + 4], "little")


# IREE's VM divides integers without a check (runtime/src/iree/vm/ops.h leaves undefined
# behaviour to the compiler), so a zero divisor, or INT_MIN / -1, ends the process with SIGFPE.
# No check of the bytecode can rule it out: the compiler emits divisions by runtime values (an
# i32 argument's `arith.divsi`), and stock iree.runtime on llvm-cpu ends the same way. A mutant
# with an integer division therefore runs in a child process, and SIGFPE there is counted as
# this limitation, apart from failures (docs/testing.md).
INTEGER_DIVISIONS = frozenset({"DivI32S", "DivI32U", "RemI32S", "RemI32U", "DivI64S", "DivI64U", "RemI64S", "RemI64U"})
_LOAD_AND_CALL_IN_A_CHILD = """
import sys
import numpy as np
from hal.status import HalError
from tt_hal import runtime
try:
    runtime.load_vm_flatbuffer(open(sys.argv[1], "rb").read())["main"](*[np.zeros((4, 8), np.float32)] * 2)
    print("ok")
except HalError as error:
    print(error.code.name, error.message)
"""


class IreeVmDivision(Exception):
    """A case that ended its child process with SIGFPE (see INTEGER_DIVISIONS)."""


def _divides_integers(vmfb: bytes) -> bool:
    try:
        return any(name in INTEGER_DIVISIONS for _, name in instructions(vmfb))
    except HalError:
        return False  # the loader refuses it before anything runs


def _load_and_call_in_a_child(vmfb: bytes) -> subprocess.CompletedProcess:
    """load_vm_flatbuffer and main() in a child process, so that a crash ends the child only.
    It prints "ok", or the HalError's code and message."""
    with tempfile.NamedTemporaryFile(suffix=".vmfb") as f:
        f.write(vmfb)
        f.flush()
        return subprocess.run([sys.executable, "-c", _LOAD_AND_CALL_IN_A_CHILD, f.name], capture_output=True,
                              text=True, timeout=600)  # a fresh install's first dispatch compiles the simulator


def _outcome_in_a_child(vmfb: bytes) -> None:
    """The child's outcome as if in this process: its HalError raised again, SIGFPE as
    IreeVmDivision, any other end an AssertionError (a crash, or another exception)."""
    child = _load_and_call_in_a_child(vmfb)
    if child.returncode == -signal.SIGFPE:
        raise IreeVmDivision(child.stderr[-300:])
    assert child.returncode == 0, f"the child ended with status {child.returncode}:\n{child.stderr[-2000:]}"
    if child.stdout.strip() != "ok":
        code, message = child.stdout.split(" ", 1)
        raise HalError(StatusCode[code], message.strip())


def test_vmfb_loader(fuzz_device, small_vmfb):
    """Byte mutations of a compiled .vmfb, and field mutations of the .ttx inside it (so
    that the VM loads the module and the hal module prepares the damaged executable):
    load_vm_flatbuffer, then main() of what loads (in a child if it divides integers)."""
    from tt_hal import runtime

    outcomes = Outcomes(".vmfb")
    rng = np.random.default_rng(SEED)
    start, end = _ttx_inside(small_vmfb)
    inner = small_vmfb[start:end]
    inner_fields = flatbuffer_fields(read_executable, inner)
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    expected = a + a
    assert not _divides_integers(small_vmfb)
    good = runtime.load_vm_flatbuffer(small_vmfb, device=fuzz_device).main(a, a)
    np.testing.assert_array_equal(good, expected)

    def load_and_call(data: bytes):
        if _divides_integers(data):
            return _outcome_in_a_child(data)
        module = runtime.load_vm_flatbuffer(data, device=fuzz_device)
        return module["main"](a, a)  # NOT_FOUND when damage renamed it (module.main is then an AttributeError)

    total = cases(2000)
    for case in range(total):
        kind = ("vmfb bytes", "ttx fields", "ttx bytes")[case % 3]
        if kind == "vmfb bytes":
            data = mutate_bytes(small_vmfb, rng, keep_prefix=False)
        else:
            mutated = mutate_fields(inner, inner_fields, rng) if kind == "ttx fields" else \
                mutate_bytes(inner, rng)[:len(inner)].ljust(len(inner), b"\0")
            data = small_vmfb[:start] + mutated + small_vmfb[end:]
        outcomes.run(f".vmfb case {case} ({kind}; seed {SEED})", lambda: load_and_call(data), data)  # noqa: B023
    outcomes.check()
    assert outcomes.counts["ok"] and outcomes.counts["INVALID_ARGUMENT"]
    np.testing.assert_array_equal(runtime.load_vm_flatbuffer(small_vmfb, device=fuzz_device).main(a, a), expected)


# Found by test_vmfb_loader: damage of the compiled program that IREE's verifier passes and that
# crashed the process. Each: where, the bytes there (so that a change of the compiler shows), the
# same bytes damaged, and what the refusal names. Cases 2355 and 12318 were found on an earlier
# build of the program; their damage is made again here on today's.
CRASHING_MUTATIONS = {
    # case 828 of seed 21: the high byte of the result register (%i20) of a vm.select.i64 in
    # __init; the VM segfaulted running __init while the context was created.
    "select_i64_into_a_ref_register": (5857, b"\x14\x00", b"\x14\xff",
                                       "'__init', SelectI64", "i64 register required but ref register 0xff14"),
    # case 4593 of seed 1: `%i3 = vm.const.i32 3075` in main wrote %i28. Main has 21 i32 registers;
    # the VM masks with 31, but its frame holds 24, so %i28 is the pointer of ref register %r1, and
    # main segfaulted.
    "const_i32_past_the_register_count": (4662, b"\x0d\x03\x0c\x00\x00\x03\x00", b"\x0d\x03\x0c\x00\x00\x1c\x00",
                                          "'main', ConstI32", "i32 register 28 out of range 21"),
    # case 2355 of seed 21: __init's vm.call of internal function 0 called function 0x1000000; IREE's
    # verifier read that function's signature out of bounds.
    "call_of_a_function_that_does_not_exist": (6541, b"\x58\x00\x00\x00\x00", b"\x58\x00\x00\x00\x01",
                                               "'__init', Call", "function ordinal 16777216 out of range 3"),
    # case 12318 of seed 21: a vm.br in __init passing %i18 to a ref register (%r1 here): the VM
    # copied the i32 into the i32 registers at the ref register's ordinal, and __init segfaulted.
    "branch_operand_into_the_other_bank": (5831, b"\x56\x3a\x01\x00\x00\x01\x00\x12\x00\x11\x00",
                                           b"\x56\x3a\x01\x00\x00\x01\x00\x12\x00\x01\x80", "'__init', Branch",
                                           "branch operand 0x12 passed to a register of the other bank, 0x8001"),
    # case 1860 of seed 2: the low byte of the vtable offset of the import `hal.fence.create`, set to
    # 0: another table's vtable, in which its signature is absent; IREE's verifier segfaulted.
    "import_without_a_signature": (2416, b"\x1a\xef\xff\xff", b"\x00\xef\xff\xff",
                                   "imported function 'hal.fence.create'", "has no signature"),
}


def _damaged(vmfb: bytes, at: int, original: bytes, damaged: bytes) -> bytes:
    assert vmfb[at:at + len(original)] == original, \
        "the compiled program changed: find the instruction again (iree-dump-module shows it)"
    return vmfb[:at] + damaged + vmfb[at + len(damaged):]


@pytest.mark.parametrize("mutation", CRASHING_MUTATIONS)
def test_vmfb_mutation_that_crashed_is_refused(small_vmfb, mutation):
    """IREE's bytecode verifier (3.13) leaves fixed register operands, branch operand banks,
    function ordinals and import signatures unchecked, and its VM bounds registers by a mask
    wider than the frame: these mutants passed it and crashed the process. The loader refuses
    them with INVALID_ARGUMENT naming the instruction or import (in a child process, so that a
    crash fails the test instead of ending the run)."""
    at, original, damaged, where, reason = CRASHING_MUTATIONS[mutation]
    child = _load_and_call_in_a_child(_damaged(small_vmfb, at, original, damaged))
    assert child.returncode == 0, f"the child ended with status {child.returncode}:\n{child.stderr[-2000:]}"
    assert child.stdout.startswith("INVALID_ARGUMENT") and where in child.stdout and reason in child.stdout, \
        child.stdout + child.stderr[-2000:]


def test_vmfb_division_by_zero_is_an_iree_vm_limitation(small_vmfb):
    """The damage of case 8394 of seed 2 (found on an earlier build of the program): a
    vm.const.i32 became a vm.rem.i32.s by a register holding zero. Here main's first
    instruction, `%i0 = vm.const.i32 16`, becomes `%i0 = vm.rem.i32.s %i16, %i0`. Every
    field is valid, so the loader takes it, and IREE's VM ends the process with SIGFPE (see
    INTEGER_DIVISIONS). The fuzz runs such a mutant in a child and counts it apart; if IREE
    ever checks division, this fails, and the limitation's notes should go."""
    mutant = _damaged(small_vmfb, 4641, b"\x0d\x10\x00\x00\x00\x00\x00", b"\x27\x10\x00\x00\x00\x00\x00")
    assert _divides_integers(mutant)
    with pytest.raises(IreeVmDivision):
        _outcome_in_a_child(mutant)


def _named(vmfb: bytes, name: bytes) -> int:
    """Where a .vmfb holds `name` as a FlatBuffers string (its length, then its bytes)."""
    return vmfb.index(len(name).to_bytes(4, "little") + name) + 4


def test_vmfb_name_that_is_not_utf8_is_refused(small_vmfb):
    """Found by test_vmfb_loader (cases 2403 and 7128 of seed 3, 9237 of seed 5): IREE's loader
    takes a module or function name that is not UTF-8, and reading it (to bind the module, or
    to name it in a load error) raised UnicodeDecodeError. The loader refuses the file."""
    from tt_hal import runtime

    for name in (b"module", b"main"):
        mutant = bytearray(small_vmfb)
        mutant[_named(small_vmfb, name)] = 0xFF
        with pytest.raises(HalError) as error:
            runtime.load_vm_flatbuffer(bytes(mutant))
        assert error.value.code == StatusCode.INVALID_ARGUMENT and "not UTF-8" in error.value.message, name


def test_vmfb_renamed_function_is_not_found(small_vmfb):
    """Found by test_vmfb_loader (case 3765 of seed 3): one byte renamed `main` to `\\0ain`. Looked
    up by name it is NOT_FOUND, listing the functions there; as an attribute, AttributeError."""
    from tt_hal import runtime

    mutant = bytearray(small_vmfb)
    mutant[_named(small_vmfb, b"main")] = 0
    module = runtime.load_vm_flatbuffer(bytes(mutant))
    with pytest.raises(HalError) as error:
        module["main"]
    assert error.value.code == StatusCode.NOT_FOUND and "functions: \x00ain" in error.value.message
    assert not hasattr(module, "main")


def test_vmfb_damaged_declaration_is_a_hal_error(small_vmfb):
    """Found by test_vmfb_loader (case 7812 of seed 1): one byte of main's reflection turned its
    declared `tensor<4x8xf32>` into `tensor<4\\x1d8xf32>`, and looking main up raised int()'s
    ValueError. It is INVALID_ARGUMENT naming the type."""
    from tt_hal import runtime

    at = small_vmfb.index(b"%input0: tensor<4x8xf32>") + len(b"%input0: tensor<4")
    module = runtime.load_vm_flatbuffer(small_vmfb[:at] + b"\x1d" + small_vmfb[at + 1:])
    with pytest.raises(HalError) as error:
        module["main"]
    assert error.value.code == StatusCode.INVALID_ARGUMENT and repr("tensor<4\x1d8xf32>") in error.value.message \
        and "'main'" in error.value.message


def test_vmfb_verifier_out_of_range_is_a_hal_error(monkeypatch):
    """Found by test_vmfb_loader: iree.runtime raises IndexError for an OUT_OF_RANGE
    status (its bytecode verifier's `global byte_offset out of range` for a damaged
    .vmfb); load_vm_flatbuffer let it through instead of a HalError."""
    import iree.runtime as rt

    from tt_hal import runtime

    def out_of_range(instance, data):
        raise IndexError("Error creating vm module from aligned memory: c/runtime/src/iree/vm/bytecode/verifier.c:"
                         "1057: OUT_OF_RANGE; global byte_offset out of range: 0 (rwdata=0); at module.__init+160")

    monkeypatch.setattr(rt.VmModule, "copy_buffer", out_of_range)
    with pytest.raises(HalError) as error:
        runtime.load_vm_flatbuffer(b"damaged")
    assert error.value.code == StatusCode.INVALID_ARGUMENT and "global byte_offset out of range" in str(error.value)


def test_vmfb_undecodable_reflection_is_a_hal_error():
    """Found by test_vmfb_loader: a damaged .vmfb whose function reflection strings are not
    UTF-8 made `module.main` raise nanobind's RuntimeError (and a HalError there would have
    become an AttributeError, as for a missing function)."""
    from tt_hal import runtime

    class Damaged:
        name = "main"

        @property
        def reflection(self):
            raise RuntimeError("nanobind::detail::str_from_cstr_and_size(): conversion error!")

    with pytest.raises(HalError) as error:
        runtime.FunctionInvoker(None, Damaged())
    assert error.value.code == StatusCode.INVALID_ARGUMENT and "damaged .vmfb" in error.value.message

    class Module:
        name = "module"

        @staticmethod
        def lookup_function(name):
            return Damaged()

    bound = runtime.BoundModule(None, Module())
    with pytest.raises(HalError):
        _ = bound.main
    with pytest.raises(AttributeError):
        _ = runtime.BoundModule(None, type("Empty", (Module,), {"lookup_function": staticmethod(lambda n: None),
                                                                "function_names": []})()).missing


def test_wait_with_a_timeout_beyond_the_platform_limit(fuzz_device):
    """Found by test_public_api: a finite timeout or deadline beyond threading.TIMEOUT_MAX
    (1e30 ns) raised OverflowError from the lock's wait; it waits, and returns when reached."""
    for wait in (lambda sem: sem.wait(1, timeout=10**30), lambda sem: sem.wait(1, deadline=1 << 90),
                 lambda sem: fuzz_device.wait_semaphores([(sem, 1)], timeout=1e30),
                 lambda sem: hal.HalFence.create_at(sem, 1).wait(timeout=10**30)):
        sem = fuzz_device.create_semaphore(0)
        timer = threading.Timer(0.05, sem.signal, (1,))
        timer.start()
        assert wait(sem) is True
        timer.join()


def test_buffer_view_shape_products_do_not_wrap(fuzz_device):
    """Found by test_public_api: a view's byte length was the shape's product in int64:
    [2^32, 2^32] wrapped to 0 bytes and was accepted over a 64-byte buffer, and a dimension
    of 2^64 raised OverflowError. Both are OUT_OF_RANGE for the buffer."""
    buffer = fuzz_device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 64)
    for shape in ([1 << 32, 1 << 32], [1 << 64], [1 << 62, 4]):
        with pytest.raises(HalError) as error:
            hal.HalBufferView(buffer, shape, hal.HalElementType.UINT_8)
        assert error.value.code == StatusCode.OUT_OF_RANGE
        with pytest.raises(HalError):
            buffer.create_view(shape, 1)
    assert hal.HalBufferView(buffer, [8, 8], hal.HalElementType.UINT_8).byte_length == 64
    buffer.release()


# ---------------------------------------------------------------------------
# The public API with well-typed wrong values.
# ---------------------------------------------------------------------------

class ApiFuzzer:
    """Calls of the public HAL API with arguments of the right types and wrong values:
    sizes, offsets, lengths, timeouts (NaN, negative, infinite), enum values, patterns,
    workgroup counts, push constants, semaphore values."""

    def __init__(self, device, rng: np.random.Generator):
        self.device, self.rng = device, rng
        allocator = device.allocator
        self.buffers = [allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, n)
                        for n in (256, 4096, 64)]
        data = _seed_executables()
        self.executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, data["copy"])
        self.calls = [getattr(self, name) for name in sorted(dir(self)) if name.startswith("call_")]

    # Values.
    def int(self):
        return pick(self.rng, [0, 1, 2, 3, 4, 7, 16, 255, 256, 4095, 4096, 4097, 1 << 20, 1 << 31, (1 << 32) - 1,
                                    1 << 32, 1 << 40, 1 << 62, (1 << 63) - 1, 1 << 63, 1 << 64, -1, -4, -(1 << 63)])

    def length(self):
        return None if self.rng.random() < 0.15 else self.int()

    def timeout(self):
        return pick(self.rng, [None, 0, 1, -1, -(1 << 63), 10**6, math.nan, math.inf, -math.inf, 0.5, 1e30])

    def buffer(self):
        return self.buffers[int(self.rng.integers(len(self.buffers)))]

    def pattern(self):
        width = int(pick(self.rng, [1, 2, 3, 4, 5, 8, 16]))
        return bytes(self.rng.integers(0, 256, width, np.uint8)) if self.rng.random() < 0.5 else \
            np.array(self.rng.integers(0, 255), pick(self.rng, ["uint8", "uint16", "uint32", "float32", "int64"]))

    def semaphore(self):
        sem = self.device.create_semaphore(int(self.rng.integers(0, 3)))
        if self.rng.random() < 0.2:
            sem.fail(hal.HalError(StatusCode.ABORTED, "fuzz"))
        return sem

    def reached(self):
        """Wait values that are reached or failed, so that no call waits for good."""
        sem = self.semaphore()
        return [(sem, int(self.rng.integers(0, sem.query() + 1)) if sem.failure is None else 1)]

    # Calls.
    def call_allocate(self):
        buffer = self.device.allocator.allocate_buffer(self.int(), self.int(), self.int())
        buffer.release()

    def call_allocate_typed(self):
        buffer = self.device.allocator.allocate_buffer(
            int(pick(self.rng, [hal.MemoryType.DEVICE_LOCAL, hal.MemoryType.HOST_LOCAL])),
            hal.BufferUsage.DEFAULT, self.int())
        buffer.release()

    def call_map_read(self):
        self.buffer().map_read(self.int(), self.length())

    def call_map_write(self):
        self.buffer().map_write(self.int(), bytes(int(self.rng.integers(0, 300))))

    def call_map_fill(self):
        self.buffer().map_fill(self.int(), self.length(), self.pattern())

    def call_map_copy(self):
        self.buffer().map_copy(self.buffer(), self.int(), self.int(), self.int())

    def call_subspan_view(self):
        span = self.buffer().subspan(self.int(), self.length())
        span.create_view([self.int(), self.int()], self.int())

    def call_buffer_view(self):
        hal.HalBufferView(self.buffer(), [self.int()], self.int())

    def call_semaphore_signal(self):
        self.semaphore().signal(self.int())

    def call_semaphore_wait(self):
        sem = self.semaphore()
        value = sem.query() if sem.failure is None and self.rng.random() < 0.5 else self.int()
        timeout = self.timeout()
        if sem.failure is None and value > sem.query() and (timeout is None or timeout > 10**6):
            timeout = 10**6  # never reached: a bounded wait only (NaN and infinities stay: they are refused)
        sem.wait(value, timeout=timeout)

    def call_semaphore_fail(self):
        self.semaphore().fail(pick(self.rng, [self.int(), "a message", StatusCode.INTERNAL]))

    def call_wait_semaphores(self):
        mode = pick(self.rng, [0, 1, 2, 7, -1, "all", "any", "some"])
        self.device.wait_semaphores(self.reached(), mode, timeout=self.timeout())

    def call_fence(self):
        fence = hal.HalFence.create_at(self.semaphore(), self.int())
        fence.wait(timeout=0)

    def call_queue_fill(self):
        self.device.queue_fill(self.buffer(), self.pattern(), self.reached(), [(self.semaphore(), self.int())],
                               self.int(), self.length())

    def call_queue_update(self):
        self.device.queue_update(bytes(int(self.rng.integers(0, 300))), self.buffer(), self.reached(),
                                 [(self.semaphore(), self.int())], self.int(), self.length())

    def call_queue_copy(self):
        self.device.queue_copy(self.buffer(), self.buffer(), self.reached(), [(self.semaphore(), self.int())],
                               self.int(), self.int(), self.length())

    def call_queue_alloca(self):
        buffer = self.device.queue_alloca(self.int(), self.reached(), [(self.semaphore(), self.int())],
                                          self.int(), self.int())
        buffer.release()

    def call_command_buffer(self):
        cb = hal.HalCommandBuffer(self.device, binding_capacity=int(pick(self.rng, [0, 1, 4, -1])))
        op = int(self.rng.integers(4))
        if op == 0:
            cb.copy(self.buffer(), self.buffer(), self.int(), self.int(), self.length())
        elif op == 1:
            cb.fill(self.buffer(), self.pattern(), self.int(), self.length())
        elif op == 2:
            cb.update(bytes(int(self.rng.integers(0, 300))), self.buffer(), self.int(), self.length())
        else:
            count = tuple(int(pick(self.rng, [0, 1, 2, -1, 1 << 32, 65536])) for _ in range(3))
            bindings = [self.buffer() for _ in range(int(self.rng.integers(0, 4)))]
            constants = bytes(int(pick(self.rng, [0, 3, 4, 8])))
            cb.dispatch(self.executable, int(pick(self.rng, [0, 1, -1, 1 << 40])), count, constants, bindings)
        cb.end()
        sem = self.device.create_semaphore(0)
        self.device.queue_execute(cb, self.reached(), [(sem, 1)])
        if not sem.wait(1, timeout=HANG_SECONDS * SECOND):
            raise AssertionError("a fuzzed command buffer did not end")

    def call_query(self):
        self.device.query_i64(pick(self.rng, ["tt.device", "hal.device.id", "x"]),
                              pick(self.rng, ["grid_x", "arch.wormhole_b0", "", "l1_size", "*"]))

    def call_executable(self):
        executable = self.executable
        ordinal = self.int()
        pick(self.rng, [executable.export_info, executable.tensors, executable.export])(ordinal)

    def call_prepare(self):
        self.device.create_executable_cache().prepare_executable(
            pick(self.rng, [EXECUTABLE_FORMAT, "", "x" * 300]), bytes(int(self.rng.integers(0, 64))),
            self.int())

    def call_tensor(self):
        shape = [int(pick(self.rng, [0, 1, 3, 32, 1 << 20, 1 << 31, -1])) for _ in range(int(self.rng.integers(0, 4)))]
        self.device.allocator.allocate_tensor(shape, pick(self.rng, list(DataFormat)))


def test_public_api(fuzz_device):
    outcomes = Outcomes("API")
    fuzzer = ApiFuzzer(fuzz_device, np.random.default_rng(SEED))
    total = cases(8000)
    for case in range(total):
        call = fuzzer.calls[case % len(fuzzer.calls)]
        outcomes.run(f"API case {case} ({call.__name__}; seed {SEED})", call)
    outcomes.check()
    assert outcomes.counts["ok"] and outcomes.counts["INVALID_ARGUMENT"]
    for buffer in fuzzer.buffers:
        buffer.release()
    del fuzzer
    gc.collect()
    assert fuzz_device.memory_map() == [], "the API fuzz left device memory behind"
    _device_still_works(fuzz_device)


if __name__ == "__main__":  # pragma: no cover - python tests/test_fuzz.py: the same as pytest -s
    sys.exit(pytest.main([__file__, "-s", *sys.argv[1:]]))
