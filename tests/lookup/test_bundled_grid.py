"""The bundled table's grid as the lookups know it without opening the table (``tablegen.lookup.api.BUNDLED_GRID``):
equal to the bundled store's coordinates, and a question off it answered without importing zarr."""

import subprocess
import sys

import numpy as np

from tablegen.lookup.api import BUNDLED_GRID


def test_the_known_grid_is_the_bundled_stores():
    from tablegen.lookup.table import open_table

    table = open_table()
    assert set(np.asarray(table.coordinate("P")).tolist()) == set(BUNDLED_GRID)
    assert set(np.asarray(table.coordinate("N")).tolist()) == set(BUNDLED_GRID)


def test_a_question_off_the_grid_does_not_open_the_table():
    code = ("import sys, tablegen\n"
            "result = tablegen.significance_test('average_precision', 3000, 7000, C=10, score=0.5)\n"
            "print(result.method, 'zarr' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["simulate", "False"]


def test_a_question_on_the_grid_is_still_answered_from_the_table():
    import tablegen

    answer = tablegen.critical_value("average_precision", 1000, 1000, C=10, alpha=0.05)
    assert (answer.method, answer.source) == ("table", "bundled table")
