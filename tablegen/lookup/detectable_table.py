"""The minimum detectable AUC read from a table (``tablegen.minimum_detectable(..., table=...)``).

A store written by a job with a ``power:`` section (schema version 5, or one brought there by
:func:`tablegen.store.add_minimum_detectable`) holds, for every cell, metric, C and alpha, the smallest AUC of a
Lehmann alternative whose exact power reaches each of its power levels: the upper end of a bracket of width
``tolerance`` (its attribute), found by :mod:`tablegen.compute.exact.detectable`'s search, which brackets the same
root as :func:`~tablegen.lookup.planning.minimum_detectable`'s bisection.  Reading it costs one exact power (the
power at the stored AUC, which the answer reports) instead of a search.  :func:`stored_detectable` reads it;
``minimum_detectable`` builds its answer from it.
"""

from __future__ import annotations

import math
import os

from tablegen.errors import Argument, StoreError, TablegenInputError


def _table_of(table):
    """The Table ``table`` names: True for the bundled table, a path, or a Table; refused naming ``table``."""
    from tablegen.lookup.table import Table, open_table

    if isinstance(table, Table):
        return table
    if table is True:
        return open_table()
    if isinstance(table, (str, os.PathLike)):
        try:
            return open_table(table)
        except (TablegenInputError, StoreError) as error:
            raise type(error).naming(Argument("table", os.fspath(table)), ": ", str(error)) from None
    raise TablegenInputError.naming(Argument("table", table), " must be True (the bundled table), a store path or a "
                                    "Table")


def stored_detectable(metric: str, P: int, N: int, C: int, alpha: float, target: float, winners: int,
                      table) -> tuple[float, float]:
    """(AUC, the end below it of its bracket) of :func:`~tablegen.lookup.planning.minimum_detectable` read from
    ``table`` (arguments checked by the caller); refused, naming ``table``, where the table holds no minimum
    detectable AUC, not the metric, cell, C, alpha or power level asked, or no value there (NaN: no exact Lehmann
    power at the cell); a test that detects nothing with that power is refused naming ``power``, as the search
    refuses it.

    Examples
    --------
    >>> auc, below = stored_detectable("best_f1", 100, 100, 100, 0.05, 0.8, 1, True)
    >>> round(auc, 4), 0 < auc - below <= 1e-7
    (0.6695, True)
    """
    from tablegen.compute.exact.detectable import UNDETECTABLE

    source = _table_of(table)
    if winners != 1:
        raise TablegenInputError.naming(Argument("table"), f": a table holds the minimum detectable AUC of one "
                                        f"informative model (winners = 1), not winners = {winners}; leave table out")
    try:
        auc = float(source.minimum_detectable_auc(metric, P, N, C=C, alpha=alpha, power=target))
    except StoreError:  # damage: named as every lookup names it
        raise
    except TablegenInputError as error:
        raise TablegenInputError.naming(Argument("table", source.source), f": {error}") from None
    if math.isnan(auc):
        raise TablegenInputError.naming(Argument("table", source.source), f": it holds no minimum detectable AUC of "
                                        f"{metric} at P = {P:,}, N = {N:,} (no exact Lehmann power there, or over its "
                                        "job's power.max_seconds); leave table out to compute it")
    if auc >= UNDETECTABLE:
        raise TablegenInputError.naming(f"no model of AUC below 1 reaches power {target:g} with {metric} at "
                                        f"P = {P:,}, N = {N:,}, C = {C:,} ({source.source}); lower ",
                                        Argument("power", target), " or C")
    tolerance = float(source.variable_attributes("minimum_detectable_auc").get("tolerance", 0.0))
    return auc, auc if auc <= 0.5 else max(0.5, auc - tolerance)
