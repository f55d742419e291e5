"""Labels and model scores shared by the from-scores tests (tests/lookup/test_from_scores.py and
tests/compute/test_scores_registry.py)."""

from __future__ import annotations

import numpy as np


def random_case(rng, ties: bool):
    n = int(rng.integers(2, 80))
    y = rng.permutation(np.r_[1, 0, rng.integers(0, 2, n - 2)])
    s = rng.integers(0, 6, n).astype(float) if ties else rng.normal(size=n) + y
    return y, s


def models_and_labels(P=40, N=60, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.r_[np.ones(P, int), np.zeros(N, int)])
    return y, {"noise": rng.normal(size=P + N), "good": y + rng.normal(size=P + N),
               "tied": np.round(0.6 * y + rng.normal(size=P + N))}


def write_predictions(path, y, models, positive="1", negative="0"):
    lines = ["# predictions of three models", "label," + ",".join(models)]
    lines += [",".join([positive if label else negative, *(f"{models[m][i]:.17g}" for m in models)])
              for i, label in enumerate(y)]
    path.write_text("\n".join(lines) + "\n")
