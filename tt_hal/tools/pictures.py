"""Pictures of a device: the chip's core grid with L1 use and shard placement, and the
submission graph. matplotlib's object API (no pyplot), so drawing needs no display
and leaves no global state behind.

The chip picture shades each core by the share of its allocatable L1 that buffer
pages fill (an absolute scale, drawn as a colour bar: a nearly empty core is light
whatever the other cores hold), and names buffers by what the user knows them as:
the names given to `save_chip_png(..., names=)`, else, with a profiling trace, the
first dispatch that bound the buffer (`export:bN`, binding N), else the HAL's
allocation id `bufN` (said to be one in the legend)."""

from __future__ import annotations

import re

from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch, Rectangle

from hal.submission_graph import STATE_COLORS, SubmissionGraph, SubmissionState

L1_COLORMAP = colormaps["YlOrRd"]  # 0 (light yellow) .. 1 (dark red): the share of a core's L1 in use
EMPTY_CORE = (1.0, 1.0, 1.0, 1.0)  # white: no buffer pages at all
FAILED_WAIT = "#c0392b"
_BINDING = re.compile(r"^(DRAM|L1) (0x[0-9a-fA-F]+)\+(\d+)")  # a dispatch binding as traces show it
_CELL_NAME = 16  # characters of a buffer name that fit in a core's cell
_LEGEND_BUFFERS = 8  # L1 buffers the chip picture's legend lists


def _kib(n: float) -> str:
    return f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def _save(figure: Figure, path) -> None:
    FigureCanvasAgg(figure)
    figure.savefig(path, dpi=150)


def _short(name: str, width: int = _CELL_NAME) -> str:
    """`name` cut in the middle to `width` characters (the legend has it whole)."""
    if len(name) <= width:
        return name
    head = (width - 1) // 2
    return name[:head] + "…" + name[len(name) - (width - 1 - head):]


def _short_shard(shard: str) -> str:
    """"name[k]" with the name cut to fit a cell, keeping the shard index."""
    name, bracket, index = shard.rpartition("[")
    return _short(name) + bracket + index if bracket else _short(shard)


def l1_colour(used: int, capacity: int) -> tuple:
    """The shade of a core holding `used` bytes of buffer pages in `capacity` bytes of
    allocatable L1: L1_COLORMAP at the share used (absolute: 3% is light whatever the
    other cores hold), white when it holds none."""
    if used <= 0:
        return EMPTY_CORE
    return L1_COLORMAP(min(used / capacity, 1.0))


def _luminance(colour) -> float:
    r, g, b = colour[:3]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _label_of(buffer) -> str:
    """The HAL allocation id (bufN) of a device tensor, a HalBuffer or the id itself."""
    if isinstance(buffer, str):
        return buffer
    if hasattr(buffer, "get_buffer"):  # a HalBufferView (device tensor)
        buffer = buffer.get_buffer()
    return buffer.allocation.label


def dispatch_bindings(trace: dict | None) -> dict[tuple[str, int], list[str]]:
    """(buffer type, address) -> the dispatch bindings of a profiling trace that used the
    buffer there, in the order the dispatches ran: "export:bN" (binding N of the
    dispatch named as the trace names it)."""
    uses: dict[tuple[str, int], list[str]] = {}
    dispatches = [e for e in (trace or {"traceEvents": ()})["traceEvents"]
                  if e.get("cat") == "command" and "workgroup_count" in e.get("args", {})]
    for event in sorted(dispatches, key=lambda e: e["ts"]):
        for k, binding in enumerate(event["args"].get("bindings", ())):
            match = _BINDING.match(str(binding))
            if match:
                used = uses.setdefault((match.group(1), int(match.group(2), 16)), [])
                if f"{event['name']}:b{k}" not in used:
                    used.append(f"{event['name']}:b{k}")
    return uses


def buffer_names(memory_map: list[dict], trace: dict | None = None, names: dict | None = None) -> dict[str, str]:
    """The name a person knows each buffer of `memory_map` by (HAL id -> name): a name
    of `names` ({name: device tensor, HalBuffer or HAL id}), else the first dispatch
    binding of `trace` that used it ("export:bN"), else its HAL allocation id "bufN".
    Names are unique: a repeated one gets the HAL id after it."""
    given = {_label_of(buffer): name for name, buffer in (names or {}).items()}
    uses = dispatch_bindings(trace)
    result, taken = {}, set()
    for buffer in memory_map:
        label = buffer["name"]
        found = uses.get((buffer["buffer_type"], buffer["address"]))
        name = given.get(label) or (found[0] if found else label)
        if name in taken:
            name = f"{name} ({label})"
        taken.add(name)
        result[label] = name
    return result


