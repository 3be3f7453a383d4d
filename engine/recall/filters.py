"""Filters on reads and listings: conditions on a memory's metadata and fields, in the shape
Mem0 users know.

    {"ticket": 7}                                   equality (implicit AND over keys)
    {"team": {"in": ["ops", "billing"]}}            in / nin
    {"priority": {"gte": 2, "lt": 5}}               gt / gte / lt / lte, ne
    {"OR": [{"team": "ops"}, {"resolved": false}]}  one level of AND / OR

A key names a metadata key, or one of a memory's own fields (FIELDS: who wrote it, its
scope, kind, time and importance), which take precedence. A condition on a key a memory's
metadata lacks does not hold (`ne` and `nin` included: a filter never matches by absence).
Equality is JSON's: true is not 1, "7" is not 7.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from assocmem.engine.errors import InvalidQuery, quoted
from assocmem.engine.recall.filter_index import FIELD, FilterIndex, filter_index
from assocmem.engine.state.state import State

FIELDS = ("agent", "kind", "user", "session", "namespace", "ts", "importance")
"""A memory's own fields a filter may name (as keys, like metadata keys)."""
NUMERIC_FIELDS = ("ts", "importance")
OPERATORS = ("eq", "ne", "in", "nin", "gt", "gte", "lt", "lte")
COMPARISONS = ("gt", "gte", "lt", "lte")
JOINS = ("AND", "OR")
MAX_CONDITIONS = 32
MAX_LISTED_VALUES = 100
"""Values of one `in` or `nin`."""

Value = str | int | float | bool


