"""Tables of a comparison across data sets, as Markdown, LaTeX or plain text, with a sentence per decision.

Two tables: the algorithms (mean score, mean rank, in rank order) and the pairs (wins/losses/ties, raw and
adjusted p-value of the chosen test, its verdict, and — when the Bayesian comparison is given — P(a better),
P(equivalent), P(b better) with the Bayesian decision).  Probabilities are Monte Carlo estimates; their
largest standard error is stated under the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tablegen.compare.datasets.validation import check_choice, check_result
from tablegen.compare.report.tables import latex_table, markdown_table, p_text
from tablegen.errors import TablegenInputError

if TYPE_CHECKING:
    from tablegen.compare.datasets.analysis import AcrossDatasetsResult
    from tablegen.compare.datasets.bayesian import BayesianPairs

FORMATS = ("markdown", "latex", "text")


def algorithm_rows(result: AcrossDatasetsResult) -> list[dict]:
    """One row per algorithm, best mean rank first."""
    means = result.mean_scores or {}
    return [{"algorithm": a, "mean score": means.get(a), "mean rank": round(result.mean_ranks[a], 3)}
            for a in result.ranking()]


def pair_rows(result: AcrossDatasetsResult, bayesian: BayesianPairs | None = None) -> list[dict]:
    """One row per pair, in column order (p-values as the sentences print them: :func:`.tables.p_text`)."""
    rows = []
    for c in result.pairwise:
        verdict = f"{c.better} better" if c.significant else "no difference"
        row = {"pair": f"{c.a} vs {c.b}", "W/L/T": f"{c.wins}/{c.losses}/{c.ties}", "p": p_text(c.p_value),
               f"{result.correction_name} p": p_text(c.adjusted_p_value), "verdict": verdict}
        if bayesian is not None:
            pair = bayesian.pair(c.a, c.b)
            p = pair.probabilities if pair.a == c.a else pair.probabilities[::-1]
            row.update({"P(a better)": round(p[0], 4), "P(equivalent)": round(p[1], 4), "P(b better)": round(p[2], 4),
                        "Bayesian": pair.verdict})
        rows.append(row)
    return rows


def _check_same(result, bayesian) -> None:
    if bayesian is not None and tuple(bayesian.algorithms) != tuple(result.algorithms):
        raise TablegenInputError(f"bayesian compares {list(bayesian.algorithms)}, the result "
                                 f"{list(result.algorithms)}: run both on the same table")


def _text_table(rows: list[dict]) -> str:
    columns = list(rows[0])
    cells = [[str(c) for c in columns]] + [["" if row[c] is None else f"{row[c]:.4g}" if isinstance(row[c], float)
                                            else str(row[c]) for c in columns] for row in rows]
    widths = [max(len(line[k]) for line in cells) for k in range(len(columns))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in cells)


def sentences(result: AcrossDatasetsResult, bayesian: BayesianPairs | None = None) -> list[str]:
    """The frequentist summary, then one sentence per Bayesian decision."""
    return [result.sentence()] + ([] if bayesian is None else bayesian.sentences())


def comparison_table(result: AcrossDatasetsResult, bayesian: BayesianPairs | None = None,
                     format: str = "markdown") -> str:  # noqa: A002 (the word users type)
    """The algorithms' and the pairs' tables of ``result`` (and ``bayesian``), with the sentences.

    Parameters
    ----------
    result : AcrossDatasetsResult
        From :func:`tablegen.compare.across_datasets`.
    bayesian : BayesianPairs, optional
        From :func:`tablegen.compare.bayesian_pairs` on the same table.
    format : {"markdown", "latex", "text"}

    Returns
    -------
    str

    Examples
    --------
    >>> from tablegen.compare import across_datasets
    >>> X = [[0.9, 0.8, 0.7], [0.85, 0.8, 0.75], [0.95, 0.7, 0.72], [0.8, 0.78, 0.6], [0.91, 0.81, 0.79]]
    >>> print(comparison_table(across_datasets(X)).splitlines()[4])
    | 1 | 0.882 | 1 |
    """
    from tablegen.compare.datasets.analysis import AcrossDatasetsResult
    from tablegen.compare.datasets.bayesian import BayesianPairs

    check_result(result, AcrossDatasetsResult, "result")
    check_result(bayesian, BayesianPairs, "bayesian", optional=True)
    check_choice("format", format, FORMATS)
    _check_same(result, bayesian)
    algorithms, pairs = algorithm_rows(result), pair_rows(result, bayesian)
    words = sentences(result, bayesian)
    note = ""
    if bayesian is not None:
        worst = max(max(p.mc_error) for p in bayesian.pairs)
        first = bayesian.pairs[0]
        note = (f"Bayesian {first.test.replace('_', '-')} tests, ROPE ±{first.rope:g}, decision at probability "
                f"{first.probability:g}; {first.samples} draws (seed {first.seed}), largest Monte Carlo standard "
                f"error {worst:.2g}.")
    if format == "latex":
        caption = f"{result.m} algorithms on {result.n} data sets"
        return "\n\n".join([latex_table(algorithms, caption=caption),
                            latex_table(pairs, caption=f"{result.test_name} tests, {result.correction_name}-adjusted"
                                        + (f". {note}" if note else ""))] + [f"% {s}" for s in words]) + "\n"
    table = markdown_table if format == "markdown" else _text_table
    parts = [f"{result.m} algorithms on {result.n} data sets", table(algorithms),
             f"Pairwise {result.test_name} tests, {result.correction_name}-adjusted, alpha = {result.alpha:g}",
             table(pairs)] + ([note] if note else []) + words
    return "\n\n".join(parts) + "\n"
