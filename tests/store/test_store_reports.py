"""`info` and `verify` read the store in their own thread, whatever dask's default scheduler is."""

from __future__ import annotations

import dask
import pytest

from tablegen.lookup.table import open_table
from tablegen.store.report import store_report, verify_report


def _a_scheduler_that_never_answers(*args, **kwargs):
    raise AssertionError("the report computed on the process's default dask scheduler")


@pytest.mark.parametrize("report", [store_report, verify_report])
def test_reports_do_not_wait_on_the_default_scheduler(report):
    # a distributed client left as the default by a closed cluster waits for ever; this one fails at once
    table = open_table()
    with dask.config.set(scheduler=_a_scheduler_that_never_answers):
        with pytest.raises(AssertionError, match="default dask scheduler"):  # the stand-in does reach dask
            table.ds.done.values.sum()
        answer = report(table.ds)
    assert answer["cells_done" if report is store_report else "checked"] > 0
