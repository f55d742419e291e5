"""Lane-parallel ranking kernel: LANES replicates in lockstep, bit-identical to ``simulate_block``.

Why
---
The scalar kernel (:mod:`tablegen.compute.kernels.ranking`) walks one ranking at a time, about 4.2 ns per
element-step here.  This kernel walks LANES = 128 rankings together, all at the same position k, so
LLVM turns each step into AVX-512 instructions over 8 lanes at a time (``vpmuludq``, ``vprolq``,
``vpmaxsq``, masked adds; the benchmark checks the assembly), about 0.6 ns per element-step.

Same stream, same answers
-------------------------
Replicate r uses ``replicate_state(key0, key1, r)``; step k uses the high 32 bits of a fresh
xoshiro256** output when k is even and the low 32 bits of that output when k is odd, and
j = (x * total) >> 32 exactly as in the scalar kernel.  Lemire's rejection (redraw when
(x * total) mod 2**32 < 2**32 mod total) cannot be done in lockstep, so each lane keeps the minimum
of (x * total) mod 2**32 over every fused group of steps and is *flagged* when it falls below the
group's largest ``total`` — a superset of the draws that could need rejection (probability about
total / 2**32 per step: about (P+N)**2 / 2**33 per ranking).  Every CHECKPOINT_STEPS = 256 positions
(and at the end) each flagged lane is *replayed* one step at a time from the previous checkpoint
(a copy of every lane's state; the first is the seed), with the scalar kernel's rejection and the
lanes' arithmetic (:func:`_replay_lane`), and goes on in lockstep from where the scalar kernel would
be.  A ranking with rejections thus costs a few hundred scalar steps per suspect draw instead of a
whole scalar ranking, so large cells, where most rankings meet one (P + N = 2e5: about 4.7 suspect
draws per ranking), run at the lanes' speed.  Every row equals the scalar kernel's, bit for bit
(``tests/compute/test_kernel.py`` checks this on tiny, skewed and large cells, with replays
exercised; ``tests/compute/test_stream_golden.py`` against values stored from the earlier
whole-ranking fallback at P + N = 1e5 and 2e5).

State and arithmetic (all int64, explicit 32-bit masks; no uint64, which numba would not vectorise)
-------------------------------------------------------------------------------------------------
One flat int64 array ``W`` holds every lane variable at a compile-time offset (slot * LANES + lane),
so LLVM can prove the slots do not overlap; doubles live in ``F``.  Per lane:
``2 TP`` (so that the positive test is one compare ``x * total < p_rem << 32``), the sum of 2 TP_k
over k (U = sum_k TP_k - P(P+1)/2), max(2 TP - k), TP N - FP P and its maximum, average precision
(float(2 TP) * (1/k)/2 == float(TP) * (1/k) exactly, so the additions match the scalar kernel), and
best MCC as the largest G_k w_k (the weights of :func:`~tablegen.compute.kernels.ranking.mcc_weights`,
the same products as the scalar kernel's), and
best F1 as the float 2 TP / (P + k) with the first k attaining its maximum; the exact fraction
2 TP / (P + k) is rebuilt from that k at the end (distinct candidate fractions differ by at least
1/(P+k)**2, far more than the float error, and equal fractions give the same final float).
Valid for P + N < 2**31 (the positive test) and denominators P + k below 4e7 (the F1 rebuild).

Code generation
---------------
The fused group of STEPS = 8 steps is written out step by step by :func:`_fused_source` (and the
single step by :func:`_single_source`, from the same load/store text) and compiled at import; numba
has no macros, and an inner loop over steps kept LLVM from vectorising.  The ``mcc`` flag of the
generators adds best MCC's lines (its lane value and one update after each step); the kernel is
compiled with and without them (``simulate_rows(..., with_mcc=)``), so a run that does not ask for
best MCC does not pay for it.  A third variant steps average precision alone (``ap_only``: the draw, TP and
AP's sum with the same operations, 0.53 -> 0.36 ns per element-step at P, N = 3e5, 7e5), for a simulated
verdict on average precision, which reads no other column.

The step functions and the generated ones are plain ``njit`` functions that LLVM inlines (the same
assembly markers, rows bit for bit, the same ns per element-step), not numba's ``inline="always"``,
whose copying and retyping of each step's IR at each of its calls made compiling the two kernel variants
from a cold cache take 1.6x the CPU (10.8 and 12.0 s against 7.4 and 6.6 s, EPYC AVX-512).
"""

