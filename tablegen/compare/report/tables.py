"""Rows of a report as Markdown and LaTeX tables (no tabulate or jinja2 needed), and the one number format the
reports' tables share with their sentences: values to :data:`VALUE_DIGITS` significant digits, p-values to
:data:`P_DIGITS` (``f"{p:.3g}"``, as every sentence prints them: a max-T p of 9.999e-05 reads 0.0001 in the
sentence, the text table, Markdown and LaTeX alike)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas

#: Significant digits of a metric's value (or any other number) in a report's tables and sentences.
VALUE_DIGITS = 4
#: Significant digits of a p-value in a report's tables and sentences.
P_DIGITS = 3


def cell_text(value, digits: int = VALUE_DIGITS) -> str:
    """A value as a table shows it: numbers to ``digits`` significant digits, True as "yes", NaN and None as "–".

    Examples
    --------
    >>> [cell_text(v) for v in (0.123456, 3, True, False, float("nan"), "auc")]
    ['0.1235', '3', 'yes', '', '–', 'auc']
    >>> cell_text(9.999e-05), cell_text(9.999e-05, P_DIGITS)
    ('9.999e-05', '0.0001')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def p_text(p) -> str:
    """A p-value as every report prints it (:data:`P_DIGITS` significant digits; "–" for none).

    Examples
    --------
    >>> p_text(9.999e-05), p_text(0.04567), p_text(None)
    ('0.0001', '0.0457', '–')
    """
    return cell_text(None if p is None else float(p), P_DIGITS)


def _digits(column: str, p_columns) -> int:
    return P_DIGITS if column in p_columns else VALUE_DIGITS


def markdown_table(rows: list[dict], p_columns: tuple = ()) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` (the keys of the first row are the columns; those named in
    ``p_columns`` hold p-values, printed as :func:`p_text` does).

    Examples
    --------
    >>> print(markdown_table([{"model": "a", "auc": 0.75}]))
    | model | auc |
    |---|---|
    | a | 0.75 |
    """
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell_text(row[c], _digits(c, p_columns)).replace("|", "\\|") for c in columns) + " |"
              for row in rows]
    return "\n".join(lines)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "–": "--",
                  "<": r"\textless{}", ">": r"\textgreater{}"}  # a bound's "<= x" (OT1 prints < as an inverted !)


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped.

    Examples
    --------
    >>> latex_escape("best_f1 & 50%")
    'best\\\\_f1 \\\\& 50\\\\%'
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def latex_table(rows: list[dict], caption: str = "", p_columns: tuple = ()) -> str:
    """A booktabs ``table`` of ``rows`` (numbers right-aligned; ``p_columns`` as in :func:`markdown_table`), with
    ``caption``.

    Examples
    --------
    >>> print(latex_table([{"model": "a", "auc": 0.75}], caption="demo"))  # doctest: +NORMALIZE_WHITESPACE
    \\begin{table}
    \\centering
    \\caption{demo}
    \\begin{tabular}{lr}
    \\toprule
    model & auc \\\\
    \\midrule
    a & 0.75 \\\\
    \\bottomrule
    \\end{tabular}
    \\end{table}
    """
    columns = list(rows[0])
    align = "".join("r" if isinstance(rows[0][c], (int, float)) and not isinstance(rows[0][c], bool) else "l"
                    for c in columns)
    body = [" & ".join(latex_escape(cell_text(row[c], _digits(c, p_columns))) for c in columns) + r" \\"
            for row in rows]
    return "\n".join([r"\begin{table}", r"\centering", rf"\caption{{{latex_escape(caption)}}}",
                      rf"\begin{{tabular}}{{{align}}}", r"\toprule",
                      " & ".join(latex_escape(c) for c in columns) + r" \\", r"\midrule", *body,
                      r"\bottomrule", r"\end{tabular}", r"\end{table}"])


class TableRenderings:
    """``to_frame``, ``to_markdown`` and ``to_latex`` of a report: one row per (metric, model) from its ``rows()``,
    the p-value columns named by its ``P_COLUMNS``, one sentence per metric report it iterates over, and the
    LaTeX caption its ``caption()`` gives (the binary and the K-class reports share them)."""

    P_COLUMNS: tuple[str, ...] = ()

    def to_frame(self) -> pandas.DataFrame:
        """The rows as a pandas DataFrame indexed by (metric, model)."""
        import pandas as pd

        return pd.DataFrame(self.rows()).set_index(["metric", "model"])

    def to_markdown(self) -> str:
        """A Markdown table of the rows, then one paragraph per metric."""
        return (markdown_table(self.rows(), self.P_COLUMNS) + "\n\n"
                + "\n\n".join(report.sentence() for report in self) + "\n")

    def to_latex(self) -> str:
        """A LaTeX (booktabs) table of the rows."""
        return latex_table(self.rows(), caption=self.caption(), p_columns=self.P_COLUMNS)

