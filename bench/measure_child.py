"""Run one command and write its wall time, CPU time and peak RSS as JSON: ``measure_child.py OUT CMD...``.

run.py starts every measured command through this small launcher (as ``python -S``) because on Linux a
child's ``ru_maxrss`` starts at its parent's resident size: ``exec`` keeps the high-water mark of the memory
it replaces.  Measured straight from run.py, a command could never look smaller than run.py itself; through
this launcher the floor is that of a bare interpreter (a few MiB).  ``os.wait4`` reports the command's own
usage plus that of its descendants that it waited for (worker processes); ``ru_maxrss`` is then the peak
of the largest single process, not a sum.  Standard input, output and error are passed through.
"""

import json
import os
import sys
import time


def main() -> int:
    out_path, cmd = sys.argv[1], sys.argv[2:]
    t0 = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    usage = {"wall_s": wall, "user_s": ru.ru_utime, "sys_s": ru.ru_stime, "maxrss": ru.ru_maxrss, "rc": rc}
    with open(out_path, "w") as f:
        json.dump(usage, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
