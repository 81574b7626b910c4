"""Names and definitions: imports, the index pass, definitions at a point, facts across modules."""