def chip_usage(memory_map: list[dict], arch, trace: dict | None = None, names: dict | None = None) -> dict:
    """Bytes of buffer pages per worker core's L1 ("l1") and per DRAM bank ("dram"), the
    share of each core's allocatable L1 they fill ("l1_share", 0..1), the shards on
    each core ("shards": core -> ["name[k]"], named by buffer_names), from
    `HalDevice.memory_map()`; with a profiling `trace`, also the largest
    circular-buffer footprint each core had in a dispatch ("circular_buffers")."""
    l1 = [0] * arch.worker_cores
    dram = [0] * arch.dram_bank_count
    circular_buffers = [0] * arch.worker_cores
    shards: dict[int, list[str]] = {}
    named = buffer_names(memory_map, trace, names)
    for buffer in memory_map:
        used = l1 if buffer["buffer_type"] == "L1" else dram
        for row, pages in enumerate(buffer["pages_per_bank"]):
            used[row] += pages * buffer["aligned_page_size"]
        if buffer["buffer_type"] == "L1":
            for k, (x, y) in enumerate(buffer["shard_cores"]):
                shards.setdefault(y * arch.grid_x + x, []).append(f"{named[buffer['name']]}[{k}]")
    for event in trace["traceEvents"] if trace is not None else ():
        if event.get("cat") == "kernel":
            x, y = event["args"]["core"]
            core = y * arch.grid_x + x
            circular_buffers[core] = max(circular_buffers[core], event["args"]["circular_buffer_bytes"])
    return {"l1": l1, "l1_share": [u / arch.l1_bank_size for u in l1], "dram": dram, "shards": shards,
            "circular_buffers": circular_buffers, "names": named}


def _buffer_legend(memory_map: list[dict], usage: dict, trace: dict | None) -> list[str]:
    """Lines saying what each L1 buffer's name is and where it is."""
    uses = dispatch_bindings(trace)
    lines = []
    l1_buffers = [b for b in memory_map if b["buffer_type"] == "L1"]
    for buffer in l1_buffers[:_LEGEND_BUFFERS]:
        label, name = buffer["name"], usage["names"][buffer["name"]]
        cores = sum(1 for pages in buffer["pages_per_bank"] if pages)
        bound = uses.get(("L1", buffer["address"]), [])
        what = (f"bound as {', '.join(bound[:3])}{' ...' if len(bound) > 3 else ''}" if bound
                else "no dispatch in the trace bound it" if trace is not None else "")
        kind = "HAL allocation id, no name known" if name == label else f"HAL id {label}"
        lines.append(f"{name} ({kind}): {_kib(buffer['size'])} {buffer['layout'].lower()} on {cores} "
                     f"core{'s' * (cores != 1)}" + (f"; {what}" if what else ""))
    if len(l1_buffers) > _LEGEND_BUFFERS:
        lines.append(f"... and {len(l1_buffers) - _LEGEND_BUFFERS} more L1 buffers")
    dram_buffers = len(memory_map) - len(l1_buffers)
    if dram_buffers:
        lines.append(f"{dram_buffers} DRAM buffer{'s' * (dram_buffers != 1)} (in the bars below, not in the cells)")
    return lines


