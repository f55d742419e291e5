"""Is the winner better than the runner-up on this test set? Paired tests of two models, and of many.

:func:`paired_test` (DeLong for AUC, exact McNemar for accuracy at a threshold, the exact or Monte Carlo swap
permutation for any metric; :mod:`.paired`, :mod:`.delong`, :mod:`.tests`) and :func:`pairwise_tests` (the
winner against the rest or every pair, Holm-adjusted, with the confidence set of the best); planning them:
:func:`mcnemar_power`, :func:`mcnemar_sample_size` (exact) and :func:`paired_auc_power`,
:func:`paired_auc_sample_size` (DeLong, normal approximation).  Names resolve on first use.
"""

from __future__ import annotations

from tablegen._lazy import attach

#: Public name -> defining module (also what :mod:`tablegen.compare` resolves for this question).
PUBLIC = {
    "paired_test": "tablegen.compare.pairwise.paired",
    "PairedTestResult": "tablegen.compare.pairwise.results",
    "pairwise_tests": "tablegen.compare.pairwise.paired",
    "PairwiseResult": "tablegen.compare.pairwise.results",
    "bootstrap_interval": "tablegen.compare.pairwise.bootstrap",
    "mcnemar_power": "tablegen.compare.pairwise.power",
    "mcnemar_sample_size": "tablegen.compare.pairwise.power",
    "PairedSampleSize": "tablegen.compare.pairwise.power",
    "paired_auc_power": "tablegen.compare.pairwise.auc_power",
    "paired_auc_sample_size": "tablegen.compare.pairwise.auc_power",
    "paired_auc_power_from_scores": "tablegen.compare.pairwise.auc_power",
    "PairedAucPower": "tablegen.compare.pairwise.auc_power",
}

__getattr__, __dir__, __all__ = attach(__name__, PUBLIC)
