"""Headless Chromium (Debian's `chromium`) driven by Playwright, with the network blocked.

Used by the report's tests and by benchmarks/report_build.py. Playwright's own browser download
cannot work here: the system Chromium is started through `executable_path`, in a fresh profile
folder. Every request that is not `file:`, `data:` or `blob:` is aborted and recorded, and
console errors and page errors are collected, so a test can assert that a page needed nothing
from the network and logged no error.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def chromium_path() -> str | None:
    """The system Chromium (Debian package `chromium`), or $ASRBENCH_CHROMIUM."""
    env = os.environ.get("ASRBENCH_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Events:
    """What the browser reported while the pages ran."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)


@contextmanager
def open_browser() -> Iterator[tuple[object, Events]]:
    """(a Playwright browser context, its events); the network is blocked for every page."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError("no chromium found: apt-get install chromium (Makefile APT_PACKAGES)")
    profile = tempfile.mkdtemp(prefix="asrbench-chromium-")
    events = Events()
    try:
        with sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(
                profile,
                executable_path=exe,
                args=CHROMIUM_ARGS,
                headless=True,
                viewport={"width": 1400, "height": 900},
                service_workers="block",
            )

            def route(r):
                url = r.request.url
                if url.startswith(LOCAL_SCHEMES):
                    r.continue_()
                else:
                    events.blocked.append(url)
                    r.abort("internetdisconnected")

            ctx.route("**/*", route)

            def watch(page):
                page.on(
                    "console",
                    lambda m: (
                        events.console_errors.append(f"{page.url}: {m.text}")
                        if m.type == "error"
                        else None
                    ),
                )
                page.on("pageerror", lambda e: events.page_errors.append(f"{page.url}: {e}"))

            ctx.on("page", watch)
            for page in ctx.pages:
                watch(page)
            try:
                yield ctx, events
            finally:
                ctx.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
