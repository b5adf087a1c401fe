"""What `tt-hal devices` and `tt-hal info` show: the devices the HAL can open, and
what a compiled file (a .vmfb program or a .ttx executable) holds.

Each command is a report function returning plain JSON-able data (for --json and
for tests) and a formatter that turns that report into aligned text, so the text
never says anything the JSON does not.
"""

from __future__ import annotations

import os
import struct

import hal
from hal.driver import DRIVER_NAME
from hal.status import HalError, StatusCode
from tt_hal.sim.dispatch import PreparedProgram
from tt_hal.target.arch import ARCHS, DEFAULT_ARCH, ArchSpec, GiB, get_arch
from tt_hal.target.isa import Processor
from tt_hal.target.program import Export, Stage
from tt_hal.target.ttx import FILE_IDENTIFIER, read_executable

_ZIP_MAGIC = b"PK\x03\x04"  # a .vmfb is a zip archive around IREE's bytecode module
# What a person sizing a program asks of a chip. A hardware arch (native/device.py)
# may lack some; those are None.
_ARCH_FIELDS = ("name", "grid_x", "grid_y", "worker_cores", "l1_size", "l1_unreserved_base", "l1_small_size",
                "l1_bank_size", "l1_alignment", "dram_bank_count", "dram_bank_size", "dram_size", "dram_alignment",
                "max_hw_cqs")


# ---- tt-hal devices ----

def arch_facts(arch) -> dict:
    """The chip facts of an ArchSpec (or a hardware arch) as plain data."""
    return {field: getattr(arch, field, None) for field in _ARCH_FIELDS}


def devices_report() -> dict:
    """Every registered driver with its devices, and the arch presets a mock device
    takes. Each device is opened (and closed) to read its facts, since on hardware
    only TT-Metal knows the chip; a driver or device that cannot be queried or
    opened gets an "error" instead of failing the whole report."""
    return {"drivers": [_driver_report(name) for name in hal.query_available_drivers()],
            "mock_archs": _mock_archs()}


def _driver_report(name: str) -> dict:
    report = {"name": name, "mode": None, "devices": [], "error": None}
    try:
        driver = hal.get_driver(name)
        report["mode"] = getattr(driver, "mode", None)  # raises for TT_HAL_MODE=hardware without hardware
        infos = driver.query_available_devices()
    except HalError as error:
        report["error"] = str(error)
        return report
    report["devices"] = [_device_report(driver, info) for info in infos]
    return report


def _device_report(driver, info: dict) -> dict:
    report = {"uri": f"{driver.name}://{info['path']}", "device_id": info["device_id"], "name": info.get("name"),
              "mode": info.get("mode"), "fallback_reason": info.get("fallback_reason"), "arch": None,
              "num_hw_cqs": None, "error": None}
    try:
        device = driver.create_device(info)
    except HalError as error:
        report["error"] = str(error)
        return report
    try:
        report["arch"] = arch_facts(device.arch)
        report["num_hw_cqs"] = device.backend.num_hw_cqs
    finally:
        device.close()
    return report


def _mock_archs() -> list[dict]:
    """One entry per preset, with the aliases (n150, p150, ...) naming the same spec."""
    presets: dict[str, dict] = {}
    for name, spec in ARCHS.items():
        entry = presets.setdefault(spec.name, {"uri": f"{DRIVER_NAME}://mock?arch={spec.name}",
                                               "aliases": [], "default": spec.name == DEFAULT_ARCH,
                                               **arch_facts(spec)})
        if name != spec.name:
            entry["aliases"].append(name)
    return list(presets.values())


