"""numpy's linear algebra on one thread, set before numpy is first imported.

The ratings' matrices are small (bots x bots), and a threaded BLAS splits each solve between
threads that wait on each other by spinning; beside bots, a store writer or other work on the
machine, that spinning is nearly all of the cost (measured on 2 busy cores: 41 ms of CPU for
one 200 x 200 solve with OpenBLAS's threads, 0.8 ms on one). A thread count the user set is
kept; a bot never sees these (it gets an environment of its own).
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
