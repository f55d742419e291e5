"""Comparing real classifiers; names resolve on first use, so importing this is cheap.

- :func:`across_datasets`: m algorithms on n data sets — Friedman, then every pair by the Wilcoxon
  signed-rank or sign test with Holm/Bonferroni control (Benavoli, Corani & Mangili, JMLR 2016).
- :func:`significance_test_from_scores`: from labels and each model's scores to a verdict per metric.
- :func:`f1_posterior`: two classifiers' macro or micro F1 on one test set, Bayesian (Zhang, Wang, Zhao &
  Wang, ICDM 2015), with :func:`f1_score_posterior` for one classifier and :func:`f1_frequentist_tests`.
"""

from __future__ import annotations

from tablegen._lazy import attach

_LAZY = {
    "across_datasets": "tablegen.compare.datasets",
    "AcrossDatasetsResult": "tablegen.compare.datasets",
    "adjust_p_values": "tablegen.compare.datasets",
    "significance_test_from_scores": "tablegen.compare.from_scores",
    "FromScoresResult": "tablegen.compare.from_scores",
    "f1_posterior": "tablegen.compare.f1",
    "f1_score_posterior": "tablegen.compare.f1",
    "F1Prior": "tablegen.compare.f1_validation",
    "F1Comparison": "tablegen.compare.f1_results",
    "F1Posterior": "tablegen.compare.f1_results",
    "f1_frequentist_tests": "tablegen.compare.f1_frequentist",
    "FrequentistTests": "tablegen.compare.f1_frequentist",
    "plot_f1_comparison": "tablegen.compare.f1_plot",
    "IntervalBayesFactor": "tablegen.compare.f1_bayes_factor",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