def format_devices(report: dict) -> str:
    """`devices_report()` as text: a table of devices, then one of mock presets."""
    drivers = [d["name"] + (f" ({d['mode']} mode)" if d["mode"] else "") for d in report["drivers"]]
    lines = [f"drivers: {', '.join(drivers) or 'none'}", ""]
    rows, notes = [], []
    for driver in report["drivers"]:
        if driver["error"]:
            notes.append(f"{driver['name']}: {driver['error']}")
        for device in driver["devices"]:
            if device["error"]:
                notes.append(f"{device['uri']}: cannot open: {device['error']}")
                rows.append([device["uri"], device["mode"] or "?"] + ["?"] * (len(_ARCH_HEADER) + 1))
                continue
            rows.append([device["uri"], device["mode"] or "?", *_arch_cells(device["arch"]),
                         f"{device['num_hw_cqs']} of {_or_unknown(device['arch']['max_hw_cqs'])}"])
            if device["fallback_reason"]:
                notes.append(f"{device['uri']}: TT_HAL_MODE=auto chose mock: {device['fallback_reason']}")
    header = ["DEVICE", "MODE", *_ARCH_HEADER, "CQS"]
    lines += _table(header, rows) if rows else ["no devices"]
    lines += [""] + notes if notes else []
    presets = [[a["name"], ", ".join(a["aliases"]) or "-", *_arch_cells(a)[1:], a["max_hw_cqs"]]
               for a in report["mock_archs"]]
    default = next((a["name"] for a in report["mock_archs"] if a["default"]), None)
    lines += ["", f"mock arch presets ({DRIVER_NAME}://mock?arch=NAME; default {default}, or TT_HAL_MOCK_ARCH):"]
    lines += _table(["ARCH", "ALIASES", *_ARCH_HEADER[1:], "CQS"], presets)
    return "\n".join(lines)


_ARCH_HEADER = ["ARCH", "GRID", "CORES", "L1/CORE", "UNRESERVED L1", "DRAM", "ALIGN L1/DRAM"]


def _arch_cells(arch: dict) -> list:
    """Cells under _ARCH_HEADER. UNRESERVED L1 is what circular buffers and L1
    buffers share (l1_bank_size: L1 less firmware and L1_SMALL)."""
    dram = "?"
    if arch["dram_bank_count"] is not None and arch["dram_bank_size"] is not None:
        dram = f"{arch['dram_bank_count']} x {arch['dram_bank_size'] / GiB:.3g} GiB"
    return [arch["name"], f"{arch['grid_x']}x{arch['grid_y']}", _or_unknown(arch["worker_cores"]),
            _bytes(arch["l1_size"]), _bytes(arch["l1_bank_size"]), dram,
            f"{_or_unknown(arch['l1_alignment'])}/{_or_unknown(arch['dram_alignment'])} B"]


# ---- tt-hal info ----

def describe_file(path_or_bytes, arch=None) -> dict:
    """What a .vmfb program or .ttx executable (a path or its bytes) holds. The kind is
    told by content, not by extension. Circular buffers are laid out in L1 as the
    simulator lays them out on `arch` (a preset name or an ArchSpec; default
    tt_hal.target.arch.DEFAULT_ARCH). INVALID_ARGUMENT for anything else or a damaged file;
    NOT_FOUND for a missing path."""
    data, path = _read(path_or_bytes)
    name = path or "<bytes>"
    spec = arch if isinstance(arch, ArchSpec) else get_arch(arch or DEFAULT_ARCH)
    report = {"file": path, "bytes": len(data), "arch": spec.name}
    if data[8:12] == FILE_IDENTIFIER:  # size-prefixed FlatBuffer: 4-byte size, 4-byte root offset, identifier
        return {**report, "kind": "executable", "executable": _describe_executable(data, spec, name)}
    if data.startswith(_ZIP_MAGIC):
        return {**report, "kind": "program", **_describe_program(data, spec, name)}
    raise HalError(StatusCode.INVALID_ARGUMENT, _unknown_file(data, name))


