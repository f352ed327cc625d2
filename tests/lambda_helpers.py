"""Helpers the Lambda test files share: deployment packages built in memory."""

from __future__ import annotations

import io
import zipfile

ROLE = "arn:aws:iam::000000000000:role/lambda-role"


def zip_of(files: dict[str, str], modes: dict[str, int] | None = None) -> bytes:
    """A zip holding `files` (name -> text), each with its Unix mode (0o644 unless given)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = ((modes or {}).get(name, 0o644) | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text)
    return buf.getvalue()


ECHO_CODE = {"ZipFile": zip_of({"app.py": "def handler(event, context):\n    return event\n"})}
