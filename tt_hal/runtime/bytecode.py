"""What IREE's bytecode verifier leaves unchecked, checked before IREE loads a .vmfb: the
register ordinals, type ids and function ordinals of each instruction's fixed fields, and
that every imported function has a signature.

IREE's verifier (runtime/src/iree/vm/bytecode/verifier.c, iree-base-runtime 3.13 and IREE's
main as of b48a5955) misses them, and a one-byte change of a .vmfb then crashes the process:
- its register and type checks are defined as `IREE_VM_ISA_VERIFY_REG_*` and
  `IREE_VM_ISA_VERIFY_TYPE_ID`, but the shared decoder (utils/isa_decoder.inl) calls
  `IREE_VM_ISA_VALIDATE_REG_*` and `IREE_VM_ISA_VALIDATE_TYPE_ID`, which default to nothing:
  an instruction naming register 0xFF14 passes, and the interpreter writes outside the
  function's registers when it runs it;
- the interpreter bounds a register by masking it with the function's register count
  rounded up to a power of two, but iree-base-runtime 3.13 allocates a frame of only the
  declared count (i32s rounded to 16 bytes): with 21 i32 registers, %i24 to %i31 are the
  ref registers' bytes, and a write there is a wild pointer. So a register is checked
  against the declared count, which is what the compiler allocates from;
- branch operands are checked one register at a time, not that source and target are of
  one bank: the VM then copies an i32 into the i32 registers at a ref register's ordinal;
- `IREE_VM_ISA_VERIFY_FUNCTION_ORDINAL` compares `IREE_UNLIKELY(ordinal)` (0 or 1) with the
  function count: a call of function 0x1000000 passes, and the verifier itself reads that
  function's signature out of bounds;
- an import's signature is optional in the schema, but the verifier of a call reads the
  signature of the import it names without looking whether it is there: one byte of an
  import's vtable offset made `hal.fence.create` lose its signature, and the verifier
  dereferenced NULL.
Only the variadic lists and branch operands are checked there; here every field is, by
IREE's rules. A file whose structure does not read is left to IREE's loader, which refuses it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from flatbuffers.number_types import Int32Flags, Uint32Flags
from flatbuffers.table import Table

from hal.status import HalError, StatusCode
from tt_hal.runtime.vm_isa import BYTECODE_VERSION, OPCODE_SETS, PREFIXES

# Register and function ordinals (runtime/src/iree/vm/bytecode/isa/isa.h).
REF_REGISTER_TYPE_BIT = 0x8000
REF_REGISTER_MOVE_BIT = 0x4000
REF_REGISTER_MASK = 0x3FFF
FUNCTION_ORDINAL_IMPORT_BIT = 0x80000000
ZIP_LOCAL_FILE_HEADER = b"PK\x03\x04"
# BytecodeModuleDef's vtable slots (runtime/src/iree/schemas/bytecode_module_def.fbs).
TYPES, IMPORTED_FUNCTIONS, EXPORTED_FUNCTIONS, FUNCTION_DESCRIPTORS = 12, 16, 18, 28
BYTECODE_VERSION_SLOT, BYTECODE_DATA = 30, 32
IMPORT_NAME, IMPORT_SIGNATURE = 4, 6  # ImportFunctionDef's full_name and signature slots
FUNCTION_DESCRIPTOR_SIZE = 20  # bytecode_offset, bytecode_length, requirements: 4 B; 4 x 2 B
FIELD_SIZES = {"u16": 2, "u32": 4, "u64": 8}


class _Invalid(Exception):
    """A field that fails a check; check_bytecode adds where it is."""


class _Unreadable(Exception):
    """The module's structure does not read: IREE's loader refuses such a file itself."""


def check_bytecode(archive) -> None:
    """INVALID_ARGUMENT if an instruction of a .vmfb (its bytes) names a register outside
    its function's registers or of the wrong bank, an unknown type or a function that does
    not exist, or if an imported function has no signature."""
    for _ in instructions(archive):
        pass


def instructions(archive) -> Iterator[tuple[str, str]]:
    """(function, instruction name) of each instruction of a .vmfb, in order, each checked
    as check_bytecode checks it: INVALID_ARGUMENT at the first that fails. Nothing if the
    file's structure does not read (IREE's loader refuses such a file)."""
    try:
        module = _Module(bytes(archive))
    except _Unreadable:
        return
    if module.unsigned_imports:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"damaged .vmfb: imported function {', '.join(module.unsigned_imports)} has no signature")
    for ordinal, (code, i32_count, ref_count) in enumerate(module.functions):
        name = module.names.get(ordinal, f"function {ordinal}")
        function = _Function(code, i32_count, ref_count, module)
        try:
            for instruction in function.walk():
                yield name, instruction
        except _Invalid as error:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"damaged .vmfb: {name}, {function.instruction} at bytecode offset {function.start}: "
                           f"{error}") from None


class _Module:
    """What the walk needs of a BytecodeModuleDef: after an optional ZIP local file header,
    a size-prefixed FlatBuffer (runtime/src/iree/vm/bytecode/archive.c)."""

    def __init__(self, archive: bytes):
        start = 0
        if archive[:4] == ZIP_LOCAL_FILE_HEADER and len(archive) >= 30:
            start = 30 + int.from_bytes(archive[26:28], "little") + int.from_bytes(archive[28:30], "little")
        data = bytearray(archive[start + 4:])
        try:
            self._table = Table(data, int.from_bytes(data[:4], "little"))
            version = self._table.Offset(BYTECODE_VERSION_SLOT)
            if not version or divmod(self._table.Get(Uint32Flags, self._table.Pos + version), 1 << 16) != \
                    BYTECODE_VERSION:
                raise _Unreadable  # another bytecode version, which IREE refuses
            self.type_count = self._vector(TYPES)[1]
            self.import_count = self._vector(IMPORTED_FUNCTIONS)[1]
            self.unsigned_imports = self._unsigned_imports()
            self.names = self._names()
            self.functions = self._functions()
        except (IndexError, TypeError, ValueError, struct.error):  # flatbuffers' reports of bad offsets
            raise _Unreadable from None

    def _vector(self, slot: int, item_size: int = 4) -> tuple[int, int]:
        """(start, length) of a vector field; (0, 0) if absent."""
        offset = self._table.Offset(slot)
        if not offset:
            return 0, 0
        start, length = self._table.Vector(offset), self._table.VectorLen(offset)
        if not 0 <= start <= start + length * item_size <= len(self._table.Bytes):
            raise _Unreadable
        return start, length

    def _functions(self) -> list[tuple[bytes, int, int]]:
        """(bytecode, i32 register count, ref register count) of each function."""
        start, length = self._vector(BYTECODE_DATA, 1)
        bytecode = bytes(self._table.Bytes[start:start + length])
        start, count = self._vector(FUNCTION_DESCRIPTORS, FUNCTION_DESCRIPTOR_SIZE)
        functions = []
        for at in range(start, start + count * FUNCTION_DESCRIPTOR_SIZE, FUNCTION_DESCRIPTOR_SIZE):
            offset, length = struct.unpack_from("<ii", self._table.Bytes, at)
            i32_count, ref_count = struct.unpack_from("<HH", self._table.Bytes, at + 16)
            if offset < 0 or offset + length > len(bytecode):
                raise _Unreadable
            functions.append((bytecode[offset:offset + length], i32_count, ref_count))
        return functions

    def _unsigned_imports(self) -> list[str]:
        """The imports without a signature. The schema makes it optional, but IREE's verifier
        reads the signature of every import a call names without looking whether it is there."""
        start, count = self._vector(IMPORTED_FUNCTIONS)
        unsigned = []
        for k in range(count):
            function = Table(self._table.Bytes, self._table.Indirect(start + 4 * k))
            if not function.Offset(IMPORT_SIGNATURE):
                name = function.Offset(IMPORT_NAME)
                unsigned.append(repr(function.String(function.Pos + name).decode(errors="replace")) if name else
                                f"import {k}")
        return unsigned

    def _names(self) -> dict[int, str]:
        """Internal function ordinal -> `function 'name'` for the exported ones, for messages."""
        start, count = self._vector(EXPORTED_FUNCTIONS)
        names = {}
        for k in range(count):
            export = Table(self._table.Bytes, self._table.Indirect(start + 4 * k))
            name, ordinal = export.Offset(4), export.Offset(6)  # local_name, internal_ordinal
            if name:
                internal = export.Get(Int32Flags, export.Pos + ordinal) if ordinal else 0
                names[internal] = f"function {export.String(export.Pos + name).decode(errors='replace')!r}"
        return names


class _Function:
    """One function's bytecode, walked an instruction at a time as IREE's verifier walks it."""

    def __init__(self, code: bytes, i32_count: int, ref_count: int, module: _Module):
        self.code, self.i32_count, self.ref_count, self.module = code, i32_count, ref_count, module
        self.pc = self.start = 0
        self.instruction = "the first instruction"

    def walk(self) -> Iterator[str]:
        """Each instruction's name, once its fields are checked."""
        while self.pc < len(self.code) - 1:  # the verifier's bound: the last byte is no instruction
            self.start = self.pc
            opcodes, opcode = OPCODE_SETS["CORE"], self._read(1)
            if opcode in PREFIXES:
                opcodes, opcode = OPCODE_SETS[PREFIXES[opcode]], self._read(1)
            if opcode not in opcodes:
                raise _Invalid(f"unknown opcode {opcode:#x}")
            self.instruction, fields = opcodes[opcode]
            previous = 0
            for kind in fields:
                previous = self._field(kind, previous)
            yield self.instruction

    def _read(self, size: int) -> int:
        if self.pc + size > len(self.code):
            raise _Invalid("the instruction runs past the end of the function")
        value = int.from_bytes(self.code[self.pc:self.pc + size], "little")
        self.pc += size
        return value

    def _field(self, kind: str, previous: int) -> int:
        """Reads and checks one field; its value (a table's case count comes from the field before)."""
        if kind in FIELD_SIZES:
            return self._read(FIELD_SIZES[kind])
        if kind == "type":
            type_id = self._read(4)
            if type_id >= self.module.type_count:
                raise _Invalid(f"type id {type_id} out of range {self.module.type_count}")
        elif kind == "function":
            ordinal = self._read(4)
            if ordinal & FUNCTION_ORDINAL_IMPORT_BIT:
                if ordinal & ~FUNCTION_ORDINAL_IMPORT_BIT >= self.module.import_count:
                    raise _Invalid(f"import ordinal {ordinal & ~FUNCTION_ORDINAL_IMPORT_BIT} out of range "
                                   f"{self.module.import_count}")
            elif ordinal >= len(self.module.functions):
                raise _Invalid(f"function ordinal {ordinal} out of range {len(self.module.functions)}")
        elif kind == "string":
            length = self._read(2)
            self.pc += length
            if self.pc > len(self.code):
                raise _Invalid("a string runs past the end of the function")
        elif kind == "variadic_sizes":
            for _ in range(self._list_size()):
                self._read(2)
        elif kind.startswith("variadic_"):
            for _ in range(self._list_size()):
                self._register(kind[len("variadic_"):], self._read(2))
        elif kind == "branch_operands":
            self._branch_operands()
        elif kind == "branch_table_cases":
            for _ in range(previous):
                self._read(4)
                self._branch_operands()
        else:
            self._register(kind, self._read(2))
        return 0

    def _list_size(self) -> int:
        self.pc += self.pc % 2  # lists are aligned to a register ordinal (2 bytes)
        return self._read(2)

    def _branch_operands(self) -> None:
        """(source, target) register pairs of one bank: the VM copies an i32 source into the
        i32 register file at the target's ordinal, whatever its bank."""
        for _ in range(self._list_size()):
            source, target = self._read(2), self._read(2)
            self._register("any", source)
            self._register("any", target)
            if (source ^ target) & REF_REGISTER_TYPE_BIT:
                raise _Invalid(f"branch operand {source:#x} passed to a register of the other bank, {target:#x}")

    def _register(self, bank: str, ordinal: int) -> None:
        """IREE's IREE_VM_VERIFY_REG_* rules: i32/f32 below the i32 count; i64/f64 an even
        pair below it; refs with the ref bit (the move bit only where allowed)."""
        is_ref = bool(ordinal & REF_REGISTER_TYPE_BIT)
        if bank == "any":
            bank = "ref_move" if is_ref else "i32"
        if bank in ("ref", "ref_move"):
            if not is_ref:
                raise _Invalid(f"ref register required but non-ref {ordinal} provided")
            if bank == "ref" and ordinal & REF_REGISTER_MOVE_BIT:
                raise _Invalid("ref register has the move bit but the instruction does not move")
            if ordinal & REF_REGISTER_MASK >= self.ref_count:
                raise _Invalid(f"ref register {ordinal & REF_REGISTER_MASK} out of range {self.ref_count}")
        elif is_ref:
            raise _Invalid(f"{bank} register required but ref register {ordinal:#x} provided")
        elif bank in ("i64", "f64") and (ordinal % 2 or ordinal + 1 >= self.i32_count):
            raise _Invalid(f"{bank} register {ordinal}:{ordinal + 1} misaligned or out of range {self.i32_count}")
        elif ordinal >= self.i32_count:
            raise _Invalid(f"{bank} register {ordinal} out of range {self.i32_count}")
