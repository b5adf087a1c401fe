"""Syntax-check generated kernels against the real TT-Metal 0.81.1 kernel API headers.

native/api_stubs/kernel mirrors the kernel API by hand; this check asks the real thing.
PyPI's ttnn==0.81.1 wheel carries TT-Metal's device-side headers (ttnn/tt_metal/hw,
tt-llk, hostdevcommon) and its libtt_metal.so; the wheel is only for CPython 3.10/3.12,
so it is downloaded by platform and unpacked, never installed.

A kernel is compiled the way the 0.81.1 JIT compiles it (jit_build/genfiles.cpp, logged
from libtt_metal.so): not alone but inside the firmware wrapper of its processor,
brisck.cc / ncrisck.cc (which include the generated kernel_includes.hpp) or trisck.cc
(which includes chlkc_list.h -> chlkc_descriptors.h and chlkc_{unpack,math,pack}.cpp),
with the JIT's include paths and defines, once per processor. The RISC-V compiler
(sfpi, GCC 15) is not available here, so clang-19 parses for riscv32 (the headers assume
ILP32) with -fsyntax-only, using newlib's C headers and the host's libstdc++ headers.
Two headers are not shipped (sfpi.h, lltt.h: part of the sfpi toolchain): stand-ins
declare the names the API headers spell. The LLK internals behind the API then
complain about the stand-ins, so only errors located in the generated kernel or in the
kernel API headers (tt_metal/hw/inc/api/) count.

Usable as a script before the package is installed (.ci/run): `python
native/ttmetal_check.py download` fetches the wheel into the cache once.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

TTNN_REQUIREMENT = "ttnn==0.81.1"
# The wheel exists for cp310/cp312 only: fetched by platform, not for this interpreter.
PIP_DOWNLOAD_PLATFORM = ("--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp",
                         "--platform", "manylinux_2_34_x86_64")
CACHE_ENV = "TT_HAL_TTMETAL_CACHE"  # where the wheel is downloaded and unpacked
REQUIRE_ENV = "TT_HAL_REQUIRE_TTMETAL_CHECK"  # set in CI: a missing tool fails instead of skipping
# The parts of the wheel the checks read: device-side headers and the host libraries.
_UNPACKED = ("ttnn/tt_metal/hw/", "ttnn/tt_metal/tt-llk/", "ttnn/tt_metal/hostdevcommon/", "ttnn/tt_metal/api/",
             "ttnn/build/lib/", "ttnn.libs/")
HOW_TO_GET = ("apt-get install clang-19 libnewlib-dev (Debian 12) and `python native/ttmetal_check.py download` "
              f"(pip download of {TTNN_REQUIREMENT}; .ci/run does both)")

CLANG = "clang-19"  # sfpi's headers need clang >= 17 (or GCC >= 13); Debian 12's g++ is 12
NEWLIB_INCLUDE = pathlib.Path("/usr/include/newlib")  # Debian's libnewlib-dev
LIBSTDCXX_VERSION = "12"  # the libstdc++ headers clang-19 depends on in Debian 12

# The 0.81.1 JIT's defines for a Wormhole n150 worker kernel (logged from libtt_metal.so).
_COMMON_DEFINES = ("IS_NOT_POW2_NUM_DRAM_BANKS=1", "LOG_BASE_2_OF_NUM_L1_BANKS=6", "NUM_DRAM_BANKS=12",
                   "NUM_L1_BANKS=64", "PCIE_NOC_X=0", "PCIE_NOC_Y=3", "TENSIX_FIRMWARE", "LOCAL_MEM_EN=0",
                   "ROUTING_FW_ENABLED", "ARCH_WORMHOLE", "DISPATCH_MESSAGE_ADDR=4290183304", "KERNEL_BUILD",
                   "NOC_INDEX=0", "NOC_MODE=0", "PROGRAMMABLE_CORE_TYPE=0")
# The JIT's own flags for kernels (-std=c++17 ... -fno-exceptions -fno-rtti in libtt_metal.so).
_LANGUAGE = ("-std=c++17", "-fno-exceptions", "-fno-rtti")
# riscv-tt-elf's int32_t is long (its ABI), as the headers' overloads assume.
_INT32_IS_LONG = ("-U__INT32_TYPE__", "-D__INT32_TYPE__=long", "-U__UINT32_TYPE__",
                  "-D__UINT32_TYPE__=long unsigned int", "-U__INT_LEAST32_TYPE__", "-D__INT_LEAST32_TYPE__=long",
                  "-U__UINT_LEAST32_TYPE__", "-D__UINT_LEAST32_TYPE__=long unsigned int")
# Not in the wheel (sfpi toolchain): the names the kernel API headers spell, nothing more.
_STAND_INS = {
    "sfpi.h": "#pragma once\nnamespace sfpi { class vFloat; class vInt; class vUInt; }\n",
    "lltt.h": "#pragma once\nnamespace lltt {}\n",
    # libstdc++'s x86_64-linux-gnu os_defines.h pulls in glibc; newlib stands in for the C library.
    "bits/os_defines.h": "#ifndef _GLIBCXX_OS_DEFINES\n#define _GLIBCXX_OS_DEFINES 1\n#endif\n",
}


class Processor(enum.Enum):
    """The RISC-V cores a kernel is compiled for: (wrapper file, defines)."""

    BRISC = ("brisck.cc", ("COMPILE_FOR_BRISC", "PROCESSOR_INDEX=0"))
    NCRISC = ("ncrisck.cc", ("COMPILE_FOR_NCRISC", "PROCESSOR_INDEX=1"))
    TRISC0 = ("trisck.cc", ("UCK_CHLKC_UNPACK", "COMPILE_FOR_TRISC=0", "PROCESSOR_INDEX=2"))
    TRISC1 = ("trisck.cc", ("UCK_CHLKC_MATH", "COMPILE_FOR_TRISC=1", "PROCESSOR_INDEX=3"))
    TRISC2 = ("trisck.cc", ("UCK_CHLKC_PACK", "COMPILE_FOR_TRISC=2", "PROCESSOR_INDEX=4"))

    @property
    def wrapper(self) -> str:
        return self.value[0]

    @property
    def defines(self) -> tuple[str, ...]:
        return self.value[1]

    @property
    def compute(self) -> bool:
        return self.wrapper == "trisck.cc"


COMPUTE_PROCESSORS = (Processor.TRISC0, Processor.TRISC1, Processor.TRISC2)
# tt_hal.target.isa.Processor name -> the cores its kernel runs on (RISCV_0 is BRISC, RISCV_1 NCRISC).
PROCESSORS = {"RISCV_0": (Processor.BRISC,), "RISCV_1": (Processor.NCRISC,), "COMPUTE": COMPUTE_PROCESSORS}


def cache_dir() -> pathlib.Path:
    default = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "tt-hal" / "ttnn-0.81.1"
    return pathlib.Path(os.environ.get(CACHE_ENV, default))


def _wheel(cache: pathlib.Path) -> pathlib.Path | None:
    return next(iter(sorted(cache.glob("ttnn-0.81.1-*.whl"))), None)


def download(cache: pathlib.Path) -> pathlib.Path:
    """The wheel in `cache`, downloaded unless already there."""
    wheel = _wheel(cache)
    if wheel is None:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", *PIP_DOWNLOAD_PLATFORM,
                        TTNN_REQUIREMENT, "-d", str(cache)], check=True)
        wheel = _wheel(cache)
    return wheel


def unpacked(cache: pathlib.Path) -> pathlib.Path | None:
    """The wheel's `ttnn/` directory (what the JIT calls TT_METAL_RUNTIME_ROOT), unpacked
    once from the downloaded wheel; None if the wheel is not in `cache`."""
    root, done = cache / "unpacked", cache / "unpacked" / ".complete"
    if not done.exists():
        wheel = _wheel(cache)
        if wheel is None:
            return None
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root, [n for n in archive.namelist() if n.startswith(_UNPACKED)])
        for library in (root / "ttnn" / "build" / "lib").iterdir():  # zip keeps no modes; dlopen needs none, nm neither
            library.chmod(0o755)
        done.touch()
    return root / "ttnn"


@dataclasses.dataclass(frozen=True)
class Toolchain:
    clang: str
    runtime_root: pathlib.Path  # the wheel's ttnn/
    cxx_includes: tuple[pathlib.Path, ...]  # libstdc++'s headers and its x86_64 configuration


def find_toolchain() -> Toolchain | str:
    """The tools the kernel check needs, or why they are missing."""
    clang = shutil.which(CLANG)
    cxx = (pathlib.Path(f"/usr/include/c++/{LIBSTDCXX_VERSION}"),
           pathlib.Path(f"/usr/include/x86_64-linux-gnu/c++/{LIBSTDCXX_VERSION}"))
    root = unpacked(cache_dir())
    missing = [what for what, present in ((CLANG, clang), (f"newlib's headers ({NEWLIB_INCLUDE})",
                                                           NEWLIB_INCLUDE.is_dir()),
                                          (f"libstdc++-{LIBSTDCXX_VERSION} headers", all(p.is_dir() for p in cxx)),
                                          (f"the {TTNN_REQUIREMENT} wheel in {cache_dir()}", root)) if not present]
    if missing:
        return f"missing {', '.join(missing)}: {HOW_TO_GET}"
    return Toolchain(clang, root, cxx)


def include_paths(root: pathlib.Path, compute: bool) -> list[pathlib.Path]:
    """The 0.81.1 JIT's include paths for a Wormhole B0 kernel, in its order."""
    metal, internal = root / "tt_metal", root / "tt_metal" / "hw" / "inc" / "internal" / "tt-1xx"
    ckernels, llk = metal / "hw" / "ckernels" / "wormhole_b0" / "metal", metal / "tt-llk"
    paths = [root, metal / "hw" / "inc", llk / "common", llk / "tools" / "include", metal / "hostdevcommon" / "api",
             metal / "api", ckernels / "common", ckernels / "llk_io", internal, internal / "wormhole",
             internal / "wormhole" / "wormhole_b0_defines", internal / "wormhole" / "noc",
             llk / "tt_llk_wormhole_b0" / "common" / "inc", llk / "tt_llk_wormhole_b0" / "llk_lib",
             metal / "hw" / "firmware" / "src" / "tt-1xx"]
    if compute:
        paths += [ckernels / "llk_api", ckernels / "llk_api" / "llk_sfpu"]
    return paths


