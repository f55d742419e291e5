"""Simulated significance tests answered by tablegen before the sequential verdict (commit c86a929), for
``tests/lookup/test_sequential.py``: the fixed-R answers must stay the same bits, and an undecided sequential run must
end on the same values.

    git worktree add /tmp/t9_before2 c86a929
    .venv/bin/python tests/data/sequential_head/make.py /tmp/t9_before2 > tests/data/sequential_head/expected.json
"""

import json
import sys


def main(tree: str) -> None:
    """Print the answers of the tablegen source tree ``tree`` (its own package, not the editable install)."""
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")]
    sys.path.insert(0, tree)

    from tablegen.lookup.api import p_value, significance_test

    # alpha at which t* equals the exact tail of AUC >= 0.735 at (20, 20), C = 10: a verdict no look decides
    undecided_alpha = float(p_value("auc", 20, 20, C=10, score=0.735, method="exact").value)
    questions = {  # name -> significance_test's arguments
        "ap_fixed": dict(metric="average_precision", P=150, N=484, C=114, alpha=0.05, score=0.3, R=100_000),
        "auc_fixed": dict(metric="auc", P=20, N=20, C=10, alpha=0.05, score=0.8, method="simulate", R=200_000,
                          seed=3),
        "auc_undecided": dict(metric="auc", P=20, N=20, C=10, alpha=undecided_alpha, score=0.735,
                              method="simulate"),
    }
    out = {name: {"arguments": kwargs, "result": significance_test(**kwargs).to_dict()}
           for name, kwargs in questions.items()}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":  # run by hand only (collected, it must do nothing)
    main(sys.argv[1])
