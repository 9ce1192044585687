"""The fakes' way of answering (``e2e_fakes.Exposition``): a scrape never waits for a render,
a change is seen at the next scrape, and a stopped target refuses its kept-alive
connections too, as a killed process does."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import requests

from tests.e2e.e2e_clock import RENDER_S
from tests.e2e.e2e_fakes import TEXT_FORMAT, Exposition
from tests.e2e.e2e_prometheus import wait_for

ANSWER_S = 1.0
"""Bound for one answer of a fake on 127.0.0.1: a copy of bytes."""


class _Renders:
    """A render that answers ``first`` once, then blocks until released and answers
    ``later``."""

    def __init__(self) -> None:
        self.calls = 0
        self.released = threading.Event()

    def __call__(self) -> tuple[bytes, str]:
        self.calls += 1
        if self.calls == 1:
            return b"first 1\n", TEXT_FORMAT
        self.released.wait(60)
        return b"later 2\n", TEXT_FORMAT


@pytest.fixture
def served() -> Iterator[tuple[Exposition, _Renders, requests.Session]]:
    renders = _Renders()
    target = Exposition(renders)
    target.start()
    session = requests.Session()
    try:
        yield target, renders, session
    finally:
        renders.released.set()
        target.stop()
        session.close()


def test_a_scrape_gets_the_last_rendered_bytes_while_a_render_is_stuck(
    served: tuple[Exposition, _Renders, requests.Session],
) -> None:
    target, renders, session = served
    url = f"http://127.0.0.1:{target.port}/metrics"
    wait_for("a render under way", lambda: renders.calls, lambda n: n >= 2, 10 * RENDER_S)
    for _ in range(5):
        answer = session.get(url, timeout=ANSWER_S)
        assert answer.content == b"first 1\n"
        assert answer.headers["Content-Type"] == TEXT_FORMAT
    renders.released.set()
    wait_for(
        "the new render served",
        lambda: session.get(url, timeout=ANSWER_S).content,
        lambda body: body == b"later 2\n",
        10 * RENDER_S,
    )


def test_a_stopped_target_refuses_its_kept_alive_connections(
    served: tuple[Exposition, _Renders, requests.Session],
) -> None:
    target, renders, session = served
    url = f"http://127.0.0.1:{target.port}/metrics"
    renders.released.set()
    assert session.get(url, timeout=ANSWER_S).status_code == 200
    target.stop()
    with pytest.raises(requests.ConnectionError):
        session.get(url, timeout=ANSWER_S)
    with pytest.raises(requests.ConnectionError):
        requests.get(url, timeout=ANSWER_S)
