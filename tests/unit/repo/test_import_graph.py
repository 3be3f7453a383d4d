"""The import graph of the package: no circles, so every layer can be read bottom up."""

from __future__ import annotations

import grimp
import networkx as nx


def test_no_module_imports_itself_through_others() -> None:
    # Imports under TYPE_CHECKING never run: a type hint may name a type of a layer above.
    graph = grimp.build_graph("assocmem", cache_dir=None, exclude_type_checking_imports=True)
    imports = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            imports.add_edge(module, imported)
    circles = [sorted(c) for c in nx.strongly_connected_components(imports) if len(c) > 1]
    assert circles == [], f"import circles: {circles}"
