"""Random programs of 3-30 statements, compiled (``hg.function``, kernels on) against eager for
value, gradient and HVP (see ``op_programs``): a fixed budget of seeds here, the long run is
``python tests/harness/fuzz.py --minutes N --out DIR`` (README, "Testing")."""

import pytest

import op_programs

SEEDS = list(range(20))
# Programs the long run found (issue 40 part 1: sorts along an axis of length one or of a 0-d
# value reshaped, then medians; their compiled gradients failed), kept as regressions.
FOUND = [59, 63, 20051]
# Programs that show an open bug: strict xfails whose reason names it.
KNOWN = {}


def _param(seed):
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN[seed])] if seed in KNOWN else []
    return pytest.param(seed, id=f"seed{seed}", marks=marks)


@pytest.mark.parametrize("seed", [_param(s) for s in SEEDS + FOUND + sorted(KNOWN)])
def test_compiled_program_agrees_with_eager(seed):
    program = op_programs.Program(seed)
    problems = op_programs.run(program, forced=False)
    assert not problems, f"seed {seed}:\n{program.source}\n" + "\n".join(problems)


@pytest.mark.slow
def test_a_reproducer_is_a_standalone_script(tmp_path):
    """The script written for a failure runs on its own and reports the program's result."""
    import os
    import subprocess
    import sys

    import hessgrad

    root = os.path.dirname(os.path.dirname(os.path.abspath(hessgrad.__file__)))
    env = {**os.environ, "PYTHONPATH": root}  # this checkout's hessgrad, as the test's
    program = op_programs.Program(3, statements=4)
    path = tmp_path / "program_3.py"
    path.write_text(op_programs.reproducer(program, ["(an example disagreement)"]))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0 and "all modes agree" in done.stdout, done.stderr
