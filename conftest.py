"""Test-session settings: a fresh results cache, no progress bars, the English edition.

The environment is set before any notebook kernel starts, so nbval's kernels inherit it: every
claim in a test run is computed afresh, never read from a developer's cache.
"""

import os
import tempfile

os.environ.setdefault("COMPANION_CACHE", tempfile.mkdtemp(prefix="companion-cache-"))
os.environ["COMPANION_PROGRESS"] = "0"
os.environ["COMPANION_LANG"] = "en"  # the committed notebooks are the English edition
# Under pytest-xdist every worker runs its own notebooks at once: a kernel must not lend itself a second torch
# thread (config.batched_threads) while the other workers keep the other cores busy.  Oversubscribed, ch12 took
# 14 min instead of 2.5 on the 2-core machine.  An explicit COMPANION_THREADS turns the lending off.
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _workers > 1:
    os.environ.setdefault("COMPANION_THREADS", str(max(1, (os.cpu_count() or 1) // _workers)))

import companion  # noqa: E402,F401 — sets OMP_WAIT_POLICY=PASSIVE before any test imports torch (and for nbval's kernels)
