"""The one delay schedule: its delays, its cap, its jitter, its attempt limit and its budget, and
the numbers each of its users states."""

from __future__ import annotations

import random

import pytest

from fuseforks.core.backoff import Backoff
from fuseforks.stores.postgres_append import APPEND_BACKOFF, APPEND_PATIENCE, Patience
from fuseforks.wires.http import RetryPolicy
from fuseforks.workers.worker import REDELIVERY


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_delay_doubles_from_the_base_up_to_the_cap() -> None:
    backoff = Backoff(base=0.5, cap=3.0)
    assert [backoff.delay(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]


def test_a_delay_far_down_the_schedule_is_the_cap() -> None:
    backoff = Backoff(base=1.0, cap=60.0)
    assert backoff.delay(5000) == 60.0
    assert backoff.delay(0) == backoff.delay(1) == 1.0


def test_jitter_scales_each_delay_within_its_bounds() -> None:
    backoff = Backoff(base=1.0, cap=8.0, jitter=0.25)
    rng = random.Random(7)
    for n in range(1, 8):
        plain = backoff.delay(n)
        jittered = backoff.delay(n, rng)
        assert plain * 0.75 <= jittered <= plain * 1.25
    assert Backoff(base=1.0, cap=8.0).delay(3, random.Random(7)) == 4.0


def test_the_attempt_limit_counts_the_first_try() -> None:
    backoff = Backoff(base=1.0, cap=8.0, attempts=3)
    assert [backoff.allows(n) for n in range(1, 5)] == [True, True, False, False]
    assert Backoff(base=1.0, cap=8.0).allows(10_000)


def test_a_run_waits_the_schedule_until_its_attempts_are_spent() -> None:
    clock = Clock()
    run = Backoff(base=0.1, cap=0.4, attempts=5).start(clock)
    delays = [run.next() for _ in range(5)]
    assert delays == [0.1, 0.2, 0.4, 0.4, None]
    assert run.retries == 4
    assert run.left() == float("inf")


def test_a_run_gives_no_try_that_would_come_after_its_budget() -> None:
    clock = Clock()
    run = Backoff(base=0.1, cap=1.0, budget=2.0).start(clock)
    waited = []
    while (delay := run.next()) is not None:
        waited.append(delay)
        clock.now += delay
    assert waited == [0.1, 0.2, 0.4, 0.8]  # 1.5 s; a further 1 s would end past 2 s
    assert run.left() == pytest.approx(2.0 - sum(waited))
    clock.now += 1.0
    assert run.left() == 0.0


def test_each_user_states_its_own_numbers() -> None:
    append = [APPEND_BACKOFF.delay(n) for n in range(1, 7)]
    assert append == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert APPEND_BACKOFF.budget == APPEND_PATIENCE == 15.0
    assert [REDELIVERY.delay(n) for n in (1, 2, 3, 6, 7, 8)] == [1, 2, 4, 32, 60, 60]
    policy = RetryPolicy()
    assert policy.backoff == Backoff(base=1.0, cap=30.0, jitter=0.25, attempts=5)
    assert policy.delay(2, 90.0, random.Random(1)) == 60.0  # Retry-After, capped


def test_patience_says_no_once_its_budget_is_spent() -> None:
    patience = Patience(0.25)  # waits 0.1 s; a further 0.2 s would come too late
    assert patience.retry()
    assert not patience.retry()
    assert patience.tries == 1
    assert 0.0 <= patience.left() <= 0.15
