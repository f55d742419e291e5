"""Reading a predictions CSV at scale (``tablegen evaluate PREDS.csv``, ``tablegen test --scores-file``): a file
over the memory limit is refused with its estimate before it is read whole; a model column's NaN is named with
its first bad row; numpy's reader and the row-by-row reader give the same columns."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tablegen.cli.main import main
from tablegen.cli.scores import read_predictions
from tablegen.common import csvfile
from tablegen.errors import ResourceLimitError, TablegenInputError


def _write(path, rows: list[str]) -> str:
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _predictions(n: int, seed: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.r_[1, 0, (rng.random(n - 2) < 0.3).astype(int)]
    return y, y + rng.normal(size=n), y + 2 * rng.normal(size=n)


@pytest.fixture
def big_file(tmp_path):
    y, a, b = _predictions(20_000)
    rows = [f"{y[i]},{float(a[i])!r},{float(b[i])!r}" for i in range(y.size)]
    return _write(tmp_path / "big.csv", ["label,a,b", *rows])


def test_a_file_over_the_memory_limit_is_refused_with_its_estimate_before_it_is_read(big_file, monkeypatch, capsys):
    """The estimate comes from the file's size and first lines: the whole file is never read."""
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "1MB")

    def whole_file(*args):
        raise AssertionError("the file was read whole before the memory check")

    monkeypatch.setattr(csvfile, "_read_text", whole_file)
    with pytest.raises(ResourceLimitError) as caught:
        read_predictions(big_file, "label", option="PREDS.csv")
    message = str(caught.value)
    assert "reading PREDS.csv" in message and "more than the limit of 1 MB" in message
    rows = int(re.search(r"about ([\d,]+) rows x 3 columns", message).group(1).replace(",", ""))
    assert 19_000 <= rows <= 21_000  # 20,000 rows, estimated from the first 64 KiB
    assert main(["evaluate", big_file, "--metrics", "auc"]) == 5  # the command: the limit's exit status
    printed = capsys.readouterr()
    assert printed.out == "" and "TABLEGEN_MEMORY_LIMIT" in printed.err


def test_within_the_limit_the_same_file_is_read(big_file, monkeypatch):
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "100MB")
    labels, scores, _ = read_predictions(big_file, "label")
    y, a, b = _predictions(20_000)
    assert labels.tolist() == [str(v) for v in y]
    np.testing.assert_array_equal(scores["a"], a)  # repr round-trips: the same floats, bit for bit
    np.testing.assert_array_equal(scores["b"], b)


ROWS = ["label,a,b", "1,0.9,0.8", "0,0.1,0.3", "1,0.7,0.6", "0,0.2,0.1", "1,0.8,0.9", "0,0.4,0.2", "1,0.6,0.7"]


@pytest.mark.parametrize("comment", [False, True])
@pytest.mark.parametrize(("row", "column", "field"), [(7, "b", "nan"), (3, "a", "NaN"), (5, "b", "inf"),
                                                      (2, "a", "-Infinity")])
def test_a_non_finite_value_is_named_with_its_first_bad_row_and_column(tmp_path, comment, row, column, field):
    """The first bad row of all the model columns (once: of the first column holding one), 1-based among the
    data rows (comments and blank lines not counted); numpy's reader and the row-by-row one alike."""
    rows = list(ROWS)
    j = ROWS[0].split(",").index(column)
    fields = rows[row].split(",")
    fields[j] = field
    rows[row] = ",".join(fields)
    rows[7] = "1,nan,0.7" if row < 7 else rows[7]  # a later bad row, in column a
    if comment:  # a comment among the rows: read row by row
        rows.insert(2, "# a comment")
    path = _write(tmp_path / "nan.csv", ["# predictions", "", *rows])
    with pytest.raises(TablegenInputError, match=re.escape(
            f"PREDS.csv {path}, row {row}, column {column!r}: missing or non-finite value {field!r}")):
        read_predictions(path, "label", option="PREDS.csv")