# chlkc_{unpack,math,pack}.cpp and the define each starts with (jit_build_genfiles_triscs_src).
_TRISC_SOURCES = {Processor.TRISC0: ("chlkc_unpack.cpp", "TRISC_UNPACK"),
                  Processor.TRISC1: ("chlkc_math.cpp", "TRISC_MATH"),
                  Processor.TRISC2: ("chlkc_pack.cpp", "TRISC_PACK")}


# The per-CB tables of chlkc_descriptors.h (types as the strings of libtt_metal.so 0.81.1
# spell them), for Wormhole's 32 CBs.
_CBS = 32
_UNPACK_TABLES = (("unsigned char", "unpack_src_format"), ("unsigned char", "unpack_dst_format"),
                  *(("uint8_t", f"unpack_{n}") for n in ("tile_num_faces", "partial_face", "tile_face_r_dim",
                                                         "narrow_tile", "tile_r_dim", "tile_c_dim")),
                  ("uint16_t", "unpack_tile_size"), ("uint8_t", "unpack_num_faces_r_dim"),
                  ("uint8_t", "unpack_num_faces_c_dim"))
_PACK_TABLES = (("unsigned char", "pack_src_format"), ("unsigned char", "pack_dst_format"),
                *(("uint8_t", f"pack_{n}") for n in ("tile_num_faces", "partial_face", "tile_face_r_dim",
                                                     "narrow_tile", "tile_r_dim", "tile_c_dim")),
                ("uint16_t", "pack_tile_size"), ("uint8_t", "pack_num_faces_r_dim"),
                ("uint8_t", "pack_num_faces_c_dim"))


