"""The web page at /ui, driven in headless Chromium against a real `up`: what a person sees
at each step, with a screenshot of each (in ASSOCMEM_SCREENSHOTS if set, else the test's
temporary directory)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3

from tests.e2e.pipeline import Pipeline, cli, cli_json, walk_through

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

REDRAWN = (StaleElementReferenceException,)
"""An element read while the page draws its next view: read again."""
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


class Browser:
    def __init__(self, driver: WebDriver, shots: Path) -> None:
        self.driver = driver
        self.shots = shots
        self.taken = 0

    def open(self, url: str) -> None:
        self.driver.get(url)
        self.ready()

    def ready(self) -> None:
        """Until the page has drawn its answer (or its login form, or an error)."""
        WebDriverWait(self.driver, 20).until(
            lambda d: d.execute_script(
                "const v = document.getElementById('view');"
                " return v.hasAttribute('data-ready') || !!v.querySelector('.error:not(:empty),"
                " #key')"
            )
        )

    def click(self, selector: str) -> None:
        self.driver.find_element(By.CSS_SELECTOR, selector).click()
        self.ready()

    def text(self, selector: str = "#view") -> str:
        for _ in range(5):  # a part drawn again as it is read (the link chart's PPMI)
            try:
                return self.driver.find_element(By.CSS_SELECTOR, selector).text
            except StaleElementReferenceException:
                continue
        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def heading(self) -> str:
        return self.text("h1")

    def shot(self, name: str) -> Path:
        self.taken += 1
        path = self.shots / f"{self.taken:02d}-{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def no_scrolling_sideways(self) -> bool:
        return self.driver.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"
        )


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    if not (CHROMIUM and DRIVER):
        pytest.skip(
            "headless Chromium is not installed: apt-get install chromium chromium-driver"
            " (.ci/run installs them)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,900")
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    shots = Path(os.environ.get("ASSOCMEM_SCREENSHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    try:
        yield Browser(driver, shots)
    finally:
        driver.quit()


def test_a_person_logs_in_searches_and_follows_what_the_agents_learned(
    tmp_path: Path, browser: Browser
) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        ids = walk_through(up.url)
        cli("read", "--concepts", "a", "--after", ids["feedback"], "--no-record", url=up.url)
        browser.open(f"{up.url}/ui")
        assert browser.heading() == "Log in"
        key_field = browser.driver.find_element(By.ID, "key")
        key_field.send_keys("amk_000000000000_not-a-key", Keys.ENTER)  # the keyboard alone
        WebDriverWait(browser.driver, 10, ignored_exceptions=REDRAWN).until(
            lambda d: "refused" in browser.text("#login-error")
        )
        assert "This key is refused: the API key is unknown or revoked" in browser.text()
        browser.shot("wrong-key")

        key_field = browser.driver.find_element(By.ID, "key")
        key_field.clear()
        key_field.send_keys(up.key, Keys.ENTER)
        WebDriverWait(browser.driver, 10, ignored_exceptions=REDRAWN).until(
            lambda d: browser.heading() == "Search"
        )
        browser.ready()
        concepts = browser.driver.find_element(By.NAME, "concepts")
        concepts.send_keys("a", Keys.ENTER)
        browser.ready()
        assert browser.driver.current_url == f"{up.url}/ui/search?concepts=a&depth=standard"
        page = browser.text()
        assert "5 items" in page and "b c note" in page
        association = browser.driver.find_element(By.XPATH, "//li[.//a[text()='b c note']]").text
        assert "association" in association
        assert "written 2, taught 1" in association and "written 0, taught 1" in association
        browser.shot("search")

        browser.click(f"a[href='/ui/memories/{ids['b c note']}']")
        assert browser.heading() == "b c note"
        events = browser.text("table")
        assert "memory.written" in events and "feedback.given" in events
        assert f"taught from {ids['a b note two']}" in events, "the memory link feedback taught"
        browser.shot("memory")

        browser.driver.back()
        browser.ready()
        browser.click("a.arrow[href='/ui/links/a/c']")
        assert browser.heading() == "a — c"
        WebDriverWait(browser.driver, 20, ignored_exceptions=REDRAWN).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "svg.link-chart polyline.ppmi")
        )  # PPMI, drawn once its samples come: the chart is drawn again then
        chart = browser.driver.find_element(By.CSS_SELECTOR, "svg.link-chart")
        ticks = [t.text for t in chart.find_elements(By.CSS_SELECTOR, "text.tick")]
        assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2}, \d{2}:\d{2}", ticks[0]), ticks
        assert all(re.fullmatch(r"\d{2}:\d{2}:\d{2}", t) for t in ticks[1:]), ticks
        assert len(chart.find_elements(By.CSS_SELECTOR, "a circle")) == 1  # the one step
        step = browser.text("table")
        assert "feedback.given" in step and "+1" in step
        browser.shot("link-history")

        browser.click("table a[href^='/ui/diff']")  # the step names its event: what it changed
        assert browser.heading() == "Two moments"
        gained = browser.text()
        assert re.search(r"Gained \(\d+\)", gained) and "written 0, taught 1" in gained

        browser.open(f"{up.url}/ui/diff?from={ids['c d note']}&to={ids['feedback']}")
        moments = browser.text()
        assert "Gained (2)" in moments  # a-e written, a-c taught
        assert "Changed (1)" in moments  # a-b: written 2, now taught 1 too
        browser.shot("two-moments")

        browser.open(f"{up.url}/ui/concepts/a?hops=2")
        graph = browser.driver.find_element(By.CSS_SELECTOR, "svg.graph")
        labels = {t.text for t in graph.find_elements(By.CSS_SELECTOR, "text")}
        assert {"a", "b", "c", "d", "e"} <= labels
        assert graph.find_elements(By.CSS_SELECTOR, "line.edge.taught"), "taught links marked"
        browser.shot("neighbourhood")
        browser.click("svg.graph a[href='/ui/concepts/c?hops=2']")
        assert browser.heading() == "Around c"

        browser.open(f"{up.url}/ui/operators")
        assert "operator" in browser.text("section:last-of-type")  # the tenant's keys
        browser.shot("operators")

        browser.driver.set_window_size(390, 844)
        for page in ("/ui/search?concepts=a", f"/ui/memories/{ids['b c note']}", "/ui/links/a/b"):
            browser.open(f"{up.url}{page}")
            assert browser.no_scrolling_sideways(), f"{page} fits 390 pixels"
        browser.shot("narrow-link")
    finally:
        up.stop()


def test_the_key_in_the_address_logs_in_and_never_shows_another_tenants_data(
    tmp_path: Path, browser: Browser
) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        written = cli_json("write", "billing secret of the default tenant", url=up.url)
        cli("read", "--concepts", "billing", "--after", written["id"], url=up.url)
        made = urllib3.request(
            "POST",
            f"{up.url}/v1/keys",
            json={"agent": "outsider", "tenant": "other", "permissions": ["read"]},
            headers={"authorization": f"Bearer {up.key}"},
        )
        assert made.status == 201, made.data
        other = made.json()["key"]

        printed = cli("ui", "--print", "search?q=billing secret", "--api-key", other, url=up.url)
        address = printed.stdout.strip()
        assert address == f"{up.url}/ui/search?q=billing secret#key={other}"
        browser.open(address)
        assert "#key" not in browser.driver.current_url, "the key leaves the address bar"
        assert browser.heading() == "Search" and "Nothing found." in browser.text()
        browser.open(f"{up.url}/ui/memories/{written['id']}")
        assert "is unknown" in browser.text(".error")
        browser.open(f"{up.url}/ui/concepts/billing")
        assert "No event named billing" in browser.text()  # none of this tenant's
        browser.open(f"{up.url}/ui/operators")
        assert "may not see it" in browser.text()
        for page in (
            "/ui/search?q=billing",
            f"/ui/memories/{written['id']}",
            "/ui/links/billing/secret",
            "/ui/concepts/billing?hops=3",
            f"/ui/diff?from=0-0&to={written['id']}",
            "/ui/operators",
        ):
            browser.open(f"{up.url}{page}")
            assert "secret of the default" not in browser.driver.page_source
            assert "billing — secret" not in browser.text(), page
        browser.shot("other-tenant")

        browser.click("#logout")
        assert browser.heading() == "Log in"
        assert browser.driver.execute_script("return sessionStorage.length") == 0
    finally:
        up.stop()
