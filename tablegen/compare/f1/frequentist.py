"""The frequentist comparisons Zhang et al. (ICDM 2015, Table III) put beside the Bayesian one.

After Yang & Liu, "A re-examination of text categorization methods" (SIGIR 1999), all two-sided:

- **micro sign test** (s-test): over every binary decision (item, class) — is the item in the class? —
  the decisions exactly one classifier gets right; under H₀ each is A's with probability ½ (exact
  binomial test).  A single-label item that a classifier gets wrong costs it two decisions (its true
  class missed, its predicted class wrongly assigned).  It needs to know which items each classifier
  got right, so it needs the per-item labels and predictions; from confusion matrices alone it is not
  defined (reported with ``p_value`` None).
- **macro sign test** (S-test): over classes, the sign of F1_A(k) − F1_B(k) (ties dropped), exact
  binomial test.
- **micro proportions test** (p-test): micro F1 — in single-label classification, accuracy — of A and
  B as two proportions out of N items, z = (p_A − p_B)/√(p̄(1 − p̄)(1/N_A + 1/N_B)), p̄ pooled.
- **macro paired t-test** (T-test): the per-class F1 differences, Student's t with M − 1 degrees of
  freedom (``scipy.stats.ttest_rel``).

Each test also gets Yang & Liu's symbol: ≫/≪ for p ≤ 0.01, >/< for 0.01 < p ≤ 0.05, ~ otherwise.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from tablegen.compare.f1.summary import per_class_f1
from tablegen.compare.f1.validation import check_confusion
from tablegen.errors import Argument, TablegenInputError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: Per-class F1 differences at most this far from 0 count as ties (F1 values are ratios of counts).
TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class FrequentistTest:
    """One test: its statistic, two-sided p-value (None when not defined), sample size and symbol."""

    name: str
    statistic: float | None
    p_value: float | None
    n: int
    symbol: str
    note: str = ""


def symbol(p_value: float | None, direction: float) -> str:
    """Yang & Liu's symbol for a p-value and the sign of A − B.

    Examples
    --------
    >>> symbol(0.003, 1.0), symbol(0.03, -2.0), symbol(0.2, 1.0), symbol(None, 1.0)
    ('≫', '<', '~', '')
    """
    if p_value is None:
        return ""
    if p_value <= 0.01 and direction != 0:
        return "≫" if direction > 0 else "≪"
    if p_value <= 0.05 and direction != 0:
        return ">" if direction > 0 else "<"
    return "~"


def _sign_test(name: str, wins_a: int, wins_b: int, note: str = "") -> FrequentistTest:
    n = wins_a + wins_b
    p = 1.0 if n == 0 else float(stats.binomtest(wins_a, n, 0.5).pvalue)
    return FrequentistTest(name, float(wins_a), p, n, symbol(p, wins_a - wins_b), note)


def _predictions(y_true, y_pred_a, y_pred_b, m: int):
    arrays = []
    for name, value in (("y_true", y_true), ("y_pred_a", y_pred_a), ("y_pred_b", y_pred_b)):
        array = np.asarray(value)
        if array.ndim != 1 or array.dtype.kind not in "iu" or (array.size and (array.min() < 0 or array.max() >= m)):
            raise TablegenInputError(f"{name} must be a 1-D array of class indices 0..{m - 1} (the matrices' order)")
        arrays.append(array.astype(np.int64))
    if len({a.size for a in arrays}) != 1:
        raise TablegenInputError(f"y_true, y_pred_a and y_pred_b must have one entry per item; got lengths "
                                 f"{[a.size for a in arrays]}")
    return arrays


def _confusion(y_true: np.ndarray, y_pred: np.ndarray, m: int) -> np.ndarray:
    return np.bincount(y_true * m + y_pred, minlength=m * m).reshape(m, m).astype(float)


def _micro_sign_test(y_true, y_pred_a, y_pred_b) -> FrequentistTest:
    """Decisions (item, class) only A gets right, against those only B gets right.

    Per item: both right, nothing; only A right, B's two wrong decisions are A's; both wrong with
    different predictions, one each (each got right the class the other wrongly assigned).
    """
    right_a, right_b = y_true == y_pred_a, y_true == y_pred_b
    split = int(np.sum(~right_a & ~right_b & (y_pred_a != y_pred_b)))
    wins_a = 2 * int(np.sum(right_a & ~right_b)) + split
    wins_b = 2 * int(np.sum(~right_a & right_b)) + split
    return _sign_test("micro sign test (s-test)", wins_a, wins_b,
                      "binary decisions (item, class) only A gets right, of those exactly one gets right")


def _proportions_test(a: np.ndarray, b: np.ndarray) -> FrequentistTest:
    n_a, n_b = a.sum(), b.sum()
    x_a, x_b = np.trace(a), np.trace(b)
    pooled = (x_a + x_b) / (n_a + n_b)
    diff = x_a / n_a - x_b / n_b
    se = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    if se == 0:
        z, p = 0.0, 1.0  # both perfect or both always wrong: identical proportions
    else:
        z = diff / se
        p = float(2 * stats.norm.sf(abs(z)))
    return FrequentistTest("micro proportions test (p-test)", z, p, int(n_a + n_b), symbol(p, diff),
                           "micro F1 = accuracy of single-label predictions, as two proportions")


def _paired_t_test(f1_a: np.ndarray, f1_b: np.ndarray) -> FrequentistTest:
    d = f1_a - f1_b
    name, note = "macro paired t-test (T-test)", "per-class F1 differences, M - 1 degrees of freedom"
    if np.all(np.abs(d - d[0]) <= TIE_TOLERANCE):  # no spread: t is 0/0 or ±inf
        if abs(d[0]) <= TIE_TOLERANCE:
            return FrequentistTest(name, 0.0, 1.0, d.size, "~", note)
        return FrequentistTest(name, math.copysign(math.inf, d[0]), 0.0, d.size, symbol(0.0, d[0]), note)
    result = stats.ttest_rel(f1_a, f1_b)
    return FrequentistTest(name, float(result.statistic), float(result.pvalue), d.size,
                           symbol(float(result.pvalue), float(d.mean())), note)


@dataclass(frozen=True)
class FrequentistTests:
    """The four tests of :func:`f1_frequentist_tests`, in the paper's order, and each classifier's per-class F1.

    Examples
    --------
    >>> tests = f1_frequentist_tests([[45, 3, 2], [4, 40, 6], [1, 2, 47]], [[40, 6, 4], [8, 33, 9], [3, 5, 42]])
    >>> tests.f1_a.round(3).tolist(), tests.f1_b.round(3).tolist()
    ([0.9, 0.842, 0.895], [0.792, 0.702, 0.8])
    >>> print(tests.table().splitlines()[-1])
    macro paired t-test (T-test)            8.592       3         0.0133  >
    >>> tests.tests[0].note  # the micro sign test
    'needs per-item predictions (y_true, y_pred_a, y_pred_b)'
    """

    tests: tuple[FrequentistTest, ...]
    f1_a: np.ndarray
    f1_b: np.ndarray

    def to_dict(self) -> dict:
        return {"tests": [asdict(t) for t in self.tests], "per_class_f1_a": self.f1_a.tolist(),
                "per_class_f1_b": self.f1_b.tolist()}

    def table(self) -> str:
        lines = [f"{'test':34}{'statistic':>11}{'n':>8}{'p (two-sided)':>15}  A vs B"]
        for t in self.tests:
            if t.p_value is None:
                lines.append(f"{t.name:34}{'':>11}{'':>8}{'-':>15}  ({t.note})")
                continue
            lines.append(f"{t.name:34}{t.statistic:>11.4g}{t.n:>8}{t.p_value:>15.3g}  {t.symbol}")
        return "\n".join(lines)


def f1_frequentist_tests(confusion_a: ArrayLike, confusion_b: ArrayLike, *, y_true: ArrayLike | None = None,
                         y_pred_a: ArrayLike | None = None, y_pred_b: ArrayLike | None = None) -> FrequentistTests:
    """Micro and macro sign tests, micro proportions test and macro paired t-test of A against B.

    Parameters
    ----------
    confusion_a, confusion_b : array_like, M × M
        Confusion matrices (rows = true class) over the same classes.
    y_true, y_pred_a, y_pred_b : array_like of int, optional
        Per-item true classes and both classifiers' predictions, as indices 0..M−1 in the matrices'
        order; the micro sign test needs them (they must reproduce the matrices).

    Returns
    -------
    FrequentistTests
        ``.tests`` (micro sign, macro sign, micro proportions, macro t), ``.table()``, ``.to_dict()``.

    Examples
    --------
    >>> a = [[45, 3, 2], [4, 40, 6], [1, 2, 47]]
    >>> b = [[40, 6, 4], [8, 33, 9], [3, 5, 42]]
    >>> tests = f1_frequentist_tests(a, b)
    >>> [(t.name.split(" (")[0], t.symbol) for t in tests.tests]
    [('micro sign test', ''), ('macro sign test', '~'), ('micro proportions test', '>'), ('macro paired t-test', '>')]
    """
    a, b = check_confusion("confusion_a", confusion_a), check_confusion("confusion_b", confusion_b)
    if a.shape != b.shape:
        raise TablegenInputError.naming(Argument("confusion_b"), f" has {b.shape[0]} classes but ",
                                        Argument("confusion_a"), f" has {a.shape[0]}")
    m = a.shape[0]
    given = [v is not None for v in (y_true, y_pred_a, y_pred_b)]
    if any(given) and not all(given):
        raise TablegenInputError("give all of y_true, y_pred_a and y_pred_b, or none")
    if all(given):
        y, pa, pb = _predictions(y_true, y_pred_a, y_pred_b, m)
        for name, pred, matrix in (("y_pred_a", pa, a), ("y_pred_b", pb, b)):
            if not np.array_equal(_confusion(y, pred, m), matrix):
                raise TablegenInputError(f"y_true and {name} do not reproduce confusion_{name[-1]}")
        micro_sign = _micro_sign_test(y, pa, pb)
    else:
        micro_sign = FrequentistTest("micro sign test (s-test)", None, None, 0, "",
                                     "needs per-item predictions (y_true, y_pred_a, y_pred_b)")
    f1_a, f1_b = per_class_f1(a), per_class_f1(b)
    d = f1_a - f1_b
    macro_sign = _sign_test("macro sign test (S-test)", int(np.sum(d > TIE_TOLERANCE)),
                            int(np.sum(d < -TIE_TOLERANCE)), "classes whose F1 is higher for A, ties dropped")
    return FrequentistTests((micro_sign, macro_sign, _proportions_test(a, b), _paired_t_test(f1_a, f1_b)),
                            f1_a, f1_b)