def _read(path_or_bytes) -> tuple[bytes, str | None]:
    """(bytes, the path or None)."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes), None
    if not isinstance(path_or_bytes, (str, os.PathLike)):
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"expected a file path or bytes, got {type(path_or_bytes).__name__}")
    path = os.fspath(path_or_bytes)
    try:
        with open(path, "rb") as f:
            return f.read(), path
    except FileNotFoundError:
        raise HalError(StatusCode.NOT_FOUND, f"no file {path!r}") from None
    except OSError as error:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"cannot read {path!r}: {error.strerror}") from None


def _unknown_file(data: bytes, name: str) -> str:
    if name.endswith(".mlir") or b"func.func" in data[:65536]:
        return (f"{name} is MLIR source, not a compiled file: compile it first (`tt-hal compile`, or "
                f"tt_hal.compiler.compile_vmfb) and inspect the .vmfb")
    start = data[:12].hex(" ") or "nothing"
    return (f"{name} ({len(data)} bytes, starting {start}) is neither a .ttx executable (file identifier "
            f"{FILE_IDENTIFIER.decode()} at bytes 8..12) nor a .vmfb program (a zip archive); give a file written by "
            f"`tt-hal compile` or tt_hal.target.ttx.write_executable")


def _named(name: str, error: HalError) -> HalError:
    """The same error, its message starting with the file it is about."""
    return HalError(error.code, f"{name}: {error.message}")


def _describe_program(data: bytes, spec: ArchSpec, name: str) -> dict:
    """A .vmfb's public functions (their declarations) and the .ttx its executables carry."""
    import iree.runtime as rt

    from tt_hal.runtime.signature import parse_declaration
    from tt_hal.runtime.system import VmModule  # checks the bytecode before IREE loads it
    try:
        module = VmModule.copy_buffer(rt.VmInstance(), data)
    except (RuntimeError, ValueError) as error:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{name}: not a .vmfb (IREE VM flatbuffer): {error}") from None
    functions = []
    for function_name in module.function_names:
        if function_name.startswith("__"):
            continue  # IREE's own: __init, initializers
        reflection = dict(module.lookup_function(function_name).reflection)
        inputs, results = parse_declaration(reflection.get("iree.abi.declaration", ""))
        functions.append({"name": function_name, "abi": reflection.get("iree.abi.model", "sync"),
                          "inputs": [str(t) for t in inputs], "results": [str(t) for t in results]})
    executable = embedded_executable(data)
    return {"module": module.name, "functions": functions,
            "executable": None if executable is None else _describe_executable(executable, spec, f"{name}: .ttx")}


def embedded_executable(vmfb: bytes) -> bytes | None:
    """The .ttx a .vmfb of `tt-hal compile` carries (every one of its executables holds
    the same), found by its file identifier; None when it has none (a .vmfb for
    another device)."""
    start = vmfb.find(FILE_IDENTIFIER, 8)
    while start >= 0:
        (size,) = struct.unpack_from("<I", vmfb, start - 8)  # the size prefix, 8 bytes before the identifier
        candidate = vmfb[start - 8:start - 4 + size]
        try:
            read_executable(candidate)
            return candidate
        except HalError:
            start = vmfb.find(FILE_IDENTIFIER, start + 1)
    return None


def _describe_executable(data: bytes, spec: ArchSpec, name: str) -> dict:
    try:
        exports = read_executable(data)
    except HalError as error:
        raise _named(name, error) from None
    return {"bytes": len(data), "l1_unreserved_base": spec.l1_unreserved_base, "l1_unreserved": spec.l1_bank_size,
            "exports": [_describe_export(ordinal, e, spec) for ordinal, e in enumerate(exports)]}


def _describe_export(ordinal: int, export: Export, spec: ArchSpec) -> dict:
    tensors = [{"shape": list(t.shape), "data_format": t.data_format.name, "values": t.values is not None,
                "view_of": None if t.base is None else {"tensor": t.base, "first_page": t.first_page}}
               for t in export.tensors]
    return {"ordinal": ordinal, "name": export.name, "constant_count": export.constant_count,
            "binding_count": export.binding_count, "workgroup_size": list(export.workgroup_size),
            "tensors": tensors, "stages": [_describe_stage(stage, spec) for stage in export.stages],
            "dynamic_source_bytes": len(export.source.encode()) if export.dynamic else None}


