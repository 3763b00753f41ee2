"""The package's lazily loaded names agree with the modules that define them: a name added to
``safeguards.filter`` or ``safeguards.secrets`` without the package's map, or the other way,
fails."""

from __future__ import annotations

import importlib

import safeguards


def test_every_exported_name_has_a_home_and_every_home_exports_its_names() -> None:
    homes = safeguards._HOMES
    assert set(homes) == set(safeguards.__all__)
    for module in set(homes.values()):
        defined = importlib.import_module(f"safeguards.{module}").__all__
        assert {name for name, home in homes.items() if home == module} == set(defined), module
    for name in safeguards.__all__:
        assert getattr(safeguards, name) is getattr(
            importlib.import_module(f"safeguards.{homes[name]}"), name
        )
