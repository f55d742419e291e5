"""Every entry point refuses bad input with a tablegen error or answers: never a traceback, never a hang.

The cases come from ``fuzz_entry_points.py``: one bad value at a time for every option of every command and
every parameter of every public function (their count is checked: at least 600), and a hypothesis strategy per
entry point that replaces several at once.  The contract tests (fast) fail when a command, option or public
function has no bad-input case; running the cases is slow.
"""

from __future__ import annotations

import contextlib
import io
import os

import pytest
from clitools import bounded
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from progresstools import HANG_SECONDS

from tablegen.cli.main import build_parser, command_parsers, main
from tablegen.errors import TablegenInputError
from tests.contracts import fuzz_entry_points as fuzz

SECONDS_PER_CASE = HANG_SECONDS  # a hang, not a slow machine: one case takes a second or two
#: Exit codes a command may give a bad input: an answer (0) or a refusal of tablegen.errors; never 1 (a bug).
ALLOWED_EXITS = {0, 2, 3, 4, 5, 6}


def _tree(root) -> dict:
    return {os.path.join(d, f): os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-inputs")
    fuzz.make_files(root)
    return root


def run_cli(argv: list[str], workdir) -> tuple[int, str]:
    """Exit code and standard error of ``tablegen argv`` run in ``workdir``; asserts the contract."""
    before, cwd = _tree(workdir), os.getcwd()
    err = io.StringIO()
    os.chdir(workdir)
    try:
        with bounded(SECONDS_PER_CASE), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:  # argparse's usage errors
                code = exit_.code
    finally:
        os.chdir(cwd)
    assert code in ALLOWED_EXITS, (argv, code, err.getvalue()[-2000:])
    assert "Traceback" not in err.getvalue(), (argv, err.getvalue()[-2000:])
    if code != 0:
        assert _tree(workdir) == before, f"{argv} refused (exit {code}) but wrote files"
    else:  # an answer may write its output or store: start the next case clean
        for path in set(_tree(workdir)) - set(before):
            os.unlink(path)
    return code, err.getvalue()


def call_python(function, kwargs: dict, workdir):
    """``function(**kwargs)`` run in ``workdir``: an answer, or None when refused with a tablegen error (the
    contract).  A function given a relative path (``path='x'``: a figure written as x.png) writes there, and the
    files it wrote are removed."""
    before, cwd = set(os.listdir(workdir)), os.getcwd()
    os.chdir(workdir)
    try:
        with bounded(SECONDS_PER_CASE):
            try:
                return function(**kwargs)
            except TablegenInputError:
                return None
    finally:
        os.chdir(cwd)
        for name in set(os.listdir(workdir)) - before:  # a figure: the next case starts clean
            path = os.path.join(workdir, name)
            if not os.path.isdir(path) or os.path.islink(path):  # a run's store stays: later runs resume it
                os.unlink(path)


COMMANDS = list(command_parsers(build_parser()))


# -- contract (fast) -----------------------------------------------------------------------------------
def test_every_command_and_option_has_bad_inputs():
    missing = [" ".join(words) for words, _ in COMMANDS if words not in fuzz.CLI_BASELINES]
    assert not missing, f"commands without a baseline in tests/contracts/fuzz_entry_points.py: {missing}"
    for words, parser in COMMANDS:
        for action in fuzz.value_actions(parser):
            assert fuzz.pool_for(action), (words, action.dest)  # raises, naming the option, if it has no pool


def test_every_public_function_has_bad_inputs(workdir):
    import inspect

    import tablegen
    import tablegen.compare

    public = {name: getattr(tablegen, name) for name in tablegen._PUBLIC}
    public.update({name: getattr(tablegen.compare, name) for name in tablegen.compare.__all__})
    baselines = fuzz.py_baselines(workdir)
    functions = {name for name, obj in public.items() if not inspect.isclass(obj)}
    classes = {name for name, obj in public.items() if inspect.isclass(obj)}
    assert functions <= set(baselines), f"public functions without a baseline: {sorted(functions - set(baselines))}"
    unknown = classes - fuzz.RESULT_TYPES
    assert not unknown, f"public classes neither results nor entry points: {unknown}"


def test_at_least_600_bad_inputs(workdir):
    cli, python = fuzz.cli_cases(COMMANDS), fuzz.py_cases(fuzz.py_baselines(workdir))
    assert len(cli) + len(python) >= 600, (len(cli), len(python))


# -- every case (slow) ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_every_command_refuses_or_answers_each_bad_value(workdir):
    codes = {}
    for words, argv in fuzz.cli_cases(COMMANDS):
        code, _ = run_cli(argv, workdir)
        codes.setdefault(code, []).append(argv)
    print({code: len(cases) for code, cases in sorted(codes.items())})


@pytest.mark.slow
def test_every_public_function_refuses_or_answers_each_bad_value(workdir):
    baselines = fuzz.py_baselines(workdir)
    outcomes, gaps, made = {"refused": 0, "answered": 0}, set(), {}
    for name, parameter, value in fuzz.py_cases(baselines):
        function, make = baselines[name]
        kwargs = made[name] if name in made else made.setdefault(name, make())
        try:
            answer = call_python(function, {**kwargs, parameter: value}, workdir)
        except Exception as error:  # noqa: BLE001 - the report names the case
            if (name, parameter) in fuzz.KNOWN_GAPS:
                gaps.add((name, parameter))
                continue
            raise AssertionError(f"{name}({parameter}={value!r}) raised {type(error).__name__}: {error}") from None
        outcomes["refused" if answer is None else "answered"] += 1
    assert gaps == fuzz.KNOWN_GAPS, f"fixed: remove {fuzz.KNOWN_GAPS - gaps} from KNOWN_GAPS"
    print(outcomes)


# -- hypothesis: several bad values at once, a strategy per entry point (slow) ---------------------------
def cli_strategy(words, parser):
    """argv of ``words`` with one to three options or positionals given bad values."""
    actions = fuzz.value_actions(parser)
    flags = [a.option_strings[0] for a in parser._actions if isinstance(a, fuzz.FLAGS) and a.option_strings
             and a.dest not in ("help", "verbose")]

    @st.composite
    def build(draw):
        argv = fuzz.CLI_BASELINES[words]()
        for action in draw(st.lists(st.sampled_from(actions), min_size=1, max_size=3, unique_by=id)):
            argv = fuzz.with_value(argv, action, draw(st.sampled_from(fuzz.pool_for(action))), parser)
        return [*words, *argv, *draw(st.lists(st.sampled_from(flags or ["-v"]), max_size=2))]
    return build()


@pytest.mark.slow
@pytest.mark.parametrize("words", [words for words, _ in COMMANDS], ids=" ".join)
def test_generated_bad_command_lines(words, workdir):
    parser = dict(COMMANDS)[words]

    @settings(max_examples=10, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(argv=cli_strategy(words, parser))
    def case(argv):
        run_cli(argv, workdir)
    case()


def py_strategy(name: str, function):
    """Keyword arguments of ``name`` with one to three parameters given bad values."""
    import inspect

    parameters = [p for p in inspect.signature(function).parameters if p not in fuzz.CALLBACKS]
    values = fuzz.FEW_VALUES.get(name, fuzz.PY_VALUES)
    return st.dictionaries(st.sampled_from(parameters), st.sampled_from(values), min_size=1, max_size=3)


@pytest.mark.slow
def test_generated_bad_python_calls(workdir):
    baselines = fuzz.py_baselines(workdir)
    for name, (function, make) in sorted(baselines.items()):
        kwargs = make()

        @settings(max_examples=4, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
        @given(bad=py_strategy(name, function))
        def case(bad):
            if any((name, parameter) in fuzz.KNOWN_GAPS for parameter in bad):
                return
            try:
                call_python(function, {**kwargs, **bad}, workdir)
            except Exception as error:  # noqa: BLE001 - the report names the case
                raise AssertionError(f"{name}(**{bad!r}) raised {type(error).__name__}: {error}") from None
        case()
