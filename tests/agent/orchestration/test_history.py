"""History and loop detection: the same failure with the same plan is noticed."""

from greenloop.agent.orchestration.history import Attempt, History, failure_signature, plan_signature
from greenloop.agent.plan import DebugPlan, EditAction
from greenloop_sandbox import TestFailure, TestReport


def _report(msg: str) -> TestReport:
    return TestReport(failed=1, failures=[TestFailure(test_id="t::a", message=msg)])


def test_same_failure_and_same_plan_repeat() -> None:
    plan = DebugPlan(diagnosis="d", actions=[EditAction(path="a.py", search="x = 1", replace="x = 2")])
    same_plan_other_spacing = DebugPlan(
        diagnosis="other words", actions=[EditAction(path="a.py", search="x  = 1", replace="x = 2")]
    )
    other_plan = DebugPlan(diagnosis="d", actions=[EditAction(path="a.py", search="x = 1", replace="x = 3")])
    h = History()
    f = failure_signature(_report("assert 1 == 2"))
    assert h.repeat_of(f, plan_signature(plan), 1) is None
    assert h.repeat_of(f, plan_signature(other_plan), 2) is None
    assert h.repeat_of(f, plan_signature(same_plan_other_spacing), 3) == 1
    assert h.repeat_of(failure_signature(_report("assert 5 == 2")), plan_signature(plan), 4) is None


def test_render_lists_recent_attempts() -> None:
    h = History()
    assert h.render() == ""
    h.add(Attempt(iteration=1, failing="t::a: boom", diagnosis="off by one", actions=["edit a.py"], outcome="still failing"))
    text = h.render()
    assert "Iteration 1" in text and "off by one" in text and "still failing" in text
