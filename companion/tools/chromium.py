"""Headless Chromium for the tools that print the site (the book's PDF, :mod:`companion.tools.pdf`) and for the browser
tests: Debian's ``chromium`` driven by Playwright, and a local HTTP server for a built folder.

Playwright never downloads a browser here (no ``playwright install``): it drives the system's Chromium, named by
``COMPANION_CHROMIUM`` (default ``/usr/bin/chromium``), without its sandbox (the tools may run as root), with
nothing that would reach the network by itself.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("COMPANION_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def missing() -> tuple[str, str] | None:
    """What is not installed for driving Chromium, and how to install it; None when nothing is missing."""
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"Chromium ({CHROMIUM})", "install Debian's package with `apt-get install -y chromium`"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright", "install the project's dev extra: pip install -e '.[dev]'"
    return None


def launch(playwright: Any) -> Any:
    """Headless Chromium (no Chromium sandbox: the tools and tests may run as root)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, chromium_sandbox=False)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` over HTTP on 127.0.0.1 in a thread; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
