"""Two classifiers' F1 on one test set (Zhang, Wang, Zhao & Wang, ICDM 2015): Bayesian and frequentist.

The posterior of macro or micro F1 and of their difference (:mod:`.posterior`, with the η posterior of
:mod:`.eta`, the samplers of :mod:`.sampler` over the numba kernels of
:mod:`tablegen.compute.kernels.f1`), its summaries and decision (:mod:`.summary`), the ROPE Bayes factor
(:mod:`.bayes_factor`), the results (:mod:`.results`) and their picture (:mod:`.plot`), the frequentist
tests (:mod:`.frequentist`) and the checked inputs (:mod:`.validation`).  Names resolve on first use.
"""

from __future__ import annotations

from tablegen._lazy import attach

#: Public name -> defining module (also what :mod:`tablegen.compare` resolves for this question).
PUBLIC = {
    "f1_posterior": "tablegen.compare.f1.posterior",
    "f1_score_posterior": "tablegen.compare.f1.posterior",
    "F1Prior": "tablegen.compare.f1.validation",
    "F1Comparison": "tablegen.compare.f1.results",
    "F1Posterior": "tablegen.compare.f1.results",
    "f1_frequentist_tests": "tablegen.compare.f1.frequentist",
    "FrequentistTests": "tablegen.compare.f1.frequentist",
    "plot_f1_comparison": "tablegen.compare.f1.plot",
    "IntervalBayesFactor": "tablegen.compare.f1.bayes_factor",
}

__getattr__, __dir__, __all__ = attach(__name__, PUBLIC)
