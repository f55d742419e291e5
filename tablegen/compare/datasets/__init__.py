"""Comparing m classifiers across n data sets (Benavoli, Corani & Mangili, JMLR 2016).

:func:`across_datasets` (Friedman, then every pair by the Wilcoxon signed-rank or sign test with Holm or
Bonferroni control; :mod:`.analysis`), the mean-ranks post-hoc test and its pool-size analysis
(:mod:`.mean_ranks`), the results-table reader (:mod:`.results_table`) and the picture (:mod:`.plot`).
Names resolve on first use.
"""

from __future__ import annotations

from tablegen._lazy import attach

#: Public name -> defining module (also what :mod:`tablegen.compare` resolves for this question).
PUBLIC = {
    "across_datasets": "tablegen.compare.datasets.analysis",
    "AcrossDatasetsResult": "tablegen.compare.datasets.analysis",
    "adjust_p_values": "tablegen.compare.datasets.analysis",
}

__getattr__, __dir__, __all__ = attach(__name__, PUBLIC)
