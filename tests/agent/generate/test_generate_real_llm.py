"""The embedded model generates a tiny project end to end; the run must end with a report, whatever it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.agent.events import Done, Event
from greenloop.agent.generate import GenerateRequest, generate
from greenloop.settings import load_settings

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(1500)]

PROMPT = (
    "A Python module wordcount.py with count_words(text: str) -> int returning the number of "
    "whitespace-separated words. Include pytest tests."
)


async def test_the_embedded_model_generates_a_word_counter(tmp_path: Path) -> None:
    settings = load_settings(
        tmp_path,
        {
            "sandbox": {"backend": "local"},
            "loop": {"max_iterations": 2, "max_seconds": 900},
            "runs": {"store": str(tmp_path / "runs.sqlite3")},
        },
    )
    out = tmp_path / "out"
    events: list[Event] = [e async for e in generate(GenerateRequest(PROMPT, out), settings)]
    done = events[-1]
    assert isinstance(done, Done)
    assert done.summary and done.run_id
    assert events[0].kind == "run_started"
    if done.outcome != "error":  # the files step finished: the planned files are on disk
        assert (out / ".greenloop" / "plan.md").is_file()
        assert {c.path for c in done.changes.files} <= {p.relative_to(out).as_posix() for p in out.rglob("*")}
        assert done.prompt_tokens > 0
    print(
        f"\n{done.outcome}: {done.summary}\niterations {done.iterations}, "
        f"tokens {done.prompt_tokens}+{done.completion_tokens}, {done.seconds:.0f} s"
    )
