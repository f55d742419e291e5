"""Comparing real classifiers, by question; names resolve on first use, so importing this is cheap.

(From labels and each model's scores to a verdict per metric against random classifiers is a lookup:
:func:`tablegen.significance_test_from_scores`.)

- :func:`across_datasets`: m algorithms on n data sets — Friedman, then every pair by the Wilcoxon
  signed-rank or sign test with Holm/Bonferroni control (Benavoli, Corani & Mangili, JMLR 2016).
- :func:`f1_posterior`: two classifiers' macro or micro F1 on one test set, Bayesian (Zhang, Wang, Zhao &
  Wang, ICDM 2015), with :func:`f1_score_posterior` for one classifier and :func:`f1_frequentist_tests`.
"""

from __future__ import annotations

from tablegen._lazy import attach

_LAZY = {
    "across_datasets": "tablegen.compare.datasets.analysis",
    "AcrossDatasetsResult": "tablegen.compare.datasets.analysis",
    "adjust_p_values": "tablegen.compare.datasets.analysis",
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

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
