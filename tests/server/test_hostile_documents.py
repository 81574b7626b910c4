"""Documents with operator chains that killed the server inside libcst (issue 30, item 1)."""

from __future__ import annotations

import sys

from .conftest import ROOT, codes, run

sys.path.insert(0, str(ROOT / "tools"))

from hostile_inputs import chain  # noqa: E402


def test_chains_that_crashed_libcst_get_diagnostics_and_the_server_lives_on(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        analysed = session.open(tmp_path / "and_chain.py", chain("and", 8000))
        assert codes(await session.diagnostics(analysed, 1)) == ["JAX101"]
        refused = session.open(tmp_path / "plus_chain.py", chain("plus", 8000))
        (diagnostic,) = await session.diagnostics(refused, 1)
        assert diagnostic.code == "JAX000" and diagnostic.range.start.line == 3  # the chain's line, from 0
        after = session.open(tmp_path / "after.py", chain("and", 2))
        assert codes(await session.diagnostics(after, 1)) == ["JAX101"]
        assert await session.stop() == 0

    run(scenario)
