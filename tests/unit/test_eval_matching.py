"""Step judging against reference actions: PS, CR and GPT4Tools' SR_act / SR_args / SR."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.mobile_eval.matching import ActionRef, ReferenceStep, args_score, judge_steps


def act(name: str, **params) -> ActionRef:
    inside = ", ".join(str(v) for v in params.values())
    return ActionRef(name, params, f"{name} ({inside})" if params else name)


def ref(*alternatives: ActionRef) -> ReferenceStep:
    return ReferenceStep(tuple(alternatives))


NOTE = [
    ref(act("open_app", app="Notes"), act("click_text", text="Notes")),
    ref(act("click_icon", icon="plus", position="bottom right")),
    ref(act("type", text="Hello, this is a note")),
    ref(act("click_text", text="Save")),
]


def test_the_reference_itself_scores_full_marks():
    actions = [step.alternatives[0] for step in NOTE] + [act("stop")]
    scores = judge_steps(actions, NOTE)
    assert scores.agent_steps == 4  # the final Stop is not a step, as in the paper
    assert scores.ps == 1.0
    assert scores.sr_act == scores.sr_args == scores.sr == 1.0
    assert scores.cr(success=False) == 1.0


def test_an_alternative_counts_as_the_reference_step():
    actions = [act("click_text", text="Notes"), *(s.alternatives[0] for s in NOTE[1:])]
    assert judge_steps(actions, NOTE).ps == 1.0


def test_a_detour_lowers_ps_but_not_cr():
    # The Notes/2 run of the paper: a wrong icon, back, then the right path (6 steps, 4 correct).
    actions = [
        act("click_icon", icon="white square", position="center"),
        act("back"),
        act("open_app", app="Notes"),
        act("click_icon", icon="yellow plus", position="bottom right"),
        act("type", text="Hello, this is a note"),
        act("click_text", text="Save"),
        act("stop"),
    ]
    scores = judge_steps(actions, NOTE)
    assert [s.correct for s in scores.steps] == [False, False, True, True, True, True]
    assert scores.ps == pytest.approx(4 / 6)
    assert scores.reached == 4
    assert scores.steps[0].act_match is False and scores.steps[0].expected.startswith("open_app")


def test_stopping_half_way_gives_partial_completion():
    actions = [act("open_app", app="Notes"), act("click_icon", icon="plus", position="bottom right"), act("stop")]
    scores = judge_steps(actions, NOTE)
    assert scores.cr(success=False) == 0.5
    assert scores.cr(success=True) == 1.0  # the paper: success means CR = 1


def test_a_skipped_step_is_not_a_mistake_but_a_repeat_is():
    actions = [act("open_app", app="Notes"), act("type", text="Hello, this is a note"),
               act("type", text="Hello, this is a note")]
    scores = judge_steps(actions, NOTE)
    assert [s.correct for s in scores.steps] == [True, True, False]
    assert scores.reached == 3


def test_unparsed_replies_are_wrong_steps():
    scores = judge_steps([None, act("open_app", app="Notes")], NOTE)
    assert [s.correct for s in scores.steps] == [False, True]
    assert scores.steps[0].act_match is False


def test_wrong_text_fails_sr_but_keeps_sr_act():
    actions = [act("open_app", app="Calendar")]
    scores = judge_steps(actions, NOTE)
    assert scores.sr_act == 1.0
    assert scores.sr == 0.0
    assert scores.steps[0].correct is False


def test_argument_scores():
    assert args_score({"position": "top right"}, {"position": "Right top"}) == 1.0
    assert args_score({"position": "top"}, {"position": "top right"}) == 0.0
    assert args_score({"text": "Hello, this is a note"}, {"text": "hello,  this is a note"}) == 1.0
    assert 0.5 < args_score({"text": "Hello this is a note"}, {"text": "Hello, this is a note"}) < 1.0
    assert args_score({}, {}) == 1.0
    assert args_score({"text": "a"}, {}) == 0.0
    assert args_score({"icon": "plus", "position": "bottom"}, {"icon": "plus", "position": "top"}) == 0.5


# --- properties ----------------------------------------------------------------------------


_ACTIONS = st.sampled_from([
    act("open_app", app="Notes"), act("open_app", app="Calendar"), act("back"), act("page_down"),
    act("click_icon", icon="plus", position="bottom right"), act("type", text="Hello, this is a note"),
    act("type", text="something else entirely"), act("click_text", text="Save"), act("stop"),
])


@given(st.lists(st.one_of(st.none(), _ACTIONS), max_size=12), st.lists(st.booleans(), min_size=12, max_size=12))
def test_scores_stay_in_range(actions, executed):
    scores = judge_steps(actions, NOTE, executed[: len(actions)])
    assert 0 <= scores.correct_steps <= scores.agent_steps <= len(actions)
    assert 0 <= scores.reached <= len(NOTE)
    assert scores.correct_steps <= len(NOTE)  # each reference step is consumed once at most
    for value in (scores.ps, scores.sr_act, scores.sr_args, scores.sr, scores.cr(False)):
        assert value is None or 0.0 <= value <= 1.0
    assert scores.cr(True) == 1.0


@given(st.lists(_ACTIONS, max_size=6))
def test_a_detour_before_the_reference_keeps_completion(prefix):
    reference_path = [step.alternatives[0] for step in NOTE]
    scores = judge_steps([a for a in prefix if not a.is_stop] + reference_path, NOTE)
    assert scores.reached == len(NOTE)
    assert scores.correct_steps >= 1  # the last reference action is always consumed
