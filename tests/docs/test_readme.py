"""The documentation's code blocks run as written: the README's and every page under docs/ (the generated
reference pages aside).  Python blocks are executed, every shell command is run.

How each shell command runs:

- ``tablegen ...`` lookups and reports: in-process through the CLI's ``main``.
- ``tablegen run CONFIG --scheduler-address tcp://HOST:8786 --store /shared/...`` (the cluster how-to): against a
  real Dask scheduler started here, with ``/shared`` a temporary directory and the config replaced by
  ``configs/smoke.yaml`` (seconds, where the README's config takes hours).
- ``python jobs/slurm.py|pbs.py ... --print-job-script`` (the cluster how-to): the launcher as a subprocess; it prints
  the batch script and submits nothing.
- ``kubectl apply -f MANIFEST`` (the cluster how-to): there is no Kubernetes cluster here, so the manifest is parsed
  and each document must name its ``apiVersion`` and ``kind`` (what ``kubectl --dry-run=client``
  checks first).
- The README's main-job set-up command: as written, with bash, in a fresh copy of the repository in a
  temporary directory (marked ``slow``: it builds a virtual environment and runs the job).
- The README's test command is not run from inside the test suite it starts: it is exactly what
  ``.ci/run`` runs, so CI executes it.

The test names the commands it treats specially, so a new shell block cannot slip through unrun.

What each run must show:

- A Python block: every expression whose comment shows a value (``x.method   # 'exact'``,
  ``float(...)   # exact: 0.6411333...``; ``...`` stands for the rest) evaluates to that value, a
  ``print`` whose comment ends in ``...`` prints a line that starts that way, the block's own
  ``assert`` statements hold, and a block followed by a "prints" block prints exactly that.  Each block
  must check at least one such thing.
- A shell command: exit 0, and where the README states the answer elsewhere (the look-up how-to's values, its verify
  figure), that answer in its output.
- The commands the predictions and F1 how-tos quote in prose with their results (``tablegen compare datasets`` on the
  paper's table, ``tablegen test --scores-file``, ``tablegen compare f1``): run on the README's data,
  each figure the prose quotes found in the output.  The GPU how-to's commands need a GPU and are not run
  (tests/compute/test_cuda_sim.py covers the CUDA kernels under the simulator).
"""

from __future__ import annotations

import ast
import contextlib
import csv
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
import yaml
from progresstools import HANG_SECONDS, IDLE_SECONDS, file_size, progress_lines, tree_state, wait_while_progressing

from tablegen.batch.config import config_from_mapping
from tablegen.cli.main import main
from tablegen.store.zarr_store import open_store

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: The documents whose blocks run: the README, then the site's pages (the generated reference pages hold only the
#: parsers' help text).
DOCUMENTS = [README, *sorted(path for path in (ROOT / "docs").rglob("*.md")
                            if "_build" not in path.parts and path.name not in ("api.md", "cli.md"))]


def documents_text() -> str:
    """Every document's text, README first (a heading starts each page)."""
    return "\n\n".join(path.read_text() for path in DOCUMENTS)
MAIN_JOB_COMMAND = ("python3 -m venv .venv && .venv/bin/pip install -q -e . && "
                    ".venv/bin/tablegen run configs/laptop.yaml")
TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest"
SET_UP_COMMANDS = {MAIN_JOB_COMMAND, TEST_COMMAND}


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", documents_text(), flags=re.S | re.M)


def shell_commands() -> list[str]:
    commands = []
    for block in blocks("bash"):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command:
                commands.append(command)
    return commands


def test_no_source_cites_a_readme_section():
    """The README's sections became the site's pages: code, configs and notes name pages, not "README §n"."""
    stale = [f"{path.relative_to(ROOT)}:{n}" for folder in ("tablegen", "jobs", "configs", "benchmarks", "tests")
             for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".md", ".yaml") and path != Path(__file__)
             for n, line in enumerate(path.read_text(errors="ignore").splitlines(), 1) if "README §" in line]
    assert not stale, stale


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_documentation_points_at_nothing_outside_the_repository(document):
    """A user gets the repository: every relative link resolves to a file in it, and nothing names a design
    document or a study it does not ship."""
    text = document.read_text()
    assert not re.findall(r"\bDESIGN(?:\.md| §)|\bshared/reference\b", text)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (document.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT) and path.exists(), f"{document.name}: broken link {target}"


def config_blocks() -> dict[str, str]:
    """The documented job configs by kind: the binary config reference and the multi-class table's."""
    found = {}
    for block in blocks("yaml"):
        kind = yaml.safe_load(block).get("kind", "binary")
        assert kind not in found, f"two documented {kind} configs"
        found[kind] = block
    return found


