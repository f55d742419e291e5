"""A simulated verdict that stops as soon as it is decided: looks at R_0, 2 R_0, 4 R_0, ... rankings (and where a
clear winner is decided) up to the default R.

Where :func:`tablegen.lookup.api.significance_test` simulates both the critical value and the p-value and the
caller gave no R, the rankings are the same keyed stream as a fixed-R run (ranking r is the same whatever R: every
look is a prefix of the fixed run), read in stretches, looked at after the numbers of rankings :func:`looks` lists
(fixed by R, C and alpha before any ranking is drawn).  At look j, after R_j rankings of which h_j reached the score,
the verdict is **decided** when the two-sided Clopper–Pearson interval of the tail theta = Pr(X >= score) at level
1 - delta / J (J the number of looks, delta = :data:`SEQUENTIAL_RISK`) lies wholly below t* = 1 - (1 - alpha)^(1/C)
(significant) or wholly above it (not significant), and the answer reported at that look agrees with it (its
verdict the same, and settled).  The run stops at the first decided look; at the last look (the default R) it
answers with every ranking, as the fixed-R run does, decided or not.

**(i) The verdict.**  The exact verdict is "significant" iff theta <= t* (equivalently p = 1 - (1 - theta)^C <=
alpha, or score above the exact critical value).  A look's decision disagrees with it only if that look's interval
misses theta (a "significant" decision has its interval's upper end below t*, so below theta where theta > t*; a
"not significant" one its lower end above t* >= theta).  Each interval misses with probability at most delta / J
whatever theta is (Clopper–Pearson), so by the union bound over the J looks, whatever look the data make it stop
at, Pr(it stops at a look before the last and its verdict disagrees with the exact one) <= delta.  Where it reaches
the last look, its verdict is the fixed-R run's (the same rankings, the same verdict, bit for bit); so the sequential
verdict differs from the exact verdict only where the fixed-R verdict does, or with probability at most delta.

**(ii) The intervals.**  At every look, the last included, the p-value's interval (Clopper–Pearson of theta,
carried through p = 1 - (1 - theta)^C, which is monotone) and the critical value's (the distribution-free
order-statistic interval, :func:`tablegen.compute.stats.upper_ranks`) are computed at level 1 - 0.05 / J.  Let
E_j be the event that look j's interval misses its target; Pr(E_j) <= 0.05 / J.  Whatever the stopping look tau
(any function of the data), Pr(E_tau) <= Pr(E_1 or ... or E_J) <= J * 0.05 / J = 0.05: the interval reported
covers with probability at least 95% (simultaneous 95% intervals over the looks).  That is why a sequential answer
that reaches the last look carries wider intervals than a fixed-R answer with the same R (its value, p-value and
verdict are the same bits): 95% at the stopping look can not be had by the union bound otherwise.

``R=`` given by the caller keeps the fixed-R run (the same answers as before the sequential rule), as do a
critical value or a p-value asked alone.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from tablegen.compute.stats import CI_LEVEL, clopper_pearson, minimum_replicates, upper_ranks, upper_tail_probability
from tablegen.lookup.answers import Answer

logger = logging.getLogger(__name__)

#: delta: the probability that a verdict stopped before the default R disagrees with the exact one, at most.
SEQUENTIAL_RISK = 1e-3
#: How the notes of a sequential simulation begin (:func:`stopping_note`, :func:`undecided_note`).
SEQUENTIAL_NOTE_START = "the simulation "
#: R_0, the first look (or the R a critical value needs at C and alpha, if larger).
FIRST_LOOK = 1_000


def looks(R: int, C: int, alpha: float) -> list[int]:
    """The looks' R_j: R_0 * 2^j below R (R_0 = max(:data:`FIRST_LOOK`, minimum_replicates(C, alpha))), one more at
    the fewest rankings that decide "significant" when none of them reaches the score (:func:`clear_look`) if that
    is below R and not a look already, then R.

    Examples
    --------
    >>> looks(100_000, C=10, alpha=0.05)
    [1000, 1911, 2000, 4000, 8000, 16000, 32000, 64000, 100000]
    >>> looks(100_000, C=100, alpha=0.05)
    [1951, 3902, 7804, 15608, 18873, 31216, 62432, 100000]
    >>> looks(1_000, C=1, alpha=0.05)
    [1000]
    """
    first = max(FIRST_LOOK, minimum_replicates(C, alpha))
    out = []
    while first < R:
        out.append(first)
        first *= 2
    clear = clear_look(len(out) + 2, C, alpha)  # with it, there are len(out) + 2 looks at most
    return sorted({*out, clear} if out and out[0] < clear < R else out) + [R]


def clear_look(J: int, C: int, alpha: float) -> int:
    """The fewest rankings R at which none reaching the score decides "significant" with J looks: the Clopper–Pearson
    upper end 1 - (delta / 2J)^(1/R) of a tail with no hit below t*, i.e. R > log(delta / 2J) / log(1 - t*).

    Examples
    --------
    >>> R = clear_look(8, C=100, alpha=0.05)
    >>> R, decision(0, R, C=100, alpha=0.05, J=8), decision(0, R - 1, C=100, alpha=0.05, J=8)
    (18873, True, None)
    """
    t = float(upper_tail_probability(C, alpha))
    return int(math.floor(math.log(SEQUENTIAL_RISK / (2 * J)) / math.log1p(-t))) + 1


def interval_level(J: int) -> float:
    """The level of a sequential answer's intervals with J looks: 1 - 0.05 / J (simultaneous 95%, module docstring).

    Examples
    --------
    >>> interval_level(1), interval_level(8)
    (0.95, 0.99375)
    """
    return 1.0 - (1.0 - CI_LEVEL) / J


def decision(hits: int, R: int, C: int, alpha: float, J: int) -> bool | None:
    """True (significant) or False where the tail's interval at 1 - delta / J lies wholly on one side of t*, else
    None.

    Examples
    --------
    >>> decision(0, 32_000, C=100, alpha=0.05, J=7), decision(0, 4_000, C=100, alpha=0.05, J=7)
    (True, None)
    >>> decision(900, 2_000, C=100, alpha=0.05, J=7)
    False
    """
    low, high = (float(v) for v in clopper_pearson(hits, hits, R, level=1.0 - SEQUENTIAL_RISK / J))
    t = float(upper_tail_probability(C, alpha))
    return True if high < t else False if low > t else None


def stopping_note(R: int, final: int, J: int, hits: int, C: int, alpha: float, significant: bool) -> str:
    """Why a sequential simulation stopped where it did, for the answer's notes and sentence.

    Examples
    --------
    >>> print(stopping_note(32_000, 100_000, 7, 0, 100, 0.05, True))  # doctest: +NORMALIZE_WHITESPACE
    the simulation stopped early, at R = 32,000 of 100,000 rankings: none of them reached the score, and the
    tail's 99.986% interval lies below t* = 0.000513 (the rule stops early with a verdict other than the exact
    one with probability at most 0.001); its intervals are simultaneous 95% over 7 looks (each at 99.29%)
    """
    level = 1.0 - SEQUENTIAL_RISK / J
    t = float(upper_tail_probability(C, alpha))
    reached = "none of them" if hits == 0 else f"{hits:,} of them"
    return (f"the simulation stopped early, at R = {R:,} of {final:,} rankings: {reached} reached the score, and the "
            f"tail's {100 * level:.5g}% interval lies {'below' if significant else 'above'} t* = {t:.3g} (the rule "
            f"stops early with a verdict other than the exact one with probability at most {SEQUENTIAL_RISK:g}); its "
            f"intervals are simultaneous 95% over {J} looks (each at {100 * interval_level(J):.4g}%)")


def undecided_note(steps: list[int]) -> str:
    """The note of a sequential simulation that ran to its last look (``steps``: the looks' R).

    Examples
    --------
    >>> print(undecided_note([2_000, 4_000, 10_000]))  # doctest: +NORMALIZE_WHITESPACE
    the simulation looked at R = 2,000, 4,000 rankings without a decided verdict and ran to its last look, R =
    10,000: the verdict is the fixed-R one; its intervals are simultaneous 95% over 3 looks (each at 98.33%)
    """
    J = len(steps)
    return (f"the simulation looked at R = {', '.join(f'{R:,}' for R in steps[:-1])} rankings without a decided "
            f"verdict and ran to its last look, R = {steps[-1]:,}: the verdict is the fixed-R one; its intervals are "
            f"simultaneous 95% over {J} looks (each at {100 * interval_level(J):.4g}%)")


def sequential_verdict(a, question: tuple, final: int, seed: int, progress: Callable[[int, int], None] | None = None,
                       device: str = "cpu"):
    """(critical value, p-value, note) of the sequential simulation of the question ``a``
    (:class:`~tablegen.lookup._iv.LookupArgs` with a score, alpha, and R None): the module docstring's rule.
    ``question`` is (metric entry, P, N, C, alpha, score, divisor) in the engine's terms (a precision at k as a
    count), ``final`` the policy's R (the last look), ``seed`` the root seed, ``device`` where rankings are scored."""
    from tablegen.compute.accumulator import critical_order_statistics, tail_merge
    from tablegen.compute.exact.nulls import SNAP_TOLERANCE
    from tablegen.compute.mc import simulate_tails_and_counts, tail_capacity
    from tablegen.lookup.answers import divided_answer, simulated_p_value, verdict

    metric, P, N, C, alpha, score, divisor = question
    steps = looks(final, C, alpha)
    J, level = len(steps), interval_level(len(steps))
    capacity = max(tail_capacity(final, (C,), (alpha,), ()), *(upper_ranks(R, C, alpha, level)[1] for R in steps))
    thresholds = {metric.name: score - SNAP_TOLERANCE}
    tail, hits, done = None, 0, 0
    for j, R in enumerate(steps):
        stretch = None if progress is None else (lambda k, _, done=done: progress(done + k, final))
        tails, counts = simulate_tails_and_counts(P, N, R - done, seed, [metric], capacity, thresholds,
                                                  progress=stretch, device=device, first=done)
        tail = tails[metric.name] if tail is None else tail_merge(tail, tails[metric.name])
        hits, done = hits + counts[metric.name], R
        estimate, low, high = critical_order_statistics(tail, upper_ranks(R, C, alpha, level), metric.range(P, N)[1])
        cv = divided_answer(Answer(estimate, low, high, "simulate", R, seed), divisor)
        pv = simulated_p_value(C, R, seed, hits, level)
        decided = decision(hits, R, C, alpha, J)
        logger.info("sequential %s at P = %d, N = %d: look %d/%d, R = %d, %d hits, decided %s", metric.name, P, N,
                    j + 1, J, R, hits, decided)
        if R == final:
            return cv, pv, undecided_note(steps) if J > 1 else ""
        answer = verdict(a.metric, a.score, a.P, a.N, a.C, a.alpha, cv, pv)
        if decided is not None and answer.settled and answer.significant == decided:
            return cv, pv, stopping_note(R, final, J, hits, C, alpha, decided)
    raise AssertionError("the last look returns")  # pragma: no cover
