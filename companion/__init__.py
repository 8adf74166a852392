"""Companion to 深度学习现象导论 (Xu Zhiqin, Zhang Yaoyu): the book's phenomena, reproduced and checked.

Each module holds one mechanism the chapters use; see DESIGN.md and the README's chapter map.
Importing the package reads the profile, seed and thread count once (:mod:`companion.config`),
so torch never runs small matrix products on oversubscribed threads.
"""

from .config import settings

__version__ = "0.1.0"

settings()
