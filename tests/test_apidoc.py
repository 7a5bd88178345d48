"""docs/api.md, the API reference generated from the docstrings, is up to
date with the code (tools/apidoc.py)."""

from __future__ import annotations

import subprocess
import sys

import atmlab


def test_api_reference_is_up_to_date(root):
    p = subprocess.run([sys.executable, str(root / "tools" / "apidoc.py"), "--check"], capture_output=True,
                       text=True, cwd=root, timeout=300)
    assert p.returncode == 0, p.stderr + "\n(run: python tools/apidoc.py)"


def test_api_reference_covers_the_public_api(root):
    text = (root / "docs" / "api.md").read_text(encoding="utf-8")
    for name in atmlab.__all__:
        if not name.startswith("_"):
            assert f"`atmlab.{name}" in text, name
    for member in ("Result.series", "Result.series_wide(", "Sweep.run(", "Store.series("):
        assert f"`{member}" in text, member
    assert "The time series of the scenario's probes, long form" in text
