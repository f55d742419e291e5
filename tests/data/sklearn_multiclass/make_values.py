"""Multi-class ranking metrics by scikit-learn, the oracle of ``tests/compute/test_multiclass_scores.py``.

Written in a separate virtual environment (CI does not install scikit-learn)::

    python3 -m venv /tmp/oracle && /tmp/oracle/bin/pip install scikit-learn
    /tmp/oracle/bin/python tests/data/sklearn_multiclass/make_values.py tests/data/sklearn_multiclass/values.json

Each case holds the labels, the probability matrix (every double as ``float.hex``) and scikit-learn's values:
``roc_auc_score(labels, P, multi_class="ovo", average="macro")`` (Hand & Till's M), the same with
``multi_class="ovr", average="macro"`` (the unweighted mean of the one-vs-rest AUCs) and ``average="weighted"``
(weighted by prevalence: recorded to show it is a different number), and ``top_k_accuracy_score(labels, P, k=k)``
for k = 1 .. K - 1.  Cases ``ties_*`` have scores on a grid of tenths (many ties): scikit-learn's AUCs count a tie
½ as tablegen does, but its top-k breaks a tie straddling the k-th place by column order, so there the top-k
values are recorded as ``top_k_sklearn_tie_broken`` and not compared.
"""

import json
import sys

import numpy as np
import sklearn
from sklearn.metrics import roc_auc_score, top_k_accuracy_score


def _labels(rng, n, K):
    """Every class present, the rest drawn with unequal prevalences (so weighted and macro averages differ)."""
    prevalence = np.arange(1, K + 1) / (K * (K + 1) / 2)
    return rng.permutation(np.concatenate([np.arange(K), rng.choice(K, n - K, p=prevalence)]))


def cases():
    rng = np.random.default_rng(41)
    for n, K in ((12, 3), (40, 4), (200, 6), (500, 10)):
        labels = _labels(rng, n, K)
        P = rng.dirichlet(np.ones(K), size=n)
        P[np.arange(n), labels] += rng.uniform(0, 0.5, n)  # some skill
        yield f"continuous_n{n}_K{K}", labels, P / P.sum(axis=1, keepdims=True)
    for n, K in ((15, 3), (60, 4), (150, 5)):
        labels = _labels(rng, n, K)
        tenths = rng.multinomial(10, np.ones(K) / K, size=n)
        yield f"ties_n{n}_K{K}", labels, tenths / 10.0


def main(path):
    out = {"sklearn": sklearn.__version__, "numpy": np.__version__, "cases": []}
    for name, labels, P in cases():
        K = P.shape[1]
        record = {
            "name": name, "labels": labels.tolist(), "probabilities": [[float(v).hex() for v in row] for row in P],
            "hand_till_auc": roc_auc_score(labels, P, multi_class="ovo", average="macro"),
            "ovr_macro_auc": roc_auc_score(labels, P, multi_class="ovr", average="macro"),
            "ovr_weighted_auc": roc_auc_score(labels, P, multi_class="ovr", average="weighted"),
        }
        top_k = {str(k): top_k_accuracy_score(labels, P, k=k) for k in range(1, K)}
        record["top_k_sklearn_tie_broken" if name.startswith("ties") else "top_k_accuracy"] = top_k
        out["cases"].append(record)
    with open(path, "w") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
