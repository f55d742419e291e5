"""Search of the lattice nulls: bracketed critical values and trimmed tail probabilities.

**Critical value** (:func:`critical_key`): the smallest candidate y with Pr(X >= y) <= t is found by
a bracketed search; m* is the candidate just below y (it carries probability, so it is attainable).
Each step runs one programme at a candidate and keeps the bracket lo < y <= hi exact.  Steps are
placed by a Brownian-bridge model of the maximum (``model_phi`` of the candidate family), corrected
by the programmes already run (interpolating sqrt(-log Pr) between the observations around the
crossing).  A programme also says how far its verdict extends (the kernel keeps, per diagonal, the
mass entering H and the highest live point with its mass; the family reads bounds off them):

- a key that does not qualify moves lo up to the lowest point where mass entered H (the tail is
  flat up to it) and to the largest *atom*: the highest entry point whose entry masses from it
  upwards exceed t (so its tail does too).  F1 at P << N has big atoms at simple fractions such
  as 2/(P+1) that no smooth model places; after an atom jump the candidate just above lo is tried;
- a key that qualifies moves hi down to the lowest candidate whose tail is still <= t because the
  live mass that could reach it (edge masses above it, plus trimmed mass) fits in t - Pr(X >= key).

When a step lands on the same side twice it aims past the target, and when the bracket does not
shrink by a third the middle candidate is run (unless that step's tail was within 2% of the target:
the model is converging, the crossing merely close to one end of the bracket), so a wrong model
costs programmes, never exactness.  Median 3 programmes per critical value over the paper's grid,
at most 10 on the cells of ``benchmarks/bench_lattice.py`` (114 in all; 14 and 122 with every
small cut a stall), instead of log2(P N) ~ 20-27.

**Trimmed programmes** (``floor`` in the kernel): a programme drops paths whose mass is below a
floor and reports the dropped mass D; the exact tail lies in [hit, hit + D].  A comparison with t
is decided only when hit > t or hit + D <= t (a deciding programme is trimmed at
:data:`DECISION_FLOOR_SHARE`, D ~ 1e-9 t, and reruns at a lower floor, then untrimmed, where its
bracket straddles t), and a tail probability is accepted only when D <= :data:`TRIM_RTOL` x hit
(else it reruns with a lower floor, then untrimmed): trimming never moves a critical value and
never changes a tail probability by more than 1e-15 relative.
"""

from __future__ import annotations

import math

import numpy as np

#: A trimmed programme's dropped mass, relative to the answer, below which its tail is accepted.
TRIM_RTOL = 1e-15
#: Floor of a trimmed programme = FLOOR_SHARE x (expected tail) / (P + N): the dropped mass then stays
#: far below TRIM_RTOL x tail (a few points per diagonal fall under the floor).
FLOOR_SHARE = 1e-20
#: Floor share of a programme that only decides Pr(X >= key) <= t (a search's probe, a max-T decision): its dropped
#: mass is then about 1e-9 x t, which decides every comparison but those within 1e-9 of t, and its band about a third
#: narrower (best F1 at (3e5, 7e5): 0.43 -> 0.29 s a programme).  A programme whose bracket straddles t reruns at
#: FLOOR_SHARE, then untrimmed (:func:`_decide`).
DECISION_FLOOR_SHARE = 1e-9
#: Never trim below this floor (subnormal arithmetic is ~100x slower); a tail so small that this
#: matters reruns untrimmed.
MIN_FLOOR = 1e-300
#: Mass a live point may have lost to underflow (its computed mass is 0): the smallest normal double.
UNDERFLOW_MASS = 2.3e-308
#: A probe whose tail is within a factor e^this of the target does not count as stalling the search (the corrected
#: model placed it well; the bracket shrinks little only because the crossing is close to one end).
NEAR_LOG = 0.02
#: List the candidates inside the bracket once there are at most this many (with repetition).
ENUMERATE_LIMIT = 1 << 12
#: A tail known from an earlier search places a key on one side of a new target only when it is this far from it,
#: relatively (well above the programmes' rounding: :func:`critical_key`).
KNOWN_RTOL = 1e-9


#: Below e^this a probability's correctly rounded double is 0.0 (half the smallest subnormal is e^-745.13).
LOG_BELOW_DOUBLES = -746.0


def _floor(family, expected: float, share: float = FLOOR_SHARE) -> float:
    return max(share * expected / (family.P + family.N), MIN_FLOOR)


