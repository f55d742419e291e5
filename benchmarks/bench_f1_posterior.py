"""Speed of the Bayesian F1 comparison: 50,000 exact independent draws for M = 20 classes, on one core.

Two M = 20 confusion matrices shaped like the paper's 20 Newsgroups runs (7,532 test items, accuracy
about 0.82 and 0.80, each class confused with five others) are compared by
:func:`tablegen.compare.f1_posterior` (macro and micro F1).  Reported: CPU seconds (``time.process_time``,
best of ``--repeats``; the machine may be shared, so wall time can be longer) of a whole call with
δ's prior draws cached (they depend on M, the average and the priors only, and are computed once per
process), and of the prior draws themselves (the first call's extra cost).

With ``--pymc-python PY`` (an interpreter with PyMC installed, e.g. a throwaway venv) the same model,
both classifiers with one μ, is sampled as the paper did — one Metropolis–Hastings chain in PyMC — for
``--pymc-draws`` draws, and its time and effective sample sizes (ArviZ) are printed beside ours.  That
part runs in a subprocess of this file (``--pymc-worker``), which imports only numpy, PyMC and ArviZ.

    .venv/bin/python benchmarks/bench_f1_posterior.py
    .venv/bin/python benchmarks/bench_f1_posterior.py --pymc-python /tmp/pymcvenv/bin/python --pymc-draws 5000
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time

from machine import cpu_model, recording, vector_width


def matrices(m: int = 20, items: int = 7532, accuracies=(0.82, 0.80), confusers: int = 5, seed: int = 20):
    """Two confusion matrices on one test set (same row sums), each class confused with ``confusers`` others."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = rng.multinomial(items, np.full(m, 1 / m))
    out = []
    for accuracy in accuracies:
        c = np.zeros((m, m), dtype=int)
        for j in range(m):
            p = np.zeros(m)
            p[rng.choice([k for k in range(m) if k != j], confusers, replace=False)] = rng.dirichlet(np.ones(confusers))
            p = (1 - accuracy) * p
            p[j] = accuracy
            c[j] = rng.multinomial(n[j], p)
        out.append(c)
    return out


def cpu() -> str:
    """The CPU model and its vector width, for the header."""
    return f"{cpu_model()}, {vector_width()}"


def best_cpu_seconds(function, repeats: int) -> tuple[float, float]:
    """(best CPU seconds, wall seconds of that run) over ``repeats`` calls."""
    best = (float("inf"), 0.0)
    for _ in range(repeats):
        wall, cpu0 = time.perf_counter(), time.process_time()
        function()
        best = min(best, (time.process_time() - cpu0, time.perf_counter() - wall))
    return best


def ours(a, b, samples: int, repeats: int) -> list[str]:
    from tablegen.compare.f1.posterior import DEFAULT_PRIOR_SAMPLES, f1_posterior, prior_delta_draws

    rows = []
    f1_posterior(a, b, samples=200, seed=0)  # load the compiled kernels from numba's cache
    for average in ("macro", "micro"):
        prior_delta_draws.cache_clear()
        prior, _ = best_cpu_seconds(lambda: prior_delta_draws(a.shape[0], average, 1.0, (1.0, 1.0), "joint",
                                                              DEFAULT_PRIOR_SAMPLES), 1)
        seconds, wall = best_cpu_seconds(lambda: f1_posterior(a, b, average=average, samples=samples, seed=1), repeats)
        result = f1_posterior(a, b, average=average, samples=samples, seed=1)
        rows.append(f"| tablegen, {average} | {samples:,} independent | {seconds:.3f} s ({wall:.3f} s wall) | "
                    f"{prior:.3f} s for {DEFAULT_PRIOR_SAMPLES:,} | {result.a.summary.mean:.4f} | "
                    f"{result.b.summary.mean:.4f} | {result.summary.mean:+.4f} ± {result.summary.sd:.4f} | "
                    f"{samples:,} (independent) | {result.decision} |")
    return rows


