"""An alert reads as one line naming the metric, the rates and the drop's interval."""

from adk_eval.production._watch._verdict import Alert


def test_an_alert_is_one_line_with_the_drop_and_its_interval():
    alert = Alert("helpful", 0.9, 0.74, (0.05, 0.27), looked=212, test="mixture SPRT, alpha 0.05")

    assert alert.line() == (
        "helpful: pass rate 74% against 90% (drop +5% to +27%, mixture SPRT, alpha 0.05)"
        " after 212 conversation(s)"
    )
