"""Exact McNemar p-values by statsmodels, for tests/compare/test_pairwise.py; writes expected.csv.

Command (from tests/data/statsmodels_mcnemar/, in a separate venv with statsmodels 0.15.0):
    python mcnemar.py
statsmodels' mcnemar(table, exact=True) is the two-sided binomial test on the discordant cells
(b = table[0][1], c = table[1][0]): min(1, 2 * Pr(X <= min(b, c))), X ~ Binomial(b + c, 1/2).
"""

import csv

# (both right, only A right, only B right, both wrong)
CASES = [(30, 0, 0, 10), (30, 1, 0, 10), (50, 10, 2, 8), (50, 2, 10, 8), (20, 7, 7, 3), (100, 25, 13, 12),
         (40, 0, 9, 1), (300, 40, 60, 100), (500, 123, 87, 90), (9, 1, 5, 0)]



def main() -> None:
    import statsmodels  # imported here: the test suite collects this file (doctests) without statsmodels
    from statsmodels.stats.contingency_tables import mcnemar

    with open("expected.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["both_right", "only_a_right", "only_b_right", "both_wrong", "statistic", "p_value"])
        for both, b, c, neither in CASES:
            r = mcnemar([[both, b], [c, neither]], exact=True)
            w.writerow([both, b, c, neither, repr(float(r.statistic)), repr(float(r.pvalue))])
    print("statsmodels", statsmodels.__version__)


if __name__ == "__main__":
    main()
