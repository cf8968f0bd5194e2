"""The op-by-op harness (issue 40, part 4): every sample of every public function through
values, gradients, HVPs and Hessians in every mode (see ``op_modes``), compared with each other
and with finite differences to second order; and every public function has samples."""

import pytest

import op_catalog
from op_modes import check


def _param(s):
    marks = [pytest.mark.xfail(strict=True, reason=s.xfail)] if s.xfail else []
    if s.id not in op_catalog.EVERY_MODE:
        # A function's further samples (core modes only) are left out of the quick subset,
        # ``-m "not slow"``: it checks every function's first sample, in every mode.
        marks.append(pytest.mark.slow)
    return pytest.param(s, id=s.id, marks=marks)


@pytest.mark.parametrize("s", [_param(s) for s in op_catalog.SAMPLES])
def test_sample_agrees_in_every_mode(s):
    problems = check(s, every_mode=s.id in op_catalog.EVERY_MODE, forced_kernels=op_catalog.FULL)
    assert not problems, f"{s.id} disagrees:\n  " + "\n  ".join(problems)


def test_every_public_function_has_samples():
    sampled = {s.name for s in op_catalog.SAMPLES}
    missing = sorted(op_catalog.public_functions() - sampled - set(op_catalog.EXCLUDED))
    assert not missing, f"public functions without samples (add them to an op_samples_* " \
                        f"table, or to EXCLUDED with a reason): {missing}"


def test_exclusions_are_public_and_unsampled():
    """An exclusion names a public function that has no samples (a stale entry goes)."""
    public = op_catalog.public_functions()
    sampled = {s.name for s in op_catalog.SAMPLES}
    assert set(op_catalog.EXCLUDED) <= public - sampled


def test_sample_ids_are_unique():
    ids = [s.id for s in op_catalog.SAMPLES]
    assert len(ids) == len(set(ids))


def test_known_bugs_name_samples():
    """Every entry of op_known_bugs names a sample (a renamed or removed sample: delete it)."""
    ids = {s.id for s in op_catalog.SAMPLES}
    assert not set(op_catalog.KNOWN) - ids, sorted(set(op_catalog.KNOWN) - ids)
