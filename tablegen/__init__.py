"""tablegen: critical-value tables for classifier metrics under a random-ranking null (Forman & Cohen 2005).

Public API: lookups :func:`critical_value`, :func:`p_value`, :func:`significance_test` (exact, the
bundled table or Monte Carlo) and :func:`open_table` for any store; :func:`simulate_cell` for one
cell; the batch job :func:`run` (config from :func:`load_config`) and :func:`open_store`; top-k
significance :func:`topk_bounds` and :func:`topk_test`; from labels and scores
:func:`significance_test_from_scores`, and every answer in one report :func:`evaluate`; comparisons
of real classifiers in :mod:`tablegen.compare`.

Names resolve on first use (SPEC 1 lazy loading): ``import tablegen`` is cheap, and a lookup imports
numpy, scipy and numba but never dask, distributed, zarr or xarray unless it reads a table.
"""

from tablegen._lazy import attach
from tablegen._version import __version__ as __version__

#: Public name -> the module that defines it.
_PUBLIC = {
    "critical_value": "tablegen.lookup.api",
    "p_value": "tablegen.lookup.api",
    "significance_test": "tablegen.lookup.api",
    "simulate_cell": "tablegen.lookup.simulate",
    "significance_test_from_scores": "tablegen.lookup.from_scores",
    "evaluate": "tablegen.compare.report.evaluate",
    "JobConfig": "tablegen.batch.config",
    "load_config": "tablegen.batch.config",
    "run": "tablegen.batch.job",
    "open_store": "tablegen.store.zarr_store",
    "Answer": "tablegen.lookup.answers",
    "SignificanceResult": "tablegen.lookup.answers",
    "Table": "tablegen.lookup.table",
    "open_table": "tablegen.lookup.table",
    "MulticlassTable": "tablegen.lookup.multiclass_table",
    "TopKBounds": "tablegen.lookup.topk",
    "TopKTest": "tablegen.lookup.topk",
    "topk_bounds": "tablegen.lookup.topk",
    "topk_test": "tablegen.lookup.topk",
    "multiclass_test": "tablegen.lookup.multiclass",
    "MulticlassTest": "tablegen.lookup.multiclass_results",
    "multiclass_scores_test": "tablegen.lookup.multiclass_scores",
    "MulticlassScoresTest": "tablegen.lookup.multiclass_scores",
    "TablegenInputError": "tablegen.errors",
    "power": "tablegen.lookup.power",
    "sample_size": "tablegen.lookup.planning",
    "minimum_detectable": "tablegen.lookup.planning",
    "max_models": "tablegen.lookup.planning",
    "PowerResult": "tablegen.lookup.power_results",
    "SampleSizeResult": "tablegen.lookup.power_results",
    "DetectableResult": "tablegen.lookup.power_results",
    "MaxModelsResult": "tablegen.lookup.power_results",
    "plot_power_curve": "tablegen.lookup.power_plot",
}

__getattr__, __dir__, __all__ = attach(__name__, _PUBLIC, extra=("__version__",))
