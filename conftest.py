"""Test-session settings: a fresh results cache, no progress bars, the English edition; nbval's kernels over
private IPC sockets.

The environment is set before any notebook kernel starts, so nbval's kernels inherit it: every
claim in a test run is computed afresh, never read from a developer's cache.

The session's temporary files (the results cache, about 100 MB after a full run, and the kernels' sockets) live in
one folder ``companion-tests-…`` of the temporary directory, made by the process that starts the session (the
xdist workers inherit its environment and share the cache) and removed when that process ends.

nbval starts its kernels with jupyter_client's defaults: TCP on 127.0.0.1, each port found by binding port 0 and
closing it again before the kernel binds it.  jupyter_client remembers the ports it handed out only within one
process, so the two xdist workers (and any other program's outgoing connections) can be given the same port at the
same moment; the kernel that loses fails to bind and exits, its stderr goes to /dev/null under nbval, and every cell
of that notebook errors with "Kernel died before replying to kernel_info" (ch11, once, in a quiet run).  Here nbval's
kernels talk over IPC sockets in a folder of their own, as the runner's do: no port is shared, so none can clash.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

if "COMPANION_TEST_SESSION" not in os.environ:  # the process that starts the session (xdist's controller)
    _session = tempfile.mkdtemp(prefix="companion-tests-")
    os.environ["COMPANION_TEST_SESSION"] = _session
    atexit.register(shutil.rmtree, _session, ignore_errors=True)
    os.environ.setdefault("COMPANION_CACHE", os.path.join(_session, "cache"))
os.environ["COMPANION_PROGRESS"] = "0"
os.environ["COMPANION_LANG"] = "en"  # the committed notebooks are the English edition
# Under pytest-xdist every worker runs its own notebooks at once: a kernel must not lend itself a second torch
# thread (config.batched_threads) while the other workers keep the other cores busy.  Oversubscribed, ch12 took
# 14 min instead of 2.5 on the 2-core machine.  An explicit COMPANION_THREADS turns the lending off.
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _workers > 1:
    os.environ.setdefault("COMPANION_THREADS", str(max(1, (os.cpu_count() or 1) // _workers)))


def _nbval_kernels_over_ipc() -> None:
    """Make nbval start each kernel on IPC sockets in a new folder of the session's (see the module docstring)."""
    try:
        from nbval import kernel as nbval_kernel
    except ImportError:  # nbval is not installed: no notebook is collected
        return
    from jupyter_client.manager import KernelManager

    from companion.tools.runner import kernel_transport

    sockets = Path(os.environ["COMPANION_TEST_SESSION"]) / "kernels"

    class IPCKernelManager(KernelManager):
        def __init__(self, **kwargs):
            sockets.mkdir(parents=True, exist_ok=True)
            transport, ip = kernel_transport(Path(tempfile.mkdtemp(dir=sockets)))  # TCP if a socket's path is too long
            kwargs.setdefault("transport", transport)
            kwargs.setdefault("ip", ip)
            super().__init__(**kwargs)

    nbval_kernel.KernelManager = IPCKernelManager


_nbval_kernels_over_ipc()

