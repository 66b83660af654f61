"""The live page of etalis serve in headless Chromium (Debian's, driven
by Playwright): post events, see the new detection's row, the pending
goals and the timeline."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from service_helpers import Server, events, start_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
RULES = "blizzard_reading(V, W) <- reading(V, W) where (V < 0.25, W >= 35).\n" \
        "blizzard <- (blizzard_reading(_, _) seq blizzard_reading(_, _)) where duration(D), D >= 10800.\n"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    (tmp_path / "jfk.etl").write_text(RULES)
    running = start_server("jfk.etl", cwd=tmp_path)
    yield running
    running.stop()


def test_page_shows_a_new_detection_as_it_arrives(browser: Browser, server: Server, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    page.goto(f"{server.url}/?tz=America/New_York")
    expect(page.locator("#state")).to_have_text("live")
    expect(page.locator("#rulesets button.on")).to_have_text("jfk.etl")
    fed = httpx.post(f"{server.url}/rulesets/jfk/events", json=events(
        ("reading", [0.12, 40], "2010-12-26T20:51:00-05:00"),
        ("reading", [0.06, 38], "2010-12-26T21:51:00-05:00"),
        ("reading", [0.0, 36], "2010-12-26T23:51:00-05:00")))
    assert [d["event"] for d in fed.json()["detections"]] == \
        ["blizzard_reading", "blizzard_reading", "blizzard_reading", "blizzard"]
    rows = page.locator("#detections tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.nth(3).locator("td")).to_have_text(["4", "blizzard", "", "26 Dec 2010 20:51", "23:51", "3h 00m"])
    expect(rows.nth(0).locator("td")).to_have_text(["1", "blizzard_reading", "0.12, 40", "26 Dec 2010 20:51", "20:51", "0s"])
    expect(page.locator("#detections tbody tr.fresh")).to_have_count(1)
    expect(page.locator("#pending tbody tr").nth(0).locator("td")).to_have_text(["line 1", "0"])
    expect(page.locator("#pending tbody tr").nth(1).locator("td")).to_have_text(["line 2", "3"])
    expect(page.locator("#timeline rect")).to_have_count(4)
    expect(page.locator("#zone")).to_have_text("(times in America/New_York)")
    shot = Path(os.environ.get("ETALIS_PAGE_SHOT", tmp_path / "page.png"))
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    page.close()
