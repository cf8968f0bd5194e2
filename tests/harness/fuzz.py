"""Random-program fuzzing for as long as asked: compiled against eager (see op_programs).

    python tests/harness/fuzz.py --minutes 30 --out fuzz-failures [--seed 1000] [--no-forced]

Programs are numbered from ``--seed``; each failure is written to ``OUT/program_<seed>.py``, a
standalone script (needs only hessgrad) that prints the disagreements and exits 1 while they
last. ``--no-forced`` skips the fused kernels forced on small arrays (each novel program
otherwise costs a Numba compilation: seconds)."""

import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import op_programs  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--out", default="fuzz-failures")
    parser.add_argument("--seed", type=int, default=1000, help="first program number")
    parser.add_argument("--no-forced", action="store_true",
                        help="skip kernels forced on small arrays (faster)")
    parser.add_argument("--no-empty", action="store_true", help="no size-0 inputs")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    warnings.simplefilter("ignore")
    deadline = time.time() + 60 * args.minutes
    seed, runs, failures = args.seed, 0, 0
    while time.time() < deadline:
        program = op_programs.Program(seed, empty=not args.no_empty)
        problems = op_programs.run(program, forced=not args.no_forced)
        runs += 1
        if problems:
            failures += 1
            path = os.path.join(args.out, f"program_{seed}.py")
            with open(path, "w") as out:
                out.write(op_programs.reproducer(program, problems))
            print(f"seed {seed}: {problems[0][:200]} -> {path}", flush=True)
        seed += 1
    print(f"{runs} programs (seeds {args.seed}-{seed - 1}), {failures} failing, written to "
          f"{args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
