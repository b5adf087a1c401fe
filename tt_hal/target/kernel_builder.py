"""The kernel builder: writes a kernel's ISA code (tt_hal.target.isa) with named
registers, labels and structured loops; `KernelBuilder.build` returns a Kernel
(tt_hal.target.program)."""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target.isa import NUM_REGISTERS, OPERANDS, WIDTH, Bits, Op, Processor, float_bits
from tt_hal.target.program import Kernel, KernelConfig


@dataclasses.dataclass(frozen=True)
class Reg:
    index: int
    name: str

    def __repr__(self) -> str:
        return f"r{self.index}:{self.name}"


class Label:
    def __init__(self, name: str):
        self.name = name
        self.position: int | None = None


class KernelBuilder:
    """Writes one kernel. Registers are named and allocated on demand; `loop` and
    `if_less` give structured control flow.

        k = KernelBuilder("reader")
        n = k.arg(0, "num_tiles")
        with k.loop(n) as i:
            k.cb_reserve_back(0, k.const(1))
            ...
        kernel = k.build()
    """

    def __init__(self, name: str):
        self.name = name
        self._rows: list[list] = []
        self._row_names: list[dict[int, str]] = []  # each row's registers, named as when it was emitted
        self._free = list(range(NUM_REGISTERS))
        self._labels: list[Label] = []

    # Registers and constants.
    def reg(self, name: str = "t") -> Reg:
        if not self._free:
            raise HalError(StatusCode.RESOURCE_EXHAUSTED, f"kernel {self.name}: all {NUM_REGISTERS} registers in use")
        return Reg(self._free.pop(0), name)

    def release(self, *regs: Reg) -> None:
        for reg in regs:
            self._free.insert(0, reg.index)

    def const(self, value: int, name: str | None = None) -> Reg:
        reg = self.reg(name or f"k{value}")
        self.emit(Op.LI, reg, int(value))
        return reg

    # Raw emission.
    def emit(self, op: Op, *operands) -> None:
        kinds = OPERANDS[op]
        if len(operands) != len(kinds):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{op.name} takes {len(kinds)} operands ({kinds}), "
                                                        f"got {len(operands)}")
        row = [int(op)]
        names = {}
        for kind, operand in zip(kinds, operands):
            if kind == "r":
                if not isinstance(operand, Reg):
                    raise HalError(StatusCode.INVALID_ARGUMENT, f"{op.name}: expected a register, got {operand!r}")
                row.append(operand.index)
                names[operand.index] = operand.name
            elif kind == "t":
                row.append(operand)  # a Label, resolved in build()
            elif kind == "f":
                row.append(int(operand) & 0xFFFFFFFF if isinstance(operand, Bits) else float_bits(float(operand)))
            else:
                row.append(int(operand))
        self._rows.append(row + [0] * (WIDTH - len(row)))
        self._row_names.append(names)

    def label(self, name: str = "L") -> Label:
        label = Label(name)
        self._labels.append(label)
        return label

    def place(self, label: Label) -> None:
        label.position = len(self._rows)

    @contextlib.contextmanager
    def loop(self, count: Reg | int, name: str = "i"):
        """for i in range(count): the body runs count times (not at all if count <= 0)."""
        with self.loop_range(0, count, name) as i:
            yield i

    @contextlib.contextmanager
    def loop_range(self, first: Reg | int, end: Reg | int, name: str = "i"):
        """for i in range(first, end)."""
        if isinstance(first, Reg):
            i = self.reg(name)
            self.emit(Op.MOV, i, first)
        else:
            i = self.const(first, name)
        end_reg = end if isinstance(end, Reg) else self.const(end, f"{name}_end")
        top, done = self.label(f"{name}_top"), self.label(f"{name}_done")
        self.place(top)
        self.emit(Op.BGE, i, end_reg, done)
        yield i
        self.emit(Op.ADDI, i, i, 1)
        self.emit(Op.JMP, top)
        self.place(done)
        self.release(i)
        if not isinstance(end, Reg):
            self.release(end_reg)

    # TT-Metal kernel API, by name.
    def arg(self, index: int, name: str = "arg") -> Reg:
        reg = self.reg(name)
        self.emit(Op.ARG, reg, index)
        return reg

    def ct_arg(self, index: int, name: str = "ct_arg") -> Reg:
        reg = self.reg(name)
        self.emit(Op.CT_ARG, reg, index)
        return reg

    def __getattr__(self, name: str):
        """k.cb_wait_front(cb, n) emits Op.CB_WAIT_FRONT, for every Op; an int where a
        register is expected is loaded into a scratch register first."""
        try:
            op = Op[name.upper()]
        except KeyError:
            raise AttributeError(name) from None

        def emit(*operands):
            scratch = []
            converted = []
            for kind, operand in zip(OPERANDS[op], operands):
                if kind == "r" and not isinstance(operand, Reg):
                    reg = self.const(int(operand))
                    scratch.append(reg)
                    operand = reg
                converted.append(operand)
            self.emit(op, *converted)
            self.release(*scratch)

        return emit

    def build(self, processor: Processor = Processor.COMPUTE, compile_args=(), **config) -> Kernel:
        rows = []
        for row in self._rows:
            resolved = list(row)
            for k, kind in enumerate(OPERANDS[Op(row[0])]):
                if kind == "t":
                    label = row[k + 1]
                    if label.position is None:
                        raise HalError(StatusCode.INVALID_ARGUMENT,
                                       f"kernel {self.name}: label {label.name} never placed")
                    resolved[k + 1] = label.position
            rows.append(resolved)
        rows.append([int(Op.HALT)] + [0] * (WIDTH - 1))
        code = np.array(rows, np.int64).reshape(-1, WIDTH)
        return Kernel(self.name, Processor(processor), code, tuple(int(a) for a in compile_args),
                      KernelConfig(**config) if processor == Processor.COMPUTE else KernelConfig(),
                      tuple(self._row_names) + ({},))
