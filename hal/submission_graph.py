"""The device's submission graph: which submission waits on which semaphore value,
and which submission (or the host) will signal it; like IREE's task-graph dumps.

`HalDevice.submission_graph()` snapshots it; `to_text()` is for logs and bug
reports, `to_dot()` for Graphviz, and `tt_hal.tools.pictures.save_submission_graph_png`
draws it without Graphviz.
"""

from __future__ import annotations

import dataclasses
import enum


class SubmissionState(enum.StrEnum):
    """Where a submission is: done or failed (complete), issued (on a hardware queue,
    not complete yet) or waiting (for semaphore values nobody has promised yet)."""

    DONE = "done"
    FAILED = "failed"
    ISSUED = "issued"
    WAITING = "waiting"


STATE_COLORS = {SubmissionState.DONE: "#b7e1a1", SubmissionState.FAILED: "#f4a6a6",
                SubmissionState.ISSUED: "#fce38a", SubmissionState.WAITING: "#d0d0d0"}


@dataclasses.dataclass(frozen=True)
class SubmissionNode:
    id: int
    label: str  # queue_execute, queue_copy, ...
    cq: int
    state: SubmissionState
    waits: list  # [(semaphore label, value, reached: True / False / None = failed)]
    signals: list  # [(semaphore label, value)]
    commands: int
    error: str | None = None

    def trace_args(self) -> dict:
        return {"id": self.id, "cq": self.cq, "state": self.state.value, "commands": self.commands,
                "waits": [f"{s}>={v}" for s, v, _ in self.waits], "signals": [f"{s}={v}" for s, v in self.signals],
                **({"error": self.error} if self.error else {})}


@dataclasses.dataclass(frozen=True)
class Edge:
    producer: int | None  # the submission that signals the value; None: nobody yet (the host must)
    consumer: int
    semaphore: str
    value: int
    reached: bool | None


class SubmissionGraph:
    def __init__(self, device_name: str, nodes: list[SubmissionNode]):
        self.device_name = device_name
        self.nodes = nodes
        self.edges = _edges(nodes)

    def counts(self) -> dict[str, int]:
        return {state.value: sum(n.state is state for n in self.nodes) for state in SubmissionState}

    def to_text(self) -> str:
        producers = {(e.consumer, e.semaphore, e.value): e.producer for e in self.edges}
        counts = ", ".join(f"{n} {state}" for state, n in self.counts().items() if n)
        lines = [f"submission graph of {self.device_name}: {len(self.nodes)} submissions ({counts or 'none'})"]
        for node in self.nodes:
            waits = []
            for semaphore, value, reached in node.waits:
                producer = producers[(node.id, semaphore, value)]
                state = {True: "reached", False: "not reached", None: "FAILED"}[reached]
                source = f"#{producer}" if producer else "host or initial value"
                waits.append(f"{semaphore}>={value} {state} (from {source})")
            signals = ", ".join(f"{s}={v}" for s, v in node.signals) or "-"
            lines.append(f"#{node.id:<4} {node.label:<15} CQ{node.cq} {node.state.value:<8} {node.commands:>3} "
                         f"commands  waits: {'; '.join(waits) or '-'}  signals: {signals}"
                         + (f"  error: {node.error}" if node.error else ""))
        return "\n".join(lines)

    def to_dot(self) -> str:
        lines = [f'digraph "{self.device_name} submissions" {{', "  rankdir=LR;",
                 '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
        for node in self.nodes:
            label = f"#{node.id} {node.label}\\nCQ{node.cq} {node.state.value}"
            lines.append(f'  s{node.id} [label="{label}", fillcolor="{STATE_COLORS[node.state]}"];')
        for k, edge in enumerate(self.edges):
            source = f"s{edge.producer}"
            if edge.producer is None:
                source = f"host{k}"
                lines.append(f'  {source} [label="host signal or initial value", shape=ellipse, style=dashed];')
            style = "solid" if edge.reached else "dashed"
            lines.append(f'  {source} -> s{edge.consumer} [label="{edge.semaphore}>={edge.value}", style={style}];')
        lines += self._dot_legend()
        lines.append("}")
        return "\n".join(lines) + "\n"

    @staticmethod
    def _dot_legend() -> list[str]:
        """A legend cluster: what each box colour and arrow style means."""
        lines = ["  subgraph cluster_legend {", '    label="legend"; fontname="Helvetica"; style=dashed;']
        for state, color in STATE_COLORS.items():
            lines.append(f'    legend_{state.value} [label="submission {state.value}", fillcolor="{color}"];')
        lines += ['    legend_a [label="", shape=point]; legend_b [label="", shape=point];',
                  '    legend_c [label="", shape=point]; legend_d [label="", shape=point];',
                  '    legend_a -> legend_b [label="semaphore>=value, reached", style=solid];',
                  '    legend_c -> legend_d [label="not reached yet", style=dashed];', "  }"]
        return lines


def _edges(nodes: list[SubmissionNode]) -> list[Edge]:
    """Each wait's producer: the submission signalling the smallest value at or above the
    one waited for (what the scheduler turns into a device-side event wait)."""
    signals: dict[str, list[tuple[int, int]]] = {}
    for node in nodes:
        for semaphore, value in node.signals:
            signals.setdefault(semaphore, []).append((value, node.id))
    edges = []
    for node in nodes:
        for semaphore, value, reached in node.waits:
            candidates = [(v, i) for v, i in signals.get(semaphore, []) if v >= value and i != node.id]
            producer = min(candidates)[1] if candidates else None
            edges.append(Edge(producer, node.id, semaphore, value, reached))
    return edges
