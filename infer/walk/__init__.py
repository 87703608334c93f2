"""The walk: nodes in order, each dispatched to its rule (or a function body, or a custom
schema), results placed, subgraphs and functions walked, node results remembered for re-inference."""
