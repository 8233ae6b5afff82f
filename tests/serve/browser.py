"""Headless Chromium from Debian (`chromium`, `chromium-driver`) through selenium, offline.

Both paths are given, so selenium's driver manager never tries to download a browser. The
tests skip, saying why, when either is missing; `.ci/run` installs them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WAIT_S = 20.0
# Read at import: the tests' fixture clears every WILD_* variable before each test runs.
SCREENSHOTS = os.environ.get("WILD_SCREENSHOTS")


def missing() -> str | None:
    """Why a browser test cannot run here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (DRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} not found: apt-get install {package} (as .ci/run does)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install -e '.[test]'"
    return None


def chrome(width: int = 1400, height: int = 1000) -> Any:
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    service = webdriver.ChromeService(executable_path=DRIVER)
    return webdriver.Chrome(service=service, options=options)


def wait_until(driver: Any, what: str, ready: Callable[[Any], Any]) -> Any:
    """Wait for `ready(driver)` to be truthy (selenium's wait), failing with `what`."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # The page redraws a section whenever a file changes: an element found a moment ago may
    # have been replaced, and is simply looked up again.
    wait = WebDriverWait(
        driver, WAIT_S, poll_frequency=0.02, ignored_exceptions=(StaleElementReferenceException,)
    )
    return wait.until(ready, message=what)


def click(driver: Any, css: str) -> None:
    """Click the element `css` names, looking it up again if a redraw replaced it."""
    from selenium.webdriver.common.by import By

    def clicked(d: Any) -> bool:
        d.find_element(By.CSS_SELECTOR, css).click()
        return True

    wait_until(driver, f"clicking {css}", clicked)


def screenshot(driver: Any, name: str, folder: Path) -> Path:
    """Save the whole page (height fitted to it) as `name`.png under `folder` (or
    $WILD_SCREENSHOTS, where docs/screenshots/ were made)."""
    target = Path(SCREENSHOTS) if SCREENSHOTS else folder
    target.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, max(800, min(int(height) + 40, 4000)))
    path = target / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def require_browser() -> None:
    reason = missing()
    if reason is not None:
        pytest.skip(f"no real browser: {reason}")
