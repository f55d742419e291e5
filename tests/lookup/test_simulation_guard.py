"""A simulated lookup's time guard holds its estimate (CPU seconds on one core) against the limit on the CPU only: on
a GPU that estimate says nothing of the time, so it is logged, not held (it once refused GPU work by CPU seconds)."""

from __future__ import annotations

import logging

import pytest

from tablegen.errors import ResourceLimitError
from tablegen.lookup.answer_sources import guard_simulation


def test_the_cpu_estimate_is_held_on_the_cpu_and_logged_on_a_gpu(monkeypatch, caplog):
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1")
    with pytest.raises(ResourceLimitError, match="simulating auc .* would take about 100 s on one core"):
        guard_simulation(100.0, "simulating auc at P = 10, N = 10 with R = 10,000", "cpu")
    with caplog.at_level(logging.INFO, logger="tablegen.lookup.answer_sources"):
        guard_simulation(100.0, "simulating auc at P = 10, N = 10 with R = 10,000", "cuda")
    assert "on the GPU: the CPU estimate (about 100 s on one core) is not held" in caplog.text
    guard_simulation(0.5, "a quick one", "cpu")  # within the limit: nothing raised
