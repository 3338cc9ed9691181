"""What `import fuseforks` offers is said once for type checkers and once at run time: the two
lists name the same things from the same modules, and `__all__` names them all."""

from __future__ import annotations

import ast
import importlib
import inspect

import fuseforks


def type_checking_imports() -> dict[str, str]:
    """The names the package's `if TYPE_CHECKING:` block imports, with their modules."""
    tree = ast.parse(inspect.getsource(fuseforks))
    [block] = [node for node in tree.body if isinstance(node, ast.If)
               and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"]
    return {alias.name: statement.module or "" for statement in block.body
            if isinstance(statement, ast.ImportFrom) for alias in statement.names}


def test_type_checkers_see_every_name_the_package_exports() -> None:
    assert type_checking_imports() == fuseforks._EXPORTS
    assert set(fuseforks.__all__) - {"__version__"} == set(fuseforks._EXPORTS)
    for name, module in fuseforks._EXPORTS.items():
        assert getattr(fuseforks, name) is getattr(importlib.import_module(module), name), name
