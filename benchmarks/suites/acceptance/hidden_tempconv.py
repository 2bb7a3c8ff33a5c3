"""Hidden acceptance tests for the temperature prompt (written from the prompt by hand; never shown to the loop)."""

import pytest
from tempconv import c_to_f, c_to_k, f_to_c


def test_examples():
    assert c_to_f(100) == pytest.approx(212.0)
    assert f_to_c(32) == pytest.approx(0.0)
    assert c_to_k(0) == pytest.approx(273.15)


def test_minus_forty():
    assert c_to_f(-40) == pytest.approx(-40)
    assert f_to_c(-40) == pytest.approx(-40)


def test_boiling_back():
    assert f_to_c(212) == pytest.approx(100)


def test_absolute_zero_is_allowed():
    assert c_to_k(-273.15) == pytest.approx(0, abs=1e-9)


def test_below_absolute_zero_kelvin():
    with pytest.raises(ValueError):
        c_to_k(-300)


def test_below_absolute_zero_fahrenheit_in():
    with pytest.raises(ValueError):
        c_to_f(-274)


def test_below_absolute_zero_fahrenheit_out():
    with pytest.raises(ValueError):
        f_to_c(-500)
