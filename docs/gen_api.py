"""Writes docs/api-reference.md, the API reference, from the docstrings.

    python docs/gen_api.py            # rewrites docs/api-reference.md
    python docs/gen_api.py --check    # exit 1 if the file is stale

Standard library only (inspect, ast). The output is deterministic: names sorted,
class members in definition order, default values rendered without memory
addresses, so that tests/test_docs.py can demand that the committed file equals a
fresh rendering.

To document another module, add it to MODULES (and to SELECTIONS to pick names).
A class or function is documented once, under the first module that exposes it;
later modules link to that entry.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import inspect
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "api-reference.md"

# The modules a user touches, in the order of the reference.
MODULES = [
    "hal",
    "tt_hal.ops",
    "tt_hal.target.kernel_builder",
    "tt_hal.target.isa",
    "tt_hal.target.program",
    "tt_hal.target.placement",
    "tt_hal.target.layout",
    "tt_hal.compiler.vmfb",
    "tt_hal.runtime.system",
    "tt_hal.runtime.signature",
    "tt_hal.tools.testing",
]
# Modules that may not exist yet: skipped when they do not import.
OPTIONAL = {"tt_hal.tools.testing"}
# Modules documented only in part: the names a kernel writer uses.
SELECTIONS = {
    "tt_hal.target.isa": ("Processor", "Op", "MathFidelity", "Broadcast", "ReduceKind", "SfpuOp", "disassemble"),
}
# Special methods worth documenting when they have a docstring (k.cb_wait_front(...), module.main, ...).
DUNDERS = ("__call__", "__getattr__", "__getitem__", "__enter__", "__exit__", "__iter__", "__len__")

_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


# ---- Values, annotations and signatures ----

def render_value(value) -> str:
    """Source-like text of a default or constant, with no memory addresses."""
    if isinstance(value, enum.Enum):
        cls = type(value).__name__
        if value.name is None:
            return f"{cls}({value.value!r})"
        return "|".join(f"{cls}.{name}" for name in value.name.split("|"))
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return repr(value)
    if isinstance(value, tuple):
        items = [render_value(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if isinstance(value, list):
        return f"[{', '.join(render_value(v) for v in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render_value(k)}: {render_value(v)}" for k, v in value.items()) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [f for f in dataclasses.fields(value) if f.repr]
        inner = ", ".join(f"{f.name}={render_value(getattr(value, f.name))}" for f in fields)
        return f"{type(value).__name__}({inner})"
    if inspect.isclass(value) or inspect.isfunction(value) or inspect.isbuiltin(value):
        return value.__qualname__
    text = repr(value)
    return f"<{type(value).__name__}>" if _ADDRESS.search(text) else text


_QUOTED = re.compile(r"""(['"])([\w.\[\], |]+)\1""")


def render_annotation(annotation) -> str:
    if isinstance(annotation, str):  # `from __future__ import annotations`: the source text
        return _QUOTED.sub(r"\2", annotation)  # forward references without their quotes
    if inspect.isclass(annotation):
        return annotation.__qualname__
    return str(annotation).replace("typing.", "")


def render_signature(function, drop_first: bool = False) -> str:
    """`(a, b: int = 0, *, c=None) -> str`, or "(...)" when there is no signature."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return "(...)"
    parameters = list(signature.parameters.values())
    if drop_first and parameters:
        parameters = parameters[1:]
    parts, star_done, slash_pending = [], False, False
    for p in parameters:
        if p.kind is p.POSITIONAL_ONLY:
            slash_pending = True
        elif slash_pending:
            parts.append("/")
            slash_pending = False
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text, star_done = f"*{p.name}", True
        elif p.kind is p.VAR_KEYWORD:
            text = f"**{p.name}"
        if p.annotation is not p.empty:
            text += f": {render_annotation(p.annotation)}"
        if p.default is not p.empty:
            text += f" = {render_value(p.default)}" if p.annotation is not p.empty else f"={render_value(p.default)}"
        parts.append(text)
    if slash_pending:
        parts.append("/")
    result = f"({', '.join(parts)})"
    if signature.return_annotation is not signature.empty:
        result += f" -> {render_annotation(signature.return_annotation)}"
    return result


# ---- Docstrings ----

_TAG_OR_CODE = re.compile(r"(`+).+?\1|<(?=[A-Za-z/!?])")


def markdown_text(doc: str) -> str:
    """A docstring as Markdown: a `<` that could open an HTML tag becomes `&lt;`,
    except in code spans and indented code blocks."""
    return "\n".join(
        line if line.startswith("    ") else _TAG_OR_CODE.sub(lambda m: m.group(0) if m.group(1) else "&lt;", line)
        for line in doc.split("\n"))


def own_docstring(obj) -> str:
    """The object's own docstring (not inherited, not dataclasses' generated one), cleaned."""
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
        if doc and dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("):
            doc = None  # dataclasses write "Name(field: type, ...)" when a class has none
    else:
        doc = getattr(obj, "__doc__", None)
    return inspect.cleandoc(doc) if isinstance(doc, str) and doc.strip() else ""


# ---- What a module exposes ----

def _assigned_constants(module) -> list[str]:
    """Public UPPER_CASE names assigned at the top level of the module's own source."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return []
    names = []
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id.isupper() and not target.id.startswith("_"):
                names.append(target.id)
    return names


def public_names(module) -> list[str]:
    """SELECTIONS, else __all__, else the classes and functions defined in the module
    and its UPPER_CASE constants."""
    if module.__name__ in SELECTIONS:
        return list(SELECTIONS[module.__name__])
    if hasattr(module, "__all__"):
        return list(module.__all__)
    names = []
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and getattr(obj, "__module__", None) == module.__name__:
            names.append(name)
    return names + [n for n in _assigned_constants(module) if n not in names]


def kind_of(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        if issubclass(obj, enum.Enum):
            return "enum"
        if issubclass(obj, BaseException):
            return "exception"
        return "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return "function"
    return "constant"


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return "#" + text.replace(" ", "-")


# ---- Rendering ----

class Reference:
    """The Markdown of one rendering; remembers what it documented, to link to it."""

    def __init__(self, modules):
        self.modules = modules
        self.documented: dict[int, tuple[str, str]] = {}  # id(obj) -> (display name, anchor)
        self.constants: dict[tuple[str, int], str] = {}  # (name, id(value)) -> module that lists it
        self.lines: list[str] = []

    def out(self, *lines: str) -> None:
        self.lines.extend(lines)

    def paragraph(self, text: str) -> None:
        if text:
            self.out(markdown_text(text), "")

    def render(self) -> str:
        self.out("# API reference", "",
                 "Generated from the docstrings by `python docs/gen_api.py`: do not edit by hand; "
                 "`tests/test_docs.py` fails when this file is stale. The guides explain the concepts: "
                 "[hal-api.md](hal-api.md), [layouts.md](layouts.md), [tensix.md](tensix.md), "
                 "[compiler.md](compiler.md).", "")
        self.out("Modules: " + " · ".join(f"[`{m.__name__}`]({anchor('module ' + m.__name__)})"
                                           for m in self.modules), "")
        for module in self.modules:
            self.module(module)
        while self.lines and self.lines[-1] == "":
            self.lines.pop()
        return "\n".join(self.lines) + "\n"

    def module(self, module) -> None:
        name = module.__name__
        self.out(f"## module {name}", "")
        self.paragraph(own_docstring(module))
        if name in SELECTIONS:
            self.paragraph(f"The names kernel writers use; the rest of `{name}` serves the backends.")
        entries = []
        for attr in public_names(module):
            obj = getattr(module, attr)
            entries.append((attr, obj, kind_of(obj)))
        entries.sort(key=lambda e: (("constant", "module", "enum", "class", "exception", "function").index(e[2]),
                                    e[0].lower(), e[0]))
        seen_elsewhere = []
        constants = []
        for attr, obj, kind in entries:
            if kind != "constant":
                continue
            owner = self.constants.setdefault((attr, id(obj)), name)
            if owner == name:
                constants.append(f"- `{attr} = {render_value(obj)}`")
            else:
                seen_elsewhere.append(f"`{attr}` ([`{owner}`]({anchor('module ' + owner)}))")
        if constants:
            self.out("### Constants", "", *constants, "")
        for attr, obj, kind in entries:
            if kind == "constant":
                continue
            if kind == "module":
                target = f"module {obj.__name__}"
                if obj in self.modules:
                    seen_elsewhere.append(f"[`{attr}`]({anchor(target)}) (module)")
                else:
                    seen_elsewhere.append(f"`{attr}` (module `{obj.__name__}`)")
                continue
            if id(obj) in self.documented:
                display, link = self.documented[id(obj)]
                seen_elsewhere.append(f"[`{attr}`]({link})" + (f" (`{display}`)" if display.split(".")[-1] != attr
                                                                 else ""))
                continue
            qualified = f"{name}.{attr}"
            heading = f"{kind} {qualified}"
            self.documented[id(obj)] = (qualified, anchor(heading))
            if kind == "function":
                self.function(heading, attr, obj)
            else:
                self.cls(heading, attr, obj)
        if seen_elsewhere:
            self.out("### Also in this module", "", ", ".join(seen_elsewhere), "")

    def function(self, heading: str, attr: str, function) -> None:
        self.out(f"### {heading}", "", f"```python\n{attr}{render_signature(function)}\n```", "")
        self.paragraph(own_docstring(function))

    def cls(self, heading: str, attr: str, cls) -> None:
        self.out(f"### {heading}", "")
        is_enum = issubclass(cls, enum.Enum)
        if not is_enum:
            signature = render_signature(cls)
            self.out(f"```python\n{attr}{signature if signature != '(...)' else ''}\n```", "")
        bases = [b for b in cls.__bases__ if b is not object]
        if bases:
            self.out("Bases: " + ", ".join(f"`{b.__qualname__}`" for b in bases), "")
        self.paragraph(own_docstring(cls))
        if is_enum:
            self.members(cls)
        for member, value in vars(cls).items():
            if member.startswith("_") and member not in DUNDERS:
                continue
            self.member(attr, member, value)

    def members(self, cls) -> None:
        flag = issubclass(cls, enum.Flag)
        rows = ["| member | value |", "|---|---|"]
        for member_name, member in cls.__members__.items():
            value = member.value
            if flag and isinstance(value, int):
                text = f"{value:#x}"
            elif isinstance(value, int):
                text = str(value) if value < 256 else f"{value} = {value:#x}"
            else:
                text = render_value(value)
            rows.append(f"| `{member_name}` | `{text}` |")
        self.out(*rows, "")

    def member(self, owner: str, name: str, value) -> None:
        if isinstance(value, property):
            function, label = value.fget, "property"
            annotation = inspect.signature(function).return_annotation if function else inspect.Signature.empty
            text = f"{owner}.{name}" + (f" -> {render_annotation(annotation)}"
                                        if annotation is not inspect.Signature.empty else "")
        elif isinstance(value, (staticmethod, classmethod)):
            function = value.__func__
            label = "staticmethod" if isinstance(value, staticmethod) else "classmethod"
            text = f"{owner}.{name}{render_signature(function, drop_first=label == 'classmethod')}"
        elif inspect.isfunction(value):
            function, label = value, ""
            text = f"{owner}.{name}{render_signature(function, drop_first=True)}"
        else:
            return
        doc = own_docstring(function) if function else ""
        if name.startswith("__") and not doc:
            return
        self.out(f"**`{text}`**" + (f" ({label})" if label else ""), "")
        self.paragraph(doc)


def load_modules(names=None) -> list:
    modules = []
    for name in names or MODULES:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as error:
            if name in OPTIONAL and error.name == name:
                continue
            raise
    return modules


def render() -> str:
    """The text of docs/api-reference.md."""
    return Reference(load_modules()).render()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(ROOT)} is stale; run: python docs/gen_api.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
