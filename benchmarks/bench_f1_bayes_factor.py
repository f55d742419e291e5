"""Why the F1 comparison has no point-null Bayes factor: δ's prior density at 0, window by window.

Draws ``--draws`` exact, independent prior draws of δ = ψ_A − ψ_B (the model of
:func:`tablegen.compare.f1_posterior` with zero counts: η ~ Beta(1, 1), μ ~ Dir(1), θ_j ~ Dir(ω_j(η)); the
library's own prior sampler, :func:`tablegen.compare.f1.prior_delta_draws`, uncached) for M = ``--classes``
classes, macro and micro F1, μ independent (the paper's model) and joint, and prints for each

- the window estimate k / (S · 2h) of δ's prior density at 0 for h = 0.05, 0.01, 0.002, 5e-4, 1e-4
  (with the count k: its relative sampling error is about 1/√k), and the rigorous lower bound
  [(2/π)^M (1 − h^(M/2)) / (M ln(1/h))]² / 2h of the density's window average (micro F1; see
  docs/explanation/bayes-factors.md), which grows without limit as h → 0;
- where the draws near δ = 0 come from (micro F1, μ independent, plain numpy draws of the model): the
  share of those with |δ| ≤ h whose ψ_A and ψ_B both lie within 0.01 of 1 or both within 0.01 of 0;
- the prior mass of the ROPE ±0.005 and ±0.01 with its Monte Carlo error, which is what the ROPE Bayes
  factor needs, and the seconds the library's default 200,000 prior draws take.

    .venv/bin/python benchmarks/bench_f1_bayes_factor.py
    .venv/bin/python benchmarks/bench_f1_bayes_factor.py --draws 4000000 --classes 3
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import time

from machine import cpu_model, recording, vector_width

WINDOWS = (0.05, 0.01, 0.002, 5e-4, 1e-4)


def micro_lower_bound(h: float, m: int) -> float:
    """A lower bound on Pr(|δ| ≤ h) / 2h for micro F1 with M classes (both classifiers' θ_jj all within h of 1)."""
    one = (2 / math.pi) ** m * (1 - h ** (m / 2)) / (m * math.log(1 / h))
    return one * one / (2 * h)


def corner_shares(draws: int, m: int, seed: int = 1) -> list[tuple[float, int, float]]:
    """Micro F1, μ independent, from numpy: (h, draws with |δ| ≤ h, share of them with both ψ in a corner)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    psi = []
    for _ in range(2):
        eta, mu = rng.uniform(size=draws), rng.dirichlet(np.ones(m), draws)
        psi.append((mu * rng.beta(eta[:, None], 1 - eta[:, None], (draws, m))).sum(axis=1))
    a, b = psi
    corner = ((a > 0.99) & (b > 0.99)) | ((a < 0.01) & (b < 0.01))
    near = [np.abs(a - b) <= h for h in WINDOWS]
    return [(h, int(k.sum()), float(corner[k].mean())) for h, k in zip(WINDOWS, near)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4_000_000)
    parser.add_argument("--classes", type=int, default=3)
    args = parser.parse_args()

    import numpy as np

    from tablegen.compare.f1.posterior import DEFAULT_PRIOR_SAMPLES, PRIOR_SEED, prior_delta_draws

    print(f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {cpu_model()} ({vector_width()}); "
          f"Python {platform.python_version()}")
    print(f"# {args.draws:,} exact prior draws of delta per setting, M = {args.classes}, prior seed {PRIOR_SEED}")
    header = "".join(f"{f'+-{h:g}':>17}" for h in WINDOWS)
    print(f"{'setting':<20}{header}   ROPE +-0.005 mass      ROPE +-0.01 mass")
    for average in ("macro", "micro"):
        for mu in ("independent", "joint"):
            delta = prior_delta_draws.__wrapped__(args.classes, average, 1.0, (1.0, 1.0), mu, args.draws)
            cells = []
            for h in WINDOWS:
                k = int(np.count_nonzero(np.abs(delta) <= h))
                cells.append(f"{k / (delta.size * 2 * h):7.3g} ({k:>5})")
            masses = []
            for r in (0.005, 0.01):
                p = float(np.mean(np.abs(delta) <= r))
                masses.append(f"{p:.5f} +- {math.sqrt(p * (1 - p) / delta.size):.1e}")
            print(f"{f'{average}, mu {mu}':<20}{''.join(f'{c:>17}' for c in cells)}   {masses[0]}   {masses[1]}")
    bound = "".join(f"{micro_lower_bound(h, args.classes):>17.3g}" for h in WINDOWS)
    print(f"{'micro lower bound':<20}{bound}")
    shares = "".join(f"{f'{share:.3f} ({k})':>17}" for _, k, share in corner_shares(args.draws, args.classes))
    print(f"{'both psi in corner':<20}{shares}")
    start = time.perf_counter()
    prior_delta_draws.__wrapped__(args.classes, "macro", 1.0, (1.0, 1.0), "joint", DEFAULT_PRIOR_SAMPLES)
    print(f"# the library's {DEFAULT_PRIOR_SAMPLES:,} prior draws (macro, mu joint, M = {args.classes}): "
          f"{time.perf_counter() - start:.2f} s wall (numba kernels compiled)")


if __name__ == "__main__":
    with recording("f1_bayes_factor"):
        main()