def test_an_empty_field_is_a_missing_value_named_with_its_row(tmp_path, capsys):
    path = _write(tmp_path / "empty.csv", [*ROWS[:4], "0,,0.1", *ROWS[5:]])
    assert main(["evaluate", path, "--metrics", "auc"]) == 2
    err = capsys.readouterr().err
    assert f"PREDS.csv {path}, row 4, column 'a': missing value" in err and "--ignore a" in err


def test_a_ragged_row_is_named_by_its_line(tmp_path):
    path = _write(tmp_path / "ragged.csv", ["# header next", *ROWS[:3], "0,0.1", *ROWS[4:]])
    with pytest.raises(TablegenInputError, match="line 5: 2 fields where the header has 3"):
        read_predictions(path, "label")


def test_numpy_s_reader_and_the_row_by_row_one_read_the_same(tmp_path):
    """Quoted fields, spaces around fields, text labels, an id column read as text, Windows line ends."""
    rows = ['id,label,"a",b', 'x1, yes ,"0.25",1e-3', "x2,no,-0.5, 2.5", "x3,yes,0.125,-1"]
    plain = tmp_path / "plain.csv"
    plain.write_bytes(("\r\n".join(rows) + "\r\n").encode())
    commented = _write(tmp_path / "commented.csv", [rows[0], "# a comment", *rows[1:]])
    read = [read_predictions(path, "label", models="a,b") for path in (str(plain), commented)]
    for labels, scores, _ in read:
        assert labels.tolist() == ["yes", "no", "yes"]
        assert scores["a"].tolist() == [0.25, -0.5, 0.125] and scores["b"].tolist() == [1e-3, 2.5, -1.0]


def test_a_header_without_rows_is_refused(tmp_path):
    with pytest.raises(TablegenInputError, match="a header but no rows"):
        read_predictions(_write(tmp_path / "header.csv", ["label,a"]), "label")


def test_a_header_beyond_the_first_64_kib_is_found_before_the_file_is_read_whole(tmp_path, monkeypatch):
    """70 KiB of comments, then a header of 300 long names (90 KiB): the estimate reads further, not whole."""
    names = [f"model_{j:03d}_" + "x" * 290 for j in range(300)]
    rows = [*(f"# comment line {i} " + "." * 60 for i in range(1000)), ",".join(["label", *names]),
            *(",".join([str(i % 2), *(str(0.5 * i + j) for j in range(300))]) for i in range(4))]
    path = _write(tmp_path / "wide.csv", rows)
    labels, scores, _ = read_predictions(path, "label")
    assert list(scores) == names and labels.tolist() == ["0", "1", "0", "1"] and scores[names[7]][3] == 8.5
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "100kB")
    monkeypatch.setattr(csvfile, "_read_text", lambda *args: pytest.fail("the file was read whole first"))
    with pytest.raises(ResourceLimitError, match=r"about 4 rows x 301 columns"):
        read_predictions(path, "label")


def test_a_byte_order_mark_and_lines_before_the_header_are_read_by_numpy_s_reader(tmp_path, monkeypatch):
    text = "# scores of two models\n\n" + "\n".join(ROWS) + "\n"
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    monkeypatch.setattr(csvfile, "_columns_by_rows", lambda *args: pytest.fail("read row by row"))
    labels, scores, _ = read_predictions(str(path), "label")
    assert labels.tolist() == ["1", "0", "1", "0", "1", "0", "1"] and scores["b"][-1] == 0.7


@pytest.mark.parametrize(("data", "message"), [
    (b"0\x00,0.4,0.2\n", "not a text CSV file (line 6 holds a NUL byte)"),
    (b"0,0.4,0.2\xff\n", "not a text CSV file (not UTF-8 text: byte"),
])
def test_a_file_that_is_not_text_after_its_first_lines_is_refused(tmp_path, data, message):
    """A NUL byte in the label column, or a byte that is not UTF-8, past the lines read first."""
    path = tmp_path / "damaged.csv"
    path.write_bytes(("\n".join(ROWS[:5]) + "\n").encode() + data)
    with pytest.raises(TablegenInputError, match=re.escape(message)):
        read_predictions(str(path), "label")


