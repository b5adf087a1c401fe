"""Pictures of a device: the chip's core grid with L1 use and shard placement, and the
submission graph. matplotlib's object API (no pyplot), so drawing needs no display
and leaves no global state behind."""

from __future__ import annotations

from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

from hal.submission_graph import STATE_COLORS, SubmissionGraph


def _kib(n: float) -> str:
    return f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def _save(figure: Figure, path) -> None:
    FigureCanvasAgg(figure)
    figure.savefig(path, dpi=150)


def chip_usage(memory_map: list[dict], arch, trace: dict | None = None) -> dict:
    """Bytes of buffer pages per worker core's L1 and per DRAM bank, the shards on each
    core, from `HalDevice.memory_map()`; with a profiling `trace`, also the largest
    circular-buffer footprint each core had in a dispatch."""
    l1 = [0] * arch.worker_cores
    dram = [0] * arch.dram_bank_count
    circular_buffers = [0] * arch.worker_cores
    shards: dict[int, list[str]] = {}
    for buffer in memory_map:
        used = l1 if buffer["buffer_type"] == "L1" else dram
        for row, pages in enumerate(buffer["pages_per_bank"]):
            used[row] += pages * buffer["aligned_page_size"]
        if buffer["buffer_type"] == "L1":
            for k, (x, y) in enumerate(buffer["shard_cores"]):
                shards.setdefault(y * arch.grid_x + x, []).append(f"{buffer['name']}[{k}]")
    for event in trace["traceEvents"] if trace is not None else ():
        if event.get("cat") == "kernel":
            x, y = event["args"]["core"]
            core = y * arch.grid_x + x
            circular_buffers[core] = max(circular_buffers[core], event["args"]["circular_buffer_bytes"])
    return {"l1": l1, "dram": dram, "shards": shards, "circular_buffers": circular_buffers}


def save_chip_png(device, path, memory_map: list[dict] | None = None, when: str = "now",
                  trace: dict | None = None) -> dict:
    """Draws the worker grid (each core's L1 bytes holding buffer pages, which shard of
    which buffer it holds, and with a profiling `trace` the largest circular-buffer
    footprint of its dispatches) and the DRAM banks' use, from `memory_map` (default:
    the device's now; e.g. device.peak_memory_map() with when="at peak"); returns
    chip_usage()."""
    arch = device.arch
    usage = chip_usage(device.memory_map() if memory_map is None else memory_map, arch, trace)
    width = max(6.0, 1.1 * arch.grid_x + 1.5)
    figure = Figure(figsize=(width, 1.05 * arch.grid_y + 3.2))
    grid_axes, dram_axes = figure.subplots(2, 1, gridspec_kw={"height_ratios": [arch.grid_y, 1.6]})
    colormap = colormaps["YlOrRd"]
    capacity = arch.l1_bank_size
    busiest = max(usage["l1"]) or 1  # colours relative to the fullest core: buffers are small next to L1
    for core, used in enumerate(usage["l1"]):
        x, y = core % arch.grid_x, core // arch.grid_x
        share = used / busiest
        grid_axes.add_patch(Rectangle((x, y), 0.94, 0.94, facecolor=colormap(0.1 + 0.8 * share) if used else "white",
                                      edgecolor="black"))
        lines = [f"({x},{y})", _kib(used) if used else "-"]
        if usage["circular_buffers"][core]:
            lines.append(f"CBs {_kib(usage['circular_buffers'][core])}")
        held = usage["shards"].get(core, [])
        lines += held[:3] + ([f"+{len(held) - 3} more"] if len(held) > 3 else [])
        grid_axes.text(x + 0.47, y + 0.47, "\n".join(lines), ha="center", va="center", fontsize=6.5,
                       color="white" if share > 0.6 else "black")
    grid_axes.set_xlim(-0.1, arch.grid_x)
    grid_axes.set_ylim(arch.grid_y, -0.1)  # row 0 at the top, as tt-metal draws core grids
    grid_axes.set_aspect("equal")
    grid_axes.axis("off")
    total = sum(usage["l1"])
    grid_axes.set_title(f"{arch.name}: {arch.grid_x}x{arch.grid_y} worker cores, L1 holding buffer pages {when}\n"
                        f"({_kib(capacity)} per core; {_kib(total)} in use in all; darker = fuller"
                        + ("; CBs: the largest circular-buffer footprint a dispatch had there" if trace else "")
                        + ")", fontsize=9)
    banks = range(arch.dram_bank_count)
    dram_axes.bar(banks, [u / (1 << 20) for u in usage["dram"]], color="#4c72b0")
    dram_axes.set_xticks(list(banks))
    dram_axes.set_ylim(0, max(max(usage["dram"]) / (1 << 20) * 1.1, 1.0))
    dram_axes.set_xlabel("DRAM bank")
    dram_axes.set_ylabel("MiB used")
    dram_axes.set_title(f"DRAM {when}: {arch.dram_bank_count} banks of {_kib(arch.dram_bank_size)}", fontsize=9)
    figure.tight_layout()
    _save(figure, path)
    return usage


def save_submission_graph_png(graph: SubmissionGraph, path) -> None:
    """Draws submissions as boxes coloured by state, in columns by dependency depth,
    with an arrow per semaphore wait (dashed: not reached yet; from "host" when no
    submission signals the value)."""
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
    figure = Figure(figsize=(max(4.0, 2.6 * column_count), max(2.5, 0.9 * rows + 1.2)))
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
    for edge in graph.edges:
        sx, sy = host if edge.producer is None or edge.producer not in position else position[edge.producer]
        tx, ty = position[edge.consumer]
        k = incoming[edge.consumer] = incoming.get(edge.consumer, -1) + 1  # fan the waits of one box out
        ty += 0.2 - 0.12 * k
        axes.annotate("", xy=(tx, ty), xytext=(sx + 2.0, sy),
                      arrowprops={"arrowstyle": "->", "linestyle": "-" if edge.reached else "--"})
        axes.text(tx - 0.05, ty + 0.02, f"{edge.semaphore}>={edge.value}", fontsize=6, ha="right", va="bottom")
    axes.set_xlim(-0.3, 2.6 * column_count + 0.3)
    axes.set_ylim(-0.9 * rows + 0.3, 0.6)
    axes.axis("off")
    counts = ", ".join(f"{n} {s}" for s, n in graph.counts().items() if n)
    axes.set_title(f"submission graph of {graph.device_name} ({counts or 'empty'})", fontsize=9)
    figure.tight_layout()
    _save(figure, path)