import logging

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached, variant_name
from tablegen.compute.kernels.ranking import MCC_COLUMN, TP_COLUMN, mcc_weights
from tablegen.compute.kernels.rng import replicate_state
from tablegen.compute.kernels.rng import xoshiro_next_int64 as _draw

LANES = 128
STEPS = 8  # steps per fused group; even, so a group starts on a fresh 64-bit draw
#: Positions between checkpoints (a multiple of STEPS): a flagged lane is replayed from its last one
CHECKPOINT_STEPS = 256
M32 = 0xFFFFFFFF
# int64 slots of W (each LANES long), then STEPS slots of per-step 2 TP snapshots for tp_at_k
S0, S1, S2, S3, TP2, U2, BEST_D, BEST_G, G, FLAG, STASH, PREM, BEST_K = range(13)
SNAPSHOT = 13
N_INT_SLOTS = SNAPSHOT + STEPS
AP, F1, MCC = 0, 1, 2  # float64 slots of F
N_FLOAT_SLOTS = 3
logger = logging.getLogger(__name__)


@nb.njit
def _step(x32, total, k1, g_pos, g_neg, half_inverse, f1_inverse,
          tp2, u2, best_d, g, best_g, low_min, ap, f1, p_rem, best_k):
    """One position of one lane; k1 = k + 1 is the prefix length after the step."""
    m = x32 * total
    low_min = min(low_min, m & M32)
    positive = m < p_rem  # p_rem is stored shifted left by 32
    tp2 = tp2 + 2 if positive else tp2
    p_rem = p_rem - (1 << 32) if positive else p_rem
    u2 += tp2
    best_d = max(best_d, tp2 - k1)
    g += g_pos if positive else g_neg
    best_g = max(best_g, g)
    tp2_real = float(tp2)
    ap = ap + tp2_real * half_inverse if positive else ap
    ratio = tp2_real * f1_inverse
    best_k = k1 if ratio > f1 else best_k
    f1 = max(f1, ratio)
    return tp2, u2, best_d, g, best_g, low_min, ap, f1, p_rem, best_k


@nb.njit
def _step_ap(x32, total, tp2, low_min, ap, p_rem, half_inverse):
    """:func:`_step` for average precision alone: the draw, TP and AP with the same operations (so the same AP)."""
    m = x32 * total
    low_min = min(low_min, m & M32)
    positive = m < p_rem
    tp2 = tp2 + 2 if positive else tp2
    p_rem = p_rem - (1 << 32) if positive else p_rem
    tp2_real = float(tp2)
    ap = ap + tp2_real * half_inverse if positive else ap
    return tp2, low_min, ap, p_rem


_LOAD = """
        x0 = W[S0 * LANES + l]; x1 = W[S1 * LANES + l]; x2 = W[S2 * LANES + l]; x3 = W[S3 * LANES + l]
        tp2 = W[TP2 * LANES + l]; u2 = W[U2 * LANES + l]; best_d = W[BEST_D * LANES + l]
        g = W[G * LANES + l]; best_g = W[BEST_G * LANES + l]; flag = W[FLAG * LANES + l]
        p_rem = W[PREM * LANES + l]; best_k = W[BEST_K * LANES + l]
        ap = F[AP * LANES + l]; f1 = F[F1 * LANES + l]; low_min = M32"""
_STORE = """
        W[S0 * LANES + l] = x0; W[S1 * LANES + l] = x1; W[S2 * LANES + l] = x2; W[S3 * LANES + l] = x3
        W[TP2 * LANES + l] = tp2; W[U2 * LANES + l] = u2; W[BEST_D * LANES + l] = best_d
        W[G * LANES + l] = g; W[BEST_G * LANES + l] = best_g; W[FLAG * LANES + l] = flag | (low_min - total0)
        W[PREM * LANES + l] = p_rem; W[BEST_K * LANES + l] = best_k
        F[AP * LANES + l] = ap; F[F1 * LANES + l] = f1"""
