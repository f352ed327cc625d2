"""The suite's `RotoServer`, from the roto-pytest plugin (python/roto-pytest).

Tests that start servers with their own flags import `RotoServer` (and `START_LINE`,
`binary`) from here; the implementation lives in `roto_pytest.server`.
"""

from roto_pytest.server import IDENTITY_BODY, START_LINE, RotoServer, binary

__all__ = ["IDENTITY_BODY", "START_LINE", "RotoServer", "binary"]
