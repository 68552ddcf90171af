"""Speculative OCR yields to real work (mobile_agent/agent/speculation.py): it starts only
when the machine had CPU to spare, and one at a time per process."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from mobile_agent.agent.parts import TimedLocator
from mobile_agent.agent.speculation import CpuSample, SpeculationGate, cpu_sample, idle_share

# The layout of /proc/stat's first line as proc(5) gives it ("cpu  user nice system idle
# iowait irq softirq steal guest guest_nice", in USER_HZ ticks of all CPUs together); the
# numbers are two readings of a 2-core machine 1 s apart (200 ticks), 150 of them idle or iowait.
STAT_BEFORE = "cpu  42146 0 16968 1203010 608 0 700 80 0 0\ncpu0 17751 0 6852 606702 146 0 325 38 0 0\n"
STAT_AFTER = "cpu  42186 0 16978 1203150 618 0 700 80 0 0\ncpu0 17771 0 6857 606772 151 0 325 38 0 0\n"


def test_the_idle_share_comes_from_two_readings_of_proc_stat(tmp_path: Path) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    before.write_text(STAT_BEFORE)
    after.write_text(STAT_AFTER)
    first, second = cpu_sample(before), cpu_sample(after)
    assert first == CpuSample(1203010 + 608, 42146 + 16968 + 1203010 + 608 + 700 + 80)
    assert idle_share(first, second) == pytest.approx(150 / 200)


def test_no_proc_stat_falls_back_to_the_load_average(tmp_path: Path) -> None:
    (tmp_path / "stat").write_text("intr 12345\n")  # not the layout proc(5) gives: not read
    sample = cpu_sample(tmp_path / "stat")
    assert sample is not None and sample.load == pytest.approx(os.getloadavg()[0], abs=1.0)
    assert sample == CpuSample(load=sample.load)
    share = idle_share(None, CpuSample(load=(os.cpu_count() or 1) * 0.75))
    assert share == pytest.approx(0.25)
    assert cpu_sample(tmp_path / "missing") is not None  # the load average again


def test_no_measure_is_no_verdict() -> None:
    assert idle_share(None, CpuSample(10, 20)) is None
    assert idle_share(CpuSample(10, 20), CpuSample(10, 20)) is None  # no tick between them


class _Samples:
    """Readings handed out in turn (idle, total)."""

    def __init__(self, *readings: tuple[float, float]) -> None:
        self.readings = list(readings)

    def __call__(self) -> CpuSample:
        return CpuSample(*self.readings.pop(0))


def test_the_gate_skips_speculation_on_a_busy_machine_and_lets_it_run_on_an_idle_one() -> None:
    gate = SpeculationGate(_Samples((0, 0), (20, 100), (20, 100), (90, 200)))
    assert gate.enter(gate.mark(), 0.5) is False  # 20% idle: busy
    assert gate.enter(gate.mark(), 0.5) is True  # 70% idle
    gate.leave()
    assert (gate.allowed, gate.skipped_busy) == (1, 1)


def test_one_speculation_at_a_time_and_none_needs_a_measure_at_min_idle_zero() -> None:
    gate = SpeculationGate(lambda: None)
    assert gate.enter(None, 0.0) is True
    assert gate.enter(None, 0.0) is False  # the first one still runs
    gate.leave()
    assert gate.enter(None, 0.5) is True  # no measure (None): no verdict against it
    gate.leave()
    assert gate.skipped_running == 1


def _burn(until: float) -> None:
    while time.time() < until:
        pass


def test_a_machine_whose_every_core_is_busy_gets_no_speculation() -> None:
    """The real /proc/stat: a process burning each core, and the gate says no."""
    if cpu_sample() is None or cpu_sample().load is not None:  # type: ignore[union-attr]
        pytest.skip("no /proc/stat here")
    until = time.time() + 1.5
    burners = [multiprocessing.get_context("fork").Process(target=_burn, args=(until,)) for _ in range(os.cpu_count() or 1)]
    for burner in burners:
        burner.start()
    try:
        time.sleep(0.3)  # every core taken
        gate = SpeculationGate()
        since = gate.mark()
        time.sleep(0.4)
        assert gate.enter(since, 0.5) is False
        assert gate.skipped_busy == 1
    finally:
        for burner in burners:
            burner.join(5)


class _CountingOcr:
    """A locator with an ``ocr`` (what ``prefetch`` calls), counting its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.done = threading.Event()

    def ocr(self, image: np.ndarray) -> list[object]:
        self.calls += 1
        self.done.set()
        return []

    def find_text(self, image: np.ndarray, text: str) -> object:
        raise NotImplementedError

    def find_icon(self, image: np.ndarray, description: str, position: str | None) -> object:
        raise NotImplementedError


@pytest.mark.parametrize(("readings", "ran"), [(((0, 0), (10, 100)), False), (((0, 0), (80, 100)), True)])
def test_prefetch_asks_the_gate_when_it_would_start(
    monkeypatch: pytest.MonkeyPatch, readings: tuple[tuple[float, float], ...], ran: bool
) -> None:
    gate = SpeculationGate(_Samples(*readings))
    monkeypatch.setattr(SpeculationGate, "_shared", gate)
    locator = _CountingOcr()
    timer = TimedLocator(locator).prefetch(np.zeros((8, 8, 3), np.uint8), delay_s=0.05, min_idle=0.5)  # type: ignore[arg-type]
    assert timer is not None
    timer.join(5)
    assert locator.calls == (1 if ran else 0)
    assert (gate.allowed, gate.skipped_busy) == ((1, 0) if ran else (0, 1))


def test_a_process_with_more_runs_than_half_its_cores_does_not_speculate() -> None:
    gate = SpeculationGate(lambda: None, max_runs=2)
    with gate.running(), gate.running():
        assert gate.enter(None, 0.0) is True  # two runs: each has its core or two
        gate.leave()
        with gate.running():
            assert gate.enter(None, 0.0) is False  # a third
            assert gate.skipped_crowded == 1
    assert gate.enter(None, 0.0) is True  # the runs ended
    gate.leave()


def test_the_default_is_half_the_usable_cores_and_at_least_one_run() -> None:
    from mobile_agent.agent.speculation import usable_cores

    assert SpeculationGate().max_runs == max(1, usable_cores() // 2)
    assert 1 <= usable_cores() <= (os.cpu_count() or 1)


def test_a_planned_run_counts_among_the_process_runs_while_it_lasts(
    adb_server, sim_phone, llm_server, tmp_path
) -> None:
    """``Agent.run`` registers with the shared gate: the rule on runs per core sees real runs."""
    from mobile_agent.agent import Agent, AgentEvent
    from tests.agent_helpers import DONE, agent_settings, plan_reply

    gate = SpeculationGate.shared()
    before = gate._runs
    during: list[int] = []

    def listen(event: AgentEvent) -> None:
        if event.kind == "step_finished":
            during.append(gate._runs)

    llm_server.script([plan_reply("Back"), plan_reply("Stop"), DONE])
    Agent(agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server), on_event=listen).run("Go back")
    assert during and all(runs == before + 1 for runs in during)
    assert gate._runs == before