_STATE = "tp2, u2, best_d, g, best_g, low_min, ap, f1, p_rem, best_k"
#: Average precision alone: the lane state its steps read and write (the other slots keep their seeds)
_LOAD_AP = """
        x0 = W[S0 * LANES + l]; x1 = W[S1 * LANES + l]; x2 = W[S2 * LANES + l]; x3 = W[S3 * LANES + l]
        tp2 = W[TP2 * LANES + l]; flag = W[FLAG * LANES + l]; p_rem = W[PREM * LANES + l]
        ap = F[AP * LANES + l]; low_min = M32"""
_STORE_AP = """
        W[S0 * LANES + l] = x0; W[S1 * LANES + l] = x1; W[S2 * LANES + l] = x2; W[S3 * LANES + l] = x3
        W[TP2 * LANES + l] = tp2; W[FLAG * LANES + l] = flag | (low_min - total0); W[PREM * LANES + l] = p_rem
        F[AP * LANES + l] = ap"""
_STATE_AP = "tp2, low_min, ap, p_rem"
#: Best MCC's lines, added only to the variants that score it: its lane value, and its update after step s
_MCC_LOAD = "\n        mcc = F[MCC * LANES + l]"
_MCC_STORE = "\n        F[MCC * LANES + l] = mcc"
_MCC_STEP = "        mcc = max(mcc, float(g) * mccw{s})"


def _lane_function_source(name, constants, body, mcc, ap_only=False):
    """Source of a function that loads every lane, runs ``body`` on it and stores it back (``ap_only``: only the
    state average precision's steps use)."""
    load, store = (_LOAD_AP, _STORE_AP) if ap_only else (_LOAD, _STORE)
    return (
        f"def {name}(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w):\n"
        "    g_pos = n - n_pos\n    g_neg = -n_pos\n    total0 = (n - k) & M32\n"
        + "\n".join(constants)
        + "\n    for l in range(LANES):" + load + (_MCC_LOAD if mcc else "") + "\n" + "\n".join(body)
        + store + (_MCC_STORE if mcc else "") + "\n"
    )


def _step_line(x32, s, ap_only):
    """The call of one step on lane state (``s``: the step's constants' suffix)."""
    if ap_only:
        return f"        {_STATE_AP} = _step_ap({x32}, total{s}, tp2, low_min, ap, p_rem, half{s})"
    return (f"        {_STATE} = _step({x32}, total{s}, k + {s + 1}, g_pos, g_neg, half{s}, "
            f"f1inv{s}, {_STATE})")


def _fused_source(snapshot, mcc, ap_only=False):
    """Advance every lane by STEPS positions from an even k (one fresh draw per two steps); with
    ``mcc``, best MCC too (its weights ``mcc_w`` are read only then); with ``ap_only``, average precision alone."""
    constants, body = [], []
    for s in range(STEPS):
        constants.append(f"    total{s} = (n - k - {s}) & M32; half{s} = half_inverse[k + {s + 1}]; "
                         f"f1inv{s} = f1_inverse[k + {s + 1}]" + (f"; mccw{s} = mcc_w[k + {s + 1}]" if mcc else ""))
        if s % 2 == 0:
            body.append("        r, x0, x1, x2, x3 = _draw(x0, x1, x2, x3)")
        x32 = "(r >> 32) & M32" if s % 2 == 0 else "r & M32"
        body.append(_step_line(x32, s, ap_only))
        if mcc:
            body.append(_MCC_STEP.format(s=s))
        if snapshot:
            body.append(f"        W[(SNAPSHOT + {s}) * LANES + l] = tp2")
    return _lane_function_source("fused", constants, body, mcc, ap_only)


def _single_source(mcc, ap_only=False):
    """Advance every lane by one position (the steps that do not fill a fused group).

    An even step draws and keeps the output in STASH; the odd step after it uses the low half.
    """
    constants = ["    even = (k & 1) == 0; half0 = half_inverse[k + 1]; f1inv0 = f1_inverse[k + 1]"
                 + ("; mccw0 = mcc_w[k + 1]" if mcc else "")]
    body = [
        "        if even:",
        "            r, x0, x1, x2, x3 = _draw(x0, x1, x2, x3)",
        "            W[STASH * LANES + l] = r",
        "            x32 = (r >> 32) & M32",
        "        else:",
        "            x32 = W[STASH * LANES + l] & M32",
        _step_line("x32", 0, ap_only),
    ]
    if mcc:
        body.append(_MCC_STEP.format(s=0))
    return _lane_function_source("single", constants, body, mcc, ap_only)


