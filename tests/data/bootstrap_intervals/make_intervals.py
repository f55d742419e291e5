"""Bootstrap intervals of the sorted kernels as they were before every metric shared one pass per (model,
resample): the regression record of ``tests/compute/test_resample.py::test_intervals_are_those_before_the_shared_pass``.

Written from the tablegen source tree of commit fa2a434 (``git archive fa2a434 tablegen | tar -x -C /tmp/before``)::

    cd tests/data/bootstrap_intervals && ../../../.venv/bin/python make_intervals.py /tmp/before > intervals.json

Each case: labels and scores from ``cases()`` below (the test builds the same), every metric's interval for every
model by ``sorted_bootstrap_intervals`` (one call per metric, as the code of that commit made them), as
``float.hex`` strings ("nan" for a NaN end).
"""

from __future__ import annotations

import json
import sys

import numpy as np

METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "best_mcc", "tp_at_5",
           "precision_at_10")

#: (items, models, decimals of the scores (ties) or None, share of positives, method, resamples, seed)
CASES = ((60, 3, 1, 0.4, "auto", 2000, 3), (300, 2, None, 0.3, "BCa", 500, 5), (300, 2, 1, 0.5, "basic", 500, 6),
         (2500, 3, None, 0.2, "auto", 400, 7), (5000, 2, 2, 0.5, "percentile", 200, 8))


def cases():
    """(name, labels, scores (models, n), method, resamples, seed) of each case."""
    for n, models, decimals, share, method, resamples, seed in CASES:
        rng = np.random.default_rng(seed)
        labels = (rng.random(n) < share).astype(np.int64)
        labels[:2] = [1, 0]
        scores = labels + rng.normal(size=(models, n))
        if decimals is not None:
            scores = np.round(scores, decimals)
        yield f"{n}x{models}-{method}", labels, scores, method, resamples, seed


def main(tree: str) -> None:
    sys.path.insert(0, tree)
    from tablegen.compare.pairwise.bootstrap import sorted_bootstrap_intervals
    from tablegen.compute.metrics import get_metric

    record = {}
    for name, labels, scores, method, resamples, seed in cases():
        record[name] = {metric: [[v.hex() if v == v else "nan" for v in interval]
                                 for interval in sorted_bootstrap_intervals(labels, scores, get_metric(metric), seed,
                                                                            0.95, resamples, method)]
                        for metric in METRICS}
    json.dump(record, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
