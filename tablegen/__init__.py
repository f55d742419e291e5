"""tablegen: critical-value tables for classifier metrics under a random-ranking null (Forman & Cohen 2005).

Public API: :func:`simulate_cell`, :func:`critical_value`, :func:`p_value`.
"""

__version__ = "0.1.0"

from tablegen.api import Answer, critical_value, p_value  # noqa: E402
from tablegen.cell import simulate_cell  # noqa: E402
from tablegen.validation import TablegenInputError  # noqa: E402

__all__ = ["Answer", "critical_value", "p_value", "simulate_cell", "TablegenInputError", "__version__"]
