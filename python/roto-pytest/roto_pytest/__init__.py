"""roto-pytest: a real Roto server as a pytest fixture.

`RotoServer` starts the `roto-server` binary on a free port and waits until it is ready;
the pytest plugin (`roto_pytest.plugin`, registered as a `pytest11` entry point) turns it
into the `roto` and `roto_session` fixtures.
"""

from roto_pytest.server import RotoServer, binary

__all__ = ["RotoServer", "binary"]
