"""Comparing real classifiers, by question; names resolve on first use, so importing this is cheap.

(From labels and each model's scores to a verdict per metric against random classifiers is a lookup:
:func:`tablegen.significance_test_from_scores`.)

- :func:`across_datasets`: m algorithms on n data sets — Friedman, then every pair by the Wilcoxon
  signed-rank or sign test with Holm/Bonferroni control (Benavoli, Corani & Mangili, JMLR 2016).
- :func:`selection_test`: the best of the models you tried against the label-permutation null of those very
  models (Westfall–Young max-T: their dependence and ties kept), with C - K more random competitors if some
  models tried are not given.
- :func:`paired_test`, :func:`pairwise_tests`: the winner against the runner-up (and the others) on one test
  set — DeLong, exact McNemar, the swap permutation — Holm-adjusted, with the confidence set of the best.
- :func:`evaluate`: every answer from labels and scores in one report (values, the winner against random
  classifiers and against the models given, notes; text, tables, JSON, a picture).
- :func:`f1_posterior`: two classifiers' macro or micro F1 on one test set, Bayesian (Zhang, Wang, Zhao &
  Wang, ICDM 2015), with :func:`f1_score_posterior` for one classifier and :func:`f1_frequentist_tests`.
"""

from __future__ import annotations

from tablegen._lazy import attach
from tablegen.compare.datasets import PUBLIC as _DATASETS  # the maps only: nothing is loaded
from tablegen.compare.f1 import PUBLIC as _F1
from tablegen.compare.pairwise import PUBLIC as _PAIRWISE
from tablegen.compare.report import PUBLIC as _REPORT
from tablegen.compare.selection import PUBLIC as _SELECTION

_LAZY = {**_DATASETS, **_F1, **_SELECTION, **_REPORT, **_PAIRWISE}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
