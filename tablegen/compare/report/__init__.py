"""From labels and every model's scores to one report (:func:`evaluate`): each model's values, the winner
against the best of C random classifiers and against the models given (max-T), notes; as text, a table
(pandas, Markdown, LaTeX), JSON and a picture (:mod:`.plot`).  Names resolve on first use.
"""

from __future__ import annotations

from tablegen._lazy import attach

#: Public name -> defining module (also what :mod:`tablegen.compare` resolves for this question).
PUBLIC = {
    "evaluate": "tablegen.compare.report.evaluate",
    "Evaluation": "tablegen.compare.report.evaluate",
    "MetricReport": "tablegen.compare.report.evaluate",
    "evaluate_multiclass": "tablegen.compare.report.multiclass",
    "MulticlassEvaluation": "tablegen.compare.report.multiclass",
}

__getattr__, __dir__, __all__ = attach(__name__, PUBLIC)