def _tables(tables) -> str:
    return "".join(f"constexpr {kind} {name}[{_CBS}] = {{}};\n" for kind, name in tables)


@dataclasses.dataclass(frozen=True)
class Unit:
    """One translation unit the JIT compiles: a kernel on one of its processors, with what
    the JIT generates from the kernel's compile-time args and ComputeConfig."""

    name: str = dataclasses.field(compare=False)  # units equal but for their name are one check
    processor: Processor
    source: str
    compile_args: tuple[int, ...] = ()
    math_fidelity: int = 4  # ComputeConfig's MathFidelity value (HiFi4)
    math_approx_mode: bool = False
    fp32_dest_acc_en: bool = False
    dst_full_sync_en: bool = False

    def descriptors(self) -> str:
        """chlkc_descriptors.h as 0.81.1's generate_all_descriptors() lays it out (its
        section guards are strings in libtt_metal.so; 0.81.1 also gives PACK the math
        scalars); per-CB tables for Wormhole's 32 CBs, whose values a syntax check ignores."""
        math = ('#include "llk_defs.h"\n'
                "constexpr ckernel::MathFidelity MATH_FIDELITY = "
                f"static_cast<ckernel::MathFidelity>({self.math_fidelity});\n"
                f"constexpr bool APPROX = {str(self.math_approx_mode).lower()};\n")
        return ("#pragma once\n\n"
                f"#if defined(UCK_CHLKC_MATH)\n{math}#endif\n\n"
                f"#if !defined(UCK_CHLKC_PACK)\n{_tables(_UNPACK_TABLES)}#endif\n\n"
                f"#if !defined(UCK_CHLKC_MATH) && !defined(UCK_CHLKC_UNPACK)\n{_tables(_PACK_TABLES)}"
                f"#if defined(UCK_CHLKC_PACK)\n{_tables(_UNPACK_TABLES[:1])}#endif\n#endif\n\n"
                f"#if defined(UCK_CHLKC_PACK)\n{math}#endif\n\n"
                "#if defined(UCK_CHLKC_MATH) || defined(UCK_CHLKC_PACK) || defined(UCK_CHLKC_UNPACK) || "
                "defined(UCK_CHLKC_ISOLATE_SFPU)\n"
                f"constexpr bool DST_ACCUM_MODE = {str(self.fp32_dest_acc_en).lower()};\n"
                f"#define DST_SYNC_MODE DstSync::Sync{'Full' if self.dst_full_sync_en else 'Half'}\n#endif\n")

    def kernel_file(self) -> tuple[str, str]:
        """The generated file that holds the kernel's source, and what precedes the source in it."""
        if self.processor.compute:  # jit_build_genfiles_triscs_src: a prolog, then the source
            name, define = _TRISC_SOURCES[self.processor]
            return name, f'#define {define}\n#include "defines_generated.h"\n'
        return "kernel_includes.hpp", ""  # jit_build_genfiles_kernel_include: the source, inlined

    def write_genfiles(self, out: pathlib.Path) -> None:
        """What the JIT generates for this kernel in its out_dir (genfiles.cpp), plus the stand-ins."""
        out.mkdir(parents=True, exist_ok=True)
        name, prolog = self.kernel_file()
        (out / name).write_text(prolog + self.source)
        if self.processor.compute:
            (out / "defines_generated.h").write_text("")  # no defines of our own
            (out / "chlkc_descriptors.h").write_text(self.descriptors())
        for path, text in _STAND_INS.items():
            (out / "stand-ins" / path).parent.mkdir(parents=True, exist_ok=True)
            (out / "stand-ins" / path).write_text(text)

    def command(self, toolchain: Toolchain, out: pathlib.Path) -> list[str]:
        """The clang-19 command that parses the processor's firmware wrapper with this kernel."""
        root = toolchain.runtime_root
        wrapper = root / "tt_metal" / "hw" / "firmware" / "src" / "tt-1xx" / self.processor.wrapper
        defines = (*_COMMON_DEFINES, f"KERNEL_COMPILE_TIME_ARGS={','.join(map(str, self.compile_args))}",
                   *self.processor.defines)
        return [toolchain.clang, "--target=riscv32-unknown-elf", "-march=rv32im", "-fsyntax-only", *_LANGUAGE,
                "-nostdinc++", "-isystem", str(out / "stand-ins"),
                *(f for p in toolchain.cxx_includes for f in ("-isystem", str(p))), "-isystem", str(NEWLIB_INCLUDE),
                *_INT32_IS_LONG, *(f"-I{p}" for p in (out, *include_paths(root, self.processor.compute))),
                *(f"-D{d}" for d in defines), "-Wno-everything", "-ferror-limit=0", "-fno-color-diagnostics",
                "-x", "c++", str(wrapper)]