def _compile(source, name):
    namespace = {}
    exec(source, globals(), namespace)  # noqa: S102 - fixed text built above, no input
    return nb.njit(nogil=True, error_model="numpy")(namespace[name])


_fused = _compile(_fused_source(snapshot=False, mcc=False), "fused")
_fused_with_snapshots = _compile(_fused_source(snapshot=True, mcc=False), "fused")
_single = _compile(_single_source(mcc=False), "single")
_fused_mcc = _compile(_fused_source(snapshot=False, mcc=True), "fused")
_fused_with_snapshots_mcc = _compile(_fused_source(snapshot=True, mcc=True), "fused")
_single_mcc = _compile(_single_source(mcc=True), "single")
_fused_ap = _compile(_fused_source(snapshot=False, mcc=False, ap_only=True), "fused")
_fused_with_snapshots_ap = _compile(_fused_source(snapshot=True, mcc=False, ap_only=True), "fused")
_single_ap = _compile(_single_source(mcc=False, ap_only=True), "single")


@nb.njit(nogil=True)
def _seed_lanes(W, F, key0, key1, first, used, n_pos):
    for l in range(LANES):
        s0, s1, s2, s3 = replicate_state(key0, key1, first + (l if l < used else 0))
        W[S0 * LANES + l] = np.int64(s0); W[S1 * LANES + l] = np.int64(s1)
        W[S2 * LANES + l] = np.int64(s2); W[S3 * LANES + l] = np.int64(s3)
        for slot in (TP2, U2, BEST_D, BEST_G, G, BEST_K, FLAG):
            W[slot * LANES + l] = 0
        W[PREM * LANES + l] = n_pos << 32
        F[AP * LANES + l] = 0.0
        F[F1 * LANES + l] = 0.0
        F[MCC * LANES + l] = 0.0


#: int64 and float64 slots a checkpoint keeps (the lane state at an even k; FLAG, STASH and the
#: snapshots are not needed there)
_CHECKPOINT_INT = (S0, S1, S2, S3, TP2, U2, BEST_D, BEST_G, G, PREM, BEST_K)
_CHECKPOINT_FLOAT = (AP, F1, MCC)


@nb.njit(nogil=True)
def _save_checkpoint(W, F, C, CF):
    """Copy every lane's state into the checkpoint arrays ``C`` (int64) and ``CF`` (float64)."""
    for i, slot in enumerate(_CHECKPOINT_INT):
        for l in range(LANES):
            C[i * LANES + l] = W[slot * LANES + l]
    for i, slot in enumerate(_CHECKPOINT_FLOAT):
        for l in range(LANES):
            CF[i * LANES + l] = F[slot * LANES + l]


