"""Companion to 深度学习现象导论 (Xu Zhiqin, Zhang Yaoyu): the book's phenomena, reproduced and checked.

Each module holds one mechanism the chapters use; see DESIGN.md and the README's chapter map.
"""

__version__ = "0.1.0"