def _describe_stage(stage: Stage, spec: ArchSpec) -> dict:
    """A stage's program (circular buffers, L1 use, kernels) and where its grid, push
    constants and bindings come from (None: the dispatch's own)."""
    program = stage.program
    layout = PreparedProgram(program, spec)  # the simulator's own L1 layout, so the two cannot disagree
    cbs = [{"index": cb.index, "data_format": cb.data_format.name, "page_size": cb.page_size,
            "num_pages": cb.num_pages, "total_size": cb.total_size, "address": int(layout.cb_config[cb.index, 3])}
           for cb in sorted(program.circular_buffers, key=lambda cb: cb.index)]
    used = layout.cb_end - spec.l1_unreserved_base  # with the alignment gaps between buffers
    return {
        "workgroup_count": None if stage.workgroup_count is None else list(stage.workgroup_count),
        "constants": None if stage.constants is None else [{"kind": c.kind.name, "value": int(c.value)}
                                                           for c in stage.constants],
        "bindings": None if stage.bindings is None else [{"source": source.name, "index": int(index)}
                                                         for source, index in stage.bindings],
        "circular_buffers": cbs,
        "l1": {"circular_buffer_bytes": sum(cb["total_size"] for cb in cbs), "start": spec.l1_unreserved_base,
               "end": layout.cb_end, "used": used, "free": spec.l1_bank_size - used},
        "kernels": [_describe_kernel(k, args) for k, args in zip(program.kernels, program.runtime_args)],
    }


def _describe_kernel(kernel, runtime_args) -> dict:
    config = None
    if kernel.processor == Processor.COMPUTE:  # data movement kernels have no ComputeConfig
        c = kernel.config
        config = {"math_fidelity": c.math_fidelity.name, "fp32_dest_acc_en": bool(c.fp32_dest_acc_en),
                  "math_approx_mode": bool(c.math_approx_mode), "dst_full_sync_en": bool(c.dst_full_sync_en),
                  "dst_capacity": c.dst_capacity()}
    return {"name": kernel.name, "processor": kernel.processor.name, "instructions": int(kernel.code.shape[0]),
            "compile_args": [int(a) for a in kernel.compile_args], "config": config,
            "runtime_args": [{"kind": a.kind.name, "value": int(a.value)} for a in runtime_args],
            "disassembly": kernel.disassemble()}


def format_info(report: dict, disassemble: bool = False, kernels: bool = True) -> str:
    """`describe_file()` as text. `kernels=False` leaves out the kernel tables;
    `disassemble` adds each kernel's code (and implies the tables)."""
    name = report["file"] or "<bytes>"
    lines = []
    if report["kind"] == "program":
        lines.append(f"{name}: IREE program (.vmfb) {report['module']}, {report['bytes']:,} bytes")
        for function in report["functions"]:
            abi = "" if function["abi"] == "sync" else f" ({function['abi']})"
            lines.append(f"  function {function['name']}({', '.join(function['inputs'])}) -> "
                         f"({', '.join(function['results'])}){abi}")
        if report["executable"] is None:
            lines.append("  no .ttx executable: not compiled for the tenstorrent device")
            return "\n".join(lines)
        lines += ["", "its executable (.ttx):"]
    else:
        lines.append(f"{name}: .ttx executable")
    executable = report["executable"]
    lines.append(f"  {_count(len(executable['exports']), 'export')}, {executable['bytes']:,} bytes; L1 laid out as on "
                 f"{report['arch']}: circular buffers from {executable['l1_unreserved_base']:#x}, "
                 f"{_bytes(executable['l1_unreserved'])} unreserved per core")
    for export in executable["exports"]:
        lines += [""] + _export_lines(export, kernels or disassemble, disassemble)
    return "\n".join(lines)


def _export_lines(export: dict, kernels: bool, disassemble: bool) -> list[str]:
    x, y, z = export["workgroup_size"]
    lines = [(f"export {export['ordinal']}: {export['name']} ({_count(export['constant_count'], 'constant')}, "
              f"{_count(export['binding_count'], 'binding')}, workgroup size {x}x{y}x{z}, "
              f"{_count(len(export['stages']), 'stage')})")]
    if export["dynamic_source_bytes"] is not None:
        lines.append(f"  dynamic shapes: lowered for each dispatch's push constants from its MLIR "
                     f"({_bytes(export['dynamic_source_bytes'])})")
    for t, tensor in enumerate(export["tensors"]):
        view = tensor["view_of"]
        what = "values written at load" if tensor["values"] else "scratch" if view is None else \
            f"a view of tensor {view['tensor']} from page {view['first_page']}"
        lines.append(f"  tensor {t}: {tensor['data_format']}{tensor['shape']} ({what})")
    several = len(export["stages"]) > 1
    for s, stage in enumerate(export["stages"]):
        indent = "    " if several else "  "
        if several:
            lines.append(f"  stage {s + 1}: {_stage_text(stage)}")
        lines += _stage_lines(stage, kernels, disassemble, indent)
    return lines


