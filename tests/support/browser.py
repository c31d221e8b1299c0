"""Headless Chromium for tests, through selenium and Debian's chromium-driver: pages looked at as a person would.

Loaded as a plugin (`pytest_plugins = ("tests.support.browser",)`). Without chromium
or its driver the tests skip, except in CI (CI=true), where they must run.
"""

import json
import os
import shutil

import pytest

LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


@pytest.fixture(scope="session")
def browser():
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if missing:
        reason = f"{' and '.join(missing)} not installed: apt-get install chromium chromium-driver"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    driver = headless_chromium()
    yield driver
    driver.quit()


def headless_chromium(width: int = 1280, height: int = 900):
    """Chromium with no window, through Debian's chromedriver, its console and network logged."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--window-size={width},{height}",
        "--disable-dev-shm-usage",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # The driver is given, so selenium never looks for one on the network.
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


class PageVisit:
    """What opening a page did: its console errors and every request it made that left the machine."""

    def __init__(self, driver, path):
        driver.get_log("browser")  # what earlier pages logged is not this page's
        driver.get_log("performance")
        driver.get(path.resolve().as_uri())
        driver.execute_script("return document.readyState")
        self.console_errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        self.requests = []
        for entry in driver.get_log("performance"):
            event = json.loads(entry["message"])["message"]
            if event["method"] == "Network.requestWillBeSent":
                url = event["params"]["request"]["url"]
                if not url.startswith(LOCAL_SCHEMES):
                    self.requests.append(url)
