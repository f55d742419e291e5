"""One convention for every command: its parser sets ``run``, errors name options without rewriting text,
and delimited files are read by one reader (tablegen.common.csvfile)."""

import ast
import pickle
from pathlib import Path

import pytest

from tablegen.cli.main import build_parser, command_parsers, main
from tablegen.errors import Argument, ResourceLimitError, TablegenInputError

CLI = Path(__file__).resolve().parents[2] / "tablegen" / "cli"


def test_every_command_parser_sets_its_run_function():
    leaves = list(command_parsers(build_parser()))
    assert len(leaves) >= 12  # lookup test p-value topk, compare datasets/f1, export plot info verify, run simulate
    missing = [" ".join(path) for path, parser in leaves if not callable(parser._defaults.get("run"))]
    assert not missing, f"parsers without set_defaults(run=...): {missing}"


def test_table_commands_live_in_their_own_module():
    runs = {path[0]: parser._defaults["run"] for path, parser in command_parsers(build_parser())}
    assert {runs[name].__module__ for name in ("info", "verify", "export", "plot")} == {"tablegen.cli.tables"}


def _calls(path: Path, module: str, names: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.name}:{node.lineno} {module}.{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == module
            and node.attr in names]


def test_main_rewrites_no_error_text_with_regular_expressions():
    main_py = CLI / "main.py"
    assert "re.sub" not in main_py.read_text(encoding="utf-8")
    found = [hit for path in sorted(CLI.glob("*.py")) for hit in _calls(path, "re", {"sub", "subn"})]
    assert not found, found


def test_no_command_module_parses_delimited_text_itself():
    """The one reader is tablegen.common.csvfile: no csv module, no re.split in the command line."""
    found = [hit for path in sorted(CLI.glob("*.py")) for hit in _calls(path, "re", {"split"})]
    found += [f"{path.name}: imports csv" for path in sorted(CLI.glob("*.py"))
              if any(isinstance(node, ast.Import) and any(alias.name == "csv" for alias in node.names)
                     for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))]
    assert not found, found


def test_an_error_names_its_arguments_for_python_and_for_the_command_line():
    error = ResourceLimitError.naming(Argument("method", "exact"), ": too big; use ", Argument("method", "auto"))
    assert str(error) == "method='exact': too big; use method='auto'"
    assert error.option_message() == "--method exact: too big; use --method auto"
    copy = pickle.loads(pickle.dumps(error))  # errors cross process boundaries (dask workers)
    assert type(copy) is ResourceLimitError and copy.exit_code == 5
    assert copy.option_message() == error.option_message() and str(copy) == str(error)
    plain = TablegenInputError("C must be an integer >= 1, got 0")
    assert plain.option_message() == str(plain)
    named = TablegenInputError.naming(Argument("confusion_a"), " needs at least 2 classes")
    assert named.option_message({"confusion_a": "a.csv"}) == "a.csv needs at least 2 classes"


@pytest.mark.parametrize("argv, python, command_line", [
    (["lookup", "auc", "--P", "100", "--N", "300", "--C", "50", "--method", "table"],
     "for a critical value off this grid use method='exact' or method='simulate'",
     "for a critical value off this grid use --method exact or --method simulate"),
    (["lookup", "average_precision", "--P", "20", "--N", "20", "--C", "10", "--method", "exact"],
     "method='exact': metric 'average_precision' has no exact null distribution at P = 20, N = 20",
     "--method exact: metric 'average_precision' has no exact null distribution at P = 20, N = 20; "
     "use --method simulate"),
    (["test", "auc", "0.9", "--P", "20", "--N", "20", "--C", "10", "--method", "table", "--seed", "3"],
     "seed applies only to simulated answers (method 'simulate' or 'auto'), not to method='table'",
     "--seed applies only to simulated answers (--method simulate or auto), not to --method table"),
])
def test_the_command_line_names_options_where_the_library_names_arguments(capsys, argv, python, command_line):
    from tablegen import critical_value, significance_test

    args = dict(P=int(argv[argv.index("--P") + 1]), N=int(argv[argv.index("--N") + 1]),
                C=int(argv[argv.index("--C") + 1]), method=argv[argv.index("--method") + 1])
    if "--seed" in argv:
        args["seed"] = int(argv[argv.index("--seed") + 1])
    with pytest.raises(TablegenInputError) as raised:
        if argv[0] == "test":
            significance_test(argv[1], **args, score=float(argv[2]))
        else:
            critical_value(argv[1], **args)
    assert python in str(raised.value)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert command_line in err and "method='" not in err


def test_a_confusion_matrix_error_names_the_file_not_the_parameter(tmp_path, capsys):
    a = tmp_path / "a.csv"
    a.write_text("5,1\n1,5\n")
    b = tmp_path / "b.csv"
    b.write_text("5,1,0\n1,5,0\n0,0,4\n")
    assert main(["compare", "f1", str(a), str(b), "--samples", "500"]) == 2
    err = capsys.readouterr().err
    assert f"{b} has 3 classes but {a} has 2" in err and "confusion_" not in err.replace(str(tmp_path), "")
