"""Rows of a report as Markdown and LaTeX tables (no tabulate or jinja2 needed)."""

from __future__ import annotations

import math


def cell_text(value) -> str:
    """A value as a table shows it: numbers to 4 significant digits, True as "yes", NaN and None as "–".

    Examples
    --------
    >>> [cell_text(v) for v in (0.123456, 3, True, False, float("nan"), "auc")]
    ['0.1235', '3', 'yes', '', '–', 'auc']
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def markdown_table(rows: list[dict]) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` (the keys of the first row are the columns).

    Examples
    --------
    >>> print(markdown_table([{"model": "a", "auc": 0.75}]))
    | model | auc |
    |---|---|
    | a | 0.75 |
    """
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell_text(row[c]).replace("|", "\\|") for c in columns) + " |" for row in rows]
    return "\n".join(lines)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "–": "--"}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped.

    Examples
    --------
    >>> latex_escape("best_f1 & 50%")
    'best\\\\_f1 \\\\& 50\\\\%'
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def latex_table(rows: list[dict], caption: str = "") -> str:
    """A booktabs ``table`` of ``rows`` (numbers right-aligned), with ``caption``.

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
    body = [" & ".join(latex_escape(cell_text(row[c])) for c in columns) + r" \\" for row in rows]
    return "\n".join([r"\begin{table}", r"\centering", rf"\caption{{{latex_escape(caption)}}}",
                      rf"\begin{{tabular}}{{{align}}}", r"\toprule",
                      " & ".join(latex_escape(c) for c in columns) + r" \\", r"\midrule", *body,
                      r"\bottomrule", r"\end{tabular}", r"\end{table}"])
