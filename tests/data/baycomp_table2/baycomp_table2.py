"""baycomp's Bayesian sign and signed-rank tests on every pair of the Table 2 data, and its correlated t-test
on fold scores, for tests/compare/test_datasets_bayesian.py; writes pairs.csv and correlated.csv (and, with
the argument ``priors``, only priors.csv: a few pairs under other prior strengths and, for the sign test, the
prior pseudo-observation placed LEFT, ROPE or RIGHT, baycomp's ``prior=(strength, place)``).

Command (from tests/data/baycomp_table2/, in a separate venv with baycomp 1.0.3, numpy, scipy):
    python baycomp_table2.py
    python baycomp_table2.py priors
Data: ../benavoli2016_table2_accuracies.csv (accuracies in %, so rope = 1 is one point of accuracy).
For the pair (Ci, Cj), x = Ci and y = Cj: baycomp's p_left is P(Ci better), p_right P(Cj better); the
probabilities are shares of 200,000 posterior draws (random_state = 1) in which each region is the most
probable; mean_* are the draws' means of (theta_left, theta_rope, theta_right).
"""

import csv
import itertools

import numpy as np

SAMPLES = 200_000
FOLDS = [  # (name, runs, x, y): fold scores of two algorithms, made up, rounded like real accuracies
    ("ten_fold", 1, [0.81, 0.84, 0.79, 0.85, 0.83, 0.80, 0.86, 0.82, 0.84, 0.83],
     [0.78, 0.80, 0.79, 0.81, 0.80, 0.77, 0.83, 0.80, 0.80, 0.79]),
    ("close", 1, [0.80, 0.82, 0.79, 0.81, 0.80], [0.80, 0.81, 0.80, 0.80, 0.81]),
]


def folds_repeated():
    rng = np.random.default_rng(7)
    x = np.round(0.75 + 0.03 * rng.standard_normal(30), 3)
    return ("three_runs_of_ten", 3, x.tolist(), np.round(x - 0.012 + 0.02 * rng.standard_normal(30), 3).tolist())


PRIOR_PAIRS = ((0, 1), (2, 3), (1, 6))
#: (test, prior as baycomp takes it, rope): place 0 = LEFT (the first algorithm better), 1 = ROPE, 2 = RIGHT.
PRIORS = (("sign", (1.0, 0), 1.0), ("sign", (3.0, 2), 1.0), ("sign", (2.0, 1), 1.0), ("sign", (3.0, 0), 0.0),
          ("signed_rank", 2.0, 1.0), ("signed_rank", 0.1, 1.0))


def priors(X) -> None:
    import baycomp

    with open("priors.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["test", "a", "b", "rope", "strength", "place", "samples", "p_left", "p_rope", "p_right",
                    "mean_left", "mean_rope", "mean_right"])
        for (i, j), (test, prior, rope) in itertools.product(PRIOR_PAIRS, PRIORS):
            cls = baycomp.SignTest if test == "sign" else baycomp.SignedRankTest
            sample = cls.sample(X[:, i], X[:, j], rope, prior=prior, nsamples=SAMPLES, random_state=1)
            p = np.bincount(np.argmax(sample, axis=1), minlength=3) / SAMPLES
            strength, place = prior if isinstance(prior, tuple) else (prior, 1)
            w.writerow([test, f"C{i + 1}", f"C{j + 1}", rope, strength, ("a", "rope", "b")[place], SAMPLES,
                        *map(repr, map(float, p)), *map(repr, map(float, sample.mean(axis=0)))])


def main() -> None:
    import sys

    import baycomp  # imported here: the test suite collects this file (doctests) without baycomp

    X = np.loadtxt("../benavoli2016_table2_accuracies.csv", delimiter=",", comments="#", skiprows=5,
                   usecols=range(1, 8))
    if sys.argv[1:] == ["priors"]:
        priors(X)
        return
    with open("pairs.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["test", "a", "b", "rope", "samples", "p_left", "p_rope", "p_right", "mean_left", "mean_rope",
                    "mean_right"])
        for (i, j), (test, cls), rope in itertools.product(
                itertools.combinations(range(7), 2),
                (("signed_rank", baycomp.SignedRankTest), ("sign", baycomp.SignTest)), (1.0, 0.0)):
            if rope == 0 and (i, j) not in ((0, 1), (2, 3), (0, 4)):
                continue
            sample = cls.sample(X[:, i], X[:, j], rope, nsamples=SAMPLES, random_state=1)
            p = np.bincount(np.argmax(sample, axis=1), minlength=3) / SAMPLES
            w.writerow([test, f"C{i + 1}", f"C{j + 1}", rope, SAMPLES, *map(repr, map(float, p)),
                        *map(repr, map(float, sample.mean(axis=0)))])
    with open("correlated.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["case", "runs", "rope", "p_left", "p_rope", "p_right", "mean", "var", "df", "x", "y"])
        for name, runs, x, y in FOLDS + [folds_repeated()]:
            for rope in (0.01, 0.005):
                p = baycomp.CorrelatedTTest.probs(np.array(x), np.array(y), rope=rope, runs=runs)
                mean, var, df = baycomp.CorrelatedTTest.compute_statistics(np.array(x), np.array(y), runs=runs)
                w.writerow([name, runs, rope, *map(repr, map(float, p)), repr(float(mean)), repr(float(var)), df,
                            " ".join(map(repr, x)), " ".join(map(repr, y))])
    print("baycomp", baycomp.__version__ if hasattr(baycomp, "__version__") else "1.0.3")


if __name__ == "__main__":
    main()