@nb.njit(nogil=True, error_model="numpy")
def _replay_lane(W, F, C, CF, l, k_from, k_to, n, n_pos, key0, key1, replicate, half_inverse, f1_inverse,
                 mcc_w, with_mcc, ks, out, row):
    """Recompute lane ``l`` from position ``k_from`` (its checkpoint; 0: its seed) to ``k_to``, one step at a
    time with Lemire's rejection, as the scalar kernel does; write its state back and its TP at the
    cut-offs in (k_from, k_to] into ``out[row]``.

    The same draws as :func:`tablegen.compute.kernels.ranking.bounded_draw` (a rejected 32-bit draw is
    replaced by the high half of the next output, the pending low half kept) and the same
    :func:`_step` arithmetic as the lanes, so the lane ends exactly where the scalar kernel would.
    """
    if k_from == 0:
        s0, s1, s2, s3 = replicate_state(key0, key1, replicate)
        x0, x1, x2, x3 = np.int64(s0), np.int64(s1), np.int64(s2), np.int64(s3)
        tp2 = u2 = best_d = g = best_g = best_k = 0
        p_rem = n_pos << 32
        ap = f1 = mcc = 0.0
    else:
        x0, x1, x2, x3 = C[0 * LANES + l], C[1 * LANES + l], C[2 * LANES + l], C[3 * LANES + l]
        tp2, u2, best_d = C[4 * LANES + l], C[5 * LANES + l], C[6 * LANES + l]
        best_g, g, p_rem, best_k = C[7 * LANES + l], C[8 * LANES + l], C[9 * LANES + l], C[10 * LANES + l]
        ap, f1, mcc = CF[0 * LANES + l], CF[1 * LANES + l], CF[2 * LANES + l]
    g_pos, g_neg = n - n_pos, -n_pos
    low_min = M32
    segment = 0
    while segment < ks.shape[0] and ks[segment] <= k_from:
        segment += 1
    stash = 0
    for k in range(k_from, k_to):
        if (k & 1) == 0:
            stash, x0, x1, x2, x3 = _draw(x0, x1, x2, x3)
            x32 = (stash >> 32) & M32
        else:
            x32 = stash & M32
        total = n - k
        if ((x32 * total) & M32) < total:
            threshold = ((1 << 32) - total) % total
            while ((x32 * total) & M32) < threshold:
                r, x0, x1, x2, x3 = _draw(x0, x1, x2, x3)
                x32 = (r >> 32) & M32
        tp2, u2, best_d, g, best_g, low_min, ap, f1, p_rem, best_k = _step(
            x32, total, k + 1, g_pos, g_neg, half_inverse[k + 1], f1_inverse[k + 1],
            tp2, u2, best_d, g, best_g, low_min, ap, f1, p_rem, best_k)
        if with_mcc:
            mcc = max(mcc, float(g) * mcc_w[k + 1])
        while segment < ks.shape[0] and ks[segment] == k + 1:
            out[row, TP_COLUMN + segment] = tp2 >> 1
            segment += 1
    W[S0 * LANES + l] = x0; W[S1 * LANES + l] = x1; W[S2 * LANES + l] = x2; W[S3 * LANES + l] = x3
    W[TP2 * LANES + l] = tp2; W[U2 * LANES + l] = u2; W[BEST_D * LANES + l] = best_d
    W[BEST_G * LANES + l] = best_g; W[G * LANES + l] = g; W[PREM * LANES + l] = p_rem
    W[BEST_K * LANES + l] = best_k; W[STASH * LANES + l] = stash
    F[AP * LANES + l] = ap; F[F1 * LANES + l] = f1; F[MCC * LANES + l] = mcc


@nb.njit(nogil=True)
def _settle_and_save(W, F, C, CF, used, k_from, k_to, n, n_pos, key0, key1, first, half_inverse, f1_inverse,
                     mcc_w, with_mcc, ks, out, row0, replayed, n_replayed):
    """Replay (:func:`_replay_lane`) every lane flagged since the checkpoint at ``k_from``, clear the
    flags and, unless ``k_to`` is the end, take the checkpoint at ``k_to``.  Appends the replayed rows
    to ``replayed`` (from ``n_replayed`` on) and returns the new count."""
    for l in range(used):
        if W[FLAG * LANES + l] < 0:
            _replay_lane(W, F, C, CF, l, k_from, k_to, n, n_pos, key0, key1, first + l, half_inverse,
                         f1_inverse, mcc_w, with_mcc, ks, out, row0 + l)
            if n_replayed < replayed.shape[0]:
                replayed[n_replayed] = row0 + l
            n_replayed += 1
    for l in range(LANES):
        W[FLAG * LANES + l] = 0
    if k_to < n:
        _save_checkpoint(W, F, C, CF)
    return n_replayed


