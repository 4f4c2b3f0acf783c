"""The one reader of whole numbers from requests (chaoslm/http.py): what it refuses and what it says."""

import pytest

from chaoslm.http import NumberError, parse_id, parse_number


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("²", "'²'"),  # str.isdigit says yes, int() raises
        ("½", "'½'"),
        ("٣", "'٣'"),  # an Arabic-Indic three: int() reads it, no form field should
        ("1e3", "'1e3'"),
        ("", "''"),
        ("9" * 30, "'" + "9" * 20 + "…'"),
        ("101", "'101'"),
        ("-1", "'-1'"),
        ("4.0", "'4.0'"),
        (None, "''"),
    ],
)
def test_what_is_no_whole_number_in_range_is_refused_with_a_message(value, shown):
    with pytest.raises(NumberError) as refused:
        parse_number(value, "The delay", high=100)
    assert str(refused.value) == f"The delay must be a whole number from 0 to 100, not {shown}."


def test_ascii_whole_numbers_in_range_are_read():
    assert [parse_number(v, "n", low=-5, high=100) for v in ("0", " 42 ", "-5", "100", "007")] == [0, 42, -5, 100, 7]


def test_ids_are_positive_and_fit_the_database():
    assert [parse_id(v) for v in ("1", str(2**63 - 1), "0", str(2**63), "²", "٣", "abc", "")] == [
        1,
        2**63 - 1,
        None,
        None,
        None,
        None,
        None,
        None,
    ]
