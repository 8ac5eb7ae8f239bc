"""Named recipes for the standard test sets: `ops/import <recipe> [--from URL|PATH]`.

Each recipe lives in a module of this folder (grouped by where the sets come from); this module
only collects them. See base.py for what a recipe is and docs/DATASETS.md for the table.
"""

from __future__ import annotations

from asrbench.importers.recipes import community, meetings, openslr
from asrbench.importers.recipes.base import Recipe, RecipeOptions, run_recipe

RECIPES: dict[str, Recipe] = {r.name: r for m in (openslr, community, meetings) for r in m.RECIPES}

__all__ = ["RECIPES", "RecipeOptions", "Recipe", "run_recipe"]
