import pytest


@pytest.fixture(autouse=True, scope="session")
def _signing_key_of_the_tests(tmp_path_factory: pytest.TempPathFactory):
    """The key that signs recorded pickles (recompiles/signing_key.py) lives in a folder of the test session,
    for the real commands the tests start too: never the user's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXLINT_KEY_DIR", str(tmp_path_factory.mktemp("jaxlint-key")))
        yield
