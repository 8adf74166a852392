"""Companion to 深度学习现象导论 (Xu Zhiqin, Zhang Yaoyu): the book's phenomena, reproduced and checked.

The package has four layers, each importing only those below it (see docs/architecture.md):

* :mod:`companion.kit` — the lab equipment (settings, claims, cache, plots, widgets, exercises);
* :mod:`companion.core` — the science, each idea of the book once (nets, the training engine, …);
* :mod:`companion.experiments` — one module per chapter notebook;
* :mod:`companion.tools` — catalog, runner, robustness sweep, site, command line.

Importing the package reads the profile, seed, thread count and language once (:mod:`companion.kit.config`),
so torch never runs small matrix products on oversubscribed threads.  A bad ``COMPANION_*`` value does not stop the
import: the first use of the settings names it (a notebook's setup cell, or the command line, which exits with it).
"""

from companion.kit.config import ConfigError, settings

__version__ = "0.1.0"

try:
    settings()
except ConfigError:
    pass