def program_units(name: str, program) -> list[Unit]:
    """Every translation unit of a tt_hal.target.program.Program: each kernel's generated
    source on each processor it runs on."""
    from tt_hal.native import codegen  # here, so that `python native/ttmetal_check.py download` needs no install

    units = []
    for kernel in program.kernels:
        source, config = codegen.kernel_source(kernel, program), kernel.config
        for processor in PROCESSORS[kernel.processor.name]:
            units.append(Unit(f"{name}.{kernel.processor.name.lower()}", processor, source,
                              tuple(kernel.compile_args), int(config.math_fidelity), config.math_approx_mode,
                              config.fp32_dest_acc_en, config.dst_full_sync_en))
    return units


_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):\d+: (?P<kind>fatal error|error|warning|note): "
                         r"(?P<message>.*)$", re.MULTILINE)


def check(toolchain: Toolchain, unit: Unit) -> list[str]:
    """The errors `unit`'s kernel gets from the real headers, as `where:line: message`
    (`kernel:line` is the line of the generated source). An error counts when the kernel
    causes it: located in the kernel, or located in the kernel API headers
    (tt_metal/hw/inc/api/) in a template the kernel instantiates. A fatal error counts
    wherever it is, since it ends the parse. Errors elsewhere come from the stand-ins
    (the LLK internals behind the API, and API functions the kernel does not call)."""
    with tempfile.TemporaryDirectory(prefix="ttmetal-check-") as scratch:
        out = pathlib.Path(scratch)
        unit.write_genfiles(out)
        result = subprocess.run(unit.command(toolchain, out), capture_output=True, text=True, check=False)
    api = toolchain.runtime_root / "tt_metal" / "hw" / "inc" / "api"
    kernel, prolog = out / unit.kernel_file()[0], unit.kernel_file()[1].count("\n")
    diagnostics = []  # [error, its notes...]
    for match in _DIAGNOSTIC.finditer(result.stderr):
        if match["kind"] == "note" and diagnostics:
            diagnostics[-1].append(match)
        elif match["kind"] != "note":
            diagnostics.append([match])

    def where(match) -> str:
        path = pathlib.Path(os.path.normpath(match["file"]))
        if path == kernel:
            return f"kernel:{int(match['line']) - prolog}"
        return f"{path.relative_to(toolchain.runtime_root) if path.is_relative_to(toolchain.runtime_root) else path}" \
               f":{match['line']}"

    errors = []
    for error, *notes in diagnostics:
        located = pathlib.Path(os.path.normpath(error["file"]))
        instantiated_by_kernel = any(where(note).startswith("kernel:") and "requested here" in note["message"]
                                     for note in notes)
        if error["kind"] == "fatal error" or located == kernel or (located.is_relative_to(api)
                                                                   and instantiated_by_kernel):
            errors.append(f"{where(error)}: {error['message']}")
    return errors


if __name__ == "__main__":
    if sys.argv[1:] != ["download"]:
        sys.exit(f"usage: python {sys.argv[0]} download   (fetches {TTNN_REQUIREMENT} into {cache_dir()})")
    print(download(cache_dir()))
