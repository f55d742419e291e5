"""Which kernel a computation called: a kernel module's function replaced, for one test, by one that notes an
argument of each call and then runs it (the lane kernels' tests check that the engines take the lanes exactly
where they apply)."""

from __future__ import annotations


def recorded_calls(monkeypatch, module, name: str, argument: int) -> list:
    """Replace ``module.name`` (for the test ``monkeypatch`` serves) by a function noting ``arguments[argument]`` of
    each call, as a list, before calling the original; the list of notes, filled as the calls come."""
    calls = []
    original = getattr(module, name)

    def recording(*arguments):
        calls.append(arguments[argument].tolist())
        return original(*arguments)

    monkeypatch.setattr(module, name, recording)
    return calls