def test_readme_has_the_blocks_this_test_expects():
    assert len(blocks("python")) >= 1 and set(config_blocks()) == {"binary", "multiclass"}
    assert SET_UP_COMMANDS <= set(shell_commands())


def fenced_blocks() -> list[tuple[str, str, str]]:
    """(language, text, the prose line just before it) of every fenced block, in order."""
    found, language, lines, prose = [], None, [], ""
    for line in documents_text().splitlines(keepends=True):
        if line.startswith("```") and language is None:
            language, lines = line[3:].strip(), []
        elif line.startswith("```"):
            found.append((language, "".join(lines), prose))
            language, prose = None, ""
        elif language is not None:
            lines.append(line)
        elif line.strip():
            prose = line.strip()
    return found


def python_blocks() -> list[tuple[str, str | None]]:
    """Each Python block with the output the README says it prints (the block after a "prints" line)."""
    found = fenced_blocks()
    return [(text, found[i + 1][1] if i + 1 < len(found) and found[i + 1][0] == "" and found[i + 1][2] == "prints"
             else None) for i, (language, text, _) in enumerate(found) if language == "python"]


#: a shown value after an optional "label: ": a parenthesised tuple, a string, a number or a bool
SHOWN = re.compile(r"(?:[\w ]+:\s*)?(?P<value>\(.*\)|'[^']*'|-?\d[\d.e+-]*(?:\.\.\.)?|True|False)(?:\s|$)")


def shown_value(comment: str) -> str | None:
    """The value a comment shows (``'exact' (hypergeometric)`` -> ``'exact'``), or None for prose."""
    match = SHOWN.match(comment)
    return match["value"] if match else None


def matches_shown(text: str, shown: str) -> bool:
    """``text`` is what ``shown`` shows: ``...`` stands for any rest; a number rounds to the digits shown."""
    if "..." not in shown and re.fullmatch(r"-?\d+\.\d+", shown):
        return round(float(text), len(shown.split(".")[1])) == float(shown)
    return re.fullmatch(re.escape(shown).replace(re.escape("..."), ".*"), text) is not None


def comments(code: str) -> dict[int, str]:
    """Line number -> the comment on that line."""
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return {t.start[0]: t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT}


def run_block(code: str) -> tuple[dict, str, int]:
    """Run a README block statement by statement, checking each shown value.

    Returns its namespace, everything it printed, and how many checks it made (shown values and
    assert statements)."""
    namespace, notes, out, checks = {"__name__": "readme"}, comments(code), io.StringIO(), 0
    for node in ast.parse(code).body:
        shown = notes.get(node.end_lineno, "")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            if isinstance(node, ast.Expr):
                value = eval(compile(ast.Expression(node.value), str(README), "eval"), namespace)
            else:
                exec(compile(ast.Module([node], []), str(README), "exec"), namespace)
        out.write(printed.getvalue())
        source = ast.unparse(node)
        checks += isinstance(node, ast.Assert)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and source.startswith("print("):
            if shown.endswith("..."):  # an abbreviated printed line
                assert printed.getvalue().startswith(shown[:-3]), (source, printed.getvalue(), shown)
                checks += 1
        elif isinstance(node, ast.Expr) and shown_value(shown) is not None:
            assert matches_shown(repr(value), shown_value(shown)), f"{source}: README shows {shown!r}, got {value!r}"
            checks += 1
    return namespace, out.getvalue(), checks