def pymc_worker() -> None:
    """Read {"a", "b", "draws"} from stdin, sample the model in PyMC with Metropolis, print JSON."""
    import arviz as az
    import numpy as np
    import pymc as pm
    import pytensor.tensor as pt

    job = json.load(sys.stdin)
    a, b = np.array(job["a"]), np.array(job["b"])
    m, n = a.shape[0], a.sum(axis=1)
    eye = np.eye(m)

    def classifier(name, counts, mu):
        eta = pm.Beta(f"eta_{name}", 1.0, 1.0)
        omega = eta * eye + (1 - eta) / (m - 1) * (1 - eye)
        theta = pm.Dirichlet(f"theta_{name}", a=omega, shape=(m, m))
        pm.Multinomial(f"c_{name}", n=n, p=theta, observed=counts)
        diag = pt.diagonal(theta)
        precision = mu * diag / pt.dot(mu, theta)
        return pm.Deterministic(f"macro_{name}", pt.mean(2 * precision * diag / (precision + diag)))

    with pm.Model():
        mu = pm.Dirichlet("mu", a=np.ones(m))
        pm.Multinomial("n", n=n.sum(), p=mu, observed=n)
        pm.Deterministic("delta", classifier("a", a, mu) - classifier("b", b, mu))
        start, cpu0 = time.perf_counter(), time.process_time()
        trace = pm.sample(draws=job["draws"], tune=job["draws"] // 5, chains=1, cores=1, step=pm.Metropolis(),
                          progressbar=False, compute_convergence_checks=False, random_seed=1)
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu0
    post = trace.posterior
    out = {"seconds": seconds, "cpu_seconds": cpu_seconds, "draws": job["draws"], "pymc": pm.__version__}
    for name in ("macro_a", "macro_b", "delta"):
        values = post[name].values.ravel()
        ess = float(np.asarray(az.ess(values.reshape(1, -1))))
        out[name] = {"mean": float(values.mean()), "sd": float(values.std()), "ess": ess}
    print(json.dumps(out))


def pymc_row(python: str, a, b, draws: int, timeout: float) -> str:
    job = json.dumps({"a": a.tolist(), "b": b.tolist(), "draws": draws})
    try:
        done = subprocess.run([python, __file__, "--pymc-worker"], input=job, capture_output=True, text=True,
                              timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return f"| PyMC Metropolis, macro | {draws:,} | did not finish in {timeout:.0f} s | | | | | | |"
    except (subprocess.CalledProcessError, OSError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        return f"| PyMC Metropolis, macro | {draws:,} | failed: {detail.strip().splitlines()[-1][:80]} | | | | | | |"
    r = json.loads(done.stdout.strip().splitlines()[-1])
    return (f"| PyMC {r['pymc']} Metropolis (1 chain, {draws // 5:,} tuning), macro | {draws:,} (one chain) | "
            f"{r['cpu_seconds']:.1f} s CPU, {r['seconds']:.1f} s wall (compiling and sampling) | | "
            f"{r['macro_a']['mean']:.4f} | {r['macro_b']['mean']:.4f} | "
            f"{r['delta']['mean']:+.4f} ± {r['delta']['sd']:.4f} | {r['delta']['ess']:.0f} (ESS of δ) | |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pymc-python", default=None, help="interpreter with PyMC installed")
    parser.add_argument("--pymc-draws", type=int, default=50_000)
    parser.add_argument("--pymc-timeout", type=float, default=1800.0)
    parser.add_argument("--pymc-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pymc_worker:
        pymc_worker()
        return
    import numba
    import numpy as np

    a, b = matrices()
    print(f"# Bayesian F1 comparison, M = {a.shape[0]}, {a.sum():,} test items\n")
    print(f"CPU: {cpu()}; one core (the sampler is single-threaded); numpy {np.__version__}, numba "
          f"{numba.__version__}, Python {platform.python_version()}")
    print(f"command: {' '.join([sys.executable.split('/')[-1], *sys.argv])}")
    print(f"nonzero cells: A {int(np.count_nonzero(a))}, B {int(np.count_nonzero(b))} of {a.size}\n")
    print("| sampler | draws | time (CPU, best of repeats) | prior draws (first call) | ψA mean | ψB mean | "
          "δ mean ± sd | effective draws | decision |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in ours(a, b, args.samples, args.repeats):
        print(row)
    if args.pymc_python:
        print(pymc_row(args.pymc_python, a, b, args.pymc_draws, args.pymc_timeout))


if __name__ == "__main__":
    if "--pymc-worker" in sys.argv:
        main()
    else:
        with recording("f1_posterior"):
            main()
