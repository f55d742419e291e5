"""Shared test helpers: brute-force enumeration of rankings with exact rational metric values."""

from __future__ import annotations

import itertools
import os
from fractions import Fraction
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
#: The repository's root folder: no test may leave a file there (write under ``tmp_path``).
REPOSITORY = Path(__file__).resolve().parent.parent
#: Entries of the repository root that running the suite may create (caches of pytest, hypothesis, ruff, Python).
ROOT_CACHES = {".pytest_cache", ".hypothesis", ".ruff_cache", "__pycache__", ".coverage"}


def _root_entries() -> set[str]:
    return {name for name in os.listdir(REPOSITORY) if name not in ROOT_CACHES and not name.startswith(".coverage.")}


_ROOT_AT_START = pytest.StashKey[set]()


def pytest_sessionstart(session):
    session.config.stash[_ROOT_AT_START] = _root_entries()


def pytest_sessionfinish(session, exitstatus):
    """The whole session (doctests under tablegen/ too) fails if it left anything in the repository root; with
    pytest-xdist the controller checks, once every worker has finished."""
    if hasattr(session.config, "workerinput") or _ROOT_AT_START not in session.config.stash:
        return
    left = sorted(_root_entries() - session.config.stash[_ROOT_AT_START])
    if left:
        writer = session.config.get_terminal_writer()
        writer.line()
        writer.line(f"tests left {left} in the repository root {REPOSITORY}: write under tmp_path instead", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _nothing_left_in_the_repository_root():
    """Fail the test that leaves a file or folder in the repository root (a relative output path such as
    ``-o x`` written outside a ``chdir`` to ``tmp_path``).  Tests of files run in parallel (pytest-xdist): a
    test running at the same time in another worker may be named beside the one that wrote it."""
    before = _root_entries()
    yield
    left = sorted(_root_entries() - before)
    assert not left, f"the test left {left} in the repository root {REPOSITORY}: write under tmp_path instead"


def all_rankings(P: int, N: int):
    """Every arrangement of P ones and N zeros (top first), as tuples."""
    n = P + N
    for positions in itertools.combinations(range(n), P):
        chosen = set(positions)
        yield tuple(1 if i in chosen else 0 for i in range(n))


def exact_scores(labels, P: int, N: int, ks=(1, 3, 10, 20)) -> dict[str, Fraction]:
    """Every metric of one ranking as an exact Fraction, straight from their definitions."""
    tp = [0]
    for label in labels:
        tp.append(tp[-1] + label)
    n = P + N
    ks_all = range(n + 1)
    scores = {
        "auc": Fraction(sum(tp[i] for i in range(n) if labels[i] == 0), P * N),
        "best_accuracy": max(Fraction(tp[k] + N - (k - tp[k]), n) for k in ks_all),
        "best_f1": max(Fraction(2 * tp[k], P + k) for k in ks_all),
        "best_balanced_accuracy": max(
            Fraction(1, 2) * (Fraction(tp[k], P) + 1 - Fraction(k - tp[k], N)) for k in ks_all
        ),
        "average_precision": sum(Fraction(tp[k], k) for k in range(1, n + 1) if labels[k - 1]) / P,
    }
    for k in ks:
        scores[f"tp_at_{k}"] = Fraction(tp[min(k, n)])
        scores[f"precision_at_{k}"] = Fraction(tp[min(k, n)], min(k, n))
    return scores


@pytest.fixture(scope="session")
def brute_force_distributions():
    """{(P, N): {metric: {value: count}}} over every ranking, for every P, N >= 1 with P + N <= 12."""
    table = {}
    for n in range(2, 13):
        for P in range(1, n):
            N = n - P
            counts: dict[str, dict[Fraction, int]] = {}
            for labels in all_rankings(P, N):
                for metric, value in exact_scores(labels, P, N).items():
                    counts.setdefault(metric, {}).setdefault(value, 0)
                    counts[metric][value] += 1
            table[(P, N)] = counts
    return table
