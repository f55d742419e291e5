"""Nemenyi's test by scikit-posthocs and autorank, for tests/compare/test_compare_datasets.py; writes the tables
``cases/<case>.csv`` and ``expected_p.csv`` (scikit-posthocs' p-value of every pair), ``expected_cd.csv``
(autorank's critical difference and its verdict on every pair).

Command (from tests/data/nemenyi/, in a separate venv: ``python3 -m venv /tmp/oracle &&
/tmp/oracle/bin/pip install scikit-posthocs autorank``; scikit-posthocs 0.17.1, autorank 1.3.0, scipy 1.17.1,
statsmodels as autorank pulls it in):
    /tmp/oracle/bin/python nemenyi.py

- scikit-posthocs ``posthoc_nemenyi_friedman(X)``: ranks within each row (larger value, larger rank; ties
  averaged), mean ranks R, q = |R_i − R_j| / sqrt(k (k + 1) / (6 n)), p = studentized_range.sf(q √2, k, ∞).
- autorank's ``_critical_distance(alpha, k, n)`` (what ``autorank(..., force_mode="nonparametric")`` draws):
  qsturng(1 − alpha, k, ∞) · sqrt(k (k + 1) / (12 n)), statsmodels' qsturng (an approximation good to about
  3 digits); a pair differs when |R_i − R_j| > CD.

The cases: the issue's reproducer (10 data sets; ranks A = 1×5 then 2×5, C = 2×5 then 1×5, B = 3, D = 4, written
as scores with higher better), Benavoli et al.'s Table 2 (../benavoli2016_table2_accuracies.csv), and seeded
random tables with ties (a coarse grid), k = 3..8 algorithms on n = 6..40 data sets.
"""

import csv
from pathlib import Path

HERE = Path(__file__).resolve().parent
ALPHAS = (0.05, 0.1)


def cases():
    import numpy as np

    out = {"issue38": (["A", "B", "C", "D"],
                       np.array([[4, 2, 3, 1]] * 5 + [[3, 2, 4, 1]] * 5, dtype=float))}
    paper = np.loadtxt(HERE.parent / "benavoli2016_table2_accuracies.csv", delimiter=",", comments="#",
                       skiprows=5, usecols=range(1, 8))
    out["benavoli2016"] = ([f"C{j}" for j in range(1, 8)], paper)
    rng = np.random.default_rng(38)
    for k, n in ((3, 6), (4, 10), (5, 20), (6, 15), (8, 40)):
        X = np.round(rng.normal(size=(n, k)) + np.linspace(1, 0, k), 1)
        out[f"random_k{k}_n{n}"] = ([f"M{j}" for j in range(1, k + 1)], X)
    return out


def main() -> None:
    import autorank
    import pandas as pd
    import scikit_posthocs as sp
    from autorank._util import _critical_distance

    (HERE / "cases").mkdir(exist_ok=True)
    with open(HERE / "expected_p.csv", "w", newline="") as fp, open(HERE / "expected_cd.csv", "w", newline="") as fc:
        wp, wc = csv.writer(fp, lineterminator="\n"), csv.writer(fc, lineterminator="\n")
        wp.writerow(["case", "a", "b", "p_value"])
        wc.writerow(["case", "alpha", "k", "n", "critical_difference"])
        for name, (names, X) in cases().items():
            frame = pd.DataFrame(X, columns=names, index=[f"d{i}" for i in range(1, len(X) + 1)])
            frame.to_csv(HERE / "cases" / f"{name}.csv", index_label="dataset")
            p = sp.posthoc_nemenyi_friedman(frame)
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    wp.writerow([name, a, b, repr(float(p.loc[a, b]))])
            n, k = X.shape
            for alpha in ALPHAS:
                wc.writerow([name, alpha, k, n, repr(float(_critical_distance(alpha, k, n)))])
    print("scikit-posthocs", sp.__version__, "autorank", getattr(autorank, "__version__", "1.3.0"))


if __name__ == "__main__":
    main()
