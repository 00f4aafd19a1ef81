"""What `memeval run --detach` says it left in the broker: every case it sent waits there until
a worker takes it, where a waiting run keeps a window."""

from __future__ import annotations

from memeval_farm.dispatch import MB
from memeval_farm.executor import held_by_broker
from memeval_farm.settings import FarmSettings


def test_a_detached_dispatch_says_what_the_broker_now_holds() -> None:
    """Past the window's byte cap it says so, and how to avoid it: a detached LongMemEval-M
    run leaves gigabytes in the broker, where a waiting run keeps a window."""
    capped = FarmSettings(broker_url="redis://127.0.0.1:6379/0", dispatch_window_mb=1)
    small = held_by_broker([300 * 1024, 212 * 1024], capped)
    assert "sent 2 cases: 512.0 KB of case bodies wait in the broker" in small
    assert "--detach" not in small
    large = held_by_broker([MB, MB, MB // 2], capped)
    assert "sent 3 cases: 2.5 MB" in large and "run without --detach" in large
    assert "MEMEVAL_DISPATCH_WINDOW_MB" in large
