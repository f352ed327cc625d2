"""The pytest plugin: `roto` (a fresh server per test) and `roto_session` (one server for
the session, reset before each test that uses it).

Both yield a `RotoServer`: `.endpoint`, `.client("s3")`, `.traces(...)`,
`.wait_for_trace(...)`, `.wait_for_delivery(...)`, `.reset()`, `.request(...)`.

ini options (pytest.ini / pyproject.toml `[tool.pytest.ini_options]`):
- `roto_args`: extra flags for every server these fixtures start, e.g.
  `--setup tests/setup.lua --region eu-west-1` (`--ephemeral` is always passed).
- `roto_session_reset` (default true): reset `roto_session` before each test. Turn it off
  when the session server is seeded by `--setup` and tests only read that state (a reset
  empties what the setup scripts created).
"""

from __future__ import annotations

import pytest

from roto_pytest.server import RotoServer


def pytest_addoption(parser):
    parser.addini("roto_args", type="args", default=[],
                  help="extra roto-server flags for the roto and roto_session fixtures")
    parser.addini("roto_session_reset", type="bool", default=True,
                  help="reset the roto_session server before each test that uses it")


def _args(config) -> list[str]:
    return ["--ephemeral", *config.getini("roto_args")]


@pytest.fixture
def roto(request):
    """A fresh, in-memory roto-server for one test, stopped afterwards."""
    with RotoServer(*_args(request.config)) as server:
        yield server


@pytest.fixture(scope="session")
def _roto_session_server(request):
    with RotoServer(*_args(request.config)) as server:
        yield server


@pytest.fixture
def roto_session(request, _roto_session_server):
    """The session's shared roto-server, reset first unless `roto_session_reset = false`."""
    if request.config.getini("roto_session_reset"):
        _roto_session_server.reset()
    return _roto_session_server