def _decide(family, key, target: float) -> tuple:
    """(hit, dropped, flat, record) of a programme at ``key`` whose bracket [hit, hit + dropped] decides
    Pr(X >= key) <= ``target``: trimmed at :data:`DECISION_FLOOR_SHARE`, rerun at :data:`FLOOR_SHARE` and then
    untrimmed while the bracket straddles the target."""
    hit, dropped, flat, record = family.sweep(key, _floor(family, target, DECISION_FLOOR_SHARE))
    if hit <= target < hit + dropped:
        hit, dropped, flat, record = family.sweep(key, _floor(family, target))
    if hit <= target < hit + dropped:
        hit, dropped, flat, record = family.sweep(key, 0.0)
    return hit, dropped, flat, record


def union_log_bound(family, key) -> float:
    """log of a rigorous upper bound on Pr(X >= key): the ranking's path touches {a t - b f >= c} on some diagonal d
    (the top d items, t of them positive) only if TP_d >= T_d = ceil((c + b d) / (a + b)), so Pr(X >= key) <=
    sum_d Pr(TP_d >= T_d), TP_d hypergeometric, each term bounded by Hoeffding's (1963) Chernoff bound for sampling
    without replacement, exp(-m KL(q || P / n)), on the d items ranked or on the n - d others (the smaller); 0.0
    (no bound) where the integers would not fit int64 or the family's event is not one half-plane (best MCC).

    Examples
    --------
    >>> from tablegen.compute.exact.lattice import BalancedAccuracyKeys
    >>> family = BalancedAccuracyKeys(300, 700)
    >>> union_log_bound(family, family.max_key) >= math.log(tail_at_key(family, family.max_key))  # 1 / C(1000, 300)
    True
    >>> union_log_bound(BalancedAccuracyKeys(3000, 7000), 3000 * 7000) < LOG_BELOW_DOUBLES
    True
    """
    if not hasattr(family, "half_plane"):
        return 0.0
    P, N = family.P, family.N
    a, b, c = (int(v) for v in family.half_plane(key))
    n = P + N
    if a + b <= 0 or abs(c) + b * n + a + b >= 2**62:
        return 0.0
    d = np.arange(n + 1, dtype=np.int64)
    threshold = -((-(c + b * d)) // (a + b))  # T_d, exactly
    p = P / n
    with np.errstate(divide="ignore", invalid="ignore"):
        top = _log_chernoff(threshold / np.maximum(d, 1), p, d, above=True)
        rest = _log_chernoff((P - threshold) / np.maximum(n - d, 1), p, n - d, above=False)
    log_terms = np.minimum(top, rest)
    log_terms[threshold <= 0] = 0.0
    log_terms[threshold > np.minimum(d, P)] = -np.inf
    largest = float(np.max(log_terms))
    if largest == -np.inf:
        return -math.inf
    return largest + math.log(float(np.sum(np.exp(log_terms - largest))))


def _log_chernoff(q: np.ndarray, p: float, m: np.ndarray, above: bool) -> np.ndarray:
    """log of exp(-m KL(q || p)) where q is beyond p on the side asked (a sample mean >= q > p, or <= q < p), else 0."""
    q = np.clip(q, 0.0, 1.0)
    kl = np.where(q > 0, q * np.log(q / p), 0.0) + np.where(q < 1, (1 - q) * np.log((1 - q) / (1 - p)), 0.0)
    beyond = q > p if above else q < p
    return np.where(beyond & (m > 0), -m * np.maximum(kl, 0.0), 0.0)


class _Probe:
    """What one programme at ``key`` tells the search (see :func:`_run_probe`); the exact tail lies in
    [tail, tail + dropped]."""

    def __init__(self, key, qualifies: bool, tail: float, flat=None, atom=None, below=None, dropped: float = 0.0):
        self.key, self.qualifies, self.tail, self.dropped = key, qualifies, tail, dropped
        self.flat, self.atom, self.below = flat, atom, below


def _run_probe(family, key, target: float, lo, hi) -> _Probe:
    """Decide Pr(X >= key) <= target rigorously (:func:`_decide`: a trimmed programme whose bounds straddle the
    target reruns with a lower floor, then untrimmed) and read off how far the verdict extends:

    - key does not qualify: ``flat``, the lowest first-entry candidate (Pr(X >= flat) =
      Pr(X >= key)), and ``atom``, the largest entry candidate whose entry masses from it upwards
      exceed the target (``atom_bound`` of the family); both have tails > target;
    - key qualifies: ``below``, the lowest candidate whose tail is still <= target by the edge
      masses (``edge_bound``: Pr(X >= below) <= hit + 2 dropped + the edge masses above it).
    """
    hit, dropped, flat, record = _decide(family, key, target)
    if hit + dropped <= target:
        budget = target - hit - 2.0 * dropped - UNDERFLOW_MASS * (family.P + family.N)
        return _Probe(key, True, hit, below=family.edge_bound(record, budget, lo, key), dropped=dropped)
    return _Probe(key, False, hit, flat, family.atom_bound(record, target * (1.0 + 1e-9), hi),  # margin: rounding
                  dropped=dropped)


def tail_at_key(family, key, expected: float | None = None) -> float:
    """Pr(X >= key), within :data:`TRIM_RTOL` relative of the untrimmed programme's value; 0.0 (its correctly
    rounded value) without a programme where :func:`union_log_bound` is below e^-746.

    The floor is set from ``expected`` (default: the Brownian-bridge model); if the dropped mass
    is too large a share of the answer, the programme reruns with the floor set from the answer
    found, and at last untrimmed.

    Examples
    --------
    >>> from tablegen.compute.exact.lattice import BalancedAccuracyKeys
    >>> round(tail_at_key(BalancedAccuracyKeys(2, 2), 4), 12)  # G = 4: both positives on top
    0.166666666667
    """
    if union_log_bound(family, key) < LOG_BELOW_DOUBLES:  # far beyond every double: 0.0, without a programme
        return 0.0
    if expected is None:
        expected = math.exp(-family.model_phi(family.value(key)) ** 2)
    hit, dropped, _, _ = family.sweep(key, _floor(family, expected))
    if dropped > TRIM_RTOL * hit and hit > 0:
        hit, dropped, _, _ = family.sweep(key, _floor(family, hit))
    if dropped > TRIM_RTOL * hit:
        hit, _, _, _ = family.sweep(key, 0.0)
    return hit


def tail_at_most(family, key, target: float, known: list | None = None) -> bool:
    """Whether Pr(X >= ``key``) <= ``target`` (True for None, a key above the maximum), decided as a search's probe
    decides it (:func:`_run_probe`: a trimmed programme, rerun untrimmed where its bracket straddles the target), or
    without a programme where ``known`` (a null's (key, low, high) bounds, see :func:`critical_key`) places a key at
    or below it under the target, or one at or above it over the target, by the :data:`KNOWN_RTOL` margin (tails
    fall as keys rise).  The programme's bounds are added to ``known``.

    Examples
    --------
    >>> from tablegen.compute.exact.lattice import BalancedAccuracyKeys
    >>> family = BalancedAccuracyKeys(20, 30)
    >>> round(tail_at_key(family, 200), 4), tail_at_most(family, 200, 0.05), tail_at_most(family, 200, 0.06)
    (0.0595, False, True)
    """
    if key is None:
        return True
    rtol = max(KNOWN_RTOL, 4.0 * (family.P + family.N) * 2.0**-53)
    for other, low, high in known or ():
        if other <= key and high <= target * (1.0 - rtol):
            return True
        if other >= key and low > target * (1.0 + rtol):
            return False
    hit, dropped, flat, _ = _decide(family, key, target)
    qualifies = hit + dropped <= target
    _note(known, family, key, hit, dropped, flat, qualifies)
    return qualifies


def _note(known: list | None, family, key, hit: float, dropped: float, flat, qualifies: bool) -> None:
    """Add a programme's bounds on Pr(X >= key) to ``known`` (if kept): [hit, hit + dropped] with the underflow
    slack the qualifying budget subtracts, and the same for its flat stretch's lowest candidate where the key did
    not qualify."""
    if known is None:
        return
    high = hit + dropped + UNDERFLOW_MASS * (family.P + family.N)
    known.append((key, hit, high))
    if not qualifies and flat is not None and flat != key:
        known.append((flat, hit, high))


def tail_bracket_at_key(family, key, within: float) -> tuple[float, float]:
    """(low, high) around Pr(X >= key) at most ``within`` wide: one trimmed programme's [hit, hit + dropped] where
    the dropped mass fits (the first programme of :func:`tail_at_key`), else (p, p) from :func:`tail_at_key`.
    A caller that needs no more (a tail far below a double's resolution of 1 - tail) spares the reruns.

    Examples
    --------
    >>> from tablegen.compute.exact.lattice import BalancedAccuracyKeys
    >>> low, high = tail_bracket_at_key(BalancedAccuracyKeys(200, 300), 50_000, 1e-15)
    >>> low <= tail_at_key(BalancedAccuracyKeys(200, 300), 50_000) <= high <= low + 1e-15
    True
    """
    if union_log_bound(family, key) < LOG_BELOW_DOUBLES:
        return 0.0, 0.0
    expected = math.exp(-family.model_phi(family.value(key)) ** 2)
    hit, dropped, _, _ = family.sweep(key, _floor(family, expected))
    if dropped <= within:
        return hit, hit + dropped
    exact = tail_at_key(family, key, expected)
    return exact, exact


def _phi(tail: float) -> float:
    return math.sqrt(max(-math.log(tail), 0.0)) if tail > 0 else math.inf


class _Bracket:
    """lo < y <= hi with Pr(X >= lo) > target >= Pr(X >= hi); hi None stands for "above the maximum".

    ``seen`` holds (value, sqrt(-log tail)) of every exactly known tail, for interpolation.
    """

    def __init__(self, family, target: float, known: list | None = None):
        self.family, self.target, self.phi_target = family, target, _phi(target)
        self.lo, self.hi, self.seen = family.min_key, None, []
        self.last, self.run, self.programmes, self.last_phi = None, 0, 0, None
        self.jump = None  # "flat" or "atom" if the last probe moved lo past itself
        self.successor_tried = False
        self.known = known
        if known:
            self._start_from(known)

    def _start_from(self, known: list) -> None:
        """Narrow the bracket by what earlier searches' programmes showed (:func:`critical_key`'s ``known``)."""
        rtol = max(KNOWN_RTOL, 4.0 * (self.family.P + self.family.N) * 2.0**-53)  # the sums' rounding, at most
        above, below = self.target * (1.0 + rtol), self.target * (1.0 - rtol)
        for key, low, high in known:
            if low > above and key > self.lo:
                self.lo = key
            elif high <= below and (self.hi is None or key < self.hi):
                self.hi = key
            self.seen.append((self.family.value(key), _phi(low)))

    def update(self, key) -> None:
        probe = _run_probe(self.family, key, self.target, self.lo, self.hi)
        self.programmes += 1
        _note(self.known, self.family, key, probe.tail, probe.dropped, probe.flat, probe.qualifies)
        side = "hi" if probe.qualifies else "lo"
        self.run, self.last = (self.run + 1 if side == self.last else 1), side
        self.seen.append((self.family.value(key), _phi(probe.tail)))
        self.last_phi = _phi(probe.tail)  # sqrt(-log tail): its square less the target's is log(target / tail)
        self.jump = None
        if probe.qualifies:
            self.hi = key
            if probe.below is not None and self.lo < probe.below < key:
                self.hi = probe.below
            return
        self.lo = key
        below_hi = lambda other: self.hi is None or other < self.hi  # noqa: E731 - guards float near-ties
        if probe.flat is not None and probe.flat > self.lo and below_hi(probe.flat):
            self.lo, self.jump = probe.flat, "flat"
            self.seen.append((self.family.value(probe.flat), _phi(probe.tail)))
        if probe.atom is not None and probe.atom > self.lo and below_hi(probe.atom):
            self.lo, self.jump = probe.atom, "atom"

    def _ends(self):
        """The observations nearest the crossing on either side (None where there is none)."""
        below = [s for s in self.seen if s[1] < self.phi_target]
        above = [s for s in self.seen if s[1] >= self.phi_target]
        return (max(below) if below else None), (min(above) if above else None)

    def _residual(self, x: float) -> float:
        """Observed minus modelled phi, interpolated linearly between the observations around x."""
        model = self.family.model_phi
        ends = [(end[0], end[1] - model(end[0])) for end in self._ends() if end is not None and math.isfinite(end[1])]
        if not ends:
            return 0.0
        if len(ends) == 1 or ends[1][0] == ends[0][0]:
            return ends[0][1]
        (v0, r0), (v1, r1) = ends
        return r0 + (r1 - r0) * (x - v0) / (v1 - v0)

    def predict(self) -> float:
        """Value where the corrected model crosses the target.  After a run of probes on one side
        it aims past the target instead, by a step in sqrt(-log tail) that doubles with the run."""
        family = self.family
        low = family.value(self.lo)
        high = family.value(family.max_key if self.hi is None else self.hi)
        aim = self.phi_target
        if self.run >= 2:
            last = self.seen[-1][1] if math.isfinite(self.seen[-1][1]) else self.phi_target + 1.0
            step = max(abs(last - self.phi_target), 1e-7 * self.phi_target) * 2.0 ** (self.run - 2)
            aim = aim + step if self.last == "lo" else aim - step
        a, b = low, high
        for _ in range(50):
            middle = 0.5 * (a + b)
            if family.model_phi(middle) + self._residual(middle) < aim:
                a = middle
            else:
                b = middle
        return 0.5 * (a + b)

    def last_near(self) -> bool:
        """Whether the last probe's tail was within a factor e^:data:`NEAR_LOG` of the target."""
        phi = self.last_phi
        return phi is not None and math.isfinite(phi) and abs(phi * phi - self.phi_target * self.phi_target) < NEAR_LOG

    def wants_successor(self) -> bool:
        """After lo jumped to an atom, the crossing is most likely that atom: try the candidate
        just above lo, once."""
        if self.jump != "atom" or self.successor_tried:
            self.successor_tried = False
            return False
        self.successor_tried = True
        return True


def _median_key(family, lo, hi, count: int):
    """A candidate strictly inside (lo, hi) with about half of the ``count`` candidates below it."""
    low = family.value(lo)
    high = family.value(family.max_key) if hi is None else family.value(hi)
    for _ in range(64):
        middle = 0.5 * (low + high)
        key = family.ceil_key(middle)
        if key is None or (hi is not None and key >= hi):
            high = middle
            continue
        below = family.count_between(lo, key)
        if abs(below - count / 2) <= count / 4:
            return key
        low, high = (middle, high) if below < count / 2 else (low, middle)
    return family.successor(lo)  # inside the bracket, as it holds candidates


def _next_probe(bracket: _Bracket, listed, count: int, previous: int):
    """The next candidate to run, strictly inside the bracket: where the corrected model crosses
    the target; the middle candidate (by rank in a short list, else by value) when the last probe
    did not cut the bracket's candidates by a third or four probes fell on one side.  Both ends
    must have been observed before the middle is used (the minimum's tail, 1, says nothing)."""
    family, lo, hi = bracket.family, bracket.lo, bracket.hi
    if bracket.wants_successor():
        return family.successor(lo)
    observed = lo != family.min_key and hi is not None
    near = bracket.last_near()  # the last probe's tail within NEAR_LOG of the target: the model is converging
    stalled = observed and (bracket.run >= 4 or (3 * count > 2 * previous and not near))
    if listed is not None:
        index = len(listed) // 2 if stalled else int(np.searchsorted(listed.values, bracket.predict()))
        return listed.key(min(max(index, 0), len(listed) - 1))
    high = family.value(family.max_key if hi is None else hi)
    aim = 0.5 * (family.value(lo) + high) if stalled else bracket.predict()
    for key in (family.ceil_key(aim), family.floor_key(aim)):  # the nearest candidates above, below
        if key is not None and lo < key and (hi is None or key < hi):
            return key
    return _median_key(family, lo, hi, count)


def critical_key(family, tail: float, known: list | None = None) -> tuple[object, int]:
    """(m*, programmes run): the largest candidate with Pr(X >= m*) > ``tail`` (exact; see module).

    Progress is counted in lattice points whose candidate lies inside the bracket, and once they
    are few, in distinct candidates (a fraction recurs at many points).

    ``known``, a list the caller keeps across the searches of one null
    (:class:`~tablegen.compute.exact.nulls.LatticeNull`), holds (key, low, high) with low <= Pr(X >= key) <= high
    from every programme run so far (the probe's key and its flat stretch's lowest candidate: [hit, hit + dropped]);
    this search appends its own.  A later search starts its bracket from them: lo at the highest key known to have a
    tail above ``tail`` (1 + :data:`KNOWN_RTOL`), hi at the lowest known to have one below ``tail``
    (1 - KNOWN_RTOL).  The margin exceeds the programmes' rounding (~(P + N) 2^-53 relative; 4 times that where
    larger), so a key is placed as a programme at it would place it, and the key found is the one a search without
    them finds (a search over tails, e.g. the selection test's for the competitors not given, then runs few
    programmes per tail).

    Examples
    --------
    >>> from tablegen.compute.exact.lattice import BestF1Keys
    >>> key, programmes = critical_key(BestF1Keys(20, 20), 0.001)
    >>> key, float(key)
    (Fraction(19, 24), 0.7916666666666666)
    """
    if tail >= 1.0:  # every candidate qualifies, the smallest included
        return family.min_key, 0
    bracket = _Bracket(family, tail, known)
    previous = math.inf
    while True:
        count = family.count_between(bracket.lo, bracket.hi)
        listed = family.keys_between(bracket.lo, bracket.hi) if 0 < count <= ENUMERATE_LIMIT else None
        count = count if listed is None else len(listed)
        if count == 0:
            return bracket.lo, bracket.programmes
        bracket.update(_next_probe(bracket, listed, count, previous))
        previous = count
