import pytest

from minilib import load_session


@pytest.fixture(scope="session")
def session():
    """The bundled 13-call session."""
    return load_session()
