"""Comparing m classifiers across n data sets (Benavoli, Corani & Mangili, JMLR 2016; Benavoli, Corani,
Demšar & Zaffalon, JMLR 2017).

:func:`across_datasets` (Friedman, then every pair by the Wilcoxon signed-rank or sign test with Holm,
Bonferroni, Hommel, Benjamini–Hochberg or Benjamini–Yekutieli adjustment; :mod:`.analysis`,
:mod:`.corrections`), the mean-ranks post-hoc test and its pool-size analysis (:mod:`.mean_ranks`), the
Bayesian sign and signed-rank tests (:func:`bayesian_pair`, :func:`bayesian_pairs`; :mod:`.bayesian`,
:mod:`.dirichlet`), the critical-difference diagram (:mod:`.cd_diagram`), the tables (:mod:`.report`),
two algorithms from cross-validation folds on one data set (:func:`cross_validated`, or each test by its
name: :func:`correlated_bayesian_ttest`, :func:`corrected_resampled_ttest`), the results-table
reader (:mod:`.results_table`) and the pictures (:mod:`.plot`, :mod:`.bayes_plot`).
Names resolve on first use.
"""

from __future__ import annotations

from tablegen._lazy import attach

#: Public name -> defining module (also what :mod:`tablegen.compare` resolves for this question).
PUBLIC = {
    "across_datasets": "tablegen.compare.datasets.analysis",
    "AcrossDatasetsResult": "tablegen.compare.datasets.analysis",
    "adjust_p_values": "tablegen.compare.datasets.analysis",
    "bayesian_pair": "tablegen.compare.datasets.bayesian",
    "bayesian_pairs": "tablegen.compare.datasets.bayesian",
    "BayesianPair": "tablegen.compare.datasets.bayesian",
    "BayesianPairs": "tablegen.compare.datasets.bayesian",
    "cross_validated": "tablegen.compare.datasets.cross_validation",
    "CrossValidationComparison": "tablegen.compare.datasets.cross_validation",
    "correlated_bayesian_ttest": "tablegen.compare.datasets.cross_validation",
    "CorrelatedBayesianTTest": "tablegen.compare.datasets.cross_validation",
    "corrected_resampled_ttest": "tablegen.compare.datasets.cross_validation",
    "CorrectedResampledTTest": "tablegen.compare.datasets.cross_validation",
    "comparison_table": "tablegen.compare.datasets.report",
    "plot_cd": "tablegen.compare.datasets.diagram",
}

__getattr__, __dir__, __all__ = attach(__name__, PUBLIC)
