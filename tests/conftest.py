"""Fixtures shared across the tests: the bundled session and a small workspace."""

import pytest

from minilib import Workspace, load_session


@pytest.fixture(scope="session")
def session():
    """The bundled 13-call session."""
    return load_session()


@pytest.fixture
def workspace(tmp_path):
    """A small workspace: two files with 'timeout' in them, one in a subfolder."""
    (tmp_path / "notes.txt").write_text("alpha\nbeta timeout\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("timeout again\n", encoding="utf-8")
    return Workspace(tmp_path)
