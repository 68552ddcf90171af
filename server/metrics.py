"""Prometheus metrics, written by hand in the text exposition format (version 0.0.4).

Counters and histograms live here; gauges (queue length, busy phones) are read from
the store and the pool when ``/metrics`` is scraped.

May import: the standard library only.
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict

__all__ = ["Gauges", "Metrics"]

# name -> (help, {labels: value}); labels are (name, value) pairs
Gauges = dict[str, tuple[str, dict[tuple[tuple[str, str], ...], float]]]

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_RUN_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


class _Histogram:
    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.n = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.n += 1


def _labels(pairs: tuple[tuple[str, str], ...]) -> str:
    if not pairs:
        return ""
    escaped = ",".join(
        f'{k}="' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"' for k, v in pairs
    )
    return "{" + escaped + "}"


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[tuple[str, str], ...], int] = defaultdict(int)
        self._latency: dict[tuple[tuple[str, str], ...], _Histogram] = {}
        self._finished: dict[str, int] = defaultdict(int)
        self._runs = _Histogram(_RUN_BUCKETS)

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self._requests[(("method", method), ("route", route), ("status", str(status)))] += 1
            key = (("method", method), ("route", route))
            if key not in self._latency:
                self._latency[key] = _Histogram(_LATENCY_BUCKETS)
            self._latency[key].observe(seconds)

    def observe_run(self, status: str, seconds: float | None) -> None:
        """A task reached ``status``; ``seconds`` is its run time, None when it never ran."""
        with self._lock:
            self._finished[status] += 1
            if seconds is not None:
                self._runs.observe(seconds)

    def render(self, gauges: Gauges) -> str:
        """The exposition text; ``gauges`` maps name -> (help, {labels: value})."""
        out: list[str] = []
        with self._lock:
            out += [
                "# HELP mobile_agent_http_requests_total HTTP requests served.",
                "# TYPE mobile_agent_http_requests_total counter",
            ]
            for labels, n in sorted(self._requests.items()):
                out.append(f"mobile_agent_http_requests_total{_labels(labels)} {n}")
            out += [
                "# HELP mobile_agent_http_request_duration_seconds Time to answer an HTTP request.",
                "# TYPE mobile_agent_http_request_duration_seconds histogram",
            ]
            for labels, hist in sorted(self._latency.items()):
                out += _histogram_lines("mobile_agent_http_request_duration_seconds", labels, hist)
            out += [
                "# HELP mobile_agent_tasks_finished_total Tasks that reached a final status here.",
                "# TYPE mobile_agent_tasks_finished_total counter",
            ]
            for status, n in sorted(self._finished.items()):
                out.append(f"mobile_agent_tasks_finished_total{_labels((('status', status),))} {n}")
            out += [
                "# HELP mobile_agent_task_run_seconds Wall time of task runs.",
                "# TYPE mobile_agent_task_run_seconds histogram",
            ]
            out += _histogram_lines("mobile_agent_task_run_seconds", (), self._runs)
        for name, (help_text, values) in sorted(gauges.items()):
            out += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
            for labels, value in sorted(values.items()):
                out.append(f"{name}{_labels(labels)} {value:g}")
        return "\n".join(out) + "\n"


def _histogram_lines(name: str, labels: tuple[tuple[str, str], ...], hist: _Histogram) -> list[str]:
    lines = []
    cumulative = 0
    for bound, count in zip(hist.buckets, hist.counts, strict=False):
        cumulative += count
        lines.append(f"{name}_bucket{_labels(labels + (('le', f'{bound:g}'),))} {cumulative}")
    cumulative += hist.counts[-1]
    lines.append(f"{name}_bucket{_labels(labels + (('le', '+Inf'),))} {cumulative}")
    lines.append(f"{name}_sum{_labels(labels)} {hist.total:g}")
    lines.append(f"{name}_count{_labels(labels)} {hist.n}")
    return lines
