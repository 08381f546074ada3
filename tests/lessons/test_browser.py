"""A lesson's HTML page in a real headless browser (Debian's chromium + chromedriver, through
selenium): every figure loads with a non-zero natural size, the console shows no errors, and a
screenshot is taken. Skips, saying why, where selenium or the browser is absent."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
DRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (pip install -e .[dev])")
    if not CHROMIUM or not DRIVER:
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver): "
                    f"chromium {'found' if CHROMIUM else 'not found'}, chromedriver {'found' if DRIVER else 'not found'}")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1000"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield drv
    drv.quit()


def test_lesson_page_renders_its_figures(browser, tmp_path):
    from gpusim import lessons

    res = lessons.run("banks", "test")
    page = res.write_html(tmp_path / "lesson_banks.html")
    browser.get(page.as_uri())
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight, i.alt]);")
    assert len(images) == 3, images          # comparison chart, bank diagrams, coalescing diagram
    assert all(done and w > 0 and h > 0 for done, w, h, _ in images), images
    assert browser.execute_script("return document.querySelectorAll('table.lesson tbody tr').length;") == 4
    shot = tmp_path / "lesson_banks.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, errors
