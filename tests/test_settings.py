"""Settings read the environment strictly and work with none at all."""

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from openstartup.settings import env_bool, env_int, env_list


def test_env_bool_accepts_clear_values_and_refuses_ambiguous_ones(monkeypatch):
    monkeypatch.setenv("FLAG", "yes")
    assert env_bool("FLAG", False) is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False
    monkeypatch.setenv("FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured):
        env_bool("FLAG", False)
    monkeypatch.delenv("FLAG")
    assert env_bool("FLAG", True) is True


def test_env_int_and_env_list(monkeypatch):
    monkeypatch.setenv("N", "12")
    assert env_int("N", 3) == 12
    monkeypatch.setenv("N", "twelve")
    with pytest.raises(ImproperlyConfigured):
        env_int("N", 3)
    monkeypatch.setenv("HOSTS", " a.example , b.example ,")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]


def test_debug_is_off_unless_asked_for():
    assert settings.DEBUG is False
