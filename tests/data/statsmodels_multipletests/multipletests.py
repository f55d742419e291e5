"""Adjusted p-values by statsmodels' multipletests, for tests/compare/test_datasets_corrections.py; writes
expected.csv.

Command (from tests/data/statsmodels_multipletests/, in a separate venv with statsmodels, numpy):
    python multipletests.py
Methods: bonferroni, holm, hommel, fdr_bh, fdr_by (statsmodels' names; tablegen's are bonferroni, holm,
hommel, bh, by).  Inputs: fixed vectors with ties, zeros and ones, and random vectors from a seeded generator
(written to the file, so the test reads them from there).
"""

import csv

import numpy as np

METHODS = ("bonferroni", "holm", "hommel", "fdr_bh", "fdr_by")


def cases():
    fixed = [[0.01, 0.04, 0.03, 0.005], [0.05], [0.0, 1.0, 0.5], [0.02, 0.02, 0.02, 0.5, 0.5],
             [0.001, 0.011, 0.02, 0.03, 0.04, 0.05, 0.2, 0.3, 0.6, 0.9]]
    rng = np.random.default_rng(30)
    drawn = [np.round(rng.beta(0.4, 2.0, size=k), 6).tolist() for k in (3, 6, 10, 21, 21, 45)]
    return fixed + drawn


def main() -> None:
    import statsmodels  # imported here: the test suite collects this file (doctests) without statsmodels
    from statsmodels.stats.multitest import multipletests

    with open("expected.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["case", "method", "p_values", "adjusted"])
        for k, p in enumerate(cases()):
            for method in METHODS:
                adjusted = multipletests(p, alpha=0.05, method=method)[1]
                w.writerow([k, method, " ".join(map(repr, p)), " ".join(repr(float(a)) for a in adjusted)])
    print("statsmodels", statsmodels.__version__)


if __name__ == "__main__":
    main()
