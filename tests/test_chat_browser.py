"""The chat demo in headless Chromium (Debian's chromium, driven by Playwright): two visitors sign in through
the CSRF-guarded form, meet in a room, see each other in the presence list, and their messages cross, shown
exactly as typed; a sign-in POST with no CSRF token, a forged one, or another session's gets 403.

Screenshots are kept under artifacts/chat-browser/ (gitignored); the path is printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rt.testing import clean_environ

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts" / "chat-browser"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]
OBRIEN = "O'Brien & <Co>"  # once shown as O&amp;#x27;Brien &amp;amp; &amp;lt;Co&amp;gt;: escaped twice
# Playwright waits (ms): they only bound a hang, and a loaded CI machine renders and starts Chromium slowly
WAIT = 30_000
MESSAGE = "<b>bold?</b> & 'quotes' \"too\" &amp; <script>alert(1)</script>"


@pytest.fixture(params=["asyncio", "trio"])
def chat_url(request: pytest.FixtureRequest) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "rt", "examples/chat/app.py"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_environ({"PORT": "0", "RT_BACKEND": request.param}),
    )
    with process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line.startswith("rt chat on http://"), line + (
                process.stderr.read() if process.stderr else ""
            )
            yield line.split()[3]
        finally:
            process.terminate()
            process.wait(timeout=30)


def sign_in(page: Any, url: str, name: str) -> None:
    page.goto(url)
    page.fill("#name", name)
    page.click("#signin")
    page.wait_for_function("document.getElementById('status').textContent === 'connected'", timeout=WAIT)
    assert page.text_content("#me") == name


def people(page: Any) -> list[str]:
    return [text for text in page.locator("#people li").all_text_contents()]


def test_two_pages_sign_in_join_a_room_and_chat(chat_url: str, request: pytest.FixtureRequest) -> None:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium")
    from playwright.sync_api import expect, sync_playwright

    shots = ARTIFACTS / request.node.callspec.id
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True, timeout=4 * WAIT
        )
        try:
            first_context, second_context = browser.new_context(), browser.new_context()  # two cookie jars
            first, second = first_context.new_page(), second_context.new_page()
            for context in (first_context, second_context):
                context.set_default_timeout(WAIT)
            first.goto(chat_url)
            first.screenshot(path=str(shots / "1-sign-in.png"))
            sign_in(first, chat_url, OBRIEN)
            sign_in(second, chat_url, "ann")
            for page in (first, second):  # both in the lobby: each sees both names, as typed
                expect(page.locator("#people li")).to_have_count(2, timeout=WAIT)
                assert sorted(people(page)) == sorted([OBRIEN, "ann"])

            for page in (first, second):  # both move to another room
                page.fill("#room-name", "garden")
                page.click("#join")
                expect(page.locator("#room")).to_have_text("garden", timeout=WAIT)
            expect(first.locator("#people li")).to_have_count(2, timeout=WAIT)

            first.fill("#text", MESSAGE)
            first.click("#send")
            second.fill("#text", "hello O'Brien")
            second.press("#text", "Enter")
            for page in (first, second):
                expect(page.locator("#log p.message")).to_have_count(2, timeout=WAIT)
                lines = page.locator("#log p.message").all_text_contents()
                assert sorted(lines) == sorted([f"{OBRIEN}: {MESSAGE}", "ann: hello O'Brien"])
                assert page.locator("#log b").count() == 0 and page.locator("#log script").count() == 0
            first.screenshot(path=str(shots / "2-obrien.png"))
            second.screenshot(path=str(shots / "3-ann.png"))

            second.close()  # ann leaves: presence follows
            expect(first.locator("#people li")).to_have_count(1, timeout=WAIT)
            assert people(first) == [OBRIEN]

            # CSRF: a pre-session of its own, then a POST without a token, a forged one, and another's
            third_context = browser.new_context()
            third = third_context.new_page()
            third.goto(chat_url)
            theirs = third.get_attribute("input[name=csrf]", "value")
            attacker_context = browser.new_context()
            attacker = attacker_context.new_page()
            attacker.goto(chat_url)
            attacker.screenshot(path=str(shots / "4-csrf-form.png"))
            post = attacker_context.request.post
            assert post(chat_url + "signin", form={"name": "eve"}).status == 403
            forged = post(chat_url + "signin", form={"name": "eve", "csrf": "Zm9yZ2VkLXRva2Vu"})
            assert forged.status == 403 and "invalid CSRF token" in forged.text()
            assert post(chat_url + "signin", form={"name": "eve", "csrf": theirs}).status == 403
            own = attacker.get_attribute("input[name=csrf]", "value")
            assert post(chat_url + "signin", form={"name": "eve", "csrf": own}, max_redirects=0).status == 303
        finally:
            browser.close()
    print(f"\nscreenshots: {shots}")
    assert len(list(shots.glob("*.png"))) == 4
