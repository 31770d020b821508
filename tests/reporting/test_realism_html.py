"""The realism page opens from disk in a real browser, with no network and no script."""

from __future__ import annotations

import pytest

from adk_eval.reporting._realism_html import write_realism_html

DATA = {
    "real": 2,
    "simulated": 2,
    "features": [
        {
            "name": "answered_directly_rate",
            "kind": "rate",
            "sentence": "your simulated users answer the agent's questions directly 95 % ...",
            "p_adjusted": 0.001,
            "significant": True,
        },
        {"name": "turns", "kind": "count", "sentence": "within noise", "p_adjusted": 0.8},
    ],
    "distance": {"distance": 0.42, "p_value": 0.01, "features": 9},
    "gap": None,
    "pairs": [
        {
            "source": "clinic/u/s1",
            "real": [["user", "<img src=x onerror=alert(1)> book a test"], ["desk", "Date?"]],
            "simulated": [["user", "book a test"], ["desk", "Date?"]],
            "simulated_passed": False,
        }
    ],
}


@pytest.mark.browser
def test_the_page_shows_each_behaviour_and_the_scenarios_as_text(browser, tmp_path):
    path = tmp_path / "realism.html"
    write_realism_html(DATA, path)
    page = browser.new_page()
    requests, dialogs = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())

    assert page.locator("#summary").inner_text() == "2 real conversation(s) against 2 simulated"
    rows = page.locator("tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).inner_text().startswith("answered_directly_rate")
    assert "unlikely to be noise" in rows.nth(0).inner_text()
    sides = page.locator(".pair .side")
    assert sides.count() == 2
    assert "<img src=x onerror=alert(1)> book a test" in sides.nth(0).inner_text()
    assert "Simulated run (did not pass)" in sides.nth(1).inner_text()
    assert page.locator("img").count() == 0
    assert dialogs == []
    assert requests == [path.as_uri()]
