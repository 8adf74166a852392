"""companion.kit.memory: a long run hands the memory its steps freed back to the operating system
(``benchmarks/memory_release.py`` measures what that saves: chapter 9's full profile grew to 12 GB without it)."""

import platform
import sys

import pytest

from companion.core.train import run
from companion.kit import memory


def test_releaser_asks_at_most_once_per_interval(monkeypatch):
    asked = []
    monkeypatch.setattr(memory, "release_free_memory", lambda: asked.append(1) or True)
    now = [0.0]
    release = memory.MemoryReleaser(1.0, clock=lambda: now[0])
    for t in (0.0, 0.3, 0.9, 1.0, 1.5, 2.2, 2.3):
        now[0] = t
        release()
    assert release.releases == len(asked) == 3  # at 0.0, 1.0 and 2.2
    with pytest.raises(ValueError, match="seconds must be ≥ 0"):
        memory.MemoryReleaser(-1.0)


@pytest.mark.parametrize("seconds, releases", [(0.0, 7), (float("inf"), 1)])
def test_the_engine_releases_after_its_steps(monkeypatch, seconds, releases):
    asked = []
    monkeypatch.setattr(memory, "release_free_memory", lambda: asked.append(1) or True)
    monkeypatch.setattr(memory, "RELEASE_EVERY_SECONDS", seconds)
    run(lambda step: None, steps=7, record=lambda step: {}, record_every=7, progress=False)
    assert len(asked) == releases


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's")
def test_glibc_can_be_asked():
    assert memory.release_free_memory() is True
