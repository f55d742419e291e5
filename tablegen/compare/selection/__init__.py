"""Is the best of the models you tried better than chance, given how alike they are? (selection-aware)

:func:`selection_test`: the Westfall–Young max-T test on the label-permutation null, every model scored on
the same arrangement; :func:`selection_tests`: several metrics from one set of arrangements (:mod:`.maxt`; the
arrangements run through :mod:`.engine` and the kernels of :mod:`tablegen.compute.kernels.permutation`; the checked
question is :mod:`.validation`).  Names resolve on
first use.
"""

from __future__ import annotations

from tablegen._lazy import attach

#: Public name -> defining module (also what :mod:`tablegen.compare` resolves for this question).
PUBLIC = {
    "selection_test": "tablegen.compare.selection.maxt",
    "selection_tests": "tablegen.compare.selection.maxt",
    "SelectionResult": "tablegen.compare.selection.maxt",
}

__getattr__, __dir__, __all__ = attach(__name__, PUBLIC)
