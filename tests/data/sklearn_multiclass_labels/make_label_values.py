"""Multi-class label metrics by scikit-learn, the oracle of ``tests/compare/test_report_multiclass.py``.

Written in a separate virtual environment (CI does not install scikit-learn)::

    python3 -m venv /tmp/oracle && /tmp/oracle/bin/pip install scikit-learn
    /tmp/oracle/bin/python tests/data/sklearn_multiclass_labels/make_label_values.py \
        tests/data/sklearn_multiclass_labels/values.json

Each case holds the labels, each model's predicted labels and scikit-learn's ``accuracy_score``,
``cohen_kappa_score``, ``balanced_accuracy_score`` and ``f1_score(average="macro")`` of every model.  Cases with a
class only predicted (``only_predicted_*``) check how it is counted: left out of balanced accuracy (scikit-learn
warns and drops the class whose recall is undefined), F1 = 0 in macro-F1 (its denominator counts every class of
the labels and the predictions).
"""

import json
import sys
import warnings

import numpy as np
import sklearn
from sklearn.metrics import accuracy_score, balanced_accuracy_score, cohen_kappa_score, f1_score


def _noisy(rng, labels, right, classes):
    other = rng.choice(classes, size=labels.size)
    return np.where(rng.random(labels.size) < right, labels, other)


def cases():
    rng = np.random.default_rng(41)
    for n, K in ((30, 3), (90, 4), (400, 10)):
        labels = rng.integers(0, K, n)
        yield f"integers_n{n}_K{K}", labels, {f"m{j}": _noisy(rng, labels, 0.3 + 0.2 * j, np.arange(K))
                                            for j in range(3)}
    labels = rng.choice(["cat", "dog", "fox", "owl"], size=60, p=[0.4, 0.3, 0.2, 0.1])
    yield "strings_n60_K4", labels, {m: _noisy(rng, labels, r, np.array(["cat", "dog", "fox", "owl"]))
                                     for m, r in (("a", 0.7), ("b", 0.4))}
    labels = rng.integers(0, 3, 40)
    yield "only_predicted_n40_K3", labels, {"a": _noisy(rng, labels, 0.6, np.arange(4)),
                                            "b": _noisy(rng, labels, 0.5, np.arange(5))}


def main(path: str) -> None:
    out = {"sklearn": sklearn.__version__, "numpy": np.__version__, "cases": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the classes only predicted: recall undefined, warned about
        for name, labels, models in cases():
            values = {m: {"accuracy": accuracy_score(labels, p), "kappa": cohen_kappa_score(labels, p),
                          "balanced_accuracy": balanced_accuracy_score(labels, p),
                          "macro_f1": f1_score(labels, p, average="macro", zero_division=0)}
                      for m, p in models.items()}
            out["cases"].append({"name": name, "labels": labels.tolist(),
                                 "predictions": {m: p.tolist() for m, p in models.items()}, "values": values})
    with open(path, "w") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
