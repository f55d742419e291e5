"""tablegen: critical-value tables for classifier metrics under a random-ranking null (Forman & Cohen 2005).

Public API: :func:`simulate_cell`, :func:`critical_value`, :func:`p_value`; the batch job
:func:`run` (config from :func:`load_config`) and :func:`open_store` for its Zarr store.
"""

__version__ = "0.1.0"

from tablegen.api import Answer, critical_value, p_value  # noqa: E402
from tablegen.cell import simulate_cell  # noqa: E402
from tablegen.config import JobConfig, load_config  # noqa: E402
from tablegen.job import run  # noqa: E402
from tablegen.store import open_store  # noqa: E402
from tablegen.validation import TablegenInputError  # noqa: E402

__all__ = ["Answer", "JobConfig", "critical_value", "load_config", "open_store", "p_value", "run", "simulate_cell",
           "TablegenInputError", "__version__"]
