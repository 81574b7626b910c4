"""What an expression holds: the flags, the structured abstract values, literals and ranges."""
