"""A round's candidates asked together (`llm.concurrency`), and a server refusing that (HTTP 429) said in the run.

Real Docker sandbox and real HTTP: the scripted endpoint answers 429 to a request that arrives while it
serves another, as a hosted endpoint with a concurrency limit does.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateTested, Message
from tests.agent.conftest import collect
from tests.agent.orchestration.test_candidate_strategy import RIGHT, WRONG, candidates
from tests.support.scripted_llm import Reply, rate_limited

pytestmark = [pytest.mark.docker, pytest.mark.timeout(240)]


def one_at_a_time(seconds: float) -> Any:
    """Greedy gets a wrong fix, hotter candidates the right one; a request arriving while another is served: 429."""
    lock, busy_until = threading.Lock(), [0.0]

    def reply(body: dict[str, Any]) -> Reply:
        with lock:
            now = time.monotonic()
            if now < busy_until[0]:
                return rate_limited(0.05, "Too many concurrent requests for this key")
            busy_until[0] = now + seconds * 0.8
        return Reply(WRONG if body["temperature"] == 0.0 else RIGHT, delay=seconds)

    return reply


async def test_candidates_go_out_together_and_a_429_makes_them_one_at_a_time_with_a_line_in_the_run(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script(one_at_a_time(0.4), step="repair_function")
    settings = make_settings(calc_project, loop=candidates({"rungs_off": ["small edits"]}),
                             llm={"concurrency": 4, "max_retries": 0})
    events, done = await collect(fix(FixRequest(calc_project), settings))

    assert done.outcome == "green", done.summary + done.evidence
    requests = scripted_llm.requests_for("repair_function")
    first = requests[0].at
    assert sum(1 for r in requests if r.at - first < 0.2) >= 2  # sent together, not one after another
    assert 429 in [r.status for r in requests]
    lines = [e.text for e in events if isinstance(e, Message) and "HTTP 429" in e.text]
    assert len(lines) == 1 and "one at a time" in lines[0], [e.text for e in events if isinstance(e, Message)]
    tested = [e for e in events if isinstance(e, CandidateTested)]
    assert tested[0].index == 1 and not tested[0].green  # candidates are read in the order asked
    assert any(e.green for e in tested)
    # each candidate is charged its own call, not what the others spent while it was out
    answered = {r.usage["total_tokens"] for r in requests if r.status == 200 and r.usage}
    assert all(e.tokens in answered for e in tested), ([e.tokens for e in tested], answered)
