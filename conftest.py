"""Test-session settings: a fresh results cache, no progress bars, the English edition.

The environment is set before any notebook kernel starts, so nbval's kernels inherit it: every
claim in a test run is computed afresh, never read from a developer's cache.
"""

import os
import tempfile

os.environ.setdefault("COMPANION_CACHE", tempfile.mkdtemp(prefix="companion-cache-"))
os.environ["COMPANION_PROGRESS"] = "0"
os.environ["COMPANION_LANG"] = "en"  # the committed notebooks are the English edition
