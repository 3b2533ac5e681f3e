"""Seed 000's TestRedFlagger (docs/architecture.md#the-seeds), ported verbatim, then the MAKER
paper's extra flags."""
import pytest

from maker.core.models import AgentResult, TaskConfig
from maker.red_flag.red_flagger import RedFlagger


def make_result(**overrides):
    defaults = {
        "output": {"key": "value"},
        "raw_response": "key: value",
        "was_repaired": False,
        "tokens": 100,
        "cost_usd": 0.001,
        "duration_ms": 500,
        "error": None,
    }
    defaults.update(overrides)
    return AgentResult(**defaults)


class TestRedFlagger:
    def test_valid_dict_passes(self):
        flagger = RedFlagger()
        result = make_result(output={"key": "value"})
        assert flagger.check(result) is False  # not flagged

    def test_nested_dict_passes(self):
        flagger = RedFlagger()
        result = make_result(output={"outer": {"inner": 42}})
        assert flagger.check(result) is False

    def test_empty_dict_passes(self):
        """Empty dict is valid — maybe step just confirms something."""
        flagger = RedFlagger()
        result = make_result(output={})
        assert flagger.check(result) is False

    def test_list_output_flagged(self):
        flagger = RedFlagger()
        result = make_result(output=["a", "b"])
        assert flagger.check(result) is True  # flagged

    def test_string_output_flagged(self):
        flagger = RedFlagger()
        result = make_result(output="just a string")
        assert flagger.check(result) is True

    def test_number_output_flagged(self):
        flagger = RedFlagger()
        result = make_result(output=42)
        assert flagger.check(result) is True

    def test_none_output_flagged(self):
        flagger = RedFlagger()
        result = make_result(output=None)
        assert flagger.check(result) is True

    def test_agent_error_flagged(self):
        flagger = RedFlagger()
        result = make_result(error="Agent crashed")
        assert flagger.check(result) is True

    def test_reason_for_flagging(self):
        """Red flagger should explain why it flagged."""
        flagger = RedFlagger()

        result = make_result(output="string")
        flagged, reason = flagger.check_with_reason(result)
        assert flagged is True
        assert "dict" in reason.lower()

        result = make_result(error="crash")
        flagged, reason = flagger.check_with_reason(result)
        assert flagged is True
        assert "error" in reason.lower()

    def test_dict_with_extra_fields_passes(self):
        """Extra fields beyond output_schema are allowed (loose validation)."""
        flagger = RedFlagger()
        result = make_result(output={"expected": "val", "bonus": "extra"})
        assert flagger.check(result) is False

    def test_dict_with_error_key_passes(self):
        """A dict containing an 'error' key is still valid output."""
        flagger = RedFlagger()
        result = make_result(output={"error": "something went wrong"})
        assert flagger.check(result) is False  # it's still a dict


# --- beyond the seed: the MAKER paper's red flags -----------------------------


def test_every_flag_has_a_reason():
    flagger = RedFlagger(strict=True, max_chars=10)
    for result in [
        make_result(error="boom"),
        make_result(output=[1]),
        make_result(raw_response="x" * 11),
        make_result(was_repaired=True),
    ]:
        flagged, reason = flagger.check_with_reason(result)
        assert flagged is True
        assert reason


def test_too_long_answer_flagged_by_default():
    flagger = RedFlagger()
    assert flagger.max_chars == 20_000
    assert flagger.check(make_result(raw_response="a" * 20_000)) is False
    flagged, reason = flagger.check_with_reason(make_result(raw_response="a" * 20_001))
    assert flagged is True
    assert "too long" in reason.lower()
    assert "20001" in reason and "20000" in reason


def test_length_cap_configurable_and_can_be_disabled():
    assert RedFlagger(max_chars=5).check(make_result(raw_response="123456")) is True
    assert RedFlagger(max_chars=None).check(make_result(raw_response="a" * 10**6)) is False
    with pytest.raises(ValueError):
        RedFlagger(max_chars=0)


def test_repair_flagged_only_in_strict_mode():
    repaired = make_result(was_repaired=True)
    assert RedFlagger().check(repaired) is False
    flagged, reason = RedFlagger(strict=True).check_with_reason(repaired)
    assert flagged is True
    assert "repair" in reason.lower()


def test_check_all_gives_every_reason_most_fundamental_first():
    flagger = RedFlagger(strict=True, max_chars=3)
    result = make_result(output="text", raw_response="long text", error="crash",
                         was_repaired=True)
    reasons = flagger.check_all(result)
    assert len(reasons) == 4
    assert "error" in reasons[0].lower()
    assert "dict" in reasons[1].lower()
    assert "too long" in reasons[2].lower()
    assert "repair" in reasons[3].lower()
    assert flagger.check_with_reason(result) == (True, reasons[0])


def test_check_all_empty_for_a_good_answer():
    assert RedFlagger(strict=True).check_all(make_result()) == []


def test_from_config_uses_the_task_settings():
    flagger = RedFlagger.from_config(TaskConfig(instruction="x", max_output_chars=7,
                                                strict=True))
    assert flagger.max_chars == 7
    assert flagger.strict is True
