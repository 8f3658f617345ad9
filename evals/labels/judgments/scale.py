"""The judging scale of a dataset: ``judging.toml`` in its folder, else 0 / 1 / 2.

```toml
relevant = 1            # the lowest grade that counts as relevant (default 1)

[grades]                # grade = "name", integers (default as here)
0 = "not relevant"
1 = "relevant"
2 = "highly relevant"
```
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError, ValidationError

__all__ = ["DEFAULT_SCALE", "SCALE_FILE", "Scale"]

SCALE_FILE = "judging.toml"
"""The scale's file name in a dataset folder."""


@dataclass(frozen=True)
class Scale:
    """The grades a judge may give, lowest first, and the lowest that counts as relevant."""

    grades: tuple[tuple[int, str], ...]
    relevant: int = 1

    def describe(self) -> str:
        """``0 not relevant, 1 relevant, 2 highly relevant``."""
        return ", ".join(f"{value} {name}" for value, name in self.grades)

    def check(self, grade: int | None) -> int | None:
        """``grade`` when it is on the scale (None, a retraction, always is).

        Raises:
            ValidationError: a grade off the scale, naming it and the scale.
        """
        if grade is not None and (isinstance(grade, bool) or grade not in dict(self.grades)):
            raise ValidationError(f"grade {grade!r} is not on the judging scale ({self.describe()})", field="grade")
        return grade

    @classmethod
    def load(cls, folder: Path) -> Scale:
        """The scale of the dataset in ``folder`` (the default when it has no ``judging.toml``).

        Raises:
            DataError: a file that cannot be read as a scale, naming it and what is wrong.
        """
        path = folder / SCALE_FILE
        if not path.exists():
            return DEFAULT_SCALE
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise DataError(str(path), None, f"not TOML: {exc}") from None
        return _from_toml(path, data)


DEFAULT_SCALE = Scale(((0, "not relevant"), (1, "relevant"), (2, "highly relevant")))


def _from_toml(path: Path, data: dict[str, Any]) -> Scale:
    unknown = sorted(set(data) - {"grades", "relevant"})
    if unknown:
        raise DataError(str(path), None, f"unknown keys {', '.join(unknown)}; expected grades, relevant")
    table = data.get("grades", dict((str(v), n) for v, n in DEFAULT_SCALE.grades))
    if not isinstance(table, dict) or not table:
        raise DataError(str(path), None, "grades: expected a table of grade = \"name\"")
    grades = tuple(sorted(_grade(path, key, name) for key, name in table.items()))
    relevant = data.get("relevant", DEFAULT_SCALE.relevant)
    if isinstance(relevant, bool) or relevant not in {value for value, _ in grades}:
        raise DataError(str(path), None, f"relevant: expected one of the grades, got {relevant!r}")
    return Scale(grades, relevant)


def _grade(path: Path, key: str, name: object) -> tuple[int, str]:
    try:
        value = int(key)
    except ValueError:
        raise DataError(str(path), None, f"grades: {key!r} is not an integer grade") from None
    if not isinstance(name, str) or not name.strip():
        raise DataError(str(path), None, f"grades: {key} needs a name, got {name!r}")
    return value, name
