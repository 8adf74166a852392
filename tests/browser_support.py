"""Shared helpers of the browser tests: find Chromium, launch it, serve a folder, collect console errors.

The browser is Debian's ``chromium`` driven by Playwright (never ``playwright install``: it would
download a browser). Without Chromium, Playwright or Jupyter Book the browser tests are skipped
on a developer's machine but *fail* in CI (``CI=true``), so a missing install never passes
silently.  ``COMPANION_CHROMIUM`` names another Chromium binary (default ``/usr/bin/chromium``).
"""

from __future__ import annotations

import importlib.util
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from companion.tools import chromium
from companion.tools.chromium import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: F401 - the tests' helpers, shared with the tools

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(what: str, how: str) -> None:
    """Skip the test (developer machine) or fail it (CI) because ``what`` is not installed."""
    message = f"{what} is not installed, so the browser tests cannot run: {how}"
    if IN_CI:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def require_chromium() -> str:
    problem = chromium.missing()
    if problem:
        missing(*problem)
    return CHROMIUM


def require_jupyter_book() -> None:
    if importlib.util.find_spec("jupyter_book") is None:
        missing("Jupyter Book", "install the project's dev extra: pip install -e '.[dev]'")


def launch(playwright: Any) -> Any:
    """Headless Debian Chromium (no Chromium sandbox: the tests may run as root)."""
    require_chromium()
    return chromium.launch(playwright)


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """A headless Chromium for one test module (through Playwright), closed at the end."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of the book site (:func:`built_site`), served on 127.0.0.1 while the module's tests run; a test
    module takes it with ``from browser_support import site_url``."""
    require_chromium()
    with serve(built_site(tmp_path_factory)) as url:
        yield url


class PageLog:
    """Console errors, uncaught exceptions, failed and non-local requests of one page."""

    def __init__(self, page: Any, allowed_404: tuple[str, ...] = ("/favicon.ico",)) -> None:
        self.errors: list[str] = []
        self.allowed_404 = allowed_404
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("requestfailed", self._request_failed)
        page.on("request", self._request)
        page.on("response", self._response)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            location = message.location.get("url", "") if message.location else ""
            if not (location.endswith(self.allowed_404) and "404" in message.text):
                self.errors.append(f"console error: {message.text} ({location})")

    def _request_failed(self, request: Any) -> None:
        """A failed request is an error, except a picture's load the browser gave up (net::ERR_ABORTED) because its
        ``src`` changed first: an explorer moved faster than its pictures load (a missing picture is an HTTP 404)."""
        if request.resource_type == "image" and request.failure == "net::ERR_ABORTED":
            return
        self.errors.append(f"request failed: {request.url} ({request.failure})")

    def _request(self, request: Any) -> None:
        if not request.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:")):
            self.errors.append(f"request left localhost: {request.url}")

    def _response(self, response: Any) -> None:
        if response.status >= 400 and not response.url.endswith(self.allowed_404):
            self.errors.append(f"HTTP {response.status}: {response.url}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def isolated_env(home: Path) -> dict[str, str]:
    """Environment whose home, Jupyter, IPython, matplotlib and XDG folders all lie under ``home``."""
    folders = {"HOME": "", "JUPYTER_CONFIG_DIR": "jupyter/config", "JUPYTER_DATA_DIR": "jupyter/data",
               "JUPYTER_RUNTIME_DIR": "jupyter/runtime", "IPYTHONDIR": "ipython", "MPLCONFIGDIR": "mpl",
               "XDG_CONFIG_HOME": "xdg/config", "XDG_CACHE_HOME": "xdg/cache", "XDG_DATA_HOME": "xdg/data",
               "XDG_RUNTIME_DIR": "xdg/runtime"}
    env = dict(os.environ)
    for name, sub in folders.items():
        path = home / sub
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    return env


def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The book built by the README's command (warnings are errors) once per test session.

    Under pytest-xdist every worker has its own base temporary folder below a common one; the site is
    built there once, under a file lock, and the other workers read it.  Returns the folder holding
    ``index.html``.
    """
    require_jupyter_book()
    from filelock import FileLock

    from companion.__main__ import main

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "book-site"
    html = out / "_build" / "html"
    with FileLock(str(shared / "book-site.lock")):
        if not (html / "index.html").exists():
            assert main(["book", "--out", str(out)]) == 0, "`python -m companion book` failed (its output is above)"
    return html
