"""What every test shares: the companion's settings are read afresh after each test.

:func:`companion.kit.config.settings` reads the environment once per process and keeps it.  A test that sets
``COMPANION_SEED`` (or another ``COMPANION_…`` variable) with ``monkeypatch`` and reads the settings leaves them cached
after ``monkeypatch`` has restored the environment, and every later test in that worker then runs at the test's seed:
the chapter-6 explorer test, which reads the active seed, failed after the precompute test that pins seed 7.  This
fixture is set up before a test's own ``monkeypatch``, so its teardown runs after the environment is restored.
"""

import pytest

from companion.kit import config


@pytest.fixture(autouse=True)
def _settings_read_afresh_after_each_test():
    yield
    config.reset_settings()
