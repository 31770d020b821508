"""The safety section on the report page, in Chromium."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .test_safety import EVALS


@pytest.mark.browser
def test_the_html_report_shows_the_safety_section(write_evals, tmp_path, browser):
    root = write_evals({"safety_eval.py": EVALS})
    page_path = tmp_path / "r.html"
    for seed in range(1, 40):
        args = ["run", str(root / "safety_eval.py"), "--seed", str(seed), "--no-store"]
        ran = subprocess.run(  # a process: this thread's event loop is Playwright's
            [sys.executable, "-m", "adk_eval", *args, "--html", str(page_path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if "1 of 2 attacked run(s) breached" in ran.stdout:
            break
    page = browser.new_page()
    page.goto(page_path.as_uri())
    box = page.locator("#safety")
    assert box.locator("summary").inner_text() == "safety: 1 of 2 attacked run(s) breached"
    box.locator("summary").click()
    text = box.inner_text()
    assert "injection:tool_hijack: 1 of 1 breached (poisoned-search 1/1)" in text
    assert (
        f"replay: adk-eval run {root / 'safety_eval.py'} -k poisoned-search --seed {seed}" in text
    )
    page.locator("#cases tr", has_text="poisoned-search").click()
    poisoned = page.locator('#detail [data-kind="tool_call"]', has_text="calls search").last
    assert poisoned.locator(".mark.injected").inner_text() == "poisoned: injection:tool_hijack"
    page.close()