@pytest.mark.parametrize("code, prints", python_blocks())
def test_python_block_shows_what_the_readme_says(code, prints, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, out, checks = run_block(code)
    if prints is not None:
        assert out == prints
    assert checks + (prints is not None) >= 1, "a README block that shows no value, output or assert checks nothing"


def test_shown_values_are_read_as_values_and_prose_is_not():
    assert [shown_value(c) for c in ("(True, 'exact')", "exact: 0.6411333...", "'exact' (hypergeometric)",
                                     "top 10: (3, 2.193)", "KDD Cup 2001 test set", "the xarray Dataset",
                                     "vectorised over P, N, C (and score)")] == [
        "(True, 'exact')", "0.6411333...", "'exact'", "(3, 2.193)", None, None, None]
    assert matches_shown("0.6411333333333333", "0.6411333...") and matches_shown("0.51261004", "0.51261004")
    assert matches_shown("0.512610041", "0.51261004") and not matches_shown("0.51262", "0.51261004")
    assert not matches_shown("(True, 'table')", "(True, 'exact')")
    assert matches_shown("(3, 'From k = 3 the curve beats a random')", "(3, 'From k = 3 the curve beats ...')")


def test_the_readme_shows_values_for_this_test_to_check():
    """The look-up how-to's blocks show 8 values (the parser must keep finding them); an assert's comment shows none."""
    def values_shown(code):
        notes = comments(code)
        return [shown_value(notes.get(node.end_lineno, "")) for node in ast.parse(code).body
                if isinstance(node, ast.Expr) and not ast.unparse(node).startswith("print(")]

    assert sum(v is not None for code, _ in python_blocks() for v in values_shown(code)) >= 8


def is_scheduler_run(command: str) -> bool:
    return command.startswith("tablegen run ") and "--scheduler-address tcp://HOST:8786" in command


def is_launcher(command: str) -> bool:
    return command.startswith(("python jobs/slurm.py ", "python jobs/pbs.py ")) and "--print-job-script" in command


def is_kubectl_apply(command: str) -> bool:
    return command.startswith("kubectl apply -f ")


SPECIAL = (is_scheduler_run, is_launcher, is_kubectl_apply)
CLI_COMMANDS = [c for c in shell_commands() if c not in SET_UP_COMMANDS and not any(f(c) for f in SPECIAL)]


def test_every_shell_command_has_a_runner():
    commands = shell_commands()
    runners = {c: [f.__name__ for f in SPECIAL if f(c)] for c in commands}
    assert all(len(names) <= 1 for names in runners.values()), runners
    assert all(c.startswith("tablegen ") for c in CLI_COMMANDS), CLI_COMMANDS
    # the cluster how-to shows each kind of cluster
    assert sum(map(is_scheduler_run, commands)) >= 1 and sum(map(is_launcher, commands)) == 2
    assert sum(map(is_kubectl_apply, commands)) == 2


#: what a shell command must print: the answers the look-up how-to shows for the same questions, its verify figure
SHELL_ANSWERS = {
    "tablegen test auc 0.70": "it exceeds 0.600854, the critical value for the best of 114",
    "tablegen lookup auc --P 100 --N 300 --C 1000": ": 0.641133 (exact)",
    "tablegen p-value auc 0.65": "p-value 0.002841 (exact)",
    "tablegen topk --P 10 --N 90 --alpha 0.05": "From k = 3 the curve beats a random ranking",
    "tablegen export --metric best_f1 --C 10 --format markdown": "| Pos \\ Neg | 20 | 30 |",
    "tablegen info": "bundled table: complete, 361 of 361 cells done",
    "tablegen verify": "in 10,699 of 10,830 checks (98.8%",
    "tablegen power best_f1 --P 30": "with probability 0.7119 (exact)",  # the planning how-to
    "tablegen sample-size best_accuracy": "first at P = 12, N = 12 (power 0.8261)",
    "tablegen minimum-detectable best_f1 --P 30": "a model of AUC 0.7639 or more",
    "tablegen max-models best_f1": "among up to 46 models tried",
    "tablegen minimum-detectable auc": "a model of AUC about 0.7422 or more (binormal alternative",
    "tablegen minimum-detectable best_f1 --P 100": "AUC 0.6695 or more (Lehmann alternative, k = 2.025; exact, read "
                                                   "from the table)",
}


def test_shell_answers_are_the_readmes():
    text = documents_text()
    assert "verifies at 10,699 of 10,830 exact values inside their 95% intervals (98.8%)" in text
    assert all(sum(c.startswith(prefix) for c in CLI_COMMANDS) == 1 for prefix in SHELL_ANSWERS), CLI_COMMANDS


@pytest.mark.parametrize("command", CLI_COMMANDS)
def test_shell_command_runs(command, tmp_path, monkeypatch, capsys):
    argv = shlex.split(command)
    assert argv[1] != "run", "a README `tablegen run` would need a store: run it on configs/smoke.yaml"
    monkeypatch.chdir(tmp_path)
    assert main(argv[1:]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    expected = [answer for prefix, answer in SHELL_ANSWERS.items() if command.startswith(prefix)]
    if argv[1] == "plot":
        assert (tmp_path / argv[argv.index("-o") + 1]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", out
    else:
        assert len(expected) == 1, f"say in SHELL_ANSWERS what `{command}` must print"
        assert expected[0] in out, out


# -- the predictions and F1 how-tos: commands the prose quotes with their results -----------------------
def section(page: str) -> str:
    """The text of the documentation page ``page`` (a path under docs/), with its lines joined."""
    return " ".join((ROOT / "docs" / page).read_text().split())


def test_compare_datasets_on_the_papers_table_prints_what_the_how_to_quotes(capsys):
    prose = section("how-to/across-datasets.md")
    table = "tests/data/benavoli2016_table2_accuracies.csv"
    assert f"`tablegen compare datasets {table} --mean-ranks-posthoc` finds" in prose
    assert main(["compare", "datasets", str(ROOT / table), "--mean-ranks-posthoc"]) == 0
    out = capsys.readouterr().out
    ranks = "C3 3.343, C2 3.574, C6 3.759, C5 3.991, C1 4.139, C7 4.306, C4 4.889"
    quoted = [  # (as the prose says it, as the command prints it)
        ("χ² = 19.20 on 6 df, p = 0.0038", "chi2 = 19.2025, df = 6, p = 0.00383"),
        (f"mean ranks {ranks}", f"Mean ranks (1 = best): {ranks}"),
        ("adjusted p = 3.5·10⁻⁵, 0.0039, 0.0046", "C3 beats C4 (adjusted p = 3.53e-05); C2 beats C4 (adjusted p = "
                                                  "0.00394); C6 beats C4 (adjusted p = 0.00457)"),
        ("verdict with the pool for 4 of the 21 pairs", "with the choice of the other algorithms for 4 of 21 pairs"),
        ("(z = 3.163 > 2.948) but not in 5 of the 32 sub-pools, e.g. {C1, C2, C4, C5}",
         "C2 vs C4 3.163 2.948 differ 5 of 32 {C2, C4, C1, C5}"),
        ("(z = 2.717) but do in 24 sub-pools, e.g. compared alone",
         "C4 vs C6 2.717 2.948 no difference 24 of 32 {C4, C6}"),
        ("the critical difference of mean ranks is 1.226", "critical difference of mean ranks 1.226"),
        ("significant in 1/1, 5/5, 9/10, 7/10, 2/5 and 0/1", "C4 vs C6 1/1 5/5 9/10 7/10 2/5 0/1"),
    ]
    printed = " ".join(out.split())
    for says, prints in quoted:
        assert says in prose, says
        assert prints in printed, prints
    law = ["--mean-ranks-law", "bonferroni"]
    assert main(["compare", "datasets", str(ROOT / table), "--mean-ranks-posthoc", *law]) == 0
    bonferroni = " ".join(capsys.readouterr().out.split())
    assert "Bonferroni z test, critical z 3.038: 6 and 20 sub-pools" in prose
    assert "C2 vs C4 3.163 3.038 differ 6 of 32" in bonferroni
    assert "C4 vs C6 2.717 3.038 no difference 20 of 32" in bonferroni
    assert main(["compare", "datasets", str(ROOT / table), "--test", "sign", "--correction", "bonferroni"]) == 0
    verdicts = re.findall(r"^(C\d vs C\d) .* (C\d better than C\d)$", capsys.readouterr().out, flags=re.M)
    assert "(the sign test with Bonferroni keeps C3 > C4 and C6 > C4)" in prose
    assert verdicts == [("C3 vs C4", "C3 better than C4"), ("C4 vs C6", "C6 better than C4")]


def test_scores_file_command_gives_the_python_answer(tmp_path, capsys):
    """The predictions how-to's `tablegen test --scores-file preds.csv --C 12` on the data of its Python block."""
    quoted = "`tablegen test --scores-file preds.csv --C 12` prints metric × (winner, score"
    assert quoted in section("how-to/predictions.md")
    (code, _), = [block for block in python_blocks() if "significance_test_from_scores" in block[0]]
    namespace, _, _ = run_block(code)
    labels, scores, result = namespace["labels"], namespace["scores"], namespace["result"]
    with open(tmp_path / "preds.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["label", *scores])
        writer.writerows([label, *(repr(float(s[i])) for s in scores.values())] for i, label in enumerate(labels))
    capsys.readouterr()
    # the block's two metrics (the default set adds average precision, simulated here: seconds more)
    assert main(["test", "--scores-file", str(tmp_path / "preds.csv"), "--C", "12", "--metrics", "auc", "best_f1"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line.strip()}
    for metric in ("auc", "best_f1"):
        verdict = result[metric]
        metric_, winner, score, critical_value, p_value, source, *rest = rows[metric]
        assert (winner, source, rest[0]) == (verdict.winner, verdict.result.critical_value.method, "significant")
        assert float(score) == pytest.approx(verdict.score, rel=1e-5)
        assert float(critical_value) == pytest.approx(float(verdict.result.critical_value.value), rel=1e-5)
        assert float(p_value) == pytest.approx(float(verdict.result.p_value.value), rel=1e-2)
    assert "best_accuracy" not in rows


def test_compare_f1_command_prints_the_how_tos_tables(tmp_path, capsys):
    """The F1 how-to's `tablegen compare f1 A.csv B.csv` on the Python block's matrices prints the tables it shows."""
    (code, prints), = [block for block in python_blocks() if "f1_posterior(" in block[0]]
    assert "It prints both tables and the sentence" in section("how-to/compare-f1.md")
    namespace, _, _ = run_block(code)
    for name in ("a", "b"):
        (tmp_path / f"{name.upper()}.csv").write_text("\n".join(",".join(map(str, row)) for row in namespace[name]))
    capsys.readouterr()
    assert main(["compare", "f1", str(tmp_path / "A.csv"), str(tmp_path / "B.csv"), "--rope", "0.01",
                 "--seed", "1"]) == 0
    out = capsys.readouterr().out
    tables = prints.splitlines()[:-1]  # the last line is the one-classifier sentence, not a `compare f1` output
    assert len(tables) == 12 and all(line in out.splitlines() for line in tables), out
    assert namespace["result"].sentence() in out


@pytest.mark.slow  # a dask cluster of its own: the fast loop leaves it to CI
@pytest.mark.parametrize("command", [c for c in shell_commands() if is_scheduler_run(c)])
def test_run_against_an_existing_scheduler(command, tmp_path, monkeypatch, capsys):
    from distributed import LocalCluster

    argv = shlex.split(command.replace("/shared/", f"{tmp_path}/"))
    argv[2] = str(ROOT / "configs" / "smoke.yaml")
    store = argv[argv.index("--store") + 1]
    monkeypatch.chdir(tmp_path)
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0") as cluster:
        argv[argv.index("tcp://HOST:8786")] = cluster.scheduler_address
        assert main(argv[1:]) == 0, capsys.readouterr().err
    assert open_store(store).attrs["complete"] is True


@pytest.mark.slow  # a launcher in a subprocess (imports dask-jobqueue): the fast loop leaves it to CI
@pytest.mark.parametrize("command", [c for c in shell_commands() if is_launcher(c)])
def test_launcher_prints_its_batch_script(command, tmp_path):
    argv = shlex.split(command.replace("/shared/", f"{tmp_path}/"))
    result = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True,
                            timeout=HANG_SECONDS)
    assert result.returncode == 0, result.stderr
    directive = "#SBATCH" if "slurm" in argv[1] else "#PBS"
    assert directive in result.stdout and "distributed.cli.dask_worker" in result.stdout, result.stdout
    assert "--nthreads 1 " in result.stdout and "--nworkers 8 " in result.stdout, result.stdout
    assert not Path(argv[argv.index("--store") + 1]).exists()  # printing the script writes nothing


@pytest.mark.parametrize("command", [c for c in shell_commands() if is_kubectl_apply(c)])
def test_kubernetes_manifest_parses(command):
    manifest = ROOT / shlex.split(command)[3]
    documents = [d for d in yaml.safe_load_all(manifest.read_text()) if d is not None]
    assert documents and all(d.get("apiVersion") and d.get("kind") for d in documents), manifest


@pytest.mark.slow
def test_main_job_command_in_a_fresh_copy(tmp_path):
    """The README's main-job command, as written, in a copy of the repository's tracked files."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    copy = tmp_path / "tablegen"
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    # No bound on the time it takes (a busy laptop took 30 min): it fails if neither the copy's files (the
    # virtual environment installed, the store written) nor the run's progress line have moved for 10 min.
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        process = subprocess.Popen(["bash", "-c", MAIN_JOB_COMMAND], cwd=copy, stdout=stdout, stderr=stderr,
                                   start_new_session=True)
    try:  # a slow wheel download writes nothing watched here: twice the usual idle bound
        code = wait_while_progressing(process, tree_state(copy), progress_lines(err), file_size(out), poll=2.0,
                                      idle=2 * IDLE_SECONDS)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    stdout, stderr = out.read_text(), err.read_text()
    assert code == 0, stdout[-2000:] + stderr[-4000:]
    assert "    361/361 cells  100.0% of the work" in stderr, stderr[-2000:]  # the progress line
    assert "361 of 361 cells computed at R = 100,000" in stdout, stdout[-2000:]  # the summary
    assert open_store(str(copy / "laptop.zarr")).attrs["complete"] is True


def test_config_reference_block_is_a_valid_config():
    config = config_from_mapping(yaml.safe_load(config_blocks()["binary"]))
    assert config.replicates == 100_000 and config.chunks == (1, 19)


def test_the_multiclass_table_block_is_a_valid_config():
    config = config_from_mapping(yaml.safe_load(config_blocks()["multiclass"]))
    assert config.kind == "multiclass" and tuple(config.K) == (2, 3, 5) and config.cells == 9
