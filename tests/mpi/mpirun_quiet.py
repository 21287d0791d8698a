#!/usr/bin/env python3
"""mpirun_quiet.py NP RFX ARGS...: rfx under `mpirun -np NP`, as test_cases runs it
(RFX_TEST_BIN, through a one-line shell wrapper), with the launcher's own notes (blocks of
dashes about processes that exited non-zero) taken out of stderr: Open MPI 5's mpirun has no
`-q`. A separate `--tune X` is passed as `--tune=X` (Open MPI reads `--tune` itself)."""
import os
import subprocess
import sys


def quiet(err):
    out, block = [], None
    for line in err.splitlines(keepends=True):
        if line.startswith("-----"):
            if block is None:
                block = []
                continue
            if not any(w in "".join(block) for w in ("mpirun", "prterun", "Primary job")):
                out.append(line)   # not the launcher's: kept as it was
                out.extend(block)
                out.append(line)
            block = None
            continue
        (out if block is None else block).append(line)
    if block is not None:
        out.extend(block)
    return "".join(out)


def main():
    np, rfx, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    fixed, i = [], 0
    while i < len(args):
        if args[i] == "--tune" and i + 1 < len(args):
            fixed.append("--tune=" + args[i + 1])
            i += 2
            continue
        fixed.append(args[i])
        i += 1
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # --bind-to none: Open MPI binds each of two or fewer processes to one core by default,
    # which leaves a process's threads (bucketing, facts, the CPU backend) one core
    p = subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", np, rfx] + fixed, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sys.stdout.buffer.write(p.stdout)
    sys.stderr.write(quiet(p.stderr.decode(errors="surrogateescape")))
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