def chip_figure(device, memory_map: list[dict] | None = None, when: str = "now", trace: dict | None = None,
                names: dict | None = None) -> tuple[Figure, dict]:
    """The chip picture of save_chip_png as a matplotlib Figure, and chip_usage()."""
    arch = device.arch
    memory_map = device.memory_map() if memory_map is None else memory_map
    usage = chip_usage(memory_map, arch, trace, names)
    capacity = arch.l1_bank_size
    legend = [
        f"Shade: the share of each core's {_kib(capacity)} of allocatable L1 that buffer pages fill {when} "
        f"(colour bar; white: none)" + ("; CBs: the largest circular-buffer footprint a dispatch had on the core "
                                        "(not shaded)" if trace is not None else "") + ".",
        "Cell: (x,y), bytes of buffer pages, then name[k]: shard k of a buffer. Names: yours (names=), else "
        "export:bN (binding N of the first dispatch that used it), else bufN (the HAL's allocation id).",
        *_buffer_legend(memory_map, usage, trace)]
    width = max(7.0, 1.1 * arch.grid_x + 2.5)
    legend_height = 0.16 * (len(legend) + 1)
    figure = Figure(figsize=(width, 1.05 * arch.grid_y + 3.4 + legend_height), layout="constrained")
    grid_axes, legend_axes, dram_axes = figure.subplots(
        3, 1, gridspec_kw={"height_ratios": [1.05 * arch.grid_y, legend_height, 1.6]})
    for core, used in enumerate(usage["l1"]):
        x, y = core % arch.grid_x, core // arch.grid_x
        colour = l1_colour(used, capacity)
        grid_axes.add_patch(Rectangle((x, y), 0.94, 0.94, facecolor=colour, edgecolor="black", gid=f"core {x},{y}"))
        share = used / capacity
        lines = [f"({x},{y})", (f"{_kib(used)} ({100 * share:.0f}%)" if share >= 0.01 else _kib(used)) if used
                 else "-"]
        if usage["circular_buffers"][core]:
            lines.append(f"CBs {_kib(usage['circular_buffers'][core])}")
        held = usage["shards"].get(core, [])
        lines += [_short_shard(h) for h in held[:3]] + ([f"+{len(held) - 3} more"] if len(held) > 3 else [])
        grid_axes.text(x + 0.47, y + 0.47, "\n".join(lines), ha="center", va="center", fontsize=6.5,
                       color="white" if _luminance(colour) < 0.45 else "black")
    grid_axes.set_xlim(-0.1, arch.grid_x)
    grid_axes.set_ylim(arch.grid_y, -0.1)  # row 0 at the top, as tt-metal draws core grids
    grid_axes.set_aspect("equal")
    grid_axes.axis("off")
    grid_axes.set_title(f"{arch.name}: {arch.grid_x}x{arch.grid_y} worker cores, L1 {when}: shade = share of the "
                        f"core's {_kib(capacity)} of allocatable L1 in buffer pages\n"
                        f"({_kib(sum(usage['l1']))} in use on all cores)", fontsize=9)
    bar = figure.colorbar(ScalarMappable(Normalize(0, 100), L1_COLORMAP), ax=grid_axes, shrink=0.6, pad=0.01)
    bar.set_label(f"% of the core's {_kib(capacity)} of allocatable L1 in buffer pages", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    legend_axes.axis("off")
    legend_axes.text(0.0, 1.0, "\n".join(legend), ha="left", va="top", fontsize=7, transform=legend_axes.transAxes,
                     gid="legend")
    banks = range(arch.dram_bank_count)
    dram_axes.bar(banks, [u / (1 << 20) for u in usage["dram"]], color="#4c72b0")
    dram_axes.set_xticks(list(banks))
    dram_axes.set_ylim(0, max(max(usage["dram"]) / (1 << 20) * 1.1, 1.0))
    dram_axes.set_xlabel("DRAM bank")
    dram_axes.set_ylabel("MiB of buffer pages")
    dram_axes.set_title(f"DRAM {when}: {arch.dram_bank_count} banks of {_kib(arch.dram_bank_size)}", fontsize=9)
    return figure, usage


def save_chip_png(device, path, memory_map: list[dict] | None = None, when: str = "now",
                  trace: dict | None = None, names: dict | None = None) -> dict:
    """Draws the worker grid (each core shaded by the share of its allocatable L1 that
    buffer pages fill, on an absolute scale with a colour bar; which shard of which
    buffer it holds; with a profiling `trace`, the largest circular-buffer footprint of
    its dispatches), a legend naming the L1 buffers, and the DRAM banks' use, from
    `memory_map` (default: the device's now; e.g. device.peak_memory_map() with
    when="at peak"). Buffers are named by `names` ({name: device tensor, HalBuffer or
    HAL id}), else by the trace's first dispatch binding of them, else by their HAL
    id (buffer_names). Returns chip_usage()."""
    figure, usage = chip_figure(device, memory_map, when, trace, names)
    _save(figure, path)
    return usage


def submission_graph_figure(graph: SubmissionGraph) -> Figure:
    """The picture of save_submission_graph_png as a matplotlib Figure. Each arrow's
    label sits at its middle (gid "edge label N", the arrow "edge N"), away from the
    arrowhead; the legend (gid "legend") explains boxes and arrows."""
    depth: dict[int, int] = {}
    producers: dict[int, list] = {}
    for edge in graph.edges:
        producers.setdefault(edge.consumer, []).append(edge)
    for node in graph.nodes:  # ids increase in submission order, and a wait's producer
        depth[node.id] = 1 + max((depth.get(e.producer, 0) for e in producers.get(node.id, [])
                                  if e.producer is not None), default=-1)
    has_host = any(e.producer is None for e in graph.edges)
    columns: dict[int, list[int]] = {}
    for node in graph.nodes:
        columns.setdefault(depth[node.id] + has_host, []).append(node.id)
    rows = max([len(c) for c in columns.values()] + [1])
    column_count = max(columns, default=0) + 1
    figure = Figure(figsize=(max(6.0, 2.6 * column_count), max(2.5, 0.9 * rows + 1.2) + 1.1), layout="constrained")
    axes = figure.subplots()
    position = {node_id: (column * 2.6, -row * 0.9) for column, ids in columns.items()
                for row, node_id in enumerate(ids)}
    host = (0.0, -(rows - 1) * 0.45)
    nodes = {node.id: node for node in graph.nodes}
    for node_id, (x, y) in position.items():
        node = nodes[node_id]
        axes.add_patch(FancyBboxPatch((x, y - 0.3), 2.0, 0.6, boxstyle="round,pad=0.02",
                                      facecolor=STATE_COLORS[node.state], edgecolor="black"))
        axes.text(x + 1.0, y, f"#{node.id} {node.label}\nCQ{node.cq} {node.state}", ha="center", va="center",
                  fontsize=7)
    if has_host:
        axes.add_patch(FancyBboxPatch((host[0], host[1] - 0.3), 2.0, 0.6, boxstyle="round,pad=0.02",
                                      facecolor="white", edgecolor="gray", linestyle="--"))
        axes.text(host[0] + 1.0, host[1], "host signal\nor initial value", ha="center", va="center", fontsize=7)
    incoming: dict[int, int] = {}
    outgoing: dict[object, int] = {}
    for index, edge in enumerate(graph.edges):
        source = edge.producer if edge.producer in position else None
        sx, sy = host if source is None else position[source]
        tx, ty = position[edge.consumer]
        k = incoming[edge.consumer] = incoming.get(edge.consumer, -1) + 1  # fan the waits of one box out
        j = outgoing[source] = outgoing.get(source, -1) + 1  # and the arrows leaving one box
        start, end = (sx + 2.0, sy + 0.2 - 0.12 * (j % 4)), (tx, ty + 0.2 - 0.12 * (k % 4))
        colour = FAILED_WAIT if edge.reached is None else "black"
        axes.annotate("", xy=end, xytext=start, gid=f"edge {index}",
                      arrowprops={"arrowstyle": "->", "linestyle": "-" if edge.reached else "--", "color": colour})
        axes.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, f"{edge.semaphore}>={edge.value}", fontsize=6,
                  ha="center", va="center", color=colour, gid=f"edge label {index}",
                  bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    axes.set_xlim(-0.3, 2.6 * column_count + 0.3)
    axes.set_ylim(-0.9 * rows + 0.3, 0.6)
    axes.axis("off")
    counts = ", ".join(f"{n} {s}" for s, n in graph.counts().items() if n)
    axes.set_title(f"submission graph of {graph.device_name} ({counts or 'empty'})", fontsize=9)
    handles = [Patch(facecolor=STATE_COLORS[state], edgecolor="black", label=f"submission {state.value}")
               for state in SubmissionState]
    handles += [Patch(facecolor="white", edgecolor="gray", linestyle="--",
                      label="host: a value no submission signals (host signal or initial value)"),
                Line2D([], [], color="black", label="wait sem>=value, reached (from its signaller)"),
                Line2D([], [], color="black", linestyle="--", label="wait not reached yet"),
                Line2D([], [], color=FAILED_WAIT, linestyle="--", label="wait failed (its signaller failed)")]
    legend = figure.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=6.5, frameon=False,
                           title="box: #id queue operation, CQn (command queue), state; "
                                 "arrow: a semaphore wait, from the submission signalling the value",
                           title_fontsize=7)
    legend.set_gid("legend")
    return figure


def save_submission_graph_png(graph: SubmissionGraph, path) -> None:
    """Draws submissions as boxes coloured by state, in columns by dependency depth,
    with an arrow per semaphore wait (dashed: not reached yet; red: failed; from "host"
    when no submission signals the value), labelled sem>=value at its middle, and a
    legend of box colours and arrow kinds."""
    _save(submission_graph_figure(graph), path)