@dataclasses.dataclass(frozen=True, slots=True)
class Condition:
    key: str
    op: str
    value: Value | tuple[Value, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Filters:
    """Conditions that must all hold (`any_of`: at least one), on the memories a read or a
    listing may return."""

    conditions: tuple[Condition, ...]
    any_of: bool = False


def parse_filters(spec: object, where: str = "filters") -> Filters | None:
    """A filter object as an API body gives it; None for none (null or {}). InvalidQuery,
    naming the part, for anything else."""
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        raise InvalidQuery(f"{where} is {_kind(spec)}: expected an object of conditions")
    if not spec:
        return None
    joins = [key for key in spec if key in JOINS]
    if joins:
        if len(spec) != 1:
            raise InvalidQuery(
                f"{where} mixes {joins[0]} with other keys: expected {joins[0]} alone, or"
                " conditions alone"
            )
        join = joins[0]
        parts = spec[join]
        if not isinstance(parts, list) or not parts:
            raise InvalidQuery(f"{where}.{join} is {_kind(parts)}: expected a non-empty list")
        conditions: list[Condition] = []
        for n, part in enumerate(parts):
            named = f"{where}.{join}[{n}]"
            if not isinstance(part, Mapping) or not part:
                raise InvalidQuery(f"{named} is {_kind(part)}: expected an object of conditions")
            nested = [key for key in part if key in JOINS]
            if nested:
                raise InvalidQuery(f"{named} nests {nested[0]}: one level of AND / OR is supported")
            conditions += _conditions(part, named)
        return _bounded(Filters(tuple(conditions), join == "OR"), where)
    return _bounded(Filters(tuple(_conditions(spec, where))), where)


def _bounded(filters: Filters, where: str) -> Filters:
    if len(filters.conditions) > MAX_CONDITIONS:
        raise InvalidQuery(
            f"{where} has {len(filters.conditions)} conditions: expected at most {MAX_CONDITIONS}"
        )
    return filters


def _conditions(spec: Mapping[str, object], where: str) -> list[Condition]:
    found = []
    for key, test in spec.items():
        named = f"{where}.{key}"
        if not isinstance(key, str) or not key or len(key) > 100:
            raise InvalidQuery(f"{where} has key {quoted(str(key))}: expected 1 to 100 characters")
        if isinstance(test, Mapping):
            if not test:
                raise InvalidQuery(f"{named} is an empty object: expected an operator")
            for op, value in test.items():
                if op not in OPERATORS:
                    raise InvalidQuery(
                        f"{named} has operator {quoted(str(op))}: expected one of"
                        f" {', '.join(OPERATORS)}"
                    )
                found.append(Condition(key, op, _operand(key, op, value, f"{named}.{op}")))
        else:
            found.append(Condition(key, "eq", _operand(key, "eq", test, named)))
    return found


def _operand(key: str, op: str, value: object, where: str) -> Value | tuple[Value, ...]:
    if op in ("in", "nin"):
        if not isinstance(value, list) or not 1 <= len(value) <= MAX_LISTED_VALUES:
            raise InvalidQuery(
                f"{where} is {_kind(value)}: expected a list of 1 to {MAX_LISTED_VALUES} values"
            )
        return tuple(_scalar(item, f"{where}[{n}]") for n, item in enumerate(value))
    scalar = _scalar(value, where)
    numeric = isinstance(scalar, int | float) and not isinstance(scalar, bool)
    if op in COMPARISONS and not numeric:
        raise InvalidQuery(f"{where} is {_kind(value)}: expected a number to compare with")
    if key in NUMERIC_FIELDS and not numeric:
        raise InvalidQuery(f"{where} is {_kind(value)}: {key} is a number")
    return scalar


def _scalar(value: object, where: str) -> Value:
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InvalidQuery(f"{where} is {value}: expected a finite number")
        return value
    raise InvalidQuery(f"{where} is {_kind(value)}: expected a string, a number or a boolean")


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {quoted(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def matching(state: State, filters: Filters, rows: np.ndarray) -> np.ndarray:
    """Per row (any order), whether its memory passes `filters`."""
    return passed(state, filters)[rows]


def passed(state: State, filters: Filters) -> np.ndarray:
    """Per row of the state, whether its memory passes `filters`: from the index of values
    (engine/recall/filter_index.py), a few numpy steps a condition."""
    index = filter_index(state)
    held = [_holding(state, index, condition) for condition in filters.conditions]
    return np.logical_or.reduce(held) if filters.any_of else np.logical_and.reduce(held)


def _holding(state: State, index: FilterIndex, condition: Condition) -> np.ndarray:
    size = len(state.rows)
    if condition.key in NUMERIC_FIELDS:
        column = state.ts if condition.key == "ts" else state.importance
        return _compare(column.values.astype(np.float64), condition)
    key = FIELD + condition.key if condition.key in FIELDS else condition.key
    op, wanted = condition.op, condition.value
    found = np.zeros(size, dtype=bool)
    if op in ("eq", "ne", "in", "nin"):
        listed = wanted if op in ("in", "nin") else (wanted,)
        for value in listed:  # type: ignore[union-attr]
            found[index.rows_with(key, value)] = True
        if op in ("ne", "nin"):  # among the rows holding the key: never by absence
            having = np.zeros(size, dtype=bool)
            having[index.rows_having(key)] = True
            found = having & ~found
        return found
    rows, numbers = index.numbers(key)
    found[rows[_compare(numbers, condition)]] = True
    return found


def _compare(values: np.ndarray, condition: Condition) -> np.ndarray:
    op, value = condition.op, condition.value
    if op in ("in", "nin"):
        listed = [v for v in value if not isinstance(v, bool | str)]  # type: ignore[union-attr]
        inside = np.isin(values, np.asarray(listed, dtype=np.float64))
        return inside if op == "in" else ~inside
    if isinstance(value, bool | str):  # eq / ne of a number with a string or a boolean
        return np.full(len(values), op == "ne")
    operations = {
        "eq": np.equal,
        "ne": np.not_equal,
        "gt": np.greater,
        "gte": np.greater_equal,
        "lt": np.less,
        "lte": np.less_equal,
    }
    return operations[op](values, float(value))  # type: ignore[no-any-return]
