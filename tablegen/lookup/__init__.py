"""Lookups: the :class:`~tablegen.lookup.table.Table` over a store, the answer policy
(:mod:`~tablegen.lookup.api`: exact, table or simulation), top-k significance, export and plots.

The public names are re-exported by :mod:`tablegen` itself (``tablegen.critical_value`` etc.).
"""
