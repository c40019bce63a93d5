"""Fixtures for the real-browser tests: a throwaway JupyterLab server and headless
Chromium.

Chromium missing: the tests skip with a reason on a workstation, but fail in CI (CI=true),
where .ci/run installs it first. The helpers themselves live in labdriver.py, which
bench/benchmark.py shares.
"""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import labdriver  # noqa: E402


@pytest.fixture(scope="session")
def chromium():
    path = labdriver.chromium_executable()
    if path is None:
        where = (
            f"$CHROMIUM={os.environ['CHROMIUM']}"
            if os.environ.get("CHROMIUM")
            else "/usr/bin/chromium and `chromium` on PATH"
        )
        message = (
            f"Chromium not found (looked for {where}); "
            "install it with `apt-get install -y chromium`"
        )
        if labdriver.in_ci():
            pytest.fail(
                message + ". CI=true, so a missing browser fails instead of skipping.",
                pytrace=False,
            )
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def browser(chromium, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = labdriver.launch_chromium(
            playwright, chromium, tmp_path_factory.mktemp("chromium-home")
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def lab_server(chromium, tmp_path_factory):
    """JupyterLab on a free port, HOME-like directories in a temp folder; stopped by PID
    afterwards."""
    server = labdriver.start_jupyterlab(
        tmp_path_factory.mktemp("jupyter-home"),
        labdriver.ARTIFACTS / "logs" / "jupyterlab.log",
    )
    try:
        yield server
    finally:
        server.delete_sessions_and_kernels()
        server.close()


@pytest.fixture
def page(browser, request):
    """A fresh browser context and page. On failure, a screenshot FAILED-<test>.png is
    saved."""
    context = browser.new_context(viewport=labdriver.VIEWPORT, device_scale_factor=1)
    new_page = context.new_page()
    new_page.set_default_timeout(labdriver.UPDATE_TIMEOUT)
    new_page.page_errors = []
    new_page.on("pageerror", lambda error: new_page.page_errors.append(str(error)))
    try:
        yield new_page
    finally:
        if getattr(request.node, "rep_call_failed", False):
            try:
                labdriver.shoot(new_page, f"FAILED-{request.node.name}")
            except Exception:  # a screenshot must not hide the real failure
                pass
        context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call_failed = report.failed