@nb.njit(nogil=True, error_model="numpy")
def _finish_lanes(W, F, out, row0, used, n_pos, n_neg, results, with_mcc, ap_only=False):
    """Metric values of the group's lanes into ``out`` rows row0.. (vectorised divisions first;
    best MCC NaN unless ``with_mcc``; every column but average precision's NaN with ``ap_only``)."""
    n = n_pos + n_neg
    triangle = n_pos * (n_pos + 1) // 2
    pairs, total, twice_pairs = np.float64(n_pos * n_neg), np.float64(n), np.float64(2 * n_pos * n_neg)
    for l in range(LANES):
        results[0 * LANES + l] = ((W[U2 * LANES + l] >> 1) - triangle) / pairs
        results[1 * LANES + l] = (W[BEST_D * LANES + l] + n_neg) / total
        denominator = n_pos + W[BEST_K * LANES + l]
        results[2 * LANES + l] = 2 * np.int64(np.round(F[F1 * LANES + l] * denominator * 0.5)) / denominator
        results[3 * LANES + l] = (W[BEST_G * LANES + l] + n_pos * n_neg) / twice_pairs
        results[4 * LANES + l] = F[AP * LANES + l] / n_pos
        results[MCC_COLUMN * LANES + l] = min(F[MCC * LANES + l], 1.0) if with_mcc else np.nan
    for l in range(used):
        for column in range(TP_COLUMN):
            out[row0 + l, column] = results[column * LANES + l] if column == 4 or not ap_only else np.nan


#: The lane kernel's variants: every metric but best MCC, every metric, average precision alone.
LANE_VARIANTS = ("plain", "mcc", "ap")


