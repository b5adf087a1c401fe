"""Imported by the bench scripts before numpy: OpenBLAS's worker threads, which numpy's
matmul baselines wake, spin for about 2^28 cycles (~0.1 s) after each call before they
sleep, on every core; the case timed next (a simulator matmul, which runs on the same
cores) then ran at half speed (1024^3 HiFi4 26 -> 50 ms right after `x @ y`).
OpenBLAS reads OPENBLAS_THREAD_TIMEOUT (2^n cycles of spinning, 4 <= n <= 30) when it
loads, so this must come first; numpy's own matmul is as fast with it (10.7-12.9 ms
either way here)."""

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