def _stage_text(stage: dict) -> str:
    grid = "the dispatch's grid" if stage["workgroup_count"] is None else \
        "grid " + "x".join(map(str, stage["workgroup_count"]))
    constants = "the dispatch's constants" if stage["constants"] is None else \
        "constants [" + ", ".join(map(_arg_text, stage["constants"])) + "]"
    bindings = "the dispatch's bindings" if stage["bindings"] is None else "bindings [" + ", ".join(
        f"{'binding' if b['source'] == 'DISPATCH' else 'tensor'} {b['index']}" for b in stage["bindings"]) + "]"
    return f"{' + '.join(k['name'] for k in stage['kernels'])}; {grid}; {constants}; {bindings}"


def _stage_lines(stage: dict, kernels: bool, disassemble: bool, indent: str) -> list[str]:
    lines = []
    l1 = stage["l1"]
    rows = [[f"c_{cb['index']}", cb["data_format"], cb["page_size"], cb["num_pages"], cb["total_size"],
             f"{cb['address']:#x}"] for cb in stage["circular_buffers"]]
    if rows:
        lines.append(f"{indent}circular buffers:")
        lines += _table(["CB", "FORMAT", "PAGE SIZE", "PAGES", "BYTES", "L1 ADDRESS"], rows, indent + "  ")
    padded = f", {_bytes(l1['used'])} with alignment" if l1["used"] != l1["circular_buffer_bytes"] else ""
    left = (f"{_bytes(l1['free'])} left for L1 buffers" if l1["free"] >= 0
            else f"{_bytes(-l1['free'])} more than the core has: the dispatch fails with RESOURCE_EXHAUSTED")
    lines.append(f"{indent}L1 per core: {_bytes(l1['circular_buffer_bytes'])} of circular buffers in "
                 f"[{l1['start']:#x}, {l1['end']:#x}){padded}; {left}")
    if not kernels:
        return lines
    rows = [[k["processor"], k["name"], k["instructions"], ", ".join(map(str, k["compile_args"])) or "-",
             _config_text(k["config"]), ", ".join(_arg_text(a) for a in k["runtime_args"]) or "-"]
            for k in stage["kernels"]]
    lines.append(f"{indent}kernels:")
    lines += _table(["PROCESSOR", "KERNEL", "INSTRUCTIONS", "COMPILE ARGS", "COMPUTE CONFIG", "RUNTIME ARGS"],
                    rows, indent + "  ")
    if disassemble:
        for k in stage["kernels"]:
            lines += [""] + [indent + "  " + line for line in k["disassembly"].splitlines()]
    return lines


def _config_text(config: dict | None) -> str:
    if config is None:
        return "-"
    text = f"{config['math_fidelity']}, {'fp32' if config['fp32_dest_acc_en'] else 'bf16'} Dst " \
           f"({config['dst_capacity']} tiles)"
    return text + (", approx" if config["math_approx_mode"] else "") + \
        (", full sync" if config["dst_full_sync_en"] else "")


def _arg_text(arg: dict) -> str:
    """A runtime-arg template entry, e.g. binding_address(0): the address of binding 0."""
    return str(arg["value"]) if arg["kind"] == "LITERAL" else f"{arg['kind'].lower()}({arg['value']})"


# ---- text helpers ----

def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("ch") else "s")


def _bytes(n) -> str:
    return "?" if n is None else f"{n:,} B"


def _or_unknown(value):
    return "?" if value is None else value


def _table(header: list[str], rows: list[list], indent: str = "") -> list[str]:
    """Rows under a header, each column as wide as its widest cell; a column of
    numbers is right-aligned (with thousands separators)."""
    numeric = [all(isinstance(row[i], int) for row in rows) for i in range(len(header))]
    cells = [header] + [[f"{v:,}" if isinstance(v, int) else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return [indent + "  ".join(cell.rjust(w) if numeric[i] else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in cells]