def test_a_ten_million_row_file_over_the_limit_is_refused_with_its_estimate_unread(tmp_path, monkeypatch, capsys):
    """The issue's case at its size: 10^7 rows of a label and 10 models (about 1.9 GB; a sparse file past its first
    2,000 real rows, so the test writes 90 kB).  Refused from the estimate alone: numpy's reader, the row-by-row
    reader and the whole-file read are never called."""
    rng = np.random.default_rng(9)
    rows = [",".join(["label", *(f"m{j}" for j in range(10))]),
            *(",".join([str(i % 2), *(f"{v:.15f}" for v in rng.random(10))]) for i in range(2000))]
    path = _write(tmp_path / "huge.csv", rows)
    line = len(rows[1]) + 1
    with open(path, "r+b") as handle:
        handle.truncate(len(rows[0]) + 1 + 10_000_000 * line)  # the size of 10^7 such rows
    for reader in ("_read_text", "_columns_by_numpy", "_columns_by_rows"):
        monkeypatch.setattr(csvfile, reader, lambda *args, reader=reader: pytest.fail(f"{reader} read the file"))
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "4GB")
    with pytest.raises(ResourceLimitError) as caught:
        read_predictions(path, "label", option="PREDS.csv")
    message = str(caught.value)
    rows_estimated = int(re.search(r"about ([\d,]+) rows x 11 columns", message).group(1).replace(",", ""))
    assert rows_estimated == pytest.approx(10_000_000, rel=1e-3)
    assert "more than the limit of 4 GB" in message
    assert main(["evaluate", path]) == 5
    printed = capsys.readouterr()
    assert printed.out == "" and "about 10,00" in printed.err and "TABLEGEN_MEMORY_LIMIT" in printed.err


def test_a_nan_deep_in_a_large_file_is_named_without_reading_the_file_whole(tmp_path, monkeypatch):
    """200,000 rows, a NaN in model b's row 150,001 (and one in a's row 180,000): the first bad row is named from
    numpy's columns and the file read line by line up to that row, never whole as text."""
    y, a, b = _predictions(200_000)
    fields = [[str(y[i]), repr(float(a[i])), repr(float(b[i]))] for i in range(y.size)]
    fields[150_000][2] = "nan"
    fields[179_999][1] = "NaN"
    path = _write(tmp_path / "deep.csv", ["# predictions", "label,a,b", *(",".join(row) for row in fields)])
    monkeypatch.setattr(csvfile, "_read_text", lambda *args: pytest.fail("the file was read whole as text"))
    with pytest.raises(TablegenInputError, match=re.escape(
            f"PREDS.csv {path}, row 150001, column 'b': missing or non-finite value 'nan'")):
        read_predictions(path, "label", option="PREDS.csv")


@pytest.mark.parametrize("layout", ["mapping", "array"])
def test_the_python_api_names_the_model_and_first_bad_position_of_a_nan(layout):
    """tablegen.evaluate on 10^6 items: a model's NaN (then an infinity) is refused naming the model and its first
    bad position (0-based, as the array is indexed), before any work; columns of an array are named 'model j'."""
    import tablegen

    y, a, b = _predictions(1_000_000)
    b[654_321] = np.nan
    b[800_000] = np.inf
    scores = {"a": a, "b": b} if layout == "mapping" else np.column_stack([a, b])
    name = "b" if layout == "mapping" else "model 2"
    with pytest.raises(TablegenInputError, match=re.escape(f"scores of {name!r} holds a missing or non-finite "
                                                           "value (NaN/inf) at position 654321")):
        tablegen.evaluate(y, scores, metrics=["auc"])
