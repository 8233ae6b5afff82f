"""The dashboard in a real headless Chromium: clicks, forms, live updates, pause and stop."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.loop_processes import WAIT_S, Wild
from tests.serve.browser import click, screenshot, wait_until
from tests.serve.conftest import Client
from tests.serve.sample import XSS
from wild.barriers.approvals import load_approvals
from wild.store.files import read_text
from wild.store.runs_log import append_records, read_runs

pytestmark = pytest.mark.timeout(120)


def by_css(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css)


def all_css(driver: Any, css: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, css))


def open_page(driver: Any, url: str) -> None:
    driver.get_log("browser")  # drops what earlier tests left: each checks its own page
    driver.get(url)
    wait_until(
        driver,
        "the page's first read",
        lambda d: d.execute_script("return document.body.dataset.version !== undefined"),
    )


def no_page_errors(driver: Any) -> None:
    """No script error, and nothing the console calls severe (a CSP refusal, a failed load)."""
    assert driver.execute_script("return document.body.dataset.error || null") is None
    assert [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


def test_the_page_shows_every_section_and_untrusted_text_as_text(
    driver: Any, board: Client, tmp_path: Path
) -> None:
    open_page(driver, board.board.url)
    assert "token=" not in driver.current_url  # the cookie holds it now
    task = by_css(driver, '[data-task="task-001"] .task-text')
    assert task.text == XSS  # the payload shows as the characters it is
    assert driver.execute_script("return document.body.dataset.pwned || null") is None
    assert all_css(driver, "#tasks img") == []
    assert "<script>" in by_css(driver, ".alert-desc").text
    for css in ("#runs .run svg polyline", "#iterations tbody tr", "#health .cell", "#queue li"):
        assert all_css(driver, css), css
    assert "waits: waiting for barrier train-done" in by_css(driver, "#queue").text
    assert by_css(driver, "#stage").text.lower() == "running"
    no_page_errors(driver)
    screenshot(driver, "dashboard", tmp_path)


def test_an_alert_choice_the_human_form_and_the_policy_switch_write_the_files(
    driver: Any, board: Client, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(driver, board.board.url)
    wait_until(
        driver,
        "the choice button",
        lambda d: by_css(d, 'button.choice[data-choice="ignore"]').text == "ignore",
    )
    click(driver, 'button.choice[data-choice="ignore"]')
    wait_until(driver, "the alert to leave the page", lambda d: not all_css(d, ".alert"))
    last = orjson.loads(board.paths.alerts.read_bytes().splitlines()[-1])
    assert last["resolution"]["choice"] == "ignore"

    by_css(driver, 'textarea[name="text"]').send_keys("Try <b>lr</b> 3e-4")
    click(driver, '#human-form input[name="urgent"]')
    click(driver, '#human-form button[type="submit"]')
    wait_until(
        driver, "the input in the queue", lambda d: "Try <b>lr</b> 3e-4" in by_css(d, "#human").text
    )
    assert "Try <b>lr</b> 3e-4" in read_text(board.paths.human)

    def choose(d: Any) -> bool:
        Select(by_css(d, "#policy-mode")).select_by_value("autonomous")
        by_css(d, '#policy-form button[type="submit"]').click()
        return True

    wait_until(driver, "switching the mode", choose)
    wait_until(driver, "the new mode", lambda d: by_css(d, "#policy strong").text == "autonomous")
    assert "autonomous" in read_text(board.paths.policy)
    no_page_errors(driver)
    screenshot(driver, "dashboard-after-actions", tmp_path)


def test_a_tick_on_a_stale_view_shows_the_refusal_and_loses_no_edit(
    driver: Any, board: Client
) -> None:
    open_page(driver, board.board.url)
    driver.execute_script("window.wildStream.close()")  # the page stops hearing of changes
    # Someone finishes the task in an editor; the page still shows it as to do.
    edited = read_text(board.paths.tasks).replace("- [ ] [P1] task-001", "- [-] [P1] task-001")
    board.paths.tasks.write_text(edited)
    click(driver, '[data-task="task-001"] input[type="checkbox"]')
    wait_until(driver, "the refusal", lambda d: by_css(d, "#message").text.startswith("Refused"))
    assert "task-001 is cancelled now, not todo" in by_css(driver, "#message").text
    assert read_text(board.paths.tasks) == edited  # the editor's change stands


def test_approving_a_command_changed_since_the_page_showed_it_is_refused(
    driver: Any, board: Client
) -> None:
    from selenium.webdriver.common.by import By

    shown = "\n## [WAITING] gpu-free\n- Type: command-check\n- Check: nvidia-smi -L\n"
    board.paths.barriers.write_text(read_text(board.paths.barriers) + shown)
    open_page(driver, board.board.url)
    driver.execute_script("window.wildStream.close()")  # the page keeps showing nvidia-smi -L
    swapped = read_text(board.paths.barriers).replace("nvidia-smi -L", "touch PWNED")
    board.paths.barriers.write_text(swapped)
    button = "//li[contains(., 'gpu-free')]//button[text()='Approve command']"
    driver.find_element(By.XPATH, button).click()
    wait_until(driver, "the refusal", lambda d: by_css(d, "#message").text.startswith("Refused"))
    assert "changed since it was shown" in by_css(driver, "#message").text
    assert not load_approvals(board.paths.project).allows("touch PWNED")


def test_an_alert_appended_by_another_process_appears_live(driver: Any, board: Client) -> None:
    open_page(driver, board.board.url)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "wild",
            "--alert",
            "--severity",
            "warning",
            "--source",
            "job-7",
            "--type",
            "NaN",
            "--description",
            "loss went NaN at step 40",
            "--choice",
            "rollback",
            "--dir",
            str(board.paths.root),
        ],
        check=True,
        timeout=WAIT_S,
    )
    wait_until(
        driver, "the new alert", lambda d: "loss went NaN at step 40" in by_css(d, "#alerts").text
    )
    assert by_css(driver, 'button.choice[data-choice="rollback"]').text == "rollback"


def test_a_run_log_opened_on_the_page_follows_the_file(driver: Any, board: Client) -> None:
    open_page(driver, board.board.url)
    click(driver, '[data-run="s1-000"] summary')
    log = '[data-run-log="s1-000"]'
    wait_until(driver, "the run's log", lambda d: "epoch 1 of run s1-000" in by_css(d, log).text)
    with (board.paths.run_dir("s1-000") / "log").open("a") as out:
        out.write("epoch 2 <b>done</b>\n")
    wait_until(driver, "the new line", lambda d: "epoch 2 <b>done</b>" in by_css(d, log).text)


def test_without_the_token_the_browser_gets_403(driver: Any, board: Client) -> None:
    driver.delete_all_cookies()
    driver.get(f"http://127.0.0.1:{board.board.port}/")
    assert "no valid token" in driver.page_source
    driver.get(f"http://localhost:{board.board.port}/api/view")
    assert "no valid token" in driver.page_source


def test_pause_resume_and_stop_reach_a_loop_serving_beside_itself(
    driver: Any, wild: Wild, tmp_path: Path
) -> None:
    wild.cli("--add-task", "Train the model")
    wild.cli("--add-task", "Evaluate the model")
    wild.hold("task-001")
    wild.hold("task-002")  # keeps the loop busy after the resume, until the stop
    proc = wild.start("--serve", "--port", "0")
    wild.wait_for("the dashboard URL", lambda: "token=" in wild.output())
    found = re.search(r"http://\S+", wild.output())
    assert found is not None
    wild.wait_for("the agent", lambda: wild.worked_on() == [("task", "task-001")])
    open_page(driver, found.group(0))
    click(driver, "#pause")
    wild.go("task-001")
    wait_until(
        driver,
        "the banner to say paused",
        lambda d: by_css(d, "#stage").text.lower() == "paused",
    )
    screenshot(driver, "dashboard-paused", tmp_path)
    click(driver, "#resume")
    wait_until(
        driver,
        "the banner to leave paused",
        lambda d: by_css(d, "#stage").text.lower() != "paused",
    )
    wild.wait_for("the second task", lambda: ("task", "task-002") in wild.worked_on())
    click(driver, "#stop")
    proc.wait(timeout=WAIT_S)
    commands = [
        orjson.loads(line)["command"] for line in wild.paths.control.read_bytes().splitlines()
    ]
    assert commands == ["pause", "resume", "stop"]


def test_the_project_list_switches_the_page_between_projects(driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import Select

    from tests.serve.sample import make_project
    from wild.clock import SystemClock
    from wild.commands import edits
    from wild.serve.projects import find_projects
    from wild.serve.server import Dashboard

    make_project(tmp_path / "exp-a", runs=2, iterations=2)
    other = make_project(tmp_path / "exp-b", runs=0, iterations=0)
    edits.add_task(other, "Only in exp-b", priority=1, depends_on=(), blocked_by=())
    with Dashboard(find_projects(tmp_path), SystemClock(), port=0) as board:
        open_page(driver, board.url)
        assert "Only in exp-b" not in by_css(driver, "#tasks").text

        def switch(d: Any) -> bool:
            Select(by_css(d, "#project")).select_by_value("exp-b")
            return True

        wait_until(driver, "the project list", switch)
        wait_until(driver, "exp-b's tasks", lambda d: "Only in exp-b" in by_css(d, "#tasks").text)
        assert "project=exp-b" in driver.current_url
        click(driver, '[data-task="task-003"] input[type="checkbox"]')
        wait_until(driver, "the tick", lambda d: "[x] [P1] task-003" in read_text(other.tasks))
        no_page_errors(driver)


def test_an_early_stopped_run_shows_why_on_the_page(driver: Any, board: Client) -> None:
    open_page(driver, board.board.url)
    run = read_runs(board.paths.runs_log).index.runs["s1-000"]
    why = "early stop: median rule at step 40: best loss 0.31 > median 0.22 of 3 other runs"
    append_records(board.paths.runs_log, [replace(run, status="stopped", reason=why)])
    reason = '[data-run="s1-000"] .run-reason.early-stop'
    wait_until(driver, "the reason", lambda d: all_css(d, reason))
    assert by_css(driver, reason).text == f"stopped early: {why}"
    no_page_errors(driver)
