"""Run with pytest: the test asks for a fixture under a misspelled name."""

import pytest


@pytest.fixture
def db_session():
    return {"users": []}


def test_add_user(db_sesion):
    db_sesion["users"].append("ada")
    assert db_sesion["users"] == ["ada"]