def _lanes_kernel(variant):
    """The lane kernel of one of :data:`LANE_VARIANTS` (a compile-time constant that picks the generated functions:
    with or without best MCC's work, or average precision's work alone)."""
    with_mcc, ap_only = variant == "mcc", variant == "ap"

    def lanes_block(n_pos, n_neg, key0, key1, first_replicate, ks, out, replayed):
        """Fill ``out`` like ``simulate_block``; return how many lane replays ran (their rows listed in
        ``replayed``, a row once per replay)."""
        n = n_pos + n_neg
        half_inverse = np.zeros(n + STEPS + 1)
        f1_inverse = np.zeros(n + STEPS + 1)
        for i in range(1, n + STEPS + 1):
            half_inverse[i] = (1.0 / i) * 0.5
        for i in range(n + STEPS + 1):
            f1_inverse[i] = 1.0 / (n_pos + i)
        mcc_w = mcc_weights(n_pos, n_neg, n + STEPS + 1 if with_mcc else 0)
        W = np.zeros(N_INT_SLOTS * LANES, dtype=np.int64)
        F = np.zeros(N_FLOAT_SLOTS * LANES)
        C = np.zeros(len(_CHECKPOINT_INT) * LANES, dtype=np.int64)
        CF = np.zeros(len(_CHECKPOINT_FLOAT) * LANES)
        results = np.zeros(TP_COLUMN * LANES)
        n_ks = ks.shape[0]
        n_replayed = np.int64(0)  # not a literal 0: numba would compile each callee once more for it (see below)
        for row0 in range(0, out.shape[0], LANES):
            used = min(LANES, out.shape[0] - row0)
            _seed_lanes(W, F, key0, key1, first_replicate + row0, used, n_pos)
            segment = 0
            next_k = ks[0] if n_ks > 0 else n + 1
            # np.int64, not the literal 0: typing the loop, numba compiles every callee first for the literal
            # (Literal[int](0)), then again for int64 once k is unified; the literal copies were never used
            k = np.int64(0)
            checkpoint = np.int64(0)
            while k < n:
                if k + STEPS <= n and (k & 1) == 0:
                    if next_k > k + STEPS:
                        if with_mcc:
                            _fused_mcc(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                        elif ap_only:
                            _fused_ap(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                        else:
                            _fused(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                    else:
                        if with_mcc:
                            _fused_with_snapshots_mcc(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                        elif ap_only:
                            _fused_with_snapshots_ap(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                        else:
                            _fused_with_snapshots(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                        while next_k <= k + STEPS:
                            for l in range(used):
                                out[row0 + l, TP_COLUMN + segment] = W[(SNAPSHOT + next_k - k - 1) * LANES + l] >> 1
                            segment += 1
                            next_k = ks[segment] if segment < n_ks else n + 1
                    k += STEPS
                    if k - checkpoint >= CHECKPOINT_STEPS and k < n:
                        n_replayed = _settle_and_save(W, F, C, CF, used, checkpoint, k, n, n_pos, key0, key1,
                                                      first_replicate + row0, half_inverse, f1_inverse, mcc_w,
                                                      with_mcc, ks, out, row0, replayed, n_replayed)
                        checkpoint = k
                else:
                    if with_mcc:
                        _single_mcc(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                    elif ap_only:
                        _single_ap(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                    else:
                        _single(W, F, k, n, n_pos, half_inverse, f1_inverse, mcc_w)
                    k += 1
                    if next_k == k:
                        for l in range(used):
                            out[row0 + l, TP_COLUMN + segment] = W[TP2 * LANES + l] >> 1
                        segment += 1
                        next_k = ks[segment] if segment < n_ks else n + 1
            n_replayed = _settle_and_save(W, F, C, CF, used, checkpoint, n, n, n_pos, key0, key1,
                                          first_replicate + row0, half_inverse, f1_inverse, mcc_w, with_mcc,
                                          ks, out, row0, replayed, n_replayed)
            _finish_lanes(W, F, out, row0, used, n_pos, n_neg, results, with_mcc, ap_only)
        return n_replayed

    name = f"_lanes_block_{variant}"
    return jit_cached(nogil=True, error_model="numpy")(variant_name(lanes_block, name))


#: The compiled lane kernel of each variant (numba compiles each on its first call).
_LANES_BLOCK = {variant: _lanes_kernel(variant) for variant in LANE_VARIANTS}


def lane_output(rows: int, columns: int) -> np.ndarray:
    """An uninitialised (rows, columns) block for :func:`simulate_rows`, column-major: each column (one
    metric's values) contiguous, as the tails that read it column by column want
    (:func:`~tablegen.compute.kernels.histogram_tail.count_rows`), and the one layout the lane kernel is
    compiled for in a run (another layout compiles another variant, ~15 s; the values are the same).

    Examples
    --------
    >>> block = lane_output(5, 3)
    >>> block.shape, block.flags.f_contiguous
    ((5, 3), True)
    """
    return np.empty((columns, rows)).T


def simulate_rows(n_pos, n_neg, key0, key1, first_replicate, ks, out, with_mcc=False, ap_only=False):
    """Fill ``out`` exactly as ``simulate_block`` would (same arguments, no labels); return how many lane
    replays ran.

    The lane kernel fills every row; a lane flagged as possibly needing a rejection redraw is replayed
    from its last checkpoint with the scalar kernel's rejection (see the module docstring).  Without
    ``with_mcc`` (the default) the variant generated without best MCC's work runs (its column is NaN,
    every other column the same, bit for bit).  With ``ap_only`` (no cut-offs ``ks``, no best MCC) the variant that
    steps average precision alone runs: its column the same, bit for bit, every other one NaN (a simulated verdict
    on average precision, which needs no other).

    Examples
    --------
    >>> from tablegen.compute.kernels.ranking import TP_COLUMN
    >>> out = lane_output(3, TP_COLUMN + 1)
    >>> simulate_rows(3, 4, np.uint64(1), np.uint64(2), 0, np.array([2]), out)
    0
    >>> bool(np.isnan(out[:, MCC_COLUMN]).all())
    True
    >>> simulate_rows(3, 4, np.uint64(1), np.uint64(2), 0, np.array([2]), out, with_mcc=True)
    0
    >>> bool(((0.0 <= out) & (out <= 2)).all())
    True
    """
    if ap_only and (with_mcc or len(ks)):
        raise ValueError("ap_only scores average precision alone: no best MCC, no cut-offs ks")
    kernel = _LANES_BLOCK["ap" if ap_only else ("mcc" if with_mcc else "plain")]
    if out.shape[0] == 1 and out.flags.f_contiguous:  # numba types a one-row block as C-ordered: a second
        block = lane_output(2, out.shape[1])         # variant to compile; score two rows, keep the first
        replayed = np.empty(2 * ((n_pos + n_neg) // CHECKPOINT_STEPS + 2), dtype=np.int64)  # a row per replay
        count = kernel(n_pos, n_neg, key0, key1, first_replicate, ks, block, replayed)
        out[0] = block[0]
        return int((replayed[:count] == 0).sum())
    no_record = np.empty(0, dtype=np.int64)  # which rows were replayed is not asked here, only how many
    return int(kernel(n_pos, n_neg, key0, key1, first_replicate, ks, out, no_record))
